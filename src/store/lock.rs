//! One writer at a time per database.
//!
//! Writers (indexing, applying operations) hold an exclusive advisory lock
//! on `graph.db.lock` beside the database for the whole write. A second
//! writer either waits for it or, with [`WriteLock::try_acquire`], gets a
//! clear "index busy" error. Readers take no lock: each write lands in one
//! SQLite transaction, so a reader sees the state before or after it.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::{Location, StoreError};

pub struct WriteLock {
    _file: Option<File>,
}

fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lock");
    db.with_file_name(name)
}

fn open_lock_file(db: &Path) -> Result<(File, PathBuf), StoreError> {
    let path = lock_path(db);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Io {
            path: dir.display().to_string(),
            source: e,
        })?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StoreError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
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
