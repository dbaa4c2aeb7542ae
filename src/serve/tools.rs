//! The MCP tools: a registry of name, description, JSON schema and handler.
//!
//! Protocol-free on purpose: [`super::mcp`] only lists [`registry`] and
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

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::nav::parse_format;
use super::{ServeError, Workspace};
use crate::analyse::blast::{self, MAX_HOPS};
use crate::analyse::cycles;
use crate::analyse::select::BaseSpec;
use crate::emit::tokens::TokenCounter;
use crate::graph;

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

/// Every tool graphctx serves.
pub fn registry() -> Vec<ToolSpec> {
    let mut tools = code_tools();
    tools.extend(super::graph_tools::specs());
    tools.extend(super::ask_tool::specs());
    tools
}

/// The tools over the code graph.
fn code_tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "context",
            description: "Context an LLM needs to change some code: the base entities (an ISGL1 key, \
                every entity of a file, or every entity with a name), their blast radius within `hops`, \
                ranked by relevance and cut to the token budget. Format E (compact text, default) or \
                CodeGraphContext.json.",
            properties: || {
                json!({
                    "key": {"type": "string", "description": "ISGL1 key `{file}-{module}-{item}` of a base entity"},
                    "keys": {"type": "array", "items": {"type": "string"}, "description": "Several base keys"},
                    "file": {"type": "string", "description": "Take every entity of this repository-relative file as base"},
                    "name": {"type": "string", "description": "Take every entity with this name as base"},
                    "hops": {"type": "integer", "minimum": 0, "maximum": MAX_HOPS, "default": 2},
                    "budget": {"type": "integer", "minimum": 1, "description": "Token budget of the document (default and cap: max_tokens)"},
                    "format": {"type": "string", "enum": ["e", "json"], "default": "e"}
                })
            },
            required: &[],
            run: tool_context,
        },
        ToolSpec {
            name: "blast_radius",
            description: "Entities within `hops` of an entity, following dependencies in both \
                directions, with distance and the relationships they were reached through.",
            properties: || {
                json!({
                    "key": {"type": "string", "description": "ISGL1 key"},
                    "hops": {"type": "integer", "minimum": 0, "maximum": MAX_HOPS, "default": 2}
                })
            },
            required: &["key"],
            run: tool_blast,
        },
        ToolSpec {
            name: "callers",
            description: "Functions and methods that call an entity, with file, line and call count.",
            properties: || json!({"key": {"type": "string", "description": "ISGL1 key"}}),
            required: &["key"],
            run: |ws, a, _| tool_calls(ws, a, true),
        },
        ToolSpec {
            name: "callees",
            description: "Functions, methods and macros an entity calls, with file, line and call count.",
            properties: || json!({"key": {"type": "string", "description": "ISGL1 key"}}),
            required: &["key"],
            run: |ws, a, _| tool_calls(ws, a, false),
        },
        ToolSpec {
            name: "search_entities",
            description: "Find entities by name (fuzzy: exact, prefix, substring, then subsequence \
                matches), optionally of one kind or in one file. Returns their ISGL1 keys.",
            properties: || {
                json!({
                    "query": {"type": "string", "description": "Name or part of it"},
                    "kind": {"type": "string", "enum": ["fn", "method", "struct", "enum", "union", "trait", "impl", "mod", "const", "static", "type", "macro"]},
                    "file": {"type": "string", "description": "Repository-relative file"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}
                })
            },
            required: &["query"],
            run: tool_search,
        },
        ToolSpec {
            name: "cycles",
            description: "Dependency cycles of the code graph: strongly connected components, \
                self-loops (recursion) and module cycles, each with a concrete cycle path.",
            properties: || json!({}),
            required: &[],
            run: tool_cycles,
        },
    ]
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

