//! Format E for ontology graphs (seed 001 §6.1, seed 000): one line per
//! node, one per edge, nodes referenced by semantic ID so edges stay short.
//!
//! ```text
//! ## Nodes
//! CargoManagement|SYS|CargoManagement.SY.001|Central cargo management system
//! ManageFleet|UC|ManageFleet.UC.001|Manage fleet operations|@120,80|{"priority":"high"}
//!
//! ## Edges
//! CargoManagement.SY.001 -cp-> ManageFleet.UC.001, TrackCargo.UC.002
//! ```
//!
//! A node line is `Name|TYPE|SemanticID|Descr`, optionally followed by
//! `|@x,y` (position) and `|{...}` (free properties as a JSON object,
//! always last). `\`, `|` and line breaks in Name and Descr are escaped
//! (`\\`, `\|`, `\n`, `\r`; the codec is [`crate::emit::line`]). An edge
//! line is `Source -rel-> Target` with the relationship's short name,
//! optionally followed by ` {...}` (properties). Edges without properties
//! of one source and relationship share a line: `Source -rel-> T1, T2`
//! (written at the place of the first of them); the parser reads both
//! forms. A CHANGED capture adds a `## Deleted` section with
//! `Name|TYPE|SemanticID` and edge lines of what was deleted.
//!
//! The parser is the emitter's inverse: emitting a graph and parsing the
//! text gives the same nodes (by semantic ID) and edges. Blank lines,
//! `#` headings other than the sections, and the capture metadata header
//! (`**Key:** value` lines, `---`) before the first section are skipped;
//! anything else that does not parse is an error naming its line.

use serde_json::{Map, Value};

use super::{semantic, NodeType, OntoNode, OntologyGraph, Position, RelType};

/// What to put into node lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmitOptions {
    pub positions: bool,
    pub props: bool,
    /// Sanitise names/descriptions and drop sensitive properties.
    pub sanitize: bool,
}

impl Default for EmitOptions {
    fn default() -> Self {
        EmitOptions {
            positions: true,
            props: true,
            sanitize: true,
        }
    }
}

/// A Format E line that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Format E line {line}: {message}")]
pub struct FormatEError {
    pub line: usize,
    pub message: String,
}

use crate::emit::line::{escape_field as escape, split_fields, split_fields_max};

/// `Name|TYPE|SemanticID|Descr[|@x,y][|{props}]`.
pub fn node_line(n: &OntoNode, opts: EmitOptions) -> String {
    let (name, descr) = if opts.sanitize {
        (
            super::sanitize::text(&n.name),
            super::sanitize::text(&n.descr),
        )
    } else {
        (n.name.clone(), n.descr.clone())
    };
    let mut line = format!(
        "{}|{}|{}|{}",
        escape(&name),
        n.node_type.name(),
        n.semantic_id,
        escape(&descr)
    );
    // A name starting with `#` would read as a heading.
    if line.starts_with('#') {
        line.insert(0, '\\');
    }
    if opts.positions {
        if let Some(p) = n.position {
            line.push_str(&format!("|@{},{}", p.x, p.y));
        }
    }
    if opts.props {
        let props = if opts.sanitize {
            super::sanitize::props(&n.props)
        } else {
            n.props.clone()
        };
        if !props.is_empty() {
            line.push('|');
            line.push_str(&Value::Object(props).to_string());
        }
    }
    line
}

/// `Source -rel-> Target[ {props}]`.
pub fn edge_line(
    src: &str,
    rel: RelType,
    dst: &str,
    props: &Map<String, Value>,
    opts: EmitOptions,
) -> String {
    let mut line = format!("{src} -{}-> {dst}", rel.short());
    if opts.props {
        let props = if opts.sanitize {
            super::sanitize::props(props)
        } else {
            props.clone()
        };
        if !props.is_empty() {
            line.push(' ');
            line.push_str(&Value::Object(props).to_string());
        }
    }
    line
}

/// The whole graph: `## Nodes` and `## Edges`, in output order.
pub fn emit(g: &OntologyGraph, opts: EmitOptions) -> String {
    let nodes = g.nodes_ordered();
    let edges = g.edges_ordered();
    emit_parts(g, &nodes, &edges, opts)
}

