//! Per-entity usage of a code graph, kept beside the edges it summarises.
//!
//! A context document describes every entity with facts about the edges
//! around it: how many entities depend on it (fan-in), how often it is
//! referenced and from which files it is called, how many tests call it or
//! its members, and its outgoing edges. Aggregating those from `edge` at
//! query time costs a row per edge around every candidate — tens of
//! thousands of rows for a context near a hub. So the index pipeline keeps
//! one `code_usage` row per entity, written in the same transaction as the
//! edges: a materialised view that a context reads with one row per entity.
//!
//! Only entities whose surroundings changed are recomputed: the endpoints
//! of every edge a run adds or removes, and the containers of those whose
//! `tests` edges in came or went (a container's coverage counts the
//! members a test calls; nothing else of it depends on its members). Each
//! is computed from the complete resolved edge set of the run, so an
//! incremental run stores exactly what a full rebuild would (tests compare
//! the two). A member added to or removed from a hub module makes its
//! `contains` edge change, so the module is recomputed as an endpoint; its
//! own container (a crate root that thousands of paths reference) is not.
//!
//! Nor does a recomputed entity read more than changed around it. The
//! facts of its edges in (fan-in, references, call sites, tests) follow
//! from those edges alone; when none of them came or went, they are taken
//! from its stored row, and its edges out from the row's own list, less
//! those of the files resolved now. A module of 1,600 generated items that
//! gains a function is then read as one row, not as its 2,000 edges, the
//! paths that reach it and a lookup of who tests each member: its
//! coverage moves by the members that came, went or whose being tested
//! changed ([`read_around`]).

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use serde::{Deserialize, Serialize};

use super::links::FileLinks;
use crate::model::rel::name::{CALLS, CONTAINS, TESTS};
use crate::model::rel::DEPENDENCY_RELS;
use crate::store::rows::{decode_first, decode_rows, query_rows, CodeUsageRow, Str};
use crate::store::value::str_list;
use cozo::NamedRows;

use crate::store::{queries, Params, Store, StoreError};
use crate::support::packed::{pack_text, unpack_text};

/// Version of what `code_usage` rows hold; a database whose rows were
/// written by another version (or by none) is recomputed in full by the
/// next index run.
pub const USAGE_VERSION: i64 = 1;

/// Whether `graph`'s `code_usage` rows are of [`USAGE_VERSION`].
pub fn is_current(store: &Store, graph: &str) -> Result<bool, StoreError> {
    let rows = store.read(queries::USAGE_VERSION, Params::new().with("graph", graph))?;
    Ok(decode_first::<UsageVersionRow>(&rows)?.is_some_and(|r| r.version == USAGE_VERSION))
}

query_rows! {
    /// `queries/usage_version.cozo`.
    UsageVersionRow = "usage_version" {
        key { version: i64 }
    }
    /// `queries/edges_touching.cozo`, `queries/edges_into_by_rel.cozo`.
    EdgeWithOrigin = "edges_touching" {
        key { src: Str<'a>, rel: Str<'a>, dst: Str<'a>, origin: Str<'a> }
        value { weight: f64 }
    }
}

/// An edge leaving an entity: `(rel, dst, weight, origin)`.
pub type OutEdge = (String, String, f64, String);

/// Usage facts about one entity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Distinct entities that depend on this one through a dependency
    /// relation (`analyse::cycles::DEPENDENCY_RELS`), itself excluded.
    pub fan_in: i64,
    /// Incoming edges other than `contains` (self-references excluded),
    /// one per origin file that produced them.
    pub references: usize,
    /// Files with call sites of this entity.
    pub call_sites: BTreeSet<String>,
    /// Test functions that call it directly.
    pub tests: usize,
    /// Members (via `contains`) that at least one test calls.
    pub tested_members: usize,
    /// Outgoing edges, sorted.
    pub out: Vec<OutEdge>,
}

