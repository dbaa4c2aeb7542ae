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
//! [`watch_workspace`] feeds file-system events (`notify`) for `.rs` files
//! and `Cargo.toml` into a refresher. It watches the directories the
//! indexer would walk (gitignore-aware), not `target/` or `.graphctx/`,
//! and starts watching directories created later.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

use super::{Refresh, Workspace};
use crate::index::IndexSummary;
use crate::store::STORE_DIR;

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

/// Whether a changed path can change the code graph.
pub fn relevant(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    if rel.components().any(|c| {
        let s = c.as_os_str();
        s == STORE_DIR || s == "target" || s == ".git"
    }) {
        return false;
    }
    path.extension().is_some_and(|e| e == "rs")
        || path.file_name().is_some_and(|n| n == "Cargo.toml")
}

/// Keeps the file-system watch alive; drop to stop watching.
pub struct WorkspaceWatch {
    _watcher: Arc<Mutex<notify::RecommendedWatcher>>,
}

/// Watch the directories of `ws` that the indexer walks and trigger
/// `refresher` on relevant changes.
pub fn watch_workspace(ws: &Workspace, refresher: Refresher) -> notify::Result<WorkspaceWatch> {
    let root = ws.root().to_path_buf();
    let cb_root = root.clone();
    // New directories are watched from another thread: notify runs this
    // callback on its event loop, and `watch` waits for that loop.
    let (dir_tx, dir_rx) = mpsc::channel::<PathBuf>();
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let Ok(event) = res else { return };
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
        for d in dirs_to_watch(&root) {
            // A directory that vanished meanwhile is not an error.
            let _ = w.watch(&d, RecursiveMode::NonRecursive);
        }
    }
    let weak = Arc::downgrade(&watcher);
    std::thread::Builder::new()
        .name("graphctx-watch-dirs".into())
        .spawn(move || {
            while let Ok(dir) = dir_rx.recv() {
                let Some(w) = weak.upgrade() else { break };
                let mut w = w.lock().unwrap_or_else(|p| p.into_inner());
                for d in dirs_to_watch(&dir) {
                    let _ = w.watch(&d, RecursiveMode::NonRecursive);
                }
            }
        })
        .expect("spawn the directory watcher thread");
    Ok(WorkspaceWatch { _watcher: watcher })
}

fn watchable_dir(root: &Path, dir: &Path) -> bool {
    match dir.strip_prefix(root) {
        Ok(rel) => !rel.components().any(|c| {
            let s = c.as_os_str();
            s == STORE_DIR || s == "target" || s == ".git"
        }),
        Err(_) => false,
    }
}

/// `start` and its subdirectories as the indexer's walk sees them
/// (gitignore-aware, no hidden directories, no `target/`).
fn dirs_to_watch(start: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in ignore::WalkBuilder::new(start)
        .hidden(true)
        .filter_entry(|e| e.file_name() != "target")
        .build()
        .flatten()
    {
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            out.push(entry.into_path());
        }
    }
    out
}
