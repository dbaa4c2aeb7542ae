//! The word signals: BM25 of the query's weighted terms over each
//! entity's text (`code_word`) and over each file's whole source
//! (`code_file_word`). The posting lists are read directly, so a score
//! sums over the query's terms (CozoDB's own `~` operator keeps the best
//! word of an OR instead) and the query never passes through a query
//! language: its words are bound as `$words`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::held_lists::{self, HeldLists, ListBlock, WordList};
use crate::query::{WeightedTerm, MAX_TERMS};
use crate::store::rows::{decode_rows, query_rows, Bytes, RowError, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};
use crate::support::packed::unpack_text;

query_rows! {
    /// `queries/search_file_sizes.cozo`.
    FileSizeRow = "search_file_sizes" {
        key { path: Str<'a> }
        value { bytes: i64 }
    }
    /// `queries/search_postings.cozo` and `queries/search_file_postings.cozo`.
    PostingsRow = "search_postings" {
        key { word: Str<'a>, block: i64 }
        value { postings: Bytes<'a> }
    }
}

/// BM25 parameters (the usual ones).
const K1: f64 = 1.2;
const B: f64 = 0.75;
/// How many of the best files by their words are scored with their
/// lengths ([`file_scores`]).
const SIZED_FILES: usize = 200;
/// A term in more than this share of the texts says nothing about where
/// a change belongs (`value`, `new`, `use` in a large tree): it is not read.
const MAX_DF_SHARE: f64 = 0.25;
/// The most entities a query's words keep, best first: ranking reads the
/// best few hundred of them after the graph spread, so a long report's
/// tens of thousands of weak matches on a large tree cost nothing after
/// the scoring.
const MAX_MATCHES: usize = 4_000;

/// One entity's word score, and which terms (indexes into the query's
/// terms) its text holds.
#[derive(Debug, Default, Clone)]
pub struct EntityWords {
    pub score: f64,
    pub terms: Vec<usize>,
}

/// The query terms an entity's text holds, a bit per term (indexes into
/// the query's terms, of which there are at most [`MAX_TERMS`]).
#[derive(Debug, Default, Clone, Copy)]
struct TermSet([u64; MAX_TERMS.div_ceil(64)]);

impl TermSet {
    fn insert(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    fn iter(self) -> impl Iterator<Item = usize> {
        (0..MAX_TERMS).filter(move |&i| self.0[i / 64] & (1 << (i % 64)) != 0)
    }
}

/// A matched entity while its words are scored: its text's length, and
/// (once a term that is read holds it) its score and terms.
struct Slot<'r> {
    id: &'r str,
    len: i64,
    score: f64,
    terms: TermSet,
    found: bool,
}

/// BM25 of every entity whose text holds a query term, each term's share
/// times its weight in the query.
///
/// An id's entry is stored in the same block of every word's list (the
/// block is a hash of the id), so each block is scored on its own, on
/// every core, with a slot map of a thirty-second of the matches: a long
/// report's words list hundreds of thousands of entries on a large tree,
/// and one map of them all spends its time waiting for memory.
pub fn entity_scores(
    store: &Store,
    graph: &str,
    terms: &[WeightedTerm],
    entities: f64,
    held: Option<&HeldLists>,
) -> Result<FxHashMap<String, EntityWords>, StoreError> {
    let lists = word_lists(store, &ENTITY_WORDS, graph, terms, held)?;
    let blocks = block_lists(&lists);
    let mut slotted: Vec<BlockSlots> = blocks.par_iter().map(BlockSlots::of).collect();
    let matched: usize = slotted.iter().map(|b| b.slots.len()).sum();
    if matched == 0 {
        return Ok(FxHashMap::default());
    }
    let n = entities.max(matched as f64);
    // The mean length of the texts that matched stands in for the mean of
    // all (reading every length would cost a scan per query).
    let lengths: i64 = slotted.iter().flat_map(|b| &b.slots).map(|s| s.len).sum();
    let avg = (lengths as f64 / matched as f64).max(1.0);
    let index = term_index(terms);
    let df = list_lengths(&blocks);
    // Each word's weighted idf, or `None` for a word not read.
    let idf_of = |word: &str| -> Option<(usize, f64)> {
        let d = df.get(word).copied().unwrap_or(0) as f64;
        if d > MAX_DF_SHARE * n && n > 100.0 {
            return None;
        }
        let &i = index.get(word)?;
        Some((i, (1.0 + (n - d + 0.5) / (d + 0.5)).ln() * terms[i].weight))
    };
    // Score and the set of terms held, per entity, summed in word order;
    // then each block's best (an entity's postings are all in one block,
    // so the best of the blocks' best are the best of all).
    let per_block: Vec<Vec<Scored>> = slotted
        .par_iter_mut()
        .zip(&blocks)
        .map(|(b, lists)| {
            for ((word, list), ids) in lists.iter().zip(&b.ids) {
                let Some((i, idf)) = idf_of(word) else {
                    continue;
                };
                for (p, &slot) in list.spans.iter().zip(ids) {
                    let tf = f64::from(p.tf);
                    let norm = K1 * (1.0 - B + B * f64::from(p.len) / avg);
                    let c = &mut b.slots[slot as usize];
                    c.score += idf * tf * (K1 + 1.0) / (tf + norm);
                    c.terms.insert(i);
                    c.found = true;
                }
            }
            let mut found: Vec<Scored> = b
                .slots
                .iter()
                .filter(|s| s.found)
                .map(|s| (s.id, (s.score, s.terms)))
                .collect();
            keep_best(&mut found);
            found
        })
        .collect();
    let mut best: Vec<Scored> = per_block.into_iter().flatten().collect();
    keep_best(&mut best);
    Ok(best
        .into_iter()
        .map(|(id, (score, held))| {
            let terms = held.iter().collect();
            (id.to_string(), EntityWords { score, terms })
        })
        .collect())
}

/// An entity's word score and the query terms its text holds.
type Scored<'r> = (&'r str, (f64, TermSet));

/// The best [`MAX_MATCHES`] (ties by key), in no order: what ranking reads
/// of them is their few hundred best, seeds of the spread among them.
fn keep_best(scored: &mut Vec<Scored>) {
    if scored.len() > MAX_MATCHES {
        scored.select_nth_unstable_by(MAX_MATCHES - 1, |a, b| {
            b.1 .0.total_cmp(&a.1 .0).then_with(|| a.0.cmp(b.0))
        });
        scored.truncate(MAX_MATCHES);
    }
}

/// One block's matched entities, a slot each, and for each of its word
/// lists the slot of every entry.
struct BlockSlots<'r> {
    slots: Vec<Slot<'r>>,
    ids: Vec<Vec<u32>>,
}

impl<'r> BlockSlots<'r> {
    fn of(lists: &BlockLists<'r>) -> Self {
        let total: usize = lists.iter().map(|(_, list)| list.spans.len()).sum();
        let mut slot_of: FxHashMap<&str, u32> =
            FxHashMap::with_capacity_and_hasher(total, Default::default());
        let mut slots: Vec<Slot> = Vec::with_capacity(total);
        let ids = lists
            .iter()
            .map(|(_, list)| {
                list.ids()
                    .zip(&list.spans)
                    .map(|(id, p)| {
                        let len = i64::from(p.len);
                        let next = slots.len() as u32;
                        let slot = *slot_of.entry(id).or_insert(next);
                        if slot == next {
                            slots.push(Slot {
                                id,
                                len,
                                score: 0.0,
                                terms: TermSet::default(),
                                found: false,
                            });
                        } else {
                            // As a map of lengths would: the last one read.
                            slots[slot as usize].len = len;
                        }
                        slot
                    })
                    .collect()
            })
            .collect();
        BlockSlots { slots, ids }
    }
}

/// Each file's word score: the BM25 of the query over every file's whole
/// source (`code_file_word`, schema 16: identifiers, comments, strings —
/// the words a bug report uses for what a file does, which its entities'
/// names and doc summaries may not hold). The best [`SIZED_FILES`] files
/// are scored again with their sizes in bytes as lengths
/// (`code_file.bytes`; the stored lists hold no length, so an edit
/// rewrites only the lists of the words whose count it changed): without
/// them a module of thousands of lines holds most words of any long
/// report and ranks for every one.
pub fn file_scores(
    store: &Store,
    graph: &str,
    terms: &[WeightedTerm],
    files: f64,
    held: Option<&HeldLists>,
) -> Result<FxHashMap<String, f64>, StoreError> {
    let lists = word_lists(store, &FILE_WORDS, graph, terms, held)?;
    let blocks = block_lists(&lists);
    let index = term_index(terms);
    let df = list_lengths(&blocks);
    // Every file's terms (weighted idf, tf) in word order, scored first as
    // if of the mean length; a file's entries are all in one block.
    let per_block: Vec<FxHashMap<&str, Vec<(f64, f64)>>> = blocks
        .par_iter()
        .map(|lists| {
            let mut hits: FxHashMap<&str, Vec<(f64, f64)>> = FxHashMap::default();
            for (word, list) in lists {
                let d = df.get(word).copied().unwrap_or(0) as f64;
                let n = files.max(d);
                let Some(&i) = index.get(word) else {
                    continue;
                };
                let idf = (1.0 + (n - d + 0.5) / (d + 0.5)).ln() * terms[i].weight;
                for (id, p) in list.ids().zip(&list.spans) {
                    hits.entry(id).or_default().push((idf, f64::from(p.tf)));
                }
            }
            hits
        })
        .collect();
    let mut hits: FxHashMap<&str, Vec<(f64, f64)>> = FxHashMap::with_capacity_and_hasher(
        per_block.iter().map(|h| h.len()).sum(),
        Default::default(),
    );
    for block in per_block {
        hits.extend(block);
    }
    let bm25 = |terms: &[(f64, f64)], norm: f64| -> f64 {
        terms
            .iter()
            .map(|(idf, tf)| idf * tf * (K1 + 1.0) / (tf + K1 * norm))
            .sum()
    };
    let mut score: Vec<(&str, f64)> = hits.iter().map(|(f, t)| (*f, bm25(t, 1.0))).collect();
    score.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    // The best of them scored again with their lengths (the mean of theirs
    // stands in for the mean of all): reading every file's size would
    // cost a scan per query, and a file far below these does not reach
    // the first places by being short.
    if score.is_empty() {
        return Ok(FxHashMap::default());
    }
    let sized: Vec<&str> = score.iter().take(SIZED_FILES).map(|(f, _)| *f).collect();
    let rows = store.read(
        queries::SEARCH_FILE_SIZES,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(sized)),
    )?;
    let sizes: FxHashMap<String, f64> = decode_rows::<FileSizeRow>(&rows)?
        .into_iter()
        .map(|r| (r.path.to_string(), r.bytes.max(1) as f64))
        .collect();
    if !sizes.is_empty() {
        let mean = sizes.values().sum::<f64>() / sizes.len() as f64;
        for (f, s) in score.iter_mut() {
            if let Some(len) = sizes.get(*f) {
                *s = bm25(&hits[f], 1.0 - B + B * len / mean);
            }
        }
    }
    Ok(score.into_iter().map(|(f, s)| (f.to_string(), s)).collect())
}

