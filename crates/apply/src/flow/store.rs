//! Flow graphs in CozoDB: reading a flow, and the rows a change writes.
//!
//! A flow's nodes and edges are ordinary `node`/`edge` rows of the shared
//! model (kind `flow_node`, rel `flow`) so that every graph query works on
//! them; positions, edge labels and ids sit in `flow_node`/`flow_edge`.
//! Writers never write here directly: they fill a [`Batch`] that
//! [`super::executor::FlowSession::commit`] lands in one transaction.

use std::borrow::Cow;

use cozo::DataValue;

use crate::store::rows::{
    self, query_rows, EdgeRow, FlowEdgeRow, FlowNodeRow, FlowSnapshotRow, FlowUndoRow,
    FlowVisualsRow, GraphSeq, Json, NodeRow, Str,
};
use crate::store::{queries, Batch, Params, Store, StoreError};

use super::model::{Flow, FlowEdge, FlowNode, Position, VisualSettings};
use super::FlowError;

/// `graph.source` of a flow graph.
pub const FLOW_SOURCE: &str = "flow";
/// `node.kind` of a flow node.
pub const NODE_KIND: &str = "flow_node";
/// `edge.rel` of a flow edge.
pub const EDGE_REL: &str = "flow";
/// How many undo snapshots a graph keeps (older ones are dropped).
pub const UNDO_LIMIT: i64 = 50;

/// Where a graph stands in its undo history: snapshots `base..=top` exist
/// and `cur` is the one the stored flow equals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UndoPos {
    pub base: i64,
    pub cur: i64,
    pub top: i64,
}

/// A flow graph as stored.
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub flow: Flow,
    pub visuals: VisualSettings,
    pub undo: Option<UndoPos>,
    /// `graph.seq`, `None` when the graph does not exist yet.
    pub seq: Option<i64>,
}

