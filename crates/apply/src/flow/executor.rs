//! Running tool calls against a flow graph.
//!
//! A [`FlowSession`] loads the graph once, runs the calls of one answer in
//! order — each sees the state the previous ones left, so a node created by
//! the first call can be the parent of the second — and lands everything
//! the answer changed in one transaction with [`FlowSession::commit`]:
//! node and edge rows, visual settings, the undo snapshot, the exchange
//! with the model, and the graph's `seq`.
//!
//! Every parameter is checked before a call touches the state; a failed
//! call changes nothing and reports why (`{success: false, error}`), and
//! the calls after it still run. The retry loop shows those errors to the
//! model.
//!
//! Undo is snapshot based: the edits of one answer become one snapshot, so
//! `undo` reverts a whole answer. An `undo` or `redo` in the middle of an
//! answer first closes the snapshot of the edits before it. Visual settings
//! are not part of undo (as in the seed).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::store::{Batch, GraphChange, Store};

use super::model::{Flow, FlowEdge, FlowNode, NodeColors, Position, Size, VisualSettings};
use super::store::{self as fstore, Stored, UndoPos, UNDO_LIMIT};
use super::{history, tools, FlowError};

/// Longest label and description accepted.
const MAX_LABEL: usize = 500;
const MAX_DESCRIPTION: usize = 5000;

/// One tool call, from a native `tool_calls` entry or the `<response>` array.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    pub params: Value,
}

impl ToolCall {
    pub fn new(name: &str, params: Value) -> ToolCall {
        ToolCall {
            id: None,
            name: name.to_string(),
            params,
        }
    }
}

/// The seed's result object.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_flow: Option<Flow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visual_settings: Option<VisualSettings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A call with its result and, when it changed something, one line
/// saying what.
#[derive(Debug, Clone, Serialize)]
pub struct Executed {
    pub name: String,
    pub params: Value,
    pub result: ToolResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<String>,
}

/// What a commit landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Committed {
    /// Whether the flow or its visual settings changed.
    pub changed: bool,
    /// The graph's `seq` after the commit.
    pub seq: i64,
}

/// A flow graph loaded for one answer's calls.
pub struct FlowSession<'s> {
    store: &'s Store,
    graph: String,
    stored: Stored,
    flow: Flow,
    visuals: VisualSettings,
    undo: Option<UndoPos>,
    /// Snapshots read or written in this session, by index.
    snapshots: BTreeMap<i64, Flow>,
    new_snapshots: BTreeSet<i64>,
    dropped_snapshots: BTreeSet<i64>,
    /// The flow has edits not yet in a snapshot.
    dirty: bool,
    /// The flow the current snapshot holds (the state edits started from).
    baseline: Flow,
    messages: Vec<(String, String)>,
}

/// A call's effect: the result fields and the change line.
struct Effect {
    result: ToolResult,
    change: String,
}

type Outcome = Result<Effect, String>;

