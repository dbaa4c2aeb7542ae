//! Subcommands of the `graphctx` binary.

/// `println!` that returns the write error instead of panicking, so a
/// closed pipe (`graphctx entities | head -1`) ends the command quietly
/// (see `main`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)?
    }};
}

mod analyse;
mod assistant;
mod canvas;
mod completions;
mod diagram;
mod export;
mod flow;
mod look;
mod ontology;
mod operations;
mod output;
mod rebuild;
mod search;
mod serve;
mod status;
mod view;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use graphctx::index::{self, IndexOptions, CODE_GRAPH};
use graphctx::store::lock::WriteLock;
use graphctx::store::{Location, Store, DB_FILE, STORE_DIR};

#[derive(Parser)]
#[command(
    name = "graphctx",
    version,
    about = "Graphs in, token-budgeted LLM context out"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Clone)]
pub struct Global {
    /// Database to use: a file path, or `mem` for an in-memory run.
    /// Default: `.graphctx/graph.db` of the repository.
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<String>,
    /// Graph name inside the database.
    #[arg(long, global = true, default_value = CODE_GRAPH)]
    pub graph: String,
}

#[derive(Subcommand)]
pub enum Command {
    /// Index a repository's source code, every language graphctx reads (incrementally).
    Index {
        /// Repository root (default: the current directory).
        path: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Skip files larger than this many bytes.
        #[arg(long, default_value_t = 4 * 1024 * 1024)]
        max_file_size: u64,
        /// Fail at once instead of waiting when another process is writing.
        #[arg(long)]
        no_wait: bool,
        /// Do not read co-change history from git.
        #[arg(long)]
        no_history: bool,
        /// Make the code graph anew in a new database file swapped in whole,
        /// keeping ontology graphs, canvas sessions, flows and conversations
        /// (a damaged file's readable part is saved to a salvage JSON first).
        #[arg(long)]
        rebuild: bool,
        /// With --rebuild: confirm rebuilding a database of a newer
        /// graphctx's schema for this version (its contents are saved to a
        /// salvage JSON and the old file is kept aside first).
        #[arg(long, requires = "rebuild")]
        allow_downgrade: bool,
    },
    /// List entities with their keys.
    Entities {
        #[arg(long)]
        file: Option<String>,
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Show the edges of an entity.
    Edges {
        key: String,
        #[arg(long, value_enum, default_value = "both")]
        direction: look::DirectionArg,
        #[arg(long)]
        json: bool,
    },
    /// Entities ranked for a free-text query (a bug report, a commit message, a question).
    Search {
        /// The query text; `-` reads it from standard input.
        #[arg(required_unless_present_any = ["query_file", "batch"])]
        query: Option<String>,
        /// Read the query text from FILE (`-`: standard input), e.g. an issue's body.
        #[arg(long, value_name = "FILE", conflicts_with = "query")]
        query_file: Option<std::path::PathBuf>,
        /// Show each hit's signals (word, graph, file text, history, location, test prior).
        #[arg(long)]
        explain: bool,
        /// How many hits.
        #[arg(long, default_value_t = search::DEFAULT_LIMIT)]
        limit: usize,
        /// Only entities of this kind.
        #[arg(long)]
        kind: Option<String>,
        /// Only entities in this file or under this directory.
        #[arg(long)]
        file: Option<String>,
        /// How files are scored from their signals: the weights fitted on
        /// repositories' histories, or the hand-set rules (for comparison).
        #[arg(long, value_enum, default_value = "fitted")]
        scoring: search::ScoringArg,
        #[arg(long)]
        json: bool,
        /// Print each listed file's signals as numbers (one JSON object per
        /// query), for the script that fits the weights.
        #[arg(long, hide = true)]
        features: bool,
        /// Answer every query of FILE (JSON lines `{"id", "text"}`), one
        /// JSON line each, with the index opened once.
        #[arg(long, value_name = "FILE", hide = true, conflicts_with_all = ["query", "query_file"])]
        batch: Option<std::path::PathBuf>,
    },
    /// Context around entities: CodeGraphContext.json or Format E, within a token budget.
    Context(analyse::ContextArgs),
    /// The selection `context` makes, or an ontology graph (--graph), as one HTML page.
    View(view::ViewArgs),
    /// Entities within N hops of KEY, both directions.
    Blast {
        key: String,
        #[arg(long, default_value_t = 2)]
        hops: u32,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        diagram: diagram::DiagramArgs,
    },
    /// Entities that call KEY.
    Callers {
        key: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        diagram: diagram::DiagramArgs,
    },
    /// Entities that KEY calls.
    Callees {
        key: String,
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        diagram: diagram::DiagramArgs,
    },
    /// Dependency cycles (strongly connected components and self-loops).
    Cycles {
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        diagram: diagram::DiagramArgs,
    },
    /// Where the index is, its size and totals, how fresh, schema and engine, watching servers.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// The code graph as JSON lines (entities, edges, unresolved references): the contract for scripts.
    Export {
        /// One JSON object per line (the only format, and required).
        #[arg(long, required = true)]
        jsonl: bool,
    },
    /// A shell completion script on stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// JSON Canvas conversations: walk, respond, import.
    #[command(subcommand)]
    Canvas(canvas::CanvasCommand),
    /// Apply an LLM response's operations to an ontology graph, atomically.
    Apply(operations::ApplyArgs),
    /// Undo the last applied response on an ontology graph.
    Undo,
    /// Redo the response undone last.
    Redo,
    /// Language server (stdio) over the live index, for editors.
    Lsp(serve::ServeArgs),
    /// MCP server (stdio) over the live index, for coding agents.
    Mcp(serve::ServeArgs),
    /// Ontology graphs: import, export (JSON or Format E), ask the assistant, its history.
    #[command(subcommand)]
    Graph(ontology::GraphCommand),
    /// Canvas context for an LLM request: FULL, SELECTED, VISIBLE, CHANGED or MINIMAL.
    Capture(ontology::CaptureArgs),
    /// Canvas sessions: viewport, filters, layout, selection, members.
    #[command(subcommand)]
    Session(ontology::SessionCommand),
    /// Run a Datalog script against the store (read-only unless --write).
    Query {
        script: String,
        /// A parameter as name=value (value parsed as JSON, else taken as a string).
        #[arg(long = "param", value_name = "NAME=VALUE")]
        params: Vec<String>,
        /// Allow the script to modify the database.
        #[arg(long)]
        write: bool,
        #[arg(long)]
        json: bool,
    },
    /// Flow graphs: import, export, undo, redo (--graph names the flow).
    Flow {
        #[command(subcommand)]
        action: flow::FlowAction,
    },
    /// The flow tools the LLM may call (OpenAI function-calling format).
    Tools {
        #[arg(long)]
        json: bool,
    },
    /// Ask the LLM to change the flow graph --graph.
    Ask(flow::AskArgs),
    /// The conversation history of the flow graph --graph.
    History {
        #[command(subcommand)]
        action: flow::HistoryAction,
    },
}

/// What a command came to; `main` decides the exit code from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done as asked.
    Done,
    /// The index is written, but some files were skipped (too large, not
    /// UTF-8, unreadable); the summary names how many.
    FilesSkipped,
    /// `flow undo`/`flow redo` found nothing to undo or redo.
    NothingToRevert,
    /// `ask`/`graph ask`: no answer of the model could be applied within
    /// the iteration limit (nothing was changed).
    NotAnswered,
    /// The request was refused with an error object on stdout (a context
    /// or operations error); nothing was changed.
    Refused,
    /// `index --rebuild` wrote the new database, but some of what the old
    /// one held could not be kept (named on stderr; what could be read is
    /// in the salvage file).
    NotAllKept,
}

