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

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::held_trees::HeldTrees;
use super::lang::Stored;
use super::links::{FileLinks, HeldRefs, RefsApart};
use super::names;
use super::polyglot::{self, lang_of, Extractors, Tables};
use super::state::{
    load_bodies, load_file_states, load_file_stats, load_interfaces, load_named_paths, load_names,
    read_counts, record_stats, stat_vouches, CodeCounts, FileStat, StatFiles, StoredFile,
};
use super::usage;
use super::walk::{self, SourceFile};
use super::write::{
    put_extract, put_names, write_entities, write_files, write_links, write_usage,
    ExtractsNowAndBefore, UsageScope, UsageTouched,
};
use crate::model::{Entity, FileContext, FileExtract, ParseStatus};
use crate::store::rows::{decode_first, query_rows, CodeStatsRow};
use crate::store::{queries, Batch, Params, Store, StoreError};

query_rows! {
    /// `queries/ambiguous_count.cozo`.
    AmbiguousCount = "ambiguous_count" {
        key { ambiguous: i64 }
    }
}

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
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            graph: CODE_GRAPH.to_string(),
            max_file_bytes: 4 * 1024 * 1024,
            progress: false,
            history: true,
            text_index: true,
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
}

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

enum Outcome {
    Unchanged,
    Parsed {
        hash: String,
        extract: Box<FileExtract>,
        /// Its stored form (interface and other references, compressed),
        /// made on the parsing thread. The extract keeps only its
        /// interface's references: the others are held in this form.
        stored: Stored,
        /// The names the whole extract mentions, encoded ([`names`]).
        names: Vec<u8>,
        note: Option<String>,
        /// The file's words for the file-level text index, when it is
        /// written (`IndexOptions::text_index`).
        words: Option<super::text::FileWords>,
    },
    Skipped(String),
}

/// Index `root` into `store`. The caller holds the write lock.
pub fn index_repository(
    store: &Store,
    root: &Path,
    opts: &IndexOptions,
) -> Result<IndexSummary, IndexError> {
    index_repository_cached(store, root, opts, &mut InterfaceCache::default())
}

/// The interfaces of every indexed file as the last run left them, kept
/// by a long-lived process (the servers) so the next run after an edit
/// does not read them all from the store again. Valid only for the graph
/// and `seq` it was taken at: a run by another process moves `seq`, and
/// the next run then reads the store as usual.
#[derive(Default)]
pub struct InterfaceCache {
    graph: String,
    seq: i64,
    /// By path, each with its settled context.
    interfaces: BTreeMap<String, (FileContext, FileExtract)>,
    /// Whether to keep the symbol table between runs too (see
    /// [`InterfaceCache::with_symbol_table`]).
    keep_table: bool,
    /// Built from the interfaces as they were at `seq` or before: every
    /// run since then changed no interface (see [`Tables`]).
    table: Option<Tables>,
    /// The stored file rows and stat rows (kept with the symbol table):
    /// a run reads neither from the store.
    files: Option<ResidentFiles>,
    /// The last walk (kept with the symbol table): the next run checks it
    /// by `stat` instead of walking (see [`walk::WalkSnapshot`]).
    walk: Option<walk::WalkSnapshot>,
    /// What a file watch saw since `walk` was checked, handed in by a
    /// server for the next run only ([`InterfaceCache::watched`]).
    watched: Option<walk::WatchedChanges>,
    /// The syntax trees of the files open in a server's editor, shared
    /// with the server ([`InterfaceCache::with_trees`]).
    trees: Option<Arc<HeldTrees>>,
}

/// What warming a server's cache reads from the store: every interface,
/// the symbol table built from them with its indexes for edits, and every
/// file's names ([`InterfaceCache::warm`]).
pub struct Warmed {
    graph: String,
    seq: i64,
    interfaces: BTreeMap<String, (FileContext, FileExtract)>,
    table: Tables,
    names: HeldNames,
}

impl Warmed {
    /// Read them for `graph` at `seq`: `None` when a change landed
    /// meanwhile.
    pub fn read(store: &Store, graph: &str, seq: i64) -> Result<Option<Warmed>, IndexError> {
        // Stored interfaces carry the contexts they were parsed in, which
        // a run settles before it stores them.
        let interfaces: BTreeMap<String, (FileContext, FileExtract)> =
            load_interfaces(store, graph)?
                .into_iter()
                .map(|(path, ex)| (path, (ex.context.clone(), ex)))
                .collect();
        let mut table = Tables::build(interfaces.values().cloned().collect());
        table.prepare_edits();
        // And what the first interface edit reads to find who sees it.
        let names = HeldNames::load(store, graph, &interfaces)?;
        if store.graph_seq(graph)? != seq {
            return Ok(None);
        }
        Ok(Some(Warmed {
            graph: graph.to_string(),
            seq,
            interfaces,
            table,
            names,
        }))
    }
}

/// Valid for the graph and `seq` they were taken at, like the interfaces,
/// but kept by runs that changed nothing too.
struct ResidentFiles {
    graph: String,
    seq: i64,
    states: BTreeMap<String, StoredFile>,
    stats: BTreeMap<String, FileStat>,
    /// Every file's names, once an interface edit needed them: the next
    /// one finds who sees its change without reading them all again.
    names: Option<HeldNames>,
}

/// Per file, the names it mentions (its `code_names` row) and what its
/// interface tells the spreading of touched names
/// ([`names::SpreadFacts`]): what finding the scope of an interface edit
/// reads of every file.
/// Both are also held turned around ([`names::NameReach`]), so that the
/// scope of an edit reads the entries of the names it touches only.
#[derive(Default)]
struct HeldNames {
    mentioned: BTreeMap<String, Vec<names::Name>>,
    facts: BTreeMap<String, names::SpreadFacts>,
    reach: names::NameReach,
}

impl HeldNames {
    /// The stored names of every file, and the spread facts of these
    /// interfaces (every file's).
    fn load(
        store: &Store,
        graph: &str,
        interfaces: &BTreeMap<String, (FileContext, FileExtract)>,
    ) -> Result<HeldNames, StoreError> {
        let mut held = HeldNames {
            mentioned: load_names(store, graph)?,
            facts: interfaces
                .par_iter()
                .map(|(path, (_, ex))| (path.clone(), lang_of(ex).spread_facts(ex)))
                .collect(),
            reach: names::NameReach::default(),
        };
        held.turn();
        Ok(held)
    }

    /// Make the turned-around index anew from what is held.
    fn turn(&mut self) {
        let mut reach = names::NameReach::default();
        for (path, facts) in &self.facts {
            reach.set_facts(path, facts);
        }
        for (path, mentioned) in &self.mentioned {
            reach.set_mentioned(path, mentioned);
        }
        self.reach = reach;
    }

    /// The file at `path` mentions `mentioned` and has `facts` now.
    fn set(&mut self, path: &str, mentioned: Vec<names::Name>, facts: names::SpreadFacts) {
        self.reach.set_mentioned(path, &mentioned);
        self.reach.set_facts(path, &facts);
        self.mentioned.insert(path.to_string(), mentioned);
        self.facts.insert(path.to_string(), facts);
    }

    /// The file at `path` is gone.
    fn remove(&mut self, path: &str) {
        self.reach.remove(path);
        self.mentioned.remove(path);
        self.facts.remove(path);
    }

    /// After a run's changes: the index made anew once stale entries
    /// outnumber live ones.
    fn settle(&mut self) {
        if self.reach.is_worn() {
            self.turn();
        }
    }
}

