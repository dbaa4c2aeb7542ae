//! Reading the stored graph: entity listings and the edges of an entity.
//!
//! Thin, typed wrappers over the queries in `queries/`; everything here is
//! read-only and takes user input only as `$parameters`.

use serde::Serialize;

use crate::store::value::{get_bool, get_float, get_int, get_json, get_str};
use crate::store::{queries, Params, Store, StoreError};

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
    Ok(rows
        .rows
        .iter()
        .map(|r| EntityRow {
            key: get_str(r, 0).into(),
            kind: get_str(r, 1).into(),
            name: get_str(r, 2).into(),
            file: get_str(r, 3).into(),
            start_line: get_int(r, 4),
            end_line: get_int(r, 5),
            visibility: get_str(r, 6).into(),
            is_test: get_bool(r, 7),
        })
        .collect())
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
        for r in store.read(script, params.clone())?.rows {
            out.push(EdgeRow {
                src: get_str(&r, 0).into(),
                rel: get_str(&r, 1).into(),
                dst: get_str(&r, 2).into(),
                weight: get_float(&r, 3),
                origin: get_str(&r, 4).into(),
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
    for r in &rows.rows {
        if let serde_json::Value::Array(refs) = get_json(r, 0) {
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
