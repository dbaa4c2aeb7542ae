//! Ranked text search: the entities a free-text query (a bug report, a
//! commit message, a question) is most likely about.
//!
//! Four signals, each from the store:
//!
//! 1. **Words.** BM25 over the text index (`code_word`, schemas 12 and
//!    14: the words of every entity's name, owner, doc comment and
//!    signature head, camelCase split, stemmed; one posting list per
//!    word). The lists are read directly, so a hit's score sums over the
//!    query's words (CozoDB's own `~` operator keeps the best word of an
//!    OR instead) and the query never passes through a query language: it
//!    is split into words here and bound as `$words`.
//! 2. **Graph.** The lexical hits are seeds whose scores spread one hop
//!    along the edges around them (both directions, weighted by the
//!    relationship as the context's relevance weighs it), so a function
//!    whose own words say little is found through the types and functions
//!    its neighbours name.
//! 3. **Files and history.** Entities are aggregated to files (the best
//!    entity plus a share of the rest, so a file where many entities match
//!    outranks one lucky name), and files that changed together with the
//!    best files in the repository's history (`code_cochange`, as a
//!    context's relevance uses it) gain part of their score.
//! 4. **Whole files.** BM25 over each file's whole source (schema 16:
//!    every identifier, comment and string word, so the words a task uses
//!    for a component that only its comments and bodies say count), mixed
//!    half and half with the file's score of step 3. Files without a
//!    candidate entity whose source alone ranks them among the first
//!    `WORD_FILES` files are listed by their module entity.
//!
//! The list is ordered by each entity's own score times its file's, with
//! the entities after the first of a file decaying, so the first hits name
//! different places. All weights are fixed constants, the same for every
//! repository.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use rustc_hash::FxHashMap;

use super::relevance::rel_weight;
use super::select::EntityBrief;
use crate::store::rows::{decode_first, decode_rows, query_rows, Bytes, RowError, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};
use crate::support::packed::unpack_text;
use crate::support::words::{decode_postings, has_words, query_terms, Posting, Term};

