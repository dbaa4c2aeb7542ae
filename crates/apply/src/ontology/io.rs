//! Import and export of ontology graphs: JSON in the seeds' shape and
//! Format E, both ways.
//!
//! JSON follows seed 000's `OntologyNode` / `OntologyRelationship`:
//!
//! ```json
//! {"nodes": [{"uuid": "…", "type": "UC", "semanticId": "ManageFleet.UC.001",
//!             "properties": {"Name": "ManageFleet", "Descr": "…", "position": {"x": 1, "y": 2}, "…": "…"}}],
//!  "relationships": [{"uuid": "…", "type": "compose", "source": "<uuid>", "target": "<uuid>", "properties": {}}]}
//! ```
//!
//! Imports go through an [`OntoTx`], so they keep every storage invariant
//! and land in one transaction or not at all: the first bad node, edge or
//! line aborts the import with an error naming it. Nodes are matched by
//! UUID, then by semantic ID; everything else is created. With `replace`,
//! nodes and edges the input does not mention are deleted, so the graph
//! becomes exactly the input.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::format_e::{self, EmitOptions, FormatEError};
use super::store::OntoTx;
use super::{
    sanitize, EdgeKey, NameIndex, NodeType, OntoEdge, OntoNode, OntologyError, OntologyGraph,
    Position, RelType,
};

/// Interchange formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    E,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "e" | "format-e" | "formate" => Some(Format::E),
            _ => None,
        }
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(transparent)]
    FormatE(#[from] FormatEError),
    #[error("JSON input is not valid JSON: {0}")]
    Syntax(String),
    #[error("JSON {at}: {message}")]
    Json { at: String, message: String },
    #[error("{at}: {source}")]
    Model {
        at: String,
        #[source]
        source: OntologyError,
    },
}

/// A node as seed 000's `OntologyNode` (sanitised: see [`sanitize`]).
pub fn node_json(n: &OntoNode) -> Value {
    let mut props = Map::new();
    props.insert("Name".into(), sanitize::text(&n.name).into());
    props.insert("Descr".into(), sanitize::text(&n.descr).into());
    for (k, v) in sanitize::props(&n.props) {
        props.insert(k, v);
    }
    if let Some(p) = n.position {
        props.insert("position".into(), json!({"x": p.x, "y": p.y}));
    }
    json!({
        "uuid": n.uuid,
        "type": n.node_type.name(),
        "semanticId": n.semantic_id,
        "properties": props,
    })
}

pub fn edge_json(e: &OntoEdge) -> Value {
    json!({
        "uuid": e.uuid,
        "type": e.rel.name(),
        "source": e.src,
        "target": e.dst,
        "properties": sanitize::props(&e.props),
    })
}

/// The whole graph as JSON.
pub fn export_json(g: &OntologyGraph) -> Value {
    json!({
        "nodes": g.nodes_ordered().into_iter().map(node_json).collect::<Vec<_>>(),
        "relationships": g.edges_ordered().into_iter().map(edge_json).collect::<Vec<_>>(),
    })
}

/// Export as text: pretty JSON or Format E.
pub fn export(g: &OntologyGraph, format: Format) -> String {
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&export_json(g)).unwrap_or_default();
            s.push('\n');
            s
        }
        Format::E => format_e::emit(g, EmitOptions::default()),
    }
}

/// Import text in `format` into the transaction's graph.
pub fn import(
    tx: &mut OntoTx,
    text: &str,
    format: Format,
    replace: bool,
) -> Result<(), ImportError> {
    match format {
        Format::Json => {
            let v: Value =
                serde_json::from_str(text).map_err(|e| ImportError::Syntax(e.to_string()))?;
            import_json(tx, &v, replace)
        }
        Format::E => import_format_e(tx, text, replace),
    }
}

fn model(at: String) -> impl FnOnce(OntologyError) -> ImportError {
    move |source| ImportError::Model { at, source }
}

/// Import seed-shaped JSON (see the module doc). `relationships` may also
/// be called `edges`; a node's fields may sit in `properties` or `data`;
/// edge ends may be UUIDs or semantic IDs (`source`/`sourceUuid`/
/// `sourceSemanticId`, likewise `target`).
pub fn import_json(tx: &mut OntoTx, v: &Value, replace: bool) -> Result<(), ImportError> {
    let (nodes, edges) = top_level_arrays(v)?;
    let mut kept_nodes = BTreeSet::new();
    let mut kept_edges = BTreeSet::new();
    for (i, n) in nodes.iter().enumerate() {
        kept_nodes.insert(import_node(tx, i, n)?);
    }
    for (i, e) in edges.iter().enumerate() {
        kept_edges.insert(import_edge(tx, i, e)?);
    }
    if replace {
        prune(tx, &kept_nodes, &kept_edges);
    }
    Ok(())
}

