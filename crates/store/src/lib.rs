//! The CozoDB store: opening, schema migration, parameterised queries and
//! atomic bulk writes.
//!
//! Every script the engine runs is a file in `queries/` (see [`queries`]) or
//! `schema/` (see [`schema`]); user input reaches Datalog only as
//! `$parameters`. Writes go through [`Store::apply`], which lands a whole
//! batch of puts and deletes across relations in one transaction — a crash
//! leaves either the old or the new state, never half of a batch.

use graphctx_base::support;

mod direct;
pub mod health;
mod lander;
pub mod lock;
pub mod place;
pub mod queries;
pub mod rebuild;
pub mod rows;
pub mod runs;
pub mod schema;
pub mod status;
pub mod value;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cozo::{DataValue, DbInstance, NamedRows, ScriptMutability};
use rayon::prelude::*;

pub use rows::{RowError, StoredRow, WritableRow};
pub use value::{Params, Row};

/// Directory inside an indexed repository that holds the default database.
pub const STORE_DIR: &str = ".graphctx";
/// File name of the default SQLite database inside [`STORE_DIR`].
pub const DB_FILE: &str = "graph.db";
/// Suffix of a database file under construction beside its final path
/// (see [`Store::create_building`]). Connections to such a file keep no
/// journal: nobody else reads it, and a crash just leaves it to be thrown
/// away.
pub const BUILDING_SUFFIX: &str = ".building";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open database {path}: {message}")]
    Open { path: String, message: String },
    #[error(
        "database {path} has schema version {found}, written by a newer graphctx (this one \
         understands up to {supported}); use that graphctx, or run `{} --allow-downgrade` to \
         rebuild it for this one (what it holds besides the code graph is saved to a salvage \
         file beside it first, and kept where this version can read it)",
        health::rebuild_command(.path)
    )]
    NewerSchema {
        path: String,
        found: i64,
        supported: i64,
    },
    /// `index --rebuild` of a newer database without `--allow-downgrade`.
    #[error(
        "refusing to rebuild {path}: it has schema version {found}, written by a newer graphctx \
         (this one understands up to {supported}), and this version may not be able to keep all \
         it holds; use the newer graphctx, or confirm with `{} --allow-downgrade` (everything \
         it holds is saved to a salvage file beside it first, and the old file is kept aside)",
        health::rebuild_command(.path)
    )]
    Downgrade {
        path: String,
        found: i64,
        supported: i64,
    },
    #[error("query failed: {0}")]
    Query(String),
    /// The file is not a database graphctx can read: truncated, damaged,
    /// not SQLite (see [`health`]).
    #[error(
        "database {path} cannot be read: {what}; run `{}` to rebuild the code graph (what can \
         still be read of its ontology graphs, canvas sessions and conversations is saved to a \
         salvage file beside it and kept)",
        health::rebuild_command(.path)
    )]
    Damaged { path: String, what: String },
    /// The file or its directory cannot be used as it is: permissions, a
    /// full disk (see [`health`]).
    #[error("database {path} cannot be used: {what}; {fix}")]
    Access {
        path: String,
        what: String,
        fix: String,
    },
    #[error("write rejected: the script modifies the database; pass --write to allow it")]
    ReadOnly,
    #[error("{0}")]
    Busy(String),
    /// A stored row or query result does not have the columns its reader
    /// expects.
    #[error("unexpected row: {0}")]
    Row(#[from] RowError),
    /// Another writer changed the graph between reading its seq and
    /// landing a change prepared against it.
    #[error(
        "graph '{graph}' changed while this change was prepared (seq {expected} became \
         {found}); nothing was written, try again"
    )]
    Conflict {
        graph: String,
        expected: i64,
        found: i64,
    },
    /// Derived data is missing or from another version: re-index.
    #[error("{0}")]
    Outdated(String),
    /// A database appeared at the path a new one was built for.
    #[error("a database appeared at {0} while a new one was built for it")]
    Occupied(String),
    #[error("I/O error on {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Where a database lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Memory,
    Sqlite(PathBuf),
}

impl Location {
    /// `mem` means an in-memory database; anything else is a file path.
    pub fn parse(spec: &str) -> Location {
        if spec == "mem" {
            Location::Memory
        } else {
            Location::Sqlite(PathBuf::from(spec))
        }
    }

    /// The default database of a repository: `ROOT/.graphctx/graph.db`.
    pub fn default_for(root: &Path) -> Location {
        Location::Sqlite(root.join(STORE_DIR).join(DB_FILE))
    }

    pub fn display(&self) -> String {
        match self {
            Location::Memory => "mem".to_string(),
            Location::Sqlite(p) => p.display().to_string(),
        }
    }
}

/// An open, migrated database.
#[derive(Clone)]
pub struct Store {
    db: DbInstance,
    location: Location,
    /// Graph changes of this process land one at a time (the commit lock
    /// does not exclude threads of an in-memory database).
    graph_commits: Arc<Mutex<()>>,
    /// Rows staged before [`Store::land_when_full`] lands them.
    land_chunk_rows: usize,
    /// Present for a database under construction
    /// ([`Store::create_building`]), which no reader sees before it is
    /// complete: lands its chunks while the run goes on (see [`lander`]).
    lander: Option<Arc<lander::Lander<direct::Prepared>>>,
    /// The layouts of the relations a database being built lands directly
    /// (see [`direct`]): rows of known ones are encoded before hand-over.
    layouts: direct::Layouts,
    /// Rows a database being built landed without CozoDB's import (see
    /// [`direct`]).
    landed_directly: Arc<std::sync::atomic::AtomicUsize>,
}

/// Which open database a [`Store`] is ([`Store::instance`]). It keeps no
/// database open, and no database opened later is taken for it.
#[derive(Debug, Clone)]
pub struct Instance(std::sync::Weak<Mutex<()>>);

impl Instance {
    /// Whether `store` is this database.
    pub fn is(&self, store: &Store) -> bool {
        std::sync::Weak::ptr_eq(&self.0, &Arc::downgrade(&store.graph_commits))
    }
}

/// A change to one graph, prepared against the seq the graph had (see
/// [`Store::begin_graph_change`], [`Store::apply_to_graph`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphChange {
    graph: String,
    source: Option<String>,
    base: i64,
}

