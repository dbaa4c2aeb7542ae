//! One typed row per stored relation.
//!
//! Every relation declared in `schema/` has a row type here with its name,
//! key columns, value columns, an encoder and a strict decoder. Writers put
//! typed rows into a [`Batch`](super::Batch) instead of spelling relation
//! names and column lists by hand, and readers decode whole rows with the
//! same types, so a column added, moved or retyped in `schema/` is caught
//! by the test at the bottom of this file (which parses the schema
//! scripts), not read as zero or empty.
//!
//! Decoding never defaults: a missing column or a value of another type is
//! a [`RowError`] naming the relation and the column. Nullable columns are
//! `Option`s.
//!
//! Text, JSON and byte fields are `Cow`s: a writer builds a row from the
//! borrowed values it has (encoding then allocates exactly what the
//! `DataValue` needs, as hand-built rows did), and a decoder borrows from
//! the query result instead of copying.

use std::borrow::Cow;

pub use cozo::DataValue;
use cozo::JsonData;
use serde_json::Value;

use super::value::Row;

/// A stored value that does not have the type its column declares.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{relation}.{column}: expected {expected}, found {found}")]
pub struct RowError {
    /// The relation (or the query) the row came from.
    pub relation: String,
    pub column: String,
    pub expected: String,
    pub found: String,
}

impl RowError {
    pub fn new(relation: &str, column: &str, expected: &str, found: Option<&DataValue>) -> Self {
        RowError {
            relation: relation.to_string(),
            column: column.to_string(),
            expected: expected.to_string(),
            found: match found {
                None => "no such column".to_string(),
                Some(v) => kind_of(v).to_string(),
            },
        }
    }
}

/// The kind of a value, for error messages.
fn kind_of(v: &DataValue) -> &'static str {
    match v {
        DataValue::Null => "null",
        DataValue::Bool(_) => "a Bool",
        DataValue::Num(_) if v.get_int().is_some() => "an Int",
        DataValue::Num(_) => "a Float",
        DataValue::Str(_) => "a String",
        DataValue::Bytes(_) => "Bytes",
        DataValue::List(_) => "a List",
        DataValue::Json(_) => "Json",
        _ => "another type",
    }
}

/// A Rust type that stores as one column of a declared type.
pub trait Column<'a>: Sized {
    /// The type as `schema/` spells it (`String`, `Int?`, `[String]`).
    fn schema_type() -> String;
    /// Read from a stored value; `None` when the value has another type.
    fn from_value(v: &'a DataValue) -> Option<Self>;
    fn into_value(self) -> DataValue;
}

/// Read column `i` of `row` as `T`, or say which column of which relation
/// did not match.
pub fn column<'a, T: Column<'a>>(
    row: &'a [DataValue],
    i: usize,
    relation: &str,
    column: &str,
) -> Result<T, RowError> {
    let v = row.get(i);
    v.and_then(T::from_value)
        .ok_or_else(|| RowError::new(relation, column, &T::schema_type(), v))
}

impl<'a> Column<'a> for Cow<'a, str> {
    fn schema_type() -> String {
        "String".into()
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        v.get_str().map(Cow::Borrowed)
    }
    fn into_value(self) -> DataValue {
        match self {
            Cow::Borrowed(s) => DataValue::from(s),
            Cow::Owned(s) => DataValue::from(s),
        }
    }
}

impl<'a> Column<'a> for i64 {
    fn schema_type() -> String {
        "Int".into()
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        v.get_int()
    }
    fn into_value(self) -> DataValue {
        DataValue::from(self)
    }
}

impl<'a> Column<'a> for f64 {
    fn schema_type() -> String {
        "Float".into()
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        v.get_float()
    }
    fn into_value(self) -> DataValue {
        DataValue::from(self)
    }
}

impl<'a> Column<'a> for bool {
    fn schema_type() -> String {
        "Bool".into()
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        v.get_bool()
    }
    fn into_value(self) -> DataValue {
        DataValue::from(self)
    }
}

impl<'a> Column<'a> for Cow<'a, Value> {
    fn schema_type() -> String {
        "Json".into()
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        match v {
            DataValue::Json(JsonData(j)) => Some(Cow::Borrowed(j)),
            _ => None,
        }
    }
    fn into_value(self) -> DataValue {
        DataValue::Json(JsonData(self.into_owned()))
    }
}