/// An error in the JSON's shape at `at`.
fn json_error(at: String, message: &str) -> ImportError {
    ImportError::Json {
        at,
        message: message.to_string(),
    }
}

/// The `nodes` and `relationships` (or `edges`) arrays of the top-level
/// object; a missing one is empty.
fn top_level_arrays(v: &Value) -> Result<(&[Value], &[Value]), ImportError> {
    let obj = v.as_object().ok_or_else(|| {
        json_error(
            "top level".into(),
            "expected an object with `nodes` and `relationships`",
        )
    })?;
    let nodes: &[Value] = match obj.get("nodes") {
        Some(Value::Array(a)) => a,
        None => &[],
        Some(_) => return Err(json_error("nodes".into(), "expected an array")),
    };
    let edges: &[Value] = match obj.get("relationships").or_else(|| obj.get("edges")) {
        Some(Value::Array(a)) => a,
        None => &[],
        Some(_) => return Err(json_error("relationships".into(), "expected an array")),
    };
    Ok((nodes, edges))
}

/// Upsert the node `nodes[i]` describes — the existing node of its semantic
/// ID when it names no UUID; its UUID.
fn import_node(tx: &mut OntoTx, i: usize, n: &Value) -> Result<String, ImportError> {
    let at = format!("nodes[{i}]");
    let (mut node, sid) = node_of(n, &at)?;
    if let Some(sid) = sid {
        if node.uuid.is_empty() {
            if let Some(existing) = tx.graph().uuid_of(&sid) {
                node.uuid = existing.to_string();
            }
        }
        node.semantic_id = sid;
    }
    let change = tx.upsert_node(node).map_err(model(at))?;
    Ok(change.after.uuid)
}

