//! `graphctx export --jsonl`: the code graph as JSON lines, streamed to
//! stdout (see `graphctx::graph::export`).

use std::io::BufWriter;

use anyhow::Result;

use graphctx::graph::export::export_jsonl;
use graphctx::store::Store;

use super::Outcome;

pub fn jsonl(store: &Store, graph: &str) -> Result<Outcome> {
    let mut out = BufWriter::new(std::io::stdout().lock());
    export_jsonl(store, graph, &mut out)?;
    Ok(Outcome::Done)
}
