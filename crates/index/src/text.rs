//! The text index of a code graph (schemas 12, 14 and 20):
//! `code_entity_texts` (per file, its entities' words, see [`search_text`]
//! and `word_list`) and `code_word` (per word its posting list), kept in
//! step with the entities by every index run, in the same transaction.
//!
//! An entity that appeared, changed or went (what `write_entities`
//! reports) and whose words are not the stored ones has its entry in its
//! file's `code_entity_texts` row replaced, and the posting lists of its
//! words before (read from its stored word list) and now are rewritten
//! without its old entry and with its new one. Lists are stored in blocks (schema 17): only the block its
//! key hashes to is read and put back (or deleted when empty), so adding
//! an entity costs a share of a common word's list, not the whole of it. A graph whose
//! rows are of another [`TEXT_VERSION`], or have none (indexed before
//! schema 12), gets every entity's rows written anew, as `code_usage`
//! does. Lists are kept in id order, so a list rewritten by runs after
//! edits is the list a fresh index writes.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::model::Entity;
use crate::model::{FileContext, FileExtract};
use crate::store::rows::{
    decode_first, decode_rows, query_rows, Bytes, CodeEntityTextsRow, CodeFileTextRow,
    CodeFileWordRow, CodeTextVersionRow, CodeWordRow, RowError, Str,
};
use crate::store::value::str_list;
use crate::store::{queries, Batch, Params, Store, StoreError};
use crate::support::packed::{pack_text, unpack_text};
use crate::support::words::{
    decode_file_words, decode_postings, encode_file_words, encode_postings, file_words,
    index_words, posting_block, stored_words, word_list, Posting,
};

/// Version of what the text rows hold (the text and the tokeniser).
///
/// 2: `code_text.text` holds the word list, not the text; the file path is
/// in the text of the file's module entity only.
/// 3: `code_word` holds one posting list per word (schema 14).
/// 4: the words of whole files, `code_file_text` and `code_file_word`
/// (schema 16).
/// 5: posting lists cut into blocks by id (schema 17).
/// 6: posting lists compressed (schema 19).
/// 7: the entities' word lists a file at a time, `code_entity_texts`
/// (schema 20).
/// 8: an entity's words include its body's string literals and comments.
///
/// The entity words come from parses only (see [`FileExtract::texts`]), so
/// the version is part of every stored file hash: a graph of another
/// version has every file parsed again by its next run.
pub const TEXT_VERSION: i64 = 8;