/// The node a JSON node object describes (type, name, description, free
/// properties, position, UUID), and the semantic ID it gives.
fn node_of(n: &Value, at: &str) -> Result<(OntoNode, Option<String>), ImportError> {
    let n = n
        .as_object()
        .ok_or_else(|| json_error(at.to_string(), "expected an object"))?;
    let ty = n
        .get("type")
        .or_else(|| n.get("nodeType"))
        .and_then(Value::as_str)
        .ok_or_else(|| json_error(at.to_string(), "missing `type`"))?;
    let node_type = NodeType::parse(ty).map_err(model(at.to_string()))?;
    let mut props = match n.get("properties").or_else(|| n.get("data")) {
        Some(Value::Object(m)) => m.clone(),
        None => Map::new(),
        Some(_) => return Err(json_error(at.to_string(), "`properties` must be an object")),
    };
    let name = take_str(&mut props, "Name")
        .or_else(|| n.get("Name").and_then(Value::as_str).map(str::to_string))
        .ok_or_else(|| json_error(at.to_string(), "missing `properties.Name`"))?;
    let descr = take_str(&mut props, "Descr")
        .or_else(|| n.get("Descr").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_default();
    let sid = take_str(&mut props, "semanticId").or_else(|| {
        n.get("semanticId")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let position = position_of(&mut props, n, at)?;
    let uuid = match n.get("uuid").or_else(|| n.get("id")) {
        Some(Value::String(u)) => u.clone(),
        None | Some(Value::Null) => String::new(),
        Some(_) => return Err(json_error(at.to_string(), "`uuid` must be a string")),
    };
    let mut node = OntoNode::new(node_type, &name, &descr);
    node.props = props;
    node.position = position;
    node.uuid = uuid;
    Ok((node, sid))
}

/// A node's `position`, taken out of its properties (or read from the node
/// object); `null` or absent is none.
fn position_of(
    props: &mut Map<String, Value>,
    n: &Map<String, Value>,
    at: &str,
) -> Result<Option<Position>, ImportError> {
    match props
        .remove("position")
        .or_else(|| n.get("position").cloned())
    {
        None | Some(Value::Null) => Ok(None),
        Some(p) => Ok(Some(serde_json::from_value::<Position>(p).map_err(
            |_| {
                json_error(
                    at.to_string(),
                    "`position` must be {\"x\": number, \"y\": number}",
                )
            },
        )?)),
    }
}

/// Upsert the edge `relationships[i]` describes (ends by UUID or semantic
/// ID); its key.
fn import_edge(tx: &mut OntoTx, i: usize, e: &Value) -> Result<EdgeKey, ImportError> {
    let at = format!("relationships[{i}]");
    let e = e
        .as_object()
        .ok_or_else(|| json_error(at.clone(), "expected an object"))?;
    let ty = e
        .get("type")
        .or_else(|| e.get("relType"))
        .and_then(Value::as_str)
        .ok_or_else(|| json_error(at.clone(), "missing `type`"))?;
    let rel = RelType::parse(ty).map_err(model(at.clone()))?;
    let end = |names: &[&str]| {
        names
            .iter()
            .find_map(|k| e.get(*k).and_then(Value::as_str))
            .map(str::to_string)
    };
    let src = end(&["source", "sourceUuid", "sourceSemanticId"])
        .ok_or_else(|| json_error(at.clone(), "missing `source`"))?;
    let dst = end(&["target", "targetUuid", "targetSemanticId"])
        .ok_or_else(|| json_error(at.clone(), "missing `target`"))?;
    let props = match e.get("properties") {
        Some(Value::Object(m)) => m.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(json_error(at, "`properties` must be an object")),
    };
    let mut edge = OntoEdge::new(&src, rel, &dst);
    edge.props = props;
    edge.uuid = match e.get("uuid") {
        Some(Value::String(u)) => Some(u.clone()),
        None | Some(Value::Null) => None,
        Some(_) => return Err(json_error(at, "`uuid` must be a string")),
    };
    let change = tx.upsert_edge(edge).map_err(model(at))?;
    Ok(change.after.key())
}

fn take_str(m: &mut Map<String, Value>, key: &str) -> Option<String> {
    match m.get(key) {
        Some(Value::String(_)) => m.remove(key).and_then(|v| v.as_str().map(str::to_string)),
        _ => None,
    }
}

/// Import Format E. Nodes are matched by semantic ID (new ones keep the
/// ID they carry); edge ends must be nodes of the text or of the graph:
/// a semantic ID, the name of one node line of the text, or else the name
/// of one node of the graph.
pub fn import_format_e(tx: &mut OntoTx, text: &str, replace: bool) -> Result<(), ImportError> {
    let parsed = {
        let g = tx.graph();
        let names = NameIndex::new(g);
        format_e::parse_with(text, &|name: &str| names.semantic_id(g, name))?
    };
    let line_err = |line: usize, e: OntologyError| {
        ImportError::FormatE(FormatEError {
            line,
            message: e.to_string(),
        })
    };
    let mut kept_nodes = BTreeSet::new();
    let mut kept_edges = BTreeSet::new();
    for p in parsed.nodes {
        let mut node = p.node;
        if let Some(existing) = tx.graph().uuid_of(&node.semantic_id) {
            node.uuid = existing.to_string();
        }
        let change = tx.upsert_node(node).map_err(|e| line_err(p.line, e))?;
        kept_nodes.insert(change.after.uuid);
    }
    for e in parsed.edges {
        let mut edge = OntoEdge::new(&e.src, e.rel, &e.dst);
        edge.props = e.props;
        let change = tx.upsert_edge(edge).map_err(|err| line_err(e.line, err))?;
        kept_edges.insert(change.after.key());
    }
    for e in parsed.deleted_edges {
        if let (Ok(s), Ok(d)) = (tx.resolve(&e.src), tx.resolve(&e.dst)) {
            let _ = tx.delete_edge(&s, e.rel, &d);
        }
    }
    for (_, sid) in parsed.deleted_nodes {
        if tx.graph().uuid_of(&sid).is_some() {
            let _ = tx.delete_node(&sid);
        }
    }
    if replace {
        prune(tx, &kept_nodes, &kept_edges);
    }
    Ok(())
}

/// Delete what the input did not mention.
fn prune(tx: &mut OntoTx, nodes: &BTreeSet<String>, edges: &BTreeSet<EdgeKey>) {
    let stale_edges: Vec<EdgeKey> = tx
        .graph()
        .edges
        .keys()
        .filter(|k| !edges.contains(*k))
        .cloned()
        .collect();
    for (s, r, d) in stale_edges {
        let _ = tx.delete_edge(&s, r, &d);
    }
    let stale_nodes: Vec<String> = tx
        .graph()
        .nodes
        .keys()
        .filter(|u| !nodes.contains(*u))
        .cloned()
        .collect();
    for u in stale_nodes {
        let _ = tx.delete_node(&u);
    }
}