impl InterfaceCache {
    /// A cache that also keeps the symbol table of every file between
    /// runs, so a run that changes no interface resolves the edited files
    /// against it instead of building the table of the whole repository.
    /// It holds a second copy of the interfaces and takes a table build
    /// after each run that changed one: for servers, which answer after
    /// every save.
    pub fn with_symbol_table() -> InterfaceCache {
        InterfaceCache {
            keep_table: true,
            ..InterfaceCache::default()
        }
    }

    /// Parse the files `trees` wants from the trees it holds of them
    /// (see [`HeldTrees`]), and hold their new trees there.
    pub fn with_trees(mut self, trees: Arc<HeldTrees>) -> InterfaceCache {
        self.trees = Some(trees);
        self
    }

    /// Fill a server's cache from the store after a run that changed
    /// nothing (a server's first run over an index that was current),
    /// which leaves no interfaces held: the first save would otherwise
    /// read every interface and build the symbol table itself (and the
    /// first interface edit every file's names, and the table's indexes
    /// of words). After a first run that did change the index, the
    /// interfaces and table are held: only those indexes are made. Does
    /// nothing unless the file rows this cache holds are of the graph's
    /// `seq` now (the last run was this cache's), or when the interfaces
    /// are held already. A change landing meanwhile leaves the cache as
    /// it was. (A server reads without holding its cache: see
    /// [`InterfaceCache::wants_warming`].)
    pub fn warm(&mut self, store: &Store, graph: &str) -> Result<(), IndexError> {
        if let Some(seq) = self.wants_warming(store, graph)? {
            if let Some(warmed) = Warmed::read(store, graph, seq)? {
                self.take_warmed(store, warmed)?;
            }
        }
        Ok(())
    }

    /// The first step of [`InterfaceCache::warm`]: the graph's `seq` when
    /// the cache is to be filled ([`Warmed::read`], which needs no cache,
    /// then [`InterfaceCache::take_warmed`]), after making a held table's
    /// indexes for edits. A server reads between the two without holding
    /// its cache, so runs and answers go on meanwhile.
    pub fn wants_warming(&mut self, store: &Store, graph: &str) -> Result<Option<i64>, IndexError> {
        let seq = store.graph_seq(graph)?;
        let held = self.holds_interfaces(graph, seq);
        if held {
            if let Some(table) = &mut self.table {
                table.prepare_edits();
            }
        }
        let wanted = self.keep_table && seq != 0 && !held && self.files_current(graph, seq);
        Ok(wanted.then_some(seq))
    }

    /// Put in what [`Warmed::read`] read, if it is still what the cache
    /// lacks: no interfaces held of the `seq` it was read at, and the
    /// cache's file rows and the graph still of that `seq`. Whether it
    /// was put in.
    pub fn take_warmed(&mut self, store: &Store, warmed: Warmed) -> Result<bool, IndexError> {
        let Warmed {
            graph,
            seq,
            interfaces,
            table,
            names,
        } = warmed;
        if self.holds_interfaces(&graph, seq)
            || !self.files_current(&graph, seq)
            || store.graph_seq(&graph)? != seq
        {
            return Ok(false);
        }
        self.graph = graph;
        self.seq = seq;
        self.interfaces = interfaces;
        self.table = Some(table);
        if let Some(files) = &mut self.files {
            files.names = Some(names);
        }
        Ok(true)
    }

    /// Whether this cache holds the interfaces of `graph` at `seq`.
    fn holds_interfaces(&self, graph: &str, seq: i64) -> bool {
        self.graph == graph && self.seq == seq && !self.interfaces.is_empty()
    }

    /// Whether the file rows this cache holds are of `graph` at `seq`.
    fn files_current(&self, graph: &str, seq: i64) -> bool {
        self.files
            .as_ref()
            .is_some_and(|f| f.graph == graph && f.seq == seq)
    }

    /// The entities of the file at `path` as the store holds them (its
    /// rows are written from the same extract as its interface), when the
    /// interfaces held are of `graph` at `seq` and hold that file. A
    /// server answers from them instead of joining rows per entity.
    pub fn entities_of(&self, graph: &str, seq: i64, path: &str) -> Option<&[Entity]> {
        if self.graph != graph || self.seq != seq || seq == 0 {
            return None;
        }
        self.interfaces
            .get(path)
            .map(|(_, ex)| ex.entities.as_slice())
    }

    /// Tell the next run what a file watch saw change since the last run
    /// checked its walk: it looks at those paths instead of `stat`-ing
    /// every file and directory. Only for a watch that lost nothing since
    /// then; the run after drops it.
    pub fn watched(&mut self, changes: walk::WatchedChanges) {
        self.watched = Some(changes);
    }

    /// Forget the kept walk: the next run walks the tree again (after a
    /// failed run, whose changes a watch will not report again).
    pub fn forget_walk(&mut self) {
        self.walk = None;
        self.watched = None;
    }

    pub fn len(&self) -> usize {
        self.interfaces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.interfaces.is_empty()
    }
}

