//! Whether the tree changed since the last index run, without looking.
//!
//! Every answer that must be fresh (context, hover) brings the index
//! current first. Without help that is an index run that finds nothing
//! changed: a `stat` of every file and directory, milliseconds that grow
//! with the tree, paid by every answer. A server that watches the tree
//! (see [`super::watch`]) knows better: [`Changes`] counts the events the
//! watch delivered, and an answer may skip the run when none came since
//! the last run began.
//!
//! Events reach the watch's callback some time after the change (the
//! kernel queues them; the watch thread reads them), so "none came" is
//! only true once the callback has caught up with the moment of asking.
//! An answer makes sure of it with a fence: it writes a number into a
//! file of a watched directory and waits until the callback has seen that
//! write. A watch's events arrive in order, so every change made before
//! the fence has been counted by then. An answer that cannot fence (no
//! watch, a directory the watch could not add, a fence not seen in time)
//! runs the index as before.
//!
//! The watch also keeps the paths it saw change ([`Changes::note`]), so a
//! run that does happen looks at those instead of `stat`-ing every file
//! and directory ([`Changes::take_watched`]). The list is trusted only
//! when nothing was lost since the last run took it: a lost event, a
//! rescan, a directory watched late or a distrusted watch make the next
//! run check the whole tree as before.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// More changed paths than this since the last run: the run checks the
/// whole tree (a checkout, a formatter over every file).
const MAX_WATCHED_PATHS: usize = 4096;

use crate::index::walk::WatchedChanges;

/// How long an answer waits for its fence before it runs the index.
const FENCE_WAIT: Duration = Duration::from_millis(200);

/// Appended to the database's file name, the file an answer's fence is
/// written to (`graph.db.fence`).
pub const FENCE_SUFFIX: &str = ".fence";

/// What a workspace's watch has seen. Shared by the workspace (which asks)
/// and the watch's callback (which counts).
#[derive(Default)]
pub struct Changes {
    /// Events under the root that can change what an index run reads.
    seen: AtomicU64,
    /// `seen` as it was when the last index run that completed began;
    /// `None` before the first such run under a trusted watch.
    indexed: Mutex<Option<u64>>,
    /// The watch covers every directory the walk visits, and its fence
    /// file: only then may an answer skip the index run.
    trusted: AtomicBool,
    /// Where fences are written (set with `trusted`).
    fence: Mutex<Option<PathBuf>>,
    /// The last fence number written, and the highest one the callback
    /// has seen.
    fence_written: AtomicU64,
    fence_seen: Mutex<u64>,
    fence_moved: Condvar,
    /// The paths noted since the last run took them.
    paths: Mutex<PathLog>,
}

/// Paths seen changing; `complete` while nothing was lost since the log
/// was last taken.
#[derive(Default)]
struct PathLog {
    paths: BTreeSet<PathBuf>,
    complete: bool,
}

impl Changes {
    /// A change not tied to one path (a lost event: the watch overflowed;
    /// directories watched late) under the root: the next run checks
    /// the whole tree.
    pub fn count(&self) {
        self.seen.fetch_add(1, Ordering::SeqCst);
        self.lose_paths();
    }

    /// A change at `path` under the root.
    pub fn note(&self, path: &Path) {
        self.seen.fetch_add(1, Ordering::SeqCst);
        let mut log = self.paths.lock().unwrap_or_else(|p| p.into_inner());
        if log.complete {
            log.paths.insert(path.to_path_buf());
            if log.paths.len() > MAX_WATCHED_PATHS {
                log.complete = false;
                log.paths.clear();
            }
        }
    }

    fn lose_paths(&self) {
        let mut log = self.paths.lock().unwrap_or_else(|p| p.into_inner());
        log.complete = false;
        log.paths.clear();
    }