query_rows! {
    /// `queries/entity_texts_of.cozo`.
    EntityTextsOfRow = "entity_texts_of" {
        key { file: Str<'a> }
        value { texts: Bytes<'a> }
    }
    /// `queries/text_version.cozo`.
    TextVersionRow = "text_version" {
        key { graph: Str<'a> }
        value { version: i64 }
    }
    /// `queries/entity_texts_keys.cozo`.
    EntityTextsKeyRow = "entity_texts_keys" {
        key { graph: Str<'a>, file: Str<'a> }
    }
    /// `queries/file_text_of.cozo`.
    FileTextOfRow = "file_text_of" {
        key { path: Str<'a> }
        value { words: Str<'a> }
    }
    /// `queries/file_text_keys.cozo`.
    FileTextKeyRow = "file_text_keys" {
        key { graph: Str<'a>, path: Str<'a> }
    }
}

/// Whether `graph`'s text rows are of [`TEXT_VERSION`].
pub fn is_current(store: &Store, graph: &str) -> Result<bool, StoreError> {
    let rows = store.read(queries::TEXT_VERSION, Params::new().with("graph", graph))?;
    Ok(decode_first::<TextVersionRow>(&rows)?.is_some_and(|r| r.version == TEXT_VERSION))
}

/// Mark `graph`'s text rows as not current, so that the next run writes
/// them all anew: for a run that changes entities without writing their
/// text rows (`IndexOptions::text_index` off).
pub fn invalidate(graph: &str, batch: &mut Batch) {
    batch.delete_key::<CodeTextVersionRow>(vec![graph.into()]);
}

/// An entity's words now: (word, tf) in word order, and the text's length.
struct Words {
    words: Vec<(String, i64)>,
    len: i64,
    list: String,
}

/// Stage the text rows of the entities of `files` (re-parsed, skipped or
/// deleted: every entity that appeared, changed or went is in one), or of
/// every entity when `None`. `extracts` holds the files parsed now as
/// parsed (with their [`FileExtract::texts`]).
/// Returns the words whose lists it rewrote.
pub fn write(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    files: Option<&BTreeSet<String>>,
) -> Result<Rewritten, StoreError> {
    let Some(files) = files else {
        // Tokenising and stemming is the costly part of a full rewrite:
        // it runs on every core.
        let entities = extracts
            .iter()
            .flat_map(|(path, (_, ex))| {
                with_texts(ex).map(move |(e, body)| (path.as_str(), e, body))
            })
            .collect();
        write_all(store, graph, batch, entities)?;
        return Ok(None);
    };
    if files.is_empty() {
        return Ok(Some(BTreeSet::new()));
    }
    let before = read_stored_texts(store, graph, files)?;
    let no_texts = BTreeMap::new();
    let now = words_now(extracts, files);
    // Entities whose words are as stored (a body edit moves lines, not
    // words) keep their entries; the others' words before and now have
    // their lists rewritten, and their file's row is put anew.
    let mut changes: Changes = BTreeMap::new();
    for file in files {
        let stored = before.get(file).unwrap_or(&no_texts);
        let texts = texts_now(extracts.get(file), &now, stored);
        if !note_changes(&texts, stored, &now, &mut changes) {
            continue;
        }
        if texts.is_empty() {
            batch.delete_key::<CodeEntityTextsRow>(vec![graph.into(), file.as_str().into()]);
        } else {
            let texts = texts.iter().map(|(k, l)| (*k, *l));
            batch.put_row(entity_texts_row(graph, file, texts));
        }
    }
    rewrite_blocks(store, graph, batch, Lists::Entities, &changes)?;
    Ok(Some(words_of(&changes)))
}

/// The words whose posting lists a run rewrote; `None` when it wrote
/// every list anew.
pub type Rewritten = Option<BTreeSet<String>>;

fn words_of(changes: &Changes) -> BTreeSet<String> {
    changes.keys().map(|w| w.to_string()).collect()
}

/// The stored word lists of the entities of `files`, by file and key: a
/// key names its file, so no other file holds one of their entities.
fn read_stored_texts(
    store: &Store,
    graph: &str,
    files: &BTreeSet<String>,
) -> Result<BTreeMap<String, BTreeMap<String, String>>, StoreError> {
    let rows = store.read(
        queries::ENTITY_TEXTS_OF,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(files.iter().map(String::as_str))),
    )?;
    let mut before = BTreeMap::new();
    for r in decode_rows::<EntityTextsOfRow>(&rows)? {
        let texts = decode_texts(&r.texts).ok_or_else(|| RowError {
            relation: "code_entity_texts".into(),
            column: "texts".into(),
            expected: "a file's entity word lists".into(),
            found: format!("a malformed list for '{}'", r.file),
        })?;
        before.insert(r.file.to_string(), texts.into_iter().collect());
    }
    Ok(before)
}

/// The words now of every entity of the files parsed now: a body's
/// literals and comments are words too, and a parse is the only place
/// they are read from (`FileExtract::texts`). Unchanged ones keep their
/// stored lists.
fn words_now<'x>(
    extracts: &'x BTreeMap<String, (FileContext, FileExtract)>,
    files: &BTreeSet<String>,
) -> BTreeMap<&'x str, Words> {
    let entities: Vec<(&Entity, &str)> = files
        .iter()
        .filter_map(|p| extracts.get(p))
        .flat_map(|(_, ex)| with_texts(ex))
        .collect();
    entities
        .par_iter()
        .map(|(e, body)| (e.key.as_ref(), entity_words(e, body)))
        .collect()
}

/// A file's entities' word lists now, by key: parsed now, or as stored.
fn texts_now<'a>(
    extract: Option<&'a (FileContext, FileExtract)>,
    now: &'a BTreeMap<&str, Words>,
    stored: &'a BTreeMap<String, String>,
) -> BTreeMap<&'a str, &'a str> {
    let mut texts = BTreeMap::new();
    if let Some((_, ex)) = extract {
        for e in &ex.entities {
            let key = e.key.as_ref();
            let list = match (now.get(key), stored.get(key)) {
                (Some(w), _) => w.list.as_str(),
                (None, Some(list)) => list.as_str(),
                (None, None) => continue,
            };
            texts.insert(key, list);
        }
    }
    texts
}

/// Note in `changes` the postings of a file's entities whose lists
/// differ from the stored ones (removed for the words before, added for
/// those now); whether any did.
fn note_changes<'a>(
    texts: &BTreeMap<&'a str, &'a str>,
    stored: &'a BTreeMap<String, String>,
    now: &'a BTreeMap<&str, Words>,
    changes: &mut Changes<'a>,
) -> bool {
    let mut same = texts.len() == stored.len();
    for (&id, &list) in texts {
        let old = stored.get(id).map(String::as_str);
        if old == Some(list) {
            continue;
        }
        same = false;
        for word in old.into_iter().flat_map(stored_words) {
            changes.entry(word).or_default().push((id, None));
        }
        let Some(w) = now.get(id) else { continue };
        for (word, tf) in &w.words {
            let entry = Posting {
                id,
                tf: *tf,
                len: w.len,
            };
            changes.entry(word).or_default().push((id, Some(entry)));
        }
    }
    for (id, old) in stored
        .iter()
        .filter(|(id, _)| !texts.contains_key(id.as_str()))
    {
        same = false;
        for word in stored_words(old) {
            changes.entry(word).or_default().push((id, None));
        }
    }
    !same
}

