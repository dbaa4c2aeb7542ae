//! `graphctx index --rebuild`: a new database for a code graph, keeping
//! everything else the old one holds.
//!
//! The code graph can always be made again from the repository; ontology
//! graphs, canvas sessions, flows and conversations cannot. So a rebuild
//! never edits the old file: it builds a complete new database beside it
//! (`graph.db.rebuild`), copies into it every row of the old one that is
//! not the code graph being rebuilt, and only then swaps it in with one
//! rename. A rebuild killed at any moment leaves the old database as it
//! was (a leftover `graph.db.rebuild` is thrown away by the next rebuild),
//! or the complete new one.
//!
//! A damaged file is checked page by page first ([`health::check_integrity`]),
//! read relation by relation (a relation whose pages cannot be read is
//! named, the others are kept), and before anything is replaced, what
//! could be read is written to `graph.db.salvage-<time>.json` and the old
//! file is linked aside as `graph.db.damaged-<time>` (for `sqlite3
//! .recover` or a support request). A database of a newer schema is never
//! rebuilt unless the caller confirms it ([`Options::allow_downgrade`]):
//! this version may not be able to hold all it stores. Confirmed, it is
//! handled as a damaged one is (salvage file, old file aside), and the
//! relations this version cannot take are named.
//!
//! The caller holds the database's write lock and makes sure no server is
//! watching it (a server's open connection would go on reading the old
//! file).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cozo::NamedRows;

use super::{health, lock, schema, sidecar, Location, Result, Store, StoreError};

/// What a rebuild is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The code graph to rebuild; its rows are not copied.
    pub graph: String,
    /// Rebuild a database of a newer schema too (else refused).
    pub allow_downgrade: bool,
}

/// What the old database was found to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// There was none: the rebuild was a first index.
    Missing,
    /// Readable, at this schema or an older one (migrated before copying).
    Sound,
    /// Damaged, truncated or not a database: what is wrong.
    Damaged(String),
    /// Written by a newer graphctx, at this schema version.
    Newer(i64),
}

/// What a rebuild did.
#[derive(Debug)]
pub struct Rebuilt<S> {
    /// What the build reported.
    pub summary: S,
    pub condition: Condition,
    /// Relations copied into the new database, with their rows.
    pub kept: Vec<(String, usize)>,
    /// Relations read (and saved to the salvage file) that the new
    /// database did not take, with why.
    pub not_kept: Vec<(String, String)>,
    /// What could not be read at all, with why (`*`: the whole file).
    pub unreadable: Vec<(String, String)>,
    /// The salvage file, when one was written.
    pub salvage: Option<PathBuf>,
    /// Where the old file was linked aside, when it was.
    pub set_aside: Option<PathBuf>,
}

/// Relations that hold derived data of the code graph being rebuilt
/// when their rows are its (`graph` column); every other row is kept.
fn is_code_relation(name: &str) -> bool {
    name.starts_with("code_") || matches!(name, "node" | "edge" | "graph" | "context_cache")
}

/// Relations that hold nothing but code graphs' rows, which an index run
/// makes again from source (`node`, `edge` and `graph` hold other graphs
/// too).
fn is_derived(name: &str) -> bool {
    name.starts_with("code_") || name == "context_cache"
}

