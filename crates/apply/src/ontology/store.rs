//! Loading ontology graphs and staging changes to them.
//!
//! This is the only code that writes ontology rows. Every writer — import,
//! the operations engine, undo/redo — goes through an [`OntoTx`], so the
//! invariants hold whoever writes:
//!
//! - the semantic-ID map is bidirectional and complete: every live node has
//!   exactly one semantic ID, every ID ever assigned maps to one UUID, and
//!   an ID is never handed to a second node (deleted nodes' IDs stay
//!   retired in `onto_semantic`);
//! - per-type counters never go backwards, and allocation inside one
//!   transaction is consistent (the transaction owns the counters);
//! - every node and edge that changes gets `changed_seq` = the seq the
//!   transaction lands as, and every delete leaves a tombstone with it
//!   (CHANGED captures read both);
//! - the graph's `seq` is bumped exactly when something changed;
//! - no edge points at a node that does not exist (deleting a node deletes
//!   its edges).
//!
//! An [`OntoTx`] applies each change to a working copy of the graph (so
//! later changes in the same transaction see earlier ones) and stages the
//! net difference into a [`Batch`] at [`OntoTx::finish`]. Net, because a
//! [`Batch`] runs deletes before puts: staging "put, then delete" of the
//! same row would keep the row.
//!
//! Writers must hold the database's write lock between [`OntoTx::begin`]
//! and [`Store::apply`].

use std::collections::{BTreeMap, BTreeSet};

use std::borrow::Cow;

use serde_json::{json, Map, Value};

use super::{
    is_uuid_like, new_uuid, semantic, EdgeKey, NodeType, OntoEdge, OntoNode, OntologyError,
    OntologyGraph, Position, RelType, Result, Tombstone, ONTOLOGY_SOURCE,
};
use crate::store::rows::{
    self, query_rows, EdgeRow, GraphSeq, Json, NodeRow, OntoCounterRow, OntoEdgeRow, OntoNodeRow,
    OntoSemanticRow, OntoTombstoneRow, Str,
};
use crate::store::value::Params;
use crate::store::{queries, Batch, GraphChange, Store, StoreError};

/// `origin` of every ontology edge row in `edge`.
pub const EDGE_ORIGIN: &str = "ontology";