/// The row of a file's entities' word lists, given in key order.
fn entity_texts_row<'a, 't>(
    graph: &'a str,
    file: &'a str,
    texts: impl Iterator<Item = (&'t str, &'t str)>,
) -> CodeEntityTextsRow<'a> {
    CodeEntityTextsRow {
        graph: graph.into(),
        file: file.into(),
        texts: encode_texts(texts).into(),
    }
}

/// The stored form of a file's entities' word lists
/// (`code_entity_texts.texts`): key and [`word_list`] of each entity in
/// key order, every one followed by a NUL (which neither a path nor a
/// word holds), packed as posting lists are ([`pack_text`]).
fn encode_texts<'t>(entries: impl Iterator<Item = (&'t str, &'t str)>) -> Vec<u8> {
    let mut text = String::new();
    for (key, list) in entries {
        text.push_str(key);
        text.push('\0');
        text.push_str(list);
        text.push('\0');
    }
    pack_text(text)
}

/// What [`encode_texts`] stored: (key, word list) pairs; `None` when the
/// bytes are not such a list.
fn decode_texts(bytes: &[u8]) -> Option<Vec<(String, String)>> {
    let text = unpack_text(bytes)?;
    let mut parts = text.split('\0');
    let mut out = Vec::new();
    loop {
        match (parts.next(), parts.next()) {
            (Some(""), None) | (None, _) => return Some(out),
            (Some(key), Some(list)) => out.push((key.to_string(), list.to_string())),
            (Some(_), None) => return None,
        }
    }
}

/// Each entity of an extract with the text of its body's literals and
/// comments (empty for one without, and for a stored interface).
fn with_texts(ex: &FileExtract) -> impl Iterator<Item = (&Entity, &str)> {
    let mut texts = ex.texts.iter().peekable();
    ex.entities.iter().enumerate().map(move |(i, e)| {
        while texts.next_if(|(at, _)| (*at as usize) < i).is_some() {}
        match texts.next_if(|(at, _)| *at as usize == i) {
            Some((_, t)) => (e, t.as_str()),
            None => (e, ""),
        }
    })
}

