//! Flow graphs in CozoDB: reading a flow, and the rows a change writes.
//!
//! A flow's nodes and edges are ordinary `node`/`edge` rows of the shared
//! model (kind `flow_node`, rel `flow`) so that every graph query works on
//! them; positions, edge labels and ids sit in `flow_node`/`flow_edge`.
//! Writers never write here directly: they fill a [`Batch`] that
//! [`super::executor::FlowSession::commit`] lands in one transaction.

use cozo::DataValue;

use crate::store::value::{get_float, get_int, get_json, get_str, json};
use crate::store::{queries, Batch, Params, Store};

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

/// Read a flow graph (an empty one when the graph does not exist yet).
/// Refuses graphs of other sources (a code graph is not a flow).
pub fn load(store: &Store, graph: &str) -> Result<Stored, FlowError> {
    let p = || Params::new().with("graph", graph);
    let seq = match store.read(queries::GRAPH_SEQ, p())?.rows.first() {
        None => None,
        Some(row) => {
            let source = get_str(row, 1);
            if source != FLOW_SOURCE {
                return Err(FlowError::NotFlowGraph {
                    graph: graph.to_string(),
                    holds: source.to_string(),
                });
            }
            Some(get_int(row, 0))
        }
    };
    let mut flow = Flow::default();
    for row in store.read(queries::FLOW_NODES, p())?.rows {
        flow.nodes.push(FlowNode {
            id: get_str(&row, 1).to_string(),
            label: get_str(&row, 2).to_string(),
            description: get_str(&row, 3).to_string(),
            position: Position {
                x: get_float(&row, 4),
                y: get_float(&row, 5),
            },
        });
    }
    for row in store.read(queries::FLOW_EDGES, p())?.rows {
        flow.edges.push(FlowEdge {
            id: get_str(&row, 1).to_string(),
            source: get_str(&row, 2).to_string(),
            target: get_str(&row, 3).to_string(),
            label: get_str(&row, 4).to_string(),
        });
    }
    let visuals = match store.read(queries::FLOW_VISUALS, p())?.rows.first() {
        Some(row) => serde_json::from_value(get_json(row, 0))
            .map_err(|e| FlowError::Corrupt(format!("visual settings of graph {graph}: {e}")))?,
        None => VisualSettings::default(),
    };
    let undo = store
        .read(queries::FLOW_UNDO, p())?
        .rows
        .first()
        .map(|r| UndoPos {
            base: get_int(r, 0),
            cur: get_int(r, 1),
            top: get_int(r, 2),
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
    let row = rows.rows.first().ok_or_else(|| {
        FlowError::Corrupt(format!("undo snapshot {idx} of graph {graph} is missing"))
    })?;
    serde_json::from_value(get_json(row, 0))
        .map_err(|e| FlowError::Corrupt(format!("undo snapshot {idx} of graph {graph}: {e}")))
}

/// Queue the rows that turn `before` into `after`. Returns whether
/// anything differs.
pub fn diff_flow(batch: &mut Batch, graph: &str, before: &Flow, after: &Flow) -> bool {
    let mut changed = false;
    for n in &before.nodes {
        if after.node(&n.id).is_none() {
            batch.delete(
                "node",
                &["graph", "id"],
                vec![graph.into(), n.id.as_str().into()],
            );
            batch.delete(
                "flow_node",
                &["graph", "id"],
                vec![graph.into(), n.id.as_str().into()],
            );
            changed = true;
        }
    }
    for (ord, n) in after.nodes.iter().enumerate() {
        let old = before.nodes.iter().enumerate().find(|(_, o)| o.id == n.id);
        if old.map(|(o_ord, o)| o_ord == ord && o == n) == Some(true) {
            continue;
        }
        changed = true;
        batch.put(
            "node",
            &["graph", "id", "kind", "name", "doc"],
            vec![
                graph.into(),
                n.id.as_str().into(),
                NODE_KIND.into(),
                n.label.as_str().into(),
                n.description.as_str().into(),
            ],
        );
        batch.put(
            "flow_node",
            &["graph", "id", "x", "y", "ord"],
            vec![
                graph.into(),
                n.id.as_str().into(),
                n.position.x.into(),
                n.position.y.into(),
                (ord as i64).into(),
            ],
        );
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
                batch.delete(
                    "edge",
                    &["graph", "src", "rel", "dst", "origin"],
                    edge_key(e),
                );
                changed = true;
            }
            None => {
                batch.delete(
                    "edge",
                    &["graph", "src", "rel", "dst", "origin"],
                    edge_key(e),
                );
                batch.delete(
                    "flow_edge",
                    &["graph", "id"],
                    vec![graph.into(), e.id.as_str().into()],
                );
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
        let mut row = edge_key(e);
        row.push(1.0.into());
        batch.put(
            "edge",
            &["graph", "src", "rel", "dst", "origin", "weight"],
            row,
        );
        batch.put(
            "flow_edge",
            &["graph", "id", "source", "target", "label", "ord"],
            vec![
                graph.into(),
                e.id.as_str().into(),
                e.source.as_str().into(),
                e.target.as_str().into(),
                e.label.as_str().into(),
                (ord as i64).into(),
            ],
        );
    }
    changed
}

pub fn put_visuals(batch: &mut Batch, graph: &str, visuals: &VisualSettings) {
    batch.put(
        "flow_visuals",
        &["graph", "settings"],
        vec![
            graph.into(),
            json(serde_json::to_value(visuals).unwrap_or_default()),
        ],
    );
}

pub fn put_undo(batch: &mut Batch, graph: &str, pos: UndoPos) {
    batch.put(
        "flow_undo",
        &["graph", "base", "cur", "top"],
        vec![
            graph.into(),
            pos.base.into(),
            pos.cur.into(),
            pos.top.into(),
        ],
    );
}

pub fn put_snapshot(batch: &mut Batch, graph: &str, idx: i64, flow: &Flow) {
    batch.put(
        "flow_snapshot",
        &["graph", "idx", "state"],
        vec![
            graph.into(),
            idx.into(),
            json(serde_json::to_value(flow).unwrap_or_default()),
        ],
    );
}

pub fn delete_snapshot(batch: &mut Batch, graph: &str, idx: i64) {
    batch.delete(
        "flow_snapshot",
        &["graph", "idx"],
        vec![graph.into(), idx.into()],
    );
}