/// [`index_repository`] that reads and refreshes `cache`.
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
    let graph = opts.graph.as_str();
    let run_started_ns = walk::unix_nanos(std::time::SystemTime::now());
    let mut phases = Phases::new(opts.progress);
    let seq_before = store.graph_seq(graph)?;
    let cached = cache.graph == graph && cache.seq > 0 && cache.seq == seq_before;
    // A kept walk is checked by `stat`, or at the paths a watch saw
    // change; without one, the tree is walked.
    let mut walk_kept = false;
    let watched = cache.watched.take();
    let mut looked_at: BTreeSet<String> = BTreeSet::new();
    let snapshot = cache.keep_table.then(|| {
        let kept = cache.walk.take().and_then(|s| match &watched {
            Some(changes) => s.recheck_changed(root, changes),
            None => s.recheck(root),
        });
        match kept {
            Some(s) => {
                walk_kept = true;
                if let Some(changes) = &watched {
                    looked_at = s.files_among(changes);
                }
                s
            }
            None => walk::WalkSnapshot::take(root),
        }
    });
    let walked_now;
    let walked = match &snapshot {
        Some(s) => &s.result,
        None => {
            walked_now = walk::walk(root);
            &walked_now
        }
    };
    let layout_digest = layout_key(walked);
    let held_files = cache
        .files
        .take()
        .filter(|f| f.graph == graph && f.seq == seq_before);
    let files_cached = held_files.is_some();
    let (mut stored, mut stats, mut held_names) = match held_files {
        Some(f) => (f.states, f.stats, f.names),
        None => (
            load_file_states(store, graph)?,
            load_file_stats(store, graph)?,
            None,
        ),
    };
    phases.lap("walk");

    // The contexts the last run in this process settled (a hint: a wrong
    // one is corrected by `settle_contexts`, as a guessed one is).
    let held_contexts = &cache.interfaces;
    // The syntax trees a server holds: files open in an editor parse
    // incrementally.
    let trees = cache.trees.as_deref();
    // The same files as the stored rows describe, as this process's last
    // run left them, and a watch that reported every change since: a file
    // it did not report is as that run found it (skipped ones are tried
    // again, as always).
    let watch_vouches = watched.is_some() && walk_kept && files_cached;
    let retried: BTreeSet<&str> = match watch_vouches {
        true => stored
            .iter()
            .filter(|(_, s)| s.status == "skipped")
            .map(|(p, _)| p.as_str())
            .collect(),
        false => BTreeSet::new(),
    };
    // The text index reads entities' words from parses (their literals
    // and comments are not stored, see `FileExtract::texts`): text rows
    // of another version, or none, are written anew from every file
    // parsed again, whatever the stored hashes say.
    let reparse_all =
        opts.text_index && !store.is_building() && !super::text::is_current(store, graph)?;
    let bar = phases.counted("parse", walked.files.len() as u64);
    // One file: as the stat rows or a watch vouch for it, or examined in
    // the context settled for it (by this run's module order, or where
    // the last run in this process settled it: its keys hold the module
    // path, and when no `mod` declaration moved that is where it is).
    let parse_one = |extractors: &mut Extractors,
                     file: &SourceFile,
                     settled: Option<&FileContext>|
     -> (Outcome, bool) {
        let path = file.ctx.path.as_str();
        let vouched = !reparse_all
            && !looked_at.contains(path)
            && match watch_vouches {
                true => !retried.contains(path),
                false => stat_vouches(file, stored.get(path), stats.get(path), &layout_digest),
            };
        let o = if vouched {
            (Outcome::Unchanged, true)
        } else {
            let settled = settled.or_else(|| held_contexts.get(&file.ctx.path).map(|(c, _)| c));
            let moved;
            let file = match settled {
                Some(ctx) if *ctx != file.ctx => {
                    moved = SourceFile {
                        ctx: ctx.clone(),
                        ..file.clone()
                    };
                    &moved
                }
                _ => file,
            };
            let o = examine(
                extractors,
                file,
                stored.get(path).filter(|_| !reparse_all),
                opts.max_file_bytes,
                &layout_digest,
                opts.text_index,
                trees,
            );
            (o, false)
        };
        bar.inc(1);
        o
    };
    let ((outcomes, vouched), parsed_again): ((Vec<Outcome>, Vec<bool>), usize) =
        if stored.is_empty() && held_contexts.is_empty() {
            parse_in_module_order(walked, &parse_one)
        } else {
            let parsed = walked
                .files
                .par_iter()
                .map_init(Extractors::default, |x, file| parse_one(x, file, None))
                .unzip();
            (parsed, 0)
        };
    // The files the stat rows vouched for keep rows that are right.
    let examined: Vec<&SourceFile> = walked
        .files
        .iter()
        .zip(&vouched)
        .filter(|(_, v)| !**v)
        .map(|(f, _)| f)
        .collect();
    phases.lap("parse");

    let mut summary = IndexSummary {
        root: root.display().to_string(),
        files_seen: walked.files.len() + walked.issues.len(),
        walk_kept,
        files_reparsed: parsed_again,
        ..IndexSummary::default()
    };
    let mut batch = Batch::new();
    let mut extracts: BTreeMap<String, (FileContext, FileExtract)> = BTreeMap::new();
    let mut unchanged: Vec<&SourceFile> = Vec::new();
    // Files whose entities must be replaced: re-parsed, skipped now, or gone.
    let mut replaced: BTreeSet<String> = BTreeSet::new();
    let mut new_files: BTreeMap<String, (String, u64, String, String)> = BTreeMap::new();
    // The words of the files parsed now (file-level text index).
    let mut words_now: BTreeMap<String, super::text::FileWords> = BTreeMap::new();
    // The other references of the files parsed now, in their stored form
    // (see `Outcome::Parsed`), until the files are resolved.
    let mut bodies: BTreeMap<String, Vec<u8>> = BTreeMap::new();

    for (file, outcome) in walked.files.iter().zip(outcomes) {
        let path = file.ctx.path.clone();
        match outcome {
            Outcome::Unchanged => unchanged.push(file),
            Outcome::Parsed {
                hash,
                extract,
                stored,
                names,
                note,
                words,
            } => {
                summary.files_parsed += 1;
                if let Some(words) = words {
                    words_now.insert(path.clone(), words);
                }
                let (status, reason) = parse_status(&extract, note.as_deref());
                if status == "partial" {
                    summary.partial.push(FileNote {
                        path: path.clone(),
                        reason: reason.clone(),
                    });
                }
                bodies.insert(path.clone(), stored.body.clone());
                put_extract(&mut batch, graph, &path, stored, names);
                store.land_when_full(&mut batch)?;
                new_files.insert(path.clone(), (hash, file.bytes, status.to_string(), reason));
                replaced.insert(path.clone());
                extracts.insert(path, (file.ctx.clone(), *extract));
            }
            Outcome::Skipped(reason) => {
                summary.skipped.push(FileNote {
                    path: path.clone(),
                    reason: reason.clone(),
                });
                new_files.insert(
                    path.clone(),
                    (String::new(), file.bytes, "skipped".into(), reason),
                );
                replaced.insert(path);
            }
        }
    }
    for issue in &walked.issues {
        summary.skipped.push(FileNote {
            path: issue.path.clone(),
            reason: issue.reason.clone(),
        });
    }
    // A kept walk that still holds is the same files the stored rows
    // (as the last run left them) describe: none went.
    let same_files = files_cached && walk_kept;
    let deleted: Vec<String> = if same_files {
        Vec::new()
    } else {
        let current: BTreeSet<&str> = walked.files.iter().map(|f| f.ctx.path.as_str()).collect();
        stored
            .keys()
            .filter(|p| !current.contains(p.as_str()))
            .cloned()
            .collect()
    };
    summary.files_deleted = deleted.len();
    summary.files_skipped = summary.skipped.len();
    summary.files_partial = summary.partial.len();
    summary.files_unchanged = unchanged.len();

    // A database being built holds nothing from before this run, and any
    // read of it waits until every row handed to it has landed: such a
    // store is not asked what it held (here and below).
    let building = store.is_building();
    let usage_current = !building && usage::is_current(store, graph)?;
    let text_current = !building && super::text::is_current(store, graph)?;
    let nothing_changed = usage_current
        && text_current
        && summary.files_parsed == 0
        && deleted.is_empty()
        && new_files
            .iter()
            .all(|(p, (_, _, status, _))| stored.get(p).is_some_and(|s| &s.status == status));
    if !nothing_changed {
        // Interfaces of every file (the symbol table needs them all), and
        // the stored ones of the files parsed now, to see what changed.
        let mut old_interfaces: BTreeMap<String, FileExtract> = BTreeMap::new();
        let mut reparse: Vec<&SourceFile> = Vec::new();
        let mut resident: Option<Tables> = None;
        {
            // Taken either way: a run that fails leaves no cache behind.
            let held = std::mem::take(&mut cache.interfaces);
            let held_table = cache.table.take();
            cache.seq = 0;
            if cached {
                // The held interfaces become the extracts as they are:
                // only what changed is taken out or put in.
                resident = held_table;
                let mut pool = held;
                for path in &replaced {
                    if let Some((_, ex)) = pool.remove(path) {
                        old_interfaces.insert(path.clone(), ex);
                    }
                }
                for path in &deleted {
                    pool.remove(path);
                }
                // The pool holds only unchanged files (the others were
                // parsed now, skipped or are gone): as many means all.
                if pool.len() != unchanged.len() {
                    for file in &unchanged {
                        if !pool.contains_key(&file.ctx.path) {
                            reparse.push(file);
                        }
                    }
                }
                if pool.len() + reparse.len() != unchanged.len() {
                    let keep: BTreeSet<&str> =
                        unchanged.iter().map(|f| f.ctx.path.as_str()).collect();
                    pool.retain(|p, _| keep.contains(p.as_str()));
                }
                // (`append` would rebuild the whole map.)
                pool.extend(std::mem::take(&mut extracts));
                extracts = pool;
            } else {
                drop(held);
                // A database being built holds only this run's rows (the
                // early-landed interfaces of the files parsed now), not
                // older ones to compare with; reading them back would
                // decode and hold them for the rest of the run.
                let mut loaded = match building {
                    true => BTreeMap::new(),
                    false => load_interfaces(store, graph)?,
                };
                for file in &unchanged {
                    match loaded.remove(&file.ctx.path) {
                        Some(ex) => {
                            extracts.insert(file.ctx.path.clone(), (file.ctx.clone(), ex));
                        }
                        None => reparse.push(file),
                    }
                }
                for path in &replaced {
                    if let Some(ex) = loaded.remove(path) {
                        old_interfaces.insert(path.clone(), ex);
                    }
                }
            }
        }
        // A missing or unreadable stored interface: parse the file again.
        let reparsed = reparse_files(&reparse, graph, opts, &layout_digest, &mut batch);
        let reparsed_any = !reparsed.is_empty();
        for (file, extract, body) in reparsed {
            bodies.insert(file.ctx.path.clone(), body);
            extracts.insert(file.ctx.path.clone(), (file.ctx.clone(), extract));
        }

        let replaced_before = replaced.len();
        // The same files as the last run in this process, whose contexts
        // the held interfaces carry settled, and no `mod` declaration
        // changed: the contexts are those (see `Layout::contexts`).
        let contexts_known = cached
            && walk_kept
            && deleted.is_empty()
            && !reparsed_any
            && replaced
                .iter()
                .all(|p| match (extracts.get(p), old_interfaces.get(p)) {
                    (Some((_, now)), Some(before)) => {
                        now.mods == before.mods && now.context == before.context
                    }
                    _ => false,
                });
        if contexts_known {
            // The held interfaces carry their settled contexts already.
            for path in &replaced {
                if let Some((ctx, extract)) = extracts.get_mut(path) {
                    if *ctx != extract.context {
                        *ctx = extract.context.clone();
                    }
                }
            }
        } else {
            summary.files_reparsed += settle_contexts(
                walked,
                graph,
                &layout_digest,
                opts.max_file_bytes,
                Settle {
                    batch: &mut batch,
                    extracts: &mut extracts,
                    bodies: &mut bodies,
                    replaced: &mut replaced,
                    new_files: &mut new_files,
                    unchanged: &mut unchanged,
                },
            );
        }
        let stored_counts = match building {
            true => None,
            false => read_counts(store, graph)?,
        };
        // Files given names rows only now (indexed before they were kept).
        let mut legacy_names: Vec<String> = Vec::new();
        // Only the files parsed now need resolving when none of them
        // changed what other files can see (see `Language::same_interface`).
        let narrow = usage_current
            && !reparsed_any
            && deleted.is_empty()
            && replaced.len() == replaced_before
            && stored_counts.as_ref().is_some_and(|c| c.ambiguous >= 0)
            && replaced.iter().all(|p| {
                let now = extracts.get(p).map(|(_, e)| e);
                let before = old_interfaces.get(p);
                matches!((now, before), (Some(n), Some(b)) if lang_of(n).same_interface(n, b))
            });
        // Some interface changed, within what names can bound: the files
        // that mention a touched name are resolved with the edited ones.
        let scoped = if !narrow
            && usage_current
            && !reparsed_any
            && deleted.is_empty()
            && replaced.len() == replaced_before
            && stored_counts.as_ref().is_some_and(|c| c.ambiguous >= 0)
        {
            scope_of_change(
                store,
                graph,
                &replaced,
                &old_interfaces,
                &extracts,
                &mut held_names,
            )?
        } else {
            None
        };
        if !narrow {
            // Join the other references of the files held as interfaces
            // that are resolved now: every file, or those in scope.
            let in_scope = |p: &str| scoped.as_ref().is_none_or(|s| s.contains(p));
            let held: Vec<&str> = unchanged
                .iter()
                .map(|f| f.ctx.path.as_str())
                .filter(|p| in_scope(p))
                .collect();
            // A database being built has no names rows from before they
            // were kept (and those of this run are staged with the extracts).
            let named = match scoped {
                Some(_) => None,
                None if building => None,
                None => Some(load_named_paths(store, graph)?),
            };
            let mut loaded_bodies = load_bodies(store, graph, &held)?;
            let mut missing: Vec<&SourceFile> = Vec::new();
            for file in unchanged.iter().filter(|f| in_scope(&f.ctx.path)) {
                let path = &file.ctx.path;
                match (loaded_bodies.remove(path), extracts.remove(path)) {
                    (Some(body), Some((ctx, iface))) => {
                        let whole = lang_of(&iface).join(iface, body);
                        extracts.insert(path.clone(), (ctx, whole));
                    }
                    (None, Some(_)) => missing.push(file),
                    _ => {}
                }
                // Indexes from before names were stored get them now.
                if let (Some(named), Some((_, ex))) = (&named, extracts.get(path)) {
                    if !named.contains(path) {
                        legacy_names.push(path.clone());
                        put_names(&mut batch, graph, path, ex);
                    }
                }
            }
            for (file, extract, body) in
                reparse_files(&missing, graph, opts, &layout_digest, &mut batch)
            {
                bodies.insert(file.ctx.path.clone(), body);
                extracts.insert(file.ctx.path.clone(), (file.ctx.clone(), extract));
            }
        }

        phases.lap("load");
        // A database being built lands each stage's rows as it goes (no
        // stage below reads what an earlier one wrote).
        land_early(store, &mut batch, &mut phases, "load")?;
        // Entities and their words first: they follow from the extracts
        // alone, and a database being built lands them while the
        // references are resolved, instead of after.
        phases.show("diff");
        // The changed sets are wanted only where text or usage rows are
        // updated, not rewritten whole.
        let written = write_entities(
            store,
            graph,
            &mut batch,
            &replaced,
            &deleted,
            ExtractsNowAndBefore {
                now: &extracts,
                before: &old_interfaces,
            },
            text_current || usage_current,
        )?;
        land_early(store, &mut batch, &mut phases, "diff")?;
        // Usage rows follow the entities whose facts changed and the
        // endpoints of changed edges, not every entity whose lines moved.
        let mut usage_touched = written.facts_changed;
        if opts.text_index {
            // The files that held or hold the touched entities.
            let text_files: BTreeSet<String> = match text_current {
                true => replaced.iter().chain(&deleted).cloned().collect(),
                false => BTreeSet::new(),
            };
            super::text::write(
                store,
                graph,
                &mut batch,
                &extracts,
                text_current.then_some(&text_files),
            )?;
            land_early(store, &mut batch, &mut phases, "diff")?;
            // Files: the words of those parsed now (of every file when the
            // text rows are written anew), and the files gone.
            if !text_current {
                let by_path: BTreeMap<&str, &SourceFile> = walked
                    .files
                    .iter()
                    .map(|f| (f.ctx.path.as_str(), f))
                    .collect();
                let missing: Vec<(String, super::text::FileWords)> = extracts
                    .keys()
                    .filter(|p| !words_now.contains_key(*p))
                    .filter_map(|p| by_path.get(p.as_str()).map(|f| (p, *f)))
                    .collect::<Vec<_>>()
                    .par_iter()
                    .filter_map(|(p, f)| {
                        let bytes = std::fs::read(&f.abs_path).ok()?;
                        let text = String::from_utf8_lossy(&bytes);
                        Some(((*p).clone(), super::text::FileWords::of(p, &text)))
                    })
                    .collect();
                words_now.extend(missing);
            }
            words_now.retain(|p, _| extracts.contains_key(p));
            let gone: BTreeSet<String> = replaced
                .iter()
                .chain(&deleted)
                .filter(|p| !extracts.contains_key(*p))
                .cloned()
                .collect();
            super::text::write_files(store, graph, &mut batch, &words_now, &gone, !text_current)?;
        } else {
            super::text::invalidate(graph, &mut batch);
        }
        // Every file's words, on a first index: not held through the
        // stages that follow.
        drop(words_now);
        land_early(store, &mut batch, &mut phases, "diff")?;
        phases.lap("diff");
        phases.show("resolve");
        // The references of the files resolved now that the table does not
        // read are held apart, and dropped once resolved: the links borrow
        // only the extracts, which later stages still read.
        let resolving = |p: &str| match &scoped {
            Some(scope) => scope.contains(p),
            None => !narrow || replaced.contains(p),
        };
        // Those of the files parsed now are held packed since the parse.
        let mut apart: RefsApart = extracts
            .par_iter_mut()
            .filter(|(p, _)| resolving(p) && !bodies.contains_key(*p))
            .filter_map(|(p, (_, ex))| {
                let body = lang_of(ex).take_apart(ex);
                (!body.is_empty()).then(|| (p.clone(), HeldRefs::Refs(body)))
            })
            .collect();
        for (p, body) in std::mem::take(&mut bodies) {
            if resolving(&p) && extracts.contains_key(&p) {
                apart.insert(p, HeldRefs::Packed(body));
            }
        }
        let inputs: Vec<(&FileContext, &FileExtract)> =
            extracts.values().map(|(c, e)| (c, e)).collect();
        if !narrow {
            // Some interface changed (or might have): the table is stale.
            // A server keeps the table of this run's interfaces: built
            // once, here, and the run resolves against it.
            // When no other file's context moved, the last table's
            // interfaces are reused and only the edited files' copied.
            resident = cache.keep_table.then(|| match resident.take() {
                Some(last) if contexts_known => {
                    let now = replaced
                        .iter()
                        .filter_map(|p| extracts.get(p))
                        .map(|(ctx, ex)| (ctx.clone(), lang_of(ex).interface_copy(ex)))
                        .collect();
                    last.update(&|p| replaced.contains(p), now)
                }
                _ => {
                    let copies = extracts
                        .values()
                        .map(|(ctx, ex)| (ctx.clone(), lang_of(ex).interface_copy(ex)))
                        .collect();
                    Tables::build(copies)
                }
            });
        }
        let picked = |keep: &dyn Fn(&str) -> bool| -> Vec<(&FileContext, &FileExtract)> {
            inputs
                .iter()
                .filter(|(_, e)| keep(&e.path))
                .copied()
                .collect()
        };
        // What the names rows kept by a server say of the files parsed now
        // reads their references: taken before those are dropped.
        let mut mentioned_now: BTreeMap<String, Vec<names::Name>> = match &held_names {
            Some(_) => replaced
                .iter()
                .filter_map(|p| {
                    let (_, ex) = extracts.get(p)?;
                    let lang = lang_of(ex);
                    let apart = apart.get(p).map(|h| h.to_refs(|b| lang.decode_body(b)));
                    Some((
                        p.clone(),
                        lang.mentioned_with(ex, apart.as_deref().unwrap_or(&[])),
                    ))
                })
                .collect(),
            None => BTreeMap::new(),
        };
        let mut links = match (&resident, &scoped) {
            (Some(table), _) if narrow || scoped.is_some() => {
                table.resolve_files(&picked(&resolving), apart)
            }
            (Some(table), _) => table.resolve_files(&inputs, apart),
            (None, _) => polyglot::resolve_files(&inputs, &resolving, apart),
        };
        let digests: BTreeMap<String, String> = links
            .par_iter()
            .map(|(p, l)| (p.clone(), l.digest()))
            .collect();
        phases.lap("resolve");
        phases.show("diff");
        let linked = write_links(
            store,
            graph,
            &mut batch,
            &links,
            &digests,
            &stored,
            &deleted,
            usage_current,
        )?;
        land_early(store, &mut batch, &mut phases, "diff")?;
        // The entities whose edges in changed, or that are new or changed
        // themselves; of the others, usage reads only the edges out.
        let mut usage_incoming = match usage_current {
            true => usage_touched.clone(),
            false => BTreeSet::new(),
        };
        usage_incoming.extend(linked.targets);
        usage_touched.extend(linked.endpoints);
        let usage_tested = linked.tested;
        let stats = match stored_counts.filter(|_| narrow || scoped.is_some()) {
            Some(old) => CodeCounts {
                entities: old.entities + written.entities_delta,
                edges: old.edges + linked.delta.edges,
                unresolved: old.unresolved + linked.delta.unresolved,
                ambiguous: old.ambiguous + linked.delta.ambiguous,
            },
            None => {
                let count =
                    |f: fn(&FileLinks) -> usize| links.values().map(f).sum::<usize>() as i64;
                CodeCounts {
                    entities: extracts
                        .values()
                        .map(|(_, e)| e.entities.len())
                        .sum::<usize>() as i64,
                    edges: count(|l| l.edges.len()),
                    unresolved: count(|l| l.unresolved.len()),
                    ambiguous: count(|l| l.ambiguous_count()),
                }
            }
        };
        // Usage reads the edges alone: the unresolved references, written
        // and counted now, are not held through it.
        for l in links.values_mut() {
            l.unresolved = Box::default();
        }
        phases.lap("diff");
        let usage_scope = match &scoped {
            Some(scope) => UsageScope::Around(scope),
            None if narrow => UsageScope::Around(&replaced),
            None => UsageScope::AllLinks,
        };
        write_usage(
            store,
            graph,
            &mut batch,
            &links,
            &extracts,
            usage_current.then_some(UsageTouched {
                keys: &usage_touched,
                tested: &usage_tested,
                incoming: &usage_incoming,
            }),
            usage_scope,
        )?;
        land_early(store, &mut batch, &mut phases, "usage")?;
        phases.lap("usage");
        phases.show("diff");
        let file_rows = write_files(
            graph,
            &mut batch,
            &new_files,
            &digests,
            &stored,
            &extracts,
            &deleted,
            &walked.files,
        );
        batch.put_row(CodeStatsRow {
            graph: graph.into(),
            files: walked.files.len() as i64,
            entities: stats.entities,
            edges: stats.edges,
            unresolved: stats.unresolved,
            ambiguous: stats.ambiguous,
        });
        let change = store
            .begin_graph_change(graph)?
            .with_source(root.display().to_string());
        batch.lands_as(change);
        summary.rows_written = batch.landed_early().rows + batch.len();
        summary.files_resolved = links.len();
        // Nothing below reads the links: not held while the last rows land.
        drop(links);
        phases.lap("diff");
        phases.show("write");
        store.apply(batch)?;
        phases.lap("write");
        // The stored file rows as this run left them.
        for (path, row) in file_rows {
            match row {
                Some(row) => stored.insert(path, row),
                None => stored.remove(&path),
            };
        }
        // The names rows this run wrote: those of the files parsed now
        // (whole extracts still), none of the files gone. A run that
        // parsed files again for another reason drops the held names.
        match (&mut held_names, reparsed_any || !legacy_names.is_empty()) {
            (Some(held), false) => {
                for path in replaced.iter().chain(&deleted) {
                    match extracts.get(path) {
                        Some((_, ex)) => {
                            let mentioned = mentioned_now.remove(path).unwrap_or_default();
                            held.set(path, mentioned, lang_of(ex).spread_facts(ex));
                        }
                        None => held.remove(path),
                    }
                }
                held.settle();
            }
            _ => held_names = None,
        }
        cache.graph = graph.to_string();
        for (_, ex) in extracts.values_mut() {
            lang_of(ex).keep_interface(ex);
        }
        if cache.keep_table {
            cache.table = resident.or_else(|| {
                let copies = extracts.values().cloned().collect();
                Some(Tables::build(copies))
            });
        }
        cache.interfaces = extracts;
    }

    if opts.history {
        phases.show("history");
    }
    if opts.history && super::history::refresh(store, graph, root)? {
        phases.lap("history");
    }
    if !nothing_changed {
        // The caller holds the write lock: no other writer came between.
        cache.seq = store.graph_seq(graph)?;
    }

    let all_files: Vec<&SourceFile> = if same_files {
        Vec::new()
    } else {
        walked.files.iter().collect()
    };
    record_stats(
        store,
        graph,
        if same_files {
            StatFiles::Some(&examined)
        } else {
            StatFiles::Every(&all_files)
        },
        &stored,
        &layout_digest,
        &mut stats,
        run_started_ns,
    )?;
    let seq_after = store.graph_seq(graph)?;
    if cache.keep_table {
        cache.files = Some(ResidentFiles {
            graph: graph.to_string(),
            seq: seq_after,
            states: stored,
            stats,
            names: held_names,
        });
        cache.walk = snapshot;
    }

    if let Some(c) = read_counts(store, graph)? {
        summary.entities = c.entities;
        summary.edges = c.edges;
        summary.unresolved = c.unresolved;
        summary.ambiguous = c.ambiguous;
    }
    if summary.ambiguous < 0 {
        // Last written before the count was kept: count once by a scan.
        let ambiguous = store.read(queries::AMBIGUOUS_COUNT, Params::new().with("graph", graph))?;
        summary.ambiguous = decode_first::<AmbiguousCount>(&ambiguous)
            .map_err(StoreError::from)?
            .map_or(0, |r| r.ambiguous);
    }
    summary.seq = seq_after;
    summary.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    summary.phases_ms = std::mem::take(&mut phases.done);
    super::fresh::note_run(store, &summary, graph, seq_after != seq_before);
    Ok(summary)
}