impl Usage {
    /// Distinct entities this one (`own`) depends on, itself excluded.
    pub fn dependencies(&self, own: &str) -> BTreeSet<&str> {
        self.out
            .iter()
            .filter(|(rel, dst, ..)| DEPENDENCY_RELS.contains(&rel.as_str()) && dst != own)
            .map(|(_, dst, ..)| dst.as_str())
            .collect()
    }

    /// Targets of outgoing edges of one relationship type.
    pub fn targets(&self, rel: &str) -> BTreeSet<&str> {
        self.out
            .iter()
            .filter(|(r, ..)| r == rel)
            .map(|(_, dst, ..)| dst.as_str())
            .collect()
    }

    /// How many members it contains (`contains` edges, one per origin).
    pub fn members(&self) -> usize {
        self.out.iter().filter(|(r, ..)| r == CONTAINS).count()
    }
}

/// One edge of the resolved graph as the usage fold sees it.
struct EdgeRef<'a> {
    src: &'a str,
    rel: &'a str,
    dst: &'a str,
    origin: &'a str,
    weight: f64,
}

fn all_edges<'a>(links: &'a BTreeMap<String, FileLinks<'a>>) -> impl Iterator<Item = EdgeRef<'a>> {
    links.iter().flat_map(|(origin, l)| {
        l.edges.iter().map(move |((src, rel, dst), w)| EdgeRef {
            src,
            rel,
            dst,
            origin: origin.as_str(),
            weight: *w as f64,
        })
    })
}

/// Usage of every entity in `keys`, computed from all resolved edges.
/// The containers of those that `tested_changed` picks are added first
/// (see module docs), so the result may hold more entities than were
/// asked for.
pub fn compute<'a>(
    links: &'a BTreeMap<String, FileLinks<'a>>,
    keys: impl IntoIterator<Item = &'a str>,
    tested_changed: &dyn Fn(&str) -> bool,
) -> HashMap<&'a str, UsageOf<'a>> {
    compute_from(|| all_edges(links), keys, tested_changed)
}

/// The usage of a set of entities (every entity of a first index), a
/// chunk of them at a time: the usage of every entity held at once,
/// outgoing edges included, was a large tree's peak of memory.
///
/// Each chunk looks up only the edges at its own entities. The entities
/// are dealt into chunks by a hash of their key, and each edge's ends are
/// dealt once, up front: a chunk then passes over the edges comparing two
/// numbers each, instead of looking both ends up in its table (half a
/// million entities in eleven chunks looked each of 1.4 million edges up
/// twenty-two times, a tenth of a large tree's first index).
pub struct Chunked<'a> {
    links: &'a BTreeMap<String, FileLinks<'a>>,
    /// The entities of each chunk.
    chunks: Vec<Vec<&'a str>>,
    /// Per file of `links` and edge of it, the chunks of its source and
    /// its target.
    ends: Vec<Box<[(u16, u16)]>>,
    /// The target of every `tests` edge (see [`compute_over`]).
    tested: HashSet<&'a str>,
}

impl<'a> Chunked<'a> {
    /// `keys` in chunks of about `chunk_len` entities, over `links`.
    pub fn new(
        links: &'a BTreeMap<String, FileLinks<'a>>,
        keys: Vec<&'a str>,
        chunk_len: usize,
    ) -> Chunked<'a> {
        use std::hash::BuildHasher;
        let n = keys
            .len()
            .div_ceil(chunk_len.max(1))
            .clamp(1, u16::MAX as usize);
        let hasher = rustc_hash::FxBuildHasher;
        let chunk_of = |key: &str| (hasher.hash_one(key) % n as u64) as u16;
        let mut chunks: Vec<Vec<&str>> = vec![Vec::new(); n];
        for key in keys {
            chunks[chunk_of(key) as usize].push(key);
        }
        let ends = links
            .values()
            .map(|l| {
                l.edges
                    .iter()
                    .map(|((src, _, dst), _)| (chunk_of(src), chunk_of(dst)))
                    .collect()
            })
            .collect();
        let tested = all_edges(links)
            .filter(|e| e.rel == TESTS)
            .map(|e| e.dst)
            .collect();
        Chunked {
            links,
            chunks,
            ends,
            tested,
        }
    }

    /// How many chunks there are.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether there are none (never: an empty set is one empty chunk).
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The entities of chunk `i` and their usage: as [`compute`] over
    /// every edge gives it, their containers not added (each is in a
    /// chunk of its own).
    pub fn compute(&self, i: usize) -> (&[&'a str], HashMap<&'a str, UsageOf<'a>>) {
        let keys = &self.chunks[i];
        let i = i as u16;
        let edges = || {
            self.links
                .iter()
                .zip(&self.ends)
                .flat_map(move |((origin, l), ends)| {
                    l.edges
                        .iter()
                        .zip(ends.iter())
                        .filter(move |(_, (from, to))| *from == i || *to == i)
                        .map(move |(((src, rel, dst), w), _)| EdgeRef {
                            src,
                            rel,
                            dst,
                            origin: origin.as_str(),
                            weight: *w as f64,
                        })
                })
        };
        let out = compute_over(edges, keys.iter().copied(), &|_| false, Some(&self.tested));
        (keys, out)
    }
}

