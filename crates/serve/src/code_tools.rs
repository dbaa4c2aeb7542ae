//! The MCP tools over the code graph: context, blast radius, callers and
//! callees, entity search, cycles. Each answers from an index current for
//! the files on disk ([`super::tools::call`] brings it current first).

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::nav::parse_format;
use super::tools::{opt_str, opt_uint, req_str, Answer, Args, ToolError, ToolSpec};
use super::{ServeError, Workspace};
use crate::analyse::blast::{self, MAX_HOPS};
use crate::analyse::cycles;
use crate::analyse::relevance::Strategy;
use crate::analyse::select::BaseSpec;
use crate::emit::diagram::{self, DiagramFormat, DiagramGraph};
use crate::graph;
use crate::model::EntityKind;
use crate::search::{self, SearchError};

/// The tools over the code graph.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "context",
            description: "Context an LLM needs to change some code: the base entities (an ISGL1 key, \
                every entity of a file, every entity with a name, or the best hits of a free-text \
                `query` such as a task or bug report), their blast radius within `hops`, \
                ranked by relevance and cut to the token budget. Format E (compact text, default), \
                CodeGraphContext.json, or `mermaid`: the selection as a Mermaid flowchart to show \
                in chat (base entities outlined, edges labelled by relationship, cut to the budget).",
            properties: || {
                json!({
                    "key": {"type": "string", "description": "ISGL1 key `{file}-{module}-{item}` of a base entity"},
                    "keys": {"type": "array", "items": {"type": "string"}, "description": "Several base keys"},
                    "file": {"type": "string", "description": "Take every entity of this repository-relative file as base"},
                    "name": {"type": "string", "description": "Take every entity with this name as base"},
                    "query": {"type": "string", "description": "Take the best hits of this free-text query (a task, a bug report) as base"},
                    "hops": {"type": "integer", "minimum": 0, "maximum": MAX_HOPS, "default": 2},
                    "budget": {"type": "integer", "minimum": 1, "description": "Token budget of the document (default and cap: max_tokens)"},
                    "format": {"type": "string", "enum": ["e", "json", "mermaid"], "default": "e", "description": "e: Format E; json: CodeGraphContext.json; mermaid: a Mermaid flowchart of the selection"}
                })
            },
            required: &[],
            run: tool_context,
        },
        ToolSpec {
            name: "blast_radius",
            description: "Entities within `hops` of an entity, following dependencies in both \
                directions, with distance and the relationships they were reached through; \
                `format: \"mermaid\"` draws them as a Mermaid flowchart instead.",
            properties: || {
                json!({
                    "key": {"type": "string", "description": "ISGL1 key"},
                    "hops": {"type": "integer", "minimum": 0, "maximum": MAX_HOPS, "default": 2},
                    "format": {"type": "string", "enum": ["json", "mermaid"], "default": "json", "description": "json: the entities as a list; mermaid: a Mermaid flowchart (cut to max_tokens)"}
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
            description: "Find entities, optionally of one kind or in one file. A query of several \
                words (a task, a bug report, a commit message) is searched as text: entities ranked \
                by the words of their names, docs, signatures and paths, spread over the graph and \
                the repository's co-change history, each with its signature, score and why it \
                ranked. A single word is matched against names (fuzzy: exact, prefix, substring, \
                then subsequence); a plain lowercase word that no name contains is searched as \
                text instead (mode \"text\") when the text finds it. Returns ISGL1 keys.",
            properties: || {
                json!({
                    "query": {"type": "string", "description": "A name or part of it, or a sentence describing the change"},
                    "kind": {"type": "string", "enum": kind_names(), "description": "An entity kind as stored, or its Format E abbreviation (fn, mod, type)"},
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
    let query = opt_str(a, "query")?;
    let base = match (key, keys, file, name, query) {
        (Some(k), None, None, None, None) => BaseSpec::Keys(vec![k.to_string()]),
        (None, Some(ks), None, None, None) if !ks.is_empty() => BaseSpec::Keys(ks),
        (None, None, Some(f), None, None) => BaseSpec::File(ws.relative(std::path::Path::new(f))?),
        (None, None, None, Some(n), None) => BaseSpec::Name(n.to_string()),
        (None, None, None, None, Some(q)) => {
            let keys = search::query_base(
                ws.store(),
                ws.graph(),
                q,
                Some(ws.root()),
                Some(ws.held_lists()),
            )
            .map_err(search_error)?;
            if keys.is_empty() {
                return Err(ToolError::invalid(
                    "no entity matches the query; try other words",
                ));
            }
            BaseSpec::Ranked(keys)
        }
        _ => {
            return Err(ToolError::invalid(
                "give exactly one of 'key', 'keys' (non-empty), 'file', 'name' or 'query'",
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
    let format = opt_str(a, "format")?.unwrap_or("e");
    if format.eq_ignore_ascii_case(MERMAID) {
        let g = diagram::code::context_graph(
            ws.store(),
            ws.graph(),
            &base,
            hops,
            Strategy::Blended,
            budget,
        )
        .map_err(ServeError::from)?;
        return mermaid_answer(ws, &g, budget);
    }
    let out = ws.context(base, hops, budget, parse_format(format)?)?;
    Ok(Answer::Text(out.text))
}

/// The `format` value that asks for a Mermaid flowchart.
const MERMAID: &str = "mermaid";

/// `g` as Mermaid text within `budget` tokens.
fn mermaid_answer(ws: &Workspace, g: &DiagramGraph, budget: usize) -> Result<Answer, ToolError> {
    let fitted = diagram::fit_to_budget(g, DiagramFormat::Mermaid, budget, ws.counter())
        .map_err(|e| ToolError::invalid(e.to_string()))?;
    Ok(Answer::Text(fitted.text))
}

fn tool_blast(ws: &Workspace, a: &Args, max_tokens: usize) -> Result<Answer, ToolError> {
    let key = req_str(a, "key")?;
    let hops = opt_uint(a, "hops", MAX_HOPS as u64)?.unwrap_or(2) as u32;
    let mermaid = match opt_str(a, "format")?.unwrap_or("json") {
        f if f.eq_ignore_ascii_case("json") => false,
        f if f.eq_ignore_ascii_case(MERMAID) => true,
        other => {
            return Err(ToolError::invalid(format!(
                "unknown format '{other}' (expected \"json\" or \"mermaid\")"
            )))
        }
    };
    require_key(ws, key)?;
    let reached = blast::blast_radius(ws.store(), ws.graph(), &[key.to_string()], hops)?;
    if mermaid {
        let g = diagram::code::blast_graph(
            ws.store(),
            ws.graph(),
            key,
            hops,
            &reached,
            diagram::code::max_nodes(max_tokens),
            max_tokens,
        )?;
        return mermaid_answer(ws, &g, max_tokens);
    }
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

/// The kinds `search_entities` filters by: every stored kind, and the
/// Format E abbreviations of those that have a shorter one.
fn kind_names() -> Vec<&'static str> {
    let stored = EntityKind::ALL.into_iter().map(EntityKind::as_str);
    let abbreviated = stored
        .clone()
        .map(crate::emit::format_e::kind_abbrev)
        .filter(|a| EntityKind::parse(a).is_none());
    stored.chain(abbreviated).collect()
}

/// A kind as stored, given as stored or abbreviated; an unknown one is an
/// invalid argument naming the kinds there are.
fn stored_kind(kind: &str) -> Result<&'static str, ToolError> {
    let full = crate::emit::format_e::kind_from_abbrev(kind);
    EntityKind::parse(full)
        .map(EntityKind::as_str)
        .ok_or_else(|| {
            ToolError::invalid(format!(
                "unknown kind '{kind}': one of {}",
                kind_names().join(", ")
            ))
        })
}

fn tool_search(ws: &Workspace, a: &Args, _: usize) -> Result<Answer, ToolError> {
    let query = opt_str(a, "query")?.ok_or_else(|| ToolError::invalid("'query' is required"))?;
    let kind = opt_str(a, "kind")?.map(stored_kind).transpose()?;
    let file = match opt_str(a, "file")? {
        Some(f) => Some(ws.relative(std::path::Path::new(f))?),
        None => None,
    };
    let limit = opt_uint(a, "limit", 500)?.unwrap_or(50) as usize;
    if query.split_whitespace().nth(1).is_some() {
        return text_search(ws, query, kind, file, limit);
    }
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
    // A single word no name contains (only scattered-letter matches, or
    // none) is a word of the domain — `retry`, `timeout` — rather than a
    // name half remembered: what the code says about it answers better.
    if scored.first().is_none_or(|(s, _)| *s > NAME_PART) && is_plain_word(query) {
        if let Ok(text) = text_search(ws, query, kind, file.clone(), limit) {
            if let Answer::Json { value, .. } = &text {
                if value["matched"].as_u64().unwrap_or(0) > 0 {
                    return Ok(text);
                }
            }
        }
    }
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

/// The worst `nav::fuzzy_score` of a name that contains the query (exact,
/// prefix or substring); worse scores are scattered-letter matches.
const NAME_PART: u32 = 2;

/// A word of prose: letters only, lowercase after the first, no `_` or
/// `::` — a name-like token (`HashMap`, `read_to`) keeps the name match.
fn is_plain_word(q: &str) -> bool {
    let q = q.trim();
    let mut chars = q.chars();
    chars.next().is_some_and(|c| c.is_alphabetic())
        && chars.all(|c| c.is_alphabetic() && !c.is_uppercase())
}

fn search_error(e: SearchError) -> ToolError {
    match e {
        SearchError::NoWords => ToolError::invalid("the query has no words to search for"),
        SearchError::Store(e) => e.into(),
    }
}

/// `search_entities` for a query of several words: the ranked text search.
fn text_search(
    ws: &Workspace,
    query: &str,
    kind: Option<&str>,
    file: Option<String>,
    limit: usize,
) -> Result<Answer, ToolError> {
    let opts = search::Options {
        limit,
        kind: kind.map(str::to_string),
        file,
        explain: false,
        sources: Some(ws.root().to_path_buf()),
        held: Some(ws.held_lists()),
        ..search::Options::default()
    };
    let hits = search::search(ws.store(), ws.graph(), query, &opts).map_err(search_error)?;
    let results: Vec<Value> = hits
        .iter()
        .map(|h| {
            json!({
                "key": h.key, "kind": h.kind, "name": h.name, "file": h.file,
                "line": h.start_line, "end_line": h.end_line, "signature": h.signature,
                "score": h.score, "why": h.why, "reason": h.why.line(),
            })
        })
        .collect();
    Ok(Answer::Json {
        value: json!({"query": query, "mode": "text", "matched": results.len(), "results": results}),
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