impl GraphChange {
    /// A change to `graph` prepared against seq `base` (as loaded by the
    /// writer; 0 for a graph never written).
    pub fn at(graph: &str, base: i64) -> GraphChange {
        GraphChange {
            graph: graph.to_string(),
            source: None,
            base,
        }
    }

    /// Record `source` as where the graph comes from (default: keep the
    /// stored one).
    pub fn with_source(mut self, source: impl Into<String>) -> GraphChange {
        self.source = Some(source.into());
        self
    }

    pub fn graph(&self) -> &str {
        &self.graph
    }

    /// The seq the graph had when the change was begun.
    pub fn base_seq(&self) -> i64 {
        self.base
    }

    /// The seq the change lands as.
    pub fn seq(&self) -> i64 {
        self.base + 1
    }
}

impl Store {
    /// Open (creating if needed) and migrate the database at `location`.
    pub fn open(location: &Location) -> Result<Store> {
        let store = Store::open_unmigrated(location)?;
        schema::migrate(&store)?;
        Ok(store)
    }

    /// Open (creating if needed) without migrating: [`Store::open`] does
    /// both; tests use this to build databases as older versions left them.
    pub fn open_unmigrated(location: &Location) -> Result<Store> {
        Store::open_probed(location, true)
    }

    /// [`Store::open_unmigrated`], with the file checked by
    /// [`health::probe`] first unless `probe` is false (a rebuild reads
    /// what it can of a file the check refuses).
    fn open_probed(location: &Location, probe: bool) -> Result<Store> {
        let db = match location {
            Location::Memory => DbInstance::new("mem", "", "")
                .map_err(|e| open_error(&location.display(), &e.to_string()))?,
            Location::Sqlite(path) => {
                place::make_dir_of(path)?;
                configure_sqlite_library();
                open_sqlite(path, probe)?
            }
            .map_err(|e| open_error(&location.display(), &e.to_string()))?,
        };
        Ok(Store {
            db,
            location: location.clone(),
            graph_commits: Arc::default(),
            land_chunk_rows: LAND_CHUNK_ROWS,
            lander: None,
            layouts: direct::Layouts::default(),
            landed_directly: Arc::default(),
        })
    }

