//! Ontology graphs: systems-engineering models (seed 001, seed 000) stored
//! in the same `node`/`edge` relations as code graphs.
//!
//! Why a model of its own: an ontology node is edited by people and by an
//! LLM, so it needs identities that survive renames (a UUID) and short,
//! readable references an LLM can write back (a semantic ID
//! `Name.TY.NNN`, seed 001 §6.2). Both live in side relations next to the
//! shared `node` rows, so blast radius, relevance and cycles run on an
//! ontology graph exactly as on a code graph (node id = UUID, edge rel =
//! the relationship's long name).
//!
//! - [`NodeType`], [`RelType`]: the closed vocabularies, with the seeds'
//!   abbreviations and clear parse errors;
//! - [`OntoNode`], [`OntoEdge`], [`OntologyGraph`]: the in-memory model;
//! - [`store`]: loading a graph and staging changes (the only code that
//!   writes ontology rows, so the semantic-ID and change-tracking
//!   invariants hold for every writer);
//! - [`semantic`]: semantic ID syntax.

pub mod diagram;
pub mod format_e;
pub mod io;
pub mod sanitize;
pub mod semantic;
pub mod store;

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `source` an ontology graph's row in `graph` carries.
pub const ONTOLOGY_SOURCE: &str = "ontology";

/// Errors of the ontology model (parsing, validation, storage).
#[derive(Debug, thiserror::Error)]
pub enum OntologyError {
    #[error(
        "unknown node type `{0}`; expected one of SYS, ACTOR, UC, FCHAIN, FUNC, FLOW, REQ, TEST, \
         MOD, SCHEMA (or SY, AC, UC, FC, FN, FL, RQ, TS, MD, SC)"
    )]
    UnknownNodeType(String),
    #[error(
        "unknown relationship type `{0}`; expected one of compose (cp), io (io), satisfy (st), \
         verify (vf), allocate (al), derive (dr), refine (rf), trace (tr), relation (rl)"
    )]
    UnknownRelType(String),
    #[error("malformed semantic ID `{0}`: expected Name.TY.NNN (e.g. ParseInput.FN.001)")]
    BadSemanticId(String),
    #[error("semantic ID `{id}` is for type {id_type}, but the node is a {node_type}")]
    SemanticIdTypeMismatch {
        id: String,
        id_type: NodeType,
        node_type: NodeType,
    },
    #[error("semantic ID `{id}` already belongs to node {owner}")]
    SemanticIdTaken { id: String, owner: String },
    #[error("semantic ID `{id}` belonged to deleted node {owner} and is never reused")]
    SemanticIdRetired { id: String, owner: String },
    #[error("node {uuid} has semantic ID `{current}`; it cannot change to `{requested}`")]
    SemanticIdChange {
        uuid: String,
        current: String,
        requested: String,
    },
    #[error("node {uuid} is a {current}; its type cannot change to {requested}")]
    TypeChange {
        uuid: String,
        current: NodeType,
        requested: NodeType,
    },
    #[error("no node `{0}` in the graph")]
    UnknownNode(String),
    #[error("no edge `{0}` in the graph")]
    UnknownEdge(String),
    #[error("edge uuid {uuid} already belongs to {existing}")]
    EdgeUuidTaken { uuid: String, existing: String },
    #[error("`{0}` is not a valid UUID")]
    BadUuid(String),
    #[error("node name must not be empty (node {0})")]
    EmptyName(String),
    #[error("graph `{graph}` is not an ontology graph (its source is `{kind}`)")]
    NotOntology { graph: String, kind: String },
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

pub type Result<T, E = OntologyError> = std::result::Result<T, E>;

