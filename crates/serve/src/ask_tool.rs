//! The MCP tool `ontology_ask`: the ontology assistant
//! ([`crate::assistant`]) for agents, as `graphctx graph ask` is for
//! people. The provider configuration is the CLI's (`llm.toml` found from
//! the workspace root, `GRAPHCTX_LLM_*` variables of the server process).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::tools::{Answer, Args, ToolError, ToolSpec};
use super::Workspace;
use crate::assistant::{self, AskOptions, AssistantError};
use crate::capture::{CaptureError, Mode};
use crate::llm::{ChatClient, LlmConfig, LlmError};
use crate::store::lock::WriteLock;
use crate::store::StoreError;

/// How long the tool waits for another writer.
const LOCK_WAIT: Duration = Duration::from_secs(30);

pub fn specs() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "ontology_ask",
        description: "Ask the ontology assistant to explain or change an ontology graph: the \
            canvas session's context is captured (mode auto chooses minimal, selected or full and \
            reports which), the configured LLM answers with operations, and they are applied in one \
            transaction; a rejected answer (bad JSON, missing or cyclic dependency, failing \
            operation) goes back to the model with its llmFeedback, up to max_iterations answers. \
            Returns the outcome (mode, iterations, usage, summary) and the view updates.",
        properties: || {
            json!({
                "graph": {"type": "string", "description": "Ontology graph name"},
                "session": {"type": "string", "description": "Canvas session id (created with default state when new)"},
                "request": {"type": "string", "description": "What to change or ask, in plain words"},
                "mode": {"type": "string", "enum": ["auto", "full", "selected", "visible", "changed", "minimal"], "default": "auto"},
                "max_iterations": {"type": "integer", "minimum": 1, "default": assistant::MAX_ITERATIONS},
                "user": {"type": "string", "description": "Member name, for sessions with members"}
            })
        },
        required: &["graph", "session", "request"],
        run: tool_ask,
    }]
}

fn text<'a>(a: &'a Args, k: &str) -> Result<Option<&'a str>, ToolError> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s)),
        Some(v) => Err(ToolError::invalid(format!(
            "'{k}' must be a non-empty string, got {v}"
        ))),
    }
}

fn required<'a>(a: &'a Args, k: &str) -> Result<&'a str, ToolError> {
    text(a, k)?.ok_or_else(|| ToolError::invalid(format!("'{k}' is required")))
}

fn error(e: AssistantError) -> ToolError {
    let kind = match &e {
        AssistantError::Invalid(_) => "invalid_arguments",
        AssistantError::Capture(CaptureError::AccessDenied { .. })
        | AssistantError::Capture(CaptureError::UserRequired { .. }) => "access_denied",
        AssistantError::Capture(_) => "capture_error",
        AssistantError::Llm(LlmError::Config(_)) => "llm_not_configured",
        AssistantError::Llm(_) => "llm_error",
        AssistantError::Operation(op) => return ToolError(op.to_json()),
        AssistantError::Store(_) => "storage_error",
    };
    ToolError(json!({"error": kind, "message": e.to_string()}))
}

fn tool_ask(ws: &Workspace, a: &Args, _max_tokens: usize) -> Result<Answer, ToolError> {
    let graph = required(a, "graph")?;
    let session = required(a, "session")?;
    let request = required(a, "request")?;
    let mode = match text(a, "mode")?.unwrap_or("auto") {
        "auto" => None,
        m => Some(Mode::parse(m).map_err(|e| ToolError::invalid(e.to_string()))?),
    };
    let max_iterations = match a.get("max_iterations") {
        None | Some(Value::Null) => assistant::MAX_ITERATIONS,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => n as usize,
            _ => {
                return Err(ToolError::invalid(format!(
                    "'max_iterations' must be a positive integer, got {v}"
                )))
            }
        },
    };
    let config = LlmConfig::load(ws.root(), &|k| std::env::var(k).ok())
        .map_err(|e| error(AssistantError::Llm(e)))?;
    let client = ChatClient::new(config);
    let started = Instant::now();
    let _lock = loop {
        match WriteLock::try_acquire(ws.store().location()) {
            Ok(l) => break l,
            Err(StoreError::Busy(_)) if started.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => {
                return Err(ToolError(
                    json!({"error": "index_busy", "message": e.to_string()}),
                ))
            }
        }
    };
    let opts = AskOptions {
        mode,
        max_iterations,
        user: text(a, "user")?.map(str::to_string),
        ..AskOptions::default()
    };
    let mut updates = Vec::new();
    let outcome = assistant::ask(
        ws.store(),
        graph,
        session,
        &client,
        request,
        &opts,
        &mut |v| {
            // The reports are in the outcome; the views are listed apart.
            if v.get("event").is_none() {
                updates.push(v.clone());
            }
        },
    )
    .map_err(error)?;
    Ok(Answer::Json {
        value: json!({"outcome": outcome, "updates": updates}),
        list: Some("updates"),
    })
}
