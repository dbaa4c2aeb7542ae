//! `graphctx index`: bring a repository's code graph up to date.
//!
//! 1. walk (gitignore-aware) and hash every file a language claims with
//!    blake3;
//! 2. parse new or changed files in parallel, one tree-sitter parser per
//!    rayon thread, extracting everything from that one tree;
//! 3. stage the entities and words of the changed files: they follow from
//!    the extracts alone, so a database being built lands them while the
//!    next step runs;
//! 4. resolve the references of the files the change can reach — the
//!    edited files, the files that mention a name whose meaning changed,
//!    or all ([`super::lang::Language::resolve_files`]) — against every
//!    file's interface;
//! 5. write the difference — edges of files whose resolved links changed,
//!    usage around them, deletions — in one transaction (a database being
//!    built lands its rows a chunk at a time and is moved into place
//!    whole).
//!
//! The files step 4 leaves out are exactly those whose links cannot have
//! changed, so the stored graph equals what a full rebuild of the same
//! tree would store.
//!
//! A run ([`index_repository_cached`]) is a sequence of named stages over
//! one state, `run::Run`: the walk and what the stored rows say of it
//! (`run.rs`), the parse (`parse.rs`, one file's examination in
//! `examine.rs`), what the run must load and settle before it resolves
//! (`load.rs`; a command-line run after an edit that moved lines only
//! takes the edited files' stored links instead, `replay.rs`), how far
//! resolution must reach (`scope.rs`), the rows
//! written (`land.rs`) and the run's end: the cache refreshed, the stat
//! rows and the totals (`finish.rs`). What a long-lived process keeps
//! between runs is in `cache.rs`; the phases' times in `phases.rs`.

mod cache;
mod examine;
mod finish;
mod land;
mod load;
mod parse;
mod phases;
mod replay;
mod run;
mod scope;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::state::{load_file_rows, stat_vouches};
use super::walk;
use crate::store::{Store, StoreError};

pub use cache::{InterfaceCache, Warmed};

use examine::{content_hash, layout_key};
use phases::Phases;
use run::{Run, StoredFiles, Tree};

/// Name of the graph that holds a repository's code.
pub const CODE_GRAPH: &str = "code";

#[derive(Debug, Clone)]
pub struct IndexOptions {
    pub graph: String,
    /// Files larger than this are skipped (default 4 MiB).
    pub max_file_bytes: u64,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Read co-change history from git (when the root is in a repository).
    pub history: bool,
    /// Write the text index (`index::text`). Off only to measure what the
    /// text index costs an index run (`benches/text_index.rs`): a graph
    /// indexed without it finds nothing by text until a run with it.
    #[doc(hidden)]
    pub text_index: bool,
    /// Where a run that keeps no walk in memory (a command-line run)
    /// records its walk for the next process, which checks it by `stat`
    /// instead of walking the tree (`walk::WalkSnapshot::checked_record`).
    /// `None`: every run walks.
    pub walk_record: Option<std::path::PathBuf>,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            graph: CODE_GRAPH.to_string(),
            max_file_bytes: 4 * 1024 * 1024,
            progress: false,
            history: true,
            text_index: true,
            walk_record: None,
        }
    }
}

/// A file that was not indexed, or indexed only in part, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FileNote {
    pub path: String,
    pub reason: String,
}

/// What an index run did; `--json` prints it as is.
#[derive(Debug, Clone, Serialize, Default)]
pub struct IndexSummary {
    pub root: String,
    pub files_seen: usize,
    pub files_parsed: usize,
    pub files_unchanged: usize,
    pub files_deleted: usize,
    pub files_skipped: usize,
    pub files_partial: usize,
    /// Files parsed a second time because the context (module path) they
    /// were first parsed in was not the one their `mod` declaration gives.
    pub files_reparsed: usize,
    /// Totals in the graph after the run.
    pub entities: i64,
    pub edges: i64,
    pub unresolved: i64,
    /// Unresolved references that had several equally good candidates.
    pub ambiguous: i64,
    /// Rows written (puts and deletes) in this run.
    pub rows_written: usize,
    /// Files whose references this run resolved: every file, or only the
    /// edited ones when no file's interface changed.
    pub files_resolved: usize,
    /// Files whose links were taken from the ones they stored instead of
    /// resolved: an edit that moved their lines and nothing else, in a
    /// run with no interface changed (see `index::replay`).
    pub files_replayed: usize,
    /// Whether the last walk was checked by `stat` instead of walking the
    /// tree again (a server's run, when no directory or manifest changed).
    pub walk_kept: bool,
    pub skipped: Vec<FileNote>,
    pub partial: Vec<FileNote>,
    /// The graph's change sequence number after the run.
    pub seq: i64,
    pub elapsed_ms: f64,
    /// Milliseconds per phase: walk, parse, load, resolve, diff, usage,
    /// write, history.
    pub phases_ms: BTreeMap<&'static str, f64>,
    /// The text index lists the run rewrote (what a server holding lists
    /// between searches drops); not printed.
    #[serde(skip)]
    pub lists_rewritten: ListsRewritten,
}

