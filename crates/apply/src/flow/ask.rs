//! `graphctx ask`: request → context → model → tools → retry loop.
//!
//! Each iteration loads the flow, sends the system prompt, the newest
//! history pairs and the context message (flow state, visual settings,
//! tools, the request or the retry message), parses the answer, runs its
//! calls and commits the answer's edits together with the exchange. When
//! every call succeeded (or the answer made none) the loop ends; when some
//! failed, the retry message goes back to the model, at most
//! [`MAX_ITERATIONS`] answers in all. A parse error ends the loop at once
//! and is reported, not retried.

use serde::Serialize;

use crate::llm::{ChatClient, ChatMessage, ChatReply, ProviderFailure};
use crate::store::Store;
use crate::support::tokens::{Encoding, TokenCounter};

use super::executor::{Executed, FlowSession};
use super::history::{self, HISTORY_PAIRS};
use super::model::Flow;
use super::parse::{parse_reply, Parsed};
use super::prompt::{context_message, retry_message, SYSTEM_PROMPT};
use super::{tools, FlowError};

/// Answers per request at most (the first and two retries).
pub const MAX_ITERATIONS: usize = 3;

#[derive(Debug, Clone)]
pub struct AskOptions {
    pub max_iterations: usize,
    pub history_pairs: usize,
    pub encoding: Encoding,
}

impl Default for AskOptions {
    fn default() -> Self {
        AskOptions {
            max_iterations: MAX_ITERATIONS,
            history_pairs: HISTORY_PAIRS,
            encoding: Encoding::default(),
        }
    }
}

/// One answer of the loop.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Iteration {
    pub iteration: usize,
    pub provider: String,
    pub model: String,
    /// Providers that failed before `provider` answered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failovers: Vec<ProviderFailure>,
    /// Tokens of the context message (o200k unless configured).
    pub context_tokens: usize,
    pub thinking: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub content: String,
    pub calls: Vec<Executed>,
    /// The retry message this answer's failures produced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_message: Option<String>,
}

/// What `ask` did.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskOutcome {
    /// Every call of the last answer succeeded and nothing failed to parse.
    pub success: bool,
    /// How many answers it took (the seed's `iterations`).
    pub iterations: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
    /// Why a retry could not be sent (every provider failed); the earlier
    /// answers' changes have landed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_error: Option<String>,
    pub answers: Vec<Iteration>,
    /// One line per change that landed, over all answers.
    pub changes: Vec<String>,
    /// The graph's `seq` afterwards.
    pub seq: i64,
    pub flow: Flow,
}

/// Run the loop for one request.
pub fn ask(
    store: &Store,
    graph: &str,
    client: &ChatClient,
    request: &str,
    opts: &AskOptions,
) -> Result<AskOutcome, FlowError> {
    let counter = TokenCounter::new(opts.encoding);
    let openai_tools = tools::openai_tools();
    let mut user_turn = request.to_string();
    let mut answers: Vec<Iteration> = Vec::new();
    let mut changes = Vec::new();
    let max = opts.max_iterations.max(1);
    for iteration in 1..=max {
        let mut session = FlowSession::open(store, graph)?;
        let context = context_message(session.flow(), session.visuals(), &user_turn);
        let mut messages = vec![ChatMessage::system(SYSTEM_PROMPT)];
        messages.extend(history::as_chat(&history::recent(
            store,
            graph,
            opts.history_pairs,
        )?));
        messages.push(ChatMessage::user(context.as_str()));
        let reply = match client.chat(&messages, Some(&openai_tools)) {
            Ok(r) => r,
            // The first answer's failure is the command's; a retry's is
            // reported with what the earlier answers already landed.
            Err(e) if iteration > 1 => {
                let stored = super::store::load(store, graph)?;
                return Ok(AskOutcome {
                    success: false,
                    iterations: iteration - 1,
                    parse_error: None,
                    retry_error: Some(e.to_string()),
                    answers,
                    changes,
                    seq: stored.seq.unwrap_or(0),
                    flow: stored.flow,
                });
            }
            Err(e) => return Err(e.into()),
        };
        let parsed = parse_reply(&reply);
        session.record_exchange(&user_turn, &assistant_record(&reply, &parsed));
        let mut it = Iteration {
            iteration,
            provider: reply.provider.clone(),
            model: reply.model.clone(),
            failovers: reply.failures.clone(),
            context_tokens: counter.count_exact(&context),
            thinking: parsed.thinking.clone(),
            content: parsed.content.clone(),
            calls: Vec::new(),
            retry_message: None,
        };
        if let Some(err) = parsed.parse_error {
            let committed = session.commit()?;
            answers.push(it);
            return Ok(AskOutcome {
                success: false,
                iterations: iteration,
                parse_error: Some(err),
                retry_error: None,
                answers,
                changes,
                seq: committed.seq,
                flow: super::store::load(store, graph)?.flow,
            });
        }
        let executed = session.execute(&parsed.tool_calls)?;
        let flow_after = session.flow().clone();
        let committed = session.commit()?;
        changes.extend(executed.iter().filter_map(|e| e.change.clone()));
        let failed = executed.iter().any(|e| !e.result.success);
        if failed {
            it.retry_message = Some(retry_message(&executed, &flow_after));
        }
        it.calls = executed;
        let next = it.retry_message.clone();
        answers.push(it);
        match next {
            Some(msg) if iteration < max => user_turn = msg,
            _ => {
                return Ok(AskOutcome {
                    success: !failed,
                    iterations: iteration,
                    parse_error: None,
                    retry_error: None,
                    answers,
                    changes,
                    seq: committed.seq,
                    flow: flow_after,
                })
            }
        }
    }
    unreachable!("the loop returns on its last iteration")
}

/// What the history keeps of an answer: its text, and native tool calls
/// written in the text form so a later request shows them the same way.
fn assistant_record(reply: &ChatReply, parsed: &Parsed) -> String {
    if reply.tool_calls.is_empty() {
        return reply.content.clone();
    }
    let calls: Vec<serde_json::Value> = parsed
        .tool_calls
        .iter()
        .map(|c| serde_json::json!({"type": "tool_use", "name": c.name, "input": c.params}))
        .collect();
    let mut out = String::new();
    if !parsed.thinking.is_empty() {
        out.push_str(&format!("<thinking>\n{}\n</thinking>\n", parsed.thinking));
    }
    out.push_str(&format!(
        "<response>\n{}\n</response>",
        serde_json::to_string(&calls).unwrap_or_default()
    ));
    out
}
