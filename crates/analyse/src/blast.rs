//! Blast radius: what lies within N hops of some base entities.

use std::collections::HashMap;

use serde::Serialize;

use crate::store::rows::{self, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};

query_rows! {
    /// `queries/blast_radius.cozo`.
    BlastRadius = "blast_radius" {
        key { node: Str<'a> }
        value { d: i64, dir: Str<'a>, rel: Str<'a>, prev: Str<'a> }
    }
    /// `queries/context_layer.cozo`.
    ContextLayer = "context_layer" {
        key { prev: Str<'a>, dir: Str<'a>, rel: Str<'a>, node: Str<'a> }
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
    let params = Params::new()
        .with("graph", graph)
        .with("bases", str_list(bases))
        .with("hops", hops.min(MAX_HOPS) as i64);
    let rows = store.read(queries::BLAST_RADIUS, params)?;
    let mut by_key: HashMap<String, Reached> = HashMap::new();
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
    Ok(sorted(by_key.into_values().collect()))
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
/// more than [`HUB_EDGES`] edges is not passed through.
///
/// Walked a layer at a time (`queries/context_layer.cozo`, one script per
/// layer): an entity's distance is the layer that first reaches it, and
/// it was reached through the edges from that layer's predecessor. Each
/// edge around a layer is read once.
pub fn neighbourhood(
    store: &Store,
    graph: &str,
    bases: &[String],
    hops: u32,
) -> Result<Vec<Reached>, StoreError> {
    let hops = hops.min(MAX_HOPS);
    let mut reached: HashMap<String, Reached> = HashMap::new();
    let mut layer: Vec<String> = bases.to_vec();
    layer.sort();
    layer.dedup();
    // The layers walked from: the base, and each one before the
    // outermost, which is reached, never walked from. The base is asked
    // for even at 0 hops (which of its entities exist).
    for d in 0..hops.max(1) {
        if layer.is_empty() {
            break;
        }
        let params = Params::new()
            .with("graph", graph)
            .with("layer", str_list(&layer))
            .with("from_base", d == 0)
            .with("hub", HUB_EDGES);
        let rows = store.read(queries::CONTEXT_LAYER, params)?;
        let rows = rows::decode_rows::<ContextLayer>(&rows)?;
        if d == 0 {
            // Every base first: one base's edge into another leaves it
            // a base.
            for r in rows.iter().filter(|r| r.dir == "base") {
                reached.insert(
                    r.node.to_string(),
                    Reached {
                        key: r.node.to_string(),
                        distance: 0,
                        via: Vec::new(),
                    },
                );
            }
        }
        if d == hops {
            break; // 0 hops: the base alone
        }
        let mut next: Vec<String> = Vec::new();
        for r in &rows {
            let direction = match r.dir.as_ref() {
                "out" => "out",
                "in" => "in",
                _ => continue,
            };
            let entry = reached.entry(r.node.to_string()).or_insert_with(|| {
                next.push(r.node.to_string());
                Reached {
                    key: r.node.to_string(),
                    distance: d + 1,
                    via: Vec::new(),
                }
            });
            if entry.distance == d + 1 {
                entry.via.push(Via {
                    direction,
                    rel: r.rel.to_string(),
                    from: r.prev.to_string(),
                });
            }
        }
        layer = next;
    }
    Ok(sorted(reached.into_values().collect()))
}

/// Reached entities in their order: by distance, then key; each one's
/// edges sorted, once each.
fn sorted(mut out: Vec<Reached>) -> Vec<Reached> {
    for r in &mut out {
        r.via.sort();
        r.via.dedup();
    }
    out.sort_by(|a, b| a.distance.cmp(&b.distance).then_with(|| a.key.cmp(&b.key)));
    out
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
