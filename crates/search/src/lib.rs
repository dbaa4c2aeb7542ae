//! Ranked text search: the entities a free-text query (a bug report, a
//! commit message, a question) is most likely about.
//!
//! The query is first read the way a maintainer reads it ([`query`]):
//! weighted terms (title and code count more, template headings and the
//! reporter's environment less), the identifiers it names as code, the
//! file locations it quotes. Then the signals, each from the store:
//!
//! 1. **Entity words** ([`lexical`]): BM25 of the weighted terms over
//!    every entity's text (name, owner, doc comment, signature head; a
//!    file's module entity also its path).
//! 2. **Locations** ([`locate`]): a quoted `src/x.rs:12:5` names that
//!    file and the entity at that line, a panic's first.
//! 3. **Graph** ([`graph`]): the best hits pass a share of their score one
//!    hop along their edges; an entity the query names as code passes more,
//!    to every user.
//! 4. **File words**: BM25 over each file's whole source (identifiers,
//!    comments, strings).
//! 5. **Co-change**: files that changed together with the best files in
//!    the repository's history.
//! 6. **Commit messages**: BM25 over the messages of the commits that
//!    changed each file.
//! 7. **Role**: a report is fixed in the code, not in its tests.
//! 8. **Bodies** ([`bodies`]): the entities of the best files, read in
//!    their source, by every word of their lines.
//!
//! Each listed file's signals become numbers on per-query scales
//! ([`features`]); a file scores their weighted sum times its role's
//! factor, and its entities follow in the order of an entity score, the
//! first at its file's score. The weights ([`weights`]) are fitted on the
//! histories of repositories the ranking is not measured on
//! (`scripts/search-fit/`); `Scoring::Hand` scores files by the earlier
//! hand-set rules, for comparison. docs/search.md gives the weights and what each adds.

use graphctx_analyse as analyse;
use graphctx_base::{model, support};
use graphctx_index as index;
use graphctx_store as store;

mod bodies;
pub mod features;
mod graph;
mod held_lists;
mod lexical;
mod locate;
mod prior;
pub mod query;
pub mod weights;

use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::analyse::select::EntityBrief;
use crate::store::rows::{decode_first, decode_rows, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};
use crate::support::words::has_words;
use features::{BodyFeatures, EntityFeatures, FileFeatures, Role};
use prior::Prior;

pub use held_lists::HeldLists;
use query::Reading;
use weights::{Contribution, Scoring, Weights};