/// The files to resolve after an edit that changed interfaces: the edited
/// files and every file that mentions a name the change touches (see
/// [`names`]). `None` when the change is not bounded by names
/// or a file's names are not stored.
fn scope_of_change(
    store: &Store,
    graph: &str,
    replaced: &BTreeSet<String>,
    old_interfaces: &BTreeMap<String, FileExtract>,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    held: &mut Option<HeldNames>,
) -> Result<Option<BTreeSet<String>>, StoreError> {
    let mut touched = rustc_hash::FxHashSet::default();
    for path in replaced {
        let (Some(before), Some((_, now))) = (old_interfaces.get(path), extracts.get(path)) else {
            return Ok(None);
        };
        match lang_of(now).changed_names(before, now) {
            Some(t) => touched.extend(t),
            None => return Ok(None),
        }
    }
    let held = match held {
        Some(names) => names,
        None => held.insert(HeldNames::load(store, graph, extracts)?),
    };
    // Every other file's names are held, or the scope is not bounded.
    let mut held_paths = held.mentioned.keys().peekable();
    for path in extracts.keys().filter(|p| !replaced.contains(*p)) {
        while held_paths.next_if(|held| *held < path).is_some() {}
        if held_paths.next_if(|held| *held == path).is_none() {
            return Ok(None);
        }
    }
    // The held facts are the last run's: the edited files' are taken now.
    let edited: Vec<names::SpreadFacts> = replaced
        .iter()
        .filter_map(|p| extracts.get(p))
        .map(|(_, ex)| lang_of(ex).spread_facts(ex))
        .collect();
    let replaced_paths: Vec<&str> = replaced.iter().map(String::as_str).collect();
    held.reach.spread(&mut touched, &replaced_paths, &edited);
    let mut scope = replaced.clone();
    scope.extend(
        held.reach
            .mentioning(&touched)
            .into_iter()
            .filter(|p| extracts.contains_key(*p))
            .map(str::to_string),
    );
    Ok(Some(scope))
}