pub fn run(cli: Cli) -> Result<Outcome> {
    let global = cli.global;
    match cli.command {
        Command::Index {
            path,
            json,
            max_file_size,
            no_wait,
            no_history,
            rebuild,
            allow_downgrade,
        } => {
            let root = index_root(path)?;
            let location = index_target(&global, &root);
            let _lock = write_lock(&location, no_wait)?;
            let opts = IndexOptions {
                graph: global.graph.clone(),
                max_file_bytes: max_file_size,
                progress: !json && std::io::stderr().is_terminal(),
                history: !no_history,
                ..IndexOptions::default()
            };
            if rebuild {
                return rebuild::run(&location, &root, &opts, allow_downgrade, json);
            }
            index_and_report(&location, &root, &opts, json)
        }
        Command::Context(mut args) => {
            args.base.read_query()?;
            let store = open_or_index(&global)?;
            let stale = bring_current(&global, &store)?;
            analyse::context(&store, &global.graph, args, stale)
        }
        Command::View(mut args) => {
            args.base.read_query()?;
            view::view(&global, args)
        }
        Command::Status { json } => status::status(&global, json),
        Command::Completions { shell } => completions::print(shell),
        Command::Canvas(cmd) => canvas::run(&global, cmd),
        Command::Graph(c) => ontology::graph(&global, c),
        Command::Capture(a) => ontology::capture(&global, a),
        Command::Session(c) => ontology::session(&global, c),
        Command::Lsp(a) => serve::lsp(&global, a),
        Command::Mcp(a) => serve::mcp(&global, a),
        Command::Query {
            script,
            params,
            write,
            json,
        } => look::query(&global, &script, &params, write, json),
        Command::Apply(args) => operations::apply(&global, args),
        Command::Undo => operations::revert(&global, true),
        Command::Redo => operations::revert(&global, false),
        Command::Flow { action } => flow::flow_cmd(&global, action),
        Command::Tools { json } => flow::tools_cmd(json),
        Command::Ask(args) => flow::ask_cmd(&global, args),
        Command::History { action } => flow::history_cmd(&global, action),
        // Listed, not a catch-all: a new command must be given a place.
        read @ (Command::Entities { .. }
        | Command::Edges { .. }
        | Command::Search { .. }
        | Command::Blast { .. }
        | Command::Callers { .. }
        | Command::Callees { .. }
        | Command::Cycles { .. }
        | Command::Export { .. }) => read_code_graph(&global, read),
    }
}