query_rows! {
    /// `queries/search_entities.cozo`.
    HitRow = "search_entities" {
        key { id: Str<'a> }
        value {
            kind: Str<'a>,
            name: Str<'a>,
            file: Str<'a>,
            start_line: i64,
            end_line: i64,
            head: Str<'a>,
        }
    }
    /// `queries/search_file_modules.cozo`.
    FileModuleRow = "search_file_modules" {
        key { id: Str<'a> }
        value {
            kind: Str<'a>,
            file: Str<'a>,
            is_test: bool,
            fan_in: i64,
            start_line: i64,
        }
    }
    /// `queries/search_file_spans.cozo`.
    SpanRow = "search_file_spans" {
        key { id: Str<'a> }
        value {
            kind: Str<'a>,
            file: Str<'a>,
            is_test: bool,
            fan_in: i64,
            start_line: i64,
            end_line: i64,
        }
    }
    /// `queries/search_size.cozo`.
    SizeRow = "search_size" {
        key { graph: Str<'a> }
        value { entities: i64, files: i64 }
    }
}

/// How many lexical hits seed the graph spread.
const SEEDS: usize = 60;
/// Share of a seed's score a neighbour receives (times the edge weight).
const SPREAD: f64 = 0.35;
/// Entities considered for the list after the spread.
const CANDIDATES: usize = 400;
/// A file's score: its best entity plus this share of the next ones'.
const FILE_REST: f64 = 0.3;
/// How many entities after the best count towards a file's score.
const FILE_DEPTH: usize = 4;
/// Files considered for the history boost, and its share.
const HISTORY_FILES: usize = 10;
const HISTORY: f64 = 0.4;
/// Weight of a file's path match (the lexical score of its module entity,
/// whose text holds the path) in the file's score: a query naming a
/// component (`serde_derive: …`, `the lexer …`) means that component's
/// files, however few of their entities' own words it uses.
const PATH: f64 = 2.0;
/// An entity the query names as code (`generics_with_de_lifetime`) passes
/// this share of the usual spread to each neighbour, undivided by its
/// degree: a change to it reaches every user (a rename, a new argument).
const NAMED: f64 = 3.0;
/// Each further entity of a file counts this much less in the order.
const SAME_FILE_DECAY: f64 = 0.7;
/// Share of the file-level word score (BM25 over each file's whole source,
/// `code_file_word`) in a file's score, the rest being the entity-based
/// score above; each is first divided by its best file's, and both count
/// alike.
const FILE_WORDS: f64 = 0.5;
/// Files none of whose entities is a candidate are listed (by their
/// module entity) when their source's words alone rank them among this
/// many first files: a first page of files.
const WORD_FILES: usize = 10;
/// Files none of whose entities is a candidate are listed (by their module
/// entity) when the messages of the commits that changed them rank them
/// among this many first files by those words alone.
const HISTORY_TEXT_FILES: usize = 10;
/// A quoted location's file gains this much (times the location's weight,
/// 1 for the first) on a scale where the best file scores 1.
const LOCATION: f64 = 0.6;
/// In the order of the list, the entity's own score counts this much and
/// its file's the rest.
const ENTITY_MIX: f64 = 0.25;
/// The entity at a quoted line scores this share of the best word hit
/// (times the location's weight).
const LOCATED_ENTITY: f64 = 1.0;

/// What a search looks at and returns.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub limit: usize,
    /// Only entities of this kind.
    pub kind: Option<String>,
    /// Only entities in this file, or under this directory.
    pub file: Option<String>,
    /// Give every hit its signals ([`Why::signals`]).
    pub explain: bool,
    /// How files are scored from their signals.
    pub scoring: Scoring,
    /// The repository the index holds, whose best files are read to score
    /// their entities by their bodies ([`bodies`]); `None` (a database
    /// kept apart from its repository) leaves that signal out.
    pub sources: Option<PathBuf>,
    /// The posting lists a server holds between searches ([`HeldLists`]);
    /// `None` reads every list from the store.
    pub held: Option<Arc<HeldLists>>,
}

/// Why a hit ranked.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Why {
    /// Query words found in the entity's own text, as written in the query.
    pub terms: Vec<String>,
    /// For an entity found through the graph: `[lexical hit, relationship,
    /// this entity]`, the relationship read along the edge's direction
    /// (`calls` from the hit, or `<-calls` when this entity calls it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<[String; 3]>,
    /// For a file raised by history: the file it changed together with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cochanged_with: Option<String>,
    /// For an entity or a file the query quotes: the location as quoted
    /// (`src/x.rs:12`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Each signal's part of the score, with `--explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signals: Option<Signals>,
    /// The file's strongest signals under the fitted weights, each with its
    /// part of the score on a scale where the best file scores 1.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub file_signals: Vec<Contribution>,
}

/// The signals behind a hit's score: the entity's own (divided by the best
/// entity's) and its file's (each on a scale where the best file's is 1).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Signals {
    /// The entity's word score.
    pub words: f64,
    /// What the entity received through the graph.
    pub graph: f64,
    /// The entity's body score (every word of its lines), divided by the
    /// best body's.
    pub body: f64,
    /// The file's score from its entities (words, graph, path).
    pub file_entities: f64,
    /// The file's whole-source word score.
    pub file_text: f64,
    /// What the file gained from history.
    pub history: f64,
    /// What the file gained from a quoted location.
    pub location: f64,
    /// The factor of the file's role (1 for code that is not a test; under
    /// the fitted weights, their factor for tests, documentation and
    /// examples).
    pub test_prior: f64,
}

impl Why {
    /// The reasons in one short line: matched terms, then the signals that
    /// are not words (`via calls run`, `cochanged a.rs`, `at src/x.rs:12`).
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if !self.terms.is_empty() {
            parts.push(self.terms.join(" "));
        }
        if let Some([from, rel, _]) = &self.path {
            parts.push(format!("via {rel} {from}"));
        }
        if let Some(l) = &self.location {
            parts.push(format!("at {l}"));
        }
        if let Some(f) = &self.cochanged_with {
            parts.push(format!("cochanged {f}"));
        }
        if !self.file_signals.is_empty() {
            let named: Vec<String> = self
                .file_signals
                .iter()
                .take(2)
                .map(|c| format!("{} {:.2}", c.signal, c.part))
                .collect();
            parts.push(format!("file: {}", named.join(", ")));
        }
        if parts.is_empty() {
            parts.push("file text".to_string());
        }
        parts.join("; ")
    }
}

/// One ranked entity.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Hit {
    pub key: String,
    pub kind: String,
    pub name: String,
    pub file: String,
    pub start_line: i64,
    pub end_line: i64,
    pub signature: String,
    pub score: f64,
    pub why: Why,
}

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("the query has no words to search for (letters or digits)")]
    NoWords,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Per candidate entity while ranking.
#[derive(Default, Clone)]
pub(crate) struct Cand {
    lexical: f64,
    spread: f64,
    terms: Vec<usize>,
    path: Option<[String; 3]>,
    location: Option<String>,
}

/// A file's parts of its score, kept for `--explain`.
#[derive(Default, Clone, Copy)]
struct FileParts {
    entities: f64,
    text: f64,
    history: f64,
    location: f64,
    is_test: bool,
}

/// The entities of `graph` ranked for `query`, best first. An empty list
/// when no word of the query is in the index (only stop words, or words
/// the code never uses); [`SearchError::NoWords`] when it has no words.
pub fn search(
    store: &Store,
    graph: &str,
    query: &str,
    opts: &Options,
) -> Result<Vec<Hit>, SearchError> {
    if !has_words(query) {
        return Err(SearchError::NoWords);
    }
    let reading = query::read(query);
    if reading.terms.is_empty() && reading.locations.is_empty() {
        return Ok(Vec::new());
    }
    Ok(rank(store, graph, &reading, opts, None)?)
}

