//! Each listed file's signals as numbers on a common scale, before any
//! weight: what the fitted weights ([`crate::weights`]) combine into a
//! file's score, and what `search --features` writes for the script that
//! fits them (`scripts/search-fit/`).
//!
//! The candidate stages (words, graph, locations, history) find the files;
//! these features say how strongly each signal points at each of them. A
//! feature is divided by a per-query scale that no weight changes (the best
//! entity's word score, the best file's source score), so the score is
//! linear in the weights and a weight fitted on one repository means the
//! same on another.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::analyse::select::EntityBrief;
use crate::model::{EntityKind, EntityKind as K};
use crate::query::Reading;
use crate::{Cand, Found, FILE_DEPTH};

/// The names of the file features, in the order of [`FileFeatures::values`].
pub const FILE_FEATURES: [&str; N_FILE_FEATURES] = [
    "entity_words",
    "entity_graph",
    "entity_rest",
    "path_words",
    "file_text",
    "cochange",
    "location",
    "coverage",
    "text_rank",
    "entity_rank",
    "named",
    "history_text",
];

/// How many file features there are.
pub const N_FILE_FEATURES: usize = 12;

/// One file's features.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct FileFeatures {
    /// The word score of the file's best entity (by words and graph),
    /// divided by the best entity's anywhere.
    pub entity_words: f64,
    /// What that entity received through the graph, on the same scale, at
    /// most 1: a file of many middling hits passes its module entity more
    /// than the best hit's own words, which says how many, not how well.
    pub entity_graph: f64,
    /// The next [`FILE_DEPTH`] entities' word and graph scores, summed.
    pub entity_rest: f64,
    /// The word score of the file's module entity, whose text holds the
    /// file's path: the query names the component.
    pub path_words: f64,
    /// BM25 over the file's whole source, divided by the best file's.
    pub file_text: f64,
    /// What co-change with the best files gave it, divided by the best
    /// file's score from its entities.
    pub cochange: f64,
    /// The weight of a location the query quotes in this file (1 for the
    /// first, less for later ones).
    pub location: f64,
    /// The share of the query's term weight that the file's candidate
    /// entities hold between them.
    pub coverage: f64,
    /// `1 / (1 + rank)` of the file by its source's words alone.
    pub text_rank: f64,
    /// `1 / (1 + rank)` of the file by its entities alone.
    pub entity_rank: f64,
    /// 1 when an entity of the file is one the query names as code.
    pub named: f64,
    /// BM25 over the messages of the commits that changed the file,
    /// divided by the best file's.
    pub history_text: f64,
}

impl FileFeatures {
    /// The features in the order of [`FILE_FEATURES`].
    pub fn values(&self) -> [f64; N_FILE_FEATURES] {
        [
            self.entity_words,
            self.entity_graph,
            self.entity_rest,
            self.path_words,
            self.file_text,
            self.cochange,
            self.location,
            self.coverage,
            self.text_rank,
            self.entity_rank,
            self.named,
            self.history_text,
        ]
    }
}

/// What a file is, for the prior: the code a change belongs in, or test,
/// documentation or example code, or benchmarks the query speaks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    #[default]
    Code,
    /// Test or benchmark code (the layout says so) the query does not ask for.
    Test,
    /// Documentation, an example, a build script or build output (as
    /// the file's language tells).
    DocsOrExample,
    /// Type declarations (a `.d.ts`) the query does not speak of.
    Declarations,
}