/// [`Store::land_early`], its time counted as writing, as is the time the
/// stage's writers spent landing full chunks ([`Store::land_when_full`]).
fn land_early(
    store: &Store,
    batch: &mut Batch,
    phases: &mut Phases,
    running: &'static str,
) -> Result<(), StoreError> {
    phases.lap_landing(running, batch);
    store.land_early(batch)?;
    phases.lap_landing("write", batch);
    Ok(())
}

/// Wall-clock time per pipeline phase, reported in the summary, and the
/// terminal's progress line: it names the phase running and keeps moving
/// during it (counting files while they are parsed).
struct Phases {
    last: Instant,
    done: BTreeMap<&'static str, f64>,
    /// Early landings already counted as writing ([`Phases::lap_landing`]).
    landing_seen: std::time::Duration,
    bar: indicatif::ProgressBar,
}

impl Phases {
    fn new(progress: bool) -> Phases {
        let bar = if progress {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(Phases::style("{spinner} indexing: {msg} {elapsed}"));
            bar.set_message("walk");
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        Phases {
            last: Instant::now(),
            done: BTreeMap::new(),
            landing_seen: std::time::Duration::ZERO,
            bar,
        }
    }

    fn style(template: &str) -> indicatif::ProgressStyle {
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner())
    }

