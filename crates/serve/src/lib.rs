//! Serving editors and agents over the live index: `graphctx lsp` and
//! `graphctx mcp`.
//!
//! Both servers share one [`Workspace`]: the repository root, its store and
//! a token counter. Why the split below:
//!
//! - [`nav`] answers editor questions (what is under the cursor, where is it
//!   defined, who refers to it, hover text, symbols, call hierarchy) from
//!   the stored graph, in protocol-free types, so every handler is testable
//!   in-process without a client;
//! - [`tools`] is the MCP tool registry (name, JSON schema, handler), also
//!   protocol-free; adding a tool is one entry ([`graph_tools`] adds the
//!   ontology and canvas tools);
//! - [`lsp`] and [`mcp`] are thin adapters from tower-lsp-server and rmcp
//!   to those two;
//! - [`watch`] keeps the index current: a refresher thread that coalesces
//!   triggers (saves, debounced edits, file-system events) into incremental
//!   index runs; [`quiet`] lets an answer over a tree the watch saw no
//!   change in skip the index run that would otherwise make it fresh.
//!
//! Concurrency: servers and CLI commands may share one `.graphctx/`. A
//! refresh takes the database's [`WriteLock`] with `try_acquire`; when
//! another process holds it, the refresh reports [`Refresh::Busy`] and the
//! refresher retries later — answers never wait for it. Answers read the
//! committed state (each index run lands in one transaction; SQLite in WAL
//! mode gives readers a consistent snapshot), so they never see half of a
//! run.

use graphctx_analyse as analyse;
use graphctx_apply::assistant;
use graphctx_apply::canvas;
use graphctx_apply::capture;
use graphctx_apply::operations;
use graphctx_base::model;
use graphctx_base::support;
use graphctx_emit as emit;
use graphctx_graph as graph;
use graphctx_index as index;
use graphctx_llm as llm;
use graphctx_search as search;
use graphctx_store as store;

pub mod ask_tool;
pub mod code_tools;
pub mod graph_tools;
pub mod lsp;
pub mod mcp;
pub mod nav;
pub mod presence;
pub mod quiet;
pub mod registry;
pub mod tools;
pub mod watch;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::emit::ContextError;
use crate::graph::EntityRow;
use crate::index::held_trees::{self, HeldTrees};
use crate::index::languages;
use crate::index::{
    index_repository, index_repository_cached, IndexError, IndexOptions, IndexSummary,
    InterfaceCache, Warmed,
};
use crate::store::lock::WriteLock;
use crate::store::{Location, Store, StoreError};
use crate::support::tokens::{Encoding, TokenCounter};

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error("{path} is outside the workspace {root}; graphctx answers only for files inside it")]
    OutsideWorkspace { path: String, root: String },
    #[error("{0}")]
    BadRequest(String),
    #[error(transparent)]
    Context(#[from] ContextError),
}

/// What a refresh did.
#[derive(Debug)]
pub enum Refresh {
    /// An index run landed (possibly writing nothing when nothing changed).
    Done(Box<IndexSummary>),
    /// Another process holds the write lock; nothing was done.
    Busy(String),
}

#[derive(Default)]
struct Progress {
    /// Index runs that finished in this process.
    runs: u64,
    /// Set once the first run finished (or failed): the index is usable.
    ready: bool,
}

/// A repository being served: root, store, graph name, shared caches.
pub struct Workspace {
    root: PathBuf,
    graph: String,
    store: Store,
    counter: TokenCounter,
    /// One refresh at a time inside this process (the file lock covers
    /// other processes; it does not exclude threads of one process). It
    /// holds the interfaces the last run left (see [`InterfaceCache`]), so
    /// a run after a save does not read every file's from the store.
    refreshing: Mutex<InterfaceCache>,
    /// Syntax trees of the files open in the editor (also in `refreshing`).
    trees: Arc<HeldTrees>,
    progress: Mutex<Progress>,
    progressed: Condvar,
    /// `workspace/symbol` table, valid for the graph seq it was read at.
    symbols: Mutex<Option<(i64, Arc<Vec<EntityRow>>)>>,
    /// What the file watch (when one runs) saw since the last run: an
    /// answer over a quiet tree needs no index run (see [`quiet`]).
    changes: Arc<quiet::Changes>,
    /// The posting lists text searches read, held for the next ones.
    held_lists: Arc<search::HeldLists>,
}