/// Every listed file's features. `entity_score` is each file's score from
/// its entities as the candidate stages computed it (before co-change),
/// `cochanged` what co-change added to it.
pub(crate) fn of_files(
    found: &Found,
    scored: &[(&EntityBrief, f64)],
    entity_score: &FxHashMap<&str, f64>,
    cochanged: &FxHashMap<String, (String, f64)>,
    reading: &Reading,
) -> FxHashMap<String, FileFeatures> {
    let term_weights: Vec<f64> = reading.terms.iter().map(|t| t.weight).collect();
    let total_weight: f64 = term_weights.iter().sum();
    let top = found.top_lexical.max(1e-9);
    let no_cand = Cand::default();
    let mut per_file: FxHashMap<&str, Vec<&Cand>> = FxHashMap::default();
    let mut path: FxHashMap<&str, f64> = FxHashMap::default();
    let mut named: FxHashSet<&str> = FxHashSet::default();
    for (b, _) in scored {
        let c = found.cands.get(b.id.as_ref()).unwrap_or(&no_cand);
        let file: &str = b.file.as_ref();
        per_file.entry(file).or_default().push(c);
        if b.kind == "module" {
            let p = path.entry(file).or_insert(0.0);
            *p = p.max(c.lexical);
        }
        if found.named.contains(b.id.as_ref()) {
            named.insert(file);
        }
    }
    let text_rank = ranks(found.words.iter().map(|(f, w)| (f.as_str(), *w)));
    let entity_rank = ranks(entity_score.iter().map(|(f, s)| (*f, *s)));
    let top_words = found.words.values().cloned().fold(0.0, f64::max);
    let top_history = found.history.values().cloned().fold(0.0, f64::max);
    let top_entities = entity_score.values().cloned().fold(0.0, f64::max);
    let mut out = FxHashMap::default();
    for file in entity_score.keys() {
        let mut cands = per_file.get(file).cloned().unwrap_or_default();
        cands.sort_by(|a, b| (b.lexical + b.spread).total_cmp(&(a.lexical + a.spread)));
        let best = cands.first().copied().unwrap_or(&no_cand);
        let rest: f64 = cands
            .iter()
            .skip(1)
            .take(FILE_DEPTH)
            .map(|c| c.lexical + c.spread)
            .sum();
        let mut held = vec![false; term_weights.len()];
        for c in &cands {
            for &t in &c.terms {
                if let Some(h) = held.get_mut(t) {
                    *h = true;
                }
            }
        }
        let covered: f64 = held
            .iter()
            .zip(&term_weights)
            .filter(|(h, _)| **h)
            .map(|(_, w)| w)
            .sum();
        let ratio = |x: f64, of: f64| if of > 0.0 { x / of } else { 0.0 };
        let features = FileFeatures {
            entity_words: best.lexical / top,
            entity_graph: (best.spread / top).min(1.0),
            entity_rest: rest / top,
            path_words: path.get(file).copied().unwrap_or(0.0) / top,
            file_text: ratio(found.words.get(*file).copied().unwrap_or(0.0), top_words),
            cochange: ratio(cochanged.get(*file).map_or(0.0, |(_, b)| *b), top_entities),
            location: found.located.files.get(*file).map_or(0.0, |(w, _)| *w),
            coverage: ratio(covered, total_weight),
            text_rank: text_rank.get(file).map_or(0.0, |r| 1.0 / (1.0 + *r as f64)),
            entity_rank: entity_rank
                .get(file)
                .map_or(0.0, |r| 1.0 / (1.0 + *r as f64)),
            named: if named.contains(file) { 1.0 } else { 0.0 },
            history_text: ratio(
                found.history.get(*file).copied().unwrap_or(0.0),
                top_history,
            ),
        };
        out.insert(file.to_string(), features);
    }
    out
}

/// Each item's 0-based rank by its score, best first (ties by name);
/// items scoring nothing have no rank.
fn ranks<'a>(items: impl Iterator<Item = (&'a str, f64)>) -> FxHashMap<&'a str, usize> {
    let mut v: Vec<(&str, f64)> = items.filter(|(_, s)| *s > 0.0).collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    v.into_iter()
        .enumerate()
        .map(|(i, (f, _))| (f, i))
        .collect()
}

/// The names of the entity features, in the order of [`EntityFeatures::values`].
pub const ENTITY_FEATURES: [&str; N_ENTITY_FEATURES] = [
    "words",
    "graph",
    "named",
    "located",
    "function",
    "type",
    "module",
    "fan_in",
    "is_test",
    "body",
    "body_in_file",
    "body_coverage",
    "lines",
    "own_coverage",
];