/// What one query's ranking saw, for the script that fits the weights:
/// every listed file's features, role and score under `opts.scoring`, and
/// the features of the entities of the best [`bodies::BODY_FILES`] files
/// (those whose bodies are read).
#[derive(Debug, Clone, Default, Serialize)]
pub struct QueryFeatures {
    pub files: Vec<FileRow>,
    pub entities: Vec<EntityRow>,
}

/// One entity of [`QueryFeatures`].
#[derive(Debug, Clone, Serialize)]
pub struct EntityRow {
    pub key: String,
    pub file: String,
    pub kind: String,
    pub features: EntityFeatures,
}

/// One listed file in [`QueryFeatures`].
#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    pub file: String,
    pub role: Role,
    pub score: f64,
    pub features: FileFeatures,
}

/// [`search`], and the features of every file the ranking lists (see
/// [`features`]), best first by the score of `opts.scoring`.
pub fn search_with_features(
    store: &Store,
    graph: &str,
    query: &str,
    opts: &Options,
) -> Result<(Vec<Hit>, QueryFeatures), SearchError> {
    if !has_words(query) {
        return Err(SearchError::NoWords);
    }
    let reading = query::read(query);
    let mut out = QueryFeatures::default();
    if reading.terms.is_empty() && reading.locations.is_empty() {
        return Ok((Vec::new(), out));
    }
    let hits = rank(store, graph, &reading, opts, Some(&mut out))?;
    Ok((hits, out))
}

fn rank(
    store: &Store,
    graph: &str,
    reading: &Reading,
    opts: &Options,
    dump: Option<&mut QueryFeatures>,
) -> Result<Vec<Hit>, StoreError> {
    let found = find_candidates(store, graph, reading, opts.held.as_deref())?;
    let prior = Prior::of(reading);

    // The strongest candidates, with what ranking needs of them (kind,
    // file, test flag: one `code_usage` row each).
    let ranked = strongest(&found.cands);
    let brief_rows = read_briefs(store, graph, &ranked)?;
    let briefs = decode_rows::<EntityBrief>(&brief_rows)?;
    let mut scored = with_prior(&ranked, &briefs, &prior);
    let (mut file_score, mut parts) = files_of(&scored, &found.cands);

    // Files found by their source's words or a quoted location alone are
    // listed by their own module entity (the first in the file).
    let more = files_by_words_alone(&found, &file_score);
    let module_rows = read_file_modules(store, graph, &more)?;
    let found_modules = match &module_rows {
        Some(rows) => decode_rows::<FileModuleRow>(rows)?,
        None => Vec::new(),
    };
    let modules = first_module_of_each_file(&found_modules);
    for b in &modules {
        scored.push((b, 0.0));
        file_score.insert(b.file.as_ref(), 0.0);
        parts.insert(
            b.file.to_string(),
            FileParts {
                is_test: b.is_test,
                ..FileParts::default()
            },
        );
    }

    let by_entities = file_score.clone();
    let cochanged = graph::history(store, graph, &mut file_score)?;
    for (f, (_, b)) in &cochanged {
        parts.entry(f.clone()).or_default().history = *b;
    }
    let features = features::of_files(&found, &scored, &by_entities, &cochanged, reading);
    fuse(&found.words, &mut file_score, &mut parts);
    add_locations_and_prior(&found.located, &prior, &mut file_score, &mut parts);
    let role_of = |f: &str| prior.role(f, parts.get(f).is_some_and(|p| p.is_test));
    let fitted = opts.scoring == Scoring::Fitted;
    if fitted {
        for (f, s) in file_score.iter_mut() {
            let x = features.get(*f).cloned().unwrap_or_default();
            *s = Weights::FITTED.score(&x, role_of(f));
        }
    }
    // The best files' entities, read in their source: each is a candidate
    // (a function the report describes need not share a word with its
    // name) with the words of its body.
    let listing = fitted || dump.is_some();
    let best = if listing {
        best_files(&file_score, bodies::BODY_FILES)
    } else {
        Vec::new()
    };
    let span_rows = match (&opts.sources, listing) {
        (Some(_), true) => read_spans(store, graph, &best, opts.held.as_deref())?,
        _ => Vec::new(),
    };
    let mut spans: Vec<SpanRow> = Vec::new();
    for rows in &span_rows {
        spans.extend(decode_rows::<SpanRow>(rows)?);
    }
    // In key order, as one read of them all gives them.
    spans.sort_by(|a, b| a.id.cmp(&b.id));
    let bodies = match &opts.sources {
        Some(root) if !spans.is_empty() => body_scores(root, &spans, reading),
        _ => Bodies::default(),
    };
    let unlisted = unlisted_entities(&spans, &scored);
    scored.extend(unlisted.iter().map(|b| (b, 0.0)));
    let entity_features: Vec<EntityFeatures> = scored
        .iter()
        .map(|(b, _)| features::of_entity(&found, reading, b, bodies.features(b)))
        .collect();
    if let Some(dump) = dump {
        dump.files = file_score
            .iter()
            .map(|(f, s)| FileRow {
                file: f.to_string(),
                role: role_of(f),
                score: *s,
                features: features.get(*f).cloned().unwrap_or_default(),
            })
            .collect();
        dump.files.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.file.cmp(&b.file))
        });
        dump.entities = scored
            .iter()
            .zip(&entity_features)
            .filter(|((b, _), _)| best.contains(&b.file.as_ref()))
            .map(|((b, _), x)| EntityRow {
                key: b.id.to_string(),
                file: b.file.to_string(),
                kind: b.kind.to_string(),
                features: x.clone(),
            })
            .collect();
    }

    let chosen = if fitted {
        in_fitted_order(&scored, &entity_features, &file_score, opts)
    } else {
        in_list_order(&scored, &file_score, opts)
    };
    let top_file = file_score.values().cloned().fold(0.0, f64::max);
    let fitted_parts = |f: &str| -> Vec<Contribution> {
        match (fitted, features.get(f)) {
            (true, Some(x)) if top_file > 0.0 => {
                Weights::FITTED.contributions(x, role_of(f), top_file)
            }
            _ => Vec::new(),
        }
    };
    let ranking = Ranking {
        reading,
        found: &found,
        parts: &parts,
        cochanged: &cochanged,
        prior: &prior,
        bodies: &bodies,
        explain: opts.explain,
        fitted,
        contributions: &fitted_parts,
    };
    hits_of(store, graph, chosen, &ranking)
}

