//! MCP tools over ontology graphs and JSON Canvas files: `capture` (seed
//! 000's canvas context of an ontology graph), `apply_operations` (seed 001:
//! an LLM's operations applied atomically) and `canvas_context` (seed 002:
//! the conversation thread up to a canvas node).
//!
//! They use the engines of [`crate::capture`], [`crate::operations`] and
//! [`crate::canvas`] as the CLI does; this file only maps arguments, takes
//! the write lock where the engine writes, and fits answers to
//! `max_tokens`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::tools::{Answer, Args, ToolError, ToolSpec};
use super::Workspace;
use crate::canvas::{self, Canvas, CanvasError};
use crate::capture::{self, CaptureError, CaptureOptions, Mode};
use crate::operations::{self, ApplyOptions, OperationError};
use crate::store::lock::WriteLock;
use crate::store::StoreError;

/// How long `apply_operations` waits for another writer.
const LOCK_WAIT: Duration = Duration::from_secs(30);

pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "capture",
            description: "Context of an ontology graph as a canvas session shows it, as \
                Format E with a metadata header: mode full, selected, visible, changed (since this \
                session's last capture) or minimal (counts only). When the answer would exceed \
                max_tokens and max_nodes is not given, the most relevant nodes that fit are kept.",
            properties: || {
                json!({
                    "graph": {"type": "string", "description": "Ontology graph name"},
                    "session": {"type": "string", "description": "Canvas session id (graphctx session set)"},
                    "mode": {"type": "string", "enum": ["full", "selected", "visible", "changed", "minimal"], "default": "full"},
                    "user": {"type": "string", "description": "Member name, for sessions with members"},
                    "max_nodes": {"type": "integer", "minimum": 1},
                    "include_positions": {"type": "boolean", "default": false},
                    "include_viewport": {"type": "boolean", "default": false},
                    "include_metadata": {"type": "boolean", "default": true}
                })
            },
            required: &["graph", "session"],
            run: tool_capture,
        },
        ToolSpec {
            name: "apply_operations",
            description: "Apply an LLM response's operations (create, update, delete, \
                create-relationship, delete-relationship with tempIds, semantic IDs and dependsOn) \
                to an ontology graph in one transaction: all or nothing. Returns the \
                summary (tempId map, created semantic IDs, counts) and the per-chunk view updates.",
            properties: || {
                json!({
                    "graph": {"type": "string", "description": "Ontology graph name"},
                    "response": {"type": ["object", "string"], "description": "The LLM response: {text?, operations: [...]}, as an object or as JSON text"}
                })
            },
            required: &["graph", "response"],
            run: tool_apply,
        },
        ToolSpec {
            name: "canvas_context",
            description: "The conversation context of a JSON Canvas node: the parent \
                chain up from the node with horizontal context, siblings excluded, roles from \
                frontmatter, as chat messages (system first, the node last).",
            properties: || {
                json!({
                    "canvas": {"type": "string", "description": "Path of the .canvas file inside the workspace"},
                    "node": {"type": "string", "description": "Id of the target node"},
                    "vault": {"type": "string", "description": "Vault root for file nodes (default: nearest directory with .obsidian, else the canvas's directory; always inside the workspace)"}
                })
            },
            required: &["canvas", "node"],
            run: tool_canvas,
        },
    ]
}

fn str_arg<'a>(a: &'a Args, k: &str) -> Result<Option<&'a str>, ToolError> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s)),
        Some(v) => Err(ToolError::invalid(format!(
            "'{k}' must be a non-empty string, got {v}"
        ))),
    }
}

fn required<'a>(a: &'a Args, k: &str) -> Result<&'a str, ToolError> {
    str_arg(a, k)?.ok_or_else(|| ToolError::invalid(format!("'{k}' is required")))
}

fn bool_arg(a: &Args, k: &str, default: bool) -> Result<bool, ToolError> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(ToolError::invalid(format!(
            "'{k}' must be true or false, got {v}"
        ))),
    }
}

fn capture_error(e: CaptureError) -> ToolError {
    let kind = match &e {
        CaptureError::NoSession { .. } => "session_not_found",
        CaptureError::NoGraph(_) => "graph_not_found",
        CaptureError::AccessDenied { .. } | CaptureError::UserRequired { .. } => "access_denied",
        CaptureError::Invalid(_) => "invalid_arguments",
        CaptureError::Ontology(_) => "invalid_graph",
        CaptureError::Store(_) => "storage_error",
    };
    ToolError(json!({"error": kind, "message": e.to_string()}))
}

fn too_large(size: usize, max_tokens: usize, suggestion: &str) -> ToolError {
    ToolError(json!({
        "error": "context_size_exceeded",
        "message": format!("The answer needs {size} tokens, over max_tokens {max_tokens}"),
        "attempted_size": size,
        "size_limit": max_tokens,
        "suggestion": suggestion,
    }))
}

