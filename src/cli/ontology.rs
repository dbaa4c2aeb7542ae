//! `graph import|export`, `capture` and `session set|show`: ontology graphs
//! and canvas context capture.

use super::Outcome;
use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use graphctx::capture::session::{self, Layout, SessionUpdate};
use graphctx::capture::{self, CaptureOptions, Mode};
use graphctx::emit::diagram::DiagramFormat;
use graphctx::ontology::diagram::ontology_graph;
use graphctx::ontology::io::{self, Format};
use graphctx::ontology::store::{load_graph, OntoTx};
use graphctx::ontology::{NodeType, RelType};
use graphctx::store::lock::WriteLock;
use graphctx::store::{Batch, Location, Store};
use graphctx::support::tokens::Encoding;

use super::output::print_json;
use super::Global;

#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Json,
    E,
}

impl FormatArg {
    fn format(self) -> Format {
        match self {
            FormatArg::Json => Format::Json,
            FormatArg::E => Format::E,
        }
    }
}

/// `graph export --format`: the import formats and the diagrams.
#[derive(Clone, Copy, ValueEnum)]
pub enum ExportFormatArg {
    Json,
    E,
    Mermaid,
    Dot,
}

#[derive(Subcommand)]
pub enum GraphCommand {
    /// Import an ontology graph (JSON or Format E) from FILE or stdin, in one transaction.
    Import {
        /// Input file (default: stdin).
        file: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "json")]
        format: FormatArg,
        /// Make the graph exactly the input: delete nodes and edges it does not mention.
        #[arg(long)]
        replace: bool,
        /// Import a JSON Canvas file instead (same as `graphctx canvas import`).
        #[arg(long, value_name = "FILE", conflicts_with = "file")]
        canvas: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export an ontology graph as JSON or Format E, or draw it (Mermaid, DOT).
    Export {
        #[arg(long, value_enum, default_value = "json")]
        format: ExportFormatArg,
        /// Output file (default: stdout).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Token budget of a diagram (mermaid, dot); a larger one is cut and says so.
        #[arg(long, default_value_t = graphctx::emit::DEFAULT_BUDGET)]
        budget: usize,
    },
    /// Ask the ontology assistant: capture, model, operations applied, errors fed back.
    Ask(Box<super::assistant::GraphAskArgs>),
    /// The ontology assistant's conversation of a canvas session.
    History(super::assistant::GraphHistoryArgs),
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Full,
    Selected,
    Visible,
    Changed,
    Minimal,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum TokenizerArg {
    O200k,
    Cl100k,
}

#[derive(Args)]
pub struct CaptureArgs {
    /// Canvas session id.
    #[arg(long)]
    pub session: String,
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// The user asking; must be a member of the session when it has members.
    #[arg(long)]
    pub user: Option<String>,
    /// Keep at most N nodes, the most relevant ones.
    #[arg(long, value_name = "N")]
    pub max_nodes: Option<usize>,
    /// Add node positions (`|@x,y`).
    #[arg(long)]
    pub include_positions: bool,
    /// Add the viewport (zoom and center).
    #[arg(long)]
    pub include_viewport: bool,
    /// Leave out the metadata header.
    #[arg(long)]
    pub no_metadata: bool,
    /// Only the selection, whatever the mode.
    #[arg(long)]
    pub selected_only: bool,
    #[arg(long, value_enum, default_value = "o200k")]
    pub tokenizer: TokenizerArg,
    /// Print the whole result (formatE, metadata, tokenCount, cacheKey, cached) as JSON.
    #[arg(long)]
    pub json: bool,
    /// Print the session's cache statistics (alone, or after a capture on stderr).
    #[arg(long)]
    pub stats: bool,
}

#[derive(Subcommand)]
pub enum SessionCommand {
    /// Create or change a canvas session.
    Set(Box<SessionSetArgs>),
    /// Show a session's state as JSON.
    Show {
        #[arg(long)]
        session: String,
    },
}

