//! Format E for ontology graphs (seed 001 §6.1, seed 000): one line per
//! node, one line per relationship and source, nodes referenced by short
//! names or semantic IDs so edges stay short.
//!
//! ```text
//! ## Nodes
//! CargoManagement|SYS|CargoManagement.SY.001|Central cargo management system
//! ManageFleet|UC|ManageFleet.UC.001|Manage fleet operations|@120,80|{"priority":"high"}
//! TrackCargo|UC|TrackCargo.UC.002|Follow cargo to delivery
//! TrackCargo|UC|TrackCargo.UC.003|Follow cargo in the warehouse
//!
//! ## Edges
//! CargoManagement -cp-> ManageFleet, TrackCargo.UC.002, TrackCargo.UC.003
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
//! **Endpoints.** The node lines are the legend: an edge endpoint is the
//! node's Name where that is safe, else its semantic ID ([`Legend`]). The
//! emitter writes the name only for a node with a line in the document
//! whose name, as written, is a plain token ([`is_plain_name`]: letters,
//! digits, `_`, `-`; never a `.`, so never a semantic ID), is the name of
//! no other node line and no other node of the graph, and does not appear
//! on a `## Deleted` line. Ends outside the document (a CHANGED capture's
//! edges to unchanged nodes, deleted edges) are semantic IDs. The parser
//! reads an endpoint that is a well-formed semantic ID as one, else as the
//! one node line with that name; any other endpoint is an error naming
//! its line — or, with [`parse_with`], goes to the caller, which imports
//! resolve against the stored graph (the one node with that name).
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
    let legend = Legend::new(g, nodes, std::iter::empty(), opts);
    emit_with(g, nodes, edges, &legend, opts)
}

/// Whether a name can stand for its node in an edge line: a letter, digit
/// or `_`, then letters, digits, `_` and `-` (Unicode letters and digits,
/// as semantic IDs allow). No whitespace, `,`, `{`, `|`, `\`, `#` or `.`:
/// such a name splits like one endpoint, never reads as the start of
/// properties, a heading or an arrow, and is never a semantic ID (those
/// always contain `.`), so the parser cannot mistake one for the other.
pub fn is_plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_alphanumeric() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

/// A node's name as its node line writes it and the parser reads it back.
fn written_name(n: &OntoNode, opts: EmitOptions) -> String {
    if opts.sanitize {
        super::sanitize::text(&n.name)
    } else {
        n.name.trim().to_string()
    }
}

/// Which nodes of a document its edge lines name by their Name instead of
/// their semantic ID.
///
/// A node is named so when it has a node line in the document, its name
/// (as written) is a plain token ([`is_plain_name`]), no other node line
/// of the document and no other node of the graph has that name, and the
/// document does not write it elsewhere (`reserved`, e.g. the node lines
/// of a `## Deleted` section). Uniqueness in the graph, not only in the
/// document, means a short name an LLM copies from a partial capture still
/// names one node when it is resolved against the graph.
#[derive(Debug, Clone, Default)]
pub struct Legend {
    /// UUID → the name edge lines write.
    short: std::collections::HashMap<String, String>,
}

impl Legend {
    pub fn new<'a>(
        g: &OntologyGraph,
        nodes: &[&OntoNode],
        reserved: impl IntoIterator<Item = &'a str>,
        opts: EmitOptions,
    ) -> Legend {
        use std::collections::{HashMap, HashSet};
        let mut by_name: HashMap<String, Vec<&str>> = HashMap::new();
        for n in nodes {
            by_name
                .entry(written_name(n, opts))
                .or_default()
                .push(n.uuid.as_str());
        }
        for r in reserved {
            by_name.remove(r.trim());
        }
        by_name.retain(|name, uuids| uuids.len() == 1 && is_plain_name(name));
        // Graph nodes without a line here may still share a name.
        let in_doc: HashSet<&str> = nodes.iter().map(|n| n.uuid.as_str()).collect();
        if in_doc.len() < g.nodes.len() {
            for n in g.nodes.values() {
                if !in_doc.contains(n.uuid.as_str()) {
                    by_name.remove(&written_name(n, opts));
                }
            }
        }
        Legend {
            short: by_name
                .into_iter()
                .map(|(name, uuids)| (uuids[0].to_string(), name))
                .collect(),
        }
    }

    /// How edge lines write the node with this UUID: its short name, its
    /// semantic ID, or (a node `g` does not have) the UUID itself.
    pub fn endpoint<'a>(&'a self, g: &'a OntologyGraph, uuid: &'a str) -> &'a str {
        self.short
            .get(uuid)
            .map(String::as_str)
            .or_else(|| g.semantic_id_of(uuid))
            .unwrap_or(uuid)
    }
}