/// Rebuild the database at `path`: `build` indexes into the new database
/// at the location it is given (which does not exist yet); the rest is
/// kept (see the module docs).
pub fn rebuild<S, E: From<StoreError>>(
    path: &Path,
    opts: &Options,
    build: impl FnOnce(&Location) -> Result<S, E>,
) -> Result<Rebuilt<S>, E> {
    let new_path = sidecar(path, ".rebuild");
    remove_database_files(&new_path)?;
    if !path.exists() {
        let summary = build(&Location::Sqlite(path.to_path_buf()))?;
        return Ok(Rebuilt {
            summary,
            condition: Condition::Missing,
            kept: Vec::new(),
            not_kept: Vec::new(),
            unreadable: Vec::new(),
            salvage: None,
            set_aside: None,
        });
    }
    let mut read = read_old(path, opts)?;
    let keep_aside = !matches!(read.condition, Condition::Sound);
    let (salvage, set_aside) = if keep_aside {
        let salvage = write_salvage(path, &read)?;
        let tag = match read.condition {
            Condition::Newer(_) => "newer",
            _ => "damaged",
        };
        (Some(salvage), link_aside(path, tag))
    } else {
        (None, None)
    };
    let summary = match build(&Location::Sqlite(new_path.clone())) {
        Ok(summary) => summary,
        Err(e) => {
            let _ = remove_database_files(&new_path);
            return Err(e);
        }
    };
    let copied = copy_into(&new_path, &mut read);
    let (kept, not_kept) = match copied {
        Ok(outcome) => outcome,
        Err(e) => {
            let _ = remove_database_files(&new_path);
            return Err(e.into());
        }
    };
    swap_in(&new_path, path, read.condition == Condition::Sound)?;
    Ok(Rebuilt {
        summary,
        condition: read.condition,
        kept,
        not_kept,
        unreadable: read.unreadable,
        salvage,
        set_aside,
    })
}

/// The rows of the old database to keep, and what could not be read.
struct OldRows {
    condition: Condition,
    version: Option<i64>,
    relations: BTreeMap<String, NamedRows>,
    unreadable: Vec<(String, String)>,
    /// Relations of code graphs only (see [`is_derived`]) that could not
    /// be read: made again from source, not counted as lost.
    derived_unreadable: Vec<(String, String)>,
}

/// Read what the old database holds besides the code graph (see the
/// module docs); refuses a newer one unless allowed, before anything is
/// written.
fn read_old(path: &Path, opts: &Options) -> Result<OldRows> {
    let mut old = OldRows {
        condition: match health::check_integrity(path) {
            Some(what) => Condition::Damaged(what),
            None => Condition::Sound,
        },
        version: None,
        relations: BTreeMap::new(),
        unreadable: Vec::new(),
        derived_unreadable: Vec::new(),
    };
    let location = Location::Sqlite(path.to_path_buf());
    // Unprobed: a file shorter than its header says may still have
    // readable relations.
    let store = match Store::open_probed(&location, false) {
        Ok(store) => store,
        Err(e) => {
            old.damaged(&e);
            old.unreadable.push(("*".into(), reason(&e)));
            return Ok(old);
        }
    };
    match schema::current_version(&store) {
        Ok(v) if v > schema::latest_version() => {
            if !opts.allow_downgrade {
                return Err(StoreError::Downgrade {
                    path: path.display().to_string(),
                    found: v,
                    supported: schema::latest_version(),
                });
            }
            old.version = Some(v);
            old.condition = Condition::Newer(v);
        }
        Ok(v) => {
            old.version = Some(v);
            if old.condition == Condition::Sound && v < schema::latest_version() {
                // Copied rows must have this version's columns.
                if let Err(e) = schema::migrate(&store) {
                    old.condition = Condition::Damaged(format!(
                        "its migration from schema {v} failed: {}",
                        reason(&e)
                    ));
                }
            }
        }
        Err(e) => old.damaged(&e),
    }
    let names = match store.relations() {
        Ok(names) => names,
        Err(e) => {
            old.damaged(&e);
            old.unreadable.push(("*".into(), reason(&e)));
            return Ok(old);
        }
    };
    for name in names {
        // Indexes are rebuilt with their relations; versions are the new
        // database's own.
        if name.contains(':') || name == "schema_version" {
            continue;
        }
        match store.dump_named(&name) {
            Ok(mut rows) => {
                if is_code_relation(&name) && rows.headers.first().is_some_and(|h| h == "graph") {
                    rows.rows
                        .retain(|r| r.first().and_then(|v| v.get_str()) != Some(&opts.graph));
                }
                if !rows.rows.is_empty() {
                    old.relations.insert(name, rows);
                }
            }
            Err(e) => {
                old.damaged(&e);
                if is_derived(&name) {
                    old.derived_unreadable.push((name, reason(&e)));
                } else {
                    old.unreadable.push((name, reason(&e)));
                }
            }
        }
    }
    Ok(old)
}