/// The words whose posting lists an index run rewrote, in the text index
/// of entities (`code_word`) and of files (`code_file_word`); `None`:
/// any list may have changed (the default, for a run that did not say).
#[derive(Debug, Clone, Default)]
pub struct ListsRewritten {
    pub entity_words: Option<BTreeSet<String>>,
    pub file_words: Option<BTreeSet<String>>,
}

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Index `root` into `store`. The caller holds the write lock.
pub fn index_repository(
    store: &Store,
    root: &Path,
    opts: &IndexOptions,
) -> Result<IndexSummary, IndexError> {
    index_repository_cached(store, root, opts, &mut InterfaceCache::default())
}

/// [`index_repository`] that reads and refreshes `cache`.
///
/// Its body lists the run's stages in order, each a method of the run's
/// state (`run::Run`); a run whose parse finds the stored index already
/// describing the tree goes from the parse's outcomes to its end.
pub fn index_repository_cached(
    store: &Store,
    root: &Path,
    opts: &IndexOptions,
    cache: &mut InterfaceCache,
) -> Result<IndexSummary, IndexError> {
    let started = Instant::now();
    if !root.is_dir() {
        return Err(IndexError::NotADirectory(root.display().to_string()));
    }
    let run_started_ns = walk::unix_nanos(std::time::SystemTime::now());
    let phases = Phases::new(opts.progress);
    let seq_before = store.graph_seq(&opts.graph)?;
    let graph = opts.graph.as_str();
    let held = cache
        .files
        .take()
        .filter(|f| f.graph == graph && f.seq == seq_before);
    // The walk waits on the file system, the stored rows on decoding:
    // done at once (a command-line run that finds nothing changed is
    // little else).
    let (tree, files) = std::thread::scope(|s| {
        let files = s.spawn(|| StoredFiles::read(store, graph, seq_before, held));
        let tree = Tree::walk(root, cache, opts.walk_record.as_deref());
        let files = files
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (tree, files)
    });
    let mut run = Run::start(store, root, opts, &tree, phases, cache, files?)?;
    let outcomes = run.parse(cache)?;
    run.collect(outcomes)?;
    if run.anything_changed()? {
        run.load(cache)?;
        let written = run.write_entities()?;
        run.write_text()?;
        let (now, apart) = run.prepare_resolution(cache);
        let mut resolved = run.resolve(&now, apart);
        let (touched, counts) = run.write_links(&now, &mut resolved, written)?;
        run.write_usage(&now, &resolved, touched)?;
        let file_rows = run.write_files(&now, resolved, counts)?;
        run.refresh_cache(cache, now, file_rows);
    }
    let ended = run.finish(cache, run_started_ns)?;
    let mut tree = tree;
    if let Some(record) = &opts.walk_record {
        tree.write_record(record);
    }
    ended.keep(cache, tree).report(store, &opts.graph, started)
}

/// Files whose content differs from what the index of `graph` holds —
/// changed, new or deleted since the last index run — found without
/// writing anything. An answer read while another process holds the write
/// lock names these, since it may not reflect them.
pub fn stale_files(store: &Store, root: &Path, graph: &str) -> Result<Vec<String>, StoreError> {
    let walked = walk::walk(root);
    let layout_digest = layout_key(&walked);
    let rows = load_file_rows(store, graph)?;
    let (stored, stats) = (rows.states, rows.stats);
    let mut stale: Vec<String> = walked
        .files
        .par_iter()
        .filter_map(|file| {
            let known = stored.get(&file.ctx.path);
            // Skipped files (too large, binary) hold nothing in the index.
            let fresh = stat_vouches(file, known, stats.get(&file.ctx.path), &layout_digest)
                || known.is_some_and(|s| {
                    s.status == "skipped"
                        || std::fs::read(&file.abs_path)
                            .is_ok_and(|b| content_hash(file, &b, &layout_digest) == s.hash)
                });
            (!fresh).then(|| file.ctx.path.clone())
        })
        .collect();
    let seen: BTreeSet<&str> = walked.files.iter().map(|f| f.ctx.path.as_str()).collect();
    stale.extend(
        stored
            .keys()
            .filter(|p| !seen.contains(p.as_str()))
            .cloned(),
    );
    stale.sort();
    Ok(stale)
}