macro_rules! node_types {
    ($($v:ident => $name:literal, $abbrev:literal;)*) => {
        /// The node types of seed 001 §6.2, in the order outputs list them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum NodeType { $(#[serde(rename = $name)] $v),* }

        impl NodeType {
            pub const ALL: &'static [NodeType] = &[$(NodeType::$v),*];

            /// `SYS`, `ACTOR`, ...
            pub fn name(self) -> &'static str {
                match self { $(NodeType::$v => $name),* }
            }

            /// The two-letter abbreviation used in semantic IDs (`SY`, `AC`, ...).
            pub fn abbrev(self) -> &'static str {
                match self { $(NodeType::$v => $abbrev),* }
            }

            /// From a name or an abbreviation, case-insensitively.
            pub fn parse(s: &str) -> Result<NodeType> {
                let t = s.trim();
                $(
                    if t.eq_ignore_ascii_case($name) || t.eq_ignore_ascii_case($abbrev) {
                        return Ok(NodeType::$v);
                    }
                )*
                Err(OntologyError::UnknownNodeType(s.to_string()))
            }

            /// From the exact abbreviation (`FN`), as semantic IDs spell it.
            pub fn from_abbrev(s: &str) -> Option<NodeType> {
                match s { $($abbrev => Some(NodeType::$v),)* _ => None }
            }
        }
    };
}

node_types! {
    Sys => "SYS", "SY";
    Actor => "ACTOR", "AC";
    Uc => "UC", "UC";
    Fchain => "FCHAIN", "FC";
    Func => "FUNC", "FN";
    Flow => "FLOW", "FL";
    Req => "REQ", "RQ";
    Test => "TEST", "TS";
    Mod => "MOD", "MD";
    Schema => "SCHEMA", "SC";
}

impl fmt::Display for NodeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! rel_types {
    ($($v:ident => $name:literal, $short:literal, $doc:literal;)*) => {
        /// Relationship types. Stored in `edge.rel` by long name; Format E
        /// writes the short name (`-cp->`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum RelType { $(#[doc = $doc] #[serde(rename = $name)] $v),* }

        impl RelType {
            pub const ALL: &'static [RelType] = &[$(RelType::$v),*];

            pub fn name(self) -> &'static str {
                match self { $(RelType::$v => $name),* }
            }

            pub fn short(self) -> &'static str {
                match self { $(RelType::$v => $short),* }
            }

            /// What the relationship means (for docs and `--help`).
            pub fn meaning(self) -> &'static str {
                match self { $(RelType::$v => $doc),* }
            }

            /// From the long or the short name, case-insensitively.
            pub fn parse(s: &str) -> Result<RelType> {
                let t = s.trim();
                $(
                    if t.eq_ignore_ascii_case($name) || t.eq_ignore_ascii_case($short) {
                        return Ok(RelType::$v);
                    }
                )*
                Err(OntologyError::UnknownRelType(s.to_string()))
            }
        }
    };
}

rel_types! {
    Compose => "compose", "cp", "Whole to part: SYS→UC, UC→FCHAIN/FUNC, FCHAIN→FUNC, SYS→SYS, MOD→MOD.";
    Io => "io", "io", "Data flow: ACTOR/FUNC→FLOW (produces) and FLOW→ACTOR/FUNC (consumes).";
    Satisfy => "satisfy", "st", "A design element satisfies a requirement: FUNC/UC/SYS/MOD→REQ.";
    Verify => "verify", "vf", "A requirement is verified by a test: REQ→TEST.";
    Allocate => "allocate", "al", "A function is allocated to a module that implements it: FUNC→MOD.";
    Derive => "derive", "dr", "A requirement is derived from another: REQ→REQ.";
    Refine => "refine", "rf", "An element refines another in more detail: REQ→REQ, UC→UC.";
    Trace => "trace", "tr", "A loose traceability link between any two elements.";
    Relation => "relation", "rl", "Any other association (e.g. FLOW→SCHEMA: the flow's data schema).";
}

impl fmt::Display for RelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A node's canvas position.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

/// An ontology node. `uuid` and `semantic_id` may be empty in a node
/// handed to [`store::OntoTx::upsert_node`]: it assigns them.
#[derive(Debug, Clone, PartialEq)]
pub struct OntoNode {
    pub uuid: String,
    pub node_type: NodeType,
    pub semantic_id: String,
    pub name: String,
    pub descr: String,
    /// Free properties (everything but Name, Descr, uuid, semanticId, position).
    pub props: Map<String, Value>,
    pub position: Option<Position>,
}

impl OntoNode {
    /// A new node without ids (assigned when it is staged).
    pub fn new(node_type: NodeType, name: &str, descr: &str) -> OntoNode {
        OntoNode {
            uuid: String::new(),
            node_type,
            semantic_id: String::new(),
            name: name.to_string(),
            descr: descr.to_string(),
            props: Map::new(),
            position: None,
        }
    }
}

