//! Format E for code context: one line per entity, one line per
//! relationship type and source.
//!
//! ```text
//! # graphctx context · Format E · base 1 · hops 2 · edit · 1234 tokens · blended
//! # stale: src/other.rs (changed on disk; …)      <- only when the index is behind
//! ## Nodes
//! warm|fn|src/store/cache.rs-store::cache-warm|src/store/cache.rs:4-9|fn warm(t: &Thing) -> bool|Whether the thing is warm.
//! is_even|fn|src/store/cache.rs-store::cache-is_even|src/store/cache.rs:11-13|fn is_even(n: u64) -> bool
//! ## Edges
//! warm -ca-> is_even, checksum
//! ```
//!
//! A node line is `Name|kind|key|path:start-end|signature|doc`: the
//! signature on one line (a function's head; a struct's fields, an enum's
//! variants, a trait's items in braces), then the first sentence of the
//! documentation. The budget fitter's steps act per line: the doc goes
//! first, then the signature is compressed (parameter names only, no
//! braces), then dropped with the location (the minimal line is
//! `Name|kind|key`, the key carrying the path); trailing empty fields are
//! left out.
//!
//! An edge line carries every target of one relationship from one source:
//! `Source -rel-> Target, Target`. An endpoint is written as its entity's
//! name where exactly one node line of the document has that name, else as
//! its full key, so the node section is the legend and every endpoint
//! names exactly one node line. `,` and `\` inside an endpoint are escaped
//! (`\,`, `\\`); `|`, `\` and line breaks inside fields likewise (see
//! [`super::line`]).
//!
//! Kinds are abbreviated (`fn`, `method`, `struct`, `enum`, `union`,
//! `trait`, `impl`, `mod`, `const`, `static`, `type`, `macro`) and
//! relationships get two-letter names: `ca` calls, `ty` uses_type,
//! `im` implements, `cn` contains, `us` imports (use), `ts` tests,
//! `rf` references. Selection and budget rules are the JSON form's.

use std::collections::HashMap;

use serde_json::Value;

use super::entity::{first_sentence, Detail, Details, Usage};
use super::fit::Plan;
use super::line::{escape_endpoint, escape_field, split_edge, split_endpoints, split_fields};
use super::{ContextRequest, Loaded};
use crate::analyse::select::Selection;
use crate::model::rel::name;
use crate::model::Rel;

/// Characters of a full one-line signature; longer ones end in `…`.
const SIGNATURE_CHARS: usize = 200;
/// Characters of a compressed signature.
const COMPRESSED_CHARS: usize = 100;
/// Fields, variants or trait items listed before `..`.
const MEMBERS_LISTED: usize = 8;
/// Characters of the doc sentence at full and at compressed detail.
const DOC_CHARS: usize = 100;
const SHORT_DOC_CHARS: usize = 60;

pub fn kind_abbrev(kind: &str) -> &str {
    match kind {
        "function" => "fn",
        "module" => "mod",
        "type_alias" => "type",
        other => other,
    }
}

/// Inverse of [`kind_abbrev`].
pub fn kind_from_abbrev(abbrev: &str) -> &str {
    match abbrev {
        "fn" => "function",
        "mod" => "module",
        "type" => "type_alias",
        other => other,
    }
}

/// A relationship's Format E abbreviation; names of other graphs' edges
/// are written as they are.
pub fn rel_abbrev(rel: &str) -> &str {
    Rel::from_name(rel).map(Rel::abbrev).unwrap_or(rel)
}

/// Inverse of [`rel_abbrev`].
pub fn rel_from_abbrev(abbrev: &str) -> Option<&'static str> {
    Rel::from_abbrev(abbrev).map(Rel::name)
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let cut: String = s.chars().take(max.saturating_sub(1)).collect();
        format!("{}…", cut.trim_end())
    }
}

fn str_field<'a>(v: &'a Value, field: &str) -> Option<&'a str> {
    v.get(field).and_then(Value::as_str)
}

fn visibility_prefix(vis: &str) -> &'static str {
    match vis {
        "public" => "pub ",
        "crate" => "pub(crate) ",
        "restricted" => "pub(super) ",
        _ => "",
    }
}