/// An entity's words now: (word, tf) in word order, and the text's length.
fn entity_words(e: &Entity, body: &str) -> Words {
    let (words, len) = index_words(&search_text(e, body));
    let list = word_list(&words);
    Words { words, len, list }
}

/// Entities whose words are made at a time by [`write_all`]: enough to
/// keep every core busy, few enough that their words never add up to much.
const WORDS_CHUNK: usize = 16_384;

/// Every text row of `graph` anew: the stored ones (of another version)
/// deleted, the rows of `entities` (every entity, with its file) put.
/// Words are made a chunk at a time in id order and only the posting
/// lists are kept; a file's row is put once its last entity's words are
/// made, so a first index never holds every entity's words at once.
fn write_all(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    entities: Vec<(&str, &Entity, &str)>,
) -> Result<(), StoreError> {
    // A database being built holds no rows from before this run (and a
    // read would wait for every row handed to it to land first).
    if !store.is_building() {
        let p = Params::new().with("graph", graph);
        let rows = store.read(queries::ENTITY_TEXTS_KEYS, p)?;
        for r in decode_rows::<EntityTextsKeyRow>(&rows)? {
            batch.delete_key::<CodeEntityTextsRow>(vec![graph.into(), r.file.as_ref().into()]);
        }
    }
    batch.put_row(CodeTextVersionRow {
        graph: graph.into(),
        version: TEXT_VERSION,
    });
    // In id order, so every list is too (of entities sharing a key, the
    // last one's words).
    let by_key: BTreeMap<&str, (&str, &Entity, &str)> = entities
        .into_iter()
        .map(|(file, e, body)| (e.key.as_ref(), (file, e, body)))
        .collect();
    let entities: Vec<(&str, &Entity, &str)> = by_key.into_values().collect();
    let mut left: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    for (file, _, _) in &entities {
        *left.entry(file).or_default() += 1;
    }
    let mut pending: rustc_hash::FxHashMap<&str, BTreeMap<&str, String>> =
        rustc_hash::FxHashMap::default();
    let mut lists: BTreeMap<String, Vec<HeldPosting>> = BTreeMap::new();
    for (at, chunk) in entities.chunks(WORDS_CHUNK).enumerate() {
        let words: Vec<Words> = chunk
            .par_iter()
            .map(|(_, e, body)| entity_words(e, body))
            .collect();
        let mut complete: Vec<(&str, BTreeMap<&str, String>)> = Vec::new();
        for (i, ((file, e, _), w)) in chunk.iter().zip(words).enumerate() {
            let id = e.key.as_ref();
            for (word, tf) in w.words {
                let posting = HeldPosting::new(at * WORDS_CHUNK + i, tf, w.len);
                match lists.get_mut(word.as_str()) {
                    Some(list) => list.push(posting),
                    None => {
                        lists.insert(word, vec![posting]);
                    }
                }
            }
            pending.entry(file).or_default().insert(id, w.list);
            let count = left.get_mut(file).expect("every file is counted");
            *count -= 1;
            if *count == 0 {
                complete.push((file, pending.remove(file).unwrap_or_default()));
            }
        }
        // The rows of the files complete now, packed on every thread.
        let rows: Vec<CodeEntityTextsRow> = complete
            .par_iter()
            .map(|(file, texts)| {
                entity_texts_row(graph, file, texts.iter().map(|(k, l)| (*k, l.as_str())))
            })
            .collect();
        for row in rows {
            batch.put_row(row);
        }
        // Old rows' deletes were staged first: a chunk may land now.
        store.land_when_full(batch)?;
    }
    let ids: Vec<&str> = entities.iter().map(|(_, e, _)| e.key.as_ref()).collect();
    put_all_blocks(store, graph, batch, Lists::Entities, lists, &ids)
}