#[derive(Args)]
pub struct SessionSetArgs {
    #[arg(long)]
    pub session: String,
    #[arg(long)]
    pub zoom: Option<f64>,
    /// Viewport center as X,Y.
    #[arg(long, value_name = "X,Y", allow_hyphen_values = true)]
    pub center: Option<String>,
    /// Node types shown, comma-separated (empty string: all).
    #[arg(long, value_name = "TYPES")]
    pub node_types: Option<String>,
    /// Relationship types shown, comma-separated (empty string: all).
    #[arg(long, value_name = "RELS")]
    pub relation_types: Option<String>,
    #[arg(long, value_name = "BOOL")]
    pub show_flows: Option<bool>,
    /// Deepest compose level shown (`none` clears it).
    #[arg(long, value_name = "N|none")]
    pub rollup_level: Option<String>,
    #[arg(long)]
    pub layout: Option<String>,
    /// Selected nodes (UUIDs or semantic IDs, comma-separated; replaces the selection).
    #[arg(long, value_name = "REFS")]
    pub select: Option<String>,
    /// Selected edges (UUIDs, or `Src -rel-> Dst` with semantic IDs or unique names; repeatable;
    /// replaces the selection).
    #[arg(long = "select-edge", value_name = "EDGE")]
    pub select_edges: Vec<String>,
    /// Clear the node and edge selection.
    #[arg(long)]
    pub clear_selection: bool,
    #[arg(long = "add-member", value_name = "USER")]
    pub add_members: Vec<String>,
    #[arg(long = "remove-member", value_name = "USER")]
    pub remove_members: Vec<String>,
}