    /// Start a new database for `path` in `path.building`, which no reader
    /// opens and which [`Store::finish_building`] moves into place whole.
    /// A stale build file (a run killed before) is thrown away first. The
    /// caller holds `path`'s write lock, so no other builder uses it.
    ///
    /// The build file keeps no journal and does not sync (see
    /// [`BUILDING_SUFFIX`]): a large first index then writes each page
    /// once, instead of once to the write-ahead log, once more at the
    /// checkpoint, and with every page of an uncommitted multi-gigabyte
    /// transaction looked up in the log's index.
    pub fn create_building(path: &Path) -> Result<Store> {
        let building = building_path(path);
        for stale in [building.clone(), sidecar(&building, "-journal")] {
            match std::fs::remove_file(&stale) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(StoreError::Io {
                        path: stale.display().to_string(),
                        source: e,
                    })
                }
            }
        }
        place::make_dir_of(&building)?;
        configure_sqlite_library();
        create_key_value_table(&building)?;
        let db = DbInstance::new("sqlite", &building, "").map_err(|e| StoreError::Open {
            path: building.display().to_string(),
            message: e.to_string(),
        })?;
        // Locks are taken on the final path's lock files (no reader opens
        // the build file; its writer holds the write lock).
        let location = Location::Sqlite(path.to_path_buf());
        let landed_directly = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let layouts = direct::Layouts::default();
        let lander = lander::Lander::new({
            let (db, location) = (db.clone(), location.clone());
            let layouts = layouts.clone();
            let landed_directly = Arc::clone(&landed_directly);
            // Opened on the first chunk, after the schema is in place.
            let direct: Mutex<Option<direct::DirectLanding>> = Mutex::new(None);
            move |chunk| {
                let _commit = lock::CommitLock::write(&location)?;
                let mut direct = direct
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let landing = match direct.as_mut() {
                    Some(landing) => landing,
                    None => direct.insert(direct::DirectLanding::open(&building, layouts.clone())?),
                };
                landing.land(&db, chunk)?;
                landed_directly.store(landing.rows_direct, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
        });
        let store = Store {
            db,
            location,
            graph_commits: Arc::default(),
            land_chunk_rows: LAND_CHUNK_ROWS,
            lander: Some(Arc::new(lander)),
            layouts,
            landed_directly,
        };
        schema::migrate(&store)?;
        Ok(store)
    }

    /// Move a database made by [`Store::create_building`] to `path`: the
    /// file is switched to write-ahead logging (as every database is),
    /// synced, and linked into place in one step, so a reader finds either
    /// no database or the complete one. Fails with [`StoreError::Occupied`]
    /// (and leaves `path` alone) when a database appeared at `path`
    /// meanwhile; the build file is then removed.
    pub fn finish_building(self, path: &Path) -> Result<()> {
        let building = building_path(path);
        self.settle_landing()?;
        drop(self);
        let io = |p: &Path, e: std::io::Error| StoreError::Io {
            path: p.display().to_string(),
            source: e,
        };
        prepare_sqlite_file(&building)?;
        std::fs::File::open(&building)
            .and_then(|f| f.sync_all())
            .map_err(|e| io(&building, e))?;
        // Logs of a database deleted by hand would be replayed into this
        // one: no database is at `path`, so they belong to none.
        if !path.exists() {
            for stale in [sidecar(path, "-wal"), sidecar(path, "-shm")] {
                match std::fs::remove_file(&stale) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io(&stale, e)),
                }
            }
        }
        let linked = std::fs::hard_link(&building, path);
        let removed = std::fs::remove_file(&building);
        match linked {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(StoreError::Occupied(path.display().to_string()))
            }
            Err(e) => return Err(io(path, e)),
        }
        removed.map_err(|e| io(&building, e))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // The new name is durable once the directory is.
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io(dir, e))?;
        }
        Ok(())
    }

    /// An in-memory store, for tests and `--db mem`.
    pub fn memory() -> Result<Store> {
        Store::open(&Location::Memory)
    }

    pub fn location(&self) -> &Location {
        &self.location
    }

    /// Run a read-only script with parameters.
    pub fn read(&self, script: &str, params: Params) -> Result<NamedRows> {
        self.run(script, params, ScriptMutability::Immutable)
    }

    /// Run a script that may write.
    pub fn write(&self, script: &str, params: Params) -> Result<NamedRows> {
        self.run(script, params, ScriptMutability::Mutable)
    }

    /// One script, tried again while SQLite reports the file busy in a
    /// way its busy timeout does not cover (another process's connection
    /// opening, or closing and checkpointing the log): a script is one
    /// transaction, so a try that failed wrote nothing. Bounded by
    /// [`BUSY_TIMEOUT_MS`], as every wait for a lock is.
    fn run(&self, script: &str, params: Params, m: ScriptMutability) -> Result<NamedRows> {
        while_busy(
            || self.run_once(script, params.clone(), m),
            |done| matches!(done, Err(StoreError::Busy(_))),
        )
    }

    fn run_once(&self, script: &str, params: Params, m: ScriptMutability) -> Result<NamedRows> {
        self.settle_landing()?;
        let _commit = match m {
            ScriptMutability::Immutable => lock::CommitLock::read(&self.location),
            ScriptMutability::Mutable => lock::CommitLock::write(&self.location)?,
        };
        self.guard(|| self.db.run_script(script, params.into_map(), m))?
            .map_err(|e| {
                let msg = format!("{e:?}");
                if m == ScriptMutability::Immutable && is_write_rejection(&msg) {
                    StoreError::ReadOnly
                } else {
                    self.failure(&format!("{e}{}", help_of(&msg)))
                }
            })
    }

    /// Land a batch of puts and deletes in one transaction. Keys of the map
    /// are relation names; a leading `-` deletes the given rows (key columns
    /// suffice). Deletes run before puts of the same relation.
    ///
    /// A batch that names the graph it changes ([`Batch::lands_as`]) also
    /// writes that graph's row at the next seq, in the same transaction:
    /// this is the only place that writes a graph's `seq`, so every change
    /// that lands moves it by exactly one and cached results keyed on it
    /// cannot outlive a change. The batch itself may not touch the `graph`
    /// relation. Fails with [`StoreError::Conflict`] (and writes nothing)
    /// when the graph's seq moved since the change was begun.
    pub fn apply(&self, batch: Batch) -> Result<()> {
        self.settle_landing()?;
        if batch.is_empty() {
            return Ok(());
        }
        batch.check_no_graph_row()?;
        match batch.graph_change.clone() {
            None => {
                let _commit = lock::CommitLock::write(&self.location)?;
                self.import(batch)
            }
            Some(change) => self.land_graph_change(&change, batch).map(|_| ()),
        }
    }

    /// Land `batch` as one change of `change`'s graph (see
    /// [`Store::apply`]); returns the graph's new seq.
    pub fn apply_to_graph(&self, change: &GraphChange, mut batch: Batch) -> Result<i64> {
        self.settle_landing()?;
        batch.check_no_graph_row()?;
        batch.lands_as(change.clone());
        self.land_graph_change(change, batch)
    }

    fn land_graph_change(&self, change: &GraphChange, mut batch: Batch) -> Result<i64> {
        let _one = self
            .graph_commits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _commit = lock::CommitLock::write(&self.location)?;
        let (found, stored_source) = self.seq_and_source(&change.graph)?;
        if found != change.base {
            return Err(StoreError::Conflict {
                graph: change.graph.clone(),
                expected: change.base,
                found,
            });
        }
        let source = match &change.source {
            Some(s) => DataValue::from(s.as_str()),
            None => DataValue::from(stored_source.unwrap_or_default()),
        };
        let seq = change.seq();
        batch.push(
            rows::GraphRow::NAME,
            rows::GraphRow::COLUMNS,
            vec![DataValue::from(change.graph.as_str()), source, seq.into()],
        );
        self.import(batch)?;
        Ok(seq)
    }

    /// Land `batch` in one transaction, each relation's rows in key order.
    fn import(&self, batch: Batch) -> Result<()> {
        let relations = in_landing_order(batch);
        self.guard(|| import_in_order(&self.db, relations))?
            .map_err(|e| match e {
                StoreError::Query(text) => self.failure(&text),
                other => other,
            })
    }

    /// Run `call` into CozoDB, a panic of it an error (see [`health`]).
    fn guard<T>(&self, call: impl FnOnce() -> T) -> Result<T> {
        match &self.location {
            Location::Sqlite(path) => health::guard(path, call),
            Location::Memory => health::guard(Path::new("mem"), call),
        }
    }

    /// The error a failed script or import with `text` is: about the file
    /// (damage, access) when SQLite's code says so (see [`health`]).
    fn failure(&self, text: &str) -> StoreError {
        match &self.location {
            Location::Sqlite(_) => health::classify(&self.location.display(), text),
            Location::Memory => StoreError::Query(text.to_string()),
        }
    }

    /// Land what `batch` holds so far when no reader can see this
    /// database before it is complete (one being built, see
    /// [`Store::create_building`]), and empty the batch: a writer of
    /// millions of rows then holds them a stage at a time. Elsewhere it
    /// does nothing, and the batch lands whole with the rest.
    /// The rows land on a thread of their own while the caller goes on
    /// (see [`lander`]); every other use of the store waits for them first,
    /// and fails if they did. Returns the number of rows handed over.
    pub fn land_early(&self, batch: &mut Batch) -> Result<usize> {
        let Some(lander) = self
            .lander
            .as_ref()
            .filter(|_| batch.graph_change.is_none())
        else {
            return Ok(0);
        };
        let early = batch.early;
        let staged = std::mem::take(batch);
        let rows = staged.len();
        if staged.is_empty() {
            batch.early = early;
            return Ok(0);
        }
        staged.check_no_graph_row()?;
        // Sorted here, landed on the lander's thread while the caller
        // makes the next chunk; what the caller waits for it counts as
        // writing.
        let waited = lander.hand_over(self.layouts.prepare(in_landing_order(staged)))?;
        batch.early = EarlyLanding {
            rows: early.rows + rows,
            time: early.time + waited,
        };
        Ok(rows)
    }

    /// Land staged rows of a database being built `rows` at a time
    /// instead of [`LAND_CHUNK_ROWS`] (tests use a few rows, so that every
    /// stage lands in many chunks).
    pub fn with_land_chunk_rows(mut self, rows: usize) -> Store {
        self.land_chunk_rows = rows.max(1);
        self
    }

    /// [`Store::land_early`] once `batch` holds a chunk of rows
    /// ([`LAND_CHUNK_ROWS`] unless [`Store::with_land_chunk_rows`] says):
    /// a writer that stages rows one at a time calls it after each, and a
    /// database being built then holds at most a chunk of staged rows,
    /// however large the stage. Every row of a chunk is final (a later
    /// chunk deletes nothing an earlier one put), which writers that call
    /// this keep. Rows and time landed are counted in the batch
    /// ([`Batch::landed_early`]).
    pub fn land_when_full(&self, batch: &mut Batch) -> Result<()> {
        if self.is_building() && batch.len() >= self.land_chunk_rows {
            self.land_early(batch)?;
        }
        Ok(())
    }

    /// How many rows of a database being built landed straight into
    /// CozoDB's table rather than through its import (see [`direct`]);
    /// counted once they landed.
    pub fn rows_landed_directly(&self) -> usize {
        let _ = self.settle_landing();
        self.landed_directly
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many staged rows a database being built lands at a time.
    pub fn land_chunk_rows(&self) -> usize {
        self.land_chunk_rows
    }

    /// Whether this is a database being built ([`Store::create_building`]):
    /// it held nothing when the run building it began, so a writer has no
    /// stored rows to compare with.
    pub fn is_building(&self) -> bool {
        self.lander.is_some()
    }

    /// Wait until the chunks of a database being built have landed (see
    /// [`lander`]); the first failure of any of them.
    fn settle_landing(&self) -> Result<()> {
        match &self.lander {
            Some(lander) => lander.settle(),
            None => Ok(()),
        }
    }

    /// Start a change to `graph` at its current seq: a batch that
    /// [`Batch::lands_as`] it lands as `change.seq()`.
    pub fn begin_graph_change(&self, graph: &str) -> Result<GraphChange> {
        Ok(GraphChange::at(graph, self.graph_seq(graph)?))
    }

    /// The graph's seq and source, read under the caller's commit lock.
    fn seq_and_source(&self, graph: &str) -> Result<(i64, Option<String>)> {
        let rows = self
            .guard(|| {
                self.db.run_script(
                    queries::GRAPH_SEQ,
                    Params::new().with("graph", graph).into_map(),
                    ScriptMutability::Immutable,
                )
            })?
            .map_err(|e| self.failure(&e.to_string()))?;
        Ok(match rows::decode_first::<rows::GraphSeq>(&rows)? {
            None => (0, None),
            Some(row) => (row.seq, Some(row.source.into_owned())),
        })
    }

    /// This open database, as distinct from every other the process
    /// opens (clones of one [`Store`] are the same one): what a cache of
    /// its rows checks before it answers for a store.
    pub fn instance(&self) -> Instance {
        Instance(Arc::downgrade(&self.graph_commits))
    }

    /// The change sequence number of `graph` (0 for a graph never written):
    /// it grows with every change that lands, so two reads of it bracket
    /// an answer made of several scripts (equal: nothing landed between).
    pub fn graph_seq(&self, graph: &str) -> Result<i64> {
        let rows = self.read(queries::GRAPH_SEQ, Params::new().with("graph", graph))?;
        Ok(rows::decode_first::<rows::GraphSeq>(&rows)?.map_or(0, |r| r.seq))
    }

    /// Names of the relations in the database.
    pub fn relations(&self) -> Result<Vec<String>> {
        let rows = self.read("::relations", Params::new())?;
        Ok(rows::decode_rows::<rows::Relations>(&rows)?
            .into_iter()
            .map(|r| r.name.into_owned())
            .collect())
    }

    /// Every stored row of `graph` in each of `relations` (named by the
    /// relation), read in one transaction, columns in the relation's own
    /// order (keys first). Each relation's first key column must be its
    /// graph.
    ///
    /// A whole relation is read as stored rather than through a query: a
    /// query of every row sorts and deduplicates what it reads (CozoDB
    /// keeps a rule's rows as a set), which took a no-op index run on a
    /// 9,400-file tree twice as long as reading its file rows takes.
    pub fn graph_rows(
        &self,
        relations: &[&str],
        graph: &str,
    ) -> Result<BTreeMap<String, NamedRows>> {
        let exported = while_busy(
            || {
                self.settle_landing()?;
                let _commit = lock::CommitLock::read(&self.location);
                self.guard(|| self.db.export_relations(relations.iter()))?
                    .map_err(|e| self.failure(&e.to_string()))
            },
            |done| matches!(done, Err(StoreError::Busy(_))),
        )?;
        Ok(exported
            .into_iter()
            .map(|(name, mut rows)| {
                rows.rows
                    .retain(|r| r.first().and_then(DataValue::get_str) == Some(graph));
                (name, rows)
            })
            .collect())
    }

    /// Every row of `relation`, sorted, for comparisons in tests and dumps.
    pub fn dump(&self, relation: &str) -> Result<Vec<Vec<DataValue>>> {
        self.settle_landing()?;
        let _commit = lock::CommitLock::read(&self.location);
        let exported = self
            .guard(|| self.db.export_relations([relation].into_iter()))?
            .map_err(|e| self.failure(&e.to_string()))?;
        let mut rows = exported
            .into_values()
            .next()
            .map(|r| r.rows)
            .unwrap_or_default();
        rows.sort();
        Ok(rows)
    }
}