/// A posting as a first index holds every word's list until it is packed:
/// the id as its place in the run's list of ids. On a large tree that is
/// five million postings, a third of the size of [`Posting`]'s.
#[derive(Debug, Clone, Copy)]
struct HeldPosting {
    id: u32,
    tf: u32,
    len: u32,
}

impl HeldPosting {
    fn new(id: usize, tf: i64, len: i64) -> HeldPosting {
        let small = |n: i64| u32::try_from(n).unwrap_or(u32::MAX);
        HeldPosting {
            id: u32::try_from(id).expect("fewer than 2^32 ids in one run"),
            tf: small(tf),
            len: small(len),
        }
    }

    fn posting<'a>(self, ids: &[&'a str]) -> Posting<'a> {
        Posting {
            id: ids[self.id as usize],
            tf: self.tf.into(),
            len: self.len.into(),
        }
    }
}

/// A file's words: (word, count) in word order ([`file_words`]), held in
/// their stored form (`code_file_text.words`, one `word count` line each).
/// A first index holds every file's words from parsing to the text stage:
/// on a large tree that is a million and a half words, and one string per
/// file costs a fifth of what a string and a count per word do.
///
/// [`file_words`]: crate::support::words::file_words
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWords(String);

impl FileWords {
    /// The words of the file at `path` with contents `text`.
    pub fn of(path: &str, text: &str) -> FileWords {
        FileWords(encode_file_words(&file_words(path, text)))
    }

    /// (word, count) in word order.
    pub fn pairs(&self) -> Vec<(&str, i64)> {
        // Made by `of`, so always a well-formed list.
        decode_file_words(&self.0).unwrap_or_default()
    }

    /// The stored form.
    pub fn stored(&self) -> &str {
        &self.0
    }
}

/// Stage the file-level text rows (schema 16): `now` holds the words of
/// the files parsed now (of every file when `all`), `gone` the files that
/// have no words any more (deleted, or skipped now). With `all`, every
/// stored row of the graph is replaced; otherwise each file of `now` whose
/// words differ from its stored ones has its row replaced and the lists of
/// the words whose count changed rewritten (a body edit that adds a call
/// to `parse` rewrites the list of `pars` and no other). Returns the words
/// whose lists it rewrote.
pub fn write_files(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    now: &BTreeMap<String, FileWords>,
    gone: &BTreeSet<String>,
    all: bool,
) -> Result<Rewritten, StoreError> {
    if all {
        write_all_files(store, graph, batch, now)?;
        return Ok(None);
    }
    let paths: BTreeSet<&str> = now.keys().chain(gone.iter()).map(String::as_str).collect();
    if paths.is_empty() {
        return Ok(Some(BTreeSet::new()));
    }
    let rows = store.read(
        queries::FILE_TEXT_OF,
        Params::new()
            .with("graph", graph)
            .with("paths", str_list(paths.iter().copied())),
    )?;
    let stored = decode_rows::<FileTextOfRow>(&rows)?;
    let mut before: BTreeMap<&str, Vec<(&str, i64)>> = BTreeMap::new();
    for r in &stored {
        let words = decode_file_words(&r.words).ok_or_else(|| RowError {
            relation: "code_file_text".into(),
            column: "words".into(),
            expected: "a file's word list".into(),
            found: format!("a malformed list for '{}'", r.path),
        })?;
        before.insert(r.path.as_ref(), words);
    }
    // Per word whose count changed in some file: those files and the
    // count now (`None`: the file holds the word no more).
    let mut updates: BTreeMap<&str, Vec<(&str, Option<i64>)>> = BTreeMap::new();
    for path in paths {
        let old: &[(&str, i64)] = before.get(path).map(Vec::as_slice).unwrap_or(&[]);
        let new: Vec<(&str, i64)> = now.get(path).map(FileWords::pairs).unwrap_or_default();
        let new = new.as_slice();
        if old == new && (before.contains_key(path) == now.contains_key(path)) {
            continue;
        }
        match now.get(path) {
            Some(words) => batch.put_row(CodeFileTextRow {
                graph: graph.into(),
                path: path.into(),
                words: words.stored().into(),
            }),
            None => batch.delete_key::<CodeFileTextRow>(vec![graph.into(), path.into()]),
        }
        // Both lists are in word order: walk them together.
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < new.len() {
            let o = old.get(i);
            let n = new.get(j);
            match (o, n) {
                (Some(a), Some(b)) if a.0 == b.0 => {
                    if a.1 != b.1 {
                        updates.entry(a.0).or_default().push((path, Some(b.1)));
                    }
                    i += 1;
                    j += 1;
                }
                (Some(a), Some(b)) if a.0 < b.0 => {
                    updates.entry(a.0).or_default().push((path, None));
                    i += 1;
                }
                (Some(a), None) => {
                    updates.entry(a.0).or_default().push((path, None));
                    i += 1;
                }
                (_, Some(b)) => {
                    updates.entry(b.0).or_default().push((path, Some(b.1)));
                    j += 1;
                }
                (None, None) => break,
            }
        }
    }
    let changes: Changes = updates
        .into_iter()
        .map(|(word, files)| {
            let entries = files
                .into_iter()
                .map(|(path, tf)| {
                    (
                        path,
                        tf.map(|tf| Posting {
                            id: path,
                            tf,
                            len: 0,
                        }),
                    )
                })
                .collect();
            (word, entries)
        })
        .collect();
    rewrite_blocks(store, graph, batch, Lists::Files, &changes)?;
    Ok(Some(words_of(&changes)))
}