impl OldRows {
    /// A read failed: a file thought sound is damaged after all.
    fn damaged(&mut self, e: &StoreError) {
        if self.condition == Condition::Sound {
            self.condition = Condition::Damaged(reason(e));
        }
    }
}

/// What went wrong reading, without the advice of the whole error (the
/// caller reports it with its own).
fn reason(e: &StoreError) -> String {
    match e {
        StoreError::Damaged { what, .. } | StoreError::Access { what, .. } => what.clone(),
        other => other.to_string(),
    }
}

impl Store {
    /// Every row of `relation` with its column names, unsorted.
    fn dump_named(&self, relation: &str) -> Result<NamedRows> {
        let exported = self
            .guard(|| self.db.export_relations([relation].into_iter()))?
            .map_err(|e| self.failure(&e.to_string()))?;
        Ok(exported
            .into_values()
            .next()
            .unwrap_or_else(|| NamedRows::new(Vec::new(), Vec::new())))
    }
}

/// Write what `old` read, and what it could not, to
/// `graph.db.salvage-<time>.json` beside `path`, durably.
fn write_salvage(path: &Path, old: &OldRows) -> Result<PathBuf> {
    let target = health::aside(path, "salvage");
    let target = target.with_file_name(format!(
        "{}.json",
        target.file_name().unwrap_or_default().to_string_lossy()
    ));
    let relations: serde_json::Map<String, serde_json::Value> = old
        .relations
        .iter()
        .map(|(name, rows)| (name.clone(), rows.clone().into_json()))
        .collect();
    let unreadable: serde_json::Map<String, serde_json::Value> = old
        .unreadable
        .iter()
        .chain(&old.derived_unreadable)
        .map(|(name, why)| (name.clone(), serde_json::Value::from(why.as_str())))
        .collect();
    let condition = match &old.condition {
        Condition::Damaged(what) => format!("damaged: {what}"),
        Condition::Newer(v) => format!("schema version {v}, newer than this graphctx's"),
        Condition::Sound | Condition::Missing => "sound".to_string(),
    };
    let doc = serde_json::json!({
        "database": path.display().to_string(),
        "written_at": crate::support::time::now_rfc3339(),
        "condition": condition,
        "schema_version": old.version,
        "relations": relations,
        "unreadable": unreadable,
    });
    let io = |p: &Path, e: std::io::Error| health::access_io(&p.display().to_string(), e);
    let text = serde_json::to_vec_pretty(&doc)
        .map_err(|e| StoreError::Query(format!("cannot write the salvage file: {e}")))?;
    let partial = sidecar(&target, ".partial");
    std::fs::write(&partial, text).map_err(|e| io(&partial, e))?;
    std::fs::File::open(&partial)
        .and_then(|f| f.sync_all())
        .map_err(|e| io(&partial, e))?;
    std::fs::rename(&partial, &target).map_err(|e| io(&target, e))?;
    sync_dir_of(&target)?;
    Ok(target)
}

/// Link the old file (and its write-ahead log) aside under `tag`, best
/// effort: the salvage file already holds what could be read.
fn link_aside(path: &Path, tag: &str) -> Option<PathBuf> {
    let aside = health::aside(path, tag);
    std::fs::hard_link(path, &aside)
        .or_else(|_| std::fs::copy(path, &aside).map(|_| ()))
        .ok()?;
    let log = sidecar(path, "-wal");
    if log.exists() {
        let _ = std::fs::copy(&log, sidecar(&aside, "-wal"));
    }
    Some(aside)
}