/// Land relations' rows already in landing order (see
/// [`in_landing_order`]) in one transaction of `db`.
fn import_in_order(db: &DbInstance, relations: lander::Chunk) -> Result<()> {
    db.import_relations(relations)
        .map_err(|e| StoreError::Query(e.to_string()))
}

/// `batch`'s rows by relation, each relation's in key order.
fn in_landing_order(batch: Batch) -> lander::Chunk {
    let key_lens = batch.key_lens.clone();
    let mut relations = batch.into_map();
    // In key order (CozoDB's key encoding sorts as the values do), rows
    // land on neighbouring pages one after another instead of on random
    // pages of a large database. The sort is stable on the key alone:
    // of two puts of one key the later still lands last, and wins.
    relations.par_iter_mut().for_each(|(name, named)| {
        if let Some(&k) = key_lens.get(name) {
            named.rows.par_sort_by(|a, b| a[..k].cmp(&b[..k]));
        }
    });
    relations
}

/// Memory-map database files for reading (up to 1 GiB). CozoDB's SQLite
/// backend keeps everything in one key-value table and answers a query by
/// many short range scans; with the default page cache (2 MB per
/// connection) most page reads of a large index become `pread` calls that
/// copy the page. A mapping serves the same pages from the OS page cache
/// in place. The setting is process-wide and must be made before SQLite
/// initialises, so it is made once, before the first connection; if
/// something opened SQLite earlier, the call is refused and reads simply
/// go through `pread` as before.
fn configure_sqlite_library() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        const DEFAULT_MMAP: i64 = 1 << 30;
        const MAX_MMAP: i64 = 1 << 31;
        // SAFETY: `sqlite3_config` is called before any connection is
        // opened in this process (guarded by `ONCE`, which runs before the
        // first open); SQLite returns SQLITE_MISUSE, harmlessly, otherwise.
        unsafe {
            sqlite3_sys::sqlite3_config(
                sqlite3_sys::SQLITE_CONFIG_MMAP_SIZE,
                DEFAULT_MMAP,
                MAX_MMAP,
            );
        }
        // SAFETY: `configure_connection` has the signature SQLite calls an
        // extension entry point with (`sqlite3_auto_extension` takes it as
        // a type-erased function pointer, as its C declaration does).
        unsafe {
            type EntryPoint = unsafe extern "C" fn(
                *mut sqlite3_sys::sqlite3,
                *mut *mut std::ffi::c_char,
                *const std::ffi::c_void,
            ) -> std::ffi::c_int;
            let entry: EntryPoint = configure_connection;
            sqlite3_sys::sqlite3_auto_extension(Some(std::mem::transmute::<
                EntryPoint,
                unsafe extern "C" fn(),
            >(entry)));
        }
    });
}