/// Every file-level text row of `graph` anew.
fn write_all_files(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    now: &BTreeMap<String, FileWords>,
) -> Result<(), StoreError> {
    // As in `write_all`: nothing stored before a database being built.
    if !store.is_building() {
        let p = Params::new().with("graph", graph);
        let rows = store.read(queries::FILE_TEXT_KEYS, p)?;
        for r in decode_rows::<FileTextKeyRow>(&rows)? {
            batch.delete_key::<CodeFileTextRow>(vec![graph.into(), r.path.as_ref().into()]);
        }
    }
    let mut lists: BTreeMap<&str, Vec<HeldPosting>> = BTreeMap::new();
    // `now` is in path order, so every list is too.
    for (at, (path, words)) in now.iter().enumerate() {
        for (word, tf) in words.pairs() {
            lists
                .entry(word)
                .or_default()
                .push(HeldPosting::new(at, tf, 0));
        }
        batch.put_row(CodeFileTextRow {
            graph: graph.into(),
            path: path.as_str().into(),
            words: words.stored().into(),
        });
        store.land_when_full(batch)?;
    }
    let ids: Vec<&str> = now.keys().map(String::as_str).collect();
    put_all_blocks(store, graph, batch, Lists::Files, lists, &ids)
}

/// Per word, the ids whose entry in its list changed: each listed id's
/// stored entry is dropped and the entry given (if any) put in.
type Changes<'a> = BTreeMap<&'a str, Vec<Change<'a>>>;

/// An id whose entry changed, and its entry now (`None`: gone).
type Change<'a> = (&'a str, Option<Posting<'a>>);

/// The two kinds of posting lists, stored alike (schema 17): per word and
/// block one row, in id order.
#[derive(Clone, Copy)]
enum Lists {
    /// `code_word`: entities by the words of their text.
    Entities,
    /// `code_file_word`: files by the words of their source.
    Files,
}