/// For a run that resolved only the files `resolved` (whose edges `links`
/// holds): the stored edges of every other file that [`compute`] would
/// look at for `keys` — those touching them, their containers and the
/// members of both, and who tests those — and, for the entities whose
/// edges in did not change, what their stored rows say of that side. The
/// store still holds the resolved files' old edges; those are left out of
/// `edges` (and read as the state before the run where a difference is
/// taken).
pub struct StoredAround {
    edges: BTreeMap<(String, String, String, String), f64>,
    kept: HashMap<String, KeptIncoming>,
    /// The stored usage rows read for `kept` (`queries/usage_of.cozo`):
    /// the writer compares the new rows with them instead of reading
    /// them again.
    usage_rows: Vec<NamedRows>,
}

/// The facts of an entity that follow from its edges in, as stored: no
/// edge into it came or went in this run. Its coverage
/// (`tested_members`) is the stored one moved by the difference of its
/// members (see [`read_around`]).
struct KeptIncoming {
    fan_in: i64,
    references: i64,
    call_sites: Vec<String>,
    tests: i64,
    tested_members: i64,
    /// Edges into it: its stored degree less its edges out as stored.
    incoming: i64,
}

/// Read the [`StoredAround`] of `keys`, the containers of those that
/// `tested_changed` picks among them.
///
/// An entity that `incoming_changed` does not pick, and that has a stored
/// row, is read by its edges out alone: a module that gained a member is
/// not read with the thousands of paths that reach it, nor are its
/// thousand members asked who tests them. Its coverage is taken by
/// difference: the stored count, less the members that were tested
/// before, plus those tested now, among the members that came or went
/// and those whose being tested changed (no other member's did).
pub fn read_around(
    store: &Store,
    graph: &str,
    links: &BTreeMap<String, FileLinks<'_>>,
    resolved: &BTreeSet<String>,
    keys: &[&str],
    tested_changed: &dyn Fn(&str) -> bool,
    incoming_changed: &dyn Fn(&str) -> bool,
) -> Result<StoredAround, StoreError> {
    let mut around = StoredAround {
        edges: BTreeMap::new(),
        kept: HashMap::default(),
        usage_rows: Vec::new(),
    };
    if keys.is_empty() {
        return Ok(around);
    }
    let mut reader = AroundReader {
        store,
        graph,
        links,
        resolved,
        tested_changed,
        incoming_changed,
        usage_rows: Vec::new(),
    };
    // The asked entities, then the containers of those whose being tested
    // changed, then the members of both and who tests those (what
    // `compute_from` looks at).
    let asked: BTreeSet<&str> = keys.iter().copied().collect();
    let mut rows = reader.stored_rows(&asked)?;
    reader.read_set(&mut around.edges, &asked, &rows)?;
    let containers = reader.containers_to_read(&around.edges, &asked);
    if !containers.is_empty() {
        let containers: BTreeSet<&str> = containers.iter().map(String::as_str).collect();
        let more = reader.stored_rows(&containers)?;
        reader.read_set(&mut around.edges, &containers, &more)?;
        rows.extend(more);
    }
    let heavy = |s: &str| (asked.contains(s) || containers.contains(s)) && !rows.contains_key(s);
    let members: BTreeSet<String> = reader
        .edges_now(&around.edges)
        .filter(|(s, r, _)| *r == CONTAINS && heavy(s))
        .map(|(_, _, d)| d.to_string())
        .collect();
    if !members.is_empty() {
        let params = reader
            .touching(&members.iter().map(String::as_str).collect())
            .with("rel", TESTS);
        reader.read(&mut around.edges, queries::EDGES_INTO_BY_REL, params)?;
    }
    let differing = reader.coverage_may_differ(&around.edges, &rows);
    let candidates = candidates_of(&differing, tested_changed);
    let tested = reader.tested_before_and_now(&mut around.edges, &candidates)?;
    for (c, (mut kept, out)) in rows {
        let delta = match differing.get(c.as_str()) {
            None => 0,
            Some(members) => tested.delta(members, &candidates),
        };
        kept.tested_members += delta;
        kept.incoming -= out.len() as i64;
        around.kept.insert(c, kept);
    }
    around.usage_rows = reader.usage_rows;
    Ok(around)
}

