//! The ontology assistant: a person's request about an ontology graph in,
//! the model's operations applied, errors fed back (`graphctx graph ask`).
//!
//! One request runs the loop the canvas-capture and operation-processing
//! specifications describe, over parts that exist on their own:
//!
//! 1. the canvas session's state (created with defaults when new) and the
//!    capture mode — given, or chosen by the documented rule of [`mode`];
//! 2. the capture ([`crate::capture`], from its cache while the graph and
//!    what the mode reads are unchanged) as Format E;
//! 3. the request ([`prompt`]): the rules and the graph context as two
//!    cacheable system blocks, the conversation window of this graph and
//!    session ([`history`]), then the canvas state and the request;
//! 4. the model, through the provider list with failover
//!    ([`crate::llm::ChatClient`]; OpenAI-compatible or Anthropic with
//!    prompt caching);
//! 5. the answer's JSON applied by the operations engine
//!    ([`crate::operations::apply_with`]): chunked, all or nothing, view
//!    updates streamed per chunk after the commit, the exchange stored in
//!    the same transaction;
//! 6. a rejected answer (no JSON, a parse error, a cyclic or missing
//!    dependency, an operation that fails) changes nothing in the graph:
//!    its error object's `llmFeedback` goes back to the model, and the
//!    loop asks again, at most `max_iterations` answers in all. A call
//!    that no provider answers (timeouts, 500s) counts as an iteration too,
//!    so a passing outage is retried.
//!
//! Every step is reported as a JSON line through the caller's `emit`
//! (`{"event": "context"}`, `{"event": "iteration"}`, then the view updates
//! of the applied answer), and the outcome is returned.
//!
//! Undo is the operations engine's: an applied answer is one change-log
//! entry, so `graphctx undo --graph G` reverts it. The conversation is not
//! part of the entry (what was said stays said).

pub mod history;
pub mod mode;
pub mod prompt;

use serde::Serialize;
use serde_json::{json, Value};

use crate::capture::session::{self, SessionState};
use crate::capture::{self, CaptureError, CaptureOptions, CaptureResult, Mode};
use crate::llm::{
    ChatClient, ChatMessage, ChatRequest, LlmError, ProviderFailure, SystemBlock, Usage,
};
use crate::ontology::store::load_graph;
use crate::ontology::{OntologyGraph, ONTOLOGY_SOURCE};
use crate::operations::{self, ApplyOptions, OperationError, Summary};
use crate::store::rows::{self, GraphSeq};
use crate::store::{queries, Batch, Params, Store, StoreError};
use crate::support::tokens::{Encoding, TokenCounter};

pub use mode::ModeChoice;

/// Answers per request at most, unless configured (the first and two
/// retries, as the flow assistant).
pub const MAX_ITERATIONS: usize = 3;

#[derive(Debug, thiserror::Error)]
pub enum AssistantError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Operation(OperationError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Options of [`ask`].
#[derive(Debug, Clone)]
pub struct AskOptions {
    /// None: `auto` (see [`mode`]).
    pub mode: Option<Mode>,
    pub max_iterations: usize,
    pub history_pairs: usize,
    /// The user asking, for sessions with members.
    pub user: Option<String>,
    /// The tokenizer of the reported token counts.
    pub encoding: Encoding,
}

impl Default for AskOptions {
    fn default() -> Self {
        AskOptions {
            mode: None,
            max_iterations: MAX_ITERATIONS,
            history_pairs: history::HISTORY_PAIRS,
            user: None,
            encoding: Encoding::O200k,
        }
    }
}

/// Tokens of the first request, by part (the tokenizer's count of the
/// text; the provider's own count differs a little, see `usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenBreakdown {
    pub rules: usize,
    pub context: usize,
    pub history: usize,
    /// The canvas line and the request.
    pub request: usize,
    pub total: usize,
    /// Rules + context: the cacheable system blocks.
    pub cacheable: usize,
}

/// The capture a request used.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureInfo {
    pub mode: Mode,
    pub nodes: usize,
    pub edges: usize,
    pub tokens: usize,
    /// Served from the capture cache.
    pub cached: bool,
    pub cache_key: String,
}

/// One answer (or failed call) of the loop.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Iteration {
    pub iteration: usize,
    /// `applied` (operations landed), `answered` (a valid answer without
    /// changes), `rejected` (nothing applied; feedback sent if iterations
    /// remain) or `provider_failed` (no provider answered).
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Providers that failed before one answered (or all, when none did).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failovers: Vec<ProviderFailure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The answer's chat text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    pub operations: usize,
    /// The change-log entry of an applied answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
    /// The error object of a rejected answer (with `llmFeedback`), or the
    /// providers' failure text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// What a request did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskOutcome {
    pub graph: String,
    pub session: String,
    /// The session did not exist and was created with default state.
    pub session_created: bool,
    #[serde(rename = "mode")]
    pub mode: ModeChoice,
    /// The last answer was accepted (applied, or answered without changes).
    pub success: bool,
    /// The status of the last iteration.
    pub status: &'static str,
    pub iterations: usize,
    pub answers: Vec<Iteration>,
    /// The chat text of the accepted answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The operations engine's summary of the accepted answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    pub capture: CaptureInfo,
    pub tokens: TokenBreakdown,
    /// Summed over every answer, as the providers reported it.
    pub usage: Usage,
    /// The graph's seq afterwards.
    pub seq: i64,
}