query_rows! {
    /// `queries/word_keys.cozo`, `queries/file_word_keys.cozo`.
    BlockKeyRow = "word_keys" {
        key { graph: Str<'a>, word: Str<'a>, block: i64 }
    }
    /// `queries/word_block_postings.cozo`,
    /// `queries/file_word_block_postings.cozo`.
    BlockRow = "word_block_postings" {
        key { word: Str<'a>, block: i64 }
        value { postings: Bytes<'a> }
    }
}

impl Lists {
    fn relation(self) -> &'static str {
        match self {
            Lists::Entities => "code_word",
            Lists::Files => "code_file_word",
        }
    }

    /// Stage a block of a word's list, or its deletion when empty.
    fn put(self, batch: &mut Batch, graph: &str, word: &str, block: i64, entries: &[Posting]) {
        if entries.is_empty() {
            let key = vec![graph.into(), word.into(), block.into()];
            match self {
                Lists::Entities => batch.delete_key::<CodeWordRow>(key),
                Lists::Files => batch.delete_key::<CodeFileWordRow>(key),
            }
            return;
        }
        self.put_packed(batch, graph, word, block, pack_block(entries));
    }

    /// Stage a block as [`pack_block`] made it.
    fn put_packed(self, batch: &mut Batch, graph: &str, word: &str, block: i64, packed: Vec<u8>) {
        let postings = packed.into();
        match self {
            Lists::Entities => batch.put_row(CodeWordRow {
                graph: graph.into(),
                word: word.into(),
                block,
                postings,
            }),
            Lists::Files => batch.put_row(CodeFileWordRow {
                graph: graph.into(),
                word: word.into(),
                block,
                postings,
            }),
        }
    }

    fn malformed(self, word: &str) -> StoreError {
        RowError {
            relation: self.relation().into(),
            column: "postings".into(),
            expected: "a posting list".into(),
            found: format!("a malformed list for '{word}'"),
        }
        .into()
    }
}

/// Stage every list of `kind` anew: each stored block deleted, then the
/// lists (each in id order) put block by block.
fn put_all_blocks<W: AsRef<str> + Sync>(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    kind: Lists,
    lists: BTreeMap<W, Vec<HeldPosting>>,
    ids: &[&str],
) -> Result<(), StoreError> {
    let keys = match kind {
        Lists::Entities => queries::WORD_KEYS,
        Lists::Files => queries::FILE_WORD_KEYS,
    };
    // As in `write_all`: nothing stored before a database being built.
    if !store.is_building() {
        let rows = store.read(keys, Params::new().with("graph", graph))?;
        for r in decode_rows::<BlockKeyRow>(&rows)? {
            kind.put(batch, graph, &r.word, r.block, &[]);
        }
    }
    // Blocks are made and compressed on every thread, a share of the
    // words at a time (so that the packed blocks never add up to much),
    // and put in word order on this one.
    // Each id's block, hashed once rather than once for each of its
    // words (an entity has a dozen or more).
    let id_blocks: Vec<i64> = ids.par_iter().map(|id| posting_block(id)).collect();
    let lists: Vec<(W, Vec<HeldPosting>)> = lists.into_iter().collect();
    for words in lists.chunks(PACK_WORDS) {
        let packed: Vec<Vec<(i64, Vec<u8>)>> = words
            .par_iter()
            .map(|(_, entries)| {
                let mut blocks: BTreeMap<i64, Vec<Posting>> = BTreeMap::new();
                for p in entries {
                    let block = id_blocks[p.id as usize];
                    blocks.entry(block).or_default().push(p.posting(ids));
                }
                blocks
                    .into_iter()
                    .map(|(block, entries)| (block, pack_block(&entries)))
                    .collect()
            })
            .collect();
        for ((word, _), blocks) in words.iter().zip(packed) {
            for (block, bytes) in blocks {
                kind.put_packed(batch, graph, word.as_ref(), block, bytes);
            }
            // Every old block's delete is staged above, before any put.
            store.land_when_full(batch)?;
        }
    }
    Ok(())
}

/// Words whose blocks [`put_all_blocks`] packs at a time.
const PACK_WORDS: usize = 4096;

/// The stored form of a block of a posting list (schema 19).
fn pack_block(entries: &[Posting]) -> Vec<u8> {
    pack_text(encode_postings(entries.iter().copied()))
}

/// Rewrite the blocks of `kind` that `changes` touch: each is read, its
/// changed ids' entries replaced, and put back in id order (or deleted
/// when empty). Only the block an id hashes to holds its entry, so a run
/// reads and writes a share of a common word's list, not all of it.
fn rewrite_blocks(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    kind: Lists,
    changes: &Changes,
) -> Result<(), StoreError> {
    let mut touched: BTreeMap<(&str, i64), Vec<&Change>> = BTreeMap::new();
    for (word, entries) in changes {
        for change in entries {
            touched
                .entry((word, posting_block(change.0)))
                .or_default()
                .push(change);
        }
    }
    if touched.is_empty() {
        return Ok(());
    }
    let pairs = cozo::DataValue::List(
        touched
            .keys()
            .map(|(word, block)| {
                cozo::DataValue::List(vec![(*word).into(), cozo::DataValue::from(*block)])
            })
            .collect(),
    );
    let query = match kind {
        Lists::Entities => queries::WORD_BLOCK_POSTINGS,
        Lists::Files => queries::FILE_WORD_BLOCK_POSTINGS,
    };
    let rows = store.read(
        query,
        Params::new().with("graph", graph).with("lists", pairs),
    )?;
    let stored = decode_rows::<BlockRow>(&rows)?;
    let lists: Vec<(&str, i64, Cow<str>)> = stored
        .iter()
        .map(|r| {
            let list = unpack_text(&r.postings).ok_or_else(|| kind.malformed(&r.word))?;
            Ok((r.word.as_ref(), r.block, list))
        })
        .collect::<Result<_, StoreError>>()?;
    let mut old: BTreeMap<(&str, i64), Vec<Posting>> = BTreeMap::new();
    for (word, block, list) in &lists {
        let entries = decode_postings(list).ok_or_else(|| kind.malformed(word))?;
        old.insert((word, *block), entries);
    }
    for ((word, block), changed) in touched {
        let gone: BTreeSet<&str> = changed.iter().map(|(id, _)| *id).collect();
        let mut entries: Vec<Posting> = old
            .remove(&(word, block))
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !gone.contains(p.id))
            .collect();
        entries.extend(changed.iter().filter_map(|(_, p)| *p));
        entries.sort_unstable_by(|a, b| a.id.cmp(b.id));
        kind.put(batch, graph, word, block, &entries);
    }
    Ok(())
}