    /// Show `name` as the phase running.
    fn show(&self, name: &'static str) {
        self.bar
            .set_style(Phases::style("{spinner} indexing: {msg} {elapsed}"));
        self.bar.set_message(name);
    }

    /// Show `name` as the phase running, counting `len` files: the bar
    /// returned moves with each `inc`.
    fn counted(&self, name: &'static str, len: u64) -> indicatif::ProgressBar {
        self.bar.set_style(Phases::style(
            "{spinner} indexing: {msg} {pos}/{len} files {wide_bar}",
        ));
        self.bar.set_length(len);
        self.bar.set_position(0);
        self.bar.set_message(name);
        self.bar.clone()
    }

    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        *self.done.entry(name).or_insert(0.0) += (now - self.last).as_secs_f64() * 1000.0;
        self.last = now;
    }

    /// [`Phases::lap`], with the time `batch` spent landing rows since the
    /// last such lap moved from `name` to `write`.
    fn lap_landing(&mut self, name: &'static str, batch: &Batch) {
        self.lap(name);
        let landing = batch.landed_early().time;
        let moved = landing.saturating_sub(self.landing_seen).as_secs_f64() * 1000.0;
        self.landing_seen = landing;
        if let Some(ms) = self.done.get_mut(name) {
            *ms -= moved;
        }
        *self.done.entry("write").or_insert(0.0) += moved;
    }
}

