//! One writer at a time per database.
//!
//! Writers (indexing, applying operations) hold an exclusive advisory lock
//! on `graph.db.lock` beside the database for the whole write. A second
//! writer either waits for it or, with [`WriteLock::try_acquire`], gets a
//! clear "index busy" error.
//!
//! Reads need a second, short lock. CozoDB's SQLite backend runs a read
//! script as many range scans outside any transaction, each its own SQLite
//! snapshot, so a script running across another process's commit could
//! see part of the state before and part after it. Every script therefore
//! runs under [`CommitLock`] on `graph.db.commit.lock`: shared for reads,
//! exclusive for writes, held for that one script or batch only (readers
//! and writers wait milliseconds, never for a whole index run). Answers
//! made of several scripts check the graph's `seq` before and after (see
//! `emit::build_context`).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::{Location, StoreError};

pub struct WriteLock {
    _file: Option<File>,
}

fn lock_path(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(suffix);
    db.with_file_name(name)
}

fn open_lock_file(db: &Path) -> Result<(File, PathBuf), StoreError> {
    open_lock_file_named(db, ".lock")
}

fn open_lock_file_named(db: &Path, suffix: &str) -> Result<(File, PathBuf), StoreError> {
    let path = lock_path(db, suffix);
    super::place::make_dir_of(&path)?;
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| super::health::access_io(&path.display().to_string(), e))?;
    Ok((file, path))
}

impl WriteLock {
    /// Wait until no other writer holds the database.
    pub fn acquire(location: &Location) -> Result<WriteLock, StoreError> {
        match location {
            Location::Memory => Ok(WriteLock { _file: None }),
            Location::Sqlite(db) => {
                let (file, path) = open_lock_file(db)?;
                file.lock().map_err(|e| StoreError::Io {
                    path: path.display().to_string(),
                    source: e,
                })?;
                Ok(WriteLock { _file: Some(file) })
            }
        }
    }

    /// Take the lock or fail at once with an "index busy" error.
    pub fn try_acquire(location: &Location) -> Result<WriteLock, StoreError> {
        match location {
            Location::Memory => Ok(WriteLock { _file: None }),
            Location::Sqlite(db) => {
                let (file, path) = open_lock_file(db)?;
                match file.try_lock() {
                    Ok(()) => Ok(WriteLock { _file: Some(file) }),
                    Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Busy(format!(
                        "index busy: another graphctx process is writing {} (lock {})",
                        db.display(),
                        path.display()
                    ))),
                    Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Io {
                        path: path.display().to_string(),
                        source: e,
                    }),
                }
            }
        }
    }
}

/// Held while one script runs or one batch lands: shared by readers,
/// exclusive for the writer (see the module docs). Released on drop.
pub struct CommitLock {
    _file: Option<File>,
}

impl CommitLock {
    /// Shared: other readers go on, a commit waits until this read ends.
    /// A lock file that cannot be created (a read-only directory) means
    /// no writer can commit there either, so the read goes on unlocked.
    pub fn read(location: &Location) -> CommitLock {
        let file = match location {
            Location::Memory => None,
            Location::Sqlite(db) => open_lock_file_named(db, ".commit.lock")
                .ok()
                .and_then(|(f, _)| f.lock_shared().ok().map(|()| f)),
        };
        CommitLock { _file: file }
    }

    /// Exclusive: waits for running reads, holds new ones off until dropped.
    pub fn write(location: &Location) -> Result<CommitLock, StoreError> {
        match location {
            Location::Memory => Ok(CommitLock { _file: None }),
            Location::Sqlite(db) => {
                let (file, path) = open_lock_file_named(db, ".commit.lock")?;
                file.lock().map_err(|e| StoreError::Io {
                    path: path.display().to_string(),
                    source: e,
                })?;
                Ok(CommitLock { _file: Some(file) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{mpsc, Arc};

    use super::*;

    /// A read that starts while a batch is landing waits for the commit,
    /// and a commit waits for a running read: neither sees the other half
    /// done. (Separate open files, as separate processes would have.)
    #[test]
    fn reads_and_commits_exclude_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::Sqlite(dir.path().join("graph.db"));

        let committed = Arc::new(AtomicBool::new(false));
        let commit = CommitLock::write(&location).unwrap();
        let (started, wait_started) = mpsc::channel();
        let reader = {
            let (location, committed) = (location.clone(), committed.clone());
            std::thread::spawn(move || {
                started.send(()).unwrap();
                let _read = CommitLock::read(&location);
                committed.load(Ordering::SeqCst)
            })
        };
        wait_started.recv().unwrap();
        committed.store(true, Ordering::SeqCst);
        drop(commit);
        assert!(
            reader.join().unwrap(),
            "the read got in before the commit ended"
        );

        let read = CommitLock::read(&location);
        let done_reading = Arc::new(AtomicBool::new(false));
        let writer = {
            let (location, done_reading) = (location.clone(), done_reading.clone());
            std::thread::spawn(move || {
                let _commit = CommitLock::write(&location).unwrap();
                done_reading.load(Ordering::SeqCst)
            })
        };
        done_reading.store(true, Ordering::SeqCst);
        drop(read);
        assert!(writer.join().unwrap(), "the commit got in during a read");
    }
}