query_rows! {
    /// `queries/flow_nodes.cozo`.
    FlowNodes = "flow_nodes" {
        key { ord: i64, id: Str<'a> }
        value { label: Str<'a>, description: Str<'a>, x: f64, y: f64 }
    }
    /// `queries/flow_edges.cozo`.
    FlowEdges = "flow_edges" {
        key { ord: i64, id: Str<'a> }
        value { source: Str<'a>, target: Str<'a>, label: Str<'a> }
    }
    /// `queries/flow_visuals.cozo`.
    FlowVisuals = "flow_visuals" {
        key { settings: Json<'a> }
    }
    /// `queries/flow_undo.cozo`.
    FlowUndo = "flow_undo" {
        key { base: i64, cur: i64, top: i64 }
    }
    /// `queries/flow_snapshot.cozo`.
    FlowSnapshot = "flow_snapshot" {
        key { state: Json<'a> }
    }
}

/// Read a flow graph (an empty one when the graph does not exist yet).
/// Refuses graphs of other sources (a code graph is not a flow).
pub fn load(store: &Store, graph: &str) -> Result<Stored, FlowError> {
    let p = || Params::new().with("graph", graph);
    let rows = store.read(queries::GRAPH_SEQ, p())?;
    let seq = match rows::decode_first::<GraphSeq>(&rows).map_err(StoreError::from)? {
        None => None,
        Some(row) => {
            if row.source != FLOW_SOURCE {
                return Err(FlowError::NotFlowGraph {
                    graph: graph.to_string(),
                    holds: row.source.into_owned(),
                });
            }
            Some(row.seq)
        }
    };
    let mut flow = Flow::default();
    let rows = store.read(queries::FLOW_NODES, p())?;
    for row in rows::decode_rows::<FlowNodes>(&rows).map_err(StoreError::from)? {
        flow.nodes.push(FlowNode {
            id: row.id.into_owned(),
            label: row.label.into_owned(),
            description: row.description.into_owned(),
            position: Position { x: row.x, y: row.y },
        });
    }
    let rows = store.read(queries::FLOW_EDGES, p())?;
    for row in rows::decode_rows::<FlowEdges>(&rows).map_err(StoreError::from)? {
        flow.edges.push(FlowEdge {
            id: row.id.into_owned(),
            source: row.source.into_owned(),
            target: row.target.into_owned(),
            label: row.label.into_owned(),
        });
    }
    let rows = store.read(queries::FLOW_VISUALS, p())?;
    let visuals = match rows::decode_first::<FlowVisuals>(&rows).map_err(StoreError::from)? {
        Some(row) => serde_json::from_value(row.settings.into_owned())
            .map_err(|e| FlowError::Corrupt(format!("visual settings of graph {graph}: {e}")))?,
        None => VisualSettings::default(),
    };
    let rows = store.read(queries::FLOW_UNDO, p())?;
    let undo = rows::decode_first::<FlowUndo>(&rows)
        .map_err(StoreError::from)?
        .map(|r| UndoPos {
            base: r.base,
            cur: r.cur,
            top: r.top,
        });
    Ok(Stored {
        flow,
        visuals,
        undo,
        seq,
    })
}

/// One undo snapshot.
pub fn snapshot(store: &Store, graph: &str, idx: i64) -> Result<Flow, FlowError> {
    let rows = store.read(
        queries::FLOW_SNAPSHOT,
        Params::new().with("graph", graph).with("idx", idx),
    )?;
    let row = rows::decode_first::<FlowSnapshot>(&rows)
        .map_err(StoreError::from)?
        .ok_or_else(|| {
            FlowError::Corrupt(format!("undo snapshot {idx} of graph {graph} is missing"))
        })?;
    serde_json::from_value(row.state.into_owned())
        .map_err(|e| FlowError::Corrupt(format!("undo snapshot {idx} of graph {graph}: {e}")))
}

/// Queue the rows that turn `before` into `after`. Returns whether
/// anything differs.
pub fn diff_flow(batch: &mut Batch, graph: &str, before: &Flow, after: &Flow) -> bool {
    let mut changed = false;
    for n in &before.nodes {
        if after.node(&n.id).is_none() {
            batch.delete_key::<NodeRow>(vec![graph.into(), n.id.as_str().into()]);
            batch.delete_key::<FlowNodeRow>(vec![graph.into(), n.id.as_str().into()]);
            changed = true;
        }
    }
    for (ord, n) in after.nodes.iter().enumerate() {
        let old = before.nodes.iter().enumerate().find(|(_, o)| o.id == n.id);
        if old.map(|(o_ord, o)| o_ord == ord && o == n) == Some(true) {
            continue;
        }
        changed = true;
        batch.put_row(NodeRow {
            graph: graph.into(),
            id: n.id.as_str().into(),
            kind: NODE_KIND.into(),
            name: n.label.as_str().into(),
            doc: n.description.as_str().into(),
        });
        batch.put_row(FlowNodeRow {
            graph: graph.into(),
            id: n.id.as_str().into(),
            x: n.position.x,
            y: n.position.y,
            ord: ord as i64,
        });
    }
    let edge_key = |e: &FlowEdge| -> Vec<DataValue> {
        vec![
            graph.into(),
            e.source.as_str().into(),
            EDGE_REL.into(),
            e.target.as_str().into(),
            e.id.as_str().into(),
        ]
    };
    for e in &before.edges {
        match after.edge(&e.id) {
            Some(a) if a.source == e.source && a.target == e.target => {}
            Some(_) => {
                batch.delete_key::<EdgeRow>(edge_key(e));
                changed = true;
            }
            None => {
                batch.delete_key::<EdgeRow>(edge_key(e));
                batch.delete_key::<FlowEdgeRow>(vec![graph.into(), e.id.as_str().into()]);
                changed = true;
            }
        }
    }
    for (ord, e) in after.edges.iter().enumerate() {
        let old = before.edges.iter().enumerate().find(|(_, o)| o.id == e.id);
        if old.map(|(o_ord, o)| o_ord == ord && o == e) == Some(true) {
            continue;
        }
        changed = true;
        batch.put_row(EdgeRow {
            graph: graph.into(),
            src: e.source.as_str().into(),
            rel: EDGE_REL.into(),
            dst: e.target.as_str().into(),
            origin: e.id.as_str().into(),
            weight: 1.0,
        });
        batch.put_row(FlowEdgeRow {
            graph: graph.into(),
            id: e.id.as_str().into(),
            source: e.source.as_str().into(),
            target: e.target.as_str().into(),
            label: e.label.as_str().into(),
            ord: ord as i64,
        });
    }
    changed
}

pub fn put_visuals(batch: &mut Batch, graph: &str, visuals: &VisualSettings) {
    batch.put_row(FlowVisualsRow {
        graph: graph.into(),
        settings: Cow::Owned(serde_json::to_value(visuals).unwrap_or_default()),
    });
}

pub fn put_undo(batch: &mut Batch, graph: &str, pos: UndoPos) {
    batch.put_row(FlowUndoRow {
        graph: graph.into(),
        base: pos.base,
        cur: pos.cur,
        top: pos.top,
    });
}

pub fn put_snapshot(batch: &mut Batch, graph: &str, idx: i64, flow: &Flow) {
    batch.put_row(FlowSnapshotRow {
        graph: graph.into(),
        idx,
        state: Cow::Owned(serde_json::to_value(flow).unwrap_or_default()),
    });
}

pub fn delete_snapshot(batch: &mut Batch, graph: &str, idx: i64) {
    batch.delete_key::<FlowSnapshotRow>(vec![graph.into(), idx.into()]);
}