/// The reads of the code graph: its entities and edges, search, blast
/// radius, callers and callees, cycles, and the JSONL export.
fn read_code_graph(global: &Global, command: Command) -> Result<Outcome> {
    match command {
        Command::Entities {
            file,
            kind,
            name,
            json,
        } => look::entities(
            &open_existing(global)?,
            &global.graph,
            file,
            kind,
            name,
            json,
        ),
        Command::Edges {
            key,
            direction,
            json,
        } => look::edges(
            &open_existing(global)?,
            &global.graph,
            &key,
            direction,
            json,
        ),
        Command::Search {
            query,
            query_file,
            explain,
            limit,
            kind,
            file,
            scoring,
            json,
            features,
            batch,
        } => {
            // Read first: a bad query is refused before the index is
            // brought current.
            let asked = match batch {
                Some(batch) => search::Asked::Batch(batch),
                None => search::Asked::Text(search::query_text(query, query_file)?),
            };
            let store = open_current(global)?;
            let opts = graphctx::search::Options {
                limit,
                kind,
                file,
                explain,
                scoring: scoring.into(),
                sources: root_of(&store).map(Path::to_path_buf),
                held: None,
            };
            match asked {
                search::Asked::Batch(batch) => {
                    search::run_batch(&store, &global.graph, &batch, &opts, features)
                }
                search::Asked::Text(query) => {
                    search::run(&store, &global.graph, &query, opts, json, features)
                }
            }
        }
        Command::Blast {
            key,
            hops,
            json,
            diagram,
        } => {
            let store = open_current(global)?;
            analyse::blast(&store, &global.graph, &key, hops, json, &diagram)
        }
        Command::Callers { key, json, diagram } => {
            let store = open_current(global)?;
            analyse::calls(&store, &global.graph, &key, true, json, &diagram)
        }
        Command::Callees { key, json, diagram } => {
            let store = open_current(global)?;
            analyse::calls(&store, &global.graph, &key, false, json, &diagram)
        }
        Command::Cycles { json, diagram } => {
            analyse::cycles(&open_existing(global)?, &global.graph, json, &diagram)
        }
        Command::Export { jsonl: _ } => export::jsonl(&open_current(global)?, &global.graph),
        _ => unreachable!("`run` gives only the code-graph reads listed there"),
    }
}