impl Drop for Phases {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// What a file's stored hash and stat row were computed under: every
/// language's extract version and layout (see [`super::polyglot::Layouts::key`]).
/// A stat row made under another version vouches for nothing, so a new
/// graphctx parses again.
fn layout_key(walked: &walk::WalkResult) -> String {
    // The text index reads entities' words from parses (see
    // `text::TEXT_VERSION`): a new text version parses every file again.
    format!("{} text {}", walked.layout.key(), super::text::TEXT_VERSION)
}

/// The stored hash of a file: blake3 over its language's extract
/// version, the layout key (a file may belong to another crate when the
/// targets change) and the bytes.
fn content_hash(file: &SourceFile, bytes: &[u8], layout_digest: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(
        super::languages::get(file.lang)
            .extract_version()
            .as_bytes(),
    );
    h.update(&[0]);
    h.update(layout_digest.as_bytes());
    h.update(&[0]);
    h.update(bytes);
    h.finalize().to_hex().to_string()
}

/// Read, hash and (if changed) parse one file. Never panics on content.
fn examine(
    extractors: &mut Extractors,
    file: &SourceFile,
    stored: Option<&StoredFile>,
    max_bytes: u64,
    layout_digest: &str,
    with_words: bool,
    trees: Option<&HeldTrees>,
) -> Outcome {
    if file.bytes > max_bytes {
        return Outcome::Skipped(format!(
            "larger than the {max_bytes}-byte limit ({} bytes)",
            file.bytes
        ));
    }
    let mut bytes = Vec::with_capacity(file.bytes as usize);
    let read = std::fs::File::open(&file.abs_path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Outcome::Skipped(format!("unreadable: {e}"));
    }
    if bytes.len() as u64 > max_bytes {
        return Outcome::Skipped(format!("larger than the {max_bytes}-byte limit"));
    }
    let hash = content_hash(file, &bytes, layout_digest);
    if let Some(s) = stored {
        if s.hash == hash && s.status != "skipped" {
            return Outcome::Unchanged;
        }
    }
    if bytes.contains(&0) {
        return Outcome::Skipped("binary file (contains NUL bytes)".into());
    }
    let (text, note) = match String::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Some(format!(
                "not valid UTF-8 (first bad byte at offset {}); invalid bytes replaced",
                e.utf8_error().valid_up_to()
            )),
        ),
    };
    // A save parses one file: its words, and then its stored forms, are
    // made on the other core while the extract, and then the other form,
    // are (a quarter of a large file's parse each; a first index has
    // every core busy with files, and these are simply queued).
    let extractor = extractors.of(file.lang);
    let (extract, words) = rayon::join(
        || {
            Box::new(match trees {
                Some(trees) => trees.extract(extractor, &file.ctx, &text),
                None => extractor.extract(&file.ctx, &text),
            })
        },
        || with_words.then(|| super::text::FileWords::of(&file.ctx.path, &text)),
    );
    let mut extract = extract;
    let lang = lang_of(&extract);
    let (stored, names) = rayon::join(
        || lang.encode(&extract),
        || names::encode(&lang.mentioned(&extract)),
    );
    // The other references are read again only when the file is resolved,
    // from `stored.body`: held decoded until then, they were a fifth of a
    // large tree's memory.
    drop(lang.take_apart(&mut extract));
    Outcome::Parsed {
        hash,
        extract,
        stored,
        names,
        note,
        words,
    }
}

/// Parse every file of a first index in module order: the crate roots,
/// then each file as soon as the file that declares it is parsed, in the
/// context its declaration gives it; the files no declaration reaches
/// last, in their guessed contexts. A file's context (its module path,
/// hence its keys) is known from its parent's declarations only, so
/// parsing in path order first parses every file whose guess was wrong
/// twice (`settle_contexts`) — a `#[path]` module, a test target's module
/// directory: a sixth of the bytes of the registry tree.
///
/// No level waits for its slowest file: a crate of a few dozen files has
/// few levels, and one large file held the other core idle at each. A
/// file declared by two parents is parsed in the context of whichever
/// declaration is seen first, which need not be the one
/// [`Layout::reached_contexts`] chooses; so once every file is parsed,
/// the contexts are settled by that walk over the declarations found, and
/// a file parsed in any other context is parsed again in its own (its
/// declarations do not depend on its context, so the walk stays the
/// same). The result is the same whatever order the threads ran in;
/// how many files were parsed again is returned with it.
///
/// [`Layout::reached_contexts`]: super::lang::Layout::reached_contexts
fn parse_in_module_order(
    walked: &walk::WalkResult,
    parse_one: &ParseOne<'_>,
) -> ((Vec<Outcome>, Vec<bool>), usize) {
    let paths: BTreeSet<String> = walked.files.iter().map(|f| f.ctx.path.clone()).collect();
    let index_of: std::collections::HashMap<&str, usize> = walked
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.ctx.path.as_str(), i))
        .collect();
    let tree = ModuleTreeParse {
        walked,
        parse_one,
        paths: &paths,
        index_of: &index_of,
        claimed: walked
            .files
            .iter()
            .map(|_| AtomicBool::new(false))
            .collect(),
        done: walked.files.iter().map(|_| OnceLock::new()).collect(),
        extractors: Mutex::new(Vec::new()),
    };
    rayon::scope(|scope| {
        for (root, ctx) in walked.layout.root_contexts(&paths) {
            if let Some(&i) = index_of.get(root.as_str()) {
                tree.claimed[i].store(true, Ordering::Relaxed);
                let tree = &tree;
                scope.spawn(move |scope| tree.parse(scope, i, ctx, true));
            }
        }
    });
    let (parsed_in, mut done): (Vec<_>, Vec<_>) = tree
        .done
        .into_iter()
        .map(|slot| match slot.into_inner() {
            Some((ctx, outcome)) => (Some(ctx), Some(outcome)),
            None => (None, None),
        })
        .unzip();
    // The contexts the declarations give, walked in their order; every
    // file not parsed in its own is parsed again (or, never reached, in
    // its guessed context).
    let settled = walked.layout.reached_contexts(&paths, &|p| match index_of
        .get(p)
        .and_then(|&i| done[i].as_ref())
    {
        Some((Outcome::Parsed { extract, .. }, _)) => Some(&extract.mods[..]),
        _ => None,
    });
    let again: Vec<(usize, Option<FileContext>)> = walked
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let own = settled.get(&f.ctx.path);
            let right = done[i].is_some() && parsed_in[i].as_ref() == own;
            (!right).then(|| (i, own.cloned()))
        })
        .collect();
    let parsed_again = again.iter().filter(|(i, _)| done[*i].is_some()).count();
    parse_level(walked, parse_one, &again, &mut done);
    (done.into_iter().flatten().unzip(), parsed_again)
}

/// A file's parse (its outcome and whether the stat rows vouched for it)
/// and the context it was parsed in.
type ParsedIn = (FileContext, (Outcome, bool));

/// The shared state of [`parse_in_module_order`]'s walk down the module
/// tree: which files a declaration has claimed, what each parse gave and
/// in which context, and the extractors not in use (a thread waiting in a
/// parse may start another, so each parse takes one of its own).
struct ModuleTreeParse<'w> {
    walked: &'w walk::WalkResult,
    parse_one: &'w ParseOne<'w>,
    paths: &'w BTreeSet<String>,
    index_of: &'w std::collections::HashMap<&'w str, usize>,
    claimed: Vec<AtomicBool>,
    /// Set once, by the parse that claimed the file.
    done: Vec<OnceLock<ParsedIn>>,
    extractors: Mutex<Vec<Extractors>>,
}