impl<'s> FlowSession<'s> {
    /// Load `graph` (empty when it does not exist yet).
    pub fn open(store: &'s Store, graph: &str) -> Result<FlowSession<'s>, FlowError> {
        let stored = fstore::load(store, graph)?;
        Ok(FlowSession {
            store,
            graph: graph.to_string(),
            flow: stored.flow.clone(),
            visuals: stored.visuals.clone(),
            undo: stored.undo,
            snapshots: BTreeMap::new(),
            new_snapshots: BTreeSet::new(),
            dropped_snapshots: BTreeSet::new(),
            dirty: false,
            baseline: stored.flow.clone(),
            stored,
            messages: Vec::new(),
        })
    }

    pub fn graph(&self) -> &str {
        &self.graph
    }

    pub fn flow(&self) -> &Flow {
        &self.flow
    }

    pub fn visuals(&self) -> &VisualSettings {
        &self.visuals
    }

    /// `seq` of the graph as loaded (`None`: it does not exist yet).
    pub fn loaded_seq(&self) -> Option<i64> {
        self.stored.seq
    }

    /// Replace the whole flow (an import): one undoable edit.
    pub fn replace(&mut self, flow: Flow, visuals: Option<VisualSettings>) {
        if flow != self.flow {
            self.flow = flow;
            self.dirty = true;
        }
        if let Some(v) = visuals {
            self.visuals = v;
        }
    }

    /// Store an exchange (user turn, model answer) with this commit.
    pub fn record_exchange(&mut self, user: &str, assistant: &str) {
        self.messages.push(("user".into(), user.to_string()));
        self.messages
            .push(("assistant".into(), assistant.to_string()));
    }

    /// Run calls in order, each on the state the previous ones left.
    pub fn execute(&mut self, calls: &[ToolCall]) -> Result<Vec<Executed>, FlowError> {
        calls.iter().map(|c| self.execute_one(c)).collect()
    }

    /// Run one call. Tool errors are results; only storage errors (an
    /// undo snapshot that cannot be read) are `Err`.
    pub fn execute_one(&mut self, call: &ToolCall) -> Result<Executed, FlowError> {
        let outcome = match call.name.as_str() {
            "undo" => self.undo_redo(&call.params, true)?,
            "redo" => self.undo_redo(&call.params, false)?,
            _ => self.run(call),
        };
        let (result, change) = match outcome {
            Ok(e) => (e.result, Some(e.change)),
            Err(error) => (
                ToolResult {
                    success: false,
                    error: Some(error),
                    ..ToolResult::default()
                },
                None,
            ),
        };
        Ok(Executed {
            name: call.name.clone(),
            params: call.params.clone(),
            result,
            change,
        })
    }

    fn run(&mut self, call: &ToolCall) -> Outcome {
        let name = call.name.as_str();
        if !tools::TOOL_NAMES.contains(&name) {
            return Err(format!(
                "Unknown tool {name} (available: {})",
                tools::TOOL_NAMES.join(", ")
            ));
        }
        let args = Args::new(name, &call.params)?;
        match name {
            "addNode" => self.add_node(&args),
            "updateNode" => self.update_node(&args),
            "deleteNode" => self.delete_node(&args),
            "addEdge" => self.add_edge(&args),
            "updateEdge" => self.update_edge(&args),
            "deleteEdge" => self.delete_edge(&args),
            "changeVisuals" => self.change_visuals(&args),
            "changeDimensions" => self.change_dimensions(&args),
            _ => Err(format!("Unknown tool {name}")),
        }
    }

    fn flow_effect(
        &mut self,
        node_id: Option<String>,
        edge_id: Option<String>,
        change: String,
    ) -> Outcome {
        self.dirty = true;
        Ok(Effect {
            result: ToolResult {
                success: true,
                node_id,
                edge_id,
                updated_flow: Some(self.flow.clone()),
                ..ToolResult::default()
            },
            change,
        })
    }

    fn visual_effect(&self, change: String) -> Outcome {
        Ok(Effect {
            result: ToolResult {
                success: true,
                visual_settings: Some(self.visuals.clone()),
                ..ToolResult::default()
            },
            change,
        })
    }

    /// A node by id, else by label (case-insensitive; the most recently
    /// added of equal labels), else by the id its label would make.
    fn resolve(&self, reference: &str) -> Option<String> {
        if self.flow.node(reference).is_some() {
            return Some(reference.to_string());
        }
        let wanted = reference.trim().to_lowercase();
        if let Some(n) = self
            .flow
            .nodes
            .iter()
            .rev()
            .find(|n| n.label.trim().to_lowercase() == wanted)
        {
            return Some(n.id.clone());
        }
        let derived = id_from_label(reference);
        self.flow.node(&derived).map(|n| n.id.clone())
    }

    fn existing_node(&self, id: &str) -> Result<(), String> {
        match self.flow.node(id) {
            Some(_) => Ok(()),
            None => Err(format!("Node {id} not found")),
        }
    }

    fn add_node(&mut self, a: &Args) -> Outcome {
        let label = a.label("label", MAX_LABEL)?;
        let description = a.opt_text("description", MAX_DESCRIPTION)?.unwrap_or("");
        let parent_ref = a.opt_str("parentNodeId")?;
        let edge_label = a.opt_text("edgeLabel", MAX_LABEL)?;
        let parent = match parent_ref {
            Some(p) => Some(
                self.resolve(p)
                    .ok_or_else(|| format!("Parent node {p} not found"))?,
            ),
            None => None,
        };
        if edge_label.is_some_and(|l| !l.is_empty()) && parent.is_none() {
            return Err(
                "edgeLabel needs parentNodeId (an edge is only created from a parent)".into(),
            );
        }
        let id = match a.opt_str("id")? {
            Some(id) => {
                check_id(id)?;
                if self.flow.node(id).is_some() {
                    return Err(format!("Node with ID {id} already exists"));
                }
                id.to_string()
            }
            None => self.free_node_id(&id_from_label(label)),
        };
        let position = self.place(parent.as_deref());
        self.flow.nodes.push(FlowNode {
            id: id.clone(),
            label: label.to_string(),
            description: description.to_string(),
            position,
        });
        let mut change = format!("added node {id} \"{label}\"");
        let edge_id = match &parent {
            Some(p) => {
                let eid = self.free_edge_id(p, &id);
                let l = edge_label.unwrap_or("");
                self.flow.edges.push(FlowEdge {
                    id: eid.clone(),
                    source: p.clone(),
                    target: id.clone(),
                    label: l.to_string(),
                });
                change.push_str(&format!(" after {p}"));
                if !l.is_empty() {
                    change.push_str(&format!(" (edge \"{l}\")"));
                }
                Some(eid)
            }
            None => None,
        };
        self.flow_effect(Some(id), edge_id, change)
    }

    fn update_node(&mut self, a: &Args) -> Outcome {
        let id = a.req_str("nodeId")?.to_string();
        let label = match a.opt_str("label")? {
            Some(_) => Some(a.label("label", MAX_LABEL)?.to_string()),
            None => None,
        };
        let description = a
            .opt_text("description", MAX_DESCRIPTION)?
            .map(str::to_string);
        let position = match a.get("position") {
            None => None,
            Some(v) => Some(super::model::position_of(v).ok_or_else(|| {
                "Parameter 'position' must be an object with numbers x and y".to_string()
            })?),
        };
        if label.is_none() && description.is_none() && position.is_none() {
            return Err("updateNode needs at least one of label, description, position".into());
        }
        let node = self
            .flow
            .node_mut(&id)
            .ok_or_else(|| format!("Node {id} not found"))?;
        let mut what = Vec::new();
        if let Some(l) = label {
            what.push(format!("label \"{l}\""));
            node.label = l;
        }
        if let Some(d) = description {
            what.push("description".to_string());
            node.description = d;
        }
        if let Some(p) = position {
            what.push(format!("position ({}, {})", p.x, p.y));
            node.position = p;
        }
        let change = format!("updated node {id}: {}", what.join(", "));
        self.flow_effect(Some(id), None, change)
    }

    fn delete_node(&mut self, a: &Args) -> Outcome {
        let id = a.req_str("nodeId")?.to_string();
        self.existing_node(&id)?;
        self.flow.nodes.retain(|n| n.id != id);
        let before = self.flow.edges.len();
        self.flow.edges.retain(|e| e.source != id && e.target != id);
        let removed = before - self.flow.edges.len();
        let change = match removed {
            0 => format!("deleted node {id}"),
            1 => format!("deleted node {id} and 1 edge"),
            n => format!("deleted node {id} and {n} edges"),
        };
        self.flow_effect(Some(id), None, change)
    }

    fn add_edge(&mut self, a: &Args) -> Outcome {
        let s = a.req_str("sourceNodeId")?;
        let t = a.req_str("targetNodeId")?;
        let label = a.opt_text("label", MAX_LABEL)?.unwrap_or("").to_string();
        let source = self
            .resolve(s)
            .ok_or_else(|| format!("Source node {s} not found"))?;
        let target = self
            .resolve(t)
            .ok_or_else(|| format!("Target node {t} not found"))?;
        if source == target {
            return Err(format!("Cannot connect node {source} to itself"));
        }
        if let Some(e) = self
            .flow
            .edges
            .iter()
            .find(|e| e.source == source && e.target == target)
        {
            return Err(format!(
                "Edge from {source} to {target} already exists (ID: {})",
                e.id
            ));
        }
        let id = self.free_edge_id(&source, &target);
        let mut change = format!("added edge {id}: {source} → {target}");
        if !label.is_empty() {
            change.push_str(&format!(" \"{label}\""));
        }
        self.flow.edges.push(FlowEdge {
            id: id.clone(),
            source,
            target,
            label,
        });
        self.flow_effect(None, Some(id), change)
    }

    fn update_edge(&mut self, a: &Args) -> Outcome {
        let id = a.req_str("edgeId")?.to_string();
        let label = a.text("label", MAX_LABEL)?.to_string();
        let edge = self
            .flow
            .edge_mut(&id)
            .ok_or_else(|| format!("Edge {id} not found"))?;
        edge.label = label.clone();
        let change = if label.is_empty() {
            format!("removed the label of edge {id}")
        } else {
            format!("labelled edge {id} \"{label}\"")
        };
        self.flow_effect(None, Some(id), change)
    }

    fn delete_edge(&mut self, a: &Args) -> Outcome {
        let id = a.req_str("edgeId")?.to_string();
        let edge = self
            .flow
            .edge(&id)
            .ok_or_else(|| format!("Edge {id} not found"))?;
        let change = format!("deleted edge {id}: {} → {}", edge.source, edge.target);
        self.flow.edges.retain(|e| e.id != id);
        self.flow_effect(None, Some(id), change)
    }

    fn undo_redo(&mut self, params: &Value, undo: bool) -> Result<Outcome, FlowError> {
        let name = if undo { "undo" } else { "redo" };
        if let Err(e) = Args::new(name, params) {
            return Ok(Err(e));
        }
        self.close_edits();
        let Some(pos) = self.undo else {
            return Ok(Err(format!("Nothing to {name}")));
        };
        let target = if undo {
            if pos.cur <= pos.base {
                return Ok(Err("Nothing to undo".into()));
            }
            pos.cur - 1
        } else {
            if pos.cur >= pos.top {
                return Ok(Err("Nothing to redo".into()));
            }
            pos.cur + 1
        };
        let flow = match self.snapshots.get(&target) {
            Some(f) => f.clone(),
            None => {
                let f = fstore::snapshot(self.store, &self.graph, target)?;
                self.snapshots.insert(target, f.clone());
                f
            }
        };
        self.flow = flow;
        self.undo = Some(UndoPos { cur: target, ..pos });
        let change = if undo {
            "undid the last change".to_string()
        } else {
            "redid the last undone change".to_string()
        };
        Ok(Ok(Effect {
            result: ToolResult {
                success: true,
                updated_flow: Some(self.flow.clone()),
                ..ToolResult::default()
            },
            change,
        }))
    }

    /// Close pending edits into a snapshot, unless they came back to where
    /// they started (an update to the same label is no change to undo).
    fn close_edits(&mut self) {
        if self.dirty && self.flow != self.baseline {
            self.push_snapshot();
        }
        self.dirty = false;
    }

    /// Close the pending edits into a snapshot: the redo stack above the
    /// current snapshot goes, the oldest beyond [`UNDO_LIMIT`] go.
    fn push_snapshot(&mut self) {
        let pos = match self.undo {
            Some(p) => p,
            None => {
                // The first snapshot of a graph: the state before these edits.
                let before = self.stored.flow.clone();
                self.snapshots.insert(0, before);
                self.new_snapshots.insert(0);
                UndoPos {
                    base: 0,
                    cur: 0,
                    top: 0,
                }
            }
        };
        for idx in pos.cur + 1..=pos.top {
            self.drop_snapshot(idx);
        }
        let cur = pos.cur + 1;
        self.snapshots.insert(cur, self.flow.clone());
        self.new_snapshots.insert(cur);
        self.dropped_snapshots.remove(&cur);
        let mut base = pos.base;
        while cur - base + 1 > UNDO_LIMIT {
            self.drop_snapshot(base);
            base += 1;
        }
        self.undo = Some(UndoPos {
            base,
            cur,
            top: cur,
        });
        self.dirty = false;
    }

    fn drop_snapshot(&mut self, idx: i64) {
        self.snapshots.remove(&idx);
        self.new_snapshots.remove(&idx);
        self.dropped_snapshots.insert(idx);
    }

    fn change_visuals(&mut self, a: &Args) -> Outcome {
        let target = a.choice("target", &["background", "allNodes", "node"])?;
        let property = a.opt_choice("property", &["background", "border", "text"])?;
        let reset = a.opt_bool("reset")?.unwrap_or(false);
        let color = a.opt_str("color")?;
        let node_id = a.opt_str("nodeId")?;
        if target != "node" && node_id.is_some() {
            return Err(format!(
                "nodeId is only used with target \"node\", not \"{target}\""
            ));
        }
        if reset {
            if target != "node" {
                return Err("reset is only used with target \"node\"".into());
            }
            if color.is_some() {
                return Err("Give either color or reset, not both".into());
            }
            let id = node_id.ok_or("Missing required parameter 'nodeId' for target \"node\"")?;
            self.existing_node(id)?;
            let Some(o) = self.visuals.node_overrides.get_mut(id) else {
                return Err(format!("Node {id} has no colour override to reset"));
            };
            match property {
                None => *o = NodeColors::default(),
                Some(p) => *colour_slot(o, p) = None,
            }
            if o.is_empty() {
                self.visuals.node_overrides.remove(id);
            }
            let what = property.map(|p| format!("{p} ")).unwrap_or_default();
            return self.visual_effect(format!("reset the {what}colour override of node {id}"));
        }
        let color = color.ok_or("Missing required parameter 'color'")?;
        let color = color.trim();
        match target {
            "background" => {
                if property.is_some() {
                    return Err(
                        "property is only used with targets \"allNodes\" and \"node\"".into(),
                    );
                }
                if !valid_color(color) && !valid_gradient(color) {
                    return Err(format!(
                        "Invalid background {color}: use a CSS colour (#rrggbb, rgb(), hsl(), a name) or linear-gradient(...)/radial-gradient(...)"
                    ));
                }
                self.visuals.background = color.to_string();
                self.visual_effect(format!("set the background to {color}"))
            }
            _ => {
                if !valid_color(color) {
                    return Err(format!(
                        "Invalid colour {color}: use #rgb, #rrggbb, #rrggbbaa, rgb(), rgba(), hsl(), hsla() or a colour name"
                    ));
                }
                let p = property.unwrap_or("background");
                if target == "allNodes" {
                    *colour_slot(&mut self.visuals.node_colors, p) = Some(color.to_string());
                    self.visual_effect(format!("set the {p} colour of all nodes to {color}"))
                } else {
                    let id =
                        node_id.ok_or("Missing required parameter 'nodeId' for target \"node\"")?;
                    self.existing_node(id)?;
                    let o = self
                        .visuals
                        .node_overrides
                        .entry(id.to_string())
                        .or_default();
                    *colour_slot(o, p) = Some(color.to_string());
                    self.visual_effect(format!("set the {p} colour of node {id} to {color}"))
                }
            }
        }
    }

    fn change_dimensions(&mut self, a: &Args) -> Outcome {
        let target = a.choice(
            "target",
            &[
                "node",
                "allNodes",
                "zoom",
                "dagreHorizontal",
                "dagreVertical",
                "fitViewPadding",
            ],
        )?;
        let increase = a.choice("direction", &["increase", "decrease"])? == "increase";
        let axis = a.opt_choice("axis", &["width", "height", "both"])?;
        let node_id = a.opt_str("nodeId")?;
        let steps = a.opt_int("steps", 1, 5)?.unwrap_or(1);
        if target != "node" && node_id.is_some() {
            return Err(format!(
                "nodeId is only used with target \"node\", not \"{target}\""
            ));
        }
        if axis.is_some() && target != "node" && target != "allNodes" {
            return Err(format!(
                "axis is only used with targets \"node\" and \"allNodes\", not \"{target}\""
            ));
        }
        let factor = if increase { 1.1f64 } else { 0.9f64 }.powi(steps as i32);
        let scale = |v: f64, lo: f64, hi: f64, decimals: i32| -> f64 {
            let m = 10f64.powi(decimals);
            ((v * factor * m).round() / m).clamp(lo, hi)
        };
        let dims = &mut self.visuals.dimensions;
        let change = match target {
            "node" | "allNodes" => {
                let (old, label) = if target == "node" {
                    let id =
                        node_id.ok_or("Missing required parameter 'nodeId' for target \"node\"")?;
                    if self.flow.node(id).is_none() {
                        return Err(format!("Node {id} not found"));
                    }
                    (dims.size_of(id), format!("node {id}"))
                } else {
                    (dims.node, "all nodes".to_string())
                };
                let axis = axis.unwrap_or("both");
                let mut new = old;
                if axis != "height" {
                    new.width = scale(old.width, 20.0, 2000.0, 0);
                }
                if axis != "width" {
                    new.height = scale(old.height, 10.0, 1000.0, 0);
                }
                if target == "node" {
                    dims.node_overrides
                        .insert(node_id.unwrap_or_default().to_string(), new);
                } else {
                    dims.node = new;
                }
                format!("{label}: size {} → {}", size_text(old), size_text(new))
            }
            "zoom" => {
                let old = dims.zoom;
                dims.zoom = scale(old, 0.1, 4.0, 2);
                format!("zoom {old} → {}", dims.zoom)
            }
            "dagreHorizontal" => {
                let old = dims.dagre.nodesep;
                dims.dagre.nodesep = scale(old, 5.0, 1000.0, 0);
                format!("horizontal spacing {old} → {}", dims.dagre.nodesep)
            }
            "dagreVertical" => {
                let old = dims.dagre.ranksep;
                dims.dagre.ranksep = scale(old, 5.0, 1000.0, 0);
                format!("vertical spacing {old} → {}", dims.dagre.ranksep)
            }
            _ => {
                let old = dims.fit_view_padding;
                dims.fit_view_padding = scale(old, 0.0, 2.0, 3);
                format!("fit-view padding {old} → {}", dims.fit_view_padding)
            }
        };
        self.visual_effect(change)
    }

    /// Where a new node goes: below its parent, right of the parent's
    /// other children; without a parent, below the lowest node.
    fn place(&self, parent: Option<&str>) -> Position {
        let dims = &self.visuals.dimensions;
        match parent.and_then(|p| self.flow.node(p)) {
            Some(p) => {
                let children = self.flow.edges.iter().filter(|e| e.source == p.id).count();
                let size = dims.size_of(&p.id);
                Position {
                    x: p.position.x + children as f64 * (dims.node.width + dims.dagre.nodesep),
                    y: p.position.y + size.height + dims.dagre.ranksep,
                }
            }
            None => match self
                .flow
                .nodes
                .iter()
                .max_by(|a, b| a.position.y.total_cmp(&b.position.y))
            {
                Some(low) => Position {
                    x: low.position.x,
                    y: low.position.y + dims.size_of(&low.id).height + dims.dagre.ranksep,
                },
                None => Position::default(),
            },
        }
    }

    fn free_node_id(&self, base: &str) -> String {
        if self.flow.node(base).is_none() {
            return base.to_string();
        }
        (2..)
            .map(|i| format!("{base}_{i}"))
            .find(|id| self.flow.node(id).is_none())
            .unwrap_or_default()
    }

    fn free_edge_id(&self, source: &str, target: &str) -> String {
        let base = format!("e_{source}_{target}");
        if self.flow.edge(&base).is_none() {
            return base;
        }
        (2..)
            .map(|i| format!("{base}_{i}"))
            .find(|id| self.flow.edge(id).is_none())
            .unwrap_or_default()
    }

    /// Land everything this session changed in one transaction.
    pub fn commit(mut self) -> Result<Committed, FlowError> {
        self.close_edits();
        let g = self.graph.clone();
        let mut batch = Batch::new();
        let mut changed = fstore::diff_flow(&mut batch, &g, &self.stored.flow, &self.flow);
        if self.visuals != self.stored.visuals {
            fstore::put_visuals(&mut batch, &g, &self.visuals);
            changed = true;
        }
        if self.undo != self.stored.undo {
            if let Some(pos) = self.undo {
                fstore::put_undo(&mut batch, &g, pos);
            }
        }
        for idx in &self.dropped_snapshots {
            fstore::delete_snapshot(&mut batch, &g, *idx);
        }
        for idx in &self.new_snapshots {
            if let Some(f) = self.snapshots.get(idx) {
                fstore::put_snapshot(&mut batch, &g, *idx, f);
            }
        }
        if !self.messages.is_empty() {
            let first = history::next_idx(self.store, &g)?;
            history::queue(&mut batch, &g, first, &self.messages);
        }
        let mut seq = self.stored.seq.unwrap_or(0);
        if changed || self.stored.seq.is_none() {
            seq += 1;
            batch.lands_as(GraphChange::at(&g, seq - 1).with_source(fstore::FLOW_SOURCE));
        }
        self.store.apply(batch)?;
        Ok(Committed { changed, seq })
    }
}

fn colour_slot<'a>(c: &'a mut NodeColors, property: &str) -> &'a mut Option<String> {
    match property {
        "border" => &mut c.border,
        "text" => &mut c.text,
        _ => &mut c.background,
    }
}