/// The graph's seq, `None` when the graph does not exist yet; an error
/// when it is not an ontology graph.
fn ontology_seq(store: &Store, graph: &str) -> Result<Option<i64>, AssistantError> {
    let rows = store.read(queries::GRAPH_SEQ, Params::new().with("graph", graph))?;
    match rows::decode_first::<GraphSeq>(&rows).map_err(StoreError::from)? {
        None => Ok(None),
        Some(r) if r.source == ONTOLOGY_SOURCE => Ok(Some(r.seq)),
        Some(r) => Err(AssistantError::Invalid(format!(
            "graph `{graph}` is not an ontology graph (its source is `{}`); pass --graph with an \
             ontology graph's name",
            r.source
        ))),
    }
}

/// Run one request. `emit` receives the JSON lines as they happen. The
/// caller holds the database's write lock.
pub fn ask(
    store: &Store,
    graph: &str,
    session_id: &str,
    client: &ChatClient,
    request: &str,
    opts: &AskOptions,
    emit: &mut dyn FnMut(&Value),
) -> Result<AskOutcome, AssistantError> {
    if request.trim().is_empty() {
        return Err(AssistantError::Invalid("the request is empty".into()));
    }
    if session_id.trim().is_empty() {
        return Err(AssistantError::Invalid(
            "--session must not be empty".into(),
        ));
    }
    let exists = ontology_seq(store, graph)?.is_some();
    let (state, session_created) = match session::load(store, graph, session_id)? {
        Some(s) => (s, false),
        None => (SessionState::default(), true),
    };
    capture::check_access(&state, session_id, opts.user.as_deref())?;
    if session_created {
        session::save(store, graph, session_id, &state)?;
    }

    // The graph is read only when the rule or the canvas line needs it.
    let mut loaded: Option<OntologyGraph> = None;
    let mut graph_now = |store: &Store| -> Result<OntologyGraph, AssistantError> {
        if loaded.is_none() {
            loaded = Some(load_graph(store, graph).map_err(CaptureError::from)?);
        }
        Ok(loaded.clone().expect("loaded"))
    };
    let choice = match opts.mode {
        Some(m) => ModeChoice::explicit(m),
        None => {
            let opener = mode::words(request)
                .first()
                .is_some_and(|w| mode::QUESTION_OPENERS.contains(&w.as_str()));
            let names = if opener && exists {
                let g = graph_now(store)?;
                g.nodes
                    .values()
                    .flat_map(|n| [n.name.clone(), n.semantic_id.clone()])
                    .collect()
            } else {
                Vec::new()
            };
            mode::choose(
                request,
                &mode::Facts {
                    has_selection: !state.selected_nodes.is_empty()
                        || !state.selected_edges.is_empty(),
                    node_names: &names,
                },
            )
        }
    };
    let capture_opts = CaptureOptions {
        mode: choice.mode,
        include_metadata: false,
        encoding: opts.encoding,
        ..CaptureOptions::default()
    };
    let cap: CaptureResult = if exists {
        capture::capture(
            store,
            graph,
            session_id,
            opts.user.as_deref(),
            &capture_opts,
        )?
    } else {
        capture::render(store, &OntologyGraph::new(graph), &state, &capture_opts, 0)?
    };
    let canvas = if state.selected_nodes.is_empty() || !exists {
        prompt::canvas_line(&state, &OntologyGraph::new(graph))
    } else {
        prompt::canvas_line(&state, &graph_now(store)?)
    };

    let counter = TokenCounter::new(opts.encoding);
    let system = [
        SystemBlock::cached(prompt::rules()),
        SystemBlock::cached(prompt::context_block(&cap)),
    ];
    let capture_info = CaptureInfo {
        mode: cap.mode,
        nodes: cap.metadata.total_nodes,
        edges: cap.metadata.total_edges,
        tokens: cap.token_count,
        cached: cap.cached,
        cache_key: cap.cache_key.clone(),
    };
    let mut user_turn = prompt::user_turn(&canvas, request);
    let mut tokens = TokenBreakdown::default();
    let mut answers: Vec<Iteration> = Vec::new();
    let mut usage = Usage::default();
    let max = opts.max_iterations.max(1);

    for iteration in 1..=max {
        let window = history::recent(store, graph, session_id, opts.history_pairs)?;
        let mut messages: Vec<ChatMessage> = history::as_chat(&window);
        messages.push(ChatMessage::user(user_turn.as_str()));
        if iteration == 1 {
            tokens.rules = counter.count_exact(&system[0].text);
            tokens.context = counter.count_exact(&system[1].text);
            tokens.history = window.iter().map(|m| counter.count_exact(&m.content)).sum();
            tokens.request = counter.count_exact(&user_turn);
            tokens.total = tokens.rules + tokens.context + tokens.history + tokens.request;
            tokens.cacheable = tokens.rules + tokens.context;
            emit(&json!({
                "event": "context",
                "graph": graph,
                "session": session_id,
                "sessionCreated": session_created,
                "mode": choice,
                "capture": capture_info,
                "historyMessages": window.len(),
                "tokens": tokens,
            }));
        }
        let request_parts = ChatRequest {
            system: &system,
            messages: &messages,
            tools: None,
        };
        let reply = match client.send(&request_parts) {
            Ok(r) => r,
            Err(e) => {
                let failovers = match &e {
                    LlmError::AllFailed(f) => f.clone(),
                    LlmError::Config(_) => return Err(e.into()),
                };
                let it = Iteration {
                    iteration,
                    status: "provider_failed",
                    provider: None,
                    model: None,
                    failovers,
                    usage: None,
                    response: None,
                    operations: 0,
                    entry: None,
                    chunks: None,
                    error: Some(json!({"error": "ProviderError", "message": e.to_string()})),
                };
                emit(&iteration_line(&it));
                answers.push(it);
                continue;
            }
        };
        if let Some(u) = &reply.usage {
            usage = usage.add(u);
        }
        let mut it = Iteration {
            iteration,
            status: "rejected",
            provider: Some(reply.provider.clone()),
            model: Some(reply.model.clone()),
            failovers: reply.failures.clone(),
            usage: reply.usage,
            response: None,
            operations: 0,
            entry: None,
            chunks: None,
            error: None,
        };
        let idx = history::next_idx(store, graph, session_id)?;
        let parsed = prompt::extract(&reply.content);
        let applied = match parsed {
            Err(e) => Err(e),
            Ok(response) => {
                it.response = response.text.clone();
                it.operations = response.operations.len();
                let stored_turn = user_turn.clone();
                let answer = reply.content.clone();
                operations::apply_with(
                    store,
                    graph,
                    &response,
                    &ApplyOptions::default(),
                    &mut |batch: &mut Batch, entry| {
                        let result = json!({
                            "status": if entry.is_some() { "applied" } else { "answered" },
                            "entry": entry,
                            "iteration": iteration,
                        });
                        history::queue_exchange(
                            batch,
                            graph,
                            session_id,
                            idx,
                            &stored_turn,
                            &answer,
                            &result,
                        );
                    },
                    emit,
                )
                .map(|summary| (response, summary))
            }
        };
        match applied {
            Ok((response, summary)) => {
                it.status = if summary.entry.is_some() {
                    "applied"
                } else {
                    "answered"
                };
                it.entry = summary.entry;
                it.chunks = Some(summary.chunks);
                emit(&iteration_line(&it));
                let status = it.status;
                answers.push(it);
                let seq = summary.seq;
                return Ok(AskOutcome {
                    graph: graph.to_string(),
                    session: session_id.to_string(),
                    session_created,
                    mode: choice,
                    success: true,
                    status,
                    iterations: iteration,
                    answers,
                    response: response.text,
                    summary: Some(summary),
                    capture: capture_info,
                    tokens,
                    usage,
                    seq,
                });
            }
            Err(e) if e.is_response_error() => {
                let obj = e.to_json();
                let mut batch = Batch::new();
                history::queue_exchange(
                    &mut batch,
                    graph,
                    session_id,
                    idx,
                    &user_turn,
                    &reply.content,
                    &json!({"status": "rejected", "iteration": iteration, "error": obj}),
                );
                store.apply(batch)?;
                user_turn = prompt::feedback(&obj);
                it.error = Some(obj);
                emit(&iteration_line(&it));
                answers.push(it);
            }
            Err(e) => return Err(AssistantError::Operation(e)),
        }
    }
    let status = answers.last().map(|a| a.status).unwrap_or("rejected");
    Ok(AskOutcome {
        graph: graph.to_string(),
        session: session_id.to_string(),
        session_created,
        mode: choice,
        success: false,
        status,
        iterations: answers.len(),
        answers,
        response: None,
        summary: None,
        capture: capture_info,
        tokens,
        usage,
        seq: ontology_seq(store, graph)?.unwrap_or(0),
    })
}

fn iteration_line(it: &Iteration) -> Value {
    let mut v = serde_json::to_value(it).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("event".into(), json!("iteration"));
    }
    v
}