/// What the word, graph and location signals found: the candidate
/// entities and each file's whole-source word score.
struct Found {
    cands: FxHashMap<String, Cand>,
    /// File → BM25 over its whole source.
    words: FxHashMap<String, f64>,
    /// File → BM25 over the messages of the commits that changed it.
    history: FxHashMap<String, f64>,
    /// The best entity word score (at least 1): the scale of the others.
    top_lexical: f64,
    located: locate::Located,
    /// Entities the query names as code.
    named: std::collections::BTreeSet<String>,
}

/// The candidates: entities by their own words, spread one hop along the
/// graph, and the entities at quoted lines.
fn find_candidates(
    store: &Store,
    graph: &str,
    reading: &Reading,
    held: Option<&HeldLists>,
) -> Result<Found, StoreError> {
    let terms = &reading.terms;
    let counts = store.read(queries::SEARCH_SIZE, Params::new().with("graph", graph))?;
    let size = decode_first::<SizeRow>(&counts)?;
    let (n_entities, n_files) = size
        .map(|c| (c.entities as f64, c.files as f64))
        .unwrap_or((0.0, 0.0));
    // The word signals read different lists: each is read while the
    // others are scored.
    let (entity_words, (words, history)) = rayon::join(
        || lexical::entity_scores(store, graph, terms, n_entities, held),
        || {
            rayon::join(
                || lexical::file_scores(store, graph, terms, n_files, held),
                || lexical::history_scores(store, graph, terms, n_files),
            )
        },
    );
    let words = words?;
    let history = history?;
    let mut cands: FxHashMap<String, Cand> = entity_words?
        .into_iter()
        .map(|(k, w)| {
            let c = Cand {
                lexical: w.score,
                terms: w.terms,
                ..Cand::default()
            };
            (k, c)
        })
        .collect();
    let top_lexical = cands.values().map(|c| c.lexical).fold(1.0, f64::max);
    // No entity's own text may hold the query's words while some file's
    // source does: the file-level words below still find those files.
    let mut named = std::collections::BTreeSet::new();
    if !cands.is_empty() {
        named = graph::named_entities(&reading.identifiers, &cands);
        graph::spread(store, graph, &mut cands, &named)?;
    }
    // The entity at a quoted line is where the report says it failed: it
    // ranks by that, after the spread (what it touches is found by words
    // and names, not by where a backtrace passed).
    let located = locate::locate(store, graph, &reading.locations, held)?;
    for (id, w, quoted) in &located.entities {
        let c = cands.entry(id.clone()).or_default();
        c.lexical += LOCATED_ENTITY * top_lexical * w;
        c.location.get_or_insert_with(|| quoted.clone());
    }
    Ok(Found {
        cands,
        words,
        history,
        top_lexical,
        located,
        named,
    })
}

/// The [`CANDIDATES`] best candidates by words and graph, best first.
fn strongest(cands: &FxHashMap<String, Cand>) -> Vec<(&String, f64)> {
    let mut ranked: Vec<(&String, f64)> = cands
        .iter()
        .map(|(k, c)| (k, c.lexical + c.spread))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    ranked.truncate(CANDIDATES);
    ranked
}

/// The `entity_brief` rows (kind, file, test flag) of the ranked entities.
fn read_briefs(
    store: &Store,
    graph: &str,
    ranked: &[(&String, f64)],
) -> Result<cozo::NamedRows, StoreError> {
    let keys: Vec<&str> = ranked.iter().map(|(k, _)| k.as_str()).collect();
    store.read(
        queries::ENTITY_BRIEF,
        Params::new()
            .with("graph", graph)
            .with("keys", str_list(keys)),
    )
}

