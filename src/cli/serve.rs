//! `lsp` and `mcp`: the servers over the live index (see `graphctx::serve`).

use super::Outcome;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use graphctx::serve::lsp::{self, LspOptions};
use graphctx::serve::{mcp, Workspace};
use graphctx::store::Location;

use super::Global;

#[derive(Args)]
pub struct ServeArgs {
    /// Workspace root for `mcp` (default: the current directory). `lsp`
    /// takes the root from the client's `initialize`.
    #[arg(long, value_name = "PATH")]
    pub root: Option<PathBuf>,
    /// Do not watch the workspace for file changes.
    #[arg(long)]
    pub no_watch: bool,
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `graphctx lsp`: returns when the client sends `exit` (or closes stdin);
/// the caller exits the process at once, whatever threads are left.
pub fn lsp(global: &Global, a: ServeArgs) -> Result<Outcome> {
    let opts = LspOptions {
        db: global.db.as_deref().map(Location::parse),
        graph: global.graph.clone(),
        watch: !a.no_watch,
        ..LspOptions::default()
    };
    if let Some(root) = a.root {
        std::env::set_current_dir(&root)
            .with_context(|| format!("cannot enter {}", root.display()))?;
    }
    let rt = runtime()?;
    rt.block_on(lsp::serve_stdio(opts));
    // Tokio's stdin reader is a blocking thread that may sit in read(2)
    // forever: do not wait for it.
    rt.shutdown_background();
    Ok(Outcome::Done)
}

/// `graphctx mcp`: returns when the client disconnects.
pub fn mcp(global: &Global, a: ServeArgs) -> Result<Outcome> {
    let root = match a.root {
        Some(r) => r,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !root.is_dir() {
        bail!("{} is not a directory", root.display());
    }
    let ws = Workspace::open(
        &root,
        global.db.as_deref().map(Location::parse),
        &global.graph,
    )?;
    let rt = runtime()?;
    let result = rt.block_on(mcp::serve_stdio(ws, !a.no_watch));
    rt.shutdown_background();
    result?;
    Ok(Outcome::Done)
}
