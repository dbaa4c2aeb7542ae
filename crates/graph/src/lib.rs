//! Reading the stored graph: entity listings and the edges of an entity.
//!
//! Thin, typed wrappers over the queries in `queries/`; everything here is
//! read-only and takes user input only as `$parameters`.
//!
//! An entity is its `node` row joined with its `code_entity` row. Every
//! query that reads entities answers with the same leading columns
//! ([`EntityHead`]); those that read everything follow them with
//! [`EntityDetails`]. Listings ([`EntityRow`]), contexts and hovers
//! ([`Details`]) all decode them here, once.

use graphctx_store as store;

pub mod export;

use serde::Serialize;
use serde_json::Value;

use crate::store::rows::{self, query_rows, Json, StoredRow, Str};
use crate::store::{queries, Params, Store, StoreError};

query_rows! {
    /// The leading columns of every entity query: `queries/entities_list.cozo`
    /// (all of it), `serve_entities_in_file(s)`, `serve_entities_by_keys`,
    /// `serve_all_symbols`, `entity_details` and `context_entities`.
    EntityHead = "entity" {
        key { id: Str<'a> }
        value {
            kind: Str<'a>,
            name: Str<'a>,
            file: Str<'a>,
            start_line: i64,
            end_line: i64,
            visibility: Str<'a>,
            is_test: bool,
        }
    }
    /// The columns of `queries/entity_details.cozo` (and
    /// `context_entities`) after the [`EntityHead`] ones.
    EntityDetails = "entity_details" {
        key { doc: Str<'a> }
        value {
            package: Str<'a>,
            module_path: Vec<Str<'a>>,
            signature: Json<'a>,
            owner: Option<Str<'a>>,
            trait_name: Option<Str<'a>>,
            parent: Option<Str<'a>>,
        }
    }
    /// `queries/edges_out.cozo` and `queries/edges_in.cozo`.
    EdgesOf = "edges_of" {
        key { src: Str<'a>, rel: Str<'a>, dst: Str<'a> }
        value { weight: f64, origin: Str<'a> }
    }
    /// `queries/entities_named.cozo`.
    EntitiesNamed = "entities_named" {
        key { id: Str<'a> }
    }
    /// `queries/unresolved_of.cozo`.
    UnresolvedOf = "unresolved_of" {
        key { refs: Json<'a> }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EntityRow {
    pub key: String,
    pub kind: String,
    pub name: String,
    pub file: String,
    pub start_line: i64,
    pub end_line: i64,
    pub visibility: String,
    pub is_test: bool,
}

impl From<EntityHead<'_>> for EntityRow {
    fn from(h: EntityHead<'_>) -> EntityRow {
        EntityRow {
            key: h.id.into_owned(),
            kind: h.kind.into_owned(),
            name: h.name.into_owned(),
            file: h.file.into_owned(),
            start_line: h.start_line,
            end_line: h.end_line,
            visibility: h.visibility.into_owned(),
            is_test: h.is_test,
        }
    }
}

/// Every entity of a result whose leading columns are [`EntityHead`]'s.
pub fn decode_entities(rows: &cozo::NamedRows) -> Result<Vec<EntityRow>, StoreError> {
    Ok(rows::decode_rows::<EntityHead>(rows)?
        .into_iter()
        .map(EntityRow::from)
        .collect())
}

/// Stored facts about an entity (`queries/entity_details.cozo`).
#[derive(Debug, Clone, Default)]
pub struct Details {
    pub key: String,
    pub kind: String,
    pub name: String,
    pub doc: String,
    pub file: String,
    pub package: String,
    pub module_path: Vec<String>,
    pub visibility: String,
    pub start_line: i64,
    pub end_line: i64,
    pub signature: Value,
    pub is_test: bool,
    pub owner: Option<String>,
    pub trait_name: Option<String>,
}

impl Details {
    /// The details of every row of a result whose columns start with
    /// [`EntityHead`]'s, then [`EntityDetails`]' (later columns are the
    /// caller's).
    pub fn decode(rows: &cozo::NamedRows) -> Result<Vec<Details>, StoreError> {
        let heads = rows::decode_rows::<EntityHead>(rows)?;
        let details = rows::decode_rows_at::<EntityDetails>(rows, EntityHead::COLUMNS.len())?;
        Ok(heads
            .into_iter()
            .zip(details)
            .map(|(h, d)| Details {
                key: h.id.into_owned(),
                kind: h.kind.into_owned(),
                name: h.name.into_owned(),
                doc: d.doc.into_owned(),
                file: h.file.into_owned(),
                package: d.package.into_owned(),
                // In place: a `Cow<str>` and a `String` have one layout.
                module_path: d.module_path.into_iter().map(|s| s.into_owned()).collect(),
                visibility: h.visibility.into_owned(),
                start_line: h.start_line,
                end_line: h.end_line,
                signature: d.signature.into_owned(),
                is_test: h.is_test,
                owner: d.owner.map(|s| s.into_owned()),
                trait_name: d.trait_name.map(|s| s.into_owned()),
            })
            .collect())
    }

    /// A boolean flag of the signature (`unsafe`, `async`), false when absent.
    pub fn sig_bool(&self, field: &str) -> bool {
        self.signature
            .get(field)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    pub fn head(&self) -> String {
        self.signature
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    }
}

/// Everything stored about the entities of `keys` that exist
/// (`queries/entity_details.cozo`), in no particular order.
pub fn details_of<'k>(
    store: &Store,
    graph: &str,
    keys: impl IntoIterator<Item = &'k str>,
) -> Result<Vec<Details>, StoreError> {
    let rows = store.read(
        queries::ENTITY_DETAILS,
        Params::new()
            .with("graph", graph)
            .with("keys", crate::store::value::str_list(keys)),
    )?;
    Details::decode(&rows)
}

#[derive(Debug, Clone, Default)]
pub struct EntityFilter {
    pub file: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
}

pub fn list_entities(
    store: &Store,
    graph: &str,
    filter: &EntityFilter,
) -> Result<Vec<EntityRow>, StoreError> {
    let params = Params::new()
        .with("graph", graph)
        .with("file", filter.file.clone().unwrap_or_default())
        .with("kind", filter.kind.clone().unwrap_or_default())
        .with("name", filter.name.clone().unwrap_or_default());
    let rows = store.read(queries::ENTITIES_LIST, params)?;
    decode_entities(&rows)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    In,
    Out,
    Both,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EdgeRow {
    pub src: String,
    pub rel: String,
    pub dst: String,
    pub weight: f64,
    /// The file whose references produced the edge.
    pub origin: String,
}

pub fn entity_exists(store: &Store, graph: &str, key: &str) -> Result<bool, StoreError> {
    let rows = store.read(
        queries::ENTITY_EXISTS,
        Params::new().with("graph", graph).with("key", key),
    )?;
    Ok(!rows.rows.is_empty())
}

pub fn edges_of(
    store: &Store,
    graph: &str,
    key: &str,
    direction: Direction,
) -> Result<Vec<EdgeRow>, StoreError> {
    let mut out = Vec::new();
    let params = Params::new().with("graph", graph).with("key", key);
    let mut scripts = Vec::new();
    if matches!(direction, Direction::Out | Direction::Both) {
        scripts.push(queries::EDGES_OUT);
    }
    if matches!(direction, Direction::In | Direction::Both) {
        scripts.push(queries::EDGES_IN);
    }
    for script in scripts {
        let rows = store.read(script, params.clone())?;
        for r in rows::decode_rows::<EdgesOf>(&rows)? {
            out.push(EdgeRow {
                src: r.src.into_owned(),
                rel: r.rel.into_owned(),
                dst: r.dst.into_owned(),
                weight: r.weight,
                origin: r.origin.into_owned(),
            });
        }
    }
    Ok(out)
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UnresolvedRow {
    pub rel: String,
    pub text: String,
    pub line: i64,
    pub count: i64,
}

pub fn unresolved_of(
    store: &Store,
    graph: &str,
    key: &str,
) -> Result<Vec<UnresolvedRow>, StoreError> {
    let rows = store.read(
        queries::UNRESOLVED_OF,
        Params::new().with("graph", graph).with("key", key),
    )?;
    let mut out = Vec::new();
    for r in rows::decode_rows::<UnresolvedOf>(&rows)? {
        if let Value::Array(refs) = r.refs.as_ref() {
            for item in refs {
                out.push(UnresolvedRow {
                    rel: item[0].as_str().unwrap_or("").into(),
                    text: item[1].as_str().unwrap_or("").into(),
                    line: item[2].as_i64().unwrap_or(0),
                    count: item[3].as_i64().unwrap_or(0),
                });
            }
        }
    }
    Ok(out)
}