    /// The paths the watch saw change since the last call, once it has
    /// caught up with this moment; `None` when something may have been
    /// missed (then the caller checks the whole tree). Starts a new log
    /// either way: call it when a run is about to look at the tree, with
    /// the write lock held, and hand the result to that run only.
    pub fn take_watched(&self) -> Option<WatchedChanges> {
        if !self.trusted.load(Ordering::SeqCst) || !self.caught_up() {
            self.lose_paths();
            return None;
        }
        let mut log = self.paths.lock().unwrap_or_else(|p| p.into_inner());
        let taken = std::mem::replace(
            &mut *log,
            PathLog {
                paths: BTreeSet::new(),
                complete: true,
            },
        );
        drop(log);
        // A distrust that came meanwhile may have missed paths.
        if !self.trusted.load(Ordering::SeqCst) {
            self.lose_paths();
            return None;
        }
        taken
            .complete
            .then_some(WatchedChanges { paths: taken.paths })
    }

    /// The fence file was written: it holds the number of the fence.
    pub fn fence_written(&self, path: &Path) {
        let Some(n) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
        else {
            return;
        };
        let mut seen = self.fence_seen.lock().unwrap_or_else(|p| p.into_inner());
        if n > *seen {
            *seen = n;
            self.fence_moved.notify_all();
        }
    }

    /// The watch now covers the walk's directories and `fence`'s.
    pub fn trust(&self, fence: PathBuf) {
        *self.fence.lock().unwrap_or_else(|p| p.into_inner()) = Some(fence);
        // Whatever happened before the watch began is unknown: a run that
        // began before it (and completes after) records a count below
        // this one, so only a run begun from now on makes the tree quiet.
        *self.indexed.lock().unwrap_or_else(|p| p.into_inner()) = None;
        self.count();
        self.trusted.store(true, Ordering::SeqCst);
    }

    /// The watch is gone or missed a directory: ask the tree again.
    pub fn distrust(&self) {
        self.trusted.store(false, Ordering::SeqCst);
        self.lose_paths();
    }

    /// What a run that begins now records when it completes (see
    /// [`Changes::indexed`]).
    pub fn before_run(&self) -> u64 {
        self.seen.load(Ordering::SeqCst)
    }

    /// A run that began at `seen` (from [`Changes::before_run`]) completed.
    pub fn indexed(&self, seen: u64) {
        if self.trusted.load(Ordering::SeqCst) {
            *self.indexed.lock().unwrap_or_else(|p| p.into_inner()) = Some(seen);
        }
    }

    /// Whether nothing the index reads changed since the last run began:
    /// true only under a trusted watch, once the watch has caught up.
    pub fn quiet(&self) -> bool {
        if !self.trusted.load(Ordering::SeqCst) {
            return false;
        }
        let Some(indexed) = *self.indexed.lock().unwrap_or_else(|p| p.into_inner()) else {
            return false;
        };
        if !self.caught_up() {
            return false;
        }
        self.trusted.load(Ordering::SeqCst) && self.seen.load(Ordering::SeqCst) == indexed
    }