/// Page cache of every connection: 128 MiB (`cache_size` takes KiB when
/// negative). SQLite's default (2 MiB) is far too small for an index
/// transaction of millions of rows: dirty pages spill into the write-ahead
/// log long before the commit, and every later read of a spilled page is
/// looked up in the log's frame index — the lookups, not the writes, then
/// dominate a large cold index. The cache fills only as far as a
/// connection touches pages (reads are mostly served from the memory
/// map), so small databases never pay for it.
const CONNECTION_CACHE_PRAGMA: &std::ffi::CStr = c"PRAGMA cache_size=-131072";

/// Connections to a database under construction (see
/// [`Store::create_building`]): no rollback journal, no syncs. If the
/// build fails or is killed the file is discarded; it is synced once,
/// complete, before it is moved into place. No memory map either: a build
/// reads only the pages its inserts descend through, which its page cache
/// holds, and a mapping would count every page of a multi-gigabyte file it
/// touched as the process's own memory (200 MB of a first index of the
/// registry tree's peak, for no gain in time). And a smaller page cache
/// (32 MiB): without a journal, pages that do not fit go to the file
/// itself, not to a log that every later read must search (another
/// 100 MB of that peak, again no slower).
const BUILDING_PRAGMAS: &std::ffi::CStr = c"PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; \
    PRAGMA mmap_size=0; PRAGMA cache_size=-32768";

/// How long a connection waits for another process's lock on the file
/// before it reports the database busy. Writers are kept one at a time by
/// graphctx's own lock (`lock.rs`, which is what `--no-wait` is about); what
/// is left are moments — a checkpoint, a reader rebuilding the log's index
/// after the last connection closed — in which a process that starts (a
/// server, `status`) must not give up at once. CozoDB opens its
/// connections without a timeout.
const BUSY_TIMEOUT_MS: std::ffi::c_int = 5000;

/// Called by SQLite for every new connection (registered with
/// `sqlite3_auto_extension`), including those CozoDB opens itself: the
/// page cache, the busy timeout, and a building database's settings.
unsafe extern "C" fn configure_connection(
    db: *mut sqlite3_sys::sqlite3,
    _error: *mut *mut std::ffi::c_char,
    _api: *const std::ffi::c_void,
) -> std::ffi::c_int {
    // SAFETY: `db` is the open connection SQLite hands the entry point;
    // a failed pragma leaves the default cache, which is harmless. The
    // file name SQLite returns lives as long as the connection.
    unsafe {
        let exec = |sql: &std::ffi::CStr| {
            sqlite3_sys::sqlite3_exec(
                db,
                sql.as_ptr(),
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        exec(CONNECTION_CACHE_PRAGMA);
        sqlite3_sys::sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
        let name = sqlite3_sys::sqlite3_db_filename(db, c"main".as_ptr());
        if !name.is_null()
            && std::ffi::CStr::from_ptr(name)
                .to_bytes()
                .ends_with(BUILDING_SUFFIX.as_bytes())
        {
            exec(BUILDING_PRAGMAS);
        }
    }
    sqlite3_sys::SQLITE_OK
}

/// CozoDB's database on the SQLite file at `path`, prepared first (see
/// [`prepare_sqlite_file`]). Opening can meet the file locked for a
/// moment by another process — one whose last connection is closing and
/// checkpointing the log, or starting and recovering it — in ways SQLite
/// reports at once instead of waiting ([`BUSY_TIMEOUT_MS`] does not
/// apply): a server started beside a running command must not fail for
/// it. Such a failure is tried again for as long as a lock is waited for.
/// With `probe`, an existing file is first checked by [`health::probe`]
/// (busy the same way, and tried again with the rest).
fn open_sqlite(path: &Path, probe: bool) -> Result<std::result::Result<DbInstance, cozo::Error>> {
    let open = || {
        if probe && std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            health::probe(path)?;
        }
        prepare_sqlite_file(path)?;
        health::guard(path, || DbInstance::new("sqlite", path, ""))
    };
    let busy = |opened: &Result<std::result::Result<DbInstance, cozo::Error>>| match opened {
        Err(StoreError::Busy(_)) => true,
        Ok(Err(e)) => matches!(
            open_error(&path.display().to_string(), &e.to_string()),
            StoreError::Busy(_)
        ),
        _ => false,
    };
    while_busy(open, busy)
}

/// `attempt`'s answer, tried again while `busy` says SQLite refused it
/// for a moment, for at most [`BUSY_TIMEOUT_MS`] (pauses from 5 ms,
/// doubling up to 200 ms); after that the last answer stands.
fn while_busy<T>(mut attempt: impl FnMut() -> T, busy: impl Fn(&T) -> bool) -> T {
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        let done = attempt();
        if !busy(&done) || started.elapsed().as_millis() >= BUSY_TIMEOUT_MS as u128 {
            return done;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(200));
    }
}