fn size_text(s: Size) -> String {
    format!("{}×{}", s.width, s.height)
}

/// The id a label makes: lower case, runs of anything but letters and
/// digits become one `_` ("My Node" → "my_node"); `node` when nothing is left.
pub fn id_from_label(label: &str) -> String {
    let mut out = String::new();
    for c in label.trim().chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        "node".into()
    } else {
        out
    }
}

fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > 100 {
        return Err("Parameter 'id' must be 1 to 100 characters".into());
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
    {
        return Err(format!(
            "Parameter 'id' ({id}) may only contain letters, digits, _ - . :"
        ));
    }
    Ok(())
}

/// `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`/`rgba()`/`hsl()`/
/// `hsla()` with numeric arguments, or a colour name (letters only).
pub fn valid_color(s: &str) -> bool {
    if let Some(hex) = s.strip_prefix('#') {
        return matches!(hex.len(), 3 | 4 | 6 | 8) && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    for f in ["rgba(", "rgb(", "hsla(", "hsl("] {
        if let Some(rest) = s.to_ascii_lowercase().strip_prefix(f) {
            return rest.strip_suffix(')').is_some_and(|args| {
                !args.trim().is_empty()
                    && args.chars().all(|c| {
                        c.is_ascii_digit()
                            || matches!(c, ' ' | ',' | '.' | '%' | '/' | '-' | 'd' | 'e' | 'g')
                    })
            });
        }
    }
    (3..=30).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphabetic())
}