/// The database for commands that may create it: `--db`, an existing
/// index above the current directory, or `.graphctx/graph.db` here.
fn location(global: &Global) -> Result<Location> {
    if let Ok(l) = super::locate(global) {
        return Ok(l);
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(Location::default_for(&cwd))
}

pub fn graph(global: &Global, cmd: GraphCommand) -> Result<Outcome> {
    match cmd {
        GraphCommand::Ask(a) => super::assistant::ask(global, *a),
        GraphCommand::History(a) => super::assistant::history_cmd(global, a),
        GraphCommand::Import {
            canvas: Some(path),
            json,
            ..
        } => super::canvas::import(global, &path, None, json),
        GraphCommand::Import {
            file,
            format,
            replace,
            json,
            canvas: None,
        } => {
            let text = match &file {
                Some(p) => std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
                None => {
                    let mut s = String::new();
                    std::io::stdin()
                        .read_to_string(&mut s)
                        .context("cannot read stdin")?;
                    s
                }
            };
            let location = location(global)?;
            let _lock = WriteLock::acquire(&location)?;
            let store = Store::open(&location)?;
            let mut tx = OntoTx::begin(&store, &global.graph)?;
            io::import(&mut tx, &text, format.format(), replace)?;
            let mut batch = Batch::new();
            let ch = tx.finish(&mut batch);
            store.apply(batch)?;
            let g = load_graph(&store, &global.graph)?;
            let summary = serde_json::json!({
                "graph": global.graph,
                "seq": g.seq,
                "nodes": g.nodes.len(),
                "edges": g.edges.len(),
                "nodesCreated": ch.nodes_created.len(),
                "nodesUpdated": ch.nodes_updated.len(),
                "nodesDeleted": ch.nodes_deleted.len(),
                "edgesCreated": ch.edges_created.len(),
                "edgesUpdated": ch.edges_updated.len(),
                "edgesDeleted": ch.edges_deleted.len(),
            });
            if json {
                print_json(&summary)?;
            } else {
                outln!(
                    "imported into {}: {} nodes, {} edges (seq {}); {} nodes created, {} updated, {} deleted; {} edges created, {} updated, {} deleted",
                    global.graph,
                    g.nodes.len(),
                    g.edges.len(),
                    g.seq,
                    ch.nodes_created.len(),
                    ch.nodes_updated.len(),
                    ch.nodes_deleted.len(),
                    ch.edges_created.len(),
                    ch.edges_updated.len(),
                    ch.edges_deleted.len()
                );
            }
            Ok(Outcome::Done)
        }
        GraphCommand::Export {
            format,
            output,
            budget,
        } => {
            let store = super::open_existing(global)?;
            let g = load_graph(&store, &global.graph)?;
            if g.seq == 0 && g.nodes.is_empty() {
                bail!("no ontology graph `{}` in the database", global.graph);
            }
            let format = match format {
                ExportFormatArg::Json => Format::Json,
                ExportFormatArg::E => Format::E,
                ExportFormatArg::Mermaid => {
                    return export_diagram(&g, DiagramFormat::Mermaid, budget, output)
                }
                ExportFormatArg::Dot => {
                    return export_diagram(&g, DiagramFormat::Dot, budget, output)
                }
            };
            let text = io::export(&g, format);
            match output {
                Some(p) => std::fs::write(&p, text)
                    .with_context(|| format!("cannot write {}", p.display()))?,
                None => std::io::stdout().lock().write_all(text.as_bytes())?,
            }
            Ok(Outcome::Done)
        }
    }
}

/// `graph export --format mermaid|dot`.
fn export_diagram(
    g: &graphctx::ontology::OntologyGraph,
    format: DiagramFormat,
    budget: usize,
    output: Option<PathBuf>,
) -> Result<Outcome> {
    let budget = super::diagram::check_budget(budget)?;
    super::diagram::print(
        &ontology_graph(g),
        format,
        budget,
        Encoding::O200k,
        output.as_deref(),
        false,
    )
}

pub fn capture(global: &Global, a: CaptureArgs) -> Result<Outcome> {
    let store = super::open_existing(global)?;
    let Some(mode) = a.mode else {
        if a.stats {
            print_json(&capture::stats(&store, &global.graph, Some(&a.session))?)?;
            return Ok(Outcome::Done);
        }
        bail!("--mode is required (full, selected, visible, changed or minimal), or pass --stats alone");
    };
    let opts = CaptureOptions {
        mode: match mode {
            ModeArg::Full => Mode::Full,
            ModeArg::Selected => Mode::Selected,
            ModeArg::Visible => Mode::Visible,
            ModeArg::Changed => Mode::Changed,
            ModeArg::Minimal => Mode::Minimal,
        },
        include_metadata: !a.no_metadata,
        include_positions: a.include_positions,
        include_viewport: a.include_viewport,
        selected_only: a.selected_only,
        max_nodes: a.max_nodes,
        encoding: match a.tokenizer {
            TokenizerArg::O200k => Encoding::O200k,
            TokenizerArg::Cl100k => Encoding::Cl100k,
        },
    };
    if opts.max_nodes == Some(0) {
        bail!("--max-nodes must be at least 1");
    }
    let r = capture::capture(&store, &global.graph, &a.session, a.user.as_deref(), &opts)?;
    if a.json {
        print_json(&r)?;
    } else {
        std::io::stdout().lock().write_all(r.format_e.as_bytes())?;
        eprintln!(
            "graphctx: {} capture, {} nodes, {} edges, {} tokens ({}){}",
            r.mode.name(),
            r.metadata.total_nodes,
            r.metadata.total_edges,
            r.token_count,
            r.tokenizer,
            if r.cached { ", cached" } else { "" }
        );
    }
    if a.stats {
        for s in capture::stats(&store, &global.graph, Some(&a.session))? {
            eprintln!(
                "graphctx: cache of session {}: {} hits, {} misses, hit rate {:.1} %, {} entries",
                s.session,
                s.hits,
                s.misses,
                s.hit_rate * 100.0,
                s.entries
            );
        }
    }
    Ok(Outcome::Done)
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

pub fn session(global: &Global, cmd: SessionCommand) -> Result<Outcome> {
    match cmd {
        SessionCommand::Show { session: id } => {
            let store = super::open_existing(global)?;
            match session::load(&store, &global.graph, &id)? {
                Some(s) => print_json(&s)?,
                None => bail!("no session `{id}` for graph `{}`", global.graph),
            }
            Ok(Outcome::Done)
        }
        SessionCommand::Set(a) => {
            let center = match &a.center {
                None => None,
                Some(c) => {
                    let (x, y) = c
                        .split_once(',')
                        .with_context(|| format!("--center {c}: expected X,Y"))?;
                    let x: f64 = x
                        .trim()
                        .parse()
                        .with_context(|| format!("--center {c}: X is not a number"))?;
                    let y: f64 = y
                        .trim()
                        .parse()
                        .with_context(|| format!("--center {c}: Y is not a number"))?;
                    Some((x, y))
                }
            };
            let node_types = match &a.node_types {
                None => None,
                Some(s) => Some(
                    split_list(s)
                        .iter()
                        .map(|t| NodeType::parse(t))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            let relation_types = match &a.relation_types {
                None => None,
                Some(s) => Some(
                    split_list(s)
                        .iter()
                        .map(|t| RelType::parse(t))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            let rollup_level = match a.rollup_level.as_deref() {
                None => None,
                Some("none") => Some(None),
                Some(n) => Some(Some(n.parse::<u32>().with_context(|| {
                    format!("--rollup-level {n}: expected a non-negative number or `none`")
                })?)),
            };
            let layout = a.layout.as_deref().map(Layout::parse).transpose()?;
            let (select_nodes, select_edges) = if a.clear_selection {
                (Some(Vec::new()), Some(Vec::new()))
            } else {
                (
                    a.select.as_deref().map(split_list),
                    (!a.select_edges.is_empty()).then_some(a.select_edges.clone()),
                )
            };
            let update = SessionUpdate {
                zoom: a.zoom,
                center,
                node_types,
                relation_types,
                show_flows: a.show_flows,
                rollup_level,
                layout,
                select_nodes,
                select_edges,
                add_members: a.add_members,
                remove_members: a.remove_members,
            };
            let location = location(global)?;
            let _lock = WriteLock::acquire(&location)?;
            let store = Store::open(&location)?;
            let g = load_graph(&store, &global.graph)?;
            let s = session::update(&store, &g, &a.session, update)?;
            print_json(&s)?;
            Ok(Outcome::Done)
        }
    }
}
