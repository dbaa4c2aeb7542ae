//! The graph and history signals: the best word hits pass a share of
//! their score one hop along their edges (both directions, weighted by
//! the relationship as the context's relevance weighs it), so a function
//! whose own words say little is found through the types and functions its
//! neighbours name; an entity the query names as code passes more, to
//! every user; and files that changed together with the best files in the
//! repository's history (`code_cochange`) gain part of their score.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use super::{Cand, HISTORY, HISTORY_FILES, NAMED, SEEDS, SPREAD};
use crate::analyse::relevance::rel_weight;
use crate::index::keys;
use crate::store::rows::{decode_rows, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};

query_rows! {
    /// `queries/search_neighbours.cozo`.
    NeighbourRow = "search_neighbours" {
        key { key: Str<'a>, rel: Str<'a>, other: Str<'a>, dir: Str<'a> }
    }
    /// `queries/search_cochange.cozo`.
    CochangeRow = "search_cochange" {
        key { file: Str<'a>, other: Str<'a> }
        value { weight: f64 }
    }
}

/// An identifier naming more candidates than this names no one of them
/// (`new`, `poll`): its users are everyone's.
const NAMED_MAX: usize = 6;

/// Candidates whose key ends with an identifier the query names as code
/// (`JoinSet::shutdown`, `tokio::sync::watch::Receiver`, `spawn_blocking`):
/// the entity the query is about by name, whose users (callers,
/// implementors) a change to it touches too. The key's module path and
/// item path, `::`-joined, must end with the identifier's last segments —
/// all of them, or at least two of a longer path (a crate name in front).
pub fn named_entities(identifiers: &[String], cands: &FxHashMap<String, Cand>) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    if identifiers.is_empty() {
        return named;
    }
    let paths: Vec<(&String, Vec<String>)> = cands.keys().map(|k| (k, key_segments(k))).collect();
    for ident in identifiers {
        let want: Vec<&str> = ident.split("::").filter(|s| !s.is_empty()).collect();
        if want.is_empty() {
            continue;
        }
        let hits: Vec<&String> = paths
            .iter()
            .filter(|(_, segs)| {
                let common = segs
                    .iter()
                    .rev()
                    .zip(want.iter().rev())
                    .take_while(|(a, b)| a.as_str() == **b)
                    .count();
                common == want.len() || common >= 2
            })
            .map(|(k, _)| *k)
            .collect();
        if hits.len() <= NAMED_MAX {
            named.extend(hits.into_iter().cloned());
        }
    }
    named
}

/// `src/sync/watch.rs-sync::watch-Receiver::borrow` → `sync`, `watch`,
/// `receiver`, `borrow`: the names a key's tail is made of, as its
/// language reads them, lowercased.
fn key_segments(key: &str) -> Vec<String> {
    keys::key_language(key)
        .map(|(lang, tail)| {
            let names = lang.tail_names(tail);
            names.into_iter().map(str::to_lowercase).collect()
        })
        .unwrap_or_default()
}

/// One hop of the best lexical hits' scores along their edges.
pub fn spread(
    store: &Store,
    graph: &str,
    cands: &mut FxHashMap<String, Cand>,
    named: &BTreeSet<String>,
) -> Result<(), StoreError> {
    let mut seeds: Vec<(&String, f64)> = cands.iter().map(|(k, c)| (k, c.lexical)).collect();
    seeds.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    seeds.truncate(SEEDS);
    let mut seed_score: FxHashMap<String, f64> =
        seeds.iter().map(|(k, s)| ((*k).clone(), *s)).collect();
    for k in named {
        seed_score.insert(k.clone(), cands[k].lexical);
    }

    let keys: Vec<&str> = seed_score.keys().map(String::as_str).collect();
    let rows = store.read(
        queries::SEARCH_NEIGHBOURS,
        Params::new()
            .with("graph", graph)
            .with("keys", str_list(keys)),
    )?;
    let edges = decode_rows::<NeighbourRow>(&rows)?;
    // Degree of each seed, so a hub passes on less to each neighbour.
    let mut degree: FxHashMap<&str, usize> = FxHashMap::default();
    for e in &edges {
        *degree.entry(e.key.as_ref()).or_default() += 1;
    }
    let mut best: FxHashMap<&str, (f64, [String; 3])> = FxHashMap::default();
    for e in &edges {
        if e.other == e.key {
            continue;
        }
        let s = seed_score[e.key.as_ref()];
        // A hub passes less to each neighbour, except an entity the query
        // names: every user of it is a place the change may reach.
        let fan = if named.contains(e.key.as_ref()) {
            1.0 / NAMED
        } else {
            (degree[e.key.as_ref()] as f64).sqrt()
        };
        let share = SPREAD * s * rel_weight(&e.rel) / fan;
        let rel = if e.dir == "out" {
            e.rel.to_string()
        } else {
            format!("<-{}", e.rel)
        };
        let entry = best
            .entry(e.other.as_ref())
            .or_insert((0.0, [String::new(), String::new(), String::new()]));
        if share > entry.0 {
            entry.1 = [e.key.to_string(), rel, e.other.to_string()];
        }
        entry.0 += share;
    }
    for (other, (s, path)) in best {
        let c = cands.entry(other.to_string()).or_default();
        c.spread += s;
        if c.lexical == 0.0 {
            c.path = Some(path);
        }
    }
    Ok(())
}

/// Raise files that changed together with the best files; returns, per
/// raised file, the file it changed with most and what it gained.
pub fn history(
    store: &Store,
    graph: &str,
    file_score: &mut FxHashMap<&str, f64>,
) -> Result<FxHashMap<String, (String, f64)>, StoreError> {
    let mut top: Vec<(&str, f64)> = file_score.iter().map(|(f, s)| (*f, *s)).collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    top.truncate(HISTORY_FILES);
    // A file listed for its source's words alone raises nothing here.
    top.retain(|(_, s)| *s > 0.0);
    if top.is_empty() {
        return Ok(FxHashMap::default());
    }
    let files: Vec<&str> = top.iter().map(|(f, _)| *f).collect();
    let rows = store.read(
        queries::SEARCH_COCHANGE,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(files)),
    )?;
    let pairs = decode_rows::<CochangeRow>(&rows)?;
    let top_score: FxHashMap<&str, f64> = top.iter().cloned().collect();
    // Normalise each top file's weights to its strongest partner.
    let mut strongest: FxHashMap<&str, f64> = FxHashMap::default();
    for p in &pairs {
        let e = strongest.entry(p.file.as_ref()).or_insert(0.0);
        *e = e.max(p.weight);
    }
    let mut boost: FxHashMap<String, (f64, f64, String)> = FxHashMap::default();
    for p in &pairs {
        let w = p.weight / strongest[p.file.as_ref()].max(1e-9);
        let b = HISTORY * w * top_score[p.file.as_ref()];
        let e = boost
            .entry(p.other.to_string())
            .or_insert((0.0, 0.0, String::new()));
        e.0 += b;
        if b > e.1 {
            e.1 = b;
            e.2 = p.file.to_string();
        }
    }
    let mut why = FxHashMap::default();
    let known: BTreeSet<&str> = file_score.keys().copied().collect();
    for (file, (b, _, with)) in boost {
        // Only files that already hold a candidate: a file with no hit
        // has no entity to list.
        if let Some(k) = known.get(file.as_str()) {
            if let Some(s) = file_score.get_mut(k) {
                *s += b;
                why.insert(file, (with, b));
            }
        }
    }
    Ok(why)
}
