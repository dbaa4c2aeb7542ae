//! The MCP tools: a registry of name, description, JSON schema and handler.
//!
//! Protocol-free on purpose: [`super::mcp`] only lists [`super::registry::all`] and
//! routes calls to [`call`], so tests call tools in-process exactly as an
//! agent would. Adding a tool is one [`ToolSpec`] entry.
//!
//! Every answer is bounded by the `max_tokens` argument (default
//! [`DEFAULT_MAX_TOKENS`]), counted with the real tokenizer: documents are
//! built within it (the context budget never exceeds it), lists are cut to
//! the longest prefix that fits and say so (`truncated`, `returned`,
//! `total`). Failures are tool errors carrying seed 004's error objects
//! (`entity_not_found` with suggestions, `context_size_exceeded`, …) or
//! `invalid_arguments`, never a crash.

use serde_json::{json, Map, Value};

use super::{ServeError, Workspace};
use crate::support::tokens::TokenCounter;

/// Default bound of every answer, in tokens (o200k).
pub const DEFAULT_MAX_TOKENS: usize = 8_000;
/// Smallest bound accepted (an error object must fit).
pub const MIN_MAX_TOKENS: usize = 64;

pub type Args = Map<String, Value>;

/// What a handler returns before the token bound is applied.
pub enum Answer {
    /// A document already built within the bound.
    Text(String),
    /// A JSON object whose `list` field may be cut to fit.
    Json {
        value: Value,
        list: Option<&'static str>,
    },
}

/// A tool error: the error object the agent sees.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError(pub Value);

impl ToolError {
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError(json!({"error": "invalid_arguments", "message": message.into()}))
    }
}

impl From<ServeError> for ToolError {
    fn from(e: ServeError) -> Self {
        match e {
            ServeError::Context(c) => ToolError(c.to_json()),
            ServeError::BadRequest(m) => ToolError::invalid(m),
            e @ ServeError::OutsideWorkspace { .. } => ToolError::invalid(e.to_string()),
            e => ToolError(json!({"error": "storage_error", "message": e.to_string()})),
        }
    }
}

impl From<crate::store::StoreError> for ToolError {
    fn from(e: crate::store::StoreError) -> Self {
        ServeError::from(e).into()
    }
}

/// A tool's definition.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON schema `properties` of the arguments (`max_tokens` is added).
    pub properties: fn() -> Value,
    /// Required argument names.
    pub required: &'static [&'static str],
    pub run: fn(&Workspace, &Args, usize) -> Result<Answer, ToolError>,
}

impl ToolSpec {
    /// The full JSON schema of the arguments.
    pub fn input_schema(&self) -> Map<String, Value> {
        let mut props = match (self.properties)() {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        props.insert(
            "max_tokens".into(),
            json!({
                "type": "integer", "minimum": MIN_MAX_TOKENS, "default": DEFAULT_MAX_TOKENS,
                "description": "Upper bound of the answer in tokens (o200k tokenizer); lists are cut to fit and say so."
            }),
        );
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(props));
        schema.insert("required".into(), json!(self.required));
        schema.insert("additionalProperties".into(), json!(false));
        schema
    }
}

/// A tool's answer as the agent receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    pub text: String,
    pub is_error: bool,
}

/// Code-graph tools whose JSON answers carry `stale_files` when the index
/// is behind the files on disk.
const CODE_TOOLS_ANSWERING_JSON: [&str; 5] = [
    "blast_radius",
    "callers",
    "callees",
    "search_entities",
    "cycles",
];