/// Stored edges by (src, rel, dst, origin), with their weights.
type StoredEdges = BTreeMap<(String, String, String, String), f64>;
/// Of some entities, those whose edges in are as their stored rows say,
/// with those rows and their edges out as stored (`incoming` holds the
/// stored degree until those are counted).
type Light = HashMap<String, (KeptIncoming, Vec<OutEdge>)>;
/// A light entity's members as stored and as they are now.
type MembersBeforeNow = (BTreeSet<String>, BTreeSet<String>);

/// What [`read_around`] reads with: the store, the run's fresh edges, and
/// the usage rows read so far.
struct AroundReader<'r, 'l> {
    store: &'r Store,
    graph: &'r str,
    links: &'r BTreeMap<String, FileLinks<'l>>,
    resolved: &'r BTreeSet<String>,
    tested_changed: &'r dyn Fn(&str) -> bool,
    incoming_changed: &'r dyn Fn(&str) -> bool,
    usage_rows: Vec<NamedRows>,
}

impl AroundReader<'_, '_> {
    /// Parameters naming `keys` of the graph.
    fn touching(&self, keys: &BTreeSet<&str>) -> Params {
        Params::new()
            .with("graph", self.graph)
            .with("keys", str_list(keys.iter().copied()))
    }

    /// Every row `query` reads, as stored (the state before this run), each
    /// with whether its file keeps it (was not resolved now); those kept go
    /// into `edges`.
    fn read(
        &self,
        edges: &mut StoredEdges,
        query: &str,
        params: Params,
    ) -> Result<Vec<(String, String, String, bool)>, StoreError> {
        let rows = self.store.read(query, params)?;
        let mut before = Vec::new();
        for r in decode_rows::<EdgeWithOrigin>(&rows)? {
            let current = !self.resolved.contains(r.origin.as_ref());
            before.push((
                r.src.to_string(),
                r.rel.to_string(),
                r.dst.to_string(),
                current,
            ));
            if current {
                let key = (r.src.into(), r.rel.into(), r.dst.into(), r.origin.into());
                edges.insert(key, r.weight);
            }
        }
        Ok(before)
    }