fn too_large(size: usize, max_tokens: usize) -> ToolError {
    ToolError(json!({
        "error": "context_size_exceeded",
        "message": format!("The answer needs {size} tokens, over max_tokens {max_tokens}"),
        "attempted_size": size,
        "size_limit": max_tokens,
        "suggestion": "Raise max_tokens, or narrow the request (fewer hops, a more specific query)",
    }))
}

fn opt_str<'a>(a: &'a Args, k: &str) -> Result<Option<&'a str>, ToolError> {
    match a.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(v) => Err(ToolError::invalid(format!(
            "'{k}' must be a string, got {v}"
        ))),
    }
}

fn req_str<'a>(a: &'a Args, k: &str) -> Result<&'a str, ToolError> {
    match opt_str(a, k)? {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(ToolError::invalid(format!(
            "'{k}' is required and must be a non-empty string"
        ))),
    }
}

fn opt_uint(a: &Args, k: &str, max: u64) -> Result<Option<u64>, ToolError> {
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

fn require_key(ws: &Workspace, key: &str) -> Result<(), ToolError> {
    if graph::entity_exists(ws.store(), ws.graph(), key)? {
        Ok(())
    } else {
        Err(ws.not_found(key).into())
    }
}

fn tool_context(ws: &Workspace, a: &Args, max_tokens: usize) -> Result<Answer, ToolError> {
    let keys: Option<Vec<String>> = match a.get("keys") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| ToolError::invalid("'keys' must be an array of strings"))
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(ToolError::invalid("'keys' must be an array of strings")),
    };
    let key = opt_str(a, "key")?;
    let file = opt_str(a, "file")?;
    let name = opt_str(a, "name")?;
    let base = match (key, keys, file, name) {
        (Some(k), None, None, None) => BaseSpec::Keys(vec![k.to_string()]),
        (None, Some(ks), None, None) if !ks.is_empty() => BaseSpec::Keys(ks),
        (None, None, Some(f), None) => BaseSpec::File(ws.relative(std::path::Path::new(f))?),
        (None, None, None, Some(n)) => BaseSpec::Name(n.to_string()),
        _ => {
            return Err(ToolError::invalid(
                "give exactly one of 'key', 'keys' (non-empty), 'file' or 'name'",
            ))
        }
    };
    let hops = opt_uint(a, "hops", MAX_HOPS as u64)?.unwrap_or(2) as u32;
    let budget = match a.get("budget") {
        None | Some(Value::Null) => max_tokens,
        Some(v) => match v.as_u64() {
            Some(n) if n > 0 => (n as usize).min(max_tokens),
            _ => {
                return Err(ToolError::invalid(format!(
                    "'budget' must be a positive integer, got {v}"
                )))
            }
        },
    };
    let format = parse_format(opt_str(a, "format")?.unwrap_or("e"))?;
    let out = ws.context(base, hops, budget, format)?;
    Ok(Answer::Text(out.text))
}

fn tool_blast(ws: &Workspace, a: &Args, _: usize) -> Result<Answer, ToolError> {
    let key = req_str(a, "key")?;
    let hops = opt_uint(a, "hops", MAX_HOPS as u64)?.unwrap_or(2) as u32;
    require_key(ws, key)?;
    let reached = blast::blast_radius(ws.store(), ws.graph(), &[key.to_string()], hops)?;
    let others: Vec<&blast::Reached> = reached.iter().filter(|r| r.distance > 0).collect();
    let rows = ws.entities_by_keys(&others.iter().map(|r| r.key.clone()).collect::<Vec<_>>())?;
    let file_of: std::collections::HashMap<&str, &str> = rows
        .iter()
        .map(|e| (e.key.as_str(), e.file.as_str()))
        .collect();
    let files: BTreeSet<&str> = others
        .iter()
        .filter_map(|r| file_of.get(r.key.as_str()).copied())
        .collect();
    let (dependents, dependent_files) = ws.dependents(key, hops)?;
    let results: Vec<Value> = others
        .iter()
        .map(|r| {
            json!({
                "key": r.key,
                "distance": r.distance,
                "direction": r.directions(),
                "via": r.rels(),
            })
        })
        .collect();
    Ok(Answer::Json {
        value: json!({
            "key": key,
            "hops": hops,
            "summary": format!(
                "{} entities within {hops} hops in {} files; {dependents} of them depend on it, in {dependent_files} files",
                others.len(), files.len()
            ),
            "entities": others.len(),
            "files": files.len(),
            "dependents": dependents,
            "results": results,
        }),
        list: Some("results"),
    })
}

