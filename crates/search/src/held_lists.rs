//! What a server holds between searches: posting lists unpacked, and the
//! paths and lines searches read beside them.
//!
//! On a large tree most of a bug report's search is spent reading its
//! words' posting lists and unpacking them (zstd): a common word's list
//! is megabytes, and the reports a server answers share their common
//! words ("error", "thread", "panic"). A server keeps the lists it read,
//! unpacked and parsed, for the graph seq it read them at; a word with no
//! list too (a report's rare words are asked again). So are the graph's
//! file paths, which quoted locations are matched against, and the lines
//! of the best files' entities, whose bodies are read.
//!
//! An index run rewrites the lists of the words whose counts it changed.
//! A run of the server's own says which ([`HeldLists::after_run`]): only
//! those lists are dropped. The first search that finds the seq moved
//! otherwise (another process's run) drops everything.
//!
//! All of it is bounded in bytes: the lines to an eighth of the bound
//! (over it, they all go), and over the bound the least recently used
//! lists go. A one-shot command has no
//! [`HeldLists`] and reads everything from the store.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;

use crate::index::ListsRewritten;
use crate::store::{Instance, Store, StoreError};
use crate::support::words::{posting_spans, PostingSpan};

/// The text indexes whose lists are held, by relation.
pub(crate) const ENTITY_WORDS: &str = "code_word";
pub(crate) const FILE_WORDS: &str = "code_file_word";

/// What the held lists may take, in bytes (a large tree's
/// commonest words hold a few megabytes each; a report reads a hundred or
/// so words).
const DEFAULT_BYTES: usize = 256 << 20;

/// One word's stored list in one text index, by block: each block that
/// holds entries, unpacked and parsed.
#[derive(Debug)]
pub(crate) struct WordList {
    pub word: String,
    pub blocks: Vec<ListBlock>,
}

/// One block of a word's list: its text, and where each entry lies in it.
#[derive(Debug)]
pub(crate) struct ListBlock {
    pub block: i64,
    text: String,
    pub spans: Vec<PostingSpan>,
}

impl ListBlock {
    /// The block `block` of a list, from its stored text; `None` when the
    /// text is not a posting list.
    pub fn read(block: i64, text: String) -> Option<Self> {
        let spans = posting_spans(&text)?;
        Some(ListBlock { block, text, spans })
    }

    /// Each entry's id, in order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.spans.iter().map(|s| s.posting(&self.text).id)
    }
}

impl WordList {
    fn bytes(&self) -> usize {
        // The texts and entries, and what holding them costs besides (the
        // map entry, the allocations' headers).
        let blocks: usize = self
            .blocks
            .iter()
            .map(|b| b.text.len() + b.spans.len() * size_of::<PostingSpan>() + 64)
            .sum();
        blocks + 2 * self.word.len() + 96
    }
}

/// The posting lists of one store's text indexes, held between searches
/// (a server's; see the module doc).
pub struct HeldLists {
    /// The store they were read from.
    instance: Instance,
    limit: usize,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// The graph and its seq the lists were read at.
    at: Option<(String, i64)>,
    /// (text index, word) → the list and when it was last used.
    lists: FxHashMap<(&'static str, String), (Arc<WordList>, u64)>,
    /// Every file path of the graph (what quoted locations are matched
    /// against).
    paths: Option<Arc<Vec<String>>>,
    /// Each of the best files' entities with their lines
    /// (`queries/search_file_spans.cozo`), by file, and their bytes (at
    /// most an eighth of the bound).
    spans: FxHashMap<String, Arc<cozo::NamedRows>>,
    span_bytes: usize,
    bytes: usize,
    clock: u64,
}

impl std::fmt::Debug for HeldLists {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_struct("HeldLists")
            .field("lists", &held.lists.len())
            .field("bytes", &held.bytes)
            .finish()
    }
}

/// What [`HeldLists::lookup`] found: the lists held, the words to read,
/// and the seq to hold the read ones at.
pub(crate) struct Lookup<'w> {
    pub held: Vec<Arc<WordList>>,
    pub missing: Vec<&'w str>,
    seq: Option<i64>,
}

