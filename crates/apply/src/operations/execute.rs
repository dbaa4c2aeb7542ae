//! Resolving references and executing a chunked plan on an ontology
//! transaction.
//!
//! Chunks run in order; inside a chunk, operations run in input order
//! (they are independent, so the order does not change the result). Each
//! operation's references are resolved to UUIDs just before it runs: a
//! tempId to the node its create made in an earlier chunk, a semantic ID
//! to the node a create of the response proposed it for (that create ran
//! earlier) or else to the live node of the graph, a UUID to itself if the
//! node is live *now* — a node deleted by an earlier chunk is gone. A
//! `semanticId` that is not one but the name of exactly one node of the
//! graph as it was before the answer (what the context showed, whose edge
//! lines write such nodes by name) resolves to that node.
//! Everything happens on the [`OntoTx`]'s working copy; nothing is written
//! until the caller lands the staged batch, so the first failing operation
//! stops the whole response with an error naming it and its chunk.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::chunk::Plan;
use super::error::OperationError;
use super::events::{ChunkUpdates, Counts, EdgeView, NodeView};
use super::parse::{NodeRef, OpKind, Operation};
use crate::ontology::store::OntoTx;
use crate::ontology::{
    semantic, NameIndex, NameMatch, NodeType, OntoEdge, OntoNode, OntologyError, OntologyGraph,
    Position, RelType,
};

/// A node a create made.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    pub operation: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temp_id: Option<String>,
    pub uuid: String,
    pub semantic_id: String,
    /// The semantic ID the operation proposed when it could not be given
    /// (taken, retired, malformed or of another type): references to it
    /// inside the response still reach this node.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposed_semantic_id: Option<String>,
}

/// What executing a plan did.
#[derive(Debug, Clone, Default)]
pub struct Executed {
    pub chunks: Vec<ChunkUpdates>,
    pub counts: Counts,
    pub created: Vec<Created>,
    /// tempId → UUID.
    pub id_map: BTreeMap<String, String>,
}

pub fn node_view(n: &OntoNode) -> NodeView {
    NodeView {
        uuid: n.uuid.clone(),
        node_type: n.node_type.name().to_string(),
        semantic_id: n.semantic_id.clone(),
        name: n.name.clone(),
        descr: n.descr.clone(),
        props: n.props.clone(),
        position: n.position.map(|p| (p.x, p.y)),
    }
}

pub fn edge_view(e: &OntoEdge) -> EdgeView {
    EdgeView {
        uuid: e.uuid.clone().unwrap_or_default(),
        rel: e.rel.name().to_string(),
        source_uuid: e.src.clone(),
        target_uuid: e.dst.clone(),
        props: e.props.clone(),
    }
}

/// A failure of one operation, before the chunk and operation are attached.
struct Fail {
    reason: &'static str,
    message: String,
}

impl Fail {
    fn new(reason: &'static str, message: impl Into<String>) -> Fail {
        Fail {
            reason,
            message: message.into(),
        }
    }
}

impl From<OntologyError> for Fail {
    fn from(e: OntologyError) -> Fail {
        let reason = match &e {
            OntologyError::UnknownNodeType(_) => "unknown_node_type",
            OntologyError::UnknownRelType(_) => "unknown_relationship_type",
            OntologyError::UnknownNode(_) => "node_not_found",
            OntologyError::UnknownEdge(_) => "edge_not_found",
            OntologyError::TypeChange { .. } => "type_change",
            OntologyError::SemanticIdChange { .. } => "semantic_id_change",
            OntologyError::EmptyName(_) => "empty_name",
            OntologyError::BadUuid(_) => "bad_uuid",
            OntologyError::EdgeUuidTaken { .. } => "edge_uuid_taken",
            OntologyError::Store(_) => "storage_error",
            _ => "invalid_operation",
        };
        Fail::new(reason, e.to_string())
    }
}

/// The node a reference that is not a semantic ID names: the one node of
/// `base` (the graph as the answer's context showed it) with that name, as
/// the context's edge lines write a node with a unique name. Several
/// nodes with the name, or none: `None`. The index is built on first use.
pub fn by_name(names: &OnceCell<NameIndex>, base: &OntologyGraph, r: &str) -> Option<String> {
    if semantic::parse(r).is_ok() {
        return None;
    }
    match names.get_or_init(|| NameIndex::new(base)).lookup(r) {
        NameMatch::One(u) => Some(u.to_string()),
        _ => None,
    }
}