fn term_index(terms: &[WeightedTerm]) -> FxHashMap<&str, usize> {
    terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.term.stem.as_str(), i))
        .collect()
}

/// The rows `query` reads for `words` (bound as `$words`).
fn read_postings(
    store: &Store,
    query: &'static str,
    graph: &str,
    words: &[&str],
) -> Result<cozo::NamedRows, StoreError> {
    store.read(
        query,
        Params::new()
            .with("graph", graph)
            .with("words", str_list(words.iter().copied())),
    )
}

fn stems(terms: &[WeightedTerm]) -> Vec<&str> {
    terms.iter().map(|t| t.term.stem.as_str()).collect()
}

/// A text index the query's words are looked up in: its relation, and
/// the query that reads its lists.
struct TextIndex {
    relation: &'static str,
    query: &'static str,
}

const ENTITY_WORDS: TextIndex = TextIndex {
    relation: held_lists::ENTITY_WORDS,
    query: queries::SEARCH_POSTINGS,
};

const FILE_WORDS: TextIndex = TextIndex {
    relation: held_lists::FILE_WORDS,
    query: queries::SEARCH_FILE_POSTINGS,
};

/// Each query word's list in `index`: those a server holds, the others
/// read from the store (and held, when there are [`HeldLists`]).
fn word_lists(
    store: &Store,
    index: &TextIndex,
    graph: &str,
    terms: &[WeightedTerm],
    held: Option<&HeldLists>,
) -> Result<Vec<Arc<WordList>>, StoreError> {
    let words = stems(terms);
    let Some(held) = held else {
        return read_lists(store, index, graph, &words);
    };
    let lookup = held.lookup(store, graph, index.relation, &words)?;
    let mut lists = lookup.held.clone();
    if !lookup.missing.is_empty() {
        let read = read_lists(store, index, graph, &lookup.missing)?;
        held.hold(store, graph, index.relation, &lookup, &read)?;
        lists.extend(read);
    }
    Ok(lists)
}

