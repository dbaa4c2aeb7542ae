//! Applying an LLM's operations to an ontology graph (seed 001).
//!
//! An LLM answers a modelling request with text and a list of operations
//! (create, update, delete, create-relationship, delete-relationship) that
//! refer to each other through tempIds, semantic IDs and `dependsOn`. This
//! module turns such a response into one atomic graph change:
//!
//! [`parse`] the JSON → [`chunk`] into dependency levels (cycle and
//! missing-dependency errors) → [`execute`] chunk by chunk on an
//! [`OntoTx`] working copy, resolving tempIds and semantic IDs to UUIDs as
//! their creates run → stage the net change, the [`changelog`] entry and
//! the seq bump into one `Batch` → one `Store::apply` → stream the
//! per-chunk view updates ([`events`]).
//!
//! Why all-or-nothing rather than the seed's per-chunk rollback (§7.3): an
//! LLM response is one intent; applying half of it leaves a model the LLM
//! did not ask for, and its next answer would be built on it. So every
//! operation is validated and resolved before anything is written, and the
//! write is one transaction: on any error the graph is exactly as before,
//! and the error object (seed §7) names the failing operation.
//!
//! Why events after the commit: the seed wants a UI that fills in chunk by
//! chunk (§9.3). The updates are emitted per chunk, in chunk order, once
//! the transaction has committed, so nothing a UI draws is ever taken
//! back.

pub mod changelog;
pub mod chunk;
pub mod error;
pub mod events;
pub mod execute;
pub mod parse;
pub mod sample;

use std::time::Instant;

use serde::Serialize;
use serde_json::{json, Value};

pub use error::OperationError;
pub use parse::{parse_response, Operation, Response};

use crate::ontology::store::OntoTx;
use crate::store::{Batch, Store};
use crate::support::time::now_rfc3339;
use events::Counts;
use execute::Created;

/// Options of [`apply`].
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Test hook: stage a row the database rejects, after everything else,
    /// so the transaction fails at commit (proves the rollback).
    #[doc(hidden)]
    pub fail_at_commit: bool,
}

/// The last line of `apply`'s output.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub graph: String,
    /// The change-log entry (None: nothing changed, nothing recorded).
    pub entry: Option<i64>,
    /// The graph's seq after the apply.
    pub seq: i64,
    pub chunks: usize,
    #[serde(flatten)]
    pub counts: Counts,
    /// tempId → UUID.
    pub id_map: std::collections::BTreeMap<String, String>,
    /// Every node created, with its UUID and semantic ID.
    pub created: Vec<Created>,
    /// Rows written, including the change log's.
    pub rows_written: usize,
    pub elapsed_ms: f64,
}

/// Apply a parsed response to `graph`, atomically. `emit` receives the
/// JSON lines (chat, per-chunk text and graph updates) after the commit;
/// the summary is returned (callers print it last). The caller holds the
/// database's write lock.
pub fn apply(
    store: &Store,
    graph: &str,
    response: &Response,
    opts: &ApplyOptions,
    emit: &mut dyn FnMut(&Value),
) -> Result<Summary, OperationError> {
    apply_with(store, graph, response, opts, &mut |_, _| {}, emit)
}

/// [`apply`], with `stage` adding rows of its own to the same transaction
/// (the ontology assistant's conversation). It is called once everything
/// is validated, after the change log is recorded — so its rows are not
/// part of the entry an undo reverts — with the entry number (None when
/// the response changes nothing).
pub fn apply_with(
    store: &Store,
    graph: &str,
    response: &Response,
    opts: &ApplyOptions,
    stage: &mut dyn FnMut(&mut Batch, Option<i64>),
    emit: &mut dyn FnMut(&Value),
) -> Result<Summary, OperationError> {
    let start = Instant::now();
    let mut tx = OntoTx::begin(store, graph)?;
    let ops = &response.operations;
    let names = std::cell::OnceCell::new();
    let plan = chunk::plan(ops, &|sid| {
        tx.graph().uuid_of(sid).is_some() || execute::by_name(&names, tx.base(), sid).is_some()
    })?;
    let executed = execute::execute(&mut tx, ops, &plan)?;

    let mut batch = Batch::new();
    let base_seq = tx.base().seq;
    let changes = tx.finish(&mut batch);
    let (entry, seq) = match changes.seq {
        Some(seq) => {
            let summary = json!({
                "operations": ops.len(),
                "chunks": plan.chunks.len(),
                "counts": executed.counts,
                "text": response.text.as_deref().map(|t| t.chars().take(200).collect::<String>()),
            });
            let entry = changelog::record(store, graph, &mut batch, seq, summary)?;
            if opts.fail_at_commit {
                // A string where `op_log.seq` wants an Int: rejected by the
                // database inside the transaction, after other rows.
                batch.put(
                    "op_log",
                    &["graph", "entry", "state", "seq", "at", "summary"],
                    vec![
                        graph.into(),
                        (entry + 1_000_000).into(),
                        "applied".into(),
                        "not a number".into(),
                        "".into(),
                        crate::store::value::json(Value::Null),
                    ],
                );
            }
            (Some(entry), seq)
        }
        None => (None, base_seq),
    };
    stage(&mut batch, entry);
    let rows_written = batch.len();
    store.apply(batch)?;

    // Committed: stream the views, chunk by chunk.
    if let Some(text) = &response.text {
        emit(&events::chat_line(text, &executed.counts, &now_rfc3339()));
    }
    let n = executed.chunks.len();
    for c in &executed.chunks {
        for line in c.lines(n) {
            emit(&line);
        }
    }
    Ok(Summary {
        graph: graph.to_string(),
        entry,
        seq,
        chunks: n,
        counts: executed.counts,
        id_map: executed.id_map,
        created: executed.created,
        rows_written,
        elapsed_ms: start.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Parse and apply a response given as JSON text.
pub fn apply_json(
    store: &Store,
    graph: &str,
    text: &str,
    opts: &ApplyOptions,
    emit: &mut dyn FnMut(&Value),
) -> Result<Summary, OperationError> {
    apply(store, graph, &parse_response(text)?, opts, emit)
}