/// Copy the kept rows into the new database at `new_path`, relation by
/// relation (nobody reads it yet). A sound database's rows must all land;
/// of a damaged or newer one's, those that do not fit are named.
#[allow(clippy::type_complexity)]
fn copy_into(
    new_path: &Path,
    old: &mut OldRows,
) -> Result<(Vec<(String, usize)>, Vec<(String, String)>)> {
    let store = Store::open(&Location::Sqlite(new_path.to_path_buf()))?;
    let present = store.relations()?;
    let (mut kept, mut not_kept) = (Vec::new(), Vec::new());
    for (name, rows) in std::mem::take(&mut old.relations) {
        let count = rows.rows.len();
        let landed = if present.contains(&name) {
            let one = BTreeMap::from([(name.clone(), rows)]);
            let _commit = lock::CommitLock::write(store.location())?;
            store
                .guard(|| store.db.import_relations(one))?
                .map_err(|e| store.failure(&e.to_string()))
        } else {
            Err(StoreError::Query(
                "this graphctx has no such relation".into(),
            ))
        };
        match landed {
            Ok(()) => kept.push((name, count)),
            Err(e) if old.condition == Condition::Sound => {
                return Err(StoreError::Query(format!(
                    "cannot copy relation {name} into the rebuilt database: {e}"
                )))
            }
            Err(e) => not_kept.push((name, reason(&e))),
        }
    }
    Ok((kept, not_kept))
}

/// Move the complete new database at `new_path` over `path` (see the
/// module docs). A sound old database's log is folded into it first, so
/// that a crash between removing the log and the rename loses nothing.
fn swap_in(new_path: &Path, path: &Path, old_is_sound: bool) -> Result<()> {
    let shown = |p: &Path| p.display().to_string();
    let io = |p: &Path, e: std::io::Error| health::access_io(&shown(p), e);
    checkpoint(new_path).map_err(|e| health::classify(&shown(new_path), &e.to_string()))?;
    std::fs::File::open(new_path)
        .and_then(|f| f.sync_all())
        .map_err(|e| io(new_path, e))?;
    let _commit = lock::CommitLock::write(&Location::Sqlite(path.to_path_buf()))?;
    if old_is_sound {
        checkpoint(path).map_err(|e| {
            StoreError::Busy(format!(
                "cannot fold the write-ahead log of {} into it ({e}); another process is \
                 reading it: stop it and run the rebuild again",
                shown(path)
            ))
        })?;
    }
    // The old file's log and its index belong to it, never to the new one.
    for stale in [sidecar(path, "-wal"), sidecar(path, "-shm")] {
        remove_if_present(&stale)?;
    }
    std::fs::rename(new_path, path).map_err(|e| io(path, e))?;
    sync_dir_of(path)?;
    let runs = sidecar(new_path, super::runs::RUNS_SUFFIX);
    if runs.exists() {
        let _ = std::fs::rename(&runs, sidecar(path, super::runs::RUNS_SUFFIX));
    }
    for leftover in [".lock", ".commit.lock", "-wal", "-shm"] {
        let _ = remove_if_present(&sidecar(new_path, leftover));
    }
    Ok(())
}

/// Fold the write-ahead log of the database at `path` into it and empty
/// the log; fails when readers keep SQLite from copying all of it.
fn checkpoint(path: &Path) -> Result<(), sqlite::Error> {
    let mut conn = sqlite::Connection::open(path)?;
    conn.set_busy_timeout(5000)?;
    let mut busy = false;
    conn.iterate("PRAGMA wal_checkpoint(TRUNCATE)", |row| {
        busy = row.first().and_then(|(_, v)| *v) == Some("1");
        true
    })?;
    if busy {
        return Err(sqlite::Error {
            code: Some(5),
            message: Some("the checkpoint was blocked by a reader".into()),
        });
    }
    Ok(())
}

/// Remove the database at `path` with every file beside it a build or a
/// rebuild leaves (logs, a build in progress, its run record).
fn remove_database_files(path: &Path) -> Result<()> {
    for suffix in [
        "",
        "-wal",
        "-shm",
        "-journal",
        super::BUILDING_SUFFIX,
        ".building-journal",
        super::runs::RUNS_SUFFIX,
    ] {
        remove_if_present(&sidecar(path, suffix))?;
    }
    Ok(())
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(health::access_io(&path.display().to_string(), e)),
    }
}

/// A rename or a new file in `path`'s directory is durable once the
/// directory is synced.
fn sync_dir_of(path: &Path) -> Result<()> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| health::access_io(&dir.display().to_string(), e)),
        None => Ok(()),
    }
}