/// Run tool `name`; `None` when there is no such tool.
pub fn call(ws: &Workspace, tools: &[ToolSpec], name: &str, args: &Args) -> Option<ToolReply> {
    let spec = tools.iter().find(|t| t.name == name)?;
    let counter = ws.counter();
    let reply = (|| {
        let max_tokens = match args.get("max_tokens") {
            None | Some(Value::Null) => DEFAULT_MAX_TOKENS,
            Some(v) => match v.as_u64() {
                Some(n) if n as usize >= MIN_MAX_TOKENS => n as usize,
                _ => {
                    return Err(ToolError::invalid(format!(
                        "max_tokens must be an integer of at least {MIN_MAX_TOKENS}, got {v}"
                    )))
                }
            },
        };
        let props = (spec.properties)();
        for k in args.keys() {
            if k != "max_tokens" && props.get(k).is_none() {
                return Err(ToolError::invalid(format!(
                    "unknown argument '{k}' for tool {}",
                    spec.name
                )));
            }
        }
        for r in spec.required {
            if !args.contains_key(*r) {
                return Err(ToolError::invalid(format!(
                    "missing required argument '{r}' for tool {}",
                    spec.name
                )));
            }
        }
        // Answers over the code graph come from an index current for the
        // files on disk, or name the files it is behind on (`context`
        // brings it current itself and names them in its document).
        let answer = if CODE_TOOLS_ANSWERING_JSON.contains(&spec.name) {
            let stale = ws.ensure_current()?;
            match (spec.run)(ws, args, max_tokens)? {
                Answer::Json { mut value, list } if !stale.is_empty() => {
                    if let Some(obj) = value.as_object_mut() {
                        obj.insert("stale_files".into(), json!(stale));
                    }
                    Answer::Json { value, list }
                }
                other => other,
            }
        } else {
            (spec.run)(ws, args, max_tokens)?
        };
        bound(counter, answer, max_tokens)
    })();
    Some(match reply {
        Ok(text) => ToolReply {
            text,
            is_error: false,
        },
        Err(ToolError(v)) => ToolReply {
            text: v.to_string(),
            is_error: true,
        },
    })
}

/// Apply the token bound to an answer.
pub fn bound(
    counter: &TokenCounter,
    answer: Answer,
    max_tokens: usize,
) -> Result<String, ToolError> {
    match answer {
        Answer::Text(t) => {
            if counter.count_exact(&t) <= max_tokens {
                Ok(t)
            } else {
                Err(too_large(counter.count_exact(&t), max_tokens))
            }
        }
        Answer::Json { value, list } => {
            let full = value.to_string();
            let n_full = counter.count_exact(&full);
            if n_full <= max_tokens {
                return Ok(full);
            }
            let Some(field) = list else {
                return Err(too_large(n_full, max_tokens));
            };
            let items = value
                .get(field)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let total = items.len();
            let render = |k: usize| {
                let mut v = value.clone();
                if let Some(obj) = v.as_object_mut() {
                    obj.insert(field.into(), Value::Array(items[..k].to_vec()));
                    obj.insert("truncated".into(), json!(true));
                    obj.insert("returned".into(), json!(k));
                    obj.insert("total".into(), json!(total));
                }
                v.to_string()
            };
            // Largest k whose rendering fits (counts grow with k).
            let (mut lo, mut hi) = (0usize, total);
            if counter.count_exact(&render(0)) > max_tokens {
                return Err(too_large(n_full, max_tokens));
            }
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if counter.count_exact(&render(mid)) <= max_tokens {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            Ok(render(lo))
        }
    }
}

pub(super) fn too_large(size: usize, max_tokens: usize) -> ToolError {
    ToolError(json!({
        "error": "context_size_exceeded",
        "message": format!("The answer needs {size} tokens, over max_tokens {max_tokens}"),
        "attempted_size": size,
        "size_limit": max_tokens,
        "suggestion": "Raise max_tokens, or narrow the request (fewer hops, a more specific query)",
    }))
}

pub(super) fn opt_str<'a>(a: &'a Args, k: &str) -> Result<Option<&'a str>, ToolError> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(v) => Err(ToolError::invalid(format!(
            "'{k}' must be a string, got {v}"
        ))),
    }
}

pub(super) fn req_str<'a>(a: &'a Args, k: &str) -> Result<&'a str, ToolError> {
    match opt_str(a, k)? {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(ToolError::invalid(format!(
            "'{k}' is required and must be a non-empty string"
        ))),
    }
}

pub(super) fn opt_uint(a: &Args, k: &str, max: u64) -> Result<Option<u64>, ToolError> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n <= max => Ok(Some(n)),
            _ => Err(ToolError::invalid(format!(
                "'{k}' must be an integer from 0 to {max}, got {v}"
            ))),
        },
    }
}