    /// The stored rows of those of `keys` whose edges in did not change
    /// ([`Light`]); the rows read are kept for the writer.
    fn stored_rows(&mut self, keys: &BTreeSet<&str>) -> Result<Light, StoreError> {
        let light: BTreeSet<&str> = keys
            .iter()
            .copied()
            .filter(|k| !(self.incoming_changed)(k))
            .collect();
        if light.is_empty() {
            return Ok(HashMap::default());
        }
        let rows = self.store.read(queries::USAGE_OF, self.touching(&light))?;
        let light = decode_rows::<CodeUsageRow>(&rows)?
            .into_iter()
            .map(|r| {
                let kept = KeptIncoming {
                    fan_in: r.fan_in,
                    references: r.references,
                    call_sites: r.call_sites.iter().map(|s| s.to_string()).collect(),
                    tests: r.tests,
                    tested_members: r.tested_members,
                    incoming: r.degree,
                };
                (r.id.to_string(), (kept, decode_out(&r.out)))
            })
            .collect();
        self.usage_rows.push(rows);
        Ok(light)
    }

    /// Read a set of entities: the heavy ones with every edge touching
    /// them; the light ones (`rows`) have their edges out in their rows,
    /// which say what the store holds (a row is rewritten with the edges
    /// it counts), of which those of the files resolved now are left out.
    fn read_set(
        &self,
        edges: &mut StoredEdges,
        set: &BTreeSet<&str>,
        rows: &Light,
    ) -> Result<(), StoreError> {
        let heavy: BTreeSet<&str> = set
            .iter()
            .copied()
            .filter(|k| !rows.contains_key(*k))
            .collect();
        if !heavy.is_empty() {
            self.read(edges, queries::EDGES_TOUCHING, self.touching(&heavy))?;
        }
        for k in set.iter().filter(|k| rows.contains_key(**k)) {
            for (rel, dst, weight, origin) in &rows[*k].1 {
                if !self.resolved.contains(origin) {
                    let key = (k.to_string(), rel.clone(), dst.clone(), origin.clone());
                    edges.insert(key, *weight);
                }
            }
        }
        Ok(())
    }

    /// The edges as they are now: the stored ones kept and this run's.
    fn edges_now<'e>(
        &'e self,
        edges: &'e StoredEdges,
    ) -> impl Iterator<Item = (&'e str, &'e str, &'e str)> {
        edges
            .keys()
            .map(|(s, r, d, _)| (s.as_str(), r.as_str(), d.as_str()))
            .chain(all_edges(self.links).map(|e| (e.src, e.rel, e.dst)))
    }

    /// The containers, not asked themselves, of the asked entities whose
    /// being tested changed.
    fn containers_to_read(&self, edges: &StoredEdges, asked: &BTreeSet<&str>) -> BTreeSet<String> {
        self.edges_now(edges)
            .filter(|(s, r, d)| {
                *r == CONTAINS
                    && asked.contains(d)
                    && (self.tested_changed)(d)
                    && !asked.contains(s)
            })
            .map(|(s, ..)| s.to_string())
            .collect()
    }

    /// The light entities whose coverage may differ — members came or
    /// went, or one's being tested changed — with their members before
    /// (as stored) and now.
    fn coverage_may_differ(
        &self,
        edges: &StoredEdges,
        rows: &Light,
    ) -> HashMap<String, MembersBeforeNow> {
        let mut members_now: HashMap<&str, BTreeSet<String>> = HashMap::default();
        for (s, r, d) in self.edges_now(edges) {
            if r == CONTAINS && rows.contains_key(s) {
                members_now.entry(s).or_default().insert(d.to_string());
            }
        }
        let mut differing = HashMap::default();
        for (c, (_, out)) in rows {
            let before: BTreeSet<String> = out
                .iter()
                .filter(|(r, ..)| r == CONTAINS)
                .map(|(_, d, ..)| d.clone())
                .collect();
            let now = members_now.remove(c.as_str()).unwrap_or_default();
            let moved = before.symmetric_difference(&now).next().is_some();
            if moved || before.iter().chain(&now).any(|m| (self.tested_changed)(m)) {
                differing.insert(c.clone(), (before, now));
            }
        }
        differing
    }

    /// Who tests the candidates, before (as stored) and now.
    fn tested_before_and_now(
        &self,
        edges: &mut StoredEdges,
        candidates: &BTreeSet<&str>,
    ) -> Result<TestedBeforeNow, StoreError> {
        let mut tested = TestedBeforeNow::default();
        if candidates.is_empty() {
            return Ok(tested);
        }
        let params = self.touching(candidates).with("rel", TESTS);
        for (_, _, dst, current) in self.read(edges, queries::EDGES_INTO_BY_REL, params)? {
            if current {
                tested.now.insert(dst.clone());
            }
            tested.before.insert(dst);
        }
        for e in all_edges(self.links) {
            if e.rel == TESTS && candidates.contains(e.dst) {
                tested.now.insert(e.dst.to_string());
            }
        }
        Ok(tested)
    }
}

