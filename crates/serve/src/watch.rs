//! Keeping a served index current.
//!
//! A [`Refresher`] owns one thread that turns triggers into incremental
//! index runs. Triggers are coalesced: a save or a file-system event asks
//! for a run after a short delay (so the editor's save and the watcher's
//! event for it make one run); edits (`didChange`) are debounced — each
//! keystroke pushes the run out again. When another process holds the write
//! lock the run is retried with a growing pause, never blocking answers,
//! which keep reading the committed state meanwhile.
//!
//! [`watch_workspace`] feeds file-system events (`notify`) for the files
//! some language claims, its manifests and the ignore files into a
//! refresher ([`relevant`]). It watches the directories the
//! indexer walks (the same gitignore-aware walk) and starts watching
//! directories created later. It also counts every change under the
//! root for the workspace's [`Changes`], so that answers can tell a quiet
//! tree without asking it (see [`super::quiet`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use super::quiet::{Changes, FENCE_SUFFIX};
use super::{Refresh, Workspace};
use crate::index::{languages, walk, IndexSummary};
use crate::store::{Location, STORE_DIR};

/// Why a run is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A saved file: run soon.
    Save,
    /// A file changed on disk: run soon.
    FileEvent,
    /// An edit in the editor: run once edits pause.
    Edit,
}

/// Delays before a run, per trigger.
#[derive(Debug, Clone, Copy)]
pub struct Delays {
    pub save: Duration,
    pub file_event: Duration,
    pub edit: Duration,
}

impl Default for Delays {
    fn default() -> Self {
        Delays {
            save: Duration::from_millis(10),
            file_event: Duration::from_millis(30),
            edit: Duration::from_millis(300),
        }
    }
}

/// What a finished run reports to the server (for logs and progress).
pub type OnRun = Arc<dyn Fn(&Result<IndexSummary, String>) + Send + Sync>;

/// Handle to the refresher thread; dropping every handle stops it.
#[derive(Clone)]
pub struct Refresher {
    tx: Sender<Trigger>,
}

impl Refresher {
    pub fn start(ws: Arc<Workspace>, delays: Delays, on_run: Option<OnRun>) -> Refresher {
        let (tx, rx) = mpsc::channel::<Trigger>();
        std::thread::Builder::new()
            .name("graphctx-refresh".into())
            .spawn(move || {
                while let Ok(first) = rx.recv() {
                    let mut soon: Option<Instant> = None;
                    let mut edit: Option<Instant> = None;
                    let note =
                        |t: Trigger, soon: &mut Option<Instant>, edit: &mut Option<Instant>| {
                            let now = Instant::now();
                            match t {
                                Trigger::Save => {
                                    let d = now + delays.save;
                                    *soon = Some(soon.map_or(d, |s| s.min(d)));
                                }
                                Trigger::FileEvent => {
                                    let d = now + delays.file_event;
                                    *soon = Some(soon.map_or(d, |s| s.min(d)));
                                }
                                Trigger::Edit => *edit = Some(now + delays.edit),
                            }
                        };
                    note(first, &mut soon, &mut edit);
                    loop {
                        let deadline = match (soon, edit) {
                            (Some(a), Some(b)) => a.min(b),
                            (Some(a), None) | (None, Some(a)) => a,
                            (None, None) => Instant::now(),
                        };
                        let now = Instant::now();
                        if deadline <= now {
                            break;
                        }
                        match rx.recv_timeout(deadline - now) {
                            Ok(t) => note(t, &mut soon, &mut edit),
                            Err(RecvTimeoutError::Timeout) => break,
                            Err(RecvTimeoutError::Disconnected) => return,
                        }
                    }
                    let mut pause = Duration::from_millis(50);
                    let result = loop {
                        match ws.refresh(false) {
                            Ok(Refresh::Done(s)) => break Ok(*s),
                            Ok(Refresh::Busy(_)) => {
                                std::thread::sleep(pause);
                                pause = (pause * 2).min(Duration::from_secs(2));
                            }
                            Err(e) => break Err(e.to_string()),
                        }
                    };
                    if let Some(f) = &on_run {
                        f(&result);
                    }
                }
            })
            .expect("spawn the refresher thread");
        Refresher { tx }
    }

