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
    ChatClient, ChatMessage, ChatReply, ChatRequest, LlmError, ProviderFailure, SystemBlock, Usage,
};
use crate::ontology::store::load_graph;
use crate::ontology::{OntologyGraph, ONTOLOGY_SOURCE};
use crate::operations::{self, ApplyOptions, OperationError, Response, Summary};
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
    check_request(request, session_id)?;
    let exists = ontology_seq(store, graph)?.is_some();
    let (state, session_created) = open_session(store, graph, session_id, opts)?;

    // The graph is read only when the rule or the canvas line needs it.
    let mut lazy = LazyGraph::new(graph);
    let choice = choose_mode(store, request, opts, &state, exists, &mut lazy)?;
    let cap = capture_context(store, graph, session_id, opts, &state, exists, choice.mode)?;
    let canvas = if state.selected_nodes.is_empty() || !exists {
        prompt::canvas_line(&state, &OntologyGraph::new(graph))
    } else {
        prompt::canvas_line(&state, &lazy.get(store)?)
    };

    let conversation = Conversation {
        store,
        graph,
        session_id,
        session_created,
        client,
        opts,
        system: [
            SystemBlock::cached(prompt::rules()),
            SystemBlock::cached(prompt::context_block(&cap)),
        ],
        counter: TokenCounter::new(opts.encoding),
        choice,
        capture_info: capture_info(&cap),
    };
    let mut progress = Progress::default();
    let accepted = conversation.run(prompt::user_turn(&canvas, request), &mut progress, emit)?;
    conversation.outcome(progress, accepted)
}

/// Refuse an empty request or session name before anything is read.
fn check_request(request: &str, session_id: &str) -> Result<(), AssistantError> {
    if request.trim().is_empty() {
        return Err(AssistantError::Invalid("the request is empty".into()));
    }
    if session_id.trim().is_empty() {
        return Err(AssistantError::Invalid(
            "--session must not be empty".into(),
        ));
    }
    Ok(())
}

/// The canvas session's state (saved with defaults when new, once access is
/// checked), and whether it was created.
fn open_session(
    store: &Store,
    graph: &str,
    session_id: &str,
    opts: &AskOptions,
) -> Result<(SessionState, bool), AssistantError> {
    let (state, session_created) = match session::load(store, graph, session_id)? {
        Some(s) => (s, false),
        None => (SessionState::default(), true),
    };
    capture::check_access(&state, session_id, opts.user.as_deref())?;
    if session_created {
        session::save(store, graph, session_id, &state)?;
    }
    Ok((state, session_created))
}

/// The ontology graph, loaded on first use and kept for later uses.
struct LazyGraph<'a> {
    graph: &'a str,
    loaded: Option<OntologyGraph>,
}

impl<'a> LazyGraph<'a> {
    /// Nothing loaded yet.
    fn new(graph: &'a str) -> Self {
        LazyGraph {
            graph,
            loaded: None,
        }
    }

    /// The graph, read from the store the first time only.
    fn get(&mut self, store: &Store) -> Result<OntologyGraph, AssistantError> {
        if self.loaded.is_none() {
            self.loaded = Some(load_graph(store, self.graph).map_err(CaptureError::from)?);
        }
        Ok(self.loaded.clone().expect("loaded"))
    }
}

/// The capture mode: the given one, or the documented rule's choice (which
/// reads the graph's names only for a question about an existing graph).
fn choose_mode(
    store: &Store,
    request: &str,
    opts: &AskOptions,
    state: &SessionState,
    exists: bool,
    lazy: &mut LazyGraph,
) -> Result<ModeChoice, AssistantError> {
    if let Some(m) = opts.mode {
        return Ok(ModeChoice::explicit(m));
    }
    let opener = mode::words(request)
        .first()
        .is_some_and(|w| mode::QUESTION_OPENERS.contains(&w.as_str()));
    let names = if opener && exists {
        let g = lazy.get(store)?;
        g.nodes
            .values()
            .flat_map(|n| [n.name.clone(), n.semantic_id.clone()])
            .collect()
    } else {
        Vec::new()
    };
    Ok(mode::choose(
        request,
        &mode::Facts {
            has_selection: !state.selected_nodes.is_empty() || !state.selected_edges.is_empty(),
            node_names: &names,
        },
    ))
}

