//! Choosing the entities of a context: base entities, the blast radius
//! around them, files related by history, each with a relevance score, a
//! dependency level and a priority tier (seed 004).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use super::blast::{self, Via};
use super::relevance::{self, Signals, Strategy};
use crate::graph::EntitiesNamed;
use crate::index::{history, keys};
use crate::store::rows::{self, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};

query_rows! {
    /// `queries/entity_brief.cozo`.
    EntityBrief = "entity_brief" {
        key { id: Str<'a> }
        value { kind: Str<'a>, file: Str<'a>, is_test: bool, fan_in: i64 }
    }
    /// `queries/top_entities_of_files.cozo`.
    TopEntitiesOfFiles = "top_entities_of_files" {
        key { file: Str<'a>, id: Str<'a> }
        value { kind: Str<'a>, is_test: bool, fan_in: i64 }
    }
    /// `queries/entities_in_file.cozo`.
    EntitiesInFile = "entities_in_file" {
        key { id: Str<'a> }
        value { start_line: i64 }
    }
    /// `queries/similar_keys.cozo`.
    SimilarKeys = "similar_keys" {
        key { id: Str<'a> }
    }
}

/// How the base entities of a context are named.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseSpec {
    /// Explicit ISGL1 keys.
    Keys(Vec<String>),
    /// Every entity of a file.
    File(String),
    /// Every entity with this name.
    Name(String),
    /// The hits of a search, best first (`context --query`): as many as
    /// fit the budget, in this order.
    Ranked(Vec<String>),
}

impl BaseSpec {
    /// Explicitly requested entities must all fit the budget; entities
    /// derived from a file, a name or a search are ranked like the rest.
    pub fn is_explicit(&self) -> bool {
        matches!(self, BaseSpec::Keys(_))
    }
}

/// Files related only by history contribute at most this many entities.
const PER_HISTORY_FILE: usize = 3;
/// How many history-related files are considered.
const HISTORY_FILES: usize = 40;
/// Each further entity from the same file ranks a little lower, so a
/// context covers many files before it covers one file deeply.
const SAME_FILE_DISCOUNT: f64 = 0.85;

#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    pub key: String,
    pub kind: String,
    pub file: String,
    pub is_test: bool,
    pub fan_in: i64,
    pub is_base: bool,
    /// Seed 004 `dependency_level`: hop distance, or hops + 1 for entities
    /// beyond the requested depth (related by history only).
    pub level: u32,
    pub relevance: f64,
    /// 1 = always included, 2 = space permitting, 3 = dropped first.
    pub tier: u8,
    /// Ordering key inside a tier (relevance with a same-file discount).
    pub priority: f64,
    pub via: Vec<Via>,
    pub critical_path: bool,
}

#[derive(Debug, Clone)]
pub struct Selection {
    pub base_keys: Vec<String>,
    pub explicit: bool,
    pub hops: u32,
    /// In inclusion order: tier, then priority.
    pub candidates: Vec<Candidate>,
    /// Whether git history contributed.
    pub history_used: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("base entity not found: {}", missing.join(", "))]
    NotFound {
        missing: Vec<String>,
        suggestions: Vec<String>,
    },
    #[error("{0}")]
    NoEntities(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub fn select(
    store: &Store,
    graph: &str,
    base: &BaseSpec,
    hops: u32,
    strategy: Strategy,
) -> Result<Selection, SelectError> {
    let hops = hops.min(blast::MAX_HOPS);
    require_current_index(store, graph)?;
    let base_keys = resolve_base(store, graph, base)?;
    let reached = blast::neighbourhood(store, graph, &base_keys, hops)?;
    let keys: Vec<&str> = reached.iter().map(|r| r.key.as_str()).collect();
    let briefs = briefs(store, graph, &keys)?;

    let base_set: BTreeSet<&str> = base_keys.iter().map(String::as_str).collect();
    let base_files: Vec<String> = base_keys
        .iter()
        .filter_map(|k| briefs.get(k.as_str()).map(|b| b.file.clone()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let cochange = CoChange::new(history::cochanged_with(store, graph, &base_files)?);
    let mut candidates: Vec<Candidate> = reached
        .iter()
        .filter_map(|r| {
            let b = briefs.get(r.key.as_str())?;
            let is_base = base_set.contains(r.key.as_str());
            let signals = reached_signals(r, b, is_base, &base_files, &cochange);
            let via = r.via.clone();
            Some(candidate(&r.key, b, &signals, r.distance, via, strategy))
        })
        .collect();
    let history = history_candidates(store, graph, &cochange, &candidates, hops, strategy)?;
    candidates.extend(history);
    if let BaseSpec::Ranked(_) = base {
        rank_hits_first(&base_keys, &mut candidates);
    }
    order(&mut candidates, strategy);
    Ok(Selection {
        base_keys,
        explicit: base.is_explicit(),
        hops,
        candidates,
        history_used: !cochange.scores.is_empty(),
    })
}

/// An error unless `graph` has a code index of this version.
fn require_current_index(store: &Store, graph: &str) -> Result<(), SelectError> {
    if crate::index::usage::is_current(store, graph)? {
        return Ok(());
    }
    Err(SelectError::Store(StoreError::Outdated(format!(
        "graph '{graph}' has no up-to-date code index (it was indexed by another \
         version of graphctx, or never); run `graphctx index` to update it"
    ))))
}

/// How often files changed together with the base entities' files.
struct CoChange {
    scores: HashMap<String, f64>,
    max: f64,
}

impl CoChange {
    fn new(scores: HashMap<String, f64>) -> CoChange {
        let max = scores.values().cloned().fold(0.0, f64::max);
        CoChange { scores, max }
    }

    /// A file's co-change score divided by the best file's (0 without
    /// history).
    fn norm(&self, file: &str) -> f64 {
        if self.max <= 0.0 {
            0.0
        } else {
            self.scores.get(file).copied().unwrap_or(0.0) / self.max
        }
    }
}

/// The relevance signals of an entity the graph reached.
fn reached_signals(
    r: &blast::Reached,
    b: &Brief,
    is_base: bool,
    base_files: &[String],
    cochange: &CoChange,
) -> Signals {
    Signals {
        is_base,
        distance: Some(r.distance),
        via_rels: r.rels().iter().map(|s| s.to_string()).collect(),
        via_count: r.via.len(),
        is_test: b.is_test,
        fan_in: b.fan_in,
        // A file always changes with itself: with a history to go by,
        // entities of the base entities' own files get the full co-change
        // weight.
        cochange: if is_base {
            0.0
        } else if cochange.max > 0.0 && base_files.contains(&b.file) {
            1.0
        } else {
            cochange.norm(&b.file)
        },
    }
}

/// Files related by history but not reached through the graph: the
/// [`HISTORY_FILES`] most related, each by a representative entity.
fn history_candidates(
    store: &Store,
    graph: &str,
    cochange: &CoChange,
    reached: &[Candidate],
    hops: u32,
    strategy: Strategy,
) -> Result<Vec<Candidate>, StoreError> {
    let reached_files: BTreeSet<&str> = reached.iter().map(|c| c.file.as_str()).collect();
    let mut related: Vec<(&String, &f64)> = cochange
        .scores
        .iter()
        .filter(|(f, _)| !reached_files.contains(f.as_str()))
        .collect();
    related.sort_by(|a, b| b.1.total_cmp(a.1).then_with(|| a.0.cmp(b.0)));
    related.truncate(HISTORY_FILES);
    let related_files: Vec<&str> = related.iter().map(|(f, _)| f.as_str()).collect();
    if related_files.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for (key, b) in representatives(store, graph, &related_files)? {
        let signals = Signals {
            distance: None,
            is_test: b.is_test,
            fan_in: b.fan_in,
            cochange: cochange.norm(&b.file),
            ..Signals::default()
        };
        out.push(candidate(&key, &b, &signals, hops + 1, vec![], strategy));
    }
    Ok(out)
}

/// A search's hits come in the search's order: the first hit is the
/// first base entity the fitter keeps.
fn rank_hits_first(base_keys: &[String], candidates: &mut [Candidate]) {
    let n = base_keys.len() as f64;
    let rank: HashMap<&str, usize> = base_keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    for c in candidates.iter_mut() {
        if let Some(&i) = rank.get(c.key.as_str()) {
            c.priority = 1.0 + (n - i as f64) / n;
        }
    }
}

fn candidate(
    key: &str,
    b: &Brief,
    s: &Signals,
    level: u32,
    via: Vec<Via>,
    strategy: Strategy,
) -> Candidate {
    let relevance = relevance::score(strategy, s);
    let tier = match strategy {
        // Seed 004: base and direct dependencies first, 2-hop next, the rest last.
        Strategy::Seed => match s.distance {
            Some(0) | Some(1) => 1,
            Some(2) => 2,
            _ => 3,
        },
        // By relevance, so a strong historical tie outranks a weak edge.
        Strategy::Blended => {
            if s.is_base || (s.distance == Some(1) && relevance >= 0.5) {
                1
            } else if relevance >= 0.25 {
                2
            } else {
                3
            }
        }
    };
    Candidate {
        key: key.to_string(),
        kind: b.kind.clone(),
        file: b.file.clone(),
        is_test: b.is_test,
        fan_in: b.fan_in,
        is_base: s.is_base,
        level,
        relevance: (relevance * 1000.0).round() / 1000.0,
        tier,
        priority: relevance,
        via,
        critical_path: s.critical_path(),
    }
}

/// Sort into inclusion order: tier, then relevance discounted by how many
/// better entities of the same file are already ahead.
fn order(candidates: &mut [Candidate], strategy: Strategy) {
    let by_relevance = |a: &Candidate, b: &Candidate| {
        a.tier
            .cmp(&b.tier)
            .then_with(|| b.is_base.cmp(&a.is_base))
            .then_with(|| b.priority.total_cmp(&a.priority))
            .then_with(|| b.fan_in.cmp(&a.fan_in))
            .then_with(|| a.key.cmp(&b.key))
    };
    candidates.sort_by(by_relevance);
    if strategy == Strategy::Blended {
        let mut seen: HashMap<String, i32> = HashMap::new();
        for c in candidates.iter_mut() {
            if c.is_base {
                continue;
            }
            let n = seen.entry(c.file.clone()).or_insert(0);
            c.priority *= SAME_FILE_DISCOUNT.powi(*n);
            *n += 1;
        }
        candidates.sort_by(by_relevance);
    }
}

#[derive(Debug, Clone)]
struct Brief {
    kind: String,
    file: String,
    is_test: bool,
    fan_in: i64,
}

fn briefs(store: &Store, graph: &str, keys: &[&str]) -> Result<HashMap<String, Brief>, StoreError> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let params = Params::new()
        .with("graph", graph)
        .with("keys", str_list(keys.iter().copied()));
    let rows = store.read(queries::ENTITY_BRIEF, params)?;
    Ok(rows::decode_rows::<EntityBrief>(&rows)?
        .into_iter()
        .map(|r| {
            (
                r.id.into_owned(),
                Brief {
                    kind: r.kind.into_owned(),
                    file: r.file.into_owned(),
                    is_test: r.is_test,
                    fan_in: r.fan_in,
                },
            )
        })
        .collect())
}

/// The best-connected entities of each file (at most a few per file).
fn representatives(
    store: &Store,
    graph: &str,
    files: &[&str],
) -> Result<Vec<(String, Brief)>, StoreError> {
    let rows = store.read(
        queries::TOP_ENTITIES_OF_FILES,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(files.iter().copied())),
    )?;
    let mut per_file: BTreeMap<String, Vec<(String, Brief)>> = BTreeMap::new();
    for r in rows::decode_rows::<TopEntitiesOfFiles>(&rows)? {
        let file = r.file.into_owned();
        per_file.entry(file.clone()).or_default().push((
            r.id.into_owned(),
            Brief {
                kind: r.kind.into_owned(),
                file,
                is_test: r.is_test,
                fan_in: r.fan_in,
            },
        ));
    }
    let mut out = Vec::new();
    for (_, mut items) in per_file {
        items.sort_by(|a, b| {
            a.1.is_test
                .cmp(&b.1.is_test)
                .then_with(|| b.1.fan_in.cmp(&a.1.fan_in))
                .then_with(|| a.0.cmp(&b.0))
        });
        out.extend(items.into_iter().take(PER_HISTORY_FILE));
    }
    Ok(out)
}

fn resolve_base(store: &Store, graph: &str, base: &BaseSpec) -> Result<Vec<String>, SelectError> {
    let params = Params::new().with("graph", graph);
    match base {
        BaseSpec::Keys(keys) => {
            let found = briefs(
                store,
                graph,
                &keys.iter().map(String::as_str).collect::<Vec<_>>(),
            )?;
            let missing: Vec<String> = keys
                .iter()
                .filter(|k| !found.contains_key(k.as_str()))
                .cloned()
                .collect();
            if !missing.is_empty() {
                let suggestions = suggest(store, graph, &missing)?;
                return Err(SelectError::NotFound {
                    missing,
                    suggestions,
                });
            }
            let mut keys = keys.clone();
            keys.dedup();
            Ok(keys)
        }
        BaseSpec::Ranked(keys) => {
            let found = briefs(
                store,
                graph,
                &keys.iter().map(String::as_str).collect::<Vec<_>>(),
            )?;
            let mut seen = BTreeSet::new();
            let keys: Vec<String> = keys
                .iter()
                .filter(|k| found.contains_key(k.as_str()) && seen.insert(k.as_str()))
                .cloned()
                .collect();
            if keys.is_empty() {
                return Err(SelectError::NoEntities(
                    "no entity matches the query; try other words".into(),
                ));
            }
            Ok(keys)
        }
        BaseSpec::File(file) => {
            let file = file.trim_start_matches("./").replace('\\', "/");
            let rows = store.read(
                queries::ENTITIES_IN_FILE,
                params.with("file", file.as_str()),
            )?;
            if rows.rows.is_empty() {
                return Err(SelectError::NoEntities(format!(
                    "no entities in file '{file}' (is it indexed? paths are relative to the repository root)"
                )));
            }
            Ok(rows::decode_rows::<EntitiesInFile>(&rows)
                .map_err(StoreError::from)?
                .into_iter()
                .map(|r| r.id.into_owned())
                .collect())
        }
        BaseSpec::Name(name) => {
            let rows = store.read(queries::ENTITIES_NAMED, params.with("name", name.as_str()))?;
            if rows.rows.is_empty() {
                return Err(SelectError::NoEntities(format!("no entity named '{name}'")));
            }
            Ok(rows::decode_rows::<EntitiesNamed>(&rows)
                .map_err(StoreError::from)?
                .into_iter()
                .map(|r| r.id.into_owned())
                .collect())
        }
    }
}

/// A key's file and its entity's own name, as a key's language reads
/// them; for a key no language reads, no file and the text after its
/// last separator.
fn file_and_name(key: &str) -> (&str, &str) {
    match (keys::split_key(key), keys::key_language(key)) {
        (Some((file, _)), Some((lang, tail))) => {
            (file, lang.tail_names(tail).last().copied().unwrap_or(tail))
        }
        _ => ("", key.rsplit(['-', ':', '>', '.']).next().unwrap_or(key)),
    }
}

/// Up to five existing keys closest to the missing ones: same file or same
/// item name, ranked by shared prefix and edit distance.
pub fn suggest(store: &Store, graph: &str, missing: &[String]) -> Result<Vec<String>, StoreError> {
    let mut scored: Vec<(usize, String)> = Vec::new();
    for m in missing {
        let (file, name) = file_and_name(m);
        let rows = store.read(
            queries::SIMILAR_KEYS,
            Params::new()
                .with("graph", graph)
                .with("file", file)
                .with("name", name),
        )?;
        for r in rows::decode_rows::<SimilarKeys>(&rows)? {
            scored.push((edit_distance(m, &r.id), r.id.into_owned()));
        }
    }
    scored.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, k) in scored {
        if !out.contains(&k) {
            out.push(k);
        }
        if out.len() == 5 {
            break;
        }
    }
    Ok(out)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}