    /// Ask for a run.
    pub fn trigger(&self, t: Trigger) {
        let _ = self.tx.send(t);
    }
}

/// Whether a changed path can change the code graph: a source file some
/// language claims, a manifest or an ignore file, outside the places no
/// change of the graph comes from.
pub fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    if rel.components().any(|c| outside_the_graph(c.as_os_str())) {
        return false;
    }
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    languages::of_file(name).is_some() || walk::is_control_file(name)
}

/// A directory nothing under which changes the code graph: the store's,
/// git's, or a language's build output (`target`).
fn outside_the_graph(component: &OsStr) -> bool {
    component == STORE_DIR
        || component == ".git"
        || languages::all()
            .iter()
            .any(|l| l.output_dirs().iter().any(|d| component == *d))
}

/// Keeps the file-system watch alive; drop to stop watching.
pub struct WorkspaceWatch {
    _watcher: Arc<Mutex<notify::RecommendedWatcher>>,
    changes: Arc<Changes>,
    /// Tells `graphctx status` this process watches (see [`super::presence`]).
    _mark: Option<super::presence::WatchMark>,
}

impl Drop for WorkspaceWatch {
    fn drop(&mut self) {
        // No more events: answers ask the tree again.
        self.changes.distrust();
    }
}

/// Whether a failed watch of a directory leaves changes unseen: not when
/// the directory is gone (its parent's event was counted).
fn watch_failed(e: &notify::Error) -> bool {
    match &e.kind {
        notify::ErrorKind::PathNotFound => false,
        notify::ErrorKind::Io(io) => io.kind() != std::io::ErrorKind::NotFound,
        _ => true,
    }
}

/// Watch the directories of `ws` that the indexer walks and trigger
/// `refresher` on relevant changes.
pub fn watch_workspace(ws: &Workspace, refresher: Refresher) -> notify::Result<WorkspaceWatch> {
    let root = ws.root().to_path_buf();
    let cb_root = root.clone();
    let changes = ws.changes.clone();
    let cb_changes = changes.clone();
    // Answers fence next to the database (an in-memory store has no place:
    // its answers always ask the tree).
    // The watch reports paths under the directories as they were given to
    // it: the database's directory is given (and the fence compared) in
    // its canonical form, however the database was named.
    let db = match ws.store.location() {
        Location::Sqlite(db) => db
            .parent()
            .and_then(|d| {
                std::fs::canonicalize(if d.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    d
                })
                .ok()
            })
            .zip(db.file_name())
            .map(|(dir, name)| dir.join(name)),
        Location::Memory => None,
    };
    let store_dir = db.as_ref().and_then(|d| d.parent()).map(Path::to_path_buf);
    let fence = db.as_deref().map(fence_of);
    let cb_fence = fence.clone();
    let cb_db = db.clone();
    // New directories are watched from another thread: notify runs this
    // callback on its event loop, and `watch` waits for that loop.
    let (dir_tx, dir_rx) = mpsc::channel::<PathBuf>();
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else {
            // An error of the watch may mean lost events.
            cb_changes.count();
            return;
        };
        count_change(&cb_changes, &event, cb_fence.as_deref(), cb_db.as_deref());
        if matches!(event.kind, EventKind::Create(_)) {
            for p in &event.paths {
                if p.is_dir() && watchable_dir(&cb_root, p) {
                    let _ = dir_tx.send(p.clone());
                }
            }
        }
        let wanted = matches!(
            event.kind,
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any
        ) && event
            .paths
            .iter()
            .any(|p| relevant(&cb_root, p) || (p.is_dir() && watchable_dir(&cb_root, p)));
        if wanted {
            refresher.trigger(Trigger::FileEvent);
        }
    })?;
    let watcher = Arc::new(Mutex::new(watcher));
    {
        let mut w = watcher.lock().unwrap_or_else(|p| p.into_inner());
        let mut complete = true;
        for d in dirs_to_watch(&root) {
            if let Err(e) = w.watch(&d, RecursiveMode::NonRecursive) {
                complete &= !watch_failed(&e);
            }
        }
        let fenced = store_dir
            .as_ref()
            .is_some_and(|d| w.watch(d, RecursiveMode::NonRecursive).is_ok());
        if let (true, true, Some(fence)) = (complete, fenced, fence) {
            changes.trust(fence);
        }
    }
    let weak = Arc::downgrade(&watcher);
    let dir_changes = changes.clone();
    std::thread::Builder::new()
        .name("graphctx-watch-dirs".into())
        .spawn(move || {
            while let Ok(dir) = dir_rx.recv() {
                let Some(w) = weak.upgrade() else { break };
                let mut w = w.lock().unwrap_or_else(|p| p.into_inner());
                for d in dirs_to_watch(&dir) {
                    if let Err(e) = w.watch(&d, RecursiveMode::NonRecursive) {
                        if watch_failed(&e) {
                            dir_changes.distrust();
                        }
                    }
                }
                // What changed in the new directories before they were
                // watched is seen by the next run.
                dir_changes.count();
            }
        })
        .expect("spawn the directory watcher thread");
    Ok(WorkspaceWatch {
        _watcher: watcher,
        changes,
        _mark: super::presence::mark_watching(ws.store.location(), &root),
    })
}