/// `{ a, b, .. }` from at most [`MEMBERS_LISTED`] members.
fn braces(members: Vec<String>) -> String {
    let more = members.len() > MEMBERS_LISTED;
    let mut listed: Vec<String> = members.into_iter().take(MEMBERS_LISTED).collect();
    if more {
        listed.push("..".into());
    }
    format!("{{ {} }}", listed.join(", "))
}

/// The one-line signature at full detail: the declaration head, and for
/// types their members (`struct Item { pub id: u64, .. }`,
/// `enum Kind { Metal, Wood(u8) }`, `trait Priced { price }`).
pub fn full_signature(d: &Details, u: &Usage) -> String {
    let head = d.head();
    let fields: Vec<(&str, &str, &str)> = d
        .signature
        .get("fields")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .map(|f| {
                    (
                        str_field(f, "name").unwrap_or(""),
                        str_field(f, "type").unwrap_or(""),
                        str_field(f, "visibility").unwrap_or(""),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let sig = match d.kind.as_str() {
        "struct" | "union" if !fields.is_empty() => {
            let tuple = fields.iter().all(|(n, _, _)| n.parse::<usize>().is_ok());
            if tuple {
                let types: Vec<String> = fields
                    .iter()
                    .map(|(_, t, v)| format!("{}{t}", visibility_prefix(v)))
                    .collect();
                format!("{head}({})", types.join(", "))
            } else {
                let members = fields
                    .iter()
                    .map(|(n, t, v)| format!("{}{n}: {t}", visibility_prefix(v)))
                    .collect();
                format!("{head} {}", braces(members))
            }
        }
        "enum" if !fields.is_empty() => {
            let members = fields
                .iter()
                .map(|(n, t, _)| {
                    if t.starts_with('{') {
                        format!("{n} {t}")
                    } else {
                        format!("{n}{t}")
                    }
                })
                .collect();
            format!("{head} {}", braces(members))
        }
        "trait" => {
            let items: Vec<String> = u
                .targets(name::CONTAINS)
                .into_iter()
                .map(super::entity::item_name)
                .collect();
            if items.is_empty() {
                head
            } else {
                format!("{head} {}", braces(items))
            }
        }
        _ => head,
    };
    clip(&sig, SIGNATURE_CHARS)
}

/// The signature compressed: a function's parameters by name only and
/// its return type, a type's head without members.
pub fn compressed_signature(d: &Details) -> String {
    let head = d.head();
    let is_fn = matches!(d.kind.as_str(), "function" | "method");
    let params = d.signature.get("parameters").and_then(Value::as_array);
    let sig = match (is_fn, head.find('(')) {
        (true, Some(open)) => {
            let names: Vec<&str> = params
                .map(|ps| ps.iter().filter_map(|p| str_field(p, "name")).collect())
                .unwrap_or_default();
            let mut s = format!("{}({})", &head[..open], names.join(", "));
            if let Some(ret) = str_field(&d.signature, "return_type") {
                s.push_str(" -> ");
                s.push_str(ret);
            }
            s
        }
        _ => head,
    };
    clip(&sig, COMPRESSED_CHARS)
}

/// `path:start-end`.
pub fn location(d: &Details) -> String {
    format!("{}:{}-{}", d.file, d.start_line, d.end_line)
}

/// `Name|kind|key|path:start-end|signature|doc` at a level of detail.
pub fn node_line(d: &Details, u: &Usage, detail: Detail) -> String {
    let signature = match detail {
        Detail::Full => full_signature(d, u),
        Detail::CompressedSignature | Detail::ShortDoc => compressed_signature(d),
        Detail::Minimal => String::new(),
    };
    let doc = match detail {
        Detail::Full => first_sentence(&d.doc, DOC_CHARS),
        Detail::CompressedSignature => first_sentence(&d.doc, SHORT_DOC_CHARS),
        Detail::ShortDoc | Detail::Minimal => String::new(),
    };
    // The minimal line is the legend entry alone: the key carries the path.
    let location = match detail {
        Detail::Minimal => String::new(),
        _ => location(d),
    };
    let mut fields = vec![
        escape_field(&d.name),
        kind_abbrev(&d.kind).to_string(),
        escape_field(&d.key),
        escape_field(&location),
        escape_field(&signature),
        escape_field(&doc),
    ];
    while fields.len() > 3 && fields.last().is_some_and(|f| f.is_empty()) {
        fields.pop();
    }
    fields.join("|")
}

/// How the endpoints of edge lines are written: names unique among the
/// document's node lines stand for their entity, others by full key.
pub struct Legend<'a> {
    short: Vec<bool>,
    loaded: &'a Loaded,
}

impl<'a> Legend<'a> {
    /// For the entities `included` (indexes into `loaded`).
    pub fn new(loaded: &'a Loaded, included: impl Iterator<Item = usize>) -> Legend<'a> {
        let included: Vec<usize> = included.collect();
        let mut count: HashMap<&str, usize> = HashMap::new();
        for &i in &included {
            *count.entry(loaded.details[i].name.as_str()).or_insert(0) += 1;
        }
        // A name equal to some node's key would make that key ambiguous.
        let keys: std::collections::HashSet<&str> = included
            .iter()
            .map(|&i| loaded.details[i].key.as_str())
            .collect();
        let mut short = vec![false; loaded.details.len()];
        for &i in &included {
            let name = loaded.details[i].name.as_str();
            short[i] = !name.is_empty() && count[name] == 1 && !keys.contains(name);
        }
        Legend { short, loaded }
    }

    /// The endpoint text of entity `i`, escaped for an edge list.
    pub fn endpoint(&self, i: usize) -> String {
        let d = &self.loaded.details[i];
        if self.short[i] {
            escape_endpoint(&d.name)
        } else {
            escape_endpoint(&d.key)
        }
    }
}

/// Edge lines for the relationships `kept` (indexes into `loaded.rels`),
/// one line per source and relationship type, in order of first
/// appearance.
pub fn edge_lines(loaded: &Loaded, legend: &Legend, kept: &[usize]) -> Vec<String> {
    let mut groups: Vec<(usize, &str, Vec<usize>)> = Vec::new();
    let mut at: HashMap<(usize, &str), usize> = HashMap::new();
    for &r in kept {
        let rel = &loaded.rels[r];
        let slot = *at.entry((rel.src, rel.rel.as_str())).or_insert_with(|| {
            groups.push((rel.src, rel.rel.as_str(), Vec::new()));
            groups.len() - 1
        });
        groups[slot].2.push(rel.dst);
    }
    groups
        .into_iter()
        .map(|(src, rel, dsts)| {
            let targets: Vec<String> = dsts.iter().map(|&d| legend.endpoint(d)).collect();
            format!(
                "{} -{}-> {}",
                legend.endpoint(src),
                rel_abbrev(rel),
                targets.join(", ")
            )
        })
        .collect()
}

/// What one relationship adds to the edge section, for planning: its
/// target in the list, and its share of the `Source -rel-> ` head among
/// the relationships of the same source and type. Endpoints are
/// estimated as they would be written with every loaded entity in the
/// document (a name unique there is unique in any part of it).
pub fn planning_texts(loaded: &Loaded) -> Vec<(String, String, usize)> {
    let legend = Legend::new(loaded, 0..loaded.details.len());
    let mut group_size: HashMap<(usize, &str), usize> = HashMap::new();
    for r in &loaded.rels {
        *group_size.entry((r.src, r.rel.as_str())).or_insert(0) += 1;
    }
    loaded
        .rels
        .iter()
        .map(|r| {
            let head = format!("{} -{}-> ", legend.endpoint(r.src), rel_abbrev(&r.rel));
            let target = format!("{}, ", legend.endpoint(r.dst));
            (head, target, group_size[&(r.src, r.rel.as_str())])
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub fn assemble(
    req: &ContextRequest,
    selection: &Selection,
    nodes: &[&str],
    edges: &[String],
    plan: &Plan,
    excluded: &[&str],
    more_in: &[&str],
    token_count: usize,
) -> String {
    let mut out = format!(
        "# graphctx context · Format E · base {} · hops {} · {} · {} tokens · {}\n",
        selection.base_keys.len(),
        selection.hops,
        req.change_type.name(),
        token_count,
        req.strategy.name()
    );
    if !req.stale_files.is_empty() {
        out.push_str(&format!(
            "# stale: {} (changed on disk; another process is indexing, so this answer may not reflect them)\n",
            req.stale_files.join(", ")
        ));
    }
    out.push_str("## Nodes\n");
    for n in nodes {
        out.push_str(n);
        out.push('\n');
    }
    out.push_str("## Edges\n");
    for e in edges {
        out.push_str(e);
        out.push('\n');
    }
    if !plan.steps.is_empty() {
        out.push_str(&format!(
            "# truncated: {} ({} excluded)\n",
            super::fit::FitStep::join(&plan.steps),
            excluded.len()
        ));
    }
    if !more_in.is_empty() {
        let files: Vec<String> = more_in.iter().map(|f| escape_endpoint(f)).collect();
        out.push_str(&format!("# more in: {}\n", files.join(", ")));
    }
    out
}

/// A code Format E document read back: node lines and the edges with
/// each endpoint resolved to the key of the one node line it names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedDoc {
    /// `(name, kind, key, location, signature, doc)` per node line.
    pub nodes: Vec<ParsedNode>,
    /// `(source key, relationship, target key)`, one per target.
    pub edges: Vec<(String, String, String)>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedNode {
    pub name: String,
    pub kind: String,
    pub key: String,
    pub location: String,
    pub signature: String,
    pub doc: String,
}

/// Parse a code Format E document, resolving endpoints through the node
/// section. Errors name the line and what is wrong: an unknown
/// relationship, or an endpoint that names no node line or several.
pub fn parse(text: &str) -> Result<ParsedDoc, String> {
    let mut doc = ParsedDoc::default();
    let mut in_edges = false;
    let mut in_nodes = false;
    let mut edge_lines: Vec<(usize, &str)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') {
            in_nodes = line == "## Nodes";
            in_edges = line == "## Edges";
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        if in_nodes {
            let f = split_fields(line);
            if f.len() < 3 {
                return Err(format!(
                    "line {}: a node line is Name|kind|key[|path:start-end[|signature[|doc]]]",
                    i + 1
                ));
            }
            let get = |n: usize| f.get(n).cloned().unwrap_or_default();
            doc.nodes.push(ParsedNode {
                name: get(0),
                kind: kind_from_abbrev(&f[1]).to_string(),
                key: get(2),
                location: get(3),
                signature: get(4),
                doc: get(5),
            });
        } else if in_edges {
            edge_lines.push((i + 1, line));
        }
    }
    let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut keys: std::collections::HashSet<&str> = Default::default();
    for n in &doc.nodes {
        by_name.entry(n.name.as_str()).or_default().push(&n.key);
        keys.insert(&n.key);
    }
    let resolve = |line: usize, endpoint: &str| -> Result<String, String> {
        if keys.contains(endpoint) {
            return Ok(endpoint.to_string());
        }
        match by_name.get(endpoint).map(Vec::as_slice) {
            Some([one]) => Ok(one.to_string()),
            Some(many) if many.len() > 1 => Err(format!(
                "line {line}: `{endpoint}` names {} node lines",
                many.len()
            )),
            _ => Err(format!("line {line}: `{endpoint}` names no node line")),
        }
    };
    let mut edges = Vec::new();
    for (line, text) in edge_lines {
        let (src, rel, rest) = split_edge(text, |r| rel_from_abbrev(r).is_some())
            .ok_or_else(|| format!("line {line}: an edge line is `Source -rel-> Target, …`"))?;
        let rel = rel_from_abbrev(rel).unwrap_or_default().to_string();
        let src = split_endpoints(src);
        let src = resolve(line, src.first().map(String::as_str).unwrap_or(""))?;
        for dst in split_endpoints(rest) {
            edges.push((src.clone(), rel.clone(), resolve(line, &dst)?));
        }
    }
    doc.edges = edges;
    Ok(doc)
}