fn tool_capture(ws: &Workspace, a: &Args, max_tokens: usize) -> Result<Answer, ToolError> {
    let graph = required(a, "graph")?;
    let session = required(a, "session")?;
    let mode = Mode::parse(str_arg(a, "mode")?.unwrap_or("full")).map_err(capture_error)?;
    let max_nodes = match a.get("max_nodes") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n as usize),
            _ => {
                return Err(ToolError::invalid(format!(
                    "'max_nodes' must be a positive integer, got {v}"
                )))
            }
        },
    };
    let mut opts = CaptureOptions {
        mode,
        include_metadata: bool_arg(a, "include_metadata", true)?,
        include_positions: bool_arg(a, "include_positions", false)?,
        include_viewport: bool_arg(a, "include_viewport", false)?,
        max_nodes,
        ..CaptureOptions::default()
    };
    let user = str_arg(a, "user")?;
    let counter = ws.counter();
    let run = |opts: &CaptureOptions| {
        capture::capture(ws.store(), graph, session, user, opts).map_err(capture_error)
    };
    let r = run(&opts)?;
    let n = counter.count_exact(&r.format_e);
    if n <= max_tokens {
        return Ok(Answer::Text(r.format_e));
    }
    let suggestion = "Pass max_nodes, use mode minimal or selected, or raise max_tokens";
    if max_nodes.is_some() || mode == Mode::Minimal || mode == Mode::Changed {
        return Err(too_large(n, max_tokens, suggestion));
    }
    // Keep the most relevant nodes that fit (the header says it was cut).
    let (mut lo, mut hi) = (0usize, r.metadata.total_nodes.max(1));
    let mut best = None;
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        opts.max_nodes = Some(mid);
        let c = run(&opts)?;
        if counter.count_exact(&c.format_e) <= max_tokens {
            lo = mid;
            best = Some(c.format_e);
        } else {
            hi = mid - 1;
        }
    }
    best.map(Answer::Text)
        .ok_or_else(|| too_large(n, max_tokens, suggestion))
}

fn tool_apply(ws: &Workspace, a: &Args, _max_tokens: usize) -> Result<Answer, ToolError> {
    let graph = required(a, "graph")?;
    let text = match a.get("response") {
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Object(_)) => v.to_string(),
        _ => {
            return Err(ToolError::invalid(
                "'response' must be an object or a JSON string",
            ))
        }
    };
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
    let mut updates = Vec::new();
    let summary = operations::apply_json(
        ws.store(),
        graph,
        &text,
        &ApplyOptions::default(),
        &mut |v| updates.push(v.clone()),
    )
    .map_err(|e: OperationError| ToolError(e.to_json()))?;
    Ok(Answer::Json {
        value: json!({"summary": summary, "updates": updates}),
        list: Some("updates"),
    })
}

fn tool_canvas(ws: &Workspace, a: &Args, max_tokens: usize) -> Result<Answer, ToolError> {
    let rel = ws.relative(Path::new(required(a, "canvas")?))?;
    let node = required(a, "node")?;
    let path = ws.absolute(&rel);
    let vault = match str_arg(a, "vault")? {
        Some(v) => ws.absolute(&ws.relative(Path::new(v))?),
        None => {
            let v = canvas::default_vault_root(&path);
            if v.starts_with(ws.root()) {
                v
            } else {
                ws.root().to_path_buf()
            }
        }
    };
    let canvas_error = |e: CanvasError| {
        let kind = match &e {
            CanvasError::NoSuchNode { .. } => "node_not_found",
            CanvasError::Read { .. } => "canvas_not_found",
            CanvasError::Json { .. } | CanvasError::Format { .. } => "invalid_canvas",
            _ => "canvas_error",
        };
        ToolError(json!({"error": kind, "message": e.to_string()}))
    };
    let c = Canvas::load(&path).map_err(canvas_error)?;
    let w = canvas::walk(&c, node, Some(&vault)).map_err(canvas_error)?;
    let counter = ws.counter();
    let mut messages: Vec<Value> = w
        .messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
        .collect();
    let mut value = json!({
        "target": w.target,
        "messages": messages,
        "included": w.included,
        "excluded": w.excluded,
        "warnings": w.warnings,
    });
    // Over the bound: drop the per-node report, then the oldest messages
    // after the system prompt; the target's message always stays.
    let fits = |v: &Value| counter.count_exact(&v.to_string()) <= max_tokens;
    if !fits(&value) {
        value["included"] = json!(w.included.len());
        value["excluded"] = json!(w.excluded.len());
        let total = messages.len();
        let first = usize::from(
            w.messages
                .first()
                .is_some_and(|m| m.role.as_str() == "system"),
        );
        while !fits(&value) && messages.len() > first + 1 {
            messages.remove(first);
            value["messages"] = Value::Array(messages.clone());
            value["truncated"] = json!(true);
            value["messages_total"] = json!(total);
        }
        if !fits(&value) {
            return Err(too_large(
                counter.count_exact(&value.to_string()),
                max_tokens,
                "Raise max_tokens: the target node alone does not fit",
            ));
        }
    }
    Ok(Answer::Json { value, list: None })
}