query_rows! {
    /// `queries/search_postings.cozo`.
    PostingsRow = "search_postings" {
        key { word: Str<'a>, block: i64 }
        value { postings: Bytes<'a> }
    }
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
    /// `queries/search_neighbours.cozo`.
    NeighbourRow = "search_neighbours" {
        key { key: Str<'a>, rel: Str<'a>, other: Str<'a>, dir: Str<'a> }
    }
    /// `queries/search_cochange.cozo`.
    CochangeRow = "search_cochange" {
        key { file: Str<'a>, other: Str<'a> }
        value { weight: f64 }
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
    /// `queries/search_size.cozo`.
    SizeRow = "search_size" {
        key { graph: Str<'a> }
        value { entities: i64, files: i64 }
    }
}

/// BM25 parameters (the usual ones).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// How many lexical hits seed the graph spread.
const SEEDS: usize = 60;
/// Share of a seed's score a neighbour receives (times the edge weight).
const SPREAD: f64 = 0.35;
/// Entities considered for the list after the spread.
const CANDIDATES: usize = 400;
/// Test code is rarely where a change belongs; it still ranks, lower.
const TEST_FACTOR: f64 = 0.5;
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

/// What a search looks at and returns.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub limit: usize,
    /// Only entities of this kind.
    pub kind: Option<String>,
    /// Only entities in this file, or under this directory.
    pub file: Option<String>,
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
struct Cand {
    lexical: f64,
    spread: f64,
    terms: Vec<usize>,
    path: Option<[String; 3]>,
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
    let terms = query_terms(query);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let counts = store.read(queries::SEARCH_SIZE, Params::new().with("graph", graph))?;
    let size = decode_first::<SizeRow>(&counts).map_err(StoreError::from)?;
    let (n_entities, n_files) = size
        .map(|c| (c.entities as f64, c.files as f64))
        .unwrap_or((0.0, 0.0));
    let mut cands = lexical(store, graph, &terms, n_entities)?;
    // No entity's own text may hold the query's words while some file's
    // source does: the file-level words below still find those files.
    if !cands.is_empty() {
        let named = named_entities(query, &cands);
        spread(store, graph, &mut cands, &named)?;
    }

    // The strongest candidates, with what ranking needs of them (kind,
    // file, test flag: one `code_usage` row each).
    let mut ranked: Vec<(&String, f64)> = cands
        .iter()
        .map(|(k, c)| (k, c.lexical + c.spread))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    ranked.truncate(CANDIDATES);
    let keys: Vec<&str> = ranked.iter().map(|(k, _)| k.as_str()).collect();
    let rows = store.read(
        queries::ENTITY_BRIEF,
        Params::new()
            .with("graph", graph)
            .with("keys", str_list(keys)),
    )?;
    let briefs = decode_rows::<EntityBrief>(&rows).map_err(StoreError::from)?;
    let info: FxHashMap<&str, &EntityBrief> = briefs.iter().map(|r| (r.id.as_ref(), r)).collect();
    let words = file_words(store, graph, &terms, n_files)?;
    let mut scored: Vec<(&EntityBrief, f64)> = ranked
        .iter()
        .filter_map(|(k, s)| {
            let r = info.get(k.as_str())?;
            Some((*r, if r.is_test { s * TEST_FACTOR } else { *s }))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));

    // Files: the best entity plus a share of the next ones.
    let mut per_file: FxHashMap<&str, Vec<f64>> = FxHashMap::default();
    for &(r, s) in &scored {
        per_file.entry(r.file.as_ref()).or_default().push(s);
    }
    // A file's module entity holds its path: a query naming a component
    // names its files.
    let mut path_score: FxHashMap<&str, f64> = FxHashMap::default();
    for &(r, _) in &scored {
        if r.kind == "module" {
            let l = cands.get(r.id.as_ref()).map_or(0.0, |c| c.lexical);
            let e = path_score.entry(r.file.as_ref()).or_insert(0.0);
            *e = e.max(l);
        }
    }
    let mut file_score: FxHashMap<&str, f64> = per_file
        .iter()
        .map(|(f, ss)| {
            let rest: f64 = ss.iter().skip(1).take(FILE_DEPTH).sum();
            let p = path_score.get(f).copied().unwrap_or(0.0);
            (*f, ss[0] + FILE_REST * rest + PATH * p)
        })
        .collect();
    // The files whose source matches well enough to rank among the first
    // `WORD_FILES` files, though none of their entities is a candidate,
    // are listed by their own module entity (the first in the file).
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
    let module_rows = if more.is_empty() {
        None
    } else {
        Some(
            store.read(
                queries::SEARCH_FILE_MODULES,
                Params::new()
                    .with("graph", graph)
                    .with("files", str_list(more.iter().map(|(f, _)| *f))),
            )?,
        )
    };
    let found = match &module_rows {
        Some(rows) => decode_rows::<FileModuleRow>(rows).map_err(StoreError::from)?,
        None => Vec::new(),
    };
    let mut first: FxHashMap<&str, &FileModuleRow> = FxHashMap::default();
    for r in &found {
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
    for b in &modules {
        scored.push((b, 0.0));
        file_score.insert(b.file.as_ref(), 0.0);
    }

    let cochanged = history(store, graph, &mut file_score)?;
    fuse(&words, &mut file_score);

    // Entities in order of their own score times their file's, each further
    // entity of a file a little less.
    let top_file = file_score.values().cloned().fold(0.0, f64::max).max(1e-9);
    let top_entity = scored.first().map(|x| x.1).unwrap_or(0.0).max(1e-9);
    let mut seen: FxHashMap<&str, i32> = FxHashMap::default();
    let mut order: Vec<(&EntityBrief, f64)> = scored
        .iter()
        .map(|(r, s)| {
            let n = seen.entry(r.file.as_ref()).or_insert(0);
            let decay = SAME_FILE_DECAY.powi(*n);
            *n += 1;
            let f = file_score.get(r.file.as_ref()).copied().unwrap_or(0.0) / top_file;
            (*r, (0.25 * s / top_entity + 0.75 * f) * decay)
        })
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.id.cmp(&b.0.id)));
    let chosen: Vec<(&EntityBrief, f64)> = order
        .into_iter()
        .filter(|(r, _)| keep(r, opts))
        .take(if opts.limit == 0 {
            usize::MAX
        } else {
            opts.limit
        })
        .collect();

    // What a hit shows, for the hits only.
    let keys: Vec<&str> = chosen.iter().map(|(r, _)| r.id.as_ref()).collect();
    let rows = store.read(
        queries::SEARCH_ENTITIES,
        Params::new()
            .with("graph", graph)
            .with("keys", str_list(keys)),
    )?;
    let shown = decode_rows::<HitRow>(&rows).map_err(StoreError::from)?;
    let shown: FxHashMap<&str, &HitRow> = shown.iter().map(|r| (r.id.as_ref(), r)).collect();
    let mut hits = Vec::new();
    for (b, score) in chosen {
        let Some(r) = shown.get(b.id.as_ref()) else {
            continue;
        };
        let no_cand = Cand::default();
        let c = cands.get(b.id.as_ref()).unwrap_or(&no_cand);
        hits.push(Hit {
            key: r.id.to_string(),
            kind: r.kind.to_string(),
            name: r.name.to_string(),
            file: r.file.to_string(),
            start_line: r.start_line,
            end_line: r.end_line,
            signature: r.head.to_string(),
            score: (score * 1000.0).round() / 1000.0,
            why: Why {
                terms: c.terms.iter().map(|&i| terms[i].surface.clone()).collect(),
                path: c.path.clone(),
                cochanged_with: cochanged.get(r.file.as_ref()).map(|f| f.to_string()),
            },
        });
    }
    Ok(hits)
}

/// How many hits of a query become a context's base entities.
pub const QUERY_BASE: usize = 5;

/// The base entities of a context asked for by free text: the best
/// [`QUERY_BASE`] hits.
pub fn query_base(store: &Store, graph: &str, query: &str) -> Result<Vec<String>, SearchError> {
    let opts = Options {
        limit: QUERY_BASE,
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

/// BM25 of every entity whose text holds a query word.
fn lexical(
    store: &Store,
    graph: &str,
    terms: &[Term],
    entities: f64,
) -> Result<FxHashMap<String, Cand>, StoreError> {
    let words: Vec<&str> = terms.iter().map(|t| t.stem.as_str()).collect();
    let rows = store.read(
        queries::SEARCH_POSTINGS,
        Params::new()
            .with("graph", graph)
            .with("words", str_list(words)),
    )?;
    let rows = decode_rows::<PostingsRow>(&rows)?;
    let lists = unpacked(&rows, "code_word")?;
    let postings = whole_lists(&lists, "code_word")?;
    let mut lens: FxHashMap<&str, i64> = FxHashMap::default();
    for p in postings.iter().flat_map(|(_, ps)| ps) {
        lens.insert(p.id, p.len);
    }
    if lens.is_empty() {
        return Ok(FxHashMap::default());
    }
    let n = entities.max(lens.len() as f64);
    // The mean length of the texts that matched stands in for the mean of
    // all (reading every length would cost a scan per query).
    let avg = (lens.values().sum::<i64>() as f64 / lens.len() as f64).max(1.0);
    let index: FxHashMap<&str, usize> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.stem.as_str(), i))
        .collect();
    let mut found: FxHashMap<&str, Cand> = FxHashMap::default();
    found.reserve(lens.len());
    for (word, entries) in &postings {
        let d = entries.len() as f64;
        let idf = (1.0 + (n - d + 0.5) / (d + 0.5)).ln();
        let term = index.get(word).copied();
        for p in entries {
            let tf = p.tf as f64;
            let norm = K1 * (1.0 - B + B * p.len as f64 / avg);
            let c = found.entry(p.id).or_default();
            c.lexical += idf * tf * (K1 + 1.0) / (tf + norm);
            if let Some(i) = term {
                c.terms.push(i);
            }
        }
    }
    Ok(found
        .into_iter()
        .map(|(id, mut c)| {
            c.terms.sort_unstable();
            (id.to_string(), c)
        })
        .collect())
}

/// A stored block of a word's list: the word, the block, its text.
type Block<'r> = (&'r str, i64, Cow<'r, str>);

/// The blocks of `rows` as text (schema 19 stores them compressed).
fn unpacked<'r>(rows: &'r [PostingsRow<'r>], relation: &str) -> Result<Vec<Block<'r>>, StoreError> {
    rows.iter()
        .map(|r| match unpack_text(&r.postings) {
            Some(list) => Ok((r.word.as_ref(), r.block, list)),
            None => Err(malformed(relation, &r.word)),
        })
        .collect()
}

fn malformed(relation: &str, word: &str) -> StoreError {
    RowError {
        relation: relation.into(),
        column: "postings".into(),
        expected: "a posting list".into(),
        found: format!("a malformed list for '{word}'"),
    }
    .into()
}

/// Each word's whole posting list, in word order (so that a score sums
/// its words in one order), from the blocks it is stored in (schema 17).
fn whole_lists<'r>(
    blocks: &'r [Block<'r>],
    relation: &str,
) -> Result<Vec<(&'r str, Vec<Posting<'r>>)>, StoreError> {
    let mut by_word: BTreeMap<&str, Vec<(i64, &str)>> = BTreeMap::new();
    for (word, block, list) in blocks {
        by_word
            .entry(word)
            .or_default()
            .push((*block, list.as_ref()));
    }
    let mut out = Vec::with_capacity(by_word.len());
    for (word, mut blocks) in by_word {
        blocks.sort_unstable_by_key(|(block, _)| *block);
        let mut entries = Vec::new();
        for (_, list) in blocks {
            entries.extend(decode_postings(list).ok_or_else(|| malformed(relation, word))?);
        }
        out.push((word, entries));
    }
    Ok(out)
}

/// Each file's word score: the BM25 of the query over every file's whole
/// source (`code_file_word`, schema 16: identifiers, comments, strings —
/// the words a commit message or bug report uses for what a file does,
/// which its entities' names and doc summaries may not hold). Lengths are
/// not normalised (`b = 0`): the stored lists hold no file length, so an
/// edit rewrites only the lists of the words whose count it changed.
fn file_words(
    store: &Store,
    graph: &str,
    terms: &[Term],
    files: f64,
) -> Result<FxHashMap<String, f64>, StoreError> {
    let words: Vec<&str> = terms.iter().map(|t| t.stem.as_str()).collect();
    let rows = store.read(
        queries::SEARCH_FILE_POSTINGS,
        Params::new()
            .with("graph", graph)
            .with("words", str_list(words)),
    )?;
    let rows = decode_rows::<PostingsRow>(&rows)?;
    let lists = unpacked(&rows, "code_file_word")?;
    let mut score: FxHashMap<&str, f64> = FxHashMap::default();
    for (_, entries) in whole_lists(&lists, "code_file_word")? {
        let d = entries.len() as f64;
        let n = files.max(d);
        let idf = (1.0 + (n - d + 0.5) / (d + 0.5)).ln();
        for p in entries {
            let tf = p.tf as f64;
            *score.entry(p.id).or_default() += idf * tf * (K1 + 1.0) / (tf + K1);
        }
    }
    Ok(score.into_iter().map(|(f, s)| (f.to_string(), s)).collect())
}

/// Mix each file's word score into its score, both divided by their best
/// file's: a file ranks by what its entities say and what its whole source
/// says alike.
fn fuse(words: &FxHashMap<String, f64>, file_score: &mut FxHashMap<&str, f64>) {
    let top_words = words.values().cloned().fold(0.0, f64::max);
    let top_file = file_score.values().cloned().fold(0.0, f64::max);
    if top_words <= 0.0 {
        return;
    }
    for (f, s) in file_score.iter_mut() {
        let w = words.get(*f).copied().unwrap_or(0.0);
        let own = if top_file > 0.0 { *s / top_file } else { 0.0 };
        *s = (1.0 - FILE_WORDS) * own + FILE_WORDS * w / top_words;
    }
}

/// The identifiers a query names as code (`generics_with_de_lifetime`,
/// `Parameters::generics`, `deserializeAny`): tokens with `_`, `::` or an
/// inner capital, lowercased.
fn query_identifiers(query: &str) -> Vec<String> {
    query
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .map(|t| t.trim_matches(|c| c == ':' || c == '_'))
        .filter(|t| {
            t.contains('_') || t.contains("::") || t.chars().skip(1).any(|c| c.is_uppercase())
        })
        .map(str::to_lowercase)
        .collect()
}

/// Lexical hits whose key ends with an identifier the query names: the
/// entity the query is about by name, whose users (callers, implementors)
/// a change to it touches too.
fn named_entities(query: &str, cands: &FxHashMap<String, Cand>) -> BTreeSet<String> {
    let idents = query_identifiers(query);
    if idents.is_empty() {
        return BTreeSet::new();
    }
    cands
        .keys()
        .filter(|k| {
            let k = k.to_lowercase();
            idents.iter().any(|i| {
                k.strip_suffix(i.as_str())
                    .is_some_and(|head| head.ends_with('-') || head.ends_with("::"))
            })
        })
        .cloned()
        .collect()
}

/// One hop of the best lexical hits' scores along their edges.
fn spread(
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
/// raised file, the file it changed with most.
fn history(
    store: &Store,
    graph: &str,
    file_score: &mut FxHashMap<&str, f64>,
) -> Result<FxHashMap<String, String>, StoreError> {
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
                why.insert(file, with);
            }
        }
    }
    Ok(why)
}
