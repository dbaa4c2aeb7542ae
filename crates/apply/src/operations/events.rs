//! View updates for the three canvases, in seed 001 §8's shapes, streamed
//! as JSON lines.
//!
//! Lines, in order:
//! 1. `{"view":"chat","update":{"type":"message","sender":"assistant",...}}`
//!    — the response's text with the counts of what was done (§8.1);
//! 2. per chunk, in chunk order: `{"view":"text",...,"updates":[row-add |
//!    row-update | row-delete ...]}` (§8.2) and `{"view":"graph",...,
//!    "updates":[node-add | node-update | node-delete | edge-add |
//!    edge-update | edge-delete ...]}` (§8.3), each with `chunk`, `chunks`,
//!    `progress` ("Chunk 1/2") and the chunk's `operations`; a view without
//!    updates in a chunk gets no line;
//! 3. `{"summary":{...}}`.
//!
//! When: after the transaction commits, chunk by chunk (see
//! [`super::apply`]). A UI that draws chunk 1 then never has to take it
//! back because chunk 3 failed.

use serde_json::{json, Map, Value};

/// A node as the views show it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeView {
    pub uuid: String,
    pub node_type: String,
    pub semantic_id: String,
    pub name: String,
    pub descr: String,
    pub props: Map<String, Value>,
    pub position: Option<(f64, f64)>,
}

/// An edge as the views show it.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeView {
    pub uuid: String,
    /// The relationship's name (`compose`, `io`, ...).
    pub rel: String,
    pub source_uuid: String,
    pub target_uuid: String,
    pub props: Map<String, Value>,
}

impl NodeView {
    /// The text canvas row: `uuid`, `Name`, `Descr`, then `semanticId` and
    /// the type-specific properties.
    fn row(&self) -> Value {
        let mut m = Map::new();
        m.insert("uuid".into(), json!(self.uuid));
        m.insert("Name".into(), json!(self.name));
        m.insert("Descr".into(), json!(self.descr));
        m.insert("semanticId".into(), json!(self.semantic_id));
        for (k, v) in &self.props {
            m.entry(k.clone()).or_insert_with(|| v.clone());
        }
        Value::Object(m)
    }

    fn graph_node(&self) -> Value {
        let mut m = Map::new();
        m.insert("uuid".into(), json!(self.uuid));
        m.insert("type".into(), json!(self.node_type));
        m.insert("Name".into(), json!(self.name));
        m.insert("semanticId".into(), json!(self.semantic_id));
        if let Some((x, y)) = self.position {
            m.insert("position".into(), json!({"x": x, "y": y}));
        }
        Value::Object(m)
    }
}

impl EdgeView {
    fn graph_edge(&self) -> Value {
        let mut m = Map::new();
        m.insert("uuid".into(), json!(self.uuid));
        m.insert("type".into(), json!(self.rel));
        m.insert("sourceUuid".into(), json!(self.source_uuid));
        m.insert("targetUuid".into(), json!(self.target_uuid));
        if !self.props.is_empty() {
            m.insert("properties".into(), Value::Object(self.props.clone()));
        }
        Value::Object(m)
    }
}

/// The updates one chunk produced, per view.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkUpdates {
    pub index: usize,
    pub operations: Vec<String>,
    pub text: Vec<Value>,
    pub graph: Vec<Value>,
}

impl ChunkUpdates {
    pub fn new(index: usize) -> ChunkUpdates {
        ChunkUpdates {
            index,
            ..ChunkUpdates::default()
        }
    }

    pub fn node_added(&mut self, n: &NodeView) {
        self.text
            .push(json!({"type": "row-add", "table": n.node_type, "data": n.row()}));
        self.graph
            .push(json!({"type": "node-add", "node": n.graph_node()}));
    }

    pub fn node_updated(&mut self, n: &NodeView) {
        self.text
            .push(json!({"type": "row-update", "table": n.node_type, "data": n.row()}));
        self.graph
            .push(json!({"type": "node-update", "node": n.graph_node()}));
    }

    pub fn node_deleted(&mut self, n: &NodeView) {
        self.text
            .push(json!({"type": "row-delete", "table": n.node_type, "data": n.row()}));
        self.graph
            .push(json!({"type": "node-delete", "node": n.graph_node()}));
    }

    pub fn edge_added(&mut self, e: &EdgeView) {
        self.graph
            .push(json!({"type": "edge-add", "edge": e.graph_edge()}));
    }

    pub fn edge_updated(&mut self, e: &EdgeView) {
        self.graph
            .push(json!({"type": "edge-update", "edge": e.graph_edge()}));
    }

    pub fn edge_deleted(&mut self, e: &EdgeView) {
        self.graph
            .push(json!({"type": "edge-delete", "edge": e.graph_edge()}));
    }

    /// The JSON lines of this chunk (text view first, then graph view).
    pub fn lines(&self, chunks: usize) -> Vec<Value> {
        let mut out = Vec::new();
        for (view, updates) in [("text", &self.text), ("graph", &self.graph)] {
            if updates.is_empty() {
                continue;
            }
            out.push(json!({
                "view": view,
                "chunk": self.index,
                "chunks": chunks,
                "progress": format!("Chunk {}/{}", self.index + 1, chunks),
                "operations": self.operations,
                "updates": updates,
            }));
        }
        out
    }
}

/// Counts for the chat message's `metadata` and the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    pub operations_executed: usize,
    pub nodes_created: usize,
    pub nodes_updated: usize,
    pub nodes_deleted: usize,
    pub relationships_created: usize,
    pub relationships_updated: usize,
    pub relationships_deleted: usize,
}

/// The chat canvas line (§8.1).
pub fn chat_line(text: &str, counts: &Counts, timestamp: &str) -> Value {
    json!({
        "view": "chat",
        "update": {
            "type": "message",
            "sender": "assistant",
            "content": text,
            "timestamp": timestamp,
            "metadata": {
                "operationsExecuted": counts.operations_executed,
                "nodesCreated": counts.nodes_created,
                "relationshipsCreated": counts.relationships_created,
            },
        },
    })
}