query_rows! {
    /// `queries/onto_nodes.cozo`: a node's `node` and `onto_node` rows.
    OntoNodes = "onto_nodes" {
        key { uuid: Str<'a> }
        value {
            kind: Str<'a>,
            name: Str<'a>,
            doc: Str<'a>,
            semantic_id: Str<'a>,
            props: Json<'a>,
            position: Option<Json<'a>>,
            changed_seq: i64,
        }
    }
    /// `queries/onto_edges.cozo`.
    OntoEdges = "onto_edges" {
        key { src: Str<'a>, rel: Str<'a>, dst: Str<'a> }
        value { uuid: Str<'a>, props: Json<'a>, changed_seq: i64 }
    }
    /// `queries/onto_semantic_ids.cozo`.
    OntoSemanticIds = "onto_semantic_ids" {
        key { semantic_id: Str<'a> }
        value { uuid: Str<'a>, retired_seq: Option<i64> }
    }
    /// `queries/onto_counters.cozo`.
    OntoCounters = "onto_counters" {
        key { node_type: Str<'a> }
        value { last: i64 }
    }
    /// `queries/onto_tombstones.cozo`.
    OntoTombstones = "onto_tombstones" {
        key { kind: Str<'a>, id: Str<'a> }
        value { seq: i64, data: Json<'a> }
    }
}

/// A JSON object's map (anything else reads as an empty map).
fn object(v: Json<'_>) -> Map<String, Value> {
    match v.into_owned() {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Read a whole ontology graph. A graph that was never written loads as an
/// empty graph at seq 0; a graph of another source (a code graph) is an
/// error.
pub fn load_graph(store: &Store, graph: &str) -> Result<OntologyGraph> {
    let p = || Params::new().with("graph", graph);
    let mut g = OntologyGraph::new(graph);
    let rows = store.read(queries::GRAPH_SEQ, p())?;
    if let Some(row) = rows::decode_first::<GraphSeq>(&rows).map_err(StoreError::from)? {
        g.seq = row.seq;
        if row.source != ONTOLOGY_SOURCE {
            return Err(OntologyError::NotOntology {
                graph: graph.to_string(),
                kind: row.source.into_owned(),
            });
        }
    }
    let rows = store.read(queries::ONTO_NODES, p())?;
    for row in rows::decode_rows::<OntoNodes>(&rows).map_err(StoreError::from)? {
        // Rows are ours; a type this version does not know is skipped
        // rather than failing every read of the graph.
        let Ok(node_type) = NodeType::parse(&row.kind) else {
            continue;
        };
        let uuid = row.uuid.into_owned();
        let position = row
            .position
            .and_then(|p| serde_json::from_value::<Position>(p.into_owned()).ok());
        g.node_seq.insert(uuid.clone(), row.changed_seq);
        g.nodes.insert(
            uuid.clone(),
            OntoNode {
                uuid,
                node_type,
                semantic_id: row.semantic_id.into_owned(),
                name: row.name.into_owned(),
                descr: row.doc.into_owned(),
                props: object(row.props),
                position,
            },
        );
    }
    let rows = store.read(queries::ONTO_EDGES, p())?;
    for row in rows::decode_rows::<OntoEdges>(&rows).map_err(StoreError::from)? {
        let Ok(rel) = RelType::parse(&row.rel) else {
            continue;
        };
        let uuid = row.uuid.into_owned();
        let edge = OntoEdge {
            uuid: Some(uuid.clone()),
            src: row.src.into_owned(),
            rel,
            dst: row.dst.into_owned(),
            props: object(row.props),
        };
        let key = edge.key();
        g.edge_seq.insert(key.clone(), row.changed_seq);
        g.edge_uuids.insert(uuid, key.clone());
        g.edges.insert(key, edge);
    }
    let rows = store.read(queries::ONTO_SEMANTIC_IDS, p())?;
    for row in rows::decode_rows::<OntoSemanticIds>(&rows).map_err(StoreError::from)? {
        g.semantic_ids
            .insert(row.semantic_id.into_owned(), row.uuid.into_owned());
    }
    let rows = store.read(queries::ONTO_COUNTERS, p())?;
    for row in rows::decode_rows::<OntoCounters>(&rows).map_err(StoreError::from)? {
        if let Ok(t) = NodeType::parse(&row.node_type) {
            g.counters.insert(t, row.last.max(0) as u32);
        }
    }
    let rows = store.read(queries::ONTO_TOMBSTONES, p())?;
    for row in rows::decode_rows::<OntoTombstones>(&rows).map_err(StoreError::from)? {
        g.tombstones.push(Tombstone {
            kind: row.kind.into_owned(),
            id: row.id.into_owned(),
            seq: row.seq,
            data: row.data.into_owned(),
        });
    }
    g.tombstones
        .sort_by(|a, b| (a.seq, &a.kind, &a.id).cmp(&(b.seq, &b.kind, &b.id)));
    Ok(g)
}

/// What an upsert did.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeChange {
    /// The node before (None: created).
    pub before: Option<OntoNode>,
    /// The node as stored, with its UUID and semantic ID.
    pub after: OntoNode,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EdgeChange {
    pub before: Option<OntoEdge>,
    pub after: OntoEdge,
}

/// What a node delete removed: the node and every edge touching it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDeletion {
    pub node: OntoNode,
    pub edges: Vec<OntoEdge>,
}

/// The net effect of a transaction, as staged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// The seq the transaction lands as; `None` when nothing changed (then
    /// nothing was staged and the seq stays).
    pub seq: Option<i64>,
    pub nodes_created: Vec<String>,
    pub nodes_updated: Vec<String>,
    pub nodes_deleted: Vec<String>,
    pub edges_created: Vec<EdgeKey>,
    pub edges_updated: Vec<EdgeKey>,
    pub edges_deleted: Vec<EdgeKey>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.seq.is_none()
    }
}

/// A transaction on one ontology graph: a working copy plus the changes to
/// stage. See the module doc for the invariants it keeps.
pub struct OntoTx {
    base: OntologyGraph,
    work: OntologyGraph,
    touched_nodes: BTreeSet<String>,
    touched_edges: BTreeSet<EdgeKey>,
}

impl OntoTx {
    /// Load `graph` and start a transaction on it.
    pub fn begin(store: &Store, graph: &str) -> Result<OntoTx> {
        Ok(OntoTx::on(load_graph(store, graph)?))
    }

    /// Start a transaction on a graph loaded with [`load_graph`].
    pub fn on(graph: OntologyGraph) -> OntoTx {
        OntoTx {
            work: graph.clone(),
            base: graph,
            touched_nodes: BTreeSet::new(),
            touched_edges: BTreeSet::new(),
        }
    }

    /// The graph with this transaction's changes so far.
    pub fn graph(&self) -> &OntologyGraph {
        &self.work
    }

    /// The graph as it was loaded.
    pub fn base(&self) -> &OntologyGraph {
        &self.base
    }

    /// The seq this transaction lands as.
    pub fn seq(&self) -> i64 {
        self.base.seq + 1
    }

    /// Hand out the next semantic ID of a type. The number is reserved
    /// even if no node takes it (numbers may have gaps, never repeats).
    pub fn allocate_semantic_id(&mut self, node_type: NodeType, name: &str) -> String {
        let counter = self.work.counters.entry(node_type).or_insert(0);
        *counter += 1;
        semantic::format(name, node_type, *counter)
    }

    /// Check that `sid` may be given to node `uuid` of `node_type` (well
    /// formed, of that type, not held by another node now or before).
    pub fn check_semantic_id(&self, sid: &str, node_type: NodeType, uuid: &str) -> Result<()> {
        let parsed = semantic::parse(sid)?;
        if parsed.node_type != node_type {
            return Err(OntologyError::SemanticIdTypeMismatch {
                id: sid.to_string(),
                id_type: parsed.node_type,
                node_type,
            });
        }
        match self.work.semantic_ids.get(sid) {
            Some(owner) if owner != uuid => {
                if self.work.nodes.contains_key(owner) {
                    Err(OntologyError::SemanticIdTaken {
                        id: sid.to_string(),
                        owner: owner.clone(),
                    })
                } else {
                    Err(OntologyError::SemanticIdRetired {
                        id: sid.to_string(),
                        owner: owner.clone(),
                    })
                }
            }
            _ => Ok(()),
        }
    }

    /// Create or replace a node. An empty `uuid` gets a fresh one; an empty
    /// `semantic_id` gets the node's existing one or a freshly allocated
    /// one; a given `semantic_id` of a new node is claimed (an LLM may
    /// propose `ProcessPayment.FN.002`, and undo restores deleted nodes
    /// with theirs) and the type's counter moves up past it. A node's type
    /// and semantic ID never change.
    pub fn upsert_node(&mut self, mut node: OntoNode) -> Result<NodeChange> {
        node.uuid = node.uuid.trim().to_string();
        node.semantic_id = node.semantic_id.trim().to_string();
        if node.uuid.is_empty() {
            node.uuid = new_uuid();
        } else if !is_uuid_like(&node.uuid) {
            return Err(OntologyError::BadUuid(node.uuid));
        }
        if node.name.trim().is_empty() {
            return Err(OntologyError::EmptyName(node.uuid));
        }
        let before = self.work.nodes.get(&node.uuid).cloned();
        match &before {
            Some(old) => {
                if old.node_type != node.node_type {
                    return Err(OntologyError::TypeChange {
                        uuid: node.uuid,
                        current: old.node_type,
                        requested: node.node_type,
                    });
                }
                if node.semantic_id.is_empty() {
                    node.semantic_id = old.semantic_id.clone();
                } else if node.semantic_id != old.semantic_id {
                    return Err(OntologyError::SemanticIdChange {
                        uuid: node.uuid,
                        current: old.semantic_id.clone(),
                        requested: node.semantic_id,
                    });
                }
            }
            None => {
                if node.semantic_id.is_empty() {
                    node.semantic_id = self.allocate_semantic_id(node.node_type, &node.name);
                } else {
                    self.check_semantic_id(&node.semantic_id, node.node_type, &node.uuid)?;
                    let number = semantic::parse(&node.semantic_id)?.number;
                    let counter = self.work.counters.entry(node.node_type).or_insert(0);
                    *counter = (*counter).max(number);
                }
                self.work
                    .semantic_ids
                    .insert(node.semantic_id.clone(), node.uuid.clone());
                // A node that comes back is no longer deleted.
                self.work
                    .tombstones
                    .retain(|t| !(t.kind == "node" && t.id == node.uuid));
            }
        }
        self.touched_nodes.insert(node.uuid.clone());
        self.work.nodes.insert(node.uuid.clone(), node.clone());
        self.work.node_seq.insert(node.uuid.clone(), self.seq());
        Ok(NodeChange {
            before,
            after: node,
        })
    }

    /// Delete a node (by UUID or semantic ID) and every edge touching it.
    pub fn delete_node(&mut self, reference: &str) -> Result<NodeDeletion> {
        let uuid = self
            .work
            .find(reference)
            .map(|n| n.uuid.clone())
            .ok_or_else(|| OntologyError::UnknownNode(reference.to_string()))?;
        let keys: Vec<EdgeKey> = self
            .work
            .edges
            .keys()
            .filter(|(s, _, d)| *s == uuid || *d == uuid)
            .cloned()
            .collect();
        let mut edges = Vec::with_capacity(keys.len());
        for key in keys {
            edges.push(self.remove_edge(&key));
        }
        let node = self
            .work
            .nodes
            .remove(&uuid)
            .ok_or_else(|| OntologyError::UnknownNode(reference.to_string()))?;
        self.work.node_seq.remove(&uuid);
        self.work.tombstones.push(Tombstone {
            kind: "node".into(),
            id: uuid.clone(),
            seq: self.seq(),
            data: json!({"type": node.node_type.name(), "semanticId": node.semantic_id, "Name": node.name}),
        });
        self.touched_nodes.insert(uuid);
        Ok(NodeDeletion { node, edges })
    }

    /// Create or replace an edge. `src` and `dst` may be UUIDs or semantic
    /// IDs of live nodes (stored as UUIDs). An existing edge with the same
    /// `(src, rel, dst)` keeps its UUID and gets the new properties.
    pub fn upsert_edge(&mut self, mut edge: OntoEdge) -> Result<EdgeChange> {
        edge.src = self.resolve(&edge.src)?;
        edge.dst = self.resolve(&edge.dst)?;
        let key = edge.key();
        let before = self.work.edges.get(&key).cloned();
        let existing_uuid = before.as_ref().and_then(|b| b.uuid.clone());
        let uuid = match (
            edge.uuid.take().map(|u| u.trim().to_string()),
            existing_uuid,
        ) {
            (None, Some(u)) => u,
            (None, None) => new_uuid(),
            (Some(u), _) if !is_uuid_like(&u) => return Err(OntologyError::BadUuid(u)),
            (Some(u), existing) => {
                let holder = self
                    .work
                    .edge_uuids
                    .get(&u)
                    .filter(|k| **k != key)
                    .map(|k| self.describe_edge(k));
                let clash = holder.or_else(|| {
                    existing.filter(|e| *e != u).map(|e| {
                        format!(
                            "{} (the edge already has uuid {e})",
                            self.describe_edge(&key)
                        )
                    })
                });
                if let Some(existing) = clash {
                    return Err(OntologyError::EdgeUuidTaken { uuid: u, existing });
                }
                u
            }
        };
        edge.uuid = Some(uuid.clone());
        self.work.edge_uuids.insert(uuid, key.clone());
        self.work.edges.insert(key.clone(), edge.clone());
        self.work.edge_seq.insert(key.clone(), self.seq());
        let id = tomb_edge_id(&key);
        self.work
            .tombstones
            .retain(|t| !(t.kind == "edge" && t.id == id));
        self.touched_edges.insert(key);
        Ok(EdgeChange {
            before,
            after: edge,
        })
    }

    /// Delete the edge `(src, rel, dst)`; `src`/`dst` as UUIDs or semantic IDs.
    pub fn delete_edge(&mut self, src: &str, rel: RelType, dst: &str) -> Result<OntoEdge> {
        let key = (self.resolve(src)?, rel, self.resolve(dst)?);
        if !self.work.edges.contains_key(&key) {
            return Err(OntologyError::UnknownEdge(format!(
                "{src} -{}-> {dst}",
                rel.short()
            )));
        }
        Ok(self.remove_edge(&key))
    }

    /// Delete an edge by its UUID.
    pub fn delete_edge_by_uuid(&mut self, uuid: &str) -> Result<OntoEdge> {
        let key = self
            .work
            .edge_uuids
            .get(uuid)
            .cloned()
            .ok_or_else(|| OntologyError::UnknownEdge(uuid.to_string()))?;
        Ok(self.remove_edge(&key))
    }

    fn remove_edge(&mut self, key: &EdgeKey) -> OntoEdge {
        let edge = self
            .work
            .edges
            .remove(key)
            .expect("caller checked the edge exists");
        if let Some(u) = &edge.uuid {
            self.work.edge_uuids.remove(u);
        }
        self.work.edge_seq.remove(key);
        let id = tomb_edge_id(key);
        self.work
            .tombstones
            .retain(|t| !(t.kind == "edge" && t.id == id));
        self.work.tombstones.push(Tombstone {
            kind: "edge".into(),
            id,
            seq: self.seq(),
            data: json!({
                "uuid": edge.uuid,
                "source": self.work.semantic_id_of(&key.0).map(str::to_string)
                    .or_else(|| self.base.semantic_id_of(&key.0).map(str::to_string))
                    .unwrap_or_else(|| key.0.clone()),
                "type": key.1.name(),
                "target": self.work.semantic_id_of(&key.2).map(str::to_string)
                    .or_else(|| self.base.semantic_id_of(&key.2).map(str::to_string))
                    .unwrap_or_else(|| key.2.clone()),
            }),
        });
        self.touched_edges.insert(key.clone());
        edge
    }

    /// UUID of a live node referenced by UUID or semantic ID.
    pub fn resolve(&self, reference: &str) -> Result<String> {
        self.work
            .find(reference.trim())
            .map(|n| n.uuid.clone())
            .ok_or_else(|| OntologyError::UnknownNode(reference.to_string()))
    }

    fn describe_edge(&self, key: &EdgeKey) -> String {
        let sid = |u: &String| {
            self.work
                .semantic_id_of(u)
                .map(str::to_string)
                .unwrap_or_else(|| u.clone())
        };
        format!("{} -{}-> {}", sid(&key.0), key.1.short(), sid(&key.2))
    }

    /// Stage the net difference to the loaded graph into `batch` (with the
    /// seq bump, when anything changed) and report it.
    pub fn finish(self, batch: &mut Batch) -> Changes {
        let seq = self.seq();
        let mut ch = Changes::default();
        self.stage_nodes(batch, seq, &mut ch);
        self.stage_edges(batch, seq, &mut ch);
        let changed = !(ch.nodes_created.is_empty()
            && ch.nodes_updated.is_empty()
            && ch.nodes_deleted.is_empty()
            && ch.edges_created.is_empty()
            && ch.edges_updated.is_empty()
            && ch.edges_deleted.is_empty());
        let counters = self.raised_counters();
        if changed || !counters.is_empty() {
            let g = self.work.name.as_str();
            for (t, n) in counters {
                batch.put_row(OntoCounterRow {
                    graph: g.into(),
                    node_type: t.name().into(),
                    last: n as i64,
                });
            }
            batch.lands_as(
                GraphChange::at(&self.work.name, self.base.seq).with_source(ONTOLOGY_SOURCE),
            );
            ch.seq = Some(seq);
        }
        ch
    }

    /// Stage every touched node that differs from the loaded graph (a
    /// create, an update or a delete), recording which it was in `ch`.
    fn stage_nodes(&self, batch: &mut Batch, seq: i64, ch: &mut Changes) {
        for uuid in &self.touched_nodes {
            let old = self.base.nodes.get(uuid);
            match (old, self.work.nodes.get(uuid)) {
                (Some(o), Some(n)) if o == n => {}
                (old, Some(n)) => {
                    if old.is_some() {
                        ch.nodes_updated.push(uuid.clone());
                    } else {
                        ch.nodes_created.push(uuid.clone());
                    }
                    self.stage_node_rows(batch, uuid, n, seq);
                    if old.is_none() {
                        self.stage_node_birth(batch, uuid, n);
                    }
                }
                (Some(o), None) => {
                    ch.nodes_deleted.push(uuid.clone());
                    self.stage_node_delete(batch, uuid, o, seq);
                }
                (None, None) => {}
            }
        }
    }

    /// Put a created or updated node's graph row and ontology row.
    fn stage_node_rows(&self, batch: &mut Batch, uuid: &str, n: &OntoNode, seq: i64) {
        let g = self.work.name.as_str();
        batch.put_row(NodeRow {
            graph: g.into(),
            id: uuid.into(),
            kind: n.node_type.name().into(),
            name: n.name.as_str().into(),
            doc: n.descr.as_str().into(),
        });
        batch.put_row(OntoNodeRow {
            graph: g.into(),
            uuid: uuid.into(),
            semantic_id: n.semantic_id.as_str().into(),
            props: Cow::Owned(Value::Object(n.props.clone())),
            position: n.position.map(|p| Cow::Owned(json!({"x": p.x, "y": p.y}))),
            changed_seq: seq,
        });
    }

    /// A created node: register its semantic ID, and drop the tombstone of
    /// the same UUID when the loaded graph had one (a restore).
    fn stage_node_birth(&self, batch: &mut Batch, uuid: &str, n: &OntoNode) {
        let g = self.work.name.as_str();
        batch.put_row(OntoSemanticRow {
            graph: g.into(),
            semantic_id: n.semantic_id.as_str().into(),
            uuid: uuid.into(),
            retired_seq: None,
        });
        if self
            .base
            .tombstones
            .iter()
            .any(|t| t.kind == "node" && t.id == *uuid)
        {
            batch.delete_key::<OntoTombstoneRow>(vec![g.into(), "node".into(), uuid.into()]);
        }
    }

    /// A deleted node: remove its rows, retire its semantic ID at `seq`,
    /// and stage its tombstone.
    fn stage_node_delete(&self, batch: &mut Batch, uuid: &str, o: &OntoNode, seq: i64) {
        let g = self.work.name.as_str();
        batch.delete_key::<NodeRow>(vec![g.into(), uuid.into()]);
        batch.delete_key::<OntoNodeRow>(vec![g.into(), uuid.into()]);
        batch.put_row(OntoSemanticRow {
            graph: g.into(),
            semantic_id: o.semantic_id.as_str().into(),
            uuid: uuid.into(),
            retired_seq: Some(seq),
        });
        self.stage_tombstone(batch, "node", uuid);
    }

    /// Stage every touched edge that differs from the loaded graph (a
    /// create, an update or a delete), recording which it was in `ch`.
    fn stage_edges(&self, batch: &mut Batch, seq: i64, ch: &mut Changes) {
        for key in &self.touched_edges {
            let old = self.base.edges.get(key);
            match (old, self.work.edges.get(key)) {
                (Some(o), Some(e)) if o == e => {}
                (old, Some(e)) => {
                    if old.is_some() {
                        ch.edges_updated.push(key.clone());
                    } else {
                        ch.edges_created.push(key.clone());
                    }
                    self.stage_edge_rows(batch, key, e, seq);
                }
                (Some(_), None) => {
                    ch.edges_deleted.push(key.clone());
                    self.stage_edge_delete(batch, key);
                }
                (None, None) => {}
            }
        }
    }

    /// Put a created or updated edge's graph row and ontology row, and drop
    /// the tombstone of the same edge when the loaded graph had one.
    fn stage_edge_rows(&self, batch: &mut Batch, key: &EdgeKey, e: &OntoEdge, seq: i64) {
        let g = self.work.name.as_str();
        batch.put_row(EdgeRow {
            graph: g.into(),
            src: key.0.as_str().into(),
            rel: key.1.name().into(),
            dst: key.2.as_str().into(),
            origin: EDGE_ORIGIN.into(),
            weight: 1.0,
        });
        batch.put_row(OntoEdgeRow {
            graph: g.into(),
            src: key.0.as_str().into(),
            rel: key.1.name().into(),
            dst: key.2.as_str().into(),
            uuid: e.uuid.as_deref().unwrap_or("").into(),
            props: Cow::Owned(Value::Object(e.props.clone())),
            changed_seq: seq,
        });
        let id = tomb_edge_id(key);
        if self
            .base
            .tombstones
            .iter()
            .any(|t| t.kind == "edge" && t.id == id)
        {
            batch.delete_key::<OntoTombstoneRow>(vec![g.into(), "edge".into(), id.into()]);
        }
    }

    /// A deleted edge: remove its rows and stage its tombstone.
    fn stage_edge_delete(&self, batch: &mut Batch, key: &EdgeKey) {
        let g = self.work.name.as_str();
        let key_row = || {
            vec![
                g.into(),
                key.0.as_str().into(),
                key.1.name().into(),
                key.2.as_str().into(),
            ]
        };
        let mut row = key_row();
        row.push(EDGE_ORIGIN.into());
        batch.delete_key::<EdgeRow>(row);
        batch.delete_key::<OntoEdgeRow>(key_row());
        self.stage_tombstone(batch, "edge", &tomb_edge_id(key));
    }

    /// The semantic-ID counters that went up, by node type.
    fn raised_counters(&self) -> BTreeMap<NodeType, u32> {
        let mut counters: BTreeMap<NodeType, u32> = BTreeMap::new();
        for (t, &n) in &self.work.counters {
            if n > self.base.counters.get(t).copied().unwrap_or(0) {
                counters.insert(*t, n);
            }
        }
        counters
    }
}

impl OntoTx {
    fn stage_tombstone(&self, batch: &mut Batch, kind: &str, id: &str) {
        if let Some(t) = self
            .work
            .tombstones
            .iter()
            .rev()
            .find(|t| t.kind == kind && t.id == id)
        {
            batch.put_row(OntoTombstoneRow {
                graph: self.work.name.as_str().into(),
                kind: kind.into(),
                id: id.into(),
                seq: t.seq,
                data: Cow::Borrowed(&t.data),
            });
        }
    }
}

/// A deleted edge's tombstone id: `src rel dst` (UUIDs, long rel name).
pub fn tomb_edge_id(key: &EdgeKey) -> String {
    format!("{} {} {}", key.0, key.1.name(), key.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(store: &Store, tx: OntoTx) -> Changes {
        let mut batch = Batch::new();
        let ch = tx.finish(&mut batch);
        store.apply(batch).unwrap();
        ch
    }

    #[test]
    fn stores_loads_and_never_reuses_semantic_ids() {
        let store = Store::memory().unwrap();
        let mut tx = OntoTx::begin(&store, "m").unwrap();
        let sys = tx
            .upsert_node(OntoNode::new(NodeType::Sys, "CargoManagement", "Central"))
            .unwrap()
            .after;
        let mut uc = OntoNode::new(NodeType::Uc, "ManageFleet", "Manage fleet");
        uc.position = Some(Position { x: 1.5, y: -2.0 });
        uc.props.insert("priority".into(), json!("high"));
        let uc = tx.upsert_node(uc).unwrap().after;
        assert_eq!(sys.semantic_id, "CargoManagement.SY.001");
        assert_eq!(uc.semantic_id, "ManageFleet.UC.001");
        tx.upsert_edge(OntoEdge::new(&sys.semantic_id, RelType::Compose, &uc.uuid))
            .unwrap();
        let ch = commit(&store, tx);
        assert_eq!(ch.seq, Some(1));
        assert_eq!(ch.nodes_created.len(), 2);

        let g = load_graph(&store, "m").unwrap();
        assert_eq!(g.seq, 1);
        assert_eq!(g.nodes[&uc.uuid], uc);
        assert_eq!(g.edges.len(), 1);
        assert_eq!(g.uuid_of("ManageFleet.UC.001"), Some(uc.uuid.as_str()));

        // Delete the UC: its edge goes, its ID is retired, the counter stays.
        let mut tx = OntoTx::on(g);
        let del = tx.delete_node("ManageFleet.UC.001").unwrap();
        assert_eq!(del.edges.len(), 1);
        let again = tx
            .upsert_node(OntoNode::new(NodeType::Uc, "ManageFleet", "again"))
            .unwrap()
            .after;
        assert_eq!(again.semantic_id, "ManageFleet.UC.002");
        let mut thief = OntoNode::new(NodeType::Uc, "X", "");
        thief.semantic_id = "ManageFleet.UC.001".into();
        assert!(matches!(
            tx.upsert_node(thief),
            Err(OntologyError::SemanticIdRetired { .. })
        ));
        let ch = commit(&store, tx);
        assert_eq!(ch.seq, Some(2));
        let g = load_graph(&store, "m").unwrap();
        assert_eq!(g.nodes.len(), 2);
        assert!(g.edges.is_empty());
        assert_eq!(g.tombstones.len(), 2);
        assert_eq!(g.counters[&NodeType::Uc], 2);
        assert_eq!(g.uuid_of("ManageFleet.UC.001"), None);

        // Undo: the node comes back with its ID; its tombstone goes.
        let mut tx = OntoTx::on(g);
        tx.upsert_node(del.node.clone()).unwrap();
        for e in del.edges {
            tx.upsert_edge(e).unwrap();
        }
        commit(&store, tx);
        let g = load_graph(&store, "m").unwrap();
        assert_eq!(g.uuid_of("ManageFleet.UC.001"), Some(uc.uuid.as_str()));
        assert!(g.tombstones.is_empty());
        assert_eq!(g.edges.len(), 1);
        assert_eq!(g.seq, 3);

        // A no-op transaction stages nothing and keeps the seq.
        let mut tx = OntoTx::on(g);
        tx.upsert_node(uc.clone()).unwrap();
        let mut batch = Batch::new();
        assert!(tx.finish(&mut batch).is_empty());
        assert!(batch.is_empty());
    }

    #[test]
    fn created_and_deleted_in_one_transaction_leaves_no_rows() {
        let store = Store::memory().unwrap();
        let mut tx = OntoTx::begin(&store, "m").unwrap();
        let a = tx
            .upsert_node(OntoNode::new(NodeType::Func, "A", ""))
            .unwrap()
            .after;
        tx.delete_node(&a.uuid).unwrap();
        commit(&store, tx);
        let g = load_graph(&store, "m").unwrap();
        assert!(g.nodes.is_empty() && g.tombstones.is_empty());
        assert_eq!(g.counters[&NodeType::Func], 1);
    }
}
