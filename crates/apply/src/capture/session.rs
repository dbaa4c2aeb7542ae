//! Canvas sessions: what one canvas shows (seed 000's `GraphCanvasState`
//! minus the graph itself, which lives in the store) and who may read it.
//!
//! The state is persisted per `(graph, session id)` so a later capture —
//! from another process — sees the same viewport, filters, layout and
//! selection. Selected nodes are stored as UUIDs (given as UUIDs or
//! semantic IDs), so they survive renames.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::{CaptureError, Result};
use crate::ontology::format_e;
use crate::ontology::{NameIndex, NodeType, OntologyGraph, RelType};
use crate::store::rows::{self, query_rows, CaptureSessionRow, Json};
use crate::store::value::Params;
use crate::store::{queries, Batch, Store, StoreError};

query_rows! {
    /// `queries/capture_session_get.cozo`.
    CaptureSessionGet = "capture_session_get" {
        key { state: Json<'a> }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Viewport {
    pub zoom: f64,
    pub center_x: f64,
    pub center_y: f64,
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport {
            zoom: 1.0,
            center_x: 0.0,
            center_y: 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filters {
    /// Node types shown (empty: all).
    pub node_types: Vec<NodeType>,
    /// Relationship types shown (empty: all).
    pub relation_types: Vec<RelType>,
    /// Show FLOW nodes and `io` edges.
    pub show_flows: bool,
    /// Deepest level of the `compose` hierarchy shown (roots are level 0).
    pub rollup_level: Option<u32>,
}

impl Default for Filters {
    fn default() -> Self {
        Filters {
            node_types: Vec::new(),
            relation_types: Vec::new(),
            show_flows: true,
            rollup_level: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    #[default]
    Hierarchical,
    Force,
    Radial,
    Custom,
}

impl Layout {
    pub fn parse(s: &str) -> Result<Layout> {
        match s {
            "hierarchical" => Ok(Layout::Hierarchical),
            "force" => Ok(Layout::Force),
            "radial" => Ok(Layout::Radial),
            "custom" => Ok(Layout::Custom),
            _ => Err(CaptureError::Invalid(format!(
                "unknown layout `{s}`; expected hierarchical, force, radial or custom"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Layout::Hierarchical => "hierarchical",
            Layout::Force => "force",
            Layout::Radial => "radial",
            Layout::Custom => "custom",
        }
    }
}

/// One canvas session's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionState {
    pub viewport: Viewport,
    pub filters: Filters,
    pub layout: Layout,
    /// Node UUIDs.
    pub selected_nodes: Vec<String>,
    /// Edge UUIDs.
    pub selected_edges: Vec<String>,
    /// Users who may capture this session's context. Empty: only local,
    /// anonymous use (no `--user`).
    pub members: Vec<String>,
}

/// The stored state of a session, if it exists.
pub fn load(store: &Store, graph: &str, session: &str) -> Result<Option<SessionState>> {
    let rows = store.read(
        queries::CAPTURE_SESSION_GET,
        Params::new().with("graph", graph).with("session", session),
    )?;
    match rows::decode_first::<CaptureSessionGet>(&rows).map_err(StoreError::from)? {
        None => Ok(None),
        Some(row) => serde_json::from_value(row.state.into_owned())
            .map(Some)
            .map_err(|e| {
                CaptureError::Invalid(format!(
                    "stored state of session `{session}` is unreadable: {e}"
                ))
            }),
    }
}

pub fn save(store: &Store, graph: &str, session: &str, state: &SessionState) -> Result<()> {
    let mut batch = Batch::new();
    batch.put_row(CaptureSessionRow {
        graph: graph.into(),
        session: session.into(),
        state: Cow::Owned(serde_json::to_value(state).unwrap_or_default()),
    });
    store.apply(batch)?;
    Ok(())
}

/// Changes to a session; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct SessionUpdate {
    pub zoom: Option<f64>,
    pub center: Option<(f64, f64)>,
    pub node_types: Option<Vec<NodeType>>,
    pub relation_types: Option<Vec<RelType>>,
    pub show_flows: Option<bool>,
    /// `Some(None)` clears the rollup level.
    pub rollup_level: Option<Option<u32>>,
    pub layout: Option<Layout>,
    /// Node references (UUIDs or semantic IDs); replaces the selection.
    pub select_nodes: Option<Vec<String>>,
    /// Edge references (UUIDs or `Src -rel-> Dst` lines, ends by semantic ID
    /// or unique name); replaces the selection.
    pub select_edges: Option<Vec<String>>,
    pub add_members: Vec<String>,
    pub remove_members: Vec<String>,
}

/// Apply `update` to the session (created with defaults when new) and
/// store it. References are checked against the graph: an unknown node or
/// edge is an error and nothing is stored.
pub fn update(
    store: &Store,
    graph: &OntologyGraph,
    session: &str,
    update: SessionUpdate,
) -> Result<SessionState> {
    if session.trim().is_empty() {
        return Err(CaptureError::Invalid("session id must not be empty".into()));
    }
    let mut s = load(store, &graph.name, session)?.unwrap_or_default();
    if let Some(z) = update.zoom {
        if !(z.is_finite() && z > 0.0) {
            return Err(CaptureError::Invalid(format!(
                "zoom must be a positive number, got {z}"
            )));
        }
        s.viewport.zoom = z;
    }
    if let Some((x, y)) = update.center {
        if !(x.is_finite() && y.is_finite()) {
            return Err(CaptureError::Invalid(
                "center must be finite numbers".into(),
            ));
        }
        s.viewport.center_x = x;
        s.viewport.center_y = y;
    }
    if let Some(t) = update.node_types {
        s.filters.node_types = dedup(t);
    }
    if let Some(r) = update.relation_types {
        s.filters.relation_types = dedup(r);
    }
    if let Some(f) = update.show_flows {
        s.filters.show_flows = f;
    }
    if let Some(r) = update.rollup_level {
        s.filters.rollup_level = r;
    }
    if let Some(l) = update.layout {
        s.layout = l;
    }
    if let Some(refs) = update.select_nodes {
        let mut uuids = Vec::new();
        for r in refs {
            let node = graph.find(r.trim()).ok_or_else(|| {
                CaptureError::Invalid(format!(
                    "cannot select `{r}`: no such node in graph `{}`",
                    graph.name
                ))
            })?;
            uuids.push(node.uuid.clone());
        }
        s.selected_nodes = dedup(uuids);
    }
    if let Some(refs) = update.select_edges {
        let mut uuids = Vec::new();
        for r in refs {
            uuids.push(resolve_edge(graph, r.trim())?);
        }
        s.selected_edges = dedup(uuids);
    }
    for m in update.add_members {
        let m = m.trim().to_string();
        if m.is_empty() {
            return Err(CaptureError::Invalid(
                "member names must not be empty".into(),
            ));
        }
        if !s.members.contains(&m) {
            s.members.push(m);
        }
    }
    s.members.retain(|m| !update.remove_members.contains(m));
    save(store, &graph.name, session, &s)?;
    Ok(s)
}

fn resolve_edge(graph: &OntologyGraph, r: &str) -> Result<String> {
    let unknown = || {
        CaptureError::Invalid(format!(
            "cannot select edge `{r}`: no such edge in graph `{}`",
            graph.name
        ))
    };
    if let Some(e) = graph.edge_by_uuid(r) {
        return Ok(e.uuid.clone().unwrap_or_default());
    }
    // A one-line Format E document: its endpoints are semantic IDs or
    // names of the graph's nodes.
    let text = format!("## Edges\n{r}\n");
    let names = NameIndex::new(graph);
    let parsed = format_e::parse_with(&text, &|name: &str| names.semantic_id(graph, name))
        .map_err(|_| unknown())?;
    let e = parsed.edges.first().ok_or_else(unknown)?;
    let key = (
        graph.uuid_of(&e.src).ok_or_else(unknown)?.to_string(),
        e.rel,
        graph.uuid_of(&e.dst).ok_or_else(unknown)?.to_string(),
    );
    graph
        .edges
        .get(&key)
        .and_then(|e| e.uuid.clone())
        .ok_or_else(unknown)
}

fn dedup<T: PartialEq>(v: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}