impl<'w> ModuleTreeParse<'w> {
    /// Parse file `i` in `ctx`, then the files its declarations reach
    /// that no other declaration claimed, each as a task of its own.
    fn parse<'s>(&'s self, scope: &rayon::Scope<'s>, i: usize, ctx: FileContext, mod_rs: bool) {
        let taken = self
            .extractors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut extractor = taken.unwrap_or_default();
        let outcome = (self.parse_one)(&mut extractor, &self.walked.files[i], Some(&ctx));
        self.extractors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(extractor);
        if let (Outcome::Parsed { extract, .. }, _) = &outcome {
            let file = &self.walked.files[i];
            let children = self.walked.layout.child_contexts(
                file.lang,
                &file.ctx.path,
                mod_rs,
                &ctx,
                &extract.mods,
                self.paths,
            );
            for (child, child_mod_rs, child_ctx) in children {
                let Some(&j) = self.index_of.get(child.as_str()) else {
                    continue;
                };
                if !self.claimed[j].swap(true, Ordering::AcqRel) {
                    scope.spawn(move |scope| self.parse(scope, j, child_ctx, child_mod_rs));
                }
            }
        }
        // Only the claim's parse sets it: a second `set` cannot happen.
        let _ = self.done[i].set((ctx, outcome));
    }
}

/// Parse the files at `level` (indexes into the walk, each with the
/// context settled for it, if any) in parallel into `done`.
fn parse_level(
    walked: &walk::WalkResult,
    parse_one: &ParseOne<'_>,
    level: &[(usize, Option<FileContext>)],
    done: &mut [Option<(Outcome, bool)>],
) {
    let parsed: Vec<(usize, (Outcome, bool))> = level
        .par_iter()
        .map_init(Extractors::default, |x, (i, ctx)| {
            (*i, parse_one(x, &walked.files[*i], ctx.as_ref()))
        })
        .collect();
    for (i, outcome) in parsed {
        done[i] = Some(outcome);
    }
}

/// How [`index_repository_cached`] parses one file, in the context given
/// when one is settled for it.
type ParseOne<'a> =
    dyn Fn(&mut Extractors, &SourceFile, Option<&FileContext>) -> (Outcome, bool) + Sync + 'a;

/// `ok` or `partial`, and why, for a file's row.
fn parse_status(extract: &FileExtract, note: Option<&str>) -> (&'static str, String) {
    let status = match extract.status {
        ParseStatus::Ok if note.is_none() => "ok",
        _ => "partial",
    };
    let reason = match (note, extract.syntax_errors) {
        (Some(n), _) => n.to_string(),
        (None, 0) => String::new(),
        (None, n) => format!("{n} syntax error(s); kept what parsed"),
    };
    (status, reason)
}

/// What [`settle_contexts`] updates.
struct Settle<'b, 'w> {
    batch: &'b mut Batch,
    extracts: &'b mut BTreeMap<String, (FileContext, FileExtract)>,
    bodies: &'b mut BTreeMap<String, Vec<u8>>,
    replaced: &'b mut BTreeSet<String>,
    new_files: &'b mut BTreeMap<String, (String, u64, String, String)>,
    unchanged: &'b mut Vec<&'w SourceFile>,
}

/// Places every file in its crate and module now that the `mod`
/// declarations of all files are known, and extracts again the files whose
/// extract was made for another place (keys contain the module path). The
/// contexts are a function of the targets and every file's declarations,
/// so a full and an incremental run settle on the same ones.
fn settle_contexts<'w>(
    walked: &'w walk::WalkResult,
    graph: &str,
    layout_digest: &str,
    max_bytes: u64,
    s: Settle<'_, 'w>,
) -> usize {
    let paths: BTreeSet<String> = s.extracts.keys().cloned().collect();
    let contexts = walked
        .layout
        .contexts(&paths, &|p| s.extracts.get(p).map(|(_, e)| &e.mods[..]));
    let by_path: BTreeMap<&str, &SourceFile> = walked
        .files
        .iter()
        .map(|f| (f.ctx.path.as_str(), f))
        .collect();
    let mut moved: Vec<SourceFile> = Vec::new();
    for (path, ctx) in contexts {
        let Some((held, extract)) = s.extracts.get_mut(&path) else {
            continue;
        };
        if extract.context == ctx {
            *held = ctx;
        } else if let Some(file) = by_path.get(path.as_str()) {
            let mut file = (*file).clone();
            file.ctx = ctx;
            moved.push(file);
        }
    }
    if moved.is_empty() {
        return 0;
    }
    // A chunk at a time: each new extract replaces its file's old one
    // before the next chunk is parsed, so the run never holds both of
    // every moved file (a tenth of a large tree's files can move).
    let mut reparsed: BTreeSet<String> = BTreeSet::new();
    for chunk in moved.chunks(SETTLE_CHUNK) {
        let outcomes: Vec<Outcome> = chunk
            .par_iter()
            .map_init(Extractors::default, |x, f| {
                examine(x, f, None, max_bytes, layout_digest, false, None)
            })
            .collect();
        for (file, outcome) in chunk.iter().zip(outcomes) {
            let Outcome::Parsed {
                hash,
                extract,
                stored,
                names,
                note,
                ..
            } = outcome
            else {
                continue;
            };
            let path = file.ctx.path.clone();
            let (status, reason) = parse_status(&extract, note.as_deref());
            s.bodies.insert(path.clone(), stored.body.clone());
            put_extract(s.batch, graph, &path, stored, names);
            s.new_files
                .insert(path.clone(), (hash, file.bytes, status.to_string(), reason));
            s.replaced.insert(path.clone());
            reparsed.insert(path.clone());
            s.extracts.insert(path, (file.ctx.clone(), *extract));
        }
    }
    s.unchanged.retain(|f| !reparsed.contains(&f.ctx.path));
    reparsed.len()
}

/// Files [`settle_contexts`] parses again at once.
const SETTLE_CHUNK: usize = 64;

/// Parse files whose stored extract could not be read, and store the new
/// extracts. Their stored hash stays: the content is the one it names.
/// Each comes with its other references in their stored form (see
/// `Outcome::Parsed`).
fn reparse_files<'f>(
    files: &[&'f SourceFile],
    graph: &str,
    opts: &IndexOptions,
    layout_digest: &str,
    batch: &mut Batch,
) -> Vec<(&'f SourceFile, FileExtract, Vec<u8>)> {
    let mut out = Vec::new();
    let mut extractors = Extractors::default();
    for &file in files {
        if let Outcome::Parsed {
            extract,
            stored,
            names,
            ..
        } = examine(
            &mut extractors,
            file,
            None,
            opts.max_file_bytes,
            layout_digest,
            false,
            None,
        ) {
            let body = stored.body.clone();
            put_extract(batch, graph, &file.ctx.path, stored, names);
            out.push((file, *extract, body));
        }
    }
    out
}

/// Files whose content differs from what the index of `graph` holds —
/// changed, new or deleted since the last index run — found without
/// writing anything. An answer read while another process holds the write
/// lock names these, since it may not reflect them.
pub fn stale_files(store: &Store, root: &Path, graph: &str) -> Result<Vec<String>, StoreError> {
    let walked = walk::walk(root);
    let layout_digest = layout_key(&walked);
    let stored = load_file_states(store, graph)?;
    let stats = load_file_stats(store, graph)?;
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

#[cfg(test)]
#[path = "pipeline_stat_tests.rs"]
mod stat_tests;
