//! `view`: the selection `context` makes, or an ontology graph, as one
//! self-contained HTML page (see `graphctx::emit::view`).

use super::Outcome;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use clap::Args;

use graphctx::analyse::relevance::Strategy;
use graphctx::emit;
use graphctx::emit::diagram::DiagramGraph;
use graphctx::index::CODE_GRAPH;
use graphctx::ontology::diagram::ontology_graph;
use graphctx::ontology::store::load_graph;
use graphctx::store::{Location, Store, STORE_DIR};

use super::analyse::BaseArgs;
use super::Global;

/// The page's file name under `.graphctx/` when `--output` is not given.
const DEFAULT_PAGE: &str = "view.html";

#[derive(Args)]
pub struct ViewArgs {
    #[command(flatten)]
    pub base: BaseArgs,
    /// Hop depth, 0 to 3.
    #[arg(long, default_value_t = 2)]
    pub hops: u32,
    /// Token budget of the selection, as for `context`: what a context
    /// within it could not hold is left out (and the page says so).
    #[arg(long, default_value_t = emit::DEFAULT_BUDGET)]
    pub budget: usize,
    /// Write the page to PATH (default: `.graphctx/view.html` of the repository).
    #[arg(long, short, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Open the page in the system's browser (xdg-open, open or start).
    #[arg(long)]
    pub open: bool,
}

pub fn view(global: &Global, a: ViewArgs) -> Result<Outcome> {
    let (store, graph) = if a.base.is_empty() {
        if global.graph == CODE_GRAPH {
            bail!(
                "give base entities as KEY..., or --file PATH, or --name NAME, or --query TEXT, \
                 or an ontology graph as --graph NAME"
            );
        }
        let store = super::open_existing(global)?;
        let onto = load_graph(&store, &global.graph)?;
        if onto.seq == 0 && onto.nodes.is_empty() {
            bail!("no ontology graph `{}` in the database", global.graph);
        }
        let graph = ontology_graph(&onto);
        (store, graph)
    } else {
        let store = super::open_or_index(global)?;
        super::warn_stale(&super::bring_current(global, &store)?);
        let graph = selection(&store, &global.graph, &a)?;
        (store, graph)
    };
    let path = match a.output {
        Some(p) => p,
        None => default_output(&store)?,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(&path, emit::view::render(&graph))
        .with_context(|| format!("cannot write {}", path.display()))?;
    outln!("{}", path.display());
    if a.open {
        if let Err(e) = open_in_browser(&path) {
            eprintln!(
                "graphctx: warning: could not open {} in a browser: {e}",
                path.display()
            );
        }
    }
    Ok(Outcome::Done)
}

/// The graph of the context selection `a` asks for.
fn selection(store: &Store, graph_name: &str, a: &ViewArgs) -> Result<DiagramGraph> {
    super::analyse::check_hops(a.hops)?;
    if a.budget == 0 {
        bail!("--budget must be a positive number of tokens");
    }
    let base = a.base.spec(store, graph_name)?;
    super::analyse::context_graph(
        store,
        graph_name,
        &base,
        a.hops,
        Strategy::Blended,
        a.budget,
    )
}

/// `.graphctx/view.html` beside the database in use, or in the current
/// directory for a database elsewhere (or in memory).
fn default_output(store: &Store) -> Result<PathBuf> {
    if let Location::Sqlite(db) = store.location() {
        if let Some(dir) = db.parent().filter(|d| d.ends_with(STORE_DIR)) {
            return Ok(dir.join(DEFAULT_PAGE));
        }
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(cwd.join(STORE_DIR).join(DEFAULT_PAGE))
}

/// Hand `path` to the system's browser and wait for the opener (not the
/// browser) to finish.
fn open_in_browser(path: &Path) -> Result<()> {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let (program, lead): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("cmd", &["/C", "start", ""])
    } else {
        ("xdg-open", &[])
    };
    let status = Command::new(program)
        .args(lead)
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("cannot run {program}"))?;
    if !status.success() {
        bail!("{program} failed ({status})");
    }
    Ok(())
}