/// Each ranked entity's score times the test prior of its file, best first.
fn with_prior<'b, 'r>(
    ranked: &[(&String, f64)],
    briefs: &'b [EntityBrief<'r>],
    prior: &Prior,
) -> Vec<(&'b EntityBrief<'r>, f64)> {
    let info: FxHashMap<&str, &EntityBrief> = briefs.iter().map(|r| (r.id.as_ref(), r)).collect();
    let mut scored: Vec<(&EntityBrief, f64)> = ranked
        .iter()
        .filter_map(|(k, s)| {
            let r = info.get(k.as_str())?;
            Some((*r, s * prior.factor(&r.file, r.is_test)))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    scored
}

/// Each file's score from its entities — the best plus a share of the
/// next ones, plus its path's match — and its parts for `--explain`.
fn files_of<'b>(
    scored: &[(&'b EntityBrief, f64)],
    cands: &FxHashMap<String, Cand>,
) -> (FxHashMap<&'b str, f64>, FxHashMap<String, FileParts>) {
    let mut per_file: FxHashMap<&str, Vec<f64>> = FxHashMap::default();
    let mut parts: FxHashMap<String, FileParts> = FxHashMap::default();
    for &(r, s) in scored {
        per_file.entry(r.file.as_ref()).or_default().push(s);
        let p = parts.entry(r.file.to_string()).or_insert(FileParts {
            is_test: true,
            ..FileParts::default()
        });
        p.is_test &= r.is_test;
    }
    // A file's module entity holds its path: a query naming a component
    // names its files.
    let mut path_score: FxHashMap<&str, f64> = FxHashMap::default();
    for &(r, _) in scored {
        if r.kind == "module" {
            let l = cands.get(r.id.as_ref()).map_or(0.0, |c| c.lexical);
            let e = path_score.entry(r.file.as_ref()).or_insert(0.0);
            *e = e.max(l);
        }
    }
    let file_score = per_file
        .iter()
        .map(|(f, ss)| {
            let rest: f64 = ss.iter().skip(1).take(FILE_DEPTH).sum();
            let p = path_score.get(f).copied().unwrap_or(0.0);
            (*f, ss[0] + FILE_REST * rest + PATH * p)
        })
        .collect();
    (file_score, parts)
}

/// The files whose source matches well enough to rank among the first
/// [`WORD_FILES`] files though none of their entities is a candidate, the
/// best [`HISTORY_TEXT_FILES`] by their history's words alone, and the
/// files a location names, best first.
fn files_by_words_alone<'f>(
    found: &'f Found,
    file_score: &FxHashMap<&str, f64>,
) -> Vec<(&'f str, f64)> {
    let words = &found.words;
    let top_file = file_score.values().cloned().fold(0.0, f64::max).max(1e-9);
    let top_words = words.values().cloned().fold(0.0, f64::max).max(1e-9);
    let mut mixed: Vec<f64> = file_score
        .iter()
        .map(|(f, s)| {
            let w = words.get(*f).copied().unwrap_or(0.0);
            (1.0 - FILE_WORDS) * s / top_file + FILE_WORDS * w / top_words
        })
        .collect();
    mixed.sort_by(|a, b| b.total_cmp(a));
    let bar = mixed.get(WORD_FILES - 1).copied().unwrap_or(0.0);
    let mut more: Vec<(&str, f64)> = words
        .iter()
        .filter(|(f, w)| !file_score.contains_key(f.as_str()) && FILE_WORDS * *w / top_words > bar)
        .map(|(f, s)| (f.as_str(), *s))
        .collect();
    more.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    more.truncate(WORD_FILES);
    let mut by_history: Vec<(&str, f64)> = found
        .history
        .iter()
        .filter(|(f, _)| !file_score.contains_key(f.as_str()))
        .map(|(f, s)| (f.as_str(), *s))
        .collect();
    by_history.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    for (f, _) in by_history.into_iter().take(HISTORY_TEXT_FILES) {
        if !more.iter().any(|(m, _)| *m == f) {
            more.push((f, 0.0));
        }
    }
    for f in found.located.files.keys() {
        if !file_score.contains_key(f.as_str()) && !more.iter().any(|(m, _)| m == f) {
            more.push((f.as_str(), 0.0));
        }
    }
    more
}

/// The module rows of `files` (none read when there are none).
fn read_file_modules(
    store: &Store,
    graph: &str,
    files: &[(&str, f64)],
) -> Result<Option<cozo::NamedRows>, StoreError> {
    if files.is_empty() {
        return Ok(None);
    }
    let rows = store.read(
        queries::SEARCH_FILE_MODULES,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(files.iter().map(|(f, _)| *f))),
    )?;
    Ok(Some(rows))
}

/// Each file's first module entity (by line, then key), as a brief, in
/// key order.
fn first_module_of_each_file<'r>(found: &[FileModuleRow<'r>]) -> Vec<EntityBrief<'r>> {
    let mut first: FxHashMap<&str, &FileModuleRow> = FxHashMap::default();
    for r in found {
        let e = first.entry(r.file.as_ref()).or_insert(r);
        if (r.start_line, r.id.as_ref()) < (e.start_line, e.id.as_ref()) {
            *e = r;
        }
    }
    let mut modules: Vec<EntityBrief> = first
        .into_values()
        .map(|r| EntityBrief {
            id: r.id.clone(),
            kind: r.kind.clone(),
            file: r.file.clone(),
            is_test: r.is_test,
            fan_in: r.fan_in,
            _row: std::marker::PhantomData,
        })
        .collect();
    modules.sort_by(|a, b| a.id.cmp(&b.id));
    modules
}