/// [`emit_parts`] with a given legend.
pub fn emit_with(
    g: &OntologyGraph,
    nodes: &[&OntoNode],
    edges: &[&super::OntoEdge],
    legend: &Legend,
    opts: EmitOptions,
) -> String {
    let mut out = String::from("## Nodes\n");
    for n in nodes {
        out.push_str(&node_line(n, opts));
        out.push('\n');
    }
    // A blank line between the sections, as the seeds write it.
    out.push_str("\n## Edges\n");
    // Edges without properties of one source and type share a line
    // (`A -cp-> B, C`), at the place of the first of them; an edge with
    // properties keeps a line of its own.
    let mut lines: Vec<(&str, RelType, Vec<&str>, Option<String>)> = Vec::new();
    let mut group_at: std::collections::HashMap<(&str, RelType), usize> = Default::default();
    for e in edges {
        let (src, dst) = (legend.endpoint(g, &e.src), legend.endpoint(g, &e.dst));
        let with_props = edge_line(src, e.rel, dst, &e.props, opts);
        if with_props != format!("{src} -{}-> {dst}", e.rel.short()) {
            lines.push((src, e.rel, vec![], Some(with_props)));
            continue;
        }
        match group_at.get(&(src, e.rel)) {
            Some(&i) => lines[i].2.push(dst),
            None => {
                group_at.insert((src, e.rel), lines.len());
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

/// Parse a Format E document. Every edge endpoint must be a semantic ID
/// or the name of exactly one node line of the text.
pub fn parse(text: &str) -> Result<Parsed, FormatEError> {
    parse_with(text, &|name: &str| {
        Err(format!(
            "`{name}` is neither a semantic ID (Name.TY.NNN) nor the name of a node line"
        ))
    })
}

/// Parse a Format E document whose edges may name nodes it has no line
/// for: an endpoint that is neither a semantic ID nor the name of a node
/// line goes to `outside`, which gives its semantic ID (e.g. of the one
/// node of a stored graph with that name, [`super::NameIndex`]) or says
/// why not; the error is reported with the edge's line.
pub fn parse_with(
    text: &str,
    outside: &dyn Fn(&str) -> Result<String, String>,
) -> Result<Parsed, FormatEError> {
    let mut reader = Reader {
        out: Parsed::default(),
        section: Section::Header,
        seen: std::collections::HashMap::new(),
        raw_edges: Vec::new(),
    };
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim_end_matches('\r');
        reader.line(line, line_no).map_err(|message| FormatEError {
            line: line_no,
            message,
        })?;
    }
    let Reader {
        mut out, raw_edges, ..
    } = reader;
    resolve_edges(&mut out, raw_edges, outside)?;
    Ok(out)
}

/// The state of a parse, line by line.
struct Reader {
    out: Parsed,
    section: Section,
    /// Semantic ID → the node line that defines it.
    seen: std::collections::HashMap<String, usize>,
    /// Edges as written (deleted or not); endpoints are resolved once every
    /// node line is known, so a name may be used before its line.
    raw_edges: Vec<(bool, ParsedEdge)>,
}

impl Reader {
    /// Read one line in the current section; a heading changes the section.
    fn line(&mut self, line: &str, line_no: usize) -> Result<(), String> {
        if line.trim().is_empty() {
            return Ok(());
        }
        if let Some(heading) = line.strip_prefix('#') {
            let h = heading.trim_start_matches('#').trim();
            self.section = match h {
                "Nodes" => Section::Nodes,
                "Edges" => Section::Edges,
                "Deleted" => Section::Deleted,
                _ if self.section == Section::Header => Section::Header,
                _ => return Err(format!("unknown section `{}`", line.trim())),
            };
            return Ok(());
        }
        match self.section {
            Section::Header => {
                let t = line.trim();
                if t.starts_with("**") || t == "---" || t.ends_with(':') {
                    return Ok(());
                }
                Err(format!(
                    "expected `## Nodes` or `## Edges` before `{}`",
                    clip(t)
                ))
            }
            Section::Nodes => self.node_line(line, line_no),
            Section::Edges => {
                let edges = parse_edge_line(line, line_no)?;
                self.raw_edges.extend(edges.into_iter().map(|e| (false, e)));
                Ok(())
            }
            Section::Deleted => self.deleted_line(line, line_no),
        }
    }

    /// A node line; its semantic ID must not be defined twice.
    fn node_line(&mut self, line: &str, line_no: usize) -> Result<(), String> {
        let node = parse_node_line(line)?;
        if let Some(prev) = self.seen.insert(node.semantic_id.clone(), line_no) {
            return Err(format!(
                "semantic ID {} was already defined on line {prev}",
                node.semantic_id
            ));
        }
        self.out.nodes.push(ParsedNode {
            line: line_no,
            node,
        });
        Ok(())
    }

    /// A `## Deleted` line: an edge line, or a node line of which only the
    /// semantic ID counts.
    fn deleted_line(&mut self, line: &str, line_no: usize) -> Result<(), String> {
        if line.contains(" -") && line.contains("-> ") && !line.contains('|') {
            let edges = parse_edge_line(line, line_no)?;
            self.raw_edges.extend(edges.into_iter().map(|e| (true, e)));
        } else {
            let fields = split_fields(line);
            let sid = fields
                .get(2)
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            semantic::parse(&sid).map_err(|e| e.to_string())?;
            self.out.deleted_nodes.push((line_no, sid));
        }
        Ok(())
    }
}

/// Resolve the edges' endpoints to semantic IDs and file them as edges or
/// deleted edges. The node lines are the legend: a name stands for the one
/// node line that has it.
fn resolve_edges(
    out: &mut Parsed,
    raw_edges: Vec<(bool, ParsedEdge)>,
    outside: &dyn Fn(&str) -> Result<String, String>,
) -> Result<(), FormatEError> {
    let mut by_name = std::collections::HashMap::<&str, Vec<&ParsedNode>>::new();
    for p in &out.nodes {
        by_name.entry(p.node.name.as_str()).or_default().push(p);
    }
    for (deleted, mut e) in raw_edges {
        e.src = resolve_endpoint(&by_name, outside, &e.src, e.line)?;
        e.dst = resolve_endpoint(&by_name, outside, &e.dst, e.line)?;
        if deleted {
            out.deleted_edges.push(e);
        } else {
            out.edges.push(e);
        }
    }
    Ok(())
}

/// An endpoint's semantic ID: itself, the one node line with that name,
/// or what `outside` gives; an error on `line` otherwise.
fn resolve_endpoint(
    by_name: &std::collections::HashMap<&str, Vec<&ParsedNode>>,
    outside: &dyn Fn(&str) -> Result<String, String>,
    endpoint: &str,
    line: usize,
) -> Result<String, FormatEError> {
    if semantic::parse(endpoint).is_ok() {
        return Ok(endpoint.to_string());
    }
    let message = match by_name.get(endpoint).map(Vec::as_slice) {
        Some([one]) => return Ok(one.node.semantic_id.clone()),
        Some(many) if many.len() > 1 => format!(
            "`{endpoint}` is the name of the node lines {}; write the semantic ID",
            many.iter()
                .map(|p| p.line.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => match outside(endpoint) {
            Ok(sid) => return Ok(sid),
            Err(message) => message,
        },
    };
    Err(FormatEError { line, message })
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
/// (one edge per target; properties only with a single target), with the
/// endpoints as written.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ontology::{NameIndex, OntoEdge};

    /// A graph of `(name, sid)` nodes (uuid `u{i}`, type from the sid) and
    /// `(src, rel, dst)` edges by node index.
    fn graph(nodes: &[(&str, &str)], edges: &[(usize, RelType, usize)]) -> OntologyGraph {
        let mut g = OntologyGraph::new("t");
        for (i, (name, sid)) in nodes.iter().enumerate() {
            let ty = semantic::parse(sid).unwrap().node_type;
            let mut n = OntoNode::new(ty, name, "d");
            n.uuid = format!("u{i}");
            n.semantic_id = sid.to_string();
            g.semantic_ids.insert(n.semantic_id.clone(), n.uuid.clone());
            g.nodes.insert(n.uuid.clone(), n);
        }
        for &(s, rel, d) in edges {
            let e = OntoEdge::new(&format!("u{s}"), rel, &format!("u{d}"));
            g.edges.insert(e.key(), e);
        }
        g
    }

    fn edge_section(text: &str) -> Vec<&str> {
        text.split("## Edges\n").nth(1).unwrap().lines().collect()
    }

    fn edge_set(p: &Parsed) -> Vec<(String, RelType, String)> {
        let mut v: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.src.clone(), e.rel, e.dst.clone()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn plain_names() {
        for ok in [
            "ManageFleet",
            "REQ-Input_1",
            "_x",
            "9Lives",
            "Größe",
            "注文",
        ] {
            assert!(is_plain_name(ok), "{ok}");
        }
        for bad in [
            "",
            "Place Order",
            "a,b",
            "a{b",
            "a|b",
            "#Top",
            "-x",
            "A.FN.001",
            "a.b",
            "x\\y",
            "a\tb",
            "a->b",
        ] {
            assert!(!is_plain_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn unique_plain_names_stand_for_their_nodes() {
        let g = graph(
            &[
                ("Sys", "Sys.SY.001"),
                ("Dup", "Dup.UC.001"),
                ("Dup", "Dup.UC.002"),
                ("Place Order", "PlaceOrder.UC.003"),
                ("a,b", "Ab.UC.004"),
                ("Other.UC.009", "OtherUC009.UC.005"),
                ("Fine", "Fine.FN.001"),
            ],
            &[
                (0, RelType::Compose, 1),
                (0, RelType::Compose, 2),
                (0, RelType::Compose, 3),
                (0, RelType::Compose, 4),
                (0, RelType::Compose, 5),
                (1, RelType::Compose, 6),
            ],
        );
        let text = emit(&g, EmitOptions::default());
        assert_eq!(
            edge_section(&text),
            [
                "Sys -cp-> Dup.UC.001, Dup.UC.002, PlaceOrder.UC.003, Ab.UC.004, OtherUC009.UC.005",
                "Dup.UC.001 -cp-> Fine",
            ]
        );
        let p = parse(&text).unwrap();
        assert_eq!(p.nodes.len(), 7);
        assert_eq!(
            edge_set(&p),
            vec![
                ("Dup.UC.001".into(), RelType::Compose, "Fine.FN.001".into()),
                ("Sys.SY.001".into(), RelType::Compose, "Ab.UC.004".into()),
                ("Sys.SY.001".into(), RelType::Compose, "Dup.UC.001".into()),
                ("Sys.SY.001".into(), RelType::Compose, "Dup.UC.002".into()),
                (
                    "Sys.SY.001".into(),
                    RelType::Compose,
                    "OtherUC009.UC.005".into()
                ),
                (
                    "Sys.SY.001".into(),
                    RelType::Compose,
                    "PlaceOrder.UC.003".into()
                ),
            ]
        );
    }

    #[test]
    fn a_name_is_short_only_where_the_document_and_the_graph_agree() {
        let g = graph(
            &[
                ("Sys", "Sys.SY.001"),
                ("Fleet", "Fleet.UC.001"),
                ("Fleet", "Fleet.UC.002"),
                ("Route", "Route.FN.001"),
                ("Gone", "Gone.FN.002"),
            ],
            &[
                (0, RelType::Compose, 1),
                (0, RelType::Compose, 3),
                (0, RelType::Compose, 4),
            ],
        );
        // A document of Sys, the first Fleet and Route: `Fleet` is unique
        // here but not in the graph; `Gone` has no line; `Route` is
        // written elsewhere in the document (reserved).
        let nodes: Vec<&OntoNode> = ["u0", "u1", "u3"].iter().map(|u| &g.nodes[*u]).collect();
        let edges = g.edges_ordered();
        let opts = EmitOptions::default();
        let legend = Legend::new(&g, &nodes, ["Route"], opts);
        let text = emit_with(&g, &nodes, &edges, &legend, opts);
        assert_eq!(
            edge_section(&text),
            ["Sys -cp-> Fleet.UC.001, Route.FN.001, Gone.FN.002"]
        );
        let text = emit_parts(&g, &nodes, &edges, opts);
        assert_eq!(
            edge_section(&text),
            ["Sys -cp-> Fleet.UC.001, Route, Gone.FN.002"]
        );
    }

    #[test]
    fn names_are_compared_as_written() {
        // Sanitised, two names become one; unsanitised they differ.
        let g = graph(
            &[
                ("Sys", "Sys.SY.001"),
                ("Run<script>", "Run.FN.001"),
                ("Run", "Run.FN.002"),
            ],
            &[(0, RelType::Compose, 1), (0, RelType::Compose, 2)],
        );
        let text = emit(&g, EmitOptions::default());
        assert_eq!(edge_section(&text), ["Sys -cp-> Run.FN.001, Run.FN.002"]);
        let raw = EmitOptions {
            sanitize: false,
            ..EmitOptions::default()
        };
        let text = emit(&g, raw);
        assert_eq!(edge_section(&text), ["Sys -cp-> Run.FN.001, Run"]);
        assert_eq!(edge_set(&parse(&text).unwrap()).len(), 2);
    }

    const DOC: &str = "## Nodes\n\
        Sys|SYS|Sys.SY.001|s\n\
        Fleet|UC|Fleet.UC.001|f\n\
        Route|FUNC|Route.FN.001|r\n\
        Route|FUNC|Route.FN.002|r2\n";

    #[test]
    fn endpoints_may_be_names_ids_or_both_grouped_or_not() {
        let want = vec![
            (
                "Fleet.UC.001".to_string(),
                RelType::Compose,
                "Route.FN.001".to_string(),
            ),
            ("Sys.SY.001".into(), RelType::Compose, "Fleet.UC.001".into()),
            ("Sys.SY.001".into(), RelType::Compose, "Route.FN.002".into()),
        ];
        for edges in [
            "Sys -cp-> Fleet, Route.FN.002\nFleet -cp-> Route.FN.001\n",
            "Sys.SY.001 -cp-> Fleet.UC.001, Route.FN.002\nFleet.UC.001 -cp-> Route.FN.001\n",
            "Sys -cp-> Fleet\nSys.SY.001 -cp-> Route.FN.002\nFleet -compose-> Route.FN.001\n",
        ] {
            let p = parse(&format!("{DOC}\n## Edges\n{edges}")).unwrap();
            assert_eq!(edge_set(&p), want, "{edges}");
        }
        // A name may come before its node line.
        let p = parse(
            "## Edges\nSys -cp-> Fleet\n## Nodes\nSys|SYS|Sys.SY.001|s\nFleet|UC|Fleet.UC.001|f\n",
        )
        .unwrap();
        assert_eq!(p.edges[0].src, "Sys.SY.001");
        // A semantic ID without a node line is the caller's to resolve.
        let p = parse(&format!("{DOC}## Edges\nSys -cp-> Elsewhere.UC.007\n")).unwrap();
        assert_eq!(p.edges[0].dst, "Elsewhere.UC.007");
    }

    #[test]
    fn unknown_and_ambiguous_endpoints_name_their_line() {
        let err = parse(&format!(
            "{DOC}\n## Edges\nSys -cp-> Fleet\nSys -cp-> Nowhere\n"
        ))
        .unwrap_err();
        assert_eq!(err.line, 9, "{err}");
        assert!(
            err.message.contains("`Nowhere` is neither a semantic ID"),
            "{err}"
        );
        let err = parse(&format!("{DOC}## Edges\nFleet -cp-> Route\n")).unwrap_err();
        assert_eq!(err.line, 7, "{err}");
        assert!(
            err.message
                .contains("`Route` is the name of the node lines 4, 5"),
            "{err}"
        );
        // A malformed semantic ID is not a name either.
        let err = parse(&format!("{DOC}## Edges\nSys -cp-> Fleet.UC.1\n")).unwrap_err();
        assert!(err.message.contains("`Fleet.UC.1`"), "{err}");
    }

    #[test]
    fn names_without_a_node_line_go_to_the_caller() {
        let g = graph(
            &[
                ("Sys", "Sys.SY.001"),
                ("Twin", "Twin.UC.001"),
                ("Twin", "Twin.UC.002"),
                ("Solo", "Solo.UC.003"),
            ],
            &[],
        );
        let names = NameIndex::new(&g);
        let outside = |n: &str| names.semantic_id(&g, n);
        let p = parse_with("## Edges\nSys -cp-> Solo\n", &outside).unwrap();
        assert_eq!(
            (p.edges[0].src.as_str(), p.edges[0].dst.as_str()),
            ("Sys.SY.001", "Solo.UC.003")
        );
        let err = parse_with("## Edges\nSys -cp-> Twin\n", &outside).unwrap_err();
        assert!(
            err.message.contains("`Twin` is the name of 2 nodes"),
            "{err}"
        );
        assert_eq!(err.line, 2);
        // A node line of the text wins over the graph.
        let p = parse_with(
            "## Nodes\nTwin|UC|Twin.UC.009|new\n## Edges\nSys -cp-> Twin\n",
            &outside,
        )
        .unwrap();
        assert_eq!(p.edges[0].dst, "Twin.UC.009");
    }

    #[test]
    fn emit_then_parse_gives_the_graph_back() {
        let g = graph(
            &[
                ("Sys", "Sys.SY.001"),
                ("Dup", "Dup.UC.001"),
                ("Dup", "Dup.UC.002"),
                ("With space", "WithSpace.UC.003"),
                ("Solo", "Solo.FN.001"),
            ],
            &[
                (0, RelType::Compose, 1),
                (0, RelType::Compose, 2),
                (0, RelType::Compose, 3),
                (1, RelType::Compose, 4),
                (3, RelType::Trace, 4),
                (4, RelType::Trace, 3),
            ],
        );
        let text = emit(&g, EmitOptions::default());
        let p = parse(&text).unwrap();
        let mut sids: Vec<&str> = p
            .nodes
            .iter()
            .map(|n| n.node.semantic_id.as_str())
            .collect();
        sids.sort();
        let mut want: Vec<&str> = g.nodes.values().map(|n| n.semantic_id.as_str()).collect();
        want.sort();
        assert_eq!(sids, want);
        let mut edges: Vec<(String, RelType, String)> = g
            .edges
            .values()
            .map(|e| {
                (
                    g.nodes[&e.src].semantic_id.clone(),
                    e.rel,
                    g.nodes[&e.dst].semantic_id.clone(),
                )
            })
            .collect();
        edges.sort();
        assert_eq!(edge_set(&p), edges);
    }
}
