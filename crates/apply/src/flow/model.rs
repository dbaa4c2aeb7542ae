//! The flow graph as the tools and the model see it: nodes with a label, a
//! description and a position, edges with a label, and the visual settings
//! of the canvas that shows them.
//!
//! Two JSON shapes exist on purpose. The compact one (`Flow`'s serde form:
//! `{nodes: [{id, label, description, position}], edges: [{id, source,
//! target, label}]}`) is what the model reads and what undo snapshots hold;
//! the React Flow one (`data.label`, `data.description`) is what
//! `flow export` writes, because that is what a React Flow front end loads.
//! `flow import` accepts both.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::FlowError;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowNode {
    pub id: String,
    pub label: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub position: Position,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowEdge {
    pub id: String,
    pub source: String,
    pub target: String,
    #[serde(default)]
    pub label: String,
}

/// Nodes and edges, in the order they were added.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Flow {
    #[serde(default)]
    pub nodes: Vec<FlowNode>,
    #[serde(default)]
    pub edges: Vec<FlowEdge>,
}

impl Flow {
    pub fn node(&self, id: &str) -> Option<&FlowNode> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn node_mut(&mut self, id: &str) -> Option<&mut FlowNode> {
        self.nodes.iter_mut().find(|n| n.id == id)
    }

    pub fn edge(&self, id: &str) -> Option<&FlowEdge> {
        self.edges.iter().find(|e| e.id == id)
    }

    pub fn edge_mut(&mut self, id: &str) -> Option<&mut FlowEdge> {
        self.edges.iter_mut().find(|e| e.id == id)
    }

    /// The React Flow document `flow export` writes (visual settings
    /// included under `visualSettings`).
    pub fn to_react_flow(&self, visuals: &VisualSettings) -> Value {
        let nodes: Vec<Value> = self
            .nodes
            .iter()
            .map(|n| {
                json!({
                    "id": n.id,
                    "type": "default",
                    "position": {"x": n.position.x, "y": n.position.y},
                    "data": {"label": n.label, "description": n.description},
                })
            })
            .collect();
        let edges: Vec<Value> = self
            .edges
            .iter()
            .map(|e| {
                json!({
                    "id": e.id,
                    "source": e.source,
                    "target": e.target,
                    "data": {"label": e.label},
                })
            })
            .collect();
        json!({"nodes": nodes, "edges": edges, "visualSettings": visuals})
    }

