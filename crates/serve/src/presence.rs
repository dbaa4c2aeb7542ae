//! Which servers watch a database: a file per watching process beside it,
//! held locked while the process lives.
//!
//! `graphctx status` says whether an editor or agent keeps the index
//! current. A server that watches the tree writes `graph.db.watch-PID`
//! (its pid, root and start time) and holds an exclusive lock on it until
//! the watch ends, when it removes the file. A pid alone would not do: a
//! server killed with `kill -9` leaves its file behind, and its pid may be
//! reused by another process. The lock dies with the process however it
//! ends, so a file nobody holds locked is a leftover: [`watchers`] removes
//! it and does not count it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::store::Location;

/// The file name of a watch mark is the database's, this, and the pid.
const WATCH_INFIX: &str = ".watch-";

/// What a watching server wrote in its file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Watcher {
    pub pid: u32,
    /// The repository root the server watches.
    pub root: String,
    /// When the watch began, RFC 3339 UTC.
    pub since: String,
}

/// This process's mark; removed when dropped.
pub struct WatchMark {
    path: PathBuf,
    _file: File,
}

impl Drop for WatchMark {
    fn drop(&mut self) {
        // Removed while still locked: a reader never finds the file
        // unlocked while this process lives.
        let _ = std::fs::remove_file(&self.path);
    }
}

fn mark_prefix(db: &Path) -> Option<String> {
    Some(format!("{}{WATCH_INFIX}", db.file_name()?.to_str()?))
}

/// Mark this process as watching the database at `location` for `root`.
/// `None` for an in-memory database, or when the mark cannot be written
/// (a read-only directory): the server watches all the same.
pub fn mark_watching(location: &Location, root: &Path) -> Option<WatchMark> {
    let Location::Sqlite(db) = location else {
        return None;
    };
    let pid = std::process::id();
    let path = db.with_file_name(format!("{}{pid}", mark_prefix(db)?));
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&path)
        .ok()?;
    file.lock().ok()?;
    let watcher = Watcher {
        pid,
        root: root.display().to_string(),
        since: crate::support::time::now_rfc3339(),
    };
    serde_json::to_writer(&mut file, &watcher).ok()?;
    file.flush().ok()?;
    Some(WatchMark { path, _file: file })
}

/// The live processes watching the database at `db`, by pid. Leftover
/// marks of processes that ended are removed.
pub fn watchers(db: &Path) -> Vec<Watcher> {
    let (Some(dir), Some(prefix)) = (db.parent(), mark_prefix(db)) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Watcher> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let pid = name.to_str()?.strip_prefix(&prefix)?.parse::<u32>().ok()?;
            live_watcher(&e.path(), pid)
        })
        .collect();
    out.sort_by_key(|w| w.pid);
    out
}

/// The watcher whose mark is at `path`, when its process (`pid`, from
/// the file's name) still holds it.
fn live_watcher(path: &Path, pid: u32) -> Option<Watcher> {
    let file = File::open(path).ok()?;
    match file.try_lock_shared() {
        Err(TryLockError::WouldBlock) => Some(
            std::fs::read_to_string(path)
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
                // Locked but not written yet: the server is starting.
                .unwrap_or(Watcher {
                    pid,
                    root: String::new(),
                    since: String::new(),
                }),
        ),
        Ok(()) => {
            // Nobody holds it: its process ended without removing it.
            let _ = std::fs::remove_file(path);
            None
        }
        Err(TryLockError::Error(_)) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_counts_while_held_and_a_leftover_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("graph.db");
        let location = Location::Sqlite(db.clone());
        assert!(watchers(&db).is_empty());
        let mark = mark_watching(&location, dir.path()).unwrap();
        let seen = watchers(&db);
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].pid, std::process::id());
        assert_eq!(seen[0].root, dir.path().display().to_string());
        drop(mark);
        assert!(watchers(&db).is_empty());
        assert!(!dir
            .path()
            .join(format!("graph.db.watch-{}", std::process::id()))
            .exists());

        // What a process killed with -9 leaves: the file, unlocked.
        let leftover = dir.path().join("graph.db.watch-4000000");
        std::fs::write(&leftover, r#"{"pid":4000000,"root":"/r","since":"x"}"#).unwrap();
        assert!(watchers(&db).is_empty());
        assert!(!leftover.exists());
        assert!(mark_watching(&Location::Memory, dir.path()).is_none());
    }
}
