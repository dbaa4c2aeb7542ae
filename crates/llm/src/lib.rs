//! A blocking client for OpenAI-compatible chat-completions endpoints
//! (Groq, Cerebras, OpenAI, a local llama.cpp or Ollama server) and the
//! Anthropic Messages API, with failover over an ordered provider list.
//!
//! A request is a [`ChatRequest`]: system blocks (each marked cacheable or
//! not), then the conversation. Anthropic providers get the blocks as
//! `system` blocks with `cache_control: {type: "ephemeral"}` on the
//! cacheable ones (prompt caching: a repeated prefix is billed as a cache
//! read); OpenAI-compatible ones get them as leading system messages (their
//! providers cache repeated prefixes on their own). The usage a provider
//! reports, cache reads and writes included, comes back in [`Usage`].
//!
//! Blocking on purpose: the CLI is synchronous, a request is one round
//! trip, and a per-request timeout is all the concurrency control needed.
//! A provider that errs — connection refused or closed, timeout, an HTTP
//! error status, a body that is not a chat completion, a missing key — is
//! recorded and the next provider is asked; only when every provider has
//! failed is the call an error, naming each provider and what went wrong.
//! API keys are sent in the `Authorization` header only and scrubbed from
//! every error text (see [`config::Secret`]).

pub mod anthropic;
pub mod config;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub use config::{KeySource, LlmConfig, Provider, ProviderKind, Secret};

/// How much of an error body goes into an error message.
pub(crate) const ERROR_BODY_CHARS: usize = 300;
/// The largest response body read.
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("LLM configuration: {0}")]
    Config(String),
    #[error("every LLM provider failed: {}", describe(.0))]
    AllFailed(Vec<ProviderFailure>),
}

fn describe(failures: &[ProviderFailure]) -> String {
    failures
        .iter()
        .map(|f| format!("{}: {}", f.provider, f.error))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One message of a chat request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: "system".into(),
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: "user".into(),
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: "assistant".into(),
            content: content.into(),
        }
    }
}

/// One part of the system prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemBlock {
    pub text: String,
    /// Ask the provider to cache the prompt up to and including this
    /// block (Anthropic `cache_control: {type: "ephemeral"}`).
    pub cache: bool,
}

impl SystemBlock {
    pub fn cached(text: impl Into<String>) -> SystemBlock {
        SystemBlock {
            text: text.into(),
            cache: true,
        }
    }

    pub fn plain(text: impl Into<String>) -> SystemBlock {
        SystemBlock {
            text: text.into(),
            cache: false,
        }
    }
}

/// A request: system blocks, then the conversation (user and assistant
/// turns; system-role messages in it are sent as further system blocks to
/// providers that keep the system prompt apart).
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub system: &'a [SystemBlock],
    pub messages: &'a [ChatMessage],
    /// The OpenAI `tools` array, for providers with `native_tools`.
    pub tools: Option<&'a Value>,
}

/// Tokens as the provider counted them (fields it did not report are
/// `None`). Anthropic reports cache writes and reads apart from
/// `inputTokens`; OpenAI-compatible providers count cached tokens inside
/// their prompt tokens and report them as `cacheReadInputTokens` here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
}

impl Usage {
    /// Field-wise sum (a field is `Some` when either side reported it).
    pub fn add(&self, other: &Usage) -> Usage {
        fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            }
        }
        Usage {
            input_tokens: sum(self.input_tokens, other.input_tokens),
            output_tokens: sum(self.output_tokens, other.output_tokens),
            cache_creation_input_tokens: sum(
                self.cache_creation_input_tokens,
                other.cache_creation_input_tokens,
            ),
            cache_read_input_tokens: sum(
                self.cache_read_input_tokens,
                other.cache_read_input_tokens,
            ),
        }
    }
}

/// What one provider answered.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Completion {
    pub content: String,
    pub tool_calls: Vec<NativeToolCall>,
    pub usage: Option<Usage>,
}

/// A provider that did not answer, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderFailure {
    pub provider: String,
    pub error: String,
}

/// A native tool call of an answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NativeToolCall {
    pub id: Option<String>,
    pub name: String,
    /// The arguments as the provider sent them (a JSON text).
    pub arguments: String,
}