struct Executor<'a> {
    tx: &'a mut OntoTx,
    ops: &'a [Operation],
    plan: &'a Plan,
    /// UUID of the node each create made (by operation index).
    made: Vec<Option<String>>,
    names: OnceCell<NameIndex>,
}

impl Executor<'_> {
    fn resolve(&self, r: &NodeRef) -> Result<String, Fail> {
        let uuid = match r {
            NodeRef::Temp(t) => self
                .plan
                .temp_ids
                .get(t)
                .and_then(|&j| self.made[j].clone()),
            NodeRef::Semantic(s) => match self.plan.semantic_ids.get(s) {
                Some(&j) => self.made[j].clone(),
                None => self
                    .tx
                    .graph()
                    .uuid_of(s)
                    .map(str::to_string)
                    .or_else(|| by_name(&self.names, self.tx.base(), s)),
            },
            NodeRef::Uuid(u) => Some(u.clone()),
        };
        match uuid {
            Some(u) if self.tx.graph().nodes.contains_key(&u) => Ok(u),
            _ => Err(Fail::new(
                "node_not_found",
                format!("no node with {r} in the graph"),
            )),
        }
    }

    fn run(&mut self, i: usize, out: &mut ChunkUpdates, ex: &mut Executed) -> Result<(), Fail> {
        let ops = self.ops;
        let op = &ops[i];
        match op.kind {
            OpKind::Create => self.create(i, op, out, ex)?,
            OpKind::Update => self.update(op, out, ex)?,
            OpKind::Delete => self.delete(op, out, ex)?,
            OpKind::CreateRelationship => self.create_relationship(op, out, ex)?,
            OpKind::DeleteRelationship => self.delete_relationship(op, out, ex)?,
        }
        ex.counts.operations_executed += 1;
        Ok(())
    }

    /// A create: the node with the proposed semantic ID when it is valid
    /// and free (otherwise a new one, the proposal reported as rejected).
    fn create(
        &mut self,
        i: usize,
        op: &Operation,
        out: &mut ChunkUpdates,
        ex: &mut Executed,
    ) -> Result<(), Fail> {
        let node_type = NodeType::parse(op.node_type.as_deref().unwrap_or(""))?;
        let mut node = OntoNode::new(node_type, "", "");
        apply_data(&mut node, &op.data)?;
        let mut proposed_rejected = None;
        if let Some(sid) = &op.semantic_id {
            let ok = semantic::parse(sid).is_ok()
                && self.tx.check_semantic_id(sid, node_type, "").is_ok();
            if ok {
                node.semantic_id = sid.clone();
            } else {
                proposed_rejected = Some(sid.clone());
            }
        }
        let change = self.tx.upsert_node(node)?;
        let n = &change.after;
        self.made[i] = Some(n.uuid.clone());
        if let Some(t) = &op.temp_id {
            ex.id_map.insert(t.clone(), n.uuid.clone());
        }
        ex.created.push(Created {
            operation: op.id.clone(),
            temp_id: op.temp_id.clone(),
            uuid: n.uuid.clone(),
            semantic_id: n.semantic_id.clone(),
            proposed_semantic_id: proposed_rejected,
        });
        ex.counts.nodes_created += 1;
        out.node_added(&node_view(n));
        Ok(())
    }

    /// An update: a new type and `data` onto the subject node; counted and
    /// shown only when the node changed.
    fn update(
        &mut self,
        op: &Operation,
        out: &mut ChunkUpdates,
        ex: &mut Executed,
    ) -> Result<(), Fail> {
        let uuid = self.resolve(op.subject.as_ref().expect("parser checked"))?;
        let mut node = self.tx.graph().nodes[&uuid].clone();
        if let Some(t) = &op.node_type {
            node.node_type = NodeType::parse(t)?;
        }
        apply_data(&mut node, &op.data)?;
        let change = self.tx.upsert_node(node)?;
        if change.before.as_ref() != Some(&change.after) {
            ex.counts.nodes_updated += 1;
            out.node_updated(&node_view(&change.after));
        }
        Ok(())
    }

    /// A delete: the subject node (of the stated type, when one is given)
    /// and every edge into or out of it.
    fn delete(
        &mut self,
        op: &Operation,
        out: &mut ChunkUpdates,
        ex: &mut Executed,
    ) -> Result<(), Fail> {
        let uuid = self.resolve(op.subject.as_ref().expect("parser checked"))?;
        if let Some(t) = &op.node_type {
            let t = NodeType::parse(t)?;
            let actual = self.tx.graph().nodes[&uuid].node_type;
            if t != actual {
                return Err(Fail::new(
                    "type_mismatch",
                    format!("node {uuid} is a {actual}, not a {t}"),
                ));
            }
        }
        let deletion = self.tx.delete_node(&uuid)?;
        for e in &deletion.edges {
            ex.counts.relationships_deleted += 1;
            out.edge_deleted(&edge_view(e));
        }
        ex.counts.nodes_deleted += 1;
        out.node_deleted(&node_view(&deletion.node));
        Ok(())
    }

    /// A relationship create: the edge added, or its properties updated
    /// when it exists (nothing when they are the same).
    fn create_relationship(
        &mut self,
        op: &Operation,
        out: &mut ChunkUpdates,
        ex: &mut Executed,
    ) -> Result<(), Fail> {
        let rel = RelType::parse(op.rel_type.as_deref().unwrap_or(""))?;
        let src = self.resolve(op.source.as_ref().expect("parser checked"))?;
        let dst = self.resolve(op.target.as_ref().expect("parser checked"))?;
        let mut edge = OntoEdge::new(&src, rel, &dst);
        edge.props = op.data.clone();
        let change = self.tx.upsert_edge(edge)?;
        match &change.before {
            None => {
                ex.counts.relationships_created += 1;
                out.edge_added(&edge_view(&change.after));
            }
            Some(b) if b != &change.after => {
                ex.counts.relationships_updated += 1;
                out.edge_updated(&edge_view(&change.after));
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// A relationship delete, by the edge's UUID or by source, type and
    /// target.
    fn delete_relationship(
        &mut self,
        op: &Operation,
        out: &mut ChunkUpdates,
        ex: &mut Executed,
    ) -> Result<(), Fail> {
        let removed = match &op.edge_uuid {
            Some(u) => self.tx.delete_edge_by_uuid(u)?,
            None => {
                let rel = RelType::parse(op.rel_type.as_deref().unwrap_or(""))?;
                let src = self.resolve(op.source.as_ref().expect("parser checked"))?;
                let dst = self.resolve(op.target.as_ref().expect("parser checked"))?;
                self.tx.delete_edge(&src, rel, &dst)?
            }
        };
        ex.counts.relationships_deleted += 1;
        out.edge_deleted(&edge_view(&removed));
        Ok(())
    }
}

/// `data` onto a node: `Name`, `Descr`, `position` ({x, y}) go to their
/// fields, everything else to the free properties (`null` removes one).
fn apply_data(node: &mut OntoNode, data: &Map<String, Value>) -> Result<(), Fail> {
    for (k, v) in data {
        match (k.as_str(), v) {
            ("Name", Value::String(s)) if !s.trim().is_empty() => node.name = s.clone(),
            ("Name", _) => {
                return Err(Fail::new(
                    "invalid_data",
                    "`Name` must be a non-empty string",
                ))
            }
            ("Descr", Value::String(s)) => node.descr = s.clone(),
            ("Descr", Value::Null) => node.descr.clear(),
            ("Descr", _) => return Err(Fail::new("invalid_data", "`Descr` must be a string")),
            ("position", Value::Null) => node.position = None,
            ("position", v) => {
                node.position =
                    Some(serde_json::from_value::<Position>(v.clone()).map_err(|_| {
                        Fail::new(
                            "invalid_data",
                            "`position` must be {\"x\": number, \"y\": number}",
                        )
                    })?)
            }
            (_, Value::Null) => {
                node.props.remove(k);
            }
            _ => {
                node.props.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(())
}

/// Execute `plan` on `tx`, chunk by chunk.
pub fn execute(
    tx: &mut OntoTx,
    ops: &[Operation],
    plan: &Plan,
) -> Result<Executed, OperationError> {
    let mut ex = Executed::default();
    let mut exec = Executor {
        tx,
        ops,
        plan,
        made: vec![None; ops.len()],
        names: OnceCell::new(),
    };
    for (c, chunk) in plan.chunks.iter().enumerate() {
        let mut out = ChunkUpdates::new(c);
        for &i in chunk {
            out.operations.push(ops[i].id.clone());
            exec.run(i, &mut out, &mut ex)
                .map_err(|f| OperationError::ChunkExecution {
                    chunk: c,
                    operation: ops[i].id.clone(),
                    description: ops[i].describe(),
                    reason: f.reason.to_string(),
                    message: f.message,
                })?;
        }
        ex.chunks.push(out);
    }
    Ok(ex)
}