impl HeldLists {
    /// Lists of `store` held up to the default bound.
    pub fn new(store: &Store) -> Self {
        Self::with_limit(store, DEFAULT_BYTES)
    }

    /// Lists of `store` held up to `limit` bytes.
    pub fn with_limit(store: &Store, limit: usize) -> Self {
        HeldLists {
            instance: store.instance(),
            limit,
            held: Mutex::default(),
        }
    }

    /// How many lists are held, and their bytes.
    pub fn size(&self) -> (usize, usize) {
        let held = self.lock();
        (held.lists.len(), held.bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The lists of `words` in `index` held for `graph` at its seq now;
    /// the others are to be read. Another store's lists are never held.
    pub(crate) fn lookup<'w>(
        &self,
        store: &Store,
        graph: &str,
        index: &'static str,
        words: &[&'w str],
    ) -> Result<Lookup<'w>, StoreError> {
        if !self.instance.is(store) {
            return Ok(Lookup {
                held: Vec::new(),
                missing: words.to_vec(),
                seq: None,
            });
        }
        let seq = store.graph_seq(graph)?;
        let mut held = self.lock();
        held.move_to(graph, seq);
        held.clock += 1;
        let now = held.clock;
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for &word in words {
            match held.lists.get_mut(&(index, word.to_string())) {
                Some((list, used)) => {
                    *used = now;
                    found.push(list.clone());
                }
                None => missing.push(word),
            }
        }
        Ok(Lookup {
            held: found,
            missing,
            seq: Some(seq),
        })
    }

    /// Every file path of `graph`: held, or `read` (and held if the seq
    /// did not move meanwhile).
    pub(crate) fn paths(
        &self,
        store: &Store,
        graph: &str,
        read: impl FnOnce() -> Result<Vec<String>, StoreError>,
    ) -> Result<Arc<Vec<String>>, StoreError> {
        if !self.instance.is(store) {
            return Ok(Arc::new(read()?));
        }
        let seq = store.graph_seq(graph)?;
        {
            let mut held = self.lock();
            held.move_to(graph, seq);
            if let Some(paths) = &held.paths {
                return Ok(paths.clone());
            }
        }
        let paths = Arc::new(read()?);
        if store.graph_seq(graph)? == seq {
            let mut held = self.lock();
            if held.is_at(graph, seq) && held.paths.is_none() {
                held.bytes += paths_bytes(&paths);
                held.paths = Some(paths.clone());
            }
        }
        Ok(paths)
    }

    /// An index run of this process moved `graph` from seq `before` to
    /// `after`, rewriting the lists `rewritten` names: those are dropped,
    /// the others held on for `after` (another process's run, or a run
    /// that does not say which lists it rewrote, drops them all at the
    /// next search instead).
    pub fn after_run(&self, graph: &str, before: i64, after: i64, rewritten: &ListsRewritten) {
        let mut held = self.lock();
        if after != before + 1 || !held.is_at(graph, before) {
            return;
        }
        let (Some(entity_words), Some(file_words)) =
            (&rewritten.entity_words, &rewritten.file_words)
        else {
            return;
        };
        held.drop_spans();
        let Held {
            at, lists, paths, ..
        } = &mut *held;
        *at = Some((graph.to_string(), after));
        let mut freed = paths.take().map_or(0, |p| paths_bytes(&p));
        lists.retain(|(index, word), (list, _)| {
            let changed = match *index {
                ENTITY_WORDS => entity_words.contains(word),
                FILE_WORDS => file_words.contains(word),
                _ => true,
            };
            if changed {
                freed += list.bytes();
            }
            !changed
        });
        held.bytes -= freed;
    }

    /// The rows of each of `files` by `read` (given the files to read,
    /// their rows by file), those held for the seq now, the others held
    /// if the seq did not move while they were read.
    pub(crate) fn spans(
        &self,
        store: &Store,
        graph: &str,
        files: &[&str],
        read: impl FnOnce(&[&str]) -> Result<Vec<(String, cozo::NamedRows)>, StoreError>,
    ) -> Result<Vec<Arc<cozo::NamedRows>>, StoreError> {
        let keep = |rows: Vec<(String, cozo::NamedRows)>| {
            rows.into_iter()
                .map(|(_, rows)| Arc::new(rows))
                .collect::<Vec<_>>()
        };
        if !self.instance.is(store) {
            return Ok(keep(read(files)?));
        }
        let seq = store.graph_seq(graph)?;
        let mut found = Vec::new();
        let mut missing = Vec::new();
        {
            let mut held = self.lock();
            held.move_to(graph, seq);
            for &file in files {
                match held.spans.get(file) {
                    Some(rows) => found.push(rows.clone()),
                    None => missing.push(file),
                }
            }
        }
        if missing.is_empty() {
            return Ok(found);
        }
        let read = read(&missing)?;
        let read: Vec<(String, Arc<cozo::NamedRows>)> = read
            .into_iter()
            .map(|(file, rows)| (file, Arc::new(rows)))
            .collect();
        if store.graph_seq(graph)? == seq {
            let mut held = self.lock();
            let adding: usize = read.iter().map(|(_, rows)| rows_bytes(rows)).sum();
            if held.is_at(graph, seq) && adding <= self.limit / 8 {
                if held.span_bytes + adding > self.limit / 8 {
                    held.drop_spans();
                }
                for (file, rows) in &read {
                    let size = rows_bytes(rows);
                    held.bytes += size;
                    held.span_bytes += size;
                    if let Some(old) = held.spans.insert(file.clone(), rows.clone()) {
                        held.bytes -= rows_bytes(&old);
                        held.span_bytes -= rows_bytes(&old);
                    }
                }
            }
        }
        found.extend(read.into_iter().map(|(_, rows)| rows));
        Ok(found)
    }

    /// Hold `lists`, read for `lookup`'s missing words, if the graph's seq
    /// is still the one they were looked up at (else an index run may
    /// have landed while they were read: they are not held).
    pub(crate) fn hold(
        &self,
        store: &Store,
        graph: &str,
        index: &'static str,
        lookup: &Lookup,
        lists: &[Arc<WordList>],
    ) -> Result<(), StoreError> {
        let Some(seq) = lookup.seq else {
            return Ok(());
        };
        if store.graph_seq(graph)? != seq {
            return Ok(());
        }
        let mut held = self.lock();
        if !held.is_at(graph, seq) {
            return Ok(());
        }
        let now = held.clock;
        for list in lists {
            let size = list.bytes();
            if size > self.limit / 4 {
                continue;
            }
            let key = (index, list.word.clone());
            if let Some((old, _)) = held.lists.insert(key, (list.clone(), now)) {
                held.bytes -= old.bytes();
            }
            held.bytes += size;
        }
        if held.bytes > self.limit {
            held.shrink_to(self.limit * 3 / 4);
        }
        Ok(())
    }
}

impl Held {
    fn is_at(&self, graph: &str, seq: i64) -> bool {
        self.at
            .as_ref()
            .is_some_and(|(g, s)| g == graph && *s == seq)
    }

