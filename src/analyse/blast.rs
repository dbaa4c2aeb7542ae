//! Blast radius: what lies within N hops of some base entities.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::store::rows::{self, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};

query_rows! {
    /// `queries/blast_radius.cozo` (and `queries/context_reach.cozo`,
    /// whose columns are the same).
    BlastRadius = "blast_radius" {
        key { node: Str<'a> }
        value { d: i64, dir: Str<'a>, rel: Str<'a>, prev: Str<'a> }
    }
    /// `queries/callers.cozo`.
    Callers = "callers" {
        key { src: Str<'a> }
        value { origin: Str<'a>, weight: f64 }
    }
    /// `queries/callees.cozo`.
    Callees = "callees" {
        key { dst: Str<'a> }
        value { origin: Str<'a>, weight: f64 }
    }
}

/// Hop depths the engine accepts (seed 004: 0 = base only … 3 = deep).
pub const MAX_HOPS: u32 = 3;

/// One edge through which an entity was reached from the layer before.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Via {
    /// `out`: the entity is a dependency of `from` (edge from → entity);
    /// `in`: the entity depends on `from` (edge entity → from).
    pub direction: &'static str,
    pub rel: String,
    pub from: String,
}

/// An entity in the blast radius.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reached {
    pub key: String,
    /// Minimum hop distance from the base set (0 for base entities).
    pub distance: u32,
    /// Empty for base entities.
    pub via: Vec<Via>,
}

impl Reached {
    /// Distinct directions through which the entity was reached.
    pub fn directions(&self) -> Vec<&'static str> {
        let mut d: Vec<&'static str> = self.via.iter().map(|v| v.direction).collect();
        d.sort();
        d.dedup();
        d
    }

    /// Distinct relationship types through which the entity was reached.
    pub fn rels(&self) -> Vec<&str> {
        let mut r: Vec<&str> = self.via.iter().map(|v| v.rel.as_str()).collect();
        r.sort();
        r.dedup();
        r
    }
}

/// Entities within `hops` of `bases` in `graph`, base entities first, then
/// by distance and key. Base keys that do not exist are ignored here (the
/// caller reports them).
pub fn blast_radius(
    store: &Store,
    graph: &str,
    bases: &[String],
    hops: u32,
) -> Result<Vec<Reached>, StoreError> {
    reach(
        store,
        queries::BLAST_RADIUS,
        graph,
        bases,
        hops,
        Params::new(),
    )
}

/// Beyond the base, an entity with more edges than this is reached but
/// not passed through by a context's neighbourhood ([`neighbourhood`]).
/// A context holds a few hundred entities at most; the neighbours of an
/// entity with more than this rank below everything closer, and a module
/// of generated bindings (thousands of items) made one context read tens
/// of thousands of rows. The same for every repository.
pub const HUB_EDGES: i64 = 256;

/// The entities a context ranks: those within `hops` of `bases`, as
/// [`blast_radius`] finds them, except that beyond the base an entity with
/// more than [`HUB_EDGES`] edges is not passed through
/// (`queries/context_reach.cozo`).
pub fn neighbourhood(
    store: &Store,
    graph: &str,
    bases: &[String],
    hops: u32,
) -> Result<Vec<Reached>, StoreError> {
    let hub = Params::new().with("hub", HUB_EDGES);
    reach(store, queries::CONTEXT_REACH, graph, bases, hops, hub)
}

/// `blast_radius.cozo` or `context_reach.cozo` (with `params` besides the
/// graph, bases and hops), one [`Reached`] per entity.
fn reach(
    store: &Store,
    script: &str,
    graph: &str,
    bases: &[String],
    hops: u32,
    params: Params,
) -> Result<Vec<Reached>, StoreError> {
    let params = params
        .with("graph", graph)
        .with("bases", str_list(bases))
        .with("hops", hops.min(MAX_HOPS) as i64);
    let rows = store.read(script, params)?;
    let mut by_key: BTreeMap<String, Reached> = BTreeMap::new();
    for r in rows::decode_rows::<BlastRadius>(&rows)? {
        let key = r.node;
        let distance = r.d as u32;
        let entry = by_key.entry(key.to_string()).or_insert_with(|| Reached {
            key: key.into_owned(),
            distance,
            via: Vec::new(),
        });
        let direction = match r.dir.as_ref() {
            "out" => "out",
            "in" => "in",
            _ => continue,
        };
        entry.via.push(Via {
            direction,
            rel: r.rel.into_owned(),
            from: r.prev.into_owned(),
        });
    }
    let mut out: Vec<Reached> = by_key.into_values().collect();
    for r in &mut out {
        r.via.sort();
        r.via.dedup();
    }
    out.sort_by(|a, b| a.distance.cmp(&b.distance).then_with(|| a.key.cmp(&b.key)));
    Ok(out)
}

/// A caller or callee of an entity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallLink {
    pub key: String,
    /// The file whose reference produced the edge.
    pub origin: String,
    /// How many call sites.
    pub count: i64,
}

fn call_link(key: Str<'_>, origin: Str<'_>, weight: f64) -> CallLink {
    CallLink {
        key: key.into_owned(),
        origin: origin.into_owned(),
        count: weight as i64,
    }
}

pub fn callers(store: &Store, graph: &str, key: &str) -> Result<Vec<CallLink>, StoreError> {
    let rows = store.read(
        queries::CALLERS,
        Params::new().with("graph", graph).with("key", key),
    )?;
    Ok(rows::decode_rows::<Callers>(&rows)?
        .into_iter()
        .map(|r| call_link(r.src, r.origin, r.weight))
        .collect())
}

pub fn callees(store: &Store, graph: &str, key: &str) -> Result<Vec<CallLink>, StoreError> {
    let rows = store.read(
        queries::CALLEES,
        Params::new().with("graph", graph).with("key", key),
    )?;
    Ok(rows::decode_rows::<Callees>(&rows)?
        .into_iter()
        .map(|r| call_link(r.dst, r.origin, r.weight))
        .collect())
}