    /// Write a fence and wait until the watch has seen it. A fence the
    /// watch does not deliver in time means it cannot be relied on: later
    /// answers ask the tree rather than wait for fences too.
    fn caught_up(&self) -> bool {
        let Some(path) = self.fence.lock().unwrap_or_else(|p| p.into_inner()).clone() else {
            return false;
        };
        let n = self.fence_written.fetch_add(1, Ordering::SeqCst) + 1;
        if std::fs::write(&path, n.to_string()).is_err() {
            return false;
        }
        let deadline = Instant::now() + FENCE_WAIT;
        let mut seen = self.fence_seen.lock().unwrap_or_else(|p| p.into_inner());
        while *seen < n {
            let now = Instant::now();
            if now >= deadline {
                self.distrust();
                return false;
            }
            seen = match self.fence_moved.wait_timeout(seen, deadline - now) {
                Ok((s, _)) => s,
                Err(p) => p.into_inner().0,
            };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A stand-in for the watch's callback: sees each fence written, after
    /// counting `changes_first` changes.
    fn watch_thread(changes: Arc<Changes>, fence: PathBuf, changes_first: u64) {
        std::thread::spawn(move || {
            let mut last = String::new();
            let mut pending = changes_first;
            for _ in 0..2000 {
                let now = std::fs::read_to_string(&fence).unwrap_or_default();
                if !now.is_empty() && now != last {
                    for _ in 0..std::mem::take(&mut pending) {
                        changes.count();
                    }
                    changes.fence_written(&fence);
                    last = now;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
    }

    #[test]
    fn a_tree_is_quiet_only_under_a_trusted_watch_after_a_run() {
        let dir = tempfile::tempdir().unwrap();
        let fence = dir.path().join("graph.db.fence");
        let changes = Arc::new(Changes::default());
        // No watch yet.
        changes.indexed(changes.before_run());
        assert!(!changes.quiet());
        changes.trust(fence.clone());
        watch_thread(changes.clone(), fence.clone(), 0);
        // A watch, but no run since it began.
        assert!(!changes.quiet());
        changes.indexed(changes.before_run());
        assert!(changes.quiet());
        assert!(changes.quiet());
        changes.distrust();
        assert!(!changes.quiet());
    }

    /// Changes under a watch fencing in `dir`, after a run.
    fn trusted_after_a_run(dir: &Path) -> (Arc<Changes>, PathBuf) {
        let fence = dir.join("graph.db.fence");
        let changes = Arc::new(Changes::default());
        changes.trust(fence.clone());
        changes.indexed(changes.before_run());
        (changes, fence)
    }

    #[test]
    fn a_run_begun_before_the_watch_does_not_make_the_tree_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let fence = dir.path().join("graph.db.fence");
        let changes = Arc::new(Changes::default());
        let begun = changes.before_run();
        changes.trust(fence.clone());
        watch_thread(changes.clone(), fence, 0);
        changes.indexed(begun);
        assert!(!changes.quiet());
        changes.indexed(changes.before_run());
        assert!(changes.quiet());
    }

    #[test]
    fn a_fence_the_watch_does_not_see_is_not_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let (changes, _) = trusted_after_a_run(dir.path());
        let t = Instant::now();
        assert!(!changes.quiet());
        assert!(t.elapsed() >= FENCE_WAIT);
        // And no later answer waits for a fence again.
        let t = Instant::now();
        assert!(!changes.quiet());
        assert!(t.elapsed() < FENCE_WAIT);
    }

    #[test]
    fn a_run_is_told_the_paths_noted_since_the_last_one_took_them() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.rs"), dir.path().join("b.rs"));
        let fence = dir.path().join("graph.db.fence");
        let changes = Arc::new(Changes::default());
        let taken = || {
            changes
                .take_watched()
                .map(|w| w.paths.into_iter().collect::<Vec<_>>())
        };
        // No watch: nothing to tell.
        changes.note(&a);
        assert_eq!(taken(), None);
        changes.trust(fence.clone());
        watch_thread(changes.clone(), fence, 0);
        // What came before the first run under the watch is unknown.
        changes.note(&a);
        assert_eq!(taken(), None);
        for p in [&b, &a, &b] {
            changes.note(p);
        }
        assert_eq!(taken(), Some(vec![a.clone(), b.clone()]));
        assert_eq!(taken(), Some(vec![]));
        // A lost event: the next run checks the whole tree; the one after
        // it is told again.
        changes.note(&a);
        changes.count();
        assert_eq!(taken(), None);
        changes.note(&b);
        assert_eq!(taken(), Some(vec![b.clone()]));
        // So many changes that the tree is checked whole.
        for i in 0..=MAX_WATCHED_PATHS {
            changes.note(&dir.path().join(format!("{i}.rs")));
        }
        assert_eq!(taken(), None);
        // A watch distrusted meanwhile.
        changes.note(&a);
        changes.distrust();
        assert_eq!(taken(), None);
    }

    #[test]
    fn a_change_the_watch_counts_before_the_fence_is_not_quiet() {
        let dir = tempfile::tempdir().unwrap();
        let (changes, fence) = trusted_after_a_run(dir.path());
        // The change happened before the answer; the watch reports it
        // only as it reaches the fence.
        watch_thread(changes.clone(), fence, 1);
        assert!(!changes.quiet());
        // A run that began after it makes the tree quiet again.
        changes.indexed(changes.before_run());
        assert!(changes.quiet());
    }
}
