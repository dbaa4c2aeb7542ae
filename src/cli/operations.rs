//! `apply`, `undo`, `redo`: LLM operations on an ontology graph.
//!
//! Output is JSON lines on stdout: for `apply` the view updates (chat,
//! then per chunk text and graph) followed by `{"summary": ...}`; for
//! `undo`/`redo` the text and graph updates that revert or restore the
//! views, then one `{"undo": ...}` / `{"redo": ...}` line. Errors are the
//! seed's error objects, one line on stdout, exit code 2.

use super::Outcome;
use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::{json, Value};

use graphctx::index::CODE_GRAPH;
use graphctx::operations::{self, changelog, ApplyOptions, OperationError};
use graphctx::store::lock::WriteLock;
use graphctx::store::{Location, Store};

use super::{locate, Global};

#[derive(Args)]
pub struct ApplyArgs {
    /// The LLM response (JSON with `response`/`textResponse` and
    /// `operations`); `-` reads stdin.
    pub file: String,
}

/// The database to write: `--db`, the nearest existing index, or a new
/// `.graphctx/graph.db` in the current directory.
fn open_for_write(global: &Global) -> Result<(Store, WriteLock)> {
    if global.graph == CODE_GRAPH {
        bail!(
            "pass --graph NAME: operations apply to ontology graphs, and `{CODE_GRAPH}` is the \
             default name of the code graph"
        );
    }
    let location = match locate(global) {
        Ok(l) => l,
        Err(_) => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            Location::default_for(&cwd)
        }
    };
    let lock = WriteLock::acquire(&location)?;
    let store = Store::open(&location)?;
    Ok((store, lock))
}

fn line(out: &mut impl Write, v: &Value) {
    // A closed pipe must not turn a committed apply into an error.
    let _ = serde_json::to_writer(&mut *out, v);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

fn fail(e: &OperationError) -> Result<Outcome> {
    line(&mut std::io::stdout().lock(), &e.to_json());
    eprintln!("graphctx: {e}");
    Ok(Outcome::Refused)
}

pub fn apply(global: &Global, args: ApplyArgs) -> Result<Outcome> {
    let text = if args.file == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .context("cannot read the response from stdin")?;
        s
    } else {
        let path = PathBuf::from(&args.file);
        std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?
    };
    let response = match operations::parse_response(&text) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let (store, _lock) = open_for_write(global)?;
    let stdout = std::io::stdout();
    let mut emit = |v: &Value| line(&mut stdout.lock(), v);
    match operations::apply(
        &store,
        &global.graph,
        &response,
        &ApplyOptions::default(),
        &mut emit,
    ) {
        Ok(summary) => {
            line(&mut stdout.lock(), &json!({ "summary": summary }));
            Ok(Outcome::Done)
        }
        Err(e) => fail(&e),
    }
}

pub fn revert(global: &Global, undo: bool) -> Result<Outcome> {
    let (store, _lock) = open_for_write(global)?;
    let result = if undo {
        changelog::undo(&store, &global.graph)
    } else {
        changelog::redo(&store, &global.graph)
    };
    match result {
        Ok(r) => {
            let mut out = std::io::stdout().lock();
            for mut l in r.view.lines(1) {
                if let Some(m) = l.as_object_mut() {
                    m.remove("operations");
                    m.insert("action".into(), json!(r.action));
                    m.insert("entry".into(), json!(r.entry));
                }
                line(&mut out, &l);
            }
            let key = if undo { "undo" } else { "redo" };
            line(&mut out, &json!({ key: r }));
            Ok(Outcome::Done)
        }
        Err(e) => fail(&e),
    }
}