impl<'a> Column<'a> for Cow<'a, [u8]> {
    fn schema_type() -> String {
        "Bytes".into()
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        v.get_bytes().map(Cow::Borrowed)
    }
    fn into_value(self) -> DataValue {
        DataValue::Bytes(self.into_owned())
    }
}

impl<'a> Column<'a> for Vec<Cow<'a, str>> {
    fn schema_type() -> String {
        "[String]".into()
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        v.get_slice()?
            .iter()
            .map(|x| x.get_str().map(Cow::Borrowed))
            .collect()
    }
    fn into_value(self) -> DataValue {
        DataValue::List(self.into_iter().map(Column::into_value).collect())
    }
}

impl<'a, T: Column<'a>> Column<'a> for Option<T> {
    fn schema_type() -> String {
        format!("{}?", T::schema_type())
    }
    fn from_value(v: &'a DataValue) -> Option<Self> {
        match v {
            DataValue::Null => Some(None),
            v => T::from_value(v).map(Some),
        }
    }
    fn into_value(self) -> DataValue {
        self.map(Column::into_value).unwrap_or(DataValue::Null)
    }
}

/// What every row type says about its relation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationInfo {
    pub name: &'static str,
    pub key: &'static [&'static str],
    /// Every column, key columns first, in declaration order.
    pub columns: &'static [&'static str],
    /// The declared type of each column, as `schema/` spells it.
    pub types: Vec<String>,
}

/// A row of one stored relation.
pub trait StoredRow<'a>: Sized {
    const NAME: &'static str;
    const KEY: &'static [&'static str];
    /// Every column, key columns first, in declaration order.
    const COLUMNS: &'static [&'static str];
    /// The values in [`Self::COLUMNS`] order.
    fn encode(self) -> Row;
    /// Decode a row whose values are in [`Self::COLUMNS`] order (a whole
    /// stored row, or a query result with the same columns).
    fn decode(row: &'a [DataValue]) -> Result<Self, RowError>;
    fn info() -> RelationInfo;
}

/// Row types a writer may put. The `graph` relation's row is not one: its
/// `seq` is written only by [`Store::apply_to_graph`](super::Store::apply_to_graph).
pub trait WritableRow<'a>: StoredRow<'a> {}