/// Given nodes and edges of `g` (edges' endpoints may lie outside `nodes`).
pub fn emit_parts(
    g: &OntologyGraph,
    nodes: &[&OntoNode],
    edges: &[&super::OntoEdge],
    opts: EmitOptions,
) -> String {
    let mut out = String::from("## Nodes\n");
    for n in nodes {
        out.push_str(&node_line(n, opts));
        out.push('\n');
    }
    // A blank line between the sections, as the seeds write it.
    out.push_str("\n## Edges\n");
    let sid = |u: &String| g.semantic_id_of(u).unwrap_or(u).to_string();
    // Edges without properties of one source and type share a line
    // (`A -cp-> B, C`), at the place of the first of them; an edge with
    // properties keeps a line of its own.
    let mut lines: Vec<(String, RelType, Vec<String>, Option<String>)> = Vec::new();
    let mut group_at: std::collections::HashMap<(String, RelType), usize> = Default::default();
    for e in edges {
        let (src, dst) = (sid(&e.src), sid(&e.dst));
        let with_props = edge_line(&src, e.rel, &dst, &e.props, opts);
        if with_props != format!("{src} -{}-> {dst}", e.rel.short()) {
            lines.push((src, e.rel, vec![], Some(with_props)));
            continue;
        }
        match group_at.get(&(src.clone(), e.rel)) {
            Some(&i) => lines[i].2.push(dst),
            None => {
                group_at.insert((src.clone(), e.rel), lines.len());
                lines.push((src, e.rel, vec![dst], None));
            }
        }
    }
    for (src, rel, dsts, whole) in lines {
        match whole {
            Some(line) => out.push_str(&line),
            None => out.push_str(&format!("{src} -{}-> {}", rel.short(), dsts.join(", "))),
        }
        out.push('\n');
    }
    out
}

/// A parsed edge line: endpoints by semantic ID.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedEdge {
    pub line: usize,
    pub src: String,
    pub rel: RelType,
    pub dst: String,
    pub props: Map<String, Value>,
}

/// A parsed node line (no UUID: Format E does not carry them).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedNode {
    pub line: usize,
    pub node: OntoNode,
}

/// A parsed document.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub nodes: Vec<ParsedNode>,
    pub edges: Vec<ParsedEdge>,
    /// From a `## Deleted` section: semantic IDs of deleted nodes.
    pub deleted_nodes: Vec<(usize, String)>,
    pub deleted_edges: Vec<ParsedEdge>,
}

#[derive(Clone, Copy, PartialEq)]
enum Section {
    Header,
    Nodes,
    Edges,
    Deleted,
}

/// Parse a Format E document.
pub fn parse(text: &str) -> Result<Parsed, FormatEError> {
    let mut out = Parsed::default();
    let mut section = Section::Header;
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r');
        let err = |message: String| FormatEError {
            line: line_no,
            message,
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(heading) = line.strip_prefix('#') {
            let h = heading.trim_start_matches('#').trim();
            section = match h {
                "Nodes" => Section::Nodes,
                "Edges" => Section::Edges,
                "Deleted" => Section::Deleted,
                _ if section == Section::Header => Section::Header,
                _ => return Err(err(format!("unknown section `{}`", line.trim()))),
            };
            continue;
        }
        match section {
            Section::Header => {
                let t = line.trim();
                if t.starts_with("**") || t == "---" || t.ends_with(':') {
                    continue;
                }
                return Err(err(format!(
                    "expected `## Nodes` or `## Edges` before `{}`",
                    clip(t)
                )));
            }
            Section::Nodes => {
                let node = parse_node_line(line).map_err(err)?;
                if let Some(prev) = seen.insert(node.semantic_id.clone(), line_no) {
                    return Err(err(format!(
                        "semantic ID {} was already defined on line {prev}",
                        node.semantic_id
                    )));
                }
                out.nodes.push(ParsedNode {
                    line: line_no,
                    node,
                });
            }
            Section::Edges => {
                out.edges
                    .extend(parse_edge_line(line, line_no).map_err(err)?);
            }
            Section::Deleted => {
                if line.contains(" -") && line.contains("-> ") && !line.contains('|') {
                    out.deleted_edges
                        .extend(parse_edge_line(line, line_no).map_err(err)?);
                } else {
                    let fields = split_fields(line);
                    let sid = fields
                        .get(2)
                        .map(|s| s.trim().to_string())
                        .unwrap_or_default();
                    semantic::parse(&sid).map_err(|e| err(e.to_string()))?;
                    out.deleted_nodes.push((line_no, sid));
                }
            }
        }
    }
    Ok(out)
}