/// Put the database file in WAL mode (a persistent setting of the file):
/// readers in other processes keep reading while a writer writes, and a
/// large index transaction spills to the log instead of rewriting pages.
/// A new file gets CozoDB's table in key order first ([`KEY_VALUE_TABLE`]).
fn prepare_sqlite_file(path: &Path) -> Result<()> {
    let err = |e: sqlite::Error| open_error(&path.display().to_string(), &e.to_string());
    if !std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
        create_key_value_table(path)?;
    }
    let mut conn = sqlite::Connection::open(path).map_err(err)?;
    conn.set_busy_timeout(5000).map_err(err)?;
    let mut mode = String::new();
    conn.iterate("PRAGMA journal_mode", |pairs| {
        mode = pairs.first().and_then(|p| p.1).unwrap_or("").to_string();
        true
    })
    .map_err(err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        conn.execute("PRAGMA journal_mode=WAL").map_err(err)?;
    }
    Ok(())
}

/// CozoDB's one table of a SQLite database, made before CozoDB opens a
/// new file (its own `create table if not exists` then finds it). CozoDB
/// declares `k BLOB primary key` on an ordinary table: SQLite then keeps
/// every key twice, once in the rowid table's row and once in the index
/// that enforces the key, and a lookup walks both B-trees. Declared
/// `WITHOUT ROWID`, the rows live in one B-tree ordered by key: each key
/// is stored once, a range scan reads neighbouring pages, and rows landed
/// in key order fill pages one after another. Keys compare as blobs
/// (`memcmp`) either way, so CozoDB's statements work unchanged; a
/// database made before keeps the table it has.
const KEY_VALUE_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS cozo (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID";

/// Make CozoDB's table in the new database file at `path` (see
/// [`KEY_VALUE_TABLE`]).
fn create_key_value_table(path: &Path) -> Result<()> {
    let err = |e: sqlite::Error| open_error(&path.display().to_string(), &e.to_string());
    let conn = sqlite::Connection::open(path).map_err(err)?;
    conn.execute(PAGE_SIZE_PRAGMA).map_err(err)?;
    conn.execute(KEY_VALUE_TABLE).map_err(err)
}

/// Pages of 16 KiB for a new file instead of SQLite's 4 KiB. CozoDB's
/// keys are long (an edge's key holds two entity keys and a path, over
/// 200 bytes): a 4 KiB page holds a dozen, so a large index is a deep
/// B-tree whose pages split every few inserts. Set before the table is
/// made; a database made before keeps its page size.
const PAGE_SIZE_PRAGMA: &str = "PRAGMA page_size=16384";

/// `path` with `suffix` appended to its file name.
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// Where the database for `path` is built (see [`Store::create_building`]).
pub fn building_path(path: &Path) -> PathBuf {
    sidecar(path, BUILDING_SUFFIX)
}

/// The error opening the database at `path` failed with: about the file
/// when SQLite's code says so (see [`health`]), else [`StoreError::Open`].
fn open_error(path: &str, message: &str) -> StoreError {
    health::known_failure(path, message).unwrap_or_else(|| StoreError::Open {
        path: path.to_string(),
        message: message.to_string(),
    })
}

fn is_write_rejection(debug: &str) -> bool {
    debug.contains("eval::mutation_in_immutable") || debug.contains("read-only")
}

/// Cozo puts the useful part of some errors in the diagnostic's help.
fn help_of(debug: &str) -> String {
    match debug.find("help: Some(\"") {
        Some(i) => {
            let rest = &debug[i + 12..];
            let end = rest.find("\")").unwrap_or(rest.len());
            format!(" ({})", &rest[..end])
        }
        None => String::new(),
    }
}

/// How many staged rows a database being built lands at a time (see
/// [`Store::land_when_full`]). Two chunks are held at once (one landing,
/// one being staged; see [`lander`]), as rows of a few hundred bytes:
/// 200,000 rows held 250 MB more at the peak of a first index of the
/// registry tree than 50,000, which cost 1–2 % more time. 25,000 took
/// the links stage's peak down by another 75 MB (the edges' rows carry
/// three long keys each) in the same time; at 20,000 the transactions'
/// own cost showed (5 % slower) when chunks still landed through CozoDB.
pub const LAND_CHUNK_ROWS: usize = 25_000;

/// What a batch landed before the rest of it (see [`Store::land_early`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct EarlyLanding {
    pub rows: usize,
    pub time: std::time::Duration,
}

/// Rows to put into and delete from relations, applied atomically by
/// [`Store::apply`].
#[derive(Default)]
pub struct Batch {
    /// Rows landed early, and the time that took; kept across landings.
    early: EarlyLanding,
    relations: BTreeMap<String, NamedRows>,
    /// Key columns (the leading ones) of the relations whose rows were
    /// queued as typed rows or deletes: those land sorted by key.
    key_lens: BTreeMap<String, usize>,
    /// The graph this batch changes, when it is one change of a graph:
    /// [`Store::apply`] then writes the graph's next seq with it.
    graph_change: Option<GraphChange>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    fn entry(&mut self, name: &str, headers: &[&str]) -> &mut NamedRows {
        // Look up before inserting: no allocation per row.
        if !self.relations.contains_key(name) {
            self.relations.insert(
                name.to_string(),
                NamedRows::new(headers.iter().map(|h| h.to_string()).collect(), vec![]),
            );
        }
        self.relations
            .get_mut(name)
            .expect("inserted above when missing")
    }

    fn key_len(&mut self, relation: &str, len: usize) {
        if !self.key_lens.contains_key(relation) {
            self.key_lens.insert(relation.to_string(), len);
        }
    }

    fn push(&mut self, relation: &str, headers: &[&str], row: Row) {
        debug_assert_eq!(headers.len(), row.len());
        self.entry(relation, headers).rows.push(row);
    }

    /// Queue a typed row for insertion (replacing the row with its key).
    pub fn put_row<'a, R: WritableRow<'a>>(&mut self, row: R) {
        self.key_len(R::NAME, R::KEY.len());
        self.push(R::NAME, R::COLUMNS, row.encode());
    }