/// `index`'s directory: the one named, else the current one; it must be a
/// directory, and is canonicalised when it can be.
fn index_root(path: Option<PathBuf>) -> Result<PathBuf> {
    let root = match path {
        Some(p) => p,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !root.is_dir() {
        bail!("{} is not a directory", root.display());
    }
    Ok(root.canonicalize().unwrap_or(root))
}

/// Where `index` writes: `--db`, else the default database under `root`.
fn index_target(global: &Global, root: &Path) -> Location {
    match &global.db {
        Some(spec) => Location::parse(spec),
        None => Location::default_for(root),
    }
}

/// The database's write lock: waited for, or (`--no-wait`) refused at once
/// when another writer holds it.
fn write_lock(location: &Location, no_wait: bool) -> Result<WriteLock> {
    Ok(if no_wait {
        WriteLock::try_acquire(location)?
    } else {
        WriteLock::acquire(location)?
    })
}

/// Indexes `root` into `location`, prints the summary, and says whether
/// any files were skipped.
fn index_and_report(
    location: &Location,
    root: &Path,
    opts: &IndexOptions,
    json: bool,
) -> Result<Outcome> {
    let summary = index::index_location(location, root, opts)?;
    output::print_index_summary(&summary, json)?;
    Ok(if summary.files_skipped > 0 {
        Outcome::FilesSkipped
    } else {
        Outcome::Done
    })
}

/// The existing database, brought up to date with the files, with a
/// warning for what could not be.
fn open_current(global: &Global) -> Result<Store> {
    let store = open_existing(global)?;
    warn_stale(&bring_current(global, &store)?);
    Ok(store)
}

/// The database to read: `--db`, or the `.graphctx/graph.db` of the
/// nearest enclosing directory that has one.
pub fn locate(global: &Global) -> Result<Location> {
    if let Some(spec) = &global.db {
        return Ok(Location::parse(spec));
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    find_index(&cwd).map(Location::Sqlite).with_context(|| {
        format!(
            "no index found in {} or its parents; run `graphctx index` first or pass --db",
            cwd.display()
        )
    })
}

fn find_index(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join(STORE_DIR).join(DB_FILE))
        .find(|p| p.is_file())
}

/// Like [`open_existing`], but when no index exists (and no `--db` was
/// given), index the current directory first.
fn open_or_index(global: &Global) -> Result<Store> {
    if global.db.is_some() || locate(global).is_ok() {
        return open_existing(global);
    }
    let root = std::env::current_dir().context("cannot read the current directory")?;
    eprintln!("graphctx: no index yet; indexing {} first", root.display());
    let location = Location::default_for(&root);
    let _lock = WriteLock::acquire(&location)?;
    let store = Store::open(&location)?;
    let opts = IndexOptions {
        graph: global.graph.clone(),
        progress: std::io::stderr().is_terminal(),
        ..IndexOptions::default()
    }
    .recorded_beside(&location);
    let summary = index::index_repository(&store, &root, &opts)?;
    eprintln!(
        "graphctx: indexed {} files: {} entities, {} edges",
        summary.files_seen, summary.entities, summary.edges
    );
    Ok(store)
}

/// Bring the index current with the files on disk before answering (see
/// `graphctx::serve::bring_current`); returns the files it could not take
/// in because another process is writing. Only for an index at its
/// default place, `ROOT/.graphctx/graph.db`, whose root is known.
fn bring_current(global: &Global, store: &Store) -> Result<Vec<String>> {
    match root_of(store) {
        Some(root) => Ok(graphctx::serve::bring_current(store, root, &global.graph)?),
        None => Ok(Vec::new()),
    }
}

/// The repository an index at its default place, `ROOT/.graphctx/graph.db`,
/// belongs to: `None` for a database anywhere else.
fn root_of(store: &Store) -> Option<&Path> {
    let Location::Sqlite(db) = store.location() else {
        return None;
    };
    let dir = db.parent()?;
    let root = match dir.file_name() {
        Some(n) if n == STORE_DIR && db.ends_with(DB_FILE) => dir.parent()?,
        _ => return None,
    };
    root.is_dir().then_some(root)
}

/// Tell the user which files an answer may not reflect.
fn warn_stale(stale: &[String]) {
    if !stale.is_empty() {
        eprintln!(
            "graphctx: another process is indexing; this answer may not reflect changes to: {}",
            stale.join(", ")
        );
    }
}

/// Open an existing database (an in-memory one is new and empty).
pub fn open_existing(global: &Global) -> Result<Store> {
    let location = locate(global)?;
    if let Location::Sqlite(p) = &location {
        if !p.is_file() {
            bail!(
                "database {} does not exist; run `graphctx index` first",
                p.display()
            );
        }
    }
    Ok(Store::open(&location)?)
}
