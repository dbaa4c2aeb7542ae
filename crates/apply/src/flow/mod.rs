//! Flow graphs edited by an LLM through tool calls (seed 003).
//!
//! A flow graph — React Flow style nodes and edges plus visual settings —
//! lives in CozoDB like every other graph (`node`/`edge` rows, side
//! relations for positions, labels, visuals, undo snapshots and the
//! conversation). The model never writes Datalog or JSON documents: it
//! calls a fixed set of tools ([`tools`]), the [`executor`] validates and
//! runs them in order and commits one answer atomically with one undo
//! snapshot, and [`ask`] wraps that in the seed's retry loop — failed calls
//! go back to the model with the ids it should have used.
//!
//! - [`model`]: the flow and visual settings, import/export JSON;
//! - [`store`]: reading a flow, the rows a change writes;
//! - [`tools`]: the tool definitions (OpenAI function-calling format);
//! - [`executor`]: running calls, undo/redo, the atomic commit;
//! - [`parse`]: tool calls out of an answer (native or `<response>`);
//! - [`prompt`]: system prompt, context message, retry message;
//! - [`history`]: the conversation per graph and its window;
//! - [`ask`]: the loop.

pub mod ask;
pub mod executor;
pub mod history;
pub mod model;
pub mod parse;
pub mod prompt;
pub mod store;
pub mod tools;

use crate::llm::LlmError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    #[error("invalid flow document: {0}")]
    InvalidFlow(String),
    #[error(
        "graph {graph} is not a flow graph (its source is {holds}); pass --graph with a flow graph's name"
    )]
    NotFlowGraph { graph: String, holds: String },
    #[error("stored flow data is damaged: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// Replace a graph's flow (and visual settings, when given) as one
/// undoable change. Creates the graph when it does not exist.
pub fn import(
    db: &crate::store::Store,
    graph: &str,
    flow: model::Flow,
    visuals: Option<model::VisualSettings>,
) -> Result<executor::Committed, FlowError> {
    let mut session = executor::FlowSession::open(db, graph)?;
    session.replace(flow, visuals);
    session.commit()
}