    /// Queue the row of `R` with these key values (in `R::KEY` order) for
    /// deletion.
    pub fn delete_key<'a, R: WritableRow<'a>>(&mut self, key: Row) {
        debug_assert_eq!(R::KEY.len(), key.len());
        self.delete_in(R::NAME, R::KEY, key);
    }

    /// Queue `row` (values in `headers` order) for insertion into
    /// `relation`: for writers that restore rows of any relation (the
    /// change log's row images). Others use [`Batch::put_row`].
    pub fn put(&mut self, relation: &str, headers: &[&str], row: Row) {
        self.push(relation, headers, row);
    }

    /// Queue the row with these key values for deletion from `relation`
    /// (see [`Batch::put`]; others use [`Batch::delete_key`]).
    pub fn delete(&mut self, relation: &str, key_headers: &[&str], key: Row) {
        self.delete_in(relation, key_headers, key);
    }

    fn delete_in(&mut self, relation: &str, key_headers: &[&str], key: Row) {
        debug_assert_eq!(key_headers.len(), key.len());
        let name = format!("-{relation}");
        self.key_len(&name, key_headers.len());
        self.push(&name, key_headers, key);
    }

    /// Make this batch one change of a graph: it lands as `change.seq()`,
    /// the store writing the graph's row (see [`Store::apply`]). A batch
    /// changes one graph; a second call replaces the first.
    pub fn lands_as(&mut self, change: GraphChange) {
        self.graph_change = Some(change);
    }

    /// The graph change this batch is, if any.
    pub fn graph_change(&self) -> Option<&GraphChange> {
        self.graph_change.as_ref()
    }

    /// Only the store's apply for a graph writes the `graph` relation.
    fn check_no_graph_row(&self) -> Result<()> {
        let graph = rows::GraphRow::NAME;
        if self
            .relations
            .iter()
            .any(|(k, r)| !r.rows.is_empty() && k.strip_prefix('-').unwrap_or(k) == graph)
        {
            return Err(StoreError::Query(format!(
                "a batch may not write the `{graph}` relation: its seq is written by the \
                 store's apply for a graph"
            )));
        }
        Ok(())
    }

    /// No rows queued and no graph change: applying it does nothing.
    pub fn is_empty(&self) -> bool {
        self.graph_change.is_none() && self.relations.values().all(|r| r.rows.is_empty())
    }

    /// The queued rows by relation name (`-name` for deletes), for writers
    /// that record what a batch changes (the operations change log).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &NamedRows)> {
        self.relations.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Number of rows the batch writes: puts and deletes, and the graph's
    /// row when it is a graph change.
    /// The rows landed before the rest of this batch and the time that
    /// took, summed over every early landing (see [`Store::land_early`]).
    pub fn landed_early(&self) -> EarlyLanding {
        self.early
    }

    pub fn len(&self) -> usize {
        usize::from(self.graph_change.is_some())
            + self.relations.values().map(|r| r.rows.len()).sum::<usize>()
    }

    fn into_map(self) -> BTreeMap<String, NamedRows> {
        self.relations
            .into_iter()
            .filter(|(_, r)| !r.rows.is_empty())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::{decode_first, CodeStatsRow};

    #[test]
    fn a_busy_attempt_is_tried_again_and_the_first_other_answer_stands() {
        let mut tries = 0;
        let done = while_busy(
            || {
                tries += 1;
                if tries < 3 {
                    Err(StoreError::Busy("locked".into()))
                } else {
                    Ok(tries)
                }
            },
            |r| matches!(r, Err(StoreError::Busy(_))),
        );
        assert_eq!(done.unwrap(), 3);
        // Any other failure is an answer at once.
        let mut tries = 0;
        let done: Result<()> = while_busy(
            || {
                tries += 1;
                Err(StoreError::ReadOnly)
            },
            |r| matches!(r, Err(StoreError::Busy(_))),
        );
        assert!(matches!(done, Err(StoreError::ReadOnly)));
        assert_eq!(tries, 1);
    }

    fn stats(entities: i64) -> CodeStatsRow<'static> {
        CodeStatsRow {
            graph: "code".into(),
            files: 1,
            entities,
            edges: 0,
            unresolved: 0,
            ambiguous: 0,
        }
    }

    fn stats_of(store: &Store) -> Vec<i64> {
        let rows = store
            .read(
                "?[graph, files, entities, edges, unresolved, ambiguous] := \
                 *code_stats{graph, files, entities, edges, unresolved, ambiguous}",
                Params::new(),
            )
            .unwrap();
        rows::decode_rows::<CodeStatsRow>(&rows)
            .unwrap()
            .into_iter()
            .map(|r| r.entities)
            .collect()
    }