fn tool_calls(ws: &Workspace, a: &Args, callers: bool) -> Result<Answer, ToolError> {
    let key = req_str(a, "key")?;
    require_key(ws, key)?;
    let links = if callers {
        blast::callers(ws.store(), ws.graph(), key)?
    } else {
        blast::callees(ws.store(), ws.graph(), key)?
    };
    let rows = ws.entities_by_keys(&links.iter().map(|l| l.key.clone()).collect::<Vec<_>>())?;
    let at: std::collections::HashMap<&str, (&str, i64)> = rows
        .iter()
        .map(|e| (e.key.as_str(), (e.file.as_str(), e.start_line)))
        .collect();
    let list: Vec<Value> = links
        .iter()
        .map(|l| {
            let (file, line) = at.get(l.key.as_str()).copied().unwrap_or(("", 0));
            json!({"key": l.key, "file": file, "line": line, "calls": l.count})
        })
        .collect();
    let field = if callers { "callers" } else { "callees" };
    let mut value = Map::new();
    value.insert("key".into(), json!(key));
    value.insert("count".into(), json!(list.len()));
    value.insert(field.into(), Value::Array(list));
    Ok(Answer::Json {
        value: Value::Object(value),
        list: Some(field),
    })
}

fn tool_search(ws: &Workspace, a: &Args, _: usize) -> Result<Answer, ToolError> {
    let query = opt_str(a, "query")?.ok_or_else(|| ToolError::invalid("'query' is required"))?;
    let kind = opt_str(a, "kind")?;
    let file = match opt_str(a, "file")? {
        Some(f) => Some(ws.relative(std::path::Path::new(f))?),
        None => None,
    };
    let limit = opt_uint(a, "limit", 500)?.unwrap_or(50) as usize;
    let table = ws.all_symbols()?;
    let q: Vec<char> = query.to_lowercase().chars().collect();
    let mut scored: Vec<(u32, &graph::EntityRow)> = table
        .iter()
        .filter(|e| kind.is_none_or(|k| e.kind == k))
        .filter(|e| file.as_deref().is_none_or(|f| e.file == f))
        .filter_map(|e| super::nav::fuzzy_score(&q, &e.name).map(|s| (s, e)))
        .collect();
    scored.sort_by(|x, y| {
        x.0.cmp(&y.0)
            .then_with(|| x.1.name.len().cmp(&y.1.name.len()))
            .then_with(|| x.1.key.cmp(&y.1.key))
    });
    let matched = scored.len();
    let results: Vec<Value> = scored
        .into_iter()
        .take(limit)
        .map(|(_, e)| {
            json!({"key": e.key, "kind": e.kind, "name": e.name, "file": e.file, "line": e.start_line})
        })
        .collect();
    Ok(Answer::Json {
        value: json!({"query": query, "matched": matched, "results": results}),
        list: Some("results"),
    })
}

fn tool_cycles(ws: &Workspace, _: &Args, _: usize) -> Result<Answer, ToolError> {
    let found = cycles::find_cycles(ws.store(), ws.graph())?;
    let list: Vec<Value> = found
        .iter()
        .map(|c| {
            json!({
                "kind": c.kind,
                "members": c.members.len(),
                "cycle_path": c.cycle_path,
                "rels": c.rels,
            })
        })
        .collect();
    Ok(Answer::Json {
        value: json!({"count": list.len(), "cycles": list}),
        list: Some("cycles"),
    })
}