/// The fence file of the database at `db` (see [`super::quiet`]): beside
/// it, named after it.
fn fence_of(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_os_string();
    name.push(FENCE_SUFFIX);
    db.with_file_name(name)
}

/// Whether `path` is one of the database's own files (the database, its
/// journal, locks and fence: all named after it), which its writes and
/// answers touch.
fn is_store_file(path: &Path, db: &Path) -> bool {
    path.parent() == db.parent()
        && path
            .file_name()
            .zip(db.file_name())
            .is_some_and(|(name, db)| name.as_encoded_bytes().starts_with(db.as_encoded_bytes()))
}

/// Count `event` for [`Changes`]: a change anywhere the walk reads (the
/// store's own files aside), a lost event, or an answer's fence.
fn count_change(changes: &Changes, event: &notify::Event, fence: Option<&Path>, db: Option<&Path>) {
    if event.need_rescan() {
        changes.count();
        return;
    }
    // Reading a file is no change (the indexer reads what it parses).
    if matches!(event.kind, EventKind::Access(_)) {
        return;
    }
    for p in &event.paths {
        if Some(p.as_path()) == fence {
            changes.fence_written(p);
        } else if db.is_some_and(|db| is_store_file(p, db))
            || p.components().any(|c| c.as_os_str() == STORE_DIR)
        {
            continue;
        } else {
            changes.note(p);
        }
    }
}

fn watchable_dir(root: &Path, dir: &Path) -> bool {
    match dir.strip_prefix(root) {
        Ok(rel) => !rel.components().any(|c| outside_the_graph(c.as_os_str())),
        Err(_) => false,
    }
}

/// `start` and its subdirectories as the indexer's walk sees them
/// ([`crate::index::walk::walker`]: gitignore-aware, no hidden
/// directories, links followed).
fn dirs_to_watch(start: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in crate::index::walk::walker(start).build().flatten() {
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            out.push(entry.into_path());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database kept in the root itself (`--db ROOT/graph.db`): its own
    /// files are no change, the sources beside it are.
    #[test]
    fn only_the_database_s_own_files_are_not_changes() {
        let db = Path::new("/repo/graph.db");
        for own in [
            "graph.db",
            "graph.db-wal",
            "graph.db.lock",
            "graph.db.fence",
        ] {
            assert!(is_store_file(&Path::new("/repo").join(own), db), "{own}");
        }
        for source in ["/repo/build.rs", "/repo/src/graph.db", "/repo/Cargo.toml"] {
            assert!(!is_store_file(Path::new(source), db), "{source}");
        }
        assert_eq!(fence_of(db), Path::new("/repo/graph.db.fence"));
    }
}