/// An answer, and who gave it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChatReply {
    pub provider: String,
    pub model: String,
    pub content: String,
    pub tool_calls: Vec<NativeToolCall>,
    /// Providers tried before this one, with their errors.
    pub failures: Vec<ProviderFailure>,
    /// Tokens as the provider reported them.
    pub usage: Option<Usage>,
}

/// Looks up an environment variable (the process's, or a test's).
type EnvLookup = Box<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The client: the providers, tried in order.
pub struct ChatClient {
    providers: Vec<Provider>,
    env: EnvLookup,
}

impl ChatClient {
    /// A client reading `api_key_env` keys from the process environment.
    pub fn new(config: LlmConfig) -> ChatClient {
        ChatClient {
            providers: config.providers,
            env: Box::new(|k| std::env::var(k).ok()),
        }
    }

    /// A client with its own environment lookup (tests).
    pub fn with_env(
        config: LlmConfig,
        env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> ChatClient {
        ChatClient {
            providers: config.providers,
            env: Box::new(env),
        }
    }

    pub fn providers(&self) -> &[Provider] {
        &self.providers
    }

    /// Ask the providers in order until one answers. `tools` (the
    /// OpenAI `tools` array) is sent to providers with `native_tools`.
    pub fn chat(
        &self,
        messages: &[ChatMessage],
        tools: Option<&Value>,
    ) -> Result<ChatReply, LlmError> {
        self.send(&ChatRequest {
            system: &[],
            messages,
            tools,
        })
    }

    /// Ask the providers in order until one answers.
    pub fn send(&self, request: &ChatRequest) -> Result<ChatReply, LlmError> {
        let mut failures = Vec::new();
        for p in &self.providers {
            match self.ask(p, request) {
                Ok(done) => {
                    return Ok(ChatReply {
                        provider: p.name.clone(),
                        model: p.model.clone(),
                        content: done.content,
                        tool_calls: done.tool_calls,
                        failures,
                        usage: done.usage,
                    })
                }
                Err(error) => failures.push(ProviderFailure {
                    provider: p.name.clone(),
                    error,
                }),
            }
        }
        Err(LlmError::AllFailed(failures))
    }

    /// One provider, one request. The error text is scrubbed of the key.
    fn ask(&self, p: &Provider, request: &ChatRequest) -> Result<Completion, String> {
        let key = match &p.key {
            KeySource::None => None,
            KeySource::Literal(k) => Some(k.clone()),
            KeySource::Env(var) => match (self.env)(var).filter(|v| !v.is_empty()) {
                Some(k) => Some(Secret::new(k)),
                None => {
                    return Err(format!(
                        "environment variable {var} (its API key) is not set"
                    ))
                }
            },
        };
        let scrub = |s: String| match &key {
            Some(k) => k.scrub(&s),
            None => s,
        };
        let base = p.base_url.trim_end_matches('/');
        let (url, body) = match p.kind {
            ProviderKind::OpenAi => (format!("{base}/chat/completions"), openai_body(p, request)),
            ProviderKind::Anthropic => (format!("{base}/messages"), anthropic::body(p, request)),
        };
        let agent = ureq::AgentBuilder::new()
            .timeout(p.timeout)
            .timeout_connect(p.timeout.min(Duration::from_secs(10)))
            .redirects(0)
            .build();
        let mut req = agent.post(&url).set("Content-Type", "application/json");
        if p.kind == ProviderKind::Anthropic {
            req = req.set("anthropic-version", anthropic::API_VERSION);
        }
        if let Some(k) = &key {
            req = match p.kind {
                ProviderKind::OpenAi => req.set("Authorization", &format!("Bearer {}", k.expose())),
                ProviderKind::Anthropic => req.set("x-api-key", k.expose()),
            };
        }
        let response = match req.send_string(&body.to_string()) {
            Ok(r) => r,
            Err(ureq::Error::Status(code, r)) => {
                let text = read_body(r).unwrap_or_default();
                return Err(scrub(format!("HTTP {code}{}", error_detail(&text))));
            }
            Err(ureq::Error::Transport(t)) => {
                return Err(scrub(transport_error(&t, p.timeout)));
            }
        };
        let text = read_body(response).map_err(|e| scrub(timeout_or(e, p.timeout)))?;
        match p.kind {
            ProviderKind::OpenAi => {
                parse_completion(&text).map(|(content, tool_calls)| Completion {
                    content,
                    tool_calls,
                    usage: openai_usage(&text),
                })
            }
            ProviderKind::Anthropic => anthropic::parse(&text),
        }
        .map_err(scrub)
    }
}

/// The chat-completions body: system blocks as leading system messages.
fn openai_body(p: &Provider, request: &ChatRequest) -> Value {
    let mut messages: Vec<Value> = request
        .system
        .iter()
        .map(|b| json!({"role": "system", "content": b.text}))
        .collect();
    messages.extend(
        request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content})),
    );
    let mut body = json!({
        "model": p.model,
        "messages": messages,
        "stream": false,
    });
    if let Some(t) = p.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(m) = p.max_tokens {
        body["max_tokens"] = json!(m);
    }
    if let (true, Some(tools)) = (p.native_tools, request.tools) {
        body["tools"] = tools.clone();
        body["tool_choice"] = json!("auto");
    }
    body
}