/// An ontology edge between two nodes (by UUID). At most one edge per
/// `(src, rel, dst)`; `uuid` is assigned when `None`.
#[derive(Debug, Clone, PartialEq)]
pub struct OntoEdge {
    pub uuid: Option<String>,
    pub src: String,
    pub rel: RelType,
    pub dst: String,
    pub props: Map<String, Value>,
}

impl OntoEdge {
    pub fn new(src: &str, rel: RelType, dst: &str) -> OntoEdge {
        OntoEdge {
            uuid: None,
            src: src.to_string(),
            rel,
            dst: dst.to_string(),
            props: Map::new(),
        }
    }

    pub fn key(&self) -> EdgeKey {
        (self.src.clone(), self.rel, self.dst.clone())
    }
}

/// `(src uuid, rel, dst uuid)`: an edge's identity.
pub type EdgeKey = (String, RelType, String);

/// A deleted node or edge, kept so CHANGED captures can report it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tombstone {
    /// `node` or `edge`.
    pub kind: String,
    /// The node's or the edge's UUID.
    pub id: String,
    /// The seq at which it was deleted.
    pub seq: i64,
    /// What it was: `{type, semanticId, Name}` of a node, `{src, rel, dst}`
    /// (semantic IDs) of an edge.
    pub data: Value,
}

/// A whole ontology graph as stored at `seq`.
#[derive(Debug, Clone, Default)]
pub struct OntologyGraph {
    pub name: String,
    /// The graph's change sequence number (0 for a graph never written).
    pub seq: i64,
    /// Nodes by UUID.
    pub nodes: BTreeMap<String, OntoNode>,
    /// Edges by `(src, rel, dst)`.
    pub edges: BTreeMap<EdgeKey, OntoEdge>,
    /// The seq at which each node / edge last changed.
    pub node_seq: HashMap<String, i64>,
    pub edge_seq: HashMap<EdgeKey, i64>,
    /// Edge UUID → edge key.
    pub edge_uuids: HashMap<String, EdgeKey>,
    /// Last semantic-ID number handed out per type (never goes back).
    pub counters: BTreeMap<NodeType, u32>,
    /// Every semantic ID ever assigned → UUID (live and retired).
    pub semantic_ids: HashMap<String, String>,
    pub tombstones: Vec<Tombstone>,
}

impl OntologyGraph {
    pub fn new(name: &str) -> OntologyGraph {
        OntologyGraph {
            name: name.to_string(),
            ..OntologyGraph::default()
        }
    }

    /// The live node with this semantic ID.
    pub fn by_semantic_id(&self, sid: &str) -> Option<&OntoNode> {
        self.semantic_ids
            .get(sid)
            .and_then(|u| self.nodes.get(u))
            .filter(|n| n.semantic_id == sid)
    }

    /// UUID of the live node with this semantic ID.
    pub fn uuid_of(&self, sid: &str) -> Option<&str> {
        self.by_semantic_id(sid).map(|n| n.uuid.as_str())
    }

    /// Semantic ID of the live node with this UUID.
    pub fn semantic_id_of(&self, uuid: &str) -> Option<&str> {
        self.nodes.get(uuid).map(|n| n.semantic_id.as_str())
    }

    /// A node by UUID or semantic ID.
    pub fn find(&self, reference: &str) -> Option<&OntoNode> {
        self.nodes
            .get(reference)
            .or_else(|| self.by_semantic_id(reference))
    }

    /// An edge by its UUID.
    pub fn edge_by_uuid(&self, uuid: &str) -> Option<&OntoEdge> {
        self.edge_uuids.get(uuid).and_then(|k| self.edges.get(k))
    }

    /// Nodes in output order: by type (seed order), then semantic-ID number, then name.
    pub fn nodes_ordered(&self) -> Vec<&OntoNode> {
        let mut v: Vec<&OntoNode> = self.nodes.values().collect();
        v.sort_by(|a, b| node_order(a).cmp(&node_order(b)));
        v
    }