    /// Hold what is read at `seq` of `graph` from now on: anything held
    /// for another seq (or graph) is dropped.
    fn move_to(&mut self, graph: &str, seq: i64) {
        if !self.is_at(graph, seq) {
            *self = Held {
                at: Some((graph.to_string(), seq)),
                ..Held::default()
            };
        }
    }

    /// Drop every file's lines held.
    fn drop_spans(&mut self) {
        self.spans.clear();
        self.bytes -= self.span_bytes;
        self.span_bytes = 0;
    }

    /// Drop the least recently used lists until at most `bytes` are held.
    fn shrink_to(&mut self, bytes: usize) {
        let mut by_use: Vec<(u64, (&'static str, String))> = self
            .lists
            .iter()
            .map(|(k, (_, used))| (*used, k.clone()))
            .collect();
        by_use.sort_unstable();
        for (_, key) in by_use {
            if self.bytes <= bytes {
                break;
            }
            if let Some((list, _)) = self.lists.remove(&key) {
                self.bytes -= list.bytes();
            }
        }
    }
}

fn paths_bytes(paths: &[String]) -> usize {
    paths.iter().map(|p| p.len() + 24).sum()
}

/// About what rows of a few small columns take.
fn rows_bytes(rows: &cozo::NamedRows) -> usize {
    rows.rows.len() * 192 + 64
}