/// `usage` of a chat completion, if it has one.
fn openai_usage(body: &str) -> Option<Usage> {
    let v: Value = serde_json::from_str(body).ok()?;
    let u = v.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: u.get("prompt_tokens").and_then(Value::as_u64),
        output_tokens: u.get("completion_tokens").and_then(Value::as_u64),
        cache_creation_input_tokens: None,
        cache_read_input_tokens: u
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64),
    })
}

fn read_body(r: ureq::Response) -> std::io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    r.into_reader()
        .take(MAX_BODY_BYTES)
        .read_to_string(&mut s)?;
    Ok(s)
}

fn timeout_or(e: std::io::Error, timeout: Duration) -> String {
    if matches!(
        e.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    ) {
        format!("timed out after {} s", timeout.as_secs_f64())
    } else {
        format!("reading the response failed: {e}")
    }
}

fn transport_error(t: &ureq::Transport, timeout: Duration) -> String {
    use std::error::Error;
    let mut timed_out = false;
    let mut source = t.source();
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            ) {
                timed_out = true;
            }
        }
        source = s.source();
    }
    if timed_out || t.to_string().contains("timed out") {
        return format!("timed out after {} s", timeout.as_secs_f64());
    }
    match t.kind() {
        ureq::ErrorKind::ConnectionFailed => {
            format!("connection failed: {}", t.message().unwrap_or("refused"))
        }
        _ => t.to_string(),
    }
}

/// The provider's own error message if the body has one, else its start.
fn error_detail(body: &str) -> String {
    let msg = match serde_json::from_str::<Value>(body) {
        // A JSON body: its message, if it has one.
        Ok(v) => ["/error/message", "/error", "/message", "/detail"]
            .iter()
            .find_map(|p| v.pointer(p).and_then(Value::as_str))
            .unwrap_or("")
            .to_string(),
        Err(_) => body.trim().to_string(),
    };
    if msg.is_empty() {
        String::new()
    } else {
        format!(": {}", truncate(&msg, ERROR_BODY_CHARS))
    }
}

pub(crate) fn truncate(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Content and tool calls of a chat-completion body.
pub fn parse_completion(body: &str) -> Result<(String, Vec<NativeToolCall>), String> {
    let v: Value = serde_json::from_str(body).map_err(|e| {
        format!(
            "the response is not JSON ({e}): {}",
            truncate(body.trim(), ERROR_BODY_CHARS)
        )
    })?;
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return Err(format!(
            "the provider returned an error: {}",
            truncate(&msg, ERROR_BODY_CHARS)
        ));
    }
    let message = v
        .pointer("/choices/0/message")
        .ok_or("the response has no choices[0].message")?;
    let content = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let mut calls = Vec::new();
    for c in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let f = c.get("function").ok_or("a tool call has no function")?;
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a tool call has no function name")?;
        let arguments = match f.get("arguments") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        calls.push(NativeToolCall {
            id: c.get("id").and_then(Value::as_str).map(str::to_string),
            name: name.to_string(),
            arguments,
        });
    }
    if content.is_empty() && calls.is_empty() {
        return Err("the response has neither content nor tool calls".into());
    }
    Ok((content, calls))
}

/// Remove `<think>...</think>` blocks some reasoning models emit.
pub fn strip_think(text: &str) -> String {
    let mut out = text.to_string();
    while let Some(start) = out.find("<think>") {
        match out[start..].find("</think>") {
            Some(end) => out.replace_range(start..start + end + "</think>".len(), ""),
            None => {
                out.truncate(start);
                break;
            }
        }
    }
    out
}
