//! The ontology assistant's conversation, per graph and canvas session.
//!
//! The window rules are the flow assistant's ([`crate::flow::history`]):
//! every model answer is stored as a pair — the user's turn (the request,
//! or the feedback sent after a rejected answer) and the answer as the
//! model wrote it — and only the newest [`HISTORY_PAIRS`] pairs go into a
//! request. The assistant row also keeps what became of the answer
//! (`result`: applied with its change-log entry, a chat answer, or the
//! error object), for `graph history` and for a person reading the log.
//!
//! Two people working on one graph in two canvas sessions have two
//! conversations: a session is a separate chat.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::llm::ChatMessage;
use crate::store::rows::{self, query_rows, Json, OntoMessageRow, Str};
use crate::store::{queries, Batch, Params, Store, StoreError};
use crate::support::time::now_rfc3339;

pub use crate::flow::history::HISTORY_PAIRS;

query_rows! {
    /// `queries/onto_messages_last.cozo`.
    OntoMessagesLast = "onto_messages_last" {
        key { idx: i64 }
        value { role: Str<'a>, content: Str<'a>, result: Json<'a>, at: Str<'a> }
    }
    /// `queries/onto_message_ids.cozo`.
    OntoMessageIds = "onto_message_ids" {
        key { idx: i64 }
    }
}

/// A stored message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredMessage {
    pub idx: i64,
    pub role: String,
    pub content: String,
    /// On assistant rows: what became of the answer.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub result: Value,
    pub at: String,
}

/// The newest `pairs` pairs (2 × `pairs` messages), oldest first.
pub fn recent(
    store: &Store,
    graph: &str,
    session: &str,
    pairs: usize,
) -> Result<Vec<StoredMessage>, StoreError> {
    newest(store, graph, session, pairs.saturating_mul(2))
}

/// The newest `n` messages, oldest first.
pub fn newest(
    store: &Store,
    graph: &str,
    session: &str,
    n: usize,
) -> Result<Vec<StoredMessage>, StoreError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let rows = store.read(
        queries::ONTO_MESSAGES_LAST,
        Params::new()
            .with("graph", graph)
            .with("session", session)
            .with("n", n.min(i64::MAX as usize) as i64),
    )?;
    let mut out: Vec<StoredMessage> = rows::decode_rows::<OntoMessagesLast>(&rows)?
        .into_iter()
        .map(|r| StoredMessage {
            idx: r.idx,
            role: r.role.into_owned(),
            content: r.content.into_owned(),
            result: r.result.into_owned(),
            at: r.at.into_owned(),
        })
        .collect();
    out.reverse();
    Ok(out)
}

/// The stored messages as chat turns.
pub fn as_chat(messages: &[StoredMessage]) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| {
            if m.role == "assistant" {
                ChatMessage::assistant(m.content.as_str())
            } else {
                ChatMessage::user(m.content.as_str())
            }
        })
        .collect()
}

/// The index the next message gets.
pub fn next_idx(store: &Store, graph: &str, session: &str) -> Result<i64, StoreError> {
    Ok(newest(store, graph, session, 1)?
        .first()
        .map(|m| m.idx + 1)
        .unwrap_or(0))
}

/// Queue one exchange — the user's turn and the answer with its result —
/// as messages `first` and `first + 1`.
pub fn queue_exchange(
    batch: &mut Batch,
    graph: &str,
    session: &str,
    first: i64,
    user_turn: &str,
    answer: &str,
    result: &Value,
) {
    let at = now_rfc3339();
    for (i, (role, content, result)) in [
        ("user", user_turn, &Value::Null),
        ("assistant", answer, result),
    ]
    .into_iter()
    .enumerate()
    {
        batch.put_row(OntoMessageRow {
            graph: graph.into(),
            session: session.into(),
            idx: first + i as i64,
            role: role.into(),
            content: content.into(),
            result: Cow::Borrowed(result),
            at: at.as_str().into(),
        });
    }
}

/// Forget a session's conversation (one transaction); returns how many
/// messages were removed.
pub fn clear(store: &Store, graph: &str, session: &str) -> Result<usize, StoreError> {
    let rows = store.read(
        queries::ONTO_MESSAGE_IDS,
        Params::new().with("graph", graph).with("session", session),
    )?;
    let mut batch = Batch::new();
    let ids = rows::decode_rows::<OntoMessageIds>(&rows)?;
    for r in &ids {
        batch.delete_key::<OntoMessageRow>(vec![graph.into(), session.into(), r.idx.into()]);
    }
    let n = ids.len();
    store.apply(batch)?;
    Ok(n)
}
