//! Canvas context capture (seed 000): what a canvas session shows of an
//! ontology graph, as Format E with the seed's metadata header, for an
//! LLM request.
//!
//! Why here and not in the frontend: the capture must be cheap to repeat
//! (every chat turn asks for it), exact about what changed, and must never
//! leak what the store holds but a prompt must not (credentials, script
//! injections) — so it sits next to the graph, reads the persisted session
//! state, and caches by fingerprint:
//!
//! - modes FULL, SELECTED, VISIBLE, CHANGED, MINIMAL ([`Mode`]) and the
//!   seed's options ([`CaptureOptions`]); `maxNodes` keeps the most
//!   relevant nodes (seed 004's relevance over the blast radius from the
//!   selection, or from the system nodes), not the first ones;
//! - the cache holds one entry per session and slot (mode + options), used
//!   exactly while its fingerprint — graph seq, the session state the
//!   output reads, the options, and for CHANGED the session's capture
//!   mark — is current; hits and misses are counted per session;
//! - the token count is the real tokenizer's;
//! - names and descriptions are sanitised and sensitive properties dropped
//!   ([`crate::ontology::sanitize`]); a session with members answers only
//!   to them.

pub mod session;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::analyse::blast::blast_radius;
use crate::analyse::relevance::{score, Signals, Strategy};
use crate::ontology::format_e::{self, EmitOptions};
use crate::ontology::store::load_graph;
use crate::ontology::{
    sanitize, NodeType, OntoEdge, OntoNode, OntologyError, OntologyGraph, RelType, ONTOLOGY_SOURCE,
};
use crate::store::rows::{self, query_rows, Json, StoredRow, Str};
use crate::store::value::{json as json_value, Params};
use crate::store::{queries, Store, StoreError};
use crate::support::tokens::{Encoding, TokenCounter};
use session::SessionState;

#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("no session `{session}` for graph `{graph}`; create it with `graphctx session set --graph {graph} --session {session}`")]
    NoSession { graph: String, session: String },
    #[error("no graph `{0}` in the database; import one with `graphctx graph import`")]
    NoGraph(String),
    #[error("access denied: user `{user}` is not a member of session `{session}`")]
    AccessDenied { user: String, session: String },
    #[error("session `{session}` has members; pass --user NAME to capture its context")]
    UserRequired { session: String },
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Ontology(#[from] OntologyError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type Result<T, E = CaptureError> = std::result::Result<T, E>;

/// Seed 000's `ContextCaptureMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Mode {
    Full,
    Selected,
    Visible,
    Changed,
    Minimal,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode> {
        match s.to_ascii_lowercase().as_str() {
            "full" => Ok(Mode::Full),
            "selected" => Ok(Mode::Selected),
            "visible" => Ok(Mode::Visible),
            "changed" => Ok(Mode::Changed),
            "minimal" => Ok(Mode::Minimal),
            _ => Err(CaptureError::Invalid(format!(
                "unknown capture mode `{s}`; expected full, selected, visible, changed or minimal"
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Full => "FULL",
            Mode::Selected => "SELECTED",
            Mode::Visible => "VISIBLE",
            Mode::Changed => "CHANGED",
            Mode::Minimal => "MINIMAL",
        }
    }
}

/// Seed 000's `ContextCaptureOptions` (defaults as the seed's).
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureOptions {
    pub mode: Mode,
    pub include_metadata: bool,
    pub include_positions: bool,
    pub include_viewport: bool,
    /// Override: only the selection, whatever the mode (as SELECTED).
    pub selected_only: bool,
    pub max_nodes: Option<usize>,
    pub encoding: Encoding,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            mode: Mode::Full,
            include_metadata: true,
            include_positions: false,
            include_viewport: false,
            selected_only: false,
            max_nodes: None,
            encoding: Encoding::O200k,
        }
    }
}

impl CaptureOptions {
    /// The mode in effect (`selected_only` overrides).
    pub fn effective_mode(&self) -> Mode {
        if self.selected_only && self.mode != Mode::Minimal {
            Mode::Selected
        } else {
            self.mode
        }
    }

    /// The cache slot: everything in the options that changes the output.
    fn slot(&self) -> String {
        format!(
            "{}:m{}p{}v{}:max{}:{}",
            self.effective_mode().name(),
            self.include_metadata as u8,
            self.include_positions as u8,
            self.include_viewport as u8,
            self.max_nodes.map(|n| n.to_string()).unwrap_or_default(),
            self.encoding.name()
        )
    }
}

/// Seed 000's `ContextMetadata`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextMetadata {
    pub total_nodes: usize,
    pub total_edges: usize,
    /// `Name (TYPE)` of the selected nodes.
    pub selected_nodes: Vec<String>,
    pub active_filters: Vec<String>,
    pub layout: String,
    /// Zoom in percent.
    pub zoom: i64,
    /// Milliseconds since the Unix epoch at which the capture was computed.
    pub timestamp: i64,
    /// The graph seq the capture shows.
    pub version: i64,
    /// Node count before `maxNodes` cut it, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_from: Option<usize>,
}