/// How many entity features there are.
pub const N_ENTITY_FEATURES: usize = 14;

/// One entity's features, for ordering the entities of a file: which of
/// them a change is about.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct EntityFeatures {
    /// Its word score, divided by the best entity's.
    pub words: f64,
    /// What it received through the graph, on the same scale.
    pub graph: f64,
    /// 1 when the query names it as code.
    pub named: f64,
    /// 1 when the query quotes a line of it.
    pub located: f64,
    /// 1 for a function or method.
    pub function: f64,
    /// 1 for a type: a struct, enum, class, trait, interface, impl, alias.
    pub r#type: f64,
    /// 1 for a module (a file).
    pub module: f64,
    /// `ln(1 + its callers and users) / 5`.
    pub fan_in: f64,
    /// 1 for test code.
    pub is_test: f64,
    /// BM25 over every word of its own lines (read for the best files'
    /// entities only, [`crate::bodies`]), divided by the best entity's.
    pub body: f64,
    /// The same divided by the best of its file's entities.
    pub body_in_file: f64,
    /// The share of the query's term weight its lines hold.
    pub body_coverage: f64,
    /// `ln(1 + its own lines) / 5` (those of the best files' entities;
    /// an entity's own lines leave out its members'): a change lands in
    /// long functions more often than in short ones.
    pub lines: f64,
    /// The share of the query's term weight its own text holds (the
    /// words [`EntityFeatures::words`] scores: name, owner, signature,
    /// documentation, its body's literals and comments): near 1 when the
    /// query says what its documentation says, however short the entity.
    pub own_coverage: f64,
}

/// What the best files' entities' bodies say of one entity (all 0 for an
/// entity whose file was not read).
#[derive(Debug, Clone, Copy, Default)]
pub struct BodyFeatures {
    pub body: f64,
    pub body_in_file: f64,
    pub body_coverage: f64,
    pub lines: f64,
}

impl EntityFeatures {
    /// The features in the order of [`ENTITY_FEATURES`].
    pub fn values(&self) -> [f64; N_ENTITY_FEATURES] {
        [
            self.words,
            self.graph,
            self.named,
            self.located,
            self.function,
            self.r#type,
            self.module,
            self.fan_in,
            self.is_test,
            self.body,
            self.body_in_file,
            self.body_coverage,
            self.lines,
            self.own_coverage,
        ]
    }
}

/// The features of one listed entity.
pub(crate) fn of_entity(
    found: &Found,
    reading: &Reading,
    b: &EntityBrief,
    body: BodyFeatures,
) -> EntityFeatures {
    let top = found.top_lexical.max(1e-9);
    let no_cand = Cand::default();
    let c = found.cands.get(b.id.as_ref()).unwrap_or(&no_cand);
    let total_weight: f64 = reading.terms.iter().map(|t| t.weight).sum();
    let own_weight: f64 = c
        .terms
        .iter()
        .filter_map(|&i| reading.terms.get(i))
        .map(|t| t.weight)
        .sum();
    let kind = EntityKind::parse(b.kind.as_ref());
    let flag = |x: bool| if x { 1.0 } else { 0.0 };
    EntityFeatures {
        words: c.lexical / top,
        graph: c.spread / top,
        named: flag(found.named.contains(b.id.as_ref())),
        located: flag(c.location.is_some()),
        function: flag(matches!(kind, Some(K::Function | K::Method))),
        r#type: flag(matches!(
            kind,
            Some(K::Struct | K::Enum | K::Union | K::Class | K::Trait | K::Impl | K::TypeAlias)
        )),
        module: flag(kind == Some(K::Module)),
        fan_in: (1.0 + b.fan_in.max(0) as f64).ln() / 5.0,
        is_test: flag(b.is_test),
        body: body.body,
        body_in_file: body.body_in_file,
        body_coverage: body.body_coverage,
        lines: body.lines,
        own_coverage: if total_weight > 0.0 {
            own_weight / total_weight
        } else {
            0.0
        },
    }
}
