//! The change log of applied responses: undo and redo that restore exactly.
//!
//! Why row images rather than inverse operations: an inverse ("delete what
//! was created, re-create what was deleted") restores the graph's meaning
//! but not its rows — a re-created node would get new change sequence
//! numbers, tombstones would linger, counters would move. Instead, when a
//! response's batch is staged, every row it touches is read as it is now
//! (`before`) and as the batch leaves it (`after`). Undo puts the `before`
//! rows back (deleting rows that did not exist); redo puts the `after`
//! rows. Both check first that the touched rows are still as the log says
//! (a write outside the log would otherwise be silently overwritten) and
//! land, with the log's own update and the graph's `seq` bump, in one
//! transaction.
//!
//! The log works on whatever relations a batch touches, so it needs their
//! key columns: it asks CozoDB (`::columns`) and builds the row lookup
//! from those names. This is the one place a script is assembled rather
//! than read from `queries/`; it contains only relation and column names
//! declared in `schema/` (checked to be plain identifiers), and every value
//! reaches it as `$keys`.
//!
//! Not recorded: the `graph` row (its `seq` moves forward on undo and redo
//! too, so caches see a change), the log itself, and cached contexts.

use std::collections::{BTreeMap, HashMap};

use cozo::{DataValue, Num};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::error::OperationError;
use super::events::{ChunkUpdates, EdgeView, NodeView};
use std::borrow::Cow;

use crate::store::rows::{self, query_rows, Bytes, Json, OpChangesRow, OpLogRow, StoredRow, Str};
use crate::store::value::Params;
use crate::store::{queries, Batch, Store, StoreError};
use crate::support::time::now_rfc3339;

/// A row's key columns. (`DataValue` only looks mutable to clippy — its
/// regex variant carries a cache — key rows here are plain scalars.)
type Key = Vec<DataValue>;
type Rows = HashMap<Key, Vec<DataValue>>;
/// A stored row with its relation's column names.
type ColumnsAndRow = (Vec<String>, Vec<DataValue>);
/// Per relation: keys in first-seen order, and the row the batch leaves.
type After<'a> = BTreeMap<&'a str, (Vec<Key>, HashMap<Key, Option<Vec<DataValue>>>)>;

/// Relations a change-log entry never records.
const NOT_RECORDED: &[&str] = &["graph", "op_log", "op_changes", "context_cache"];