/// The text of an entity: what its postings are made from.
///
/// Its name, owner type and trait (for methods and impl blocks), the first
/// [`MAX_DOC`] bytes of its doc comment and its signature head. The file's
/// path is part of the text of the file's module entity only: every entity
/// of a file would otherwise hold the same path words (a posting each, and
/// a file with many entities would match a path word many times over),
/// while a query naming a component (`serde_derive: …`, `the lexer …`)
/// means the file, which search reads from the module entity. Long doc
/// comments count with their summary: the examples below it mostly repeat
/// other entities' names. Then `body`: the string literals and comments
/// of its body (a parse's [`FileExtract::texts`]), where the messages,
/// flag names and explanations an issue quotes are written.
pub fn search_text(e: &Entity, body: &str) -> String {
    let doc = &e.doc;
    let mut end = doc.len().min(MAX_DOC);
    while !doc.is_char_boundary(end) {
        end -= 1;
    }
    let doc = &doc[..end];
    let head = &e.signature.text;
    if e.parent.is_none() {
        return format!("{} {} {doc} {head} {body}", e.name, e.file);
    }
    let owner = e.owner.as_deref().unwrap_or("");
    let tr = e.trait_name.as_deref().unwrap_or("");
    format!("{} {owner} {tr} {doc} {head} {body}", e.name)
}

/// See [`search_text`].
pub const MAX_DOC: usize = 240;