impl Workspace {
    /// Open (creating if needed) the index of `root` at `location` (default:
    /// `root/.graphctx/graph.db`). Does not index; see [`Workspace::refresh`].
    pub fn open(
        root: &Path,
        location: Option<Location>,
        graph: &str,
    ) -> Result<Arc<Workspace>, ServeError> {
        if !root.is_dir() {
            return Err(ServeError::BadRequest(format!(
                "workspace root {} is not a directory",
                root.display()
            )));
        }
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let location = location.unwrap_or_else(|| Location::default_for(&root));
        let store = Store::open(&location)?;
        let trees = Arc::new(HeldTrees::default());
        let held_lists = Arc::new(search::HeldLists::new(&store));
        let ws = Workspace {
            root,
            graph: graph.to_string(),
            store,
            counter: TokenCounter::new(Encoding::O200k),
            refreshing: Mutex::new(InterfaceCache::with_symbol_table().with_trees(trees.clone())),
            trees,
            progress: Mutex::new(Progress::default()),
            progressed: Condvar::new(),
            symbols: Mutex::new(None),
            changes: Arc::default(),
            held_lists,
        };
        ws.counter.prepare_in_background();
        // An existing index answers at once (the first run brings it
        // current meanwhile); a new one is waited for.
        if ws.seq()? > 0 {
            ws.mark_ready();
        }
        Ok(Arc::new(ws))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn graph(&self) -> &str {
        &self.graph
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn counter(&self) -> &TokenCounter {
        &self.counter
    }

    /// The posting lists this server's text searches hold between them.
    pub fn held_lists(&self) -> Arc<search::HeldLists> {
        self.held_lists.clone()
    }

    /// Bring the index current with an incremental run, unless another
    /// process is writing (then [`Refresh::Busy`] at once). `history`
    /// also refreshes git co-change weights (slower; servers do it on the
    /// first run only).
    pub fn refresh(&self, history: bool) -> Result<Refresh, ServeError> {
        let mut cache = self.refreshing.lock().unwrap_or_else(|p| p.into_inner());
        let lock = match WriteLock::try_acquire(self.store.location()) {
            Ok(l) => l,
            Err(StoreError::Busy(msg)) => return Ok(Refresh::Busy(msg)),
            Err(e) => return Err(e.into()),
        };
        let opts = IndexOptions {
            graph: self.graph.clone(),
            progress: false,
            history,
            ..IndexOptions::default()
        };
        let seen = self.changes.before_run();
        if let Some(changed) = self.changes.take_watched() {
            cache.watched(changed);
        }
        // Read under the write lock: no other process lands meanwhile.
        let seq_before = self.seq()?;
        let result = index_repository_cached(&self.store, &self.root, &opts, &mut cache);
        drop(lock);
        if let Ok(summary) = &result {
            self.held_lists.after_run(
                &self.graph,
                seq_before,
                summary.seq,
                &summary.lists_rewritten,
            );
        }
        match &result {
            Ok(_) => self.changes.indexed(seen),
            // The watch will not report what this run missed again.
            Err(_) => cache.forget_walk(),
        }
        self.finish_run();
        Ok(Refresh::Done(Box::new(result?)))
    }

    /// The entities of the file at `rel` from the interfaces this server
    /// holds, in source order, as the store would list them: `None` while
    /// a run holds them, or when they are not the store's now (no run in
    /// this process yet, another writer since, a file not held).
    pub fn held_entities_of(&self, rel: &str) -> Result<Option<Vec<EntityRow>>, ServeError> {
        let Ok(cache) = self.refreshing.try_lock() else {
            return Ok(None);
        };
        let seq = self.seq()?;
        let Some(entities) = cache.entities_of(&self.graph, seq, rel) else {
            return Ok(None);
        };
        // One row per key, as stored: a key declared twice holds the
        // values put last.
        let mut rows: BTreeMap<&str, EntityRow> = BTreeMap::new();
        for e in entities {
            rows.insert(
                e.key.as_ref(),
                EntityRow {
                    key: e.key.to_string(),
                    kind: e.kind.as_str().to_string(),
                    name: e.name.clone(),
                    file: e.file.to_string(),
                    start_line: e.start_line as i64,
                    end_line: e.end_line as i64,
                    visibility: e.visibility.as_str().to_string(),
                    is_test: e.is_test,
                },
            );
        }
        let mut rows: Vec<EntityRow> = rows.into_values().collect();
        rows.sort_by(|a, b| (a.start_line, &a.key).cmp(&(b.start_line, &b.key)));
        Ok(Some(rows))
    }

    /// The editor opened the file at `rel`: hold its syntax tree from now
    /// on, so that the run after each save parses it incrementally (see
    /// [`HeldTrees`]). Parses it now (the caller runs this off the request
    /// path).
    pub fn hold_tree(&self, rel: &str) {
        let Some(lang) = languages::of_file(rel) else {
            return;
        };
        self.trees.want(rel);
        // Opened again: the tree held is current (runs replace it).
        if self.trees.holds(rel) {
            return;
        }
        let path = self.absolute(rel);
        // A file too large to hold is parsed by the runs as any other.
        let fits = std::fs::metadata(&path).is_ok_and(|m| m.len() <= held_trees::MAX_BYTES as u64);
        if let (true, Ok(bytes)) = (fits, std::fs::read(&path)) {
            // As a run reads it (a Python file in its declared encoding).
            let (text, _) = lang.decode(bytes);
            self.trees.parse_now(&mut *lang.extractor(), rel, &text);
        }
    }

    /// The editor closed the file at `rel`: its tree is not held any more.
    pub fn release_tree(&self, rel: &str) {
        self.trees.release(rel);
    }

    /// Whether the syntax tree of the file at `rel` is held.
    pub fn holds_tree(&self, rel: &str) -> bool {
        self.trees.holds(rel)
    }

    /// Read what the next run after a save needs (every interface, the
    /// symbol table) ahead of the first save, after a first run that found
    /// the index current. Runs and answers that refresh go on while it
    /// reads; what it read is put in only if none changed the index
    /// meanwhile. Servers call it right after their first run.
    pub fn warm(&self) -> Result<(), ServeError> {
        let lock = || self.refreshing.lock().unwrap_or_else(|p| p.into_inner());
        let Some(seq) = lock().wants_warming(&self.store, &self.graph)? else {
            return Ok(());
        };
        // Read without holding the cache: a run or an answer that brings
        // the index current meanwhile does not wait for it (on the
        // registry tree it takes about two seconds).
        if let Some(warmed) = Warmed::read(&self.store, &self.graph, seq)? {
            lock().take_warmed(&self.store, warmed)?;
        }
        Ok(())
    }

    /// Bring the index current before answering: an incremental run
    /// (parsing only what changed; nothing when nothing did), or, when
    /// another process holds the write lock, the files the answer cannot
    /// reflect (changed, new or deleted since they were indexed).
    /// A tree the file watch saw no change in since the last run began
    /// needs no run.
    pub fn ensure_current(&self) -> Result<Vec<String>, ServeError> {
        if self.changes.quiet() {
            return Ok(Vec::new());
        }
        match self.refresh(false)? {
            Refresh::Done(_) => Ok(Vec::new()),
            Refresh::Busy(_) => Ok(crate::index::pipeline::stale_files(
                &self.store,
                &self.root,
                &self.graph,
            )?),
        }
    }

    /// Like [`Workspace::refresh`], but when busy, wait for the other
    /// writer (retrying every `retry`) until the run lands.
    pub fn refresh_waiting(
        &self,
        history: bool,
        retry: Duration,
    ) -> Result<IndexSummary, ServeError> {
        loop {
            match self.refresh(history)? {
                Refresh::Done(s) => return Ok(*s),
                Refresh::Busy(_) => std::thread::sleep(retry),
            }
        }
    }

    /// Mark the index usable without an index run in this process (a
    /// failed first run, or a server started with no refresh).
    pub fn mark_ready(&self) {
        let mut p = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        p.ready = true;
        self.progressed.notify_all();
    }

    fn finish_run(&self) {
        let mut p = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        p.runs += 1;
        p.ready = true;
        self.progressed.notify_all();
    }

    /// Index runs finished in this process so far.
    pub fn runs(&self) -> u64 {
        self.progress.lock().map(|p| p.runs).unwrap_or(0)
    }

    /// Wait until the index is usable: at once for an index that existed
    /// when the workspace was opened, else until the first index run
    /// finished (or `timeout` passed) — answers before that would come
    /// from an empty index.
    pub fn wait_ready(&self, timeout: Duration) -> bool {
        let p = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        let (p, _) = self
            .progressed
            .wait_timeout_while(p, timeout, |p| !p.ready)
            .unwrap_or_else(|p| p.into_inner());
        p.ready
    }

    /// Wait until more than `runs` index runs have finished.
    pub fn wait_runs_after(&self, runs: u64, timeout: Duration) -> bool {
        let p = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        let (p, _) = self
            .progressed
            .wait_timeout_while(p, timeout, |p| p.runs <= runs)
            .unwrap_or_else(|p| p.into_inner());
        p.runs > runs
    }

    /// The repository-relative `/`-separated path of `path`, refusing paths
    /// outside the workspace (also through `..` or symlinks).
    pub fn relative(&self, path: &Path) -> Result<String, ServeError> {
        let outside = || ServeError::OutsideWorkspace {
            path: path.display().to_string(),
            root: self.root.display().to_string(),
        };
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        // Canonicalise what exists (a deleted file still has a parent).
        let resolved = match abs.canonicalize() {
            Ok(p) => p,
            Err(_) => match (
                abs.parent().and_then(|d| d.canonicalize().ok()),
                abs.file_name(),
            ) {
                (Some(dir), Some(name)) => dir.join(name),
                _ => lexical_normalize(&abs),
            },
        };
        let rel = resolved.strip_prefix(&self.root).map_err(|_| outside())?;
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            return Err(outside());
        }
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.is_empty() {
            return Err(ServeError::BadRequest(format!(
                "{} is the workspace root, not a file",
                path.display()
            )));
        }
        Ok(parts.join("/"))
    }

    /// The absolute path of a repository-relative file.
    pub fn absolute(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

/// [`Workspace::ensure_current`] for a one-shot reader (the CLI): the
/// index of `root` in `store` brought current, or the stale files named
/// when another process is writing.
pub fn bring_current(store: &Store, root: &Path, graph: &str) -> Result<Vec<String>, ServeError> {
    let lock = match WriteLock::try_acquire(store.location()) {
        Ok(l) => l,
        Err(StoreError::Busy(_)) => {
            return Ok(crate::index::pipeline::stale_files(store, root, graph)?)
        }
        Err(e) => return Err(e.into()),
    };
    let opts = IndexOptions {
        graph: graph.to_string(),
        progress: false,
        history: false,
        ..IndexOptions::default()
    }
    .recorded_beside(store.location());
    index_repository(store, root, &opts)?;
    drop(lock);
    Ok(Vec::new())
}

fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The languages, installed before any test of the crate runs.
#[cfg(test)]
#[ctor::ctor]
fn install_languages() {
    index::languages::install(vec![&graphctx_rust::Rust, &graphctx_python::Python]);
}
