//! What an index run knows of the stored index before it writes: file
//! states (hash, status, link digest), stat rows, stored interfaces and
//! references, totals — read through typed rows — and the stat shortcut
//! that lets a run skip reading settled files.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::walk::SourceFile;
use super::{languages, names};
use crate::model::FileExtract;
use crate::store::rows::{
    check_headers, decode_first, decode_rows, query_rows, CodeFileRow, CodeFileStatRow, StoredRow,
    Str,
};
use crate::store::value::str_list;
use crate::store::{queries, Batch, Params, Store, StoreError};

query_rows! {
    /// `queries/interfaces.cozo`, `queries/extracts.cozo`,
    /// `queries/names_all.cozo`.
    BlobRow = "stored_blobs" {
        key { path: Str<'a> }
        value { data: crate::store::rows::Bytes<'a> }
    }
    /// `queries/names_paths.cozo`.
    NamedPathRow = "named_paths" {
        key { path: Str<'a> }
    }
    /// `queries/code_counts.cozo`.
    CodeCountsRow = "code_counts" {
        key { files: i64 }
        value { entities: i64, edges: i64, unresolved: i64, ambiguous: i64 }
    }
}

/// A file's row in `code_file` as a run needs it.
pub(super) struct StoredFile {
    pub hash: String,
    pub status: String,
    pub edge_digest: String,
}

/// A file's size and modification time when its hash was computed, and the
/// layout digest the hash covered (`code_file_stat`, schema 11).
#[derive(PartialEq)]
pub(super) struct FileStat {
    bytes: i64,
    mtime_ns: i64,
    layout: String,
    hash: String,
}

/// A file modified this long before a run started is recorded in
/// `code_file_stat`: later edits are sure to give it another time, even on
/// file systems with coarse timestamps.
pub(super) const STAT_SETTLED_NS: i64 = 2_000_000_000;

/// Whether the stat snapshot says the file is as it was when its stored
/// hash was computed: same size, same modification time, same layout,
/// and that hash is still the stored one.
pub(super) fn stat_vouches(
    file: &SourceFile,
    stored: Option<&StoredFile>,
    stat: Option<&FileStat>,
    layout_digest: &str,
) -> bool {
    let (Some(stored), Some(stat)) = (stored, stat) else {
        return false;
    };
    stored.status != "skipped"
        && file.mtime_ns != 0
        && stat.bytes == file.bytes as i64
        && stat.mtime_ns == file.mtime_ns
        && stat.layout == layout_digest
        && stat.hash == stored.hash
}

/// The files [`record_stats`] looks at.
pub(super) enum StatFiles<'a> {
    /// Every file walked: rows of files not among them go.
    Every(&'a [&'a SourceFile]),
    /// Those whose rows may be wrong: the others' rows vouched for them
    /// in this run, and no file went.
    Some(&'a [&'a SourceFile]),
}

/// Bring `code_file_stat` (and `stats`, the rows as read or last
/// written) in line with the files as this run left them (`states`: the
/// stored file rows after the run):
/// a row for every indexed file whose modification time is settled (see
/// [`STAT_SETTLED_NS`]), none for files gone, skipped or still settling.
/// Its own small write: the stat rows are a cache, not graph content, so
/// they move no `seq`.
pub(super) fn record_stats(
    store: &Store,
    graph: &str,
    files: StatFiles<'_>,
    states: &BTreeMap<String, StoredFile>,
    layout_digest: &str,
    stats: &mut BTreeMap<String, FileStat>,
    run_started_ns: i64,
) -> Result<(), StoreError> {
    let (files, every_file) = match files {
        StatFiles::Every(f) => (f, true),
        StatFiles::Some(f) => (f, false),
    };
    let old = &*stats;
    let mut batch = Batch::new();
    let mut now: Vec<(String, Option<FileStat>)> = Vec::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for file in files {
        let path = file.ctx.path.as_str();
        if every_file {
            seen.insert(path);
        }
        let wanted = states.get(path).filter(|s| {
            let settled = file.mtime_ns != 0 && file.mtime_ns < run_started_ns - STAT_SETTLED_NS;
            settled && s.status != "skipped" && !s.hash.is_empty()
        });
        let held = old.get(path);
        if let (Some(s), Some(h)) = (wanted, held) {
            if h.bytes == file.bytes as i64
                && h.mtime_ns == file.mtime_ns
                && h.layout == layout_digest
                && h.hash == s.hash
            {
                continue;
            }
        }
        let wanted = wanted.map(|s| FileStat {
            bytes: file.bytes as i64,
            mtime_ns: file.mtime_ns,
            layout: layout_digest.to_string(),
            hash: s.hash.clone(),
        });
        match (wanted, held) {
            (Some(w), o) if o != Some(&w) => {
                batch.put_row(CodeFileStatRow {
                    graph: graph.into(),
                    path: path.into(),
                    bytes: w.bytes,
                    mtime_ns: w.mtime_ns,
                    layout: w.layout.as_str().into(),
                    hash: w.hash.as_str().into(),
                });
                now.push((path.to_string(), Some(w)));
            }
            (None, Some(_)) => {
                batch.delete_key::<CodeFileStatRow>(vec![graph.into(), path.into()]);
                now.push((path.to_string(), None));
            }
            _ => {}
        }
    }
    for path in old
        .keys()
        .filter(|p| every_file && !seen.contains(p.as_str()))
    {
        batch.delete_key::<CodeFileStatRow>(vec![graph.into(), path.as_str().into()]);
        now.push((path.clone(), None));
    }
    if !batch.is_empty() {
        store.apply(batch)?;
    }
    for (path, stat) in now {
        match stat {
            Some(stat) => stats.insert(path, stat),
            None => stats.remove(&path),
        };
    }
    Ok(())
}

