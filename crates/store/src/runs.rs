//! The record of the last index runs of a database's graphs, for
//! `graphctx status`.
//!
//! Kept in `graph.db.runs` beside the database, not in a relation: every
//! index run notes itself, also the many that change nothing (each command
//! that reads the code graph runs one first, and servers run one per
//! save), and a row would make each of those a database commit. A row
//! would also make two databases indexed from the same tree differ in
//! their run times. The file is small JSON, replaced whole by a rename;
//! runs write it under the database's write lock, so they never race.
//!
//! Per graph it holds the last run and the last run that changed the
//! graph (the one whose duration says what indexing costs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{sidecar, Location};

/// Suffix of the run record beside a database.
pub const RUNS_SUFFIX: &str = ".runs";

/// One index run as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// When the run ended, RFC 3339 UTC.
    pub finished_at: String,
    /// The same, in milliseconds since the Unix epoch.
    pub finished_unix_ms: i64,
    pub elapsed_ms: f64,
    pub files_seen: usize,
    pub files_parsed: usize,
    pub files_deleted: usize,
    /// The graph's change sequence number after the run.
    pub seq: i64,
}

impl Run {
    /// A run that ends now.
    pub fn ending_now(
        elapsed_ms: f64,
        files_seen: usize,
        files_parsed: usize,
        files_deleted: usize,
        seq: i64,
    ) -> Run {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Run {
            finished_at: crate::support::time::format_unix(now.as_secs() as i64),
            finished_unix_ms: now.as_millis() as i64,
            elapsed_ms,
            files_seen,
            files_parsed,
            files_deleted,
            seq,
        }
    }
}

/// The runs of one graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphRuns {
    pub last_run: Run,
    /// The last run that changed the graph (moved its seq).
    pub last_change: Option<Run>,
}

fn runs_path(db: &Path) -> PathBuf {
    sidecar(db, RUNS_SUFFIX)
}

fn read_all(db: &Path) -> BTreeMap<String, GraphRuns> {
    std::fs::read(runs_path(db))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Note `run` of `graph` (which changed the graph when `changed`). The
/// caller holds the write lock. An in-memory database keeps no record.
pub fn note(location: &Location, graph: &str, run: Run, changed: bool) -> std::io::Result<()> {
    let Location::Sqlite(db) = location else {
        return Ok(());
    };
    let mut all = read_all(db);
    let last_change = match all.remove(graph) {
        _ if changed => Some(run.clone()),
        Some(before) => before.last_change,
        None => None,
    };
    all.insert(
        graph.to_string(),
        GraphRuns {
            last_run: run,
            last_change,
        },
    );
    let path = runs_path(db);
    let staged = sidecar(&path, ".new");
    std::fs::write(&staged, serde_json::to_vec_pretty(&all)?)?;
    std::fs::rename(&staged, &path)
}

/// The recorded runs of `graph`; `None` when no run of this graphctx
/// version noted one (or the database is in memory).
pub fn recorded(location: &Location, graph: &str) -> Option<GraphRuns> {
    match location {
        Location::Sqlite(db) => read_all(db).remove(graph),
        Location::Memory => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_changes_nothing_keeps_the_last_change() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::Sqlite(dir.path().join("graph.db"));
        assert_eq!(recorded(&location, "code"), None);
        let first = Run::ending_now(812.5, 10, 10, 0, 1);
        note(&location, "code", first.clone(), true).unwrap();
        let idle = Run::ending_now(3.0, 10, 0, 0, 1);
        note(&location, "code", idle.clone(), false).unwrap();
        let runs = recorded(&location, "code").unwrap();
        assert_eq!(runs.last_run, idle);
        assert_eq!(runs.last_change, Some(first));
        assert_eq!(recorded(&location, "other"), None);
        assert!(!dir.path().join("graph.db.runs.new").exists());
        assert_eq!(recorded(&Location::Memory, "code"), None);
    }
}