/// The `n` best files by score (ties by path).
fn best_files<'f>(file_score: &FxHashMap<&'f str, f64>, n: usize) -> Vec<&'f str> {
    let mut files: Vec<(&str, f64)> = file_score.iter().map(|(f, s)| (*f, *s)).collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    files.into_iter().take(n).map(|(f, _)| f).collect()
}

/// Every entity of `files` with its lines: a server's held, else read.
fn read_spans(
    store: &Store,
    graph: &str,
    files: &[&str],
    held: Option<&HeldLists>,
) -> Result<Vec<Arc<cozo::NamedRows>>, StoreError> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let read = |files: &[&str]| {
        store.read(
            queries::SEARCH_FILE_SPANS,
            Params::new()
                .with("graph", graph)
                .with("files", str_list(files.iter().copied())),
        )
    };
    match held {
        Some(held) => held.spans(store, graph, files, |files| {
            Ok(rows_by_file(read(files)?, files))
        }),
        None => Ok(vec![Arc::new(read(files)?)]),
    }
}

/// The rows of `queries/search_file_spans.cozo` apart by file, each of
/// `files` with its own (none for a file without entities).
fn rows_by_file(rows: cozo::NamedRows, files: &[&str]) -> Vec<(String, cozo::NamedRows)> {
    let column = rows.headers.iter().position(|h| h == "file");
    let mut by_file: std::collections::BTreeMap<String, Vec<Vec<cozo::DataValue>>> =
        files.iter().map(|f| (f.to_string(), Vec::new())).collect();
    for row in rows.rows {
        let file = column.and_then(|c| row.get(c)).and_then(|v| v.get_str());
        if let Some(list) = file.and_then(|f| by_file.get_mut(f)) {
            list.push(row);
        }
    }
    by_file
        .into_iter()
        .map(|(file, rows_of)| (file, cozo::NamedRows::new(rows.headers.clone(), rows_of)))
        .collect()
}

/// The body scores of the read entities, the best of them (the scale of
/// [`EntityFeatures::body`]) and of each file's, and their lengths.
#[derive(Default)]
struct Bodies {
    of: FxHashMap<String, bodies::BodyWords>,
    top: f64,
    file_top: FxHashMap<String, f64>,
    lines: FxHashMap<String, i64>,
}

impl Bodies {
    /// An entity's body score divided by the best.
    fn share(&self, id: &str) -> f64 {
        match self.of.get(id) {
            Some(b) if self.top > 0.0 => b.score / self.top,
            _ => 0.0,
        }
    }

    fn features(&self, b: &EntityBrief) -> BodyFeatures {
        let id = b.id.as_ref();
        let lines = self
            .lines
            .get(id)
            .map_or(0.0, |&n| (1.0 + n as f64).ln() / 5.0);
        let Some(body) = self.of.get(id) else {
            return BodyFeatures {
                lines,
                ..BodyFeatures::default()
            };
        };
        let in_file = self.file_top.get(b.file.as_ref()).copied().unwrap_or(0.0);
        BodyFeatures {
            body: self.share(id),
            body_in_file: if in_file > 0.0 {
                body.score / in_file
            } else {
                0.0
            },
            body_coverage: body.coverage,
            lines,
        }
    }
}

fn body_scores(root: &std::path::Path, spans: &[SpanRow], reading: &Reading) -> Bodies {
    let spans: Vec<bodies::Span> = spans
        .iter()
        .map(|s| bodies::Span {
            id: s.id.as_ref(),
            file: s.file.as_ref(),
            start_line: s.start_line,
            end_line: s.end_line,
        })
        .collect();
    let read = bodies::scores(root, &spans, &reading.terms);
    let of = read.words;
    let top = of.values().map(|b| b.score).fold(0.0, f64::max);
    let mut file_top: FxHashMap<String, f64> = FxHashMap::default();
    let lines = read
        .own_lines
        .into_iter()
        .map(|(id, n)| (id.to_string(), n))
        .collect();
    for s in &spans {
        if let Some(b) = of.get(s.id) {
            let e = file_top.entry(s.file.to_string()).or_insert(0.0);
            *e = e.max(b.score);
        }
    }
    Bodies {
        of,
        top,
        file_top,
        lines,
    }
}

/// The read entities that no other signal made a candidate, as briefs.
fn unlisted_entities<'r>(
    spans: &[SpanRow<'r>],
    scored: &[(&EntityBrief, f64)],
) -> Vec<EntityBrief<'r>> {
    let listed: FxHashSet<&str> = scored.iter().map(|(b, _)| b.id.as_ref()).collect();
    let mut out: Vec<EntityBrief> = spans
        .iter()
        .filter(|s| !listed.contains(s.id.as_ref()))
        .map(|s| EntityBrief {
            id: s.id.clone(),
            kind: s.kind.clone(),
            file: s.file.clone(),
            is_test: s.is_test,
            fan_in: s.fan_in,
            _row: std::marker::PhantomData,
        })
        .collect();
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// A quoted location's file gains [`LOCATION`]; then every file's score
/// takes the test prior.
fn add_locations_and_prior(
    located: &locate::Located,
    prior: &Prior,
    file_score: &mut FxHashMap<&str, f64>,
    parts: &mut FxHashMap<String, FileParts>,
) {
    for (f, s) in file_score.iter_mut() {
        let p = parts.entry(f.to_string()).or_default();
        if let Some((w, _)) = located.files.get(*f) {
            p.location = LOCATION * w;
            *s += p.location;
        }
        *s *= prior.factor(f, p.is_test);
    }
}