/// Every file's stored row (`code_file`) and stat row (`code_file_stat`)
/// of `graph`, read in one transaction: against them a run decides which
/// files to read again.
pub(super) fn load_file_rows(store: &Store, graph: &str) -> Result<FileRows, StoreError> {
    let mut read = store.graph_rows(&[CodeFileRow::NAME, CodeFileStatRow::NAME], graph)?;
    let mut take = |name: &str| read.remove(name).unwrap_or_default();
    let (files, stats) = (take(CodeFileRow::NAME), take(CodeFileStatRow::NAME));
    check_headers::<CodeFileRow>(&files)?;
    check_headers::<CodeFileStatRow>(&stats)?;
    let mut states = BTreeMap::new();
    for row in &files.rows {
        let r = CodeFileRow::decode(row)?;
        let file = StoredFile {
            hash: r.hash.into_owned(),
            status: r.status.into_owned(),
            edge_digest: r.edge_digest.into_owned(),
        };
        states.insert(r.path.into_owned(), file);
    }
    let mut by_path = BTreeMap::new();
    for row in &stats.rows {
        let r = CodeFileStatRow::decode(row)?;
        let stat = FileStat {
            bytes: r.bytes,
            mtime_ns: r.mtime_ns,
            layout: r.layout.into_owned(),
            hash: r.hash.into_owned(),
        };
        by_path.insert(r.path.into_owned(), stat);
    }
    Ok(FileRows {
        states,
        stats: by_path,
    })
}

/// What [`load_file_rows`] read: each file's row and stat row, by path.
pub(super) struct FileRows {
    pub states: BTreeMap<String, StoredFile>,
    pub stats: BTreeMap<String, FileStat>,
}

/// Every stored interface of `graph` that this version can read.
pub(super) fn load_interfaces(
    store: &Store,
    graph: &str,
) -> Result<BTreeMap<String, FileExtract>, StoreError> {
    let rows = store.read(queries::INTERFACES, Params::new().with("graph", graph))?;
    decode_blobs(&rows, |path, data| {
        languages::of_file(path)?.decode_interface(data)
    })
}

/// The stored interfaces of the given files that this version can read.
pub(super) fn load_interfaces_of(
    store: &Store,
    graph: &str,
    paths: &[&str],
) -> Result<BTreeMap<String, FileExtract>, StoreError> {
    let params = Params::new()
        .with("graph", graph)
        .with("paths", str_list(paths.iter().copied()));
    let rows = store.read(queries::INTERFACES_OF, params)?;
    decode_blobs(&rows, |path, data| {
        languages::of_file(path)?.decode_interface(data)
    })
}

/// The names every file of `graph` mentions (see [`names`]), by path.
pub(super) fn load_names(
    store: &Store,
    graph: &str,
) -> Result<BTreeMap<String, Vec<names::Name>>, StoreError> {
    let rows = store.read(queries::NAMES_ALL, Params::new().with("graph", graph))?;
    decode_blobs(&rows, |_, data| names::decode(data))
}

/// The files of `graph` whose mentioned names are stored.
pub(super) fn load_named_paths(store: &Store, graph: &str) -> Result<BTreeSet<String>, StoreError> {
    let rows = store.read(queries::NAMES_PATHS, Params::new().with("graph", graph))?;
    Ok(decode_rows::<NamedPathRow>(&rows)?
        .into_iter()
        .map(|r| r.path.into_owned())
        .collect())
}

/// The stored other references of the given files.
pub(super) fn load_bodies(
    store: &Store,
    graph: &str,
    paths: &[&str],
) -> Result<BTreeMap<String, Vec<crate::model::RawRef>>, StoreError> {
    if paths.is_empty() {
        return Ok(BTreeMap::new());
    }
    let rows = store.read(
        queries::EXTRACTS,
        Params::new()
            .with("graph", graph)
            .with("paths", str_list(paths.iter().copied())),
    )?;
    decode_blobs(&rows, |path, data| {
        languages::of_file(path)?.decode_body(data)
    })
}

/// A graph's stored totals (`code_stats`).
pub(super) struct CodeCounts {
    pub entities: i64,
    pub edges: i64,
    pub unresolved: i64,
    /// -1 when last written before the count was kept.
    pub ambiguous: i64,
}

pub(super) fn read_counts(store: &Store, graph: &str) -> Result<Option<CodeCounts>, StoreError> {
    let counts = store.read(queries::CODE_COUNTS, Params::new().with("graph", graph))?;
    Ok(decode_first::<CodeCountsRow>(&counts)?.map(|c| CodeCounts {
        entities: c.entities,
        edges: c.edges,
        unresolved: c.unresolved,
        ambiguous: c.ambiguous,
    }))
}

/// `(path, blob)` rows decoded in parallel; a blob this version cannot
/// read is left out (its file is parsed again).
pub(super) fn decode_blobs<T: Send>(
    rows: &cozo::NamedRows,
    decode: impl Fn(&str, &[u8]) -> Option<T> + Sync,
) -> Result<BTreeMap<String, T>, StoreError> {
    check_headers::<BlobRow>(rows)?;
    rows.rows
        .par_iter()
        .map(|r| {
            let row = BlobRow::decode(r)?;
            Ok(decode(&row.path, &row.data).map(|v| (row.path.into_owned(), v)))
        })
        .filter_map(Result::transpose)
        .collect()
}