    /// Read a flow from either JSON shape. Every node needs an `id` and a
    /// label; ids must be unique; edges must join existing nodes. Visual
    /// settings come back when the document has `visualSettings`.
    pub fn from_json(doc: &Value) -> Result<(Flow, Option<VisualSettings>), FlowError> {
        let bad = |m: String| FlowError::InvalidFlow(m);
        let obj = doc.as_object().ok_or_else(|| {
            bad("the document must be a JSON object with `nodes` and `edges`".into())
        })?;
        let mut flow = Flow::default();
        for (i, n) in array(obj, "nodes")?.iter().enumerate() {
            let o = n
                .as_object()
                .ok_or_else(|| bad(format!("nodes[{i}] is not an object")))?;
            let id = text(o, "id").ok_or_else(|| bad(format!("nodes[{i}] has no string `id`")))?;
            if id.trim().is_empty() {
                return Err(bad(format!("nodes[{i}] has an empty `id`")));
            }
            let data = o.get("data").and_then(Value::as_object);
            let label = text(o, "label")
                .or_else(|| data.and_then(|d| text(d, "label")))
                .ok_or_else(|| bad(format!("node {id} has no label (`label` or `data.label`)")))?;
            let description = text(o, "description")
                .or_else(|| data.and_then(|d| text(d, "description")))
                .unwrap_or_default();
            let position = match o.get("position") {
                None | Some(Value::Null) => Position::default(),
                Some(p) => position_of(p)
                    .ok_or_else(|| bad(format!("node {id}: `position` needs numbers x and y")))?,
            };
            if flow.node(&id).is_some() {
                return Err(bad(format!("node id {id} appears twice")));
            }
            flow.nodes.push(FlowNode {
                id,
                label,
                description,
                position,
            });
        }
        for (i, e) in array(obj, "edges")?.iter().enumerate() {
            let o = e
                .as_object()
                .ok_or_else(|| bad(format!("edges[{i}] is not an object")))?;
            let source = text(o, "source")
                .ok_or_else(|| bad(format!("edges[{i}] has no string `source`")))?;
            let target = text(o, "target")
                .ok_or_else(|| bad(format!("edges[{i}] has no string `target`")))?;
            for end in [&source, &target] {
                if flow.node(end).is_none() {
                    return Err(bad(format!(
                        "edges[{i}] refers to node {end}, which does not exist"
                    )));
                }
            }
            let id = text(o, "id").unwrap_or_else(|| format!("e_{source}_{target}"));
            if flow.edge(&id).is_some() {
                return Err(bad(format!("edge id {id} appears twice")));
            }
            let label = text(o, "label")
                .or_else(|| {
                    o.get("data")
                        .and_then(Value::as_object)
                        .and_then(|d| text(d, "label"))
                })
                .unwrap_or_default();
            flow.edges.push(FlowEdge {
                id,
                source,
                target,
                label,
            });
        }
        let visuals = match obj.get("visualSettings") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                serde_json::from_value(v.clone())
                    .map_err(|e| bad(format!("visualSettings: {e}")))?,
            ),
        };
        Ok((flow, visuals))
    }
}

fn array<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], FlowError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(FlowError::InvalidFlow(format!("`{key}` must be an array"))),
    }
}

fn text(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key).and_then(Value::as_str).map(str::to_string)
}

pub(crate) fn position_of(v: &Value) -> Option<Position> {
    let o = v.as_object()?;
    let x = o.get("x")?.as_f64()?;
    let y = o.get("y")?.as_f64()?;
    (x.is_finite() && y.is_finite()).then_some(Position { x, y })
}

/// Colours of nodes: the global ones, or one node's override (absent
/// fields fall back to the global colour).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeColors {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub border: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl NodeColors {
    pub fn is_empty(&self) -> bool {
        self.background.is_none() && self.border.is_none() && self.text.is_none()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Size {
    pub width: f64,
    pub height: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DagreSpacing {
    /// Horizontal gap between nodes of one rank.
    pub nodesep: f64,
    /// Vertical gap between ranks.
    pub ranksep: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Dimensions {
    pub node: Size,
    pub node_overrides: BTreeMap<String, Size>,
    pub zoom: f64,
    pub dagre: DagreSpacing,
    pub fit_view_padding: f64,
}

impl Default for Dimensions {
    fn default() -> Self {
        Dimensions {
            node: Size {
                width: 172.0,
                height: 36.0,
            },
            node_overrides: BTreeMap::new(),
            zoom: 1.0,
            dagre: DagreSpacing {
                nodesep: 50.0,
                ranksep: 50.0,
            },
            fit_view_padding: 0.25,
        }
    }
}

impl Dimensions {
    /// A node's size: its override, else the default.
    pub fn size_of(&self, id: &str) -> Size {
        self.node_overrides.get(id).copied().unwrap_or(self.node)
    }
}

/// Everything about how the flow is drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct VisualSettings {
    /// A CSS colour or gradient.
    pub background: String,
    pub node_colors: NodeColors,
    pub node_overrides: BTreeMap<String, NodeColors>,
    pub dimensions: Dimensions,
}

impl Default for VisualSettings {
    fn default() -> Self {
        VisualSettings {
            background: "#ffffff".into(),
            node_colors: NodeColors {
                background: Some("#ffffff".into()),
                border: Some("#1a192b".into()),
                text: Some("#222222".into()),
            },
            node_overrides: BTreeMap::new(),
            dimensions: Dimensions::default(),
        }
    }
}