    /// A store building `graph.db` in a new temporary directory.
    fn building_store() -> (tempfile::TempDir, PathBuf, Store) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.db");
        let store = Store::create_building(&path).unwrap();
        (dir, path, store)
    }

    /// The columns of a `node` row, as [`node_row`] gives them.
    const NODE_COLUMNS: &[&str] = &["graph", "id", "kind", "name", "doc"];

    /// A `node` row of the code graph: a function `id` named `name`.
    fn node_row(id: &str, name: &str) -> Row {
        ["code", id, "function", name, ""]
            .into_iter()
            .map(DataValue::from)
            .collect()
    }

    /// A row put again by a later chunk of a database being built, with
    /// an indexed column changed, moves its index entry as CozoDB's import
    /// moves it (the direct landing takes CozoDB's path for that row).
    #[test]
    fn a_row_landed_again_moves_its_index_entry() {
        let (landed_directly, names) =
            land_nodes_and_read_names(&[&[("k1", "first")], &[("k1", "second")]]);
        assert_eq!(landed_directly, 2);
        assert_eq!(names, [("second".to_string(), "k1".to_string())]);
    }

    /// Land `chunks` of `node` rows (id, name), each chunk at once, into a
    /// database being built: how many rows landed directly, and the
    /// (name, id) entries of `node:by_name` once it is complete.
    fn land_nodes_and_read_names(chunks: &[&[(&str, &str)]]) -> (usize, Vec<(String, String)>) {
        let (_dir, path, store) = building_store();
        for chunk in chunks {
            let mut batch = Batch::new();
            for (id, name) in *chunk {
                batch.push("node", NODE_COLUMNS, node_row(id, name));
            }
            store.land_early(&mut batch).unwrap();
        }
        let landed_directly = store.rows_landed_directly();
        store.finish_building(&path).unwrap();
        let store = Store::open(&Location::Sqlite(path)).unwrap();
        let names = store
            .read(
                "?[name, id] := *node:by_name{graph: 'code', name, id}",
                Params::new(),
            )
            .unwrap();
        let names = names
            .rows
            .iter()
            .map(|r| {
                (
                    r[0].get_str().unwrap().into(),
                    r[1].get_str().unwrap().into(),
                )
            })
            .collect();
        (landed_directly, names)
    }

    /// A row of a relation with an index put again, in a later chunk or
    /// in the same one, leaves only its last index entry, and the rows
    /// after it in its chunk land too (a failed insert's statement used to
    /// fail the next row's).
    #[test]
    fn a_row_put_again_keeps_one_index_entry_and_the_rows_after_it_land() {
        let (landed_directly, names) = land_nodes_and_read_names(&[
            &[("k1", "z"), ("k2", "a"), ("k3", "m")],
            // k1 again, k4 twice in one chunk.
            &[("k1", "y"), ("k4", "first"), ("k4", "second"), ("k5", "b")],
            // k3 again, followed by a new row.
            &[("k3", "c"), ("k6", "d")],
        ]);
        assert_eq!(landed_directly, 9);
        let expected = [
            ("a", "k2"),
            ("b", "k5"),
            ("c", "k3"),
            ("d", "k6"),
            ("second", "k4"),
            ("y", "k1"),
        ];
        assert_eq!(names, expected.map(|(n, k)| (n.to_string(), k.to_string())));
    }

    /// A chunk that deletes lands through CozoDB's import, whole, even
    /// when the stager encoded its other relations (their rows are kept).
    #[test]
    fn a_chunk_that_deletes_lands_whole_through_cozodb() {
        let (_dir, path, store) = building_store();
        let mut batch = Batch::new();
        batch.push("node", NODE_COLUMNS, node_row("k1", "k1"));
        batch.put_row(stats(1));
        store.land_early(&mut batch).unwrap();
        let mut batch = Batch::new();
        batch.delete_in("node", &["graph", "id"], vec!["code".into(), "k1".into()]);
        batch.push("node", NODE_COLUMNS, node_row("k2", "k2"));
        batch.put_row(stats(2));
        store.land_early(&mut batch).unwrap();
        assert_eq!(store.rows_landed_directly(), 2);
        store.finish_building(&path).unwrap();
        let store = Store::open(&Location::Sqlite(path)).unwrap();
        let ids = store
            .read(
                "?[id, name] := *node:by_name{graph: 'code', name, id}",
                Params::new(),
            )
            .unwrap();
        assert_eq!(
            ids.rows,
            vec![vec![DataValue::from("k2"), DataValue::from("k2")]]
        );
        assert_eq!(stats_of(&store), vec![2]);
    }

    /// A building store lands its chunks on the lander's thread: a read
    /// right after the last hand-over sees every row of every chunk, and
    /// the later put of a key (in a later chunk) wins.
    #[test]
    fn a_read_after_chunks_were_handed_over_sees_them_all() {
        let (_dir, path, store) = building_store();
        let mut batch = Batch::new();
        for i in 0..50 {
            batch.put_row(CodeStatsRow {
                graph: format!("g{}", i % 20).into(),
                ..stats(i)
            });
            assert_eq!(store.land_early(&mut batch).unwrap(), 1);
        }
        assert_eq!(batch.landed_early().rows, 50);
        let mut seen = stats_of(&store);
        seen.sort();
        assert_eq!(seen, (30..50).collect::<Vec<_>>());
        store.finish_building(&path).unwrap();
        assert_eq!(
            stats_of(&Store::open(&Location::Sqlite(path)).unwrap()).len(),
            20
        );
    }

    /// A chunk that fails to land fails the store's next use, with the
    /// reason, and the build cannot be finished.
    #[test]
    fn a_chunk_that_fails_to_land_fails_the_next_use() {
        let (_dir, path, store) = building_store();
        let mut batch = Batch::new();
        batch.put("no_such_relation", &["a"], vec![DataValue::from(1)]);
        store.land_early(&mut batch).unwrap();
        let err = store.read("?[x] := x = 1", Params::new()).unwrap_err();
        assert!(err.to_string().contains("no_such_relation"), "{err}");
        // Failed once, the store is usable again (the run that failed is
        // discarded by its caller), but the build was not finished.
        assert!(store.read("?[x] := x = 1", Params::new()).is_ok());
        assert!(!path.exists());
    }

    /// Rows land sorted by key, and of two puts of one key in a batch the
    /// later wins, whatever its values sort as.
    #[test]
    fn the_later_of_two_puts_of_a_key_wins() {
        let store = Store::memory().unwrap();
        let mut batch = Batch::new();
        batch.put_row(stats(2));
        batch.put_row(stats(1));
        store.apply(batch).unwrap();
        let rows = store
            .read(
                "?[graph, files, entities, edges, unresolved, ambiguous] := \
                 *code_stats{graph, files, entities, edges, unresolved, ambiguous}",
                Params::new(),
            )
            .unwrap();
        let row = decode_first::<CodeStatsRow>(&rows).unwrap().unwrap();
        assert_eq!(row.entities, 1);
    }

    #[test]
    fn graph_rows_reads_one_graphs_rows_of_each_relation() {
        let store = Store::memory().unwrap();
        let mut batch = Batch::new();
        for (graph, path) in [("code", "b.rs"), ("code", "a.rs"), ("other", "a.rs")] {
            batch.put_row(crate::rows::CodeFileStatRow {
                graph: graph.into(),
                path: path.into(),
                bytes: 10,
                mtime_ns: 7,
                layout: "l".into(),
                hash: "h".into(),
            });
        }
        store.apply(batch).unwrap();
        let read = store
            .graph_rows(&["code_file_stat", "code_file"], "code")
            .unwrap();
        let paths: Vec<&str> = read["code_file_stat"]
            .rows
            .iter()
            .map(|r| r[1].get_str().unwrap())
            .collect();
        assert_eq!(paths, ["a.rs", "b.rs"]);
        assert_eq!(read["code_file_stat"].headers[..2], ["graph", "path"]);
        assert!(read["code_file"].rows.is_empty());
    }
}