/// The graph context in the chosen mode: the session's capture of an
/// existing graph, or the rendering of an empty one.
fn capture_context(
    store: &Store,
    graph: &str,
    session_id: &str,
    opts: &AskOptions,
    state: &SessionState,
    exists: bool,
    mode: Mode,
) -> Result<CaptureResult, AssistantError> {
    let capture_opts = CaptureOptions {
        mode,
        include_metadata: false,
        encoding: opts.encoding,
        ..CaptureOptions::default()
    };
    Ok(if exists {
        capture::capture(
            store,
            graph,
            session_id,
            opts.user.as_deref(),
            &capture_opts,
        )?
    } else {
        capture::render(store, &OntologyGraph::new(graph), state, &capture_opts, 0)?
    })
}

/// What the outcome reports of the capture.
fn capture_info(cap: &CaptureResult) -> CaptureInfo {
    CaptureInfo {
        mode: cap.mode,
        nodes: cap.metadata.total_nodes,
        edges: cap.metadata.total_edges,
        tokens: cap.token_count,
        cached: cap.cached,
        cache_key: cap.cache_key.clone(),
    }
}

/// The parts of one request that every iteration of its loop shares.
struct Conversation<'a> {
    store: &'a Store,
    graph: &'a str,
    session_id: &'a str,
    session_created: bool,
    client: &'a ChatClient,
    opts: &'a AskOptions,
    /// The rules and the graph context, the two cacheable system blocks.
    system: [SystemBlock; 2],
    counter: TokenCounter,
    choice: ModeChoice,
    capture_info: CaptureInfo,
}

/// The loop's running record: every answer, the first request's tokens,
/// the providers' usage summed.
#[derive(Default)]
struct Progress {
    answers: Vec<Iteration>,
    tokens: TokenBreakdown,
    usage: Usage,
}

/// One answer and the turn it answers, with the history index its
/// exchange is stored under.
#[derive(Clone, Copy)]
struct Exchange<'a> {
    reply: &'a ChatReply,
    user_turn: &'a str,
    idx: i64,
    iteration: usize,
}

/// The answer the operations engine accepted, and which iteration gave it.
struct Accepted {
    iteration: usize,
    status: &'static str,
    response: Option<String>,
    summary: Summary,
}