/// The members whose being tested may differ: those that came or went,
/// and those whose being tested changed (no other member's did).
fn candidates_of<'d>(
    differing: &'d HashMap<String, MembersBeforeNow>,
    tested_changed: &dyn Fn(&str) -> bool,
) -> BTreeSet<&'d str> {
    let mut candidates = BTreeSet::new();
    for (before, now) in differing.values() {
        for m in before.symmetric_difference(now) {
            candidates.insert(m.as_str());
        }
        for m in before.iter().chain(now) {
            if tested_changed(m) {
                candidates.insert(m.as_str());
            }
        }
    }
    candidates
}

/// The candidates tested before the run and now.
#[derive(Default)]
struct TestedBeforeNow {
    before: HashSet<String>,
    now: HashSet<String>,
}

impl TestedBeforeNow {
    /// How many more of a container's candidate members are tested now
    /// than before.
    fn delta(&self, (before, now): &MembersBeforeNow, candidates: &BTreeSet<&str>) -> i64 {
        let count = |members: &BTreeSet<String>, tested: &HashSet<String>| {
            members
                .iter()
                .filter(|m| candidates.contains(m.as_str()) && tested.contains(*m))
                .count() as i64
        };
        count(now, &self.now) - count(before, &self.before)
    }
}

impl StoredAround {
    /// The stored usage rows already read (`queries/usage_of.cozo`
    /// results), of some of the entities asked.
    pub fn usage_rows(&self) -> &[NamedRows] {
        &self.usage_rows
    }

    /// [`compute`] over these edges and `links`: equal to [`compute`] over
    /// the links of every file.
    pub fn compute<'a>(
        &'a self,
        links: &'a BTreeMap<String, FileLinks<'a>>,
        keys: impl IntoIterator<Item = &'a str>,
        tested_changed: &dyn Fn(&str) -> bool,
    ) -> HashMap<&'a str, UsageOf<'a>> {
        let mut out = compute_from(
            || {
                self.edges
                    .iter()
                    .map(|((src, rel, dst, origin), w)| EdgeRef {
                        src,
                        rel,
                        dst,
                        origin,
                        weight: *w,
                    })
                    .chain(all_edges(links))
            },
            keys,
            tested_changed,
        );
        // Those read by their edges out: the other side as stored.
        for (k, u) in out.iter_mut() {
            if let Some(kept) = self.kept.get(*k) {
                u.fan_in = kept.fan_in;
                u.references = kept.references.max(0) as usize;
                u.call_sites = kept.call_sites.iter().map(String::as_str).collect();
                u.tests = kept.tests.max(0) as usize;
                u.tested_members = kept.tested_members.max(0) as usize;
                u.incoming = kept.incoming.max(0) as usize;
            }
        }
        out
    }
}

/// Usage of `keys`, and of the containers of those `tested_changed`
/// picks.
fn compute_from<'a, I: Iterator<Item = EdgeRef<'a>>>(
    all_edges: impl Fn() -> I,
    keys: impl IntoIterator<Item = &'a str>,
    tested_changed: &dyn Fn(&str) -> bool,
) -> HashMap<&'a str, UsageOf<'a>> {
    compute_over(all_edges, keys, tested_changed, None)
}