/// `linear-gradient(...)` or `radial-gradient(...)` with balanced
/// parentheses and nothing but colours, angles and positions inside.
pub fn valid_gradient(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    let Some(inner) = ["linear-gradient(", "radial-gradient("]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .and_then(|r| r.strip_suffix(')'))
    else {
        return false;
    };
    let mut depth = 0i32;
    for c in inner.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            c if c.is_ascii_alphanumeric()
                || matches!(c, ' ' | ',' | '.' | '%' | '#' | '-' | '/') => {}
            _ => return false,
        }
    }
    depth == 0 && !inner.trim().is_empty()
}

/// A call's parameters, checked against the tool's schema.
struct Args<'a> {
    map: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    fn new(tool: &str, params: &'a Value) -> Result<Args<'a>, String> {
        let map = match params {
            Value::Object(m) => Some(m),
            Value::Null => None,
            _ => return Err(format!("Parameters of {tool} must be a JSON object")),
        };
        let known = tools::parameter_names(tool).unwrap_or_default();
        for k in map.into_iter().flat_map(|m| m.keys()) {
            if !known.iter().any(|n| n == k) {
                return Err(if known.is_empty() {
                    format!("Unknown parameter '{k}': {tool} takes no parameters")
                } else {
                    format!(
                        "Unknown parameter '{k}' for {tool} (accepted: {})",
                        known.join(", ")
                    )
                });
            }
        }
        Ok(Args { map })
    }

    /// A parameter; `null` counts as absent.
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.and_then(|m| m.get(key)).filter(|v| !v.is_null())
    }

    fn opt_str(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(format!("Parameter '{key}' must be a string")),
        }
    }

    fn req_str(&self, key: &str) -> Result<&'a str, String> {
        let s = self
            .opt_str(key)?
            .ok_or_else(|| format!("Missing required parameter '{key}'"))?;
        if s.trim().is_empty() {
            return Err(format!("Parameter '{key}' must not be empty"));
        }
        Ok(s)
    }

    /// A required string that may be empty, at most `max` characters.
    fn text(&self, key: &str, max: usize) -> Result<&'a str, String> {
        let s = self
            .opt_str(key)?
            .ok_or_else(|| format!("Missing required parameter '{key}'"))?;
        check_len(key, s, max)
    }

    fn opt_text(&self, key: &str, max: usize) -> Result<Option<&'a str>, String> {
        self.opt_str(key)?
            .map(|s| check_len(key, s, max))
            .transpose()
    }

    /// A required, non-empty label (trimmed).
    fn label(&self, key: &str, max: usize) -> Result<&'a str, String> {
        let s = self.req_str(key)?.trim();
        check_len(key, s, max)
    }

    fn opt_bool(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(format!("Parameter '{key}' must be true or false")),
        }
    }

    fn opt_int(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(n) if (lo..=hi).contains(&n) => Ok(Some(n)),
                _ => Err(format!(
                    "Parameter '{key}' must be an integer from {lo} to {hi}"
                )),
            },
        }
    }

    fn opt_choice(
        &self,
        key: &str,
        allowed: &[&'static str],
    ) -> Result<Option<&'static str>, String> {
        match self.opt_str(key)? {
            None => Ok(None),
            Some(s) => allowed
                .iter()
                .find(|a| **a == s)
                .copied()
                .map(Some)
                .ok_or_else(|| {
                    format!(
                        "Parameter '{key}' must be one of {} (got \"{s}\")",
                        allowed.join(", ")
                    )
                }),
        }
    }

    fn choice(&self, key: &str, allowed: &[&'static str]) -> Result<&'static str, String> {
        self.opt_choice(key, allowed)?
            .ok_or_else(|| format!("Missing required parameter '{key}'"))
    }
}

fn check_len<'a>(key: &str, s: &'a str, max: usize) -> Result<&'a str, String> {
    if s.chars().count() > max {
        Err(format!("Parameter '{key}' is longer than {max} characters"))
    } else {
        Ok(s)
    }
}