fn clip(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

fn parse_node_line(line: &str) -> Result<OntoNode, String> {
    let (fields, rest) = split_fields_max(line, 4);
    if fields.len() < 3 {
        return Err(format!(
            "a node line is Name|TYPE|SemanticID|Descr, got `{}`",
            clip(line)
        ));
    }
    let name = fields[0].trim().to_string();
    if name.is_empty() {
        return Err("node name is empty".into());
    }
    let node_type = NodeType::parse(&fields[1]).map_err(|e| e.to_string())?;
    let sid = fields[2].trim().to_string();
    let parsed = semantic::parse(&sid).map_err(|e| e.to_string())?;
    if parsed.node_type != node_type {
        return Err(format!(
            "semantic ID {sid} is for type {}, but the node is a {node_type}",
            parsed.node_type
        ));
    }
    let mut node = OntoNode::new(
        node_type,
        &name,
        fields.get(3).map(String::as_str).unwrap_or(""),
    );
    node.semantic_id = sid;
    let mut rest = rest.unwrap_or("");
    if let Some(pos) = rest.strip_prefix('@') {
        let (coords, after) = match pos.find('|') {
            Some(i) => (&pos[..i], &pos[i + 1..]),
            None => (pos, ""),
        };
        let bad = || format!("position `@{coords}` is not `@x,y`");
        let (x, y) = coords.split_once(',').ok_or_else(bad)?;
        let x: f64 = x.trim().parse().map_err(|_| bad())?;
        let y: f64 = y.trim().parse().map_err(|_| bad())?;
        if !x.is_finite() || !y.is_finite() {
            return Err(bad());
        }
        node.position = Some(Position { x, y });
        rest = after;
    }
    let rest = rest.trim();
    if !rest.is_empty() {
        match serde_json::from_str::<Value>(rest) {
            Ok(Value::Object(m)) => node.props = m,
            _ => {
                return Err(format!(
                "expected `@x,y` or a JSON object of properties after the description, got `{}`",
                clip(rest)
            ))
            }
        }
    }
    Ok(node)
}

/// `Source -rel-> Target[ {props}]` or `Source -rel-> Target, Target, …`
/// (one edge per target; properties only with a single target).
fn parse_edge_line(line: &str, line_no: usize) -> Result<Vec<ParsedEdge>, String> {
    let bad = || {
        format!(
            "an edge line is `Source -rel-> Target` or `Source -rel-> Target, Target, …`, got `{}`",
            clip(line.trim())
        )
    };
    let t = line.trim();
    let (src, rest) = t.split_once(' ').ok_or_else(bad)?;
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('-').ok_or_else(bad)?;
    let (rel, rest) = rest.split_once("->").ok_or_else(bad)?;
    let rel = RelType::parse(rel).map_err(|e| e.to_string())?;
    let rest = rest.trim();
    let (targets, props) = match rest.find('{') {
        Some(i) => (rest[..i].trim(), rest[i..].trim()),
        None => (rest, ""),
    };
    let targets: Vec<&str> = targets.split(',').map(str::trim).collect();
    if targets.iter().any(|d| d.is_empty() || d.contains(' ')) {
        return Err(bad());
    }
    semantic::parse(src).map_err(|e| e.to_string())?;
    for sid in &targets {
        semantic::parse(sid).map_err(|e| e.to_string())?;
    }
    let props = if props.is_empty() {
        Map::new()
    } else {
        if targets.len() > 1 {
            return Err(format!(
                "edge properties belong to one edge; `{}` lists {} targets",
                clip(t),
                targets.len()
            ));
        }
        match serde_json::from_str::<Value>(props) {
            Ok(Value::Object(m)) => m,
            _ => {
                return Err(format!(
                    "expected a JSON object of edge properties, got `{}`",
                    clip(props)
                ))
            }
        }
    };
    Ok(targets
        .into_iter()
        .map(|dst| ParsedEdge {
            line: line_no,
            src: src.to_string(),
            rel,
            dst: dst.to_string(),
            props: props.clone(),
        })
        .collect())
}
