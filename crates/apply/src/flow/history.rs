//! The conversation about a flow graph, kept per graph.
//!
//! Every exchange with the model is stored as a pair — what graphctx sent as
//! the user's turn (the request, or a retry message) and what the model
//! answered — in the same transaction as the edits that answer made. Only
//! the newest [`HISTORY_PAIRS`] pairs go into a request: enough for the
//! model to know what was asked before and which mistakes it made, without
//! the prompt growing with the conversation.

use crate::llm::ChatMessage;
use crate::store::rows::{self, query_rows, FlowMessageRow, Str};
use crate::store::{queries, Batch, Params, Store, StoreError};

query_rows! {
    /// `queries/flow_messages_last.cozo`.
    FlowMessagesLast = "flow_messages_last" {
        key { idx: i64 }
        value { role: Str<'a>, content: Str<'a>, at: Str<'a> }
    }
    /// `queries/flow_message_ids.cozo`.
    FlowMessageIds = "flow_message_ids" {
        key { idx: i64 }
    }
}
use crate::support::time::now_rfc3339;

use super::FlowError;

/// Interaction pairs sent with each request (the seed's six).
pub const HISTORY_PAIRS: usize = 6;

/// A stored message.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredMessage {
    pub idx: i64,
    pub role: String,
    pub content: String,
    pub at: String,
}

/// The newest `pairs` pairs (2 × `pairs` messages), oldest first.
pub fn recent(store: &Store, graph: &str, pairs: usize) -> Result<Vec<StoredMessage>, FlowError> {
    newest(store, graph, pairs.saturating_mul(2))
}

/// The newest `n` messages, oldest first.
pub fn newest(store: &Store, graph: &str, n: usize) -> Result<Vec<StoredMessage>, FlowError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let rows = store.read(
        queries::FLOW_MESSAGES_LAST,
        Params::new()
            .with("graph", graph)
            .with("n", n.min(i64::MAX as usize) as i64),
    )?;
    let mut out: Vec<StoredMessage> = rows::decode_rows::<FlowMessagesLast>(&rows)
        .map_err(StoreError::from)?
        .into_iter()
        .map(|r| StoredMessage {
            idx: r.idx,
            role: r.role.into_owned(),
            content: r.content.into_owned(),
            at: r.at.into_owned(),
        })
        .collect();
    out.reverse();
    Ok(out)
}

/// The stored messages as chat messages for a request.
pub fn as_chat(messages: &[StoredMessage]) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| ChatMessage {
            role: if m.role == "assistant" {
                "assistant".into()
            } else {
                "user".into()
            },
            content: m.content.clone(),
        })
        .collect()
}

/// The index the next message gets.
pub fn next_idx(store: &Store, graph: &str) -> Result<i64, FlowError> {
    Ok(newest(store, graph, 1)?
        .first()
        .map(|m| m.idx + 1)
        .unwrap_or(0))
}

/// Queue messages (role, content) from index `first` on.
pub fn queue(batch: &mut Batch, graph: &str, first: i64, messages: &[(String, String)]) {
    let at = now_rfc3339();
    for (i, (role, content)) in messages.iter().enumerate() {
        batch.put_row(FlowMessageRow {
            graph: graph.into(),
            idx: first + i as i64,
            role: role.as_str().into(),
            content: content.as_str().into(),
            at: at.as_str().into(),
        });
    }
}

/// Forget a graph's conversation (one transaction); returns how many
/// messages were removed.
pub fn clear(store: &Store, graph: &str) -> Result<usize, FlowError> {
    let ids = ids(store, graph)?;
    let mut batch = Batch::new();
    for idx in &ids {
        batch.delete_key::<FlowMessageRow>(vec![graph.into(), (*idx).into()]);
    }
    store.apply(batch)?;
    Ok(ids.len())
}

/// How many messages a graph's conversation holds.
pub fn count(store: &Store, graph: &str) -> Result<usize, FlowError> {
    Ok(ids(store, graph)?.len())
}

fn ids(store: &Store, graph: &str) -> Result<Vec<i64>, FlowError> {
    let rows = store.read(
        queries::FLOW_MESSAGE_IDS,
        Params::new().with("graph", graph),
    )?;
    Ok(rows::decode_rows::<FlowMessageIds>(&rows)
        .map_err(StoreError::from)?
        .into_iter()
        .map(|r| r.idx)
        .collect())
}