/// Entities in the order of their files, each file's first (best) entity
/// at its file's score, so the files come in the order of their scores;
/// a file's further entities follow at their share of its best entity's
/// score, [`ENTITY_MIX`] of the way, each one decaying a little more. Those
/// the options keep, up to the limit.
fn in_list_order<'b, 'r>(
    scored: &[(&'b EntityBrief<'r>, f64)],
    file_score: &FxHashMap<&str, f64>,
    opts: &Options,
) -> Vec<(&'b EntityBrief<'r>, f64)> {
    let top_file = file_score.values().cloned().fold(0.0, f64::max).max(1e-9);
    // `scored` is best first: a file's first entity is its best.
    let mut seen: FxHashMap<&str, (i32, f64)> = FxHashMap::default();
    let order: Vec<(&EntityBrief, f64)> = scored
        .iter()
        .map(|(r, s)| {
            let (n, best) = seen.entry(r.file.as_ref()).or_insert((0, *s));
            let own = if *best > 0.0 { s / *best } else { 1.0 };
            let decay = SAME_FILE_DECAY.powi(*n);
            *n += 1;
            let f = file_score.get(r.file.as_ref()).copied().unwrap_or(0.0) / top_file;
            let share = if decay < 1.0 {
                (ENTITY_MIX * own + (1.0 - ENTITY_MIX)) * decay
            } else {
                1.0
            };
            (*r, f * share)
        })
        .collect();
    best_kept(order, opts)
}

/// Entities in the order of their files' scores, and within a file in the
/// order of [`Weights::score_entity`] (the functions a change is about
/// before the file's module or types, as fitted), each further entity of a
/// file decaying by [`Weights::same_file_decay`]: a file's first entity
/// stands at its file's score, so the files come in the order of their
/// scores. Those the options keep, up to the limit.
fn in_fitted_order<'b, 'r>(
    scored: &[(&'b EntityBrief<'r>, f64)],
    features: &[EntityFeatures],
    file_score: &FxHashMap<&str, f64>,
    opts: &Options,
) -> Vec<(&'b EntityBrief<'r>, f64)> {
    let w = &Weights::FITTED;
    let top_file = file_score.values().cloned().fold(0.0, f64::max).max(1e-9);
    let mut own: Vec<(&EntityBrief, f64)> = scored
        .iter()
        .zip(features)
        .map(|((b, _), x)| (*b, w.score_entity(x)))
        .collect();
    own.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    let mut seen: FxHashMap<&str, i32> = FxHashMap::default();
    let order: Vec<(&EntityBrief, f64)> = own
        .into_iter()
        .map(|(b, _)| {
            let n = seen.entry(b.file.as_ref()).or_insert(0);
            let decay = w.same_file_decay.powi(*n);
            *n += 1;
            let f = file_score.get(b.file.as_ref()).copied().unwrap_or(0.0) / top_file;
            (b, f * decay)
        })
        .collect();
    best_kept(order, opts)
}

/// The entities best first (ties by key), those the options keep, up to
/// the limit.
fn best_kept<'b, 'r>(
    mut order: Vec<(&'b EntityBrief<'r>, f64)>,
    opts: &Options,
) -> Vec<(&'b EntityBrief<'r>, f64)> {
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    order
        .into_iter()
        .filter(|(r, _)| keep(r, opts))
        .take(if opts.limit == 0 {
            usize::MAX
        } else {
            opts.limit
        })
        .collect()
}

/// What a hit's reasons are drawn from.
struct Ranking<'a> {
    reading: &'a Reading,
    found: &'a Found,
    parts: &'a FxHashMap<String, FileParts>,
    cochanged: &'a FxHashMap<String, (String, f64)>,
    prior: &'a Prior,
    bodies: &'a Bodies,
    explain: bool,
    /// Files are scored by the fitted weights.
    fitted: bool,
    /// A file's strongest fitted signals (none under the hand rules).
    contributions: &'a dyn Fn(&str) -> Vec<Contribution>,
}

/// The chosen entities as hits: what each shows (one read for all) and
/// why it ranked.
fn hits_of(
    store: &Store,
    graph: &str,
    chosen: Vec<(&EntityBrief, f64)>,
    ranking: &Ranking,
) -> Result<Vec<Hit>, StoreError> {
    let keys: Vec<&str> = chosen.iter().map(|(r, _)| r.id.as_ref()).collect();
    let rows = store.read(
        queries::SEARCH_ENTITIES,
        Params::new()
            .with("graph", graph)
            .with("keys", str_list(keys)),
    )?;
    let shown = decode_rows::<HitRow>(&rows)?;
    let shown: FxHashMap<&str, &HitRow> = shown.iter().map(|r| (r.id.as_ref(), r)).collect();
    let mut hits = Vec::new();
    for (b, score) in chosen {
        let Some(r) = shown.get(b.id.as_ref()) else {
            continue;
        };
        hits.push(Hit {
            key: r.id.to_string(),
            kind: r.kind.to_string(),
            name: r.name.to_string(),
            file: r.file.to_string(),
            start_line: r.start_line,
            end_line: r.end_line,
            signature: r.head.to_string(),
            score: round(score),
            why: ranking.why(b, r),
        });
    }
    Ok(hits)
}