query_rows! {
    /// The leading columns of `::columns REL` (its `type` column is read
    /// by [`schema_of`] on its own: a field cannot be named `type`).
    Columns = "::columns" {
        key { column: Str<'a>, is_key: bool, index: i64 }
    }
    /// `queries/ops_log_stats.cozo` (`last_entry` is null without entries).
    OpsLogStats = "ops_log_stats" {
        key { last_entry: Option<i64>, undo: i64, redo: i64 }
    }
    /// `queries/ops_log_undone.cozo`.
    OpsLogUndone = "ops_log_undone" {
        key { entry: i64 }
    }
    /// `queries/ops_log_undo_head.cozo` and `queries/ops_log_redo_head.cozo`.
    OpsLogHead = "ops_log_head" {
        key { entry: i64 }
        value { state: Str<'a>, seq: i64, at: Str<'a>, summary: Json<'a> }
    }
    /// `queries/ops_log_changes.cozo`.
    OpsLogChanges = "ops_log_changes" {
        key { changes: Bytes<'a> }
    }
}

/// One touched row: as it was and as the change left it (`None`: absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowImage {
    pub relation: String,
    pub columns: Vec<String>,
    pub key_len: usize,
    pub before: Option<Vec<DataValue>>,
    pub after: Option<Vec<DataValue>>,
}

impl RowImage {
    fn key(&self) -> Vec<DataValue> {
        let row = self.before.as_ref().or(self.after.as_ref());
        row.map(|r| r[..self.key_len].to_vec()).unwrap_or_default()
    }
}

/// Column layout of a stored relation.
#[derive(Debug, Clone)]
struct RelSchema {
    columns: Vec<String>,
    key_len: usize,
    float: Vec<bool>,
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn schema_of(store: &Store, relation: &str) -> Result<RelSchema, StoreError> {
    if !is_ident(relation) {
        return Err(StoreError::Query(format!(
            "change log: `{relation}` is not a relation name"
        )));
    }
    let rows = store.read(&format!("::columns {relation}"), Params::new())?;
    let leading = rows::decode_rows::<Columns>(&rows)?;
    const TYPE: usize = Columns::COLUMNS.len();
    if rows.headers.get(TYPE).map(String::as_str) != Some("type") {
        return Err(rows::RowError::new("::columns", "type", "a column named `type`", None).into());
    }
    let mut cols: Vec<(i64, String, bool, bool)> = Vec::with_capacity(leading.len());
    for (c, r) in leading.into_iter().zip(&rows.rows) {
        let ty: Str = rows::column(r, TYPE, "::columns", "type")?;
        cols.push((
            c.index,
            c.column.into_owned(),
            c.is_key,
            ty.trim_end_matches('?') == "Float",
        ));
    }
    cols.sort_by_key(|c| c.0);
    if cols.iter().any(|c| !is_ident(&c.1)) {
        return Err(StoreError::Query(format!(
            "change log: unexpected column names in `{relation}`"
        )));
    }
    Ok(RelSchema {
        key_len: cols.iter().filter(|c| c.2).count(),
        float: cols.iter().map(|c| c.3).collect(),
        columns: cols.into_iter().map(|c| c.1).collect(),
    })
}

/// The stored rows of `relation` with these keys, by key.
#[allow(clippy::mutable_key_type)]
fn read_rows(
    store: &Store,
    relation: &str,
    schema: &RelSchema,
    keys: Vec<Vec<DataValue>>,
) -> Result<Rows, StoreError> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let kvars: Vec<String> = (0..schema.key_len).map(|i| format!("k{i}")).collect();
    let vars: Vec<String> = (0..schema.columns.len())
        .map(|i| {
            if i < schema.key_len {
                format!("k{i}")
            } else {
                format!("v{i}")
            }
        })
        .collect();
    let bindings: Vec<String> = schema
        .columns
        .iter()
        .zip(&vars)
        .map(|(c, v)| format!("{c}: {v}"))
        .collect();
    let script = format!(
        "keys[{k}] <- $keys\n?[{all}] := keys[{k}], *{relation}{{{b}}}",
        k = kvars.join(", "),
        all = vars.join(", "),
        b = bindings.join(", "),
    );
    let keys = DataValue::List(keys.into_iter().map(DataValue::List).collect());
    let rows = store.read(&script, Params::new().with("keys", keys))?;
    Ok(rows
        .rows
        .into_iter()
        .map(|r| (r[..schema.key_len].to_vec(), r))
        .collect())
}

/// CozoDB stores an integer put into a Float column as a float; compare
/// and record images the way they are stored.
fn normalise(schema: &RelSchema, row: &mut [DataValue]) {
    for (v, &is_float) in row.iter_mut().zip(&schema.float) {
        if let (true, DataValue::Num(Num::Int(i))) = (is_float, &*v) {
            *v = DataValue::Num(Num::Float(*i as f64));
        }
    }
}

/// The row images of everything `batch` would change, read before it lands.
#[allow(clippy::mutable_key_type)]
pub fn images_of(store: &Store, batch: &Batch) -> Result<Vec<RowImage>, StoreError> {
    // relation -> key -> after (None: deleted). Deletes before puts, as
    // `Store::apply` runs them; a later put of the same key wins.
    let mut after: After = BTreeMap::new();
    let mut schemas: HashMap<String, RelSchema> = HashMap::new();
    let mut entries: Vec<(&str, bool, &cozo::NamedRows)> = batch
        .entries()
        .map(|(name, rows)| match name.strip_prefix('-') {
            Some(rel) => (rel, true, rows),
            None => (name, false, rows),
        })
        .filter(|(rel, _, _)| !NOT_RECORDED.contains(rel))
        .collect();
    entries.sort_by_key(|(rel, is_put, _)| (*rel, !*is_put));
    for (rel, is_delete, rows) in entries {
        if !schemas.contains_key(rel) {
            schemas.insert(rel.to_string(), schema_of(store, rel)?);
        }
        let schema = &schemas[rel];
        let pos: Vec<Option<usize>> = schema
            .columns
            .iter()
            .map(|c| rows.headers.iter().position(|h| h == c))
            .collect();
        let (order, map) = after.entry(rel).or_default();
        for row in &rows.rows {
            let mut full: Vec<DataValue> = pos
                .iter()
                .map(|p| {
                    p.and_then(|i| row.get(i).cloned())
                        .unwrap_or(DataValue::Null)
                })
                .collect();
            normalise(schema, &mut full);
            let key = full[..schema.key_len].to_vec();
            let value = if is_delete { None } else { Some(full) };
            if map.insert(key.clone(), value).is_none() {
                order.push(key);
            }
        }
    }
    let mut images = Vec::new();
    for (rel, (order, mut map)) in after {
        let schema = &schemas[rel];
        let mut before = read_rows(store, rel, schema, order.clone())?;
        for key in order {
            let mut b = before.remove(&key);
            if let Some(r) = b.as_mut() {
                normalise(schema, r);
            }
            let a = map.remove(&key).flatten();
            if b != a {
                images.push(RowImage {
                    relation: rel.to_string(),
                    columns: schema.columns.clone(),
                    key_len: schema.key_len,
                    before: b,
                    after: a,
                });
            }
        }
    }
    Ok(images)
}

/// The sizes of a graph's undo and redo stacks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LogStats {
    /// The highest entry number so far (0: none).
    pub last_entry: i64,
    pub undo: i64,
    pub redo: i64,
}

pub fn stats(store: &Store, graph: &str) -> Result<LogStats, StoreError> {
    let rows = store.read(queries::OPS_LOG_STATS, Params::new().with("graph", graph))?;
    Ok(rows::decode_first::<OpsLogStats>(&rows)?
        .map(|r| LogStats {
            last_entry: r.last_entry.unwrap_or(0),
            undo: r.undo,
            redo: r.redo,
        })
        .unwrap_or_default())
}

/// Add the log entry for `batch` (a response's staged changes, landing as
/// `seq`) to the batch itself, and clear the redo stack. Call after
/// everything else is staged; returns the entry number.
pub fn record(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    seq: i64,
    summary: Value,
) -> Result<i64, StoreError> {
    let images = images_of(store, batch)?;
    let entry = stats(store, graph)?.last_entry + 1;
    let undone = store.read(queries::OPS_LOG_UNDONE, Params::new().with("graph", graph))?;
    for row in rows::decode_rows::<OpsLogUndone>(&undone)? {
        let key = vec![graph.into(), row.entry.into()];
        batch.delete_key::<OpChangesRow>(key.clone());
        batch.delete_key::<OpLogRow>(key);
    }
    stage_entry(batch, graph, entry, "applied", seq, &now_rfc3339(), summary);
    let bytes = rmp_serde::to_vec(&images)
        .map_err(|e| StoreError::Query(format!("change log: cannot encode changes: {e}")))?;
    batch.put_row(OpChangesRow {
        graph: graph.into(),
        entry,
        changes: Cow::Owned(bytes),
    });
    Ok(entry)
}

fn stage_entry(
    batch: &mut Batch,
    graph: &str,
    entry: i64,
    state: &str,
    seq: i64,
    at: &str,
    summary: Value,
) {
    batch.put_row(OpLogRow {
        graph: graph.into(),
        entry,
        state: state.into(),
        seq,
        at: at.into(),
        summary: Cow::Owned(summary),
    });
}

/// What an undo or redo did.
#[derive(Debug, Clone, Serialize)]
pub struct Reverted {
    /// `undo` or `redo`.
    pub action: &'static str,
    pub graph: String,
    /// The change-log entry undone or redone.
    pub entry: i64,
    /// The graph's seq after it.
    pub seq: i64,
    /// Rows restored.
    pub rows: usize,
    /// The entry's summary as recorded at apply time.
    pub summary: Value,
    /// Stack sizes after it.
    pub undo: i64,
    pub redo: i64,
    /// The view updates of the revert (the text and graph lines of
    /// `undo`/`redo`; not part of this object's JSON).
    #[serde(skip)]
    pub view: ChunkUpdates,
}

/// Revert the newest applied entry.
pub fn undo(store: &Store, graph: &str) -> Result<Reverted, OperationError> {
    revert(store, graph, true)
}

/// Re-apply the entry undone last.
pub fn redo(store: &Store, graph: &str) -> Result<Reverted, OperationError> {
    revert(store, graph, false)
}

fn revert(store: &Store, graph: &str, undo: bool) -> Result<Reverted, OperationError> {
    let action = if undo { "undo" } else { "redo" };
    let LoggedEntry {
        entry,
        at,
        summary,
        images,
    } = read_entry(store, graph, undo, action)?;
    check_unchanged(store, graph, undo, action, entry, &images)?;

    let mut batch = Batch::new();
    stage_images(&mut batch, &images, undo);
    // The graph keeps its source; the store writes the next seq.
    let change = store.begin_graph_change(graph)?;
    let seq = change.seq();
    batch.lands_as(change);
    let state = if undo { "undone" } else { "applied" };
    stage_entry(&mut batch, graph, entry, state, seq, &at, summary.clone());
    store.apply(batch)?;
    let st = stats(store, graph)?;
    let view = reverted_view(store, graph, &images, undo)?;
    Ok(Reverted {
        action,
        graph: graph.to_string(),
        entry,
        seq,
        rows: images.len(),
        summary,
        undo: st.undo,
        redo: st.redo,
        view,
    })
}

/// A change-log entry as stored: its number, time, summary and row images.
struct LoggedEntry {
    entry: i64,
    at: String,
    summary: Value,
    images: Vec<RowImage>,
}

/// The entry an undo (the newest applied) or a redo (the one undone last)
/// reverts, with its row images decoded.
fn read_entry(
    store: &Store,
    graph: &str,
    undo: bool,
    action: &'static str,
) -> Result<LoggedEntry, OperationError> {
    let p = || Params::new().with("graph", graph);
    let head = if undo {
        queries::OPS_LOG_UNDO_HEAD
    } else {
        queries::OPS_LOG_REDO_HEAD
    };
    let rows = store.read(head, p())?;
    let Some(row) = rows::decode_first::<OpsLogHead>(&rows).map_err(StoreError::from)? else {
        return Err(OperationError::NothingTo(action, graph.to_string()));
    };
    let entry = row.entry;
    let at = row.at.into_owned();
    let summary = row.summary.into_owned();
    let changes = store.read(queries::OPS_LOG_CHANGES, p().with("entry", entry))?;
    let changes = rows::decode_first::<OpsLogChanges>(&changes).map_err(StoreError::from)?;
    let bytes: &[u8] = changes.as_ref().map_or(&[], |r| r.changes.as_ref());
    let images: Vec<RowImage> =
        rmp_serde::from_slice(bytes).map_err(|e| OperationError::Conflict {
            action,
            graph: graph.to_string(),
            entry,
            message: format!("the log entry cannot be read: {e}"),
        })?;
    Ok(LoggedEntry {
        entry,
        at,
        summary,
        images,
    })
}

/// The rows must still be as the entry left them (undo) or found them
/// (redo), and their relations must have the recorded columns.
#[allow(clippy::mutable_key_type)]
fn check_unchanged(
    store: &Store,
    graph: &str,
    undo: bool,
    action: &'static str,
    entry: i64,
    images: &[RowImage],
) -> Result<(), OperationError> {
    let conflict = |message: String| OperationError::Conflict {
        action,
        graph: graph.to_string(),
        entry,
        message,
    };
    let mut by_rel: BTreeMap<&str, Vec<&RowImage>> = BTreeMap::new();
    for im in images {
        by_rel.entry(im.relation.as_str()).or_default().push(im);
    }
    for (rel, ims) in &by_rel {
        let schema = schema_of(store, rel)?;
        if schema.columns != ims[0].columns {
            return Err(conflict(format!(
                "relation `{rel}` changed its columns since the entry was recorded"
            )));
        }
        let current = read_rows(store, rel, &schema, ims.iter().map(|i| i.key()).collect())?;
        for im in ims {
            let expected = if undo { &im.after } else { &im.before };
            let mut now = current.get(&im.key()).cloned();
            if let Some(r) = now.as_mut() {
                normalise(&schema, r);
            }
            if &now != expected {
                return Err(conflict(format!(
                    "a row of `{rel}` was changed outside the change log since entry {entry} \
                     (key {}); refusing to overwrite it",
                    crate::store::value::display(&DataValue::List(im.key()))
                )));
            }
        }
    }
    Ok(())
}

/// Stage every row back to its state before the entry (undo) or after it
/// (redo): put where it existed, deleted where it did not.
fn stage_images(batch: &mut Batch, images: &[RowImage], undo: bool) {
    for im in images {
        let target = if undo { &im.before } else { &im.after };
        let cols: Vec<&str> = im.columns.iter().map(String::as_str).collect();
        match target {
            Some(row) => batch.put(&im.relation, &cols, row.clone()),
            None => batch.delete(&im.relation, &cols[..im.key_len], im.key()),
        }
    }
}

/// The view updates of a committed revert, reading the nodes whose only
/// change was in their side row as they are now.
fn reverted_view(
    store: &Store,
    graph: &str,
    images: &[RowImage],
    undo: bool,
) -> Result<ChunkUpdates, OperationError> {
    let node_schema = schema_of(store, "node")?;
    let current_node = |uuid: &str| {
        let key = vec![DataValue::from(graph), DataValue::from(uuid)];
        read_rows(store, "node", &node_schema, vec![key])
            .ok()?
            .into_values()
            .next()
            .map(|row| (node_schema.columns.clone(), row))
    };
    Ok(view_updates(graph, images, undo, &current_node))
}

/// A compact JSON description of row images per relation (for summaries).
pub fn count_by_relation(images: &[RowImage]) -> Value {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for im in images {
        *m.entry(im.relation.as_str()).or_default() += 1;
    }
    json!(m)
}

/// The view updates that take a UI from the state before an undo or redo
/// to the state after it, as one pseudo-chunk: edges removed first, then
/// nodes, then edges added (a UI never holds an edge whose node is gone).
/// `current_node` reads a node's shared row after the revert, for nodes
/// whose only change was in their side row (properties, position).
fn view_updates(
    graph: &str,
    images: &[RowImage],
    undo: bool,
    current_node: &dyn Fn(&str) -> Option<ColumnsAndRow>,
) -> ChunkUpdates {
    let rev = Direction {
        graph: DataValue::from(graph),
        undo,
    };
    let side = side_rows(images, &rev);
    let mut out = ChunkUpdates::new(0);
    let added = edge_changes(images, &rev, &mut out);
    let (deleted, created, updated) = node_changes(images, &rev, &side, current_node);
    deleted.iter().for_each(|n| out.node_deleted(n));
    created.iter().for_each(|n| out.node_added(n));
    updated.iter().for_each(|n| out.node_updated(n));
    for (updated, e) in added {
        if updated {
            out.edge_updated(&e);
        } else {
            out.edge_added(&e);
        }
    }
    out
}

/// A node's side row (`onto_node`): (columns, before, after).
type Side = (Vec<String>, Option<Vec<DataValue>>, Option<Vec<DataValue>>);

/// Which graph's rows a revert shows, and which way it goes.
struct Direction {
    graph: DataValue,
    undo: bool,
}

impl Direction {
    /// (state before this revert, state after it)
    fn states(&self, im: &RowImage) -> (Option<Vec<DataValue>>, Option<Vec<DataValue>>) {
        if self.undo {
            (im.after.clone(), im.before.clone())
        } else {
            (im.before.clone(), im.after.clone())
        }
    }

    /// The row image belongs to the graph (its first column).
    fn ours(&self, im: &RowImage) -> bool {
        im.before
            .as_ref()
            .or(im.after.as_ref())
            .is_some_and(|r| r.first() == Some(&self.graph))
    }
}

/// The value of column `name` in `row`, null when there is none.
fn col(cols: &[String], row: &[DataValue], name: &str) -> DataValue {
    cols.iter()
        .position(|c| c == name)
        .and_then(|i| row.get(i).cloned())
        .unwrap_or(DataValue::Null)
}

/// A value as text, empty when it is not a string.
fn text(v: DataValue) -> String {
    v.get_str().unwrap_or("").to_string()
}

/// A JSON value as an object, empty when it is not one.
fn json_obj(v: DataValue) -> Map<String, Value> {
    match v {
        DataValue::Json(j) => j.0.as_object().cloned().unwrap_or_default(),
        _ => Default::default(),
    }
}

/// The graph's node side rows in the entry, by uuid.
fn side_rows(images: &[RowImage], rev: &Direction) -> BTreeMap<String, Side> {
    let mut side: BTreeMap<String, Side> = BTreeMap::new();
    for im in images
        .iter()
        .filter(|i| i.relation == "onto_node" && rev.ours(i))
    {
        let (b, a) = rev.states(im);
        let uuid = text(im.key().get(1).cloned().unwrap_or(DataValue::Null));
        side.insert(uuid, (im.columns.clone(), b, a));
    }
    side
}

/// A node's view from its shared row and its side row (the side row's
/// state after the revert when `after`, before it otherwise).
fn node_view(cols: &[String], row: &[DataValue], side_row: Option<&Side>, after: bool) -> NodeView {
    let s = |name: &str| {
        side_row
            .and_then(|(c, b, a)| {
                let r = if after { a.as_ref() } else { b.as_ref() };
                r.map(|r| col(c, r, name))
            })
            .unwrap_or(DataValue::Null)
    };
    let position = match s("position") {
        DataValue::Json(j) => j.0["x"].as_f64().zip(j.0["y"].as_f64()),
        _ => None,
    };
    NodeView {
        uuid: text(col(cols, row, "id")),
        node_type: text(col(cols, row, "kind")),
        semantic_id: text(s("semantic_id")),
        name: text(col(cols, row, "name")),
        descr: text(col(cols, row, "doc")),
        props: json_obj(s("props")),
        position,
    }
}

/// An edge's view from its `onto_edge` row.
fn edge_view(im: &RowImage, row: &[DataValue]) -> EdgeView {
    EdgeView {
        uuid: text(col(&im.columns, row, "uuid")),
        rel: text(col(&im.columns, row, "rel")),
        source_uuid: text(col(&im.columns, row, "src")),
        target_uuid: text(col(&im.columns, row, "dst")),
        props: json_obj(col(&im.columns, row, "props")),
    }
}

/// Emit the edges the revert removes; the edges it adds or changes
/// (flagged `true` when changed), for after the nodes.
fn edge_changes(
    images: &[RowImage],
    rev: &Direction,
    out: &mut ChunkUpdates,
) -> Vec<(bool, EdgeView)> {
    let mut added = Vec::new();
    for im in images
        .iter()
        .filter(|i| i.relation == "onto_edge" && rev.ours(i))
    {
        match rev.states(im) {
            (Some(b), None) => out.edge_deleted(&edge_view(im, &b)),
            (None, Some(a)) => added.push((false, edge_view(im, &a))),
            (Some(_), Some(a)) => added.push((true, edge_view(im, &a))),
            (None, None) => {}
        }
    }
    added
}

/// The nodes the revert deletes, creates and updates — the last including
/// nodes whose only change was in the side row, read as they are now.
fn node_changes(
    images: &[RowImage],
    rev: &Direction,
    side: &BTreeMap<String, Side>,
    current_node: &dyn Fn(&str) -> Option<ColumnsAndRow>,
) -> (Vec<NodeView>, Vec<NodeView>, Vec<NodeView>) {
    let mut seen = std::collections::BTreeSet::new();
    let (mut deleted, mut created, mut updated) = (Vec::new(), Vec::new(), Vec::new());
    for im in images
        .iter()
        .filter(|i| i.relation == "node" && rev.ours(i))
    {
        let (b, a) = rev.states(im);
        let cols = &im.columns;
        let uuid = text(im.key().get(1).cloned().unwrap_or(DataValue::Null));
        let sr = side.get(&uuid);
        match (b, a) {
            (Some(b), None) => deleted.push(node_view(cols, &b, sr, false)),
            (None, Some(a)) => created.push(node_view(cols, &a, sr, true)),
            (Some(_), Some(a)) => updated.push(node_view(cols, &a, sr, true)),
            (None, None) => {}
        }
        seen.insert(uuid);
    }
    // Nodes whose only change was in the side row.
    for (uuid, sr) in side {
        if seen.contains(uuid) || sr.1.is_none() || sr.2.is_none() {
            continue;
        }
        if let Some((cols, row)) = current_node(uuid) {
            updated.push(node_view(&cols, &row, Some(sr), true));
        }
    }
    (deleted, created, updated)
}
