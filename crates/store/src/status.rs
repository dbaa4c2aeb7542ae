//! What `graphctx status` reports about a database itself: its files and
//! their size ([`disk_use`]), the schema version, the storage engine, a code graph's
//! totals and its recorded runs. Freshness against the tree and watching
//! servers are the caller's to add (they need the index and serve layers).

use std::path::PathBuf;

use serde::Serialize;

use super::rows::{decode_first, decode_rows, query_rows, CodeStatsRow, Str};
use super::runs::{self, GraphRuns};
use super::{queries, schema, sidecar, Params, Result, Store};

/// The storage engine this build links: the crate that provides `cozo`
/// and its version, from Cargo.lock at build time (see build.rs).
pub const STORAGE_ENGINE: &str = env!("GRAPHCTX_STORAGE_ENGINE");

/// The files a database is made of and their sizes.
#[derive(Debug, Clone, Serialize)]
pub struct DiskUse {
    /// The database, its write-ahead log and shared-memory index (the
    /// ones present), with their sizes in bytes.
    pub files: Vec<(PathBuf, u64)>,
    pub bytes: u64,
}

/// The sizes of the database at `db` and its log files. Taken before the
/// database is opened, so they are what other connections (a server)
/// left, not what opening it adds.
pub fn disk_use(db: &std::path::Path) -> DiskUse {
    let files: Vec<(PathBuf, u64)> = [db.to_path_buf(), sidecar(db, "-wal"), sidecar(db, "-shm")]
        .into_iter()
        .filter_map(|p| std::fs::metadata(&p).ok().map(|m| (p, m.len())))
        .collect();
    let bytes = files.iter().map(|(_, n)| n).sum();
    DiskUse { files, bytes }
}

/// A code graph's totals as its last changing run wrote them.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Totals {
    pub files: i64,
    pub entities: i64,
    pub edges: i64,
    pub unresolved: i64,
    /// -1 when last written before the count was kept (schema 11).
    pub ambiguous: i64,
}

/// What the database says about itself and one code graph.
#[derive(Debug, Clone)]
pub struct StoreStatus {
    pub schema_version: i64,
    pub schema_supported: i64,
    pub seq: i64,
    /// `None` for a graph no index run wrote.
    pub totals: Option<Totals>,
    pub runs: Option<GraphRuns>,
}

query_rows! {
    /// `queries/status_file_entities.cozo`.
    FileEntities = "status_file_entities" {
        key { path: Str<'a> }
        value { entities: i64 }
    }
}

/// Every file of a code graph and the number of its entities, for totals
/// per language (the store does not know languages: the caller groups).
pub fn file_entities(store: &Store, graph: &str) -> Result<Vec<(String, i64)>> {
    let rows = store.read(
        queries::STATUS_FILE_ENTITIES,
        Params::new().with("graph", graph),
    )?;
    Ok(decode_rows::<FileEntities>(&rows)?
        .into_iter()
        .map(|r| (r.path.into_owned(), r.entities))
        .collect())
}

/// Read the [`StoreStatus`] of `graph` in `store`.
pub fn read(store: &Store, graph: &str) -> Result<StoreStatus> {
    let counts = store.read(queries::STATUS_COUNTS, Params::new().with("graph", graph))?;
    let totals = decode_first::<CodeStatsRow>(&counts)?.map(|r| Totals {
        files: r.files,
        entities: r.entities,
        edges: r.edges,
        unresolved: r.unresolved,
        ambiguous: r.ambiguous,
    });
    Ok(StoreStatus {
        schema_version: schema::current_version(store)?,
        schema_supported: schema::latest_version(),
        seq: store.graph_seq(graph)?,
        totals,
        runs: runs::recorded(store.location(), graph),
    })
}