    /// Edges in output order: by source node, relationship, target node.
    pub fn edges_ordered(&self) -> Vec<&OntoEdge> {
        let rank: HashMap<&str, usize> = self
            .nodes_ordered()
            .iter()
            .enumerate()
            .map(|(i, n)| (n.uuid.as_str(), i))
            .collect();
        let mut v: Vec<&OntoEdge> = self.edges.values().collect();
        v.sort_by_key(|e| {
            (
                rank.get(e.src.as_str()).copied().unwrap_or(usize::MAX),
                e.rel,
                rank.get(e.dst.as_str()).copied().unwrap_or(usize::MAX),
            )
        });
        v
    }

    /// Node counts per type, in type order (types without nodes left out).
    pub fn counts_by_type(&self) -> Vec<(NodeType, usize)> {
        let mut counts: BTreeMap<NodeType, usize> = BTreeMap::new();
        for n in self.nodes.values() {
            *counts.entry(n.node_type).or_default() += 1;
        }
        counts.into_iter().collect()
    }
}

fn node_order(n: &OntoNode) -> (NodeType, u32, &str, &str) {
    let num = semantic::parse(&n.semantic_id)
        .map(|p| p.number)
        .unwrap_or(u32::MAX);
    (n.node_type, num, n.name.as_str(), n.uuid.as_str())
}

pub use crate::model::rel::HIERARCHY_RELS;

/// Cycles of an ontology graph along [`HIERARCHY_RELS`]: the code graph's
/// cycle detection, whose dependency relations include them.
pub fn find_cycles(
    store: &crate::store::Store,
    graph: &str,
) -> Result<Vec<crate::analyse::cycles::Cycle>> {
    Ok(crate::analyse::cycles::find_cycles(store, graph)?)
}

/// Live nodes by the name outputs show ([`sanitize::text`] of `Name`):
/// how a node's name, written where a semantic ID could stand (a Format E
/// edge endpoint, an operation's `sourceSemanticId`), is resolved against
/// a graph. A name resolves only when exactly one live node has it; a
/// reference that is a well-formed semantic ID is never looked up here.
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    by_name: HashMap<String, Vec<String>>,
}

/// What a name names in a graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameMatch<'a> {
    /// No live node has the name.
    None,
    /// Exactly one: its UUID.
    One(&'a str),
    /// Several (how many): the name does not identify a node.
    Many(usize),
}

impl NameIndex {
    pub fn new(g: &OntologyGraph) -> NameIndex {
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        for n in g.nodes.values() {
            by_name
                .entry(sanitize::text(&n.name))
                .or_default()
                .push(n.uuid.clone());
        }
        NameIndex { by_name }
    }

    pub fn lookup(&self, name: &str) -> NameMatch<'_> {
        match self.by_name.get(name.trim()).map(Vec::as_slice) {
            None | Some([]) => NameMatch::None,
            Some([one]) => NameMatch::One(one),
            Some(many) => NameMatch::Many(many.len()),
        }
    }

    /// Resolve a reference for `g` (the graph this index was built from):
    /// a well-formed semantic ID as itself, otherwise the semantic ID of
    /// the one node with that name. The error says why not.
    pub fn semantic_id(&self, g: &OntologyGraph, reference: &str) -> Result<String, String> {
        let r = reference.trim();
        if semantic::parse(r).is_ok() {
            return Ok(r.to_string());
        }
        match self.lookup(r) {
            NameMatch::One(u) => g
                .semantic_id_of(u)
                .map(str::to_string)
                .ok_or_else(|| format!("no node `{r}` in graph `{}`", g.name)),
            NameMatch::Many(k) => Err(format!(
                "`{r}` is the name of {k} nodes of graph `{}`; write the node's semantic ID",
                g.name
            )),
            NameMatch::None => Err(format!(
                "`{r}` is neither a semantic ID (Name.TY.NNN) nor the name of a node of graph `{}`",
                g.name
            )),
        }
    }
}

/// A fresh random (v4) UUID.
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Whether `s` can serve as a node or edge id: non-empty, at most 128
/// characters, no whitespace or `|`. Real UUIDs are generated; ids from
/// elsewhere (seed 001's `uuid-sys-123`) are accepted as they are.
pub fn is_uuid_like(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && !s.chars().any(|c| c.is_whitespace() || c == '|')
}