impl Conversation<'_> {
    /// Ask, apply, feed a rejection back and ask again, at most
    /// `max_iterations` times; the accepted answer, if any.
    fn run(
        &self,
        first_turn: String,
        progress: &mut Progress,
        emit: &mut dyn FnMut(&Value),
    ) -> Result<Option<Accepted>, AssistantError> {
        let mut user_turn = first_turn;
        for iteration in 1..=self.opts.max_iterations.max(1) {
            let window = history::recent(
                self.store,
                self.graph,
                self.session_id,
                self.opts.history_pairs,
            )?;
            let mut messages: Vec<ChatMessage> = history::as_chat(&window);
            messages.push(ChatMessage::user(user_turn.as_str()));
            if iteration == 1 {
                progress.tokens = self.measure(&window, &user_turn);
                emit(&self.context_line(window.len(), &progress.tokens));
            }
            let request_parts = ChatRequest {
                system: &self.system,
                messages: &messages,
                tools: None,
            };
            let reply = match self.client.send(&request_parts) {
                Ok(r) => r,
                Err(e) => {
                    let it = provider_failed(iteration, e)?;
                    emit(&iteration_line(&it));
                    progress.answers.push(it);
                    continue;
                }
            };
            if let Some(u) = &reply.usage {
                progress.usage = progress.usage.add(u);
            }
            let mut it = answered(iteration, &reply);
            let exchange = Exchange {
                reply: &reply,
                user_turn: &user_turn,
                idx: history::next_idx(self.store, self.graph, self.session_id)?,
                iteration,
            };
            match self.apply_answer(&exchange, &mut it, emit) {
                Ok((response, summary)) => {
                    return Ok(Some(accept(
                        iteration, it, response, summary, progress, emit,
                    )));
                }
                Err(e) if e.is_response_error() => {
                    user_turn = self.reject(&exchange, it, e, progress, emit)?;
                }
                Err(e) => return Err(AssistantError::Operation(e)),
            }
        }
        Ok(None)
    }

    /// What the request did: the accepted answer's outcome, or the last
    /// answer's status and the graph's seq when none was accepted.
    fn outcome(
        self,
        progress: Progress,
        accepted: Option<Accepted>,
    ) -> Result<AskOutcome, AssistantError> {
        let outcome = AskOutcome {
            graph: self.graph.to_string(),
            session: self.session_id.to_string(),
            session_created: self.session_created,
            mode: self.choice,
            success: false,
            status: "rejected",
            iterations: progress.answers.len(),
            answers: progress.answers,
            response: None,
            summary: None,
            capture: self.capture_info,
            tokens: progress.tokens,
            usage: progress.usage,
            seq: 0,
        };
        match accepted {
            Some(a) => Ok(AskOutcome {
                success: true,
                status: a.status,
                iterations: a.iteration,
                response: a.response,
                seq: a.summary.seq,
                summary: Some(a.summary),
                ..outcome
            }),
            None => Ok(AskOutcome {
                status: outcome
                    .answers
                    .last()
                    .map(|a| a.status)
                    .unwrap_or("rejected"),
                seq: ontology_seq(self.store, self.graph)?.unwrap_or(0),
                ..outcome
            }),
        }
    }

    /// The first request's tokens, by part.
    fn measure(&self, window: &[history::StoredMessage], user_turn: &str) -> TokenBreakdown {
        let mut tokens = TokenBreakdown {
            rules: self.counter.count_exact(&self.system[0].text),
            context: self.counter.count_exact(&self.system[1].text),
            history: window
                .iter()
                .map(|m| self.counter.count_exact(&m.content))
                .sum(),
            request: self.counter.count_exact(user_turn),
            ..TokenBreakdown::default()
        };
        tokens.total = tokens.rules + tokens.context + tokens.history + tokens.request;
        tokens.cacheable = tokens.rules + tokens.context;
        tokens
    }

    /// The `context` event: the session, the mode, the capture and the
    /// first request's tokens.
    fn context_line(&self, history_messages: usize, tokens: &TokenBreakdown) -> Value {
        json!({
            "event": "context",
            "graph": self.graph,
            "session": self.session_id,
            "sessionCreated": self.session_created,
            "mode": self.choice,
            "capture": self.capture_info,
            "historyMessages": history_messages,
            "tokens": tokens,
        })
    }

    /// Extract the answer's JSON and apply it, the exchange stored in the
    /// same transaction; `it` gets the answer's text and operation count.
    fn apply_answer(
        &self,
        exchange: &Exchange,
        it: &mut Iteration,
        emit: &mut dyn FnMut(&Value),
    ) -> Result<(Response, Summary), OperationError> {
        let Exchange {
            reply,
            user_turn,
            idx,
            iteration,
        } = *exchange;
        let response = prompt::extract(&reply.content)?;
        it.response = response.text.clone();
        it.operations = response.operations.len();
        let stored_turn = user_turn.to_string();
        let answer = reply.content.clone();
        operations::apply_with(
            self.store,
            self.graph,
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
                    self.graph,
                    self.session_id,
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

    /// Store the rejected exchange, report the iteration, and return the
    /// feedback that becomes the next user turn.
    fn reject(
        &self,
        exchange: &Exchange,
        mut it: Iteration,
        error: OperationError,
        progress: &mut Progress,
        emit: &mut dyn FnMut(&Value),
    ) -> Result<String, AssistantError> {
        let obj = error.to_json();
        let mut batch = Batch::new();
        history::queue_exchange(
            &mut batch,
            self.graph,
            self.session_id,
            exchange.idx,
            exchange.user_turn,
            &exchange.reply.content,
            &json!({"status": "rejected", "iteration": exchange.iteration, "error": obj}),
        );
        self.store.apply(batch)?;
        let feedback = prompt::feedback(&obj);
        it.error = Some(obj);
        emit(&iteration_line(&it));
        progress.answers.push(it);
        Ok(feedback)
    }
}

/// The iteration of a call no provider answered (a configuration error
/// ends the request instead).
fn provider_failed(iteration: usize, e: LlmError) -> Result<Iteration, AssistantError> {
    let failovers = match &e {
        LlmError::AllFailed(f) => f.clone(),
        LlmError::Config(_) => return Err(e.into()),
    };
    Ok(Iteration {
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
    })
}

/// The iteration of a provider's answer, `rejected` until it is applied.
fn answered(iteration: usize, reply: &ChatReply) -> Iteration {
    Iteration {
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
    }
}

/// Mark an applied answer `applied` (or `answered` when nothing changed),
/// report it, and keep it as the accepted one.
fn accept(
    iteration: usize,
    mut it: Iteration,
    response: Response,
    summary: Summary,
    progress: &mut Progress,
    emit: &mut dyn FnMut(&Value),
) -> Accepted {
    it.status = if summary.entry.is_some() {
        "applied"
    } else {
        "answered"
    };
    it.entry = summary.entry;
    it.chunks = Some(summary.chunks);
    emit(&iteration_line(&it));
    let status = it.status;
    progress.answers.push(it);
    Accepted {
        iteration,
        status,
        response: response.text,
        summary,
    }
}

fn iteration_line(it: &Iteration) -> Value {
    let mut v = serde_json::to_value(it).unwrap_or(Value::Null);
    if let Some(m) = v.as_object_mut() {
        m.insert("event".into(), json!("iteration"));
    }
    v
}