/// Seed 000's `CaptureResult`, with the exact token count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureResult {
    #[serde(rename = "formatE")]
    pub format_e: String,
    pub metadata: ContextMetadata,
    pub mode: Mode,
    /// Tokens of `formatE` with the real tokenizer.
    pub token_count: usize,
    pub tokenizer: String,
    pub cache_key: String,
    /// Served from the cache.
    pub cached: bool,
}

/// Check that `user` may read `session`: a session with members answers
/// only to a member; one without members only to anonymous local use.
pub fn check_access(state: &SessionState, session: &str, user: Option<&str>) -> Result<()> {
    match user {
        Some(u) if state.members.iter().any(|m| m == u) => Ok(()),
        Some(u) => Err(CaptureError::AccessDenied {
            user: u.to_string(),
            session: session.to_string(),
        }),
        None if state.members.is_empty() => Ok(()),
        None => Err(CaptureError::UserRequired {
            session: session.to_string(),
        }),
    }
}

query_rows! {
    /// `queries/capture_lookup.cozo`: one row per kind of fact (`what`),
    /// each with its own column types: the session's state...
    LookupSession = "capture_lookup" {
        key { what: Str<'a> }
        value { a: Json<'a>, b: Option<Str<'a>> }
    }
    /// ...the graph's seq and source...
    LookupGraph = "capture_lookup" {
        key { what: Str<'a> }
        value { a: i64, b: Str<'a> }
    }
    /// ...the session's capture mark...
    LookupMark = "capture_lookup" {
        key { what: Str<'a> }
        value { a: i64, b: Option<Str<'a>> }
    }
    /// ...and the slot's cache entry (fingerprint, result).
    LookupCache = "capture_lookup" {
        key { what: Str<'a> }
        value { a: Str<'a>, b: Json<'a> }
    }
    /// `queries/onto_counts.cozo`.
    OntoCounts = "onto_counts" {
        key { what: Str<'a>, k: Str<'a> }
        value { n: i64 }
    }
    /// `queries/onto_node_names.cozo`.
    OntoNodeNames = "onto_node_names" {
        key { uuid: Str<'a> }
        value { kind: Str<'a>, name: Str<'a> }
    }
    /// `queries/capture_stats_get.cozo`.
    CaptureStatsGet = "capture_stats_get" {
        key { session: Str<'a> }
        value { hits: i64, misses: i64, n: i64 }
    }
}

/// Capture the context of `session` on `graph`.
///
/// One read answers a cache hit (session, graph seq, capture mark and the
/// slot's entry come back together) and one write counts it; a miss loads
/// the graph (MINIMAL only its counts), renders, and stores the result,
/// the count and the mark in one transaction.
pub fn capture(
    store: &Store,
    graph: &str,
    session: &str,
    user: Option<&str>,
    opts: &CaptureOptions,
) -> Result<CaptureResult> {
    let slot = opts.slot();
    let p = || slot_params(graph, session, &slot);
    let found = lookup(store, p())?;
    let state = session_state(found.state, graph, session)?;
    check_access(&state, session, user)?;
    let seq = ontology_seq(found.graph_row, graph)?;
    let mark = found.mark;
    let fingerprint = fingerprint(seq, mark, &state, opts);
    let cache_key = format!("{graph}:{session}:{slot}:{}", &fingerprint[..16]);
    let cached = found
        .entry
        .filter(|(fp, _)| *fp == fingerprint)
        .and_then(|(_, v)| serde_json::from_value::<CaptureResult>(v).ok());
    match cached {
        Some(mut r) => {
            store.write(
                queries::CAPTURE_RECORD,
                p().with("hit", 1)
                    .with("miss", 0)
                    .with("seq", seq.max(mark)),
            )?;
            r.cached = true;
            Ok(r)
        }
        None => {
            let mut r = compute(store, graph, seq, mark, &state, opts)?;
            r.cache_key = cache_key;
            store.write(
                queries::CAPTURE_STORE,
                p().with("fingerprint", fingerprint.as_str())
                    .with(
                        "result",
                        json_value(serde_json::to_value(&r).unwrap_or(Value::Null)),
                    )
                    .with("hit", 0)
                    .with("miss", 1)
                    .with("seq", seq.max(mark)),
            )?;
            Ok(r)
        }
    }
}

/// The parameters naming a session's cache slot on a graph.
fn slot_params(graph: &str, session: &str, slot: &str) -> Params {
    Params::new()
        .with("graph", graph)
        .with("session", session)
        .with("slot", slot)
}

/// What the one lookup read returns: the session's stored state, the
/// graph's seq and source, the session's capture mark, the slot's cache
/// entry (fingerprint, result).
struct Lookup {
    state: Option<Value>,
    graph_row: Option<(i64, String)>,
    mark: i64,
    entry: Option<(String, Value)>,
}

/// Read the session, the graph, the mark and the cache entry in one query.
fn lookup(store: &Store, params: Params) -> Result<Lookup> {
    let rows = store.read(queries::CAPTURE_LOOKUP, params)?;
    let mut found = Lookup {
        state: None,
        graph_row: None,
        mark: 0,
        entry: None,
    };
    rows::check_headers::<LookupSession>(&rows).map_err(StoreError::from)?;
    for r in &rows.rows {
        let what: Str =
            rows::column(r, 0, LookupSession::NAME, "what").map_err(StoreError::from)?;
        match what.as_ref() {
            "session" => {
                found.state = Some(
                    LookupSession::decode(r)
                        .map_err(StoreError::from)?
                        .a
                        .into_owned(),
                )
            }
            "graph" => {
                let g = LookupGraph::decode(r).map_err(StoreError::from)?;
                found.graph_row = Some((g.a, g.b.into_owned()))
            }
            "mark" => found.mark = LookupMark::decode(r).map_err(StoreError::from)?.a,
            "cache" => {
                let c = LookupCache::decode(r).map_err(StoreError::from)?;
                found.entry = Some((c.a.into_owned(), c.b.into_owned()))
            }
            _ => {}
        }
    }
    Ok(found)
}

/// The session's state, decoded; an error when there is no such session
/// or its state is unreadable.
fn session_state(stored: Option<Value>, graph: &str, session: &str) -> Result<SessionState> {
    match stored {
        None => Err(CaptureError::NoSession {
            graph: graph.to_string(),
            session: session.to_string(),
        }),
        Some(v) => serde_json::from_value(v).map_err(|e| {
            CaptureError::Invalid(format!(
                "stored state of session `{session}` is unreadable: {e}"
            ))
        }),
    }
}

/// The graph's seq; an error when there is no such graph or it is not an
/// ontology graph.
fn ontology_seq(graph_row: Option<(i64, String)>, graph: &str) -> Result<i64> {
    match graph_row {
        None => Err(CaptureError::NoGraph(graph.to_string())),
        Some((_, source)) if source != ONTOLOGY_SOURCE => Err(OntologyError::NotOntology {
            graph: graph.to_string(),
            kind: source,
        }
        .into()),
        Some((seq, _)) => Ok(seq),
    }
}

/// A cache miss: load the graph (MINIMAL only its counts) and render.
fn compute(
    store: &Store,
    graph: &str,
    seq: i64,
    mark: i64,
    state: &SessionState,
    opts: &CaptureOptions,
) -> Result<CaptureResult> {
    if opts.effective_mode() == Mode::Minimal {
        let (g, totals) = load_minimal(store, graph, seq, state)?;
        render_with(store, &g, &totals, state, opts, mark)
    } else {
        render(store, &load_graph(store, graph)?, state, opts, mark)
    }
}

/// Counts of a graph: what MINIMAL shows.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub nodes: usize,
    pub edges: usize,
    pub by_type: Vec<(NodeType, usize)>,
    pub by_rel: Vec<(RelType, usize)>,
}

impl Totals {
    pub fn of(g: &OntologyGraph) -> Totals {
        let mut by_rel: std::collections::BTreeMap<RelType, usize> = Default::default();
        for e in g.edges.values() {
            *by_rel.entry(e.rel).or_default() += 1;
        }
        Totals {
            nodes: g.nodes.len(),
            edges: g.edges.len(),
            by_type: g.counts_by_type(),
            by_rel: by_rel.into_iter().collect(),
        }
    }
}

/// What MINIMAL needs — the counts and the selected nodes' names — read
/// without loading the graph.
fn load_minimal(
    store: &Store,
    graph: &str,
    seq: i64,
    state: &SessionState,
) -> Result<(OntologyGraph, Totals)> {
    let mut g = OntologyGraph::new(graph);
    g.seq = seq;
    let p = Params::new().with("graph", graph);
    let mut totals = Totals::default();
    let rows = store.read(queries::ONTO_COUNTS, p.clone())?;
    for r in rows::decode_rows::<OntoCounts>(&rows).map_err(StoreError::from)? {
        let n = r.n.max(0) as usize;
        if r.what == "node" {
            if let Ok(t) = NodeType::parse(&r.k) {
                totals.nodes += n;
                totals.by_type.push((t, n));
            }
        } else if let Ok(rel) = RelType::parse(&r.k) {
            totals.edges += n;
            totals.by_rel.push((rel, n));
        }
    }
    totals.by_type.sort();
    totals.by_rel.sort();
    let rows = store.read(
        queries::ONTO_NODE_NAMES,
        p.with("keys", crate::store::value::str_list(&state.selected_nodes)),
    )?;
    for r in rows::decode_rows::<OntoNodeNames>(&rows).map_err(StoreError::from)? {
        if let Ok(t) = NodeType::parse(&r.kind) {
            let mut n = OntoNode::new(t, &r.name, "");
            n.uuid = r.uuid.into_owned();
            g.nodes.insert(n.uuid.clone(), n);
        }
    }
    Ok((g, totals))
}

/// Everything outside the options that the output of `opts` reads.
fn fingerprint(seq: i64, mark: i64, s: &SessionState, opts: &CaptureOptions) -> String {
    let mode = opts.effective_mode();
    let mut v = json!({"seq": seq});
    let selection = json!([s.selected_nodes, s.selected_edges]);
    if opts.include_metadata {
        v["filters"] = json!(s.filters);
        v["layout"] = json!(s.layout);
        v["zoom"] = json!(s.viewport.zoom);
        v["selection"] = selection.clone();
    }
    if opts.include_viewport {
        v["viewport"] = json!(s.viewport);
    }
    match mode {
        Mode::Selected => v["selection"] = selection,
        Mode::Visible => v["filters"] = json!(s.filters),
        Mode::Changed => v["mark"] = json!(mark),
        Mode::Full | Mode::Minimal => {}
    }
    if opts.max_nodes.is_some() {
        v["selection"] = json!([s.selected_nodes, s.selected_edges]);
    }
    blake3::hash(v.to_string().as_bytes()).to_hex().to_string()
}

/// Compute a capture (no cache).
pub fn render(
    store: &Store,
    g: &OntologyGraph,
    state: &SessionState,
    opts: &CaptureOptions,
    mark: i64,
) -> Result<CaptureResult> {
    render_with(store, g, &Totals::of(g), state, opts, mark)
}

fn render_with(
    store: &Store,
    g: &OntologyGraph,
    totals: &Totals,
    state: &SessionState,
    opts: &CaptureOptions,
    mark: i64,
) -> Result<CaptureResult> {
    let mode = opts.effective_mode();
    let selected: Vec<&OntoNode> = state
        .selected_nodes
        .iter()
        .filter_map(|u| g.nodes.get(u))
        .collect();
    let (mut nodes, mut edges) = shown_in_mode(g, state, &selected, mode, mark);
    let truncated_from = truncate_to_max(store, g, state, opts, &mut nodes, &mut edges)?;
    let emit_opts = EmitOptions {
        positions: opts.include_positions,
        props: true,
        sanitize: true,
    };
    let body = if mode == Mode::Minimal {
        minimal_body(totals, opts)
    } else {
        graph_body(g, &nodes, &edges, mode, mark, emit_opts)
    };
    let counts = if mode == Mode::Minimal {
        (totals.nodes, totals.edges)
    } else {
        (nodes.len(), edges.len())
    };
    let metadata = capture_metadata(g, state, &selected, counts, truncated_from);
    let mut text = String::new();
    if opts.include_metadata {
        text.push_str(&header(&metadata, mode, state, opts.include_viewport));
    } else if opts.include_viewport {
        text.push_str(&viewport_lines(state));
        text.push('\n');
    }
    text.push_str(&body);
    let token_count = TokenCounter::new(opts.encoding).count_exact(&text);
    Ok(CaptureResult {
        format_e: text,
        metadata,
        mode,
        token_count,
        tokenizer: opts.encoding.name().to_string(),
        cache_key: String::new(),
        cached: false,
    })
}

/// The nodes and edges `mode` shows: all, the selection and its edges, the
/// filtered view, those changed since `mark`, or none (MINIMAL).
fn shown_in_mode<'a>(
    g: &'a OntologyGraph,
    state: &SessionState,
    selected: &[&OntoNode],
    mode: Mode,
    mark: i64,
) -> (Vec<&'a OntoNode>, Vec<&'a OntoEdge>) {
    let selected_set: HashSet<&str> = selected.iter().map(|n| n.uuid.as_str()).collect();
    let selected_edges: HashSet<&str> = state.selected_edges.iter().map(String::as_str).collect();
    let all_nodes = g.nodes_ordered();
    let all_edges = g.edges_ordered();
    match mode {
        Mode::Full => (all_nodes.clone(), all_edges.clone()),
        Mode::Selected => (
            all_nodes
                .iter()
                .copied()
                .filter(|n| selected_set.contains(n.uuid.as_str()))
                .collect(),
            all_edges
                .iter()
                .copied()
                .filter(|e| {
                    selected_set.contains(e.src.as_str())
                        || selected_set.contains(e.dst.as_str())
                        || e.uuid
                            .as_deref()
                            .is_some_and(|u| selected_edges.contains(u))
                })
                .collect(),
        ),
        Mode::Visible => visible(g, &state.filters, &all_nodes, &all_edges),
        Mode::Changed => (
            all_nodes
                .iter()
                .copied()
                .filter(|n| g.node_seq.get(&n.uuid).copied().unwrap_or(0) > mark)
                .collect(),
            all_edges
                .iter()
                .copied()
                .filter(|e| g.edge_seq.get(&e.key()).copied().unwrap_or(0) > mark)
                .collect(),
        ),
        Mode::Minimal => (Vec::new(), Vec::new()),
    }
}

/// Keep the `maxNodes` most relevant nodes and the edges between kept
/// nodes; the node count before the cut, when there was one.
fn truncate_to_max(
    store: &Store,
    g: &OntologyGraph,
    state: &SessionState,
    opts: &CaptureOptions,
    nodes: &mut Vec<&OntoNode>,
    edges: &mut Vec<&OntoEdge>,
) -> Result<Option<usize>> {
    let Some(max) = opts.max_nodes else {
        return Ok(None);
    };
    if nodes.len() <= max {
        return Ok(None);
    }
    let truncated_from = Some(nodes.len());
    let keep: HashSet<String> = rank(store, g, nodes, &state.selected_nodes)?
        .into_iter()
        .take(max)
        .collect();
    let dropped: HashSet<&str> = nodes
        .iter()
        .filter(|n| !keep.contains(&n.uuid))
        .map(|n| n.uuid.as_str())
        .collect();
    nodes.retain(|n| keep.contains(&n.uuid));
    edges.retain(|e| !dropped.contains(e.src.as_str()) && !dropped.contains(e.dst.as_str()));
    Ok(truncated_from)
}

/// MINIMAL's body: the totals (unless the header shows them) and the
/// counts by node type and by relationship type.
fn minimal_body(totals: &Totals, opts: &CaptureOptions) -> String {
    let mut body = String::new();
    if !opts.include_metadata {
        body.push_str(&format!(
            "**Total Nodes:** {}\n**Total Edges:** {}\n",
            totals.nodes, totals.edges
        ));
    }
    body.push_str(&format!("**Node Types:** {}\n", type_counts(totals)));
    body.push_str(&format!("**Relationship Types:** {}\n", rel_counts(totals)));
    body
}

/// The shown nodes and edges as Format E, followed in CHANGED by the
/// `## Deleted` lines of what was deleted since `mark`.
fn graph_body(
    g: &OntologyGraph,
    nodes: &[&OntoNode],
    edges: &[&OntoEdge],
    mode: Mode,
    mark: i64,
    emit_opts: EmitOptions,
) -> String {
    // CHANGED: nodes first, then edges; each by deletion seq, then text.
    let mut deleted: Vec<(bool, i64, String)> = Vec::new();
    if mode == Mode::Changed {
        deleted = g
            .tombstones
            .iter()
            .filter(|t| t.seq > mark)
            .map(|t| (t.kind != "node", t.seq, deleted_line(&t.kind, &t.data)))
            .collect();
        deleted.sort();
    }
    // A name a deleted node line shows is not used as a short name.
    let deleted_names = deleted
        .iter()
        .filter(|(edge, _, _)| !edge)
        .filter_map(|(_, _, line)| line.split('|').next());
    let legend = format_e::Legend::new(g, nodes, deleted_names, emit_opts);
    let mut body = format_e::emit_with(g, nodes, edges, &legend, emit_opts);
    if !deleted.is_empty() {
        body.push_str("## Deleted\n");
        for (_, _, line) in deleted {
            body.push_str(&line);
            body.push('\n');
        }
    }
    body
}

/// The capture's metadata, stamped with the current time: the shown
/// counts, the selected nodes' names and the session's view state.
fn capture_metadata(
    g: &OntologyGraph,
    state: &SessionState,
    selected: &[&OntoNode],
    (total_nodes, total_edges): (usize, usize),
    truncated_from: Option<usize>,
) -> ContextMetadata {
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    ContextMetadata {
        total_nodes,
        total_edges,
        selected_nodes: selected
            .iter()
            .map(|n| format!("{} ({})", sanitize::text(&n.name), n.node_type))
            .collect(),
        active_filters: format_filters(&state.filters),
        layout: state.layout.name().to_string(),
        zoom: (state.viewport.zoom * 100.0).round() as i64,
        timestamp,
        version: g.seq,
        truncated_from,
    }
}

/// VISIBLE: the session's filters applied; edges only between visible nodes.
fn visible<'a>(
    g: &OntologyGraph,
    f: &session::Filters,
    nodes: &[&'a OntoNode],
    edges: &[&'a OntoEdge],
) -> (Vec<&'a OntoNode>, Vec<&'a OntoEdge>) {
    let depth = f.rollup_level.map(|_| compose_depths(g));
    let shown: Vec<&OntoNode> = nodes
        .iter()
        .copied()
        .filter(|n| f.node_types.is_empty() || f.node_types.contains(&n.node_type))
        .filter(|n| f.show_flows || n.node_type != NodeType::Flow)
        .filter(|n| match (&depth, f.rollup_level) {
            (Some(d), Some(level)) => d.get(n.uuid.as_str()).copied().unwrap_or(0) <= level,
            _ => true,
        })
        .collect();
    let ids: HashSet<&str> = shown.iter().map(|n| n.uuid.as_str()).collect();
    let shown_edges = edges
        .iter()
        .copied()
        .filter(|e| ids.contains(e.src.as_str()) && ids.contains(e.dst.as_str()))
        .filter(|e| f.relation_types.is_empty() || f.relation_types.contains(&e.rel))
        .filter(|e| f.show_flows || e.rel != RelType::Io)
        .collect();
    (shown, shown_edges)
}

/// Level of each node in the `compose` hierarchy: roots (no incoming
/// compose edge) are 0, their parts 1, ... (shortest path from a root).
fn compose_depths(g: &OntologyGraph) -> HashMap<&str, u32> {
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut has_parent: HashSet<&str> = HashSet::new();
    for e in g.edges.values().filter(|e| e.rel == RelType::Compose) {
        children
            .entry(e.src.as_str())
            .or_default()
            .push(e.dst.as_str());
        has_parent.insert(e.dst.as_str());
    }
    let mut depth: HashMap<&str, u32> = HashMap::new();
    let mut queue: VecDeque<&str> = VecDeque::new();
    for u in g.nodes.keys() {
        if !has_parent.contains(u.as_str()) {
            depth.insert(u.as_str(), 0);
            queue.push_back(u.as_str());
        }
    }
    while let Some(u) = queue.pop_front() {
        let d = depth[u];
        for &c in children.get(u).map(Vec::as_slice).unwrap_or(&[]) {
            if !depth.contains_key(c) {
                depth.insert(c, d + 1);
                queue.push_back(c);
            }
        }
    }
    depth
}

/// Candidates by relevance, most relevant first: seed 004's formula over
/// the blast radius (3 hops, both directions) from the selection — or,
/// without one, from the system (SYS) nodes or the hierarchy's roots —
/// ties broken by degree, then by output order.
fn rank(
    store: &Store,
    g: &OntologyGraph,
    candidates: &[&OntoNode],
    selection: &[String],
) -> Result<Vec<String>> {
    let mut bases: Vec<String> = selection
        .iter()
        .filter(|u| g.nodes.contains_key(*u))
        .cloned()
        .collect();
    if bases.is_empty() {
        bases = g
            .nodes
            .values()
            .filter(|n| n.node_type == NodeType::Sys)
            .map(|n| n.uuid.clone())
            .collect();
    }
    if bases.is_empty() {
        bases = compose_depths(g)
            .into_iter()
            .filter(|(_, d)| *d == 0)
            .map(|(u, _)| u.to_string())
            .collect();
    }
    let reached = blast_radius(store, &g.name, &bases, 3)?;
    let reached: HashMap<&str, _> = reached.iter().map(|r| (r.key.as_str(), r)).collect();
    let mut fan_in: HashMap<&str, i64> = HashMap::new();
    let mut degree: HashMap<&str, i64> = HashMap::new();
    for e in g.edges.values() {
        *fan_in.entry(e.dst.as_str()).or_default() += 1;
        *degree.entry(e.dst.as_str()).or_default() += 1;
        *degree.entry(e.src.as_str()).or_default() += 1;
    }
    let base_set: BTreeSet<&str> = bases.iter().map(String::as_str).collect();
    let mut scored: Vec<(f64, i64, usize, &str)> = candidates
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let u = n.uuid.as_str();
            let r = reached.get(u);
            let signals = Signals {
                is_base: base_set.contains(u),
                distance: r.map(|r| r.distance),
                via_rels: r
                    .map(|r| r.rels().iter().map(|s| s.to_string()).collect())
                    .unwrap_or_default(),
                via_count: r.map(|r| r.via.len()).unwrap_or(0),
                is_test: n.node_type == NodeType::Test,
                fan_in: fan_in.get(u).copied().unwrap_or(0),
                cochange: 0.0,
            };
            (
                score(Strategy::Seed, &signals),
                degree.get(u).copied().unwrap_or(0),
                i,
                u,
            )
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    Ok(scored.into_iter().map(|s| s.3.to_string()).collect())
}

fn type_counts(t: &Totals) -> String {
    if t.by_type.is_empty() {
        return "None".into();
    }
    t.by_type
        .iter()
        .map(|(t, n)| format!("{t} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn rel_counts(t: &Totals) -> String {
    if t.by_rel.is_empty() {
        return "None".into();
    }
    t.by_rel
        .iter()
        .map(|(r, n)| format!("{r} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn deleted_line(kind: &str, data: &Value) -> String {
    let s = |k: &str| {
        data.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if kind == "node" {
        let ty = NodeType::parse(&s("type")).map(|t| t.name()).unwrap_or("?");
        let mut line = format!(
            "{}|{}|{}",
            sanitize::text(&s("Name")).replace(['|', '\n'], " "),
            ty,
            s("semanticId")
        );
        if line.starts_with('#') {
            line.insert(0, '\\');
        }
        line
    } else {
        let rel = RelType::parse(&s("type"))
            .map(|r| r.short())
            .unwrap_or("rl");
        format!("{} -{rel}-> {}", s("source"), s("target"))
    }
}

/// Seed 000's `formatFilters`.
pub fn format_filters(f: &session::Filters) -> Vec<String> {
    let mut parts = Vec::new();
    if !f.node_types.is_empty() {
        let t: Vec<&str> = f.node_types.iter().map(|t| t.name()).collect();
        parts.push(format!("Node Types: {}", t.join(", ")));
    }
    if !f.relation_types.is_empty() {
        let r: Vec<&str> = f.relation_types.iter().map(|r| r.name()).collect();
        parts.push(format!("Relations: {}", r.join(", ")));
    }
    parts.push(format!(
        "Show Flows: {}",
        if f.show_flows { "Yes" } else { "No" }
    ));
    if let Some(l) = f.rollup_level {
        parts.push(format!("Rollup Level: {l}"));
    }
    parts
}

fn viewport_lines(s: &SessionState) -> String {
    format!(
        "**Zoom:** {}%\n**Center:** ({}, {})\n",
        (s.viewport.zoom * 100.0).round() as i64,
        s.viewport.center_x,
        s.viewport.center_y
    )
}

/// Seed 000's `addMetadataHeader`.
fn header(m: &ContextMetadata, mode: Mode, s: &SessionState, viewport: bool) -> String {
    let title = if mode == Mode::Changed {
        "## Current Graph Context (Changed Elements Only)"
    } else {
        "## Current Graph Context"
    };
    let changed = if mode == Mode::Changed {
        " (changed)"
    } else {
        ""
    };
    let mut h = format!(
        "{title}\n\n**Timestamp:** {}\n**Total Nodes:** {}{changed}\n**Total Edges:** {}{changed}\n",
        crate::support::time::format_unix(m.timestamp.div_euclid(1000)),
        m.total_nodes,
        m.total_edges,
    );
    if let Some(from) = m.truncated_from {
        h.push_str(&format!(
            "**Truncated:** {} of {from} nodes kept (by relevance)\n",
            m.total_nodes
        ));
    }
    h.push_str(&format!(
        "**Selected Nodes:** {}\n**Active Filters:** {}\n**Layout:** {}\n",
        if m.selected_nodes.is_empty() {
            "None".to_string()
        } else {
            m.selected_nodes.join(", ")
        },
        if m.active_filters.is_empty() {
            "None".to_string()
        } else {
            m.active_filters.join(" | ")
        },
        m.layout,
    ));
    if viewport {
        h.push_str(&viewport_lines(s));
    } else {
        h.push_str(&format!("**Zoom:** {}%\n", m.zoom));
    }
    h.push_str("\n---\n\n");
    h
}

/// Cache statistics of one session.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheStats {
    pub session: String,
    pub hits: i64,
    pub misses: i64,
    /// hits / (hits + misses), 0 when there were no captures.
    pub hit_rate: f64,
    /// Cached entries (one per mode and options used).
    pub entries: i64,
}

/// Cache statistics of a graph's sessions (`session` filters to one).
pub fn stats(store: &Store, graph: &str, session: Option<&str>) -> Result<Vec<CacheStats>> {
    let rows = store.read(
        queries::CAPTURE_STATS_GET,
        Params::new().with("graph", graph),
    )?;
    let mut out: Vec<CacheStats> = rows::decode_rows::<CaptureStatsGet>(&rows)
        .map_err(StoreError::from)?
        .into_iter()
        .map(|r| {
            let (hits, misses) = (r.hits, r.misses);
            CacheStats {
                session: r.session.into_owned(),
                hits,
                misses,
                hit_rate: if hits + misses > 0 {
                    hits as f64 / (hits + misses) as f64
                } else {
                    0.0
                },
                entries: r.n,
            }
        })
        .filter(|s| session.is_none_or(|x| x == s.session))
        .collect();
    out.sort_by(|a, b| a.session.cmp(&b.session));
    Ok(out)
}