impl Ranking<'_> {
    /// Why `b` (shown as `r`) ranked: its terms, path, history, location
    /// and, with `--explain`, its signals.
    fn why(&self, b: &EntityBrief, r: &HitRow) -> Why {
        let no_cand = Cand::default();
        let found = self.found;
        let c = found.cands.get(b.id.as_ref()).unwrap_or(&no_cand);
        let fp = self.parts.get(r.file.as_ref()).copied().unwrap_or_default();
        let top_lexical = found.top_lexical;
        let signals = self.explain.then(|| Signals {
            words: round(c.lexical / top_lexical),
            graph: round(c.spread / top_lexical),
            body: round(self.bodies.share(b.id.as_ref())),
            file_entities: round(fp.entities),
            file_text: round(fp.text),
            history: round(fp.history),
            location: round(fp.location),
            test_prior: match self.fitted {
                true => {
                    Weights::FITTED.role_factor(self.prior.role(&b.file, b.is_test || fp.is_test))
                }
                false => self.prior.factor(&b.file, b.is_test || fp.is_test),
            },
        });
        let mut terms: Vec<usize> = c.terms.clone();
        if let Some(body) = self.bodies.of.get(b.id.as_ref()) {
            terms.extend(body.terms.iter().filter(|t| !c.terms.contains(t)));
        }
        Why {
            terms: terms
                .iter()
                .map(|&i| self.reading.terms[i].term.surface.clone())
                .collect(),
            path: c.path.clone(),
            cochanged_with: self
                .cochanged
                .get(r.file.as_ref())
                .map(|(f, _)| f.to_string()),
            location: c.location.clone().or_else(|| {
                found
                    .located
                    .files
                    .get(r.file.as_ref())
                    .map(|(_, q)| q.clone())
            }),
            signals,
            file_signals: (self.contributions)(r.file.as_ref()),
        }
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Mix each file's word score into its score, both divided by their best
/// file's: a file ranks by what its entities say and what its whole source
/// says alike.
fn fuse(
    words: &FxHashMap<String, f64>,
    file_score: &mut FxHashMap<&str, f64>,
    parts: &mut FxHashMap<String, FileParts>,
) {
    let top_words = words.values().cloned().fold(0.0, f64::max);
    let top_file = file_score.values().cloned().fold(0.0, f64::max);
    for (f, s) in file_score.iter_mut() {
        let w = words.get(*f).copied().unwrap_or(0.0);
        let own = if top_file > 0.0 { *s / top_file } else { 0.0 };
        let text = if top_words > 0.0 { w / top_words } else { 0.0 };
        let p = parts.entry(f.to_string()).or_default();
        if top_words <= 0.0 {
            p.entities = own;
            p.history = if top_file > 0.0 {
                p.history / top_file
            } else {
                0.0
            };
            *s = own;
            continue;
        }
        p.history = if top_file > 0.0 {
            (1.0 - FILE_WORDS) * p.history / top_file
        } else {
            0.0
        };
        p.entities = (1.0 - FILE_WORDS) * own - p.history;
        p.text = FILE_WORDS * text;
        *s = p.entities + p.text;
    }
}
/// How many hits of a query are offered as a context's base entities
/// (the fitter keeps as many as fit the budget's share for them, best
/// first).
pub const QUERY_BASE: usize = 10;

/// The base entities of a context asked for by free text: the best
/// [`QUERY_BASE`] hits, best first.
/// `sources` is the repository the index holds (see [`Options::sources`]),
/// `held` the lists a server holds (see [`Options::held`]).
pub fn query_base(
    store: &Store,
    graph: &str,
    query: &str,
    sources: Option<&std::path::Path>,
    held: Option<Arc<HeldLists>>,
) -> Result<Vec<String>, SearchError> {
    let opts = Options {
        limit: QUERY_BASE,
        sources: sources.map(std::path::Path::to_path_buf),
        held,
        ..Options::default()
    };
    Ok(search(store, graph, query, &opts)?
        .into_iter()
        .map(|h| h.key)
        .collect())
}

fn keep(r: &EntityBrief, opts: &Options) -> bool {
    if let Some(kind) = &opts.kind {
        if r.kind != kind.as_str() {
            return false;
        }
    }
    if let Some(file) = &opts.file {
        let file = file.trim_end_matches('/');
        let f: &str = r.file.as_ref();
        if f != file && !f.starts_with(&format!("{file}/")) {
            return false;
        }
    }
    true
}

/// The languages, installed before any test of the crate runs.
#[cfg(test)]
#[ctor::ctor]
fn install_languages() {
    index::languages::install(vec![&graphctx_rust::Rust, &graphctx_python::Python]);
}