/// The lists of `words` in `index` as stored, unpacked on every core
/// (schema 19 stores them compressed); a word without one has an empty
/// list.
fn read_lists(
    store: &Store,
    index: &TextIndex,
    graph: &str,
    words: &[&str],
) -> Result<Vec<Arc<WordList>>, StoreError> {
    let raw = read_postings(store, index.query, graph, words)?;
    let rows = decode_rows::<PostingsRow>(&raw)?;
    let read: Vec<(&str, ListBlock)> = rows
        .par_iter()
        .map(|r| {
            unpack_text(&r.postings)
                .and_then(|text| ListBlock::read(r.block, text.into_owned()))
                .map(|list| (r.word.as_ref(), list))
                .ok_or_else(|| malformed(index.relation, &r.word))
        })
        .collect::<Result<_, StoreError>>()?;
    let mut by_word: BTreeMap<&str, Vec<ListBlock>> =
        words.iter().map(|w| (*w, Vec::new())).collect();
    for (word, block) in read {
        by_word.entry(word).or_default().push(block);
    }
    Ok(by_word
        .into_iter()
        .map(|(word, mut blocks)| {
            blocks.sort_unstable_by_key(|b| b.block);
            Arc::new(WordList {
                word: word.to_string(),
                blocks,
            })
        })
        .collect())
}