/// [`compute_from`] where `all_edges` may be only the edges at `keys`
/// when `tested` is given: the target of every `tests` edge of the graph
/// (a container's coverage asks whether each member is one, and members
/// need not be among `keys`).
fn compute_over<'a, I: Iterator<Item = EdgeRef<'a>>>(
    all_edges: impl Fn() -> I,
    keys: impl IntoIterator<Item = &'a str>,
    tested_changed: &dyn Fn(&str) -> bool,
    tested: Option<&HashSet<&'a str>>,
) -> HashMap<&'a str, UsageOf<'a>> {
    let mut wanted: HashSet<&str> = keys.into_iter().collect();
    if wanted.is_empty() {
        return HashMap::default();
    }
    let tested_now: HashSet<&str> = wanted
        .iter()
        .copied()
        .filter(|k| tested_changed(k))
        .collect();
    if !tested_now.is_empty() {
        for e in all_edges() {
            if e.rel == CONTAINS && tested_now.contains(e.dst) {
                wanted.insert(e.src);
            }
        }
    }
    let mut out: HashMap<&str, UsageOf> = wanted.iter().map(|k| (*k, UsageOf::default())).collect();
    drop(wanted);
    let mut fan_in: HashMap<&str, HashSet<&str>> = HashMap::default();
    // Members of wanted containers; what is tested (all `tests` edges: few).
    let mut members_of: HashMap<&str, Vec<&str>> = HashMap::default();
    let mut tested_seen: HashSet<&str> = HashSet::default();
    for e in all_edges() {
        if e.rel == TESTS && tested.is_none() {
            tested_seen.insert(e.dst);
        }
        if let Some(u) = out.get_mut(e.src) {
            u.out.push((e.rel, e.dst, e.weight, e.origin));
            if e.rel == CONTAINS {
                members_of.entry(e.src).or_default().push(e.dst);
            }
        }
        if let Some(u) = out.get_mut(e.dst) {
            u.incoming += 1;
            if e.rel != CONTAINS && e.src != e.dst {
                u.references += 1;
            }
            match e.rel {
                CALLS => {
                    u.call_sites.insert(e.origin);
                }
                TESTS => u.tests += 1,
                _ => {}
            }
            if e.src != e.dst && DEPENDENCY_RELS.contains(&e.rel) {
                fan_in.entry(e.dst).or_default().insert(e.src);
            }
        }
    }
    let is_tested = tested.unwrap_or(&tested_seen);
    for (container, members) in &members_of {
        let tested: HashSet<&str> = members
            .iter()
            .copied()
            .filter(|m| is_tested.contains(m))
            .collect();
        if let Some(u) = out.get_mut(container) {
            u.tested_members = tested.len();
        }
    }
    for (k, u) in out.iter_mut() {
        u.fan_in = fan_in.get(k).map_or(0, |s| s.len() as i64);
        u.out.sort_by(|a, b| {
            (a.0, a.1, a.3)
                .cmp(&(b.0, b.1, b.3))
                .then(a.2.total_cmp(&b.2))
        });
    }
    out
}

/// [`Usage`] as computed, borrowing its strings from the edges it was
/// computed from: a run writes it as rows without copying each edge's
/// ends once more.
#[derive(Debug, Default)]
pub struct UsageOf<'a> {
    pub fan_in: i64,
    pub references: usize,
    pub call_sites: BTreeSet<&'a str>,
    pub tests: usize,
    pub tested_members: usize,
    /// Edges into it, of every relationship (its degree is these and
    /// `out`).
    pub incoming: usize,
    /// `(rel, dst, weight, origin)`, sorted.
    pub out: Vec<(&'a str, &'a str, f64, &'a str)>,
}

/// The stored form of `out` (one value: a context reads it in one piece):
/// of [`OutEdge`]s, or of the same tuples borrowed, as JSON packed by
/// [`pack_text`] (schema 19: an entity's edges repeat its file's path).
pub fn encode_out<E: Serialize>(out: &[E]) -> Vec<u8> {
    pack_text(serde_json::to_string(out).unwrap_or_else(|_| "[]".to_string()))
}

/// Read back what [`encode_out`] wrote; a damaged value reads as no edges.
pub fn decode_out(stored: &[u8]) -> Vec<OutEdge> {
    unpack_text(stored)
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}
