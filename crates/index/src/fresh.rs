//! Where a run lands: in place, or — for a database that does not exist
//! yet — in a new file moved into place complete.
//!
//! A first index of a large tree writes millions of rows. Landed in place
//! as one transaction, every page goes to the write-ahead log, is looked up
//! there while the transaction goes on, and is copied again at the
//! checkpoint; the log grows as large as the database. A database that
//! does not exist has no readers, so it is built aside instead (no journal,
//! no syncs) and linked into place once complete: a reader finds no index
//! or the whole one, and a run killed half-way leaves only a build file
//! that the next run throws away.

use std::path::Path;

use crate::store::{Location, Store, StoreError};

use super::pipeline::{index_repository, IndexError, IndexOptions, IndexSummary};

/// Index `root` into the database at `location`. The caller holds the
/// database's write lock.
pub fn index_location(
    location: &Location,
    root: &Path,
    opts: &IndexOptions,
) -> Result<IndexSummary, IndexError> {
    if !root.is_dir() {
        return Err(IndexError::NotADirectory(root.display().to_string()));
    }
    let path = match location {
        Location::Sqlite(path) if !path.exists() => path,
        Location::Sqlite(path) => {
            // A build killed after it was linked into place.
            let _ = std::fs::remove_file(crate::store::building_path(path));
            let opts = opts.clone().recorded_beside(location);
            return index_repository(&Store::open(location)?, root, &opts);
        }
        Location::Memory => return index_repository(&Store::open(location)?, root, opts),
    };
    let building = Store::create_building(path)?;
    let summary = match index_repository(&building, root, opts) {
        Ok(summary) => summary,
        Err(e) => {
            drop(building);
            // Best effort: the next run removes it anyway.
            let _ = std::fs::remove_file(crate::store::building_path(path));
            return Err(e);
        }
    };
    match building.finish_building(path) {
        Ok(()) => Ok(summary),
        // Another process created the database meanwhile (a server opening
        // it): land the run in place after all.
        Err(StoreError::Occupied(_)) => index_repository(&Store::open(location)?, root, opts),
        Err(e) => Err(e.into()),
    }
}

impl IndexOptions {
    /// These options for a one-shot run into the database at `location`:
    /// the walk is recorded beside a database file (`graph.db` →
    /// `graph.db.walk`) for the next process to check instead of walking,
    /// unless a place is already given. An in-memory database keeps none.
    pub fn recorded_beside(self, location: &Location) -> IndexOptions {
        let walk_record = match (&self.walk_record, location) {
            (Some(given), _) => Some(given.clone()),
            (None, Location::Sqlite(db)) => {
                let mut name = db.as_os_str().to_os_string();
                name.push(".walk");
                Some(name.into())
            }
            (None, Location::Memory) => None,
        };
        IndexOptions {
            walk_record,
            ..self
        }
    }
}

/// Note a finished run in the database's run record (see
/// [`crate::store::runs`]); `changed` when it moved the graph's seq. Best
/// effort: a record that cannot be written leaves `graphctx status`
/// without it, never a run failed.
pub(super) fn note_run(store: &Store, summary: &IndexSummary, graph: &str, changed: bool) {
    let run = crate::store::runs::Run::ending_now(
        summary.elapsed_ms,
        summary.files_seen,
        summary.files_parsed,
        summary.files_deleted,
        summary.seq,
    );
    let _ = crate::store::runs::note(store.location(), graph, run, changed);
}