/// The query's lists a block at a time: in each block, each word's
/// entries in word order (so that a score sums its words in one order).
fn block_lists(lists: &[Arc<WordList>]) -> Vec<BlockLists<'_>> {
    let mut in_word_order: Vec<&WordList> = lists.iter().map(|l| &**l).collect();
    in_word_order.sort_by(|a, b| a.word.cmp(&b.word));
    let mut by_block: BTreeMap<i64, BlockLists> = BTreeMap::new();
    for list in in_word_order {
        for block in &list.blocks {
            by_block
                .entry(block.block)
                .or_default()
                .push((list.word.as_str(), block));
        }
    }
    by_block.into_values().collect()
}

/// One block of the query's lists: each word's entries in it, in word
/// order.
type BlockLists<'r> = Vec<(&'r str, &'r ListBlock)>;

/// Each word's whole list length (its document frequency): the sum over
/// its blocks.
fn list_lengths<'r>(blocks: &[BlockLists<'r>]) -> FxHashMap<&'r str, usize> {
    let mut df: FxHashMap<&str, usize> = FxHashMap::default();
    for (word, list) in blocks.iter().flatten() {
        *df.entry(*word).or_default() += list.spans.len();
    }
    df
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

query_rows! {
    /// `queries/search_history_words.cozo`.
    HistoryWordRow = "search_history_words" {
        key { word: Str<'a>, file: Str<'a> }
        value { messages: i64, length: i64 }
    }
}

/// BM25 of the weighted query terms over each file's history text (the
/// messages of the commits that changed it, `code_history_word`): the
/// vocabulary reports share with the project's past changes. `files` is
/// the number of files indexed; a term in more than [`MAX_DF_SHARE`] of
/// them says nothing.
pub fn history_scores(
    store: &Store,
    graph: &str,
    terms: &[WeightedTerm],
    files: f64,
) -> Result<FxHashMap<String, f64>, StoreError> {
    let raw = read_postings(store, queries::SEARCH_HISTORY_WORDS, graph, &stems(terms))?;
    let rows = decode_rows::<HistoryWordRow>(&raw)?;
    if rows.is_empty() {
        return Ok(FxHashMap::default());
    }
    let index = term_index(terms);
    let mut df: FxHashMap<&str, f64> = FxHashMap::default();
    let mut lengths: FxHashMap<&str, i64> = FxHashMap::default();
    for r in &rows {
        *df.entry(r.word.as_ref()).or_insert(0.0) += 1.0;
        lengths.insert(r.file.as_ref(), r.length);
    }
    let n = files.max(lengths.len() as f64);
    // The mean length of the histories that matched stands in for the
    // mean of all, as for entity texts.
    let avg = (lengths.values().sum::<i64>() as f64 / lengths.len() as f64).max(1.0);
    let mut scores: FxHashMap<String, f64> = FxHashMap::default();
    for r in &rows {
        let d = df[r.word.as_ref()];
        if d > MAX_DF_SHARE * n && n > 100.0 {
            continue;
        }
        let Some(&i) = index.get(r.word.as_ref()) else {
            continue;
        };
        let idf = (1.0 + (n - d + 0.5) / (d + 0.5)).ln() * terms[i].weight;
        let tf = r.messages as f64;
        let norm = 1.0 - B + B * r.length as f64 / avg;
        *scores.entry(r.file.to_string()).or_insert(0.0) +=
            idf * tf * (K1 + 1.0) / (tf + K1 * norm);
    }
    Ok(scores)
}
