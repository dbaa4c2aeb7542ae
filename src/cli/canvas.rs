//! `graphctx canvas ...`: JSON Canvas conversations (seed 002).

use super::Outcome;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Subcommand;

use graphctx::canvas::{self, Canvas, ImportOptions};
use graphctx::index::CODE_GRAPH;
use graphctx::store::lock::WriteLock;
use graphctx::store::{Location, Store};

use super::output::print_json;
use super::{locate, Global};

#[derive(Subcommand)]
pub enum CanvasCommand {
    /// The chat messages for a node: its thread upwards, horizontal
    /// context, no sibling branches (warnings on stderr).
    Walk {
        /// The .canvas file.
        file: PathBuf,
        /// Id of the target node.
        #[arg(long)]
        node: String,
        /// Vault root for file nodes (default: the nearest directory with
        /// `.obsidian` above the canvas, else the canvas's directory).
        #[arg(long)]
        vault: Option<PathBuf>,
        /// Print the whole walk: messages, included and excluded nodes,
        /// warnings.
        #[arg(long)]
        json: bool,
    },
    /// Write an assistant answer below a node; prints the new node's id.
    Respond {
        /// The .canvas file (rewritten atomically).
        file: PathBuf,
        /// Id of the node answered.
        #[arg(long)]
        node: String,
        /// The answer (default: read from stdin).
        #[arg(long)]
        text: Option<String>,
        /// Print the new node's id, the edge's id and the node's box as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Import a canvas as graph --graph NAME (replacing what it held), so
    /// `blast`, `cycles` and `query` run on it.
    Import {
        /// The .canvas file.
        file: PathBuf,
        /// Vault root for file nodes (default as for `walk`).
        #[arg(long)]
        vault: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Walk from a node, ask the LLM, write its answer below the node.
    Ask(super::flow::CanvasAskArgs),
}

pub fn run(global: &Global, cmd: CanvasCommand) -> Result<Outcome> {
    match cmd {
        CanvasCommand::Ask(args) => super::flow::canvas_ask_cmd(args),
        CanvasCommand::Walk {
            file,
            node,
            vault,
            json,
        } => {
            let canvas = Canvas::load(&file)?;
            let vault = vault.unwrap_or_else(|| canvas::default_vault_root(&file));
            let walk = canvas::walk(&canvas, &node, Some(&vault))?;
            for w in &walk.warnings {
                eprintln!("graphctx: warning: {w}");
            }
            if json {
                print_json(&walk)?;
            } else {
                print_json(&walk.messages_json())?;
            }
            Ok(Outcome::Done)
        }
        CanvasCommand::Respond {
            file,
            node,
            text,
            json,
        } => {
            let answer = match text {
                Some(t) => t,
                None => {
                    let mut stdin = std::io::stdin();
                    if stdin.is_terminal() {
                        bail!("give the answer with --text or on stdin");
                    }
                    let mut buf = String::new();
                    stdin
                        .read_to_string(&mut buf)
                        .context("cannot read the answer from stdin")?;
                    buf
                }
            };
            let added = canvas::respond_file(&file, &node, &answer)?;
            if json {
                print_json(&added)?;
            } else {
                outln!("{}", added.node);
            }
            Ok(Outcome::Done)
        }
        CanvasCommand::Import { file, vault, json } => import(global, &file, vault, json),
    }
}

/// `canvas import FILE` and `graph import --canvas FILE`: the canvas as
/// graph `--graph`, replacing what that graph held.
pub fn import(global: &Global, file: &Path, vault: Option<PathBuf>, json: bool) -> Result<Outcome> {
    if global.graph == CODE_GRAPH {
        bail!(
            "canvas import needs --graph NAME, a graph other than '{CODE_GRAPH}' (which \
             holds the repository's code)"
        );
    }
    let location = match locate(global) {
        Ok(l) => l,
        Err(_) => Location::default_for(
            &std::env::current_dir().context("cannot read the current directory")?,
        ),
    };
    let _lock = WriteLock::acquire(&location)?;
    let store = Store::open(&location)?;
    let summary = canvas::import_canvas(&store, &global.graph, file, &ImportOptions { vault })?;
    for w in &summary.warnings {
        eprintln!("graphctx: warning: {w}");
    }
    if json {
        print_json(&summary)?;
    } else {
        outln!(
            "imported {} into graph '{}': {} nodes, {} edges{} (seq {})",
            file.display(),
            summary.graph,
            summary.nodes,
            summary.edges,
            if summary.skipped_edges > 0 {
                format!(", {} edges to missing nodes skipped", summary.skipped_edges)
            } else {
                String::new()
            },
            summary.seq
        );
    }
    Ok(Outcome::Done)
}