/// Define row types: a struct per row with a [`StoredRow`] impl whose
/// columns are the fields, key fields first. `rows!` (below) defines the
/// stored relations; `query_rows!` the rows of query results, named by
/// their query (with a marker field, `_row`, so a row of numbers only
/// still has its lifetime).
#[macro_export]
macro_rules! row_type {
    (
        $(#[$doc:meta])*
        $ty:ident = $name:literal $(, $writable:ident)? $(; $marker:ident)? {
            key { $($k:ident : $kt:ty),* $(,)? }
            $(value { $($v:ident : $vt:ty),* $(,)? })?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $ty<'a> {
            $(pub $k: $kt,)*
            $($(pub $v: $vt,)*)?
            $(#[doc(hidden)] pub $marker: std::marker::PhantomData<&'a ()>,)?
        }

        impl<'a> $crate::rows::StoredRow<'a> for $ty<'a> {
            const NAME: &'static str = $name;
            const KEY: &'static [&'static str] = &[$(stringify!($k)),*];
            const COLUMNS: &'static [&'static str] =
                &[$(stringify!($k),)* $($(stringify!($v),)*)?];

            fn encode(self) -> $crate::Row {
                vec![
                    $($crate::rows::Column::into_value(self.$k),)*
                    $($($crate::rows::Column::into_value(self.$v),)*)?
                ]
            }

            #[allow(unused_assignments, unused_mut, unused_variables)]
            fn decode(
                row: &'a [$crate::rows::DataValue],
            ) -> Result<Self, $crate::rows::RowError> {
                let mut i = 0;
                $(
                    let $k: $kt = $crate::rows::column(row, i, $name, stringify!($k))?;
                    i += 1;
                )*
                $($(
                    let $v: $vt = $crate::rows::column(row, i, $name, stringify!($v))?;
                    i += 1;
                )*)?
                Ok($ty { $($k,)* $($($v,)*)? $($marker: std::marker::PhantomData,)? })
            }

            fn info() -> $crate::rows::RelationInfo {
                $crate::rows::RelationInfo {
                    name: Self::NAME,
                    key: Self::KEY,
                    columns: Self::COLUMNS,
                    types: vec![
                        $(<$kt as $crate::rows::Column<'a>>::schema_type(),)*
                        $($(<$vt as $crate::rows::Column<'a>>::schema_type(),)*)?
                    ],
                }
            }
        }

        $($crate::rows::row_type!(@$writable $ty);)?
    };
    (@writable $ty:ident) => {
        impl<'a> $crate::rows::WritableRow<'a> for $ty<'a> {}
    };
}

/// Row types of query results (see [`decode_rows`]): the fields are the
/// query's output columns in order; `key` is just the leading columns.
#[macro_export]
macro_rules! query_rows {
    ($(
        $(#[$doc:meta])*
        $ty:ident = $name:literal {
            key { $($k:ident : $kt:ty),* $(,)? }
            $(value { $($v:ident : $vt:ty),* $(,)? })?
        }
    )*) => {
        $($crate::rows::row_type! {
            $(#[$doc])*
            $ty = $name; _row {
                key { $($k : $kt),* }
                $(value { $($v : $vt),* })?
            }
        })*
    };
}

// `query_rows!` is for readers of query results in every crate.
#[allow(unused_imports)]
pub use crate::{query_rows, row_type};

macro_rules! rows {
    ($(
        $(#[$doc:meta])*
        $ty:ident = $name:literal $(, $writable:ident)? {
            key { $($k:ident : $kt:ty),* $(,)? }
            $(value { $($v:ident : $vt:ty),* $(,)? })?
        }
    )*) => {
        $(row_type! {
            $(#[$doc])*
            $ty = $name $(, $writable)? {
                key { $($k : $kt),* }
                $(value { $($v : $vt),* })?
            }
        })*

        /// Every relation's row type, for the schema test.
        pub fn all() -> Vec<RelationInfo> {
            vec![$($ty::info()),*]
        }
    };
}

/// Field types of rows: text, JSON and bytes borrow from a result when
/// decoded and from the writer's values when encoded.
pub type Str<'a> = Cow<'a, str>;
pub type Json<'a> = Cow<'a, Value>;
pub type Bytes<'a> = Cow<'a, [u8]>;

rows! {
    /// `schema_version`: written by the migrations only.
    SchemaVersionRow = "schema_version" {
        key { version: i64 }
        value { name: Str<'a> }
    }
    /// `graph`: where a graph came from and its change sequence number.
    /// Not writable: only the store's apply for a graph writes it.
    GraphRow = "graph" {
        key { graph: Str<'a> }
        value { source: Str<'a>, seq: i64 }
    }
    NodeRow = "node", writable {
        key { graph: Str<'a>, id: Str<'a> }
        value { kind: Str<'a>, name: Str<'a>, doc: Str<'a> }
    }
    EdgeRow = "edge", writable {
        key { graph: Str<'a>, src: Str<'a>, rel: Str<'a>, dst: Str<'a>, origin: Str<'a> }
        value { weight: f64 }
    }
    CodeEntityRow = "code_entity", writable {
        key { graph: Str<'a>, id: Str<'a> }
        value {
            file: Str<'a>,
            package: Str<'a>,
            module_path: Vec<Str<'a>>,
            visibility: Str<'a>,
            start_line: i64,
            end_line: i64,
            signature: Json<'a>,
            is_test: bool,
            owner: Option<Str<'a>>,
            trait_name: Option<Str<'a>>,
            parent: Option<Str<'a>>,
        }
    }
    /// `code_file_entities`: which entities a file declares (schema 22),
    /// kept by the indexer beside `code_entity`: the `tails` of their keys
    /// (what follows `{file}-`), sorted, in parts keyed by their first.
    CodeFileEntitiesRow = "code_file_entities", writable {
        key { graph: Str<'a>, file: Str<'a>, first_tail: Str<'a> }
        value { tails: Vec<Str<'a>> }
    }
    CodeFileRow = "code_file", writable {
        key { graph: Str<'a>, path: Str<'a> }
        value {
            hash: Str<'a>,
            bytes: i64,
            status: Str<'a>,
            reason: Str<'a>,
            package: Str<'a>,
            entities: i64,
            edge_digest: Str<'a>,
        }
    }
    CodeStatsRow = "code_stats", writable {
        key { graph: Str<'a> }
        value { files: i64, entities: i64, edges: i64, unresolved: i64, ambiguous: i64 }
    }
    CodeFileStatRow = "code_file_stat", writable {
        key { graph: Str<'a>, path: Str<'a> }
        value { bytes: i64, mtime_ns: i64, layout: Str<'a>, hash: Str<'a> }
    }
    CodeCochangeRow = "code_cochange", writable {
        key { graph: Str<'a>, file: Str<'a>, other: Str<'a> }
        value { weight: f64, commits: i64 }
    }
    /// `code_history_word` (schema 24): a file's history text, per word.
    CodeHistoryWordRow = "code_history_word", writable {
        key { graph: Str<'a>, word: Str<'a>, file: Str<'a> }
        value { messages: i64, length: i64 }
    }
    CodeHistoryRow = "code_history", writable {
        key { graph: Str<'a> }
        value { head: Str<'a>, pairs: i64 }
    }
    ContextCacheRow = "context_cache", writable {
        key { graph: Str<'a>, cache_key: Str<'a> }
        value { seq: i64, output: Str<'a> }
    }
    CodeExtractRow = "code_extract", writable {
        key { graph: Str<'a>, path: Str<'a> }
        value { data: Bytes<'a> }
    }
    /// `code_file_edges`: the edges a file's references produced, as one
    /// list (schema 18; the format is src/index/file_edges.rs).
    CodeFileEdgesRow = "code_file_edges", writable {
        key { graph: Str<'a>, file: Str<'a> }
        value { edges: Bytes<'a> }
    }
    CodeInterfaceRow = "code_interface", writable {
        key { graph: Str<'a>, path: Str<'a> }
        value { data: Bytes<'a> }
    }
    /// `code_names`: the names a file mentions (schema 15; the format is
    /// `encode` in src/index/rust/names.rs).
    CodeNamesRow = "code_names", writable {
        key { graph: Str<'a>, path: Str<'a> }
        value { names: Bytes<'a> }
    }
    /// `code_entity_texts`: the word lists of a file's entities (schema
    /// 20; the format is `encode_texts` in src/index/text.rs).
    CodeEntityTextsRow = "code_entity_texts", writable {
        key { graph: Str<'a>, file: Str<'a> }
        value { texts: Bytes<'a> }
    }
    /// `code_word`: a block of a word's posting list (schemas 14, 17 and
    /// 19: `support::words::encode_postings`, packed by
    /// `support::packed::pack_text`).
    CodeWordRow = "code_word", writable {
        key { graph: Str<'a>, word: Str<'a>, block: i64 }
        value { postings: Bytes<'a> }
    }
    /// `code_file_text`: a file's words (schema 16; the format is
    /// `support::words::encode_file_words`).
    CodeFileTextRow = "code_file_text", writable {
        key { graph: Str<'a>, path: Str<'a> }
        value { words: Str<'a> }
    }
    /// `code_file_word`: a block of the files holding a word (schemas 16
    /// and 17; the format is `support::words::encode_postings`, ids being
    /// paths, packed as `code_word`'s).
    CodeFileWordRow = "code_file_word", writable {
        key { graph: Str<'a>, word: Str<'a>, block: i64 }
        value { postings: Bytes<'a> }
    }
    /// `code_text_version`: the version of a graph's text rows (schema 12).
    CodeTextVersionRow = "code_text_version", writable {
        key { graph: Str<'a> }
        value { version: i64 }
    }
    CodeUnresolvedRow = "code_unresolved", writable {
        key { graph: Str<'a>, origin: Str<'a>, src: Str<'a> }
        value { refs: Json<'a> }
    }
    OntoNodeRow = "onto_node", writable {
        key { graph: Str<'a>, uuid: Str<'a> }
        value { semantic_id: Str<'a>, props: Json<'a>, position: Option<Json<'a>>, changed_seq: i64 }
    }
    OntoSemanticRow = "onto_semantic", writable {
        key { graph: Str<'a>, semantic_id: Str<'a> }
        value { uuid: Str<'a>, retired_seq: Option<i64> }
    }
    OntoCounterRow = "onto_counter", writable {
        key { graph: Str<'a>, node_type: Str<'a> }
        value { last: i64 }
    }
    OntoEdgeRow = "onto_edge", writable {
        key { graph: Str<'a>, src: Str<'a>, rel: Str<'a>, dst: Str<'a> }
        value { uuid: Str<'a>, props: Json<'a>, changed_seq: i64 }
    }
    OntoTombstoneRow = "onto_tombstone", writable {
        key { graph: Str<'a>, kind: Str<'a>, id: Str<'a> }
        value { seq: i64, data: Json<'a> }
    }
    OpLogRow = "op_log", writable {
        key { graph: Str<'a>, entry: i64 }
        value { state: Str<'a>, seq: i64, at: Str<'a>, summary: Json<'a> }
    }
    OpChangesRow = "op_changes", writable {
        key { graph: Str<'a>, entry: i64 }
        value { changes: Bytes<'a> }
    }
    CaptureSessionRow = "capture_session", writable {
        key { graph: Str<'a>, session: Str<'a> }
        value { state: Json<'a> }
    }
    CaptureMarkRow = "capture_mark", writable {
        key { graph: Str<'a>, session: Str<'a> }
        value { seq: i64 }
    }
    CaptureCacheRow = "capture_cache", writable {
        key { graph: Str<'a>, session: Str<'a>, slot: Str<'a> }
        value { fingerprint: Str<'a>, result: Json<'a> }
    }
    CaptureStatsRow = "capture_stats", writable {
        key { graph: Str<'a>, session: Str<'a> }
        value { hits: i64, misses: i64 }
    }
    CanvasNodeRow = "canvas_node", writable {
        key { graph: Str<'a>, id: Str<'a> }
        value {
            position: i64,
            x: f64,
            y: f64,
            width: f64,
            height: f64,
            color: Option<Str<'a>>,
            role: Str<'a>,
            tags: Vec<Str<'a>>,
            file: Option<Str<'a>>,
            url: Option<Str<'a>>,
            data: Json<'a>,
        }
    }
    CanvasEdgeRow = "canvas_edge", writable {
        key { graph: Str<'a>, id: Str<'a> }
        value {
            position: i64,
            from_node: Str<'a>,
            from_side: Option<Str<'a>>,
            to_node: Str<'a>,
            to_side: Option<Str<'a>>,
            rel: Str<'a>,
            label: Option<Str<'a>>,
            color: Option<Str<'a>>,
            data: Json<'a>,
        }
    }
    FlowNodeRow = "flow_node", writable {
        key { graph: Str<'a>, id: Str<'a> }
        value { x: f64, y: f64, ord: i64 }
    }
    FlowEdgeRow = "flow_edge", writable {
        key { graph: Str<'a>, id: Str<'a> }
        value { source: Str<'a>, target: Str<'a>, label: Str<'a>, ord: i64 }
    }
    FlowVisualsRow = "flow_visuals", writable {
        key { graph: Str<'a> }
        value { settings: Json<'a> }
    }
    FlowSnapshotRow = "flow_snapshot", writable {
        key { graph: Str<'a>, idx: i64 }
        value { state: Json<'a> }
    }
    FlowUndoRow = "flow_undo", writable {
        key { graph: Str<'a> }
        value { base: i64, cur: i64, top: i64 }
    }
    FlowMessageRow = "flow_message", writable {
        key { graph: Str<'a>, idx: i64 }
        value { role: Str<'a>, content: Str<'a>, at: Str<'a> }
    }
    CodeUsageRow = "code_usage", writable {
        key { graph: Str<'a>, id: Str<'a> }
        value {
            kind: Str<'a>,
            file: Str<'a>,
            is_test: bool,
            fan_in: i64,
            references: i64,
            call_sites: Vec<Str<'a>>,
            tests: i64,
            tested_members: i64,
            degree: i64,
            out: Bytes<'a>,
        }
    }
    CodeUsageVersionRow = "code_usage_version", writable {
        key { graph: Str<'a> }
        value { version: i64 }
    }
    OntoMessageRow = "onto_message", writable {
        key { graph: Str<'a>, session: Str<'a>, idx: i64 }
        value { role: Str<'a>, content: Str<'a>, result: Json<'a>, at: Str<'a> }
    }
}

/// Decode every row of a query result whose columns are `R`'s. The
/// headers are checked against `R::COLUMNS` once, then rows decode by
/// position.
pub fn decode_rows<'a, R: StoredRow<'a>>(rows: &'a cozo::NamedRows) -> Result<Vec<R>, RowError> {
    check_headers::<R>(rows)?;
    rows.rows.iter().map(|r| R::decode(r)).collect()
}

/// The first row of a query result, if any (headers checked as in
/// [`decode_rows`]).
pub fn decode_first<'a, R: StoredRow<'a>>(
    rows: &'a cozo::NamedRows,
) -> Result<Option<R>, RowError> {
    check_headers::<R>(rows)?;
    rows.rows.first().map(|r| R::decode(r)).transpose()
}

/// Decode `R` from the columns of every row starting at `offset`: for a
/// query whose columns are those of several row types in a row (headers
/// checked once, as in [`decode_rows`]).
pub fn decode_rows_at<'a, R: StoredRow<'a>>(
    rows: &'a cozo::NamedRows,
    offset: usize,
) -> Result<Vec<R>, RowError> {
    check_headers_at::<R>(rows, offset)?;
    rows.rows
        .iter()
        .map(|r| R::decode(r.get(offset..).unwrap_or(&[])))
        .collect()
}

/// A result's headers must be `R`'s columns, in order.
pub fn check_headers<'a, R: StoredRow<'a>>(rows: &cozo::NamedRows) -> Result<(), RowError> {
    check_headers_at::<R>(rows, 0)
}

/// The headers from `offset` on must be `R`'s columns, in order.
pub fn check_headers_at<'a, R: StoredRow<'a>>(
    rows: &cozo::NamedRows,
    offset: usize,
) -> Result<(), RowError> {
    for (i, col) in R::COLUMNS.iter().enumerate() {
        match rows.headers.get(offset + i) {
            Some(h) if h == col => {}
            other => {
                return Err(RowError {
                    relation: R::NAME.to_string(),
                    column: col.to_string(),
                    expected: format!("column {} named `{col}`", offset + i),
                    found: match other {
                        Some(h) => format!("`{h}`"),
                        None => "no such column".to_string(),
                    },
                })
            }
        }
    }
    Ok(())
}

query_rows! {
    /// The leading column of `::relations` (the others are left alone).
    Relations = "::relations" {
        key { name: Str<'a> }
    }
    /// `queries/graph_seq.cozo`.
    GraphSeq = "graph_seq" {
        key { seq: i64 }
        value { source: Str<'a> }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// `(name, key columns, value columns)` with types, as declared.
    type Declared = BTreeMap<String, (Vec<(String, String)>, Vec<(String, String)>)>;

    /// The relations the schema scripts leave, in order: `:create`
    /// declares, `:replace` declares again (with the rows a query keeps),
    /// `::remove` drops (a later `:create` may replace).
    fn declared() -> Declared {
        let mut out = Declared::new();
        for (_, _, script) in super::super::schema::MIGRATIONS {
            let text: String = script
                .lines()
                .map(|l| l.split('#').next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n")
                .replace(":replace ", ":create ");
            // Statements in script order: a migration may create a
            // relation, remove another and rename the first to its name.
            let mut at = 0;
            while let Some((i, op)) = ["::remove", "::rename", ":create "]
                .iter()
                .filter_map(|op| text[at..].find(op).map(|i| (at + i, *op)))
                .min()
            {
                let after = &text[i + op.len()..];
                let line = after.split(['}', '\n']).next().unwrap_or("");
                at = i + op.len();
                match op {
                    "::remove" => {
                        for name in line.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                            out.remove(name);
                        }
                    }
                    "::rename" => {
                        for pair in line.split(',') {
                            let (from, to) = pair.split_once("->").expect("`a -> b`");
                            let shape = out.remove(from.trim()).expect("renamed relation");
                            out.insert(to.trim().to_string(), shape);
                        }
                    }
                    _ if text[..i].ends_with(':') => {} // `::index create`
                    _ => {
                        let open = after.find('{').expect("`{` after :create");
                        let name = after[..open].trim().to_string();
                        let close = after.find('}').expect("`}` closing :create");
                        let body = &after[open + 1..close];
                        let (keys, values) = match body.split_once("=>") {
                            Some((k, v)) => (k, v),
                            None => (body, ""),
                        };
                        let cols = |s: &str| -> Vec<(String, String)> {
                            s.split(',')
                                .map(str::trim)
                                .filter(|c| !c.is_empty())
                                .map(|c| {
                                    let (n, t) = c.split_once(':').expect("column `name: Type`");
                                    let t = t.split('=').next().unwrap_or("").trim();
                                    (n.trim().to_string(), t.replace(' ', ""))
                                })
                                .collect()
                        };
                        out.insert(name, (cols(keys), cols(values)));
                        at = i + op.len() + close;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn every_row_type_matches_its_declaration_and_every_relation_has_one() {
        let declared = declared();
        assert!(declared.contains_key("node") && declared.contains_key("onto_message"));
        let rows = all();
        let mut seen = std::collections::BTreeSet::new();
        for info in &rows {
            assert!(seen.insert(info.name), "two row types for {}", info.name);
            let (keys, values) = declared
                .get(info.name)
                .unwrap_or_else(|| panic!("{} has a row type but no declaration", info.name));
            let declared_cols: Vec<(String, String)> =
                keys.iter().chain(values.iter()).cloned().collect();
            let typed_cols: Vec<(String, String)> = info
                .columns
                .iter()
                .map(|c| c.to_string())
                .zip(info.types.iter().cloned())
                .collect();
            assert_eq!(typed_cols, declared_cols, "columns of {}", info.name);
            let declared_key: Vec<&str> = keys.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(info.key, declared_key.as_slice(), "key of {}", info.name);
        }
        for name in declared.keys() {
            assert!(seen.contains(name.as_str()), "{name} has no row type");
        }
    }

    query_rows! {
        /// Two columns after a [`GraphSeq`]'s, numbers only.
        Tail = "tail" {
            key { a: i64 }
            value { b: Option<i64> }
        }
    }

    #[test]
    fn joined_rows_decode_at_an_offset_and_headers_are_checked_there() {
        let rows = cozo::NamedRows {
            headers: ["seq", "source", "a", "b"].map(String::from).to_vec(),
            rows: vec![vec![
                DataValue::from(3),
                DataValue::from("flow"),
                DataValue::from(7),
                DataValue::Null,
            ]],
            next: None,
        };
        let head = decode_rows::<GraphSeq>(&rows).unwrap();
        assert_eq!((head[0].seq, head[0].source.as_ref()), (3, "flow"));
        let tail = decode_rows_at::<Tail>(&rows, 2).unwrap();
        assert_eq!((tail[0].a, tail[0].b), (7, None));
        let err = decode_rows_at::<Tail>(&rows, 1).unwrap_err();
        assert_eq!(
            err.to_string(),
            "tail.a: expected column 1 named `a`, found `source`"
        );
    }

    #[test]
    fn rows_round_trip_and_mismatches_name_the_column() {
        let row = CodeEntityRow {
            graph: "code".into(),
            id: "k".into(),
            file: "src/lib.rs".into(),
            package: "c".into(),
            module_path: vec!["c".into(), "m".into()],
            visibility: "pub".into(),
            start_line: 1,
            end_line: 2,
            signature: Cow::Owned(serde_json::json!({"a": 1})),
            is_test: false,
            owner: None,
            trait_name: Some("T".into()),
            parent: None,
        };
        let encoded = row.clone().encode();
        assert_eq!(encoded.len(), CodeEntityRow::COLUMNS.len());
        assert_eq!(CodeEntityRow::decode(&encoded).unwrap(), row);

        let mut bad = encoded.clone();
        bad[6] = DataValue::from("one");
        let err = CodeEntityRow::decode(&bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            "code_entity.start_line: expected Int, found a String"
        );
        let err = CodeEntityRow::decode(&encoded[..5]).unwrap_err();
        assert_eq!(err.column, "visibility");
        assert_eq!(err.found, "no such column");
    }
}
