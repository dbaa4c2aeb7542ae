//! Co-change history: files that changed together in the repository's past
//! commits are likely needed together.
//!
//! Read with `git log --name-only` (the repository's own history, nothing
//! fetched), from the indexed root: for each non-merge commit touching
//! between 2 and [`MAX_FILES_PER_COMMIT`] source files of any language the
//! index reads (their extensions are the pathspecs, from the registry),
//! every pair of its files gains `1 / (n - 1)` — a commit of two files ties
//! them strongly, a sweeping refactor barely. Stored per file pair in
//! `code_cochange` and recomputed only when HEAD or the pathspecs move (the
//! stamp it was computed for is kept in `code_history`), so it costs
//! nothing on an unchanged checkout.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use crate::languages;
use crate::store::rows::{
    decode_first, decode_rows, query_rows, CodeCochangeRow, CodeHistoryRow, Str,
};
use crate::store::value::str_list;
use crate::store::{queries, Batch, Params, Store, StoreError};

query_rows! {
    /// `queries/history_head.cozo`.
    HistoryHead = "history_head" {
        key { head: Str<'a> }
        value { pairs: i64 }
    }
    /// `queries/cochange_of.cozo`.
    CochangeOf = "cochange_of" {
        key { other: Str<'a> }
        value { weight: f64 }
    }
}

/// Commits read from history, newest first.
pub const MAX_COMMITS: usize = 2000;
/// Larger commits (mass renames, formatting sweeps) say little about coupling.
pub const MAX_FILES_PER_COMMIT: usize = 30;

/// Pairwise co-change weights: `(file, other) → weight`, both directions.
pub type CoChange = BTreeMap<(String, String), (f64, i64)>;

/// HEAD of the git repository at `root`, if it is one.
pub fn git_head(root: &Path) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The git pathspecs of every language's sources (`*.rs`, `*.py`, …), in
/// registry order.
pub fn source_pathspecs() -> Vec<String> {
    languages::all()
        .iter()
        .flat_map(|l| l.extensions())
        .map(|ext| format!("*.{ext}"))
        .collect()
}

/// Co-change weights from the last `max_commits` commits reachable from
/// HEAD that touch a source file of some language. Paths are relative to
/// `root` (which may be a subdirectory of the checkout).
pub fn read_cochange(root: &Path, max_commits: usize) -> Option<CoChange> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "log",
            "--no-merges",
            "--relative",
            "--name-only",
            "--format=%x00",
            "-n",
        ])
        .arg(max_commits.to_string())
        .arg("--")
        .args(source_pathspecs())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut pairs: CoChange = BTreeMap::new();
    for commit in text.split('\0') {
        let mut files: Vec<&str> = commit
            .lines()
            .map(str::trim)
            .filter(|l| languages::of_file(l).is_some())
            .collect();
        files.sort();
        files.dedup();
        let n = files.len();
        if !(2..=MAX_FILES_PER_COMMIT).contains(&n) {
            continue;
        }
        let w = 1.0 / (n as f64 - 1.0);
        for (i, a) in files.iter().enumerate() {
            for b in &files[i + 1..] {
                for (x, y) in [(a, b), (b, a)] {
                    let e = pairs
                        .entry((x.to_string(), y.to_string()))
                        .or_insert((0.0, 0));
                    e.0 += w;
                    e.1 += 1;
                }
            }
        }
    }
    Some(pairs)
}

/// Bring `code_cochange` up to date with HEAD. Returns whether it was
/// recomputed. Without git or outside a repository, history is empty.
/// A refresh is a change of the graph (history feeds relevance: cached
/// contexts must not outlive it), so it lands with the next seq, `root`
/// recorded as the graph's source.
pub fn refresh(store: &Store, graph: &str, root: &Path) -> Result<bool, StoreError> {
    let head = git_head(root).unwrap_or_default();
    let stamp = history_stamp(&head);
    let stored = store.read(queries::HISTORY_HEAD, Params::new().with("graph", graph))?;
    let stored_stamp = decode_first::<HistoryHead>(&stored)?.map(|r| r.head.into_owned());
    if stored_stamp.as_deref() == Some(stamp.as_str()) {
        return Ok(false);
    }
    let pairs = if head.is_empty() {
        BTreeMap::new()
    } else {
        read_cochange(root, MAX_COMMITS).unwrap_or_default()
    };
    let mut batch = Batch::new();
    for r in store
        .read(queries::COCHANGE_ALL, Params::new().with("graph", graph))?
        .rows
    {
        batch.delete_key::<CodeCochangeRow>(r);
    }
    for ((a, b), (w, n)) in &pairs {
        batch.put_row(CodeCochangeRow {
            graph: graph.into(),
            file: a.as_str().into(),
            other: b.as_str().into(),
            weight: *w,
            commits: *n,
        });
    }
    batch.put_row(CodeHistoryRow {
        graph: graph.into(),
        head: stamp.into(),
        pairs: pairs.len() as i64,
    });
    let change = store
        .begin_graph_change(graph)?
        .with_source(root.display().to_string());
    store.apply_to_graph(&change, batch)?;
    Ok(true)
}

/// What the stored history was computed for: HEAD and the pathspecs read
/// (empty outside a repository), so that history is read again when a
/// language is added as well as when HEAD moves.
fn history_stamp(head: &str) -> String {
    match head.is_empty() {
        true => String::new(),
        false => format!("{head} {}", source_pathspecs().join(",")),
    }
}

/// Co-change weight of every file with the given files (summed over them).
pub fn cochanged_with(
    store: &Store,
    graph: &str,
    files: &[String],
) -> Result<HashMap<String, f64>, StoreError> {
    let rows = store.read(
        queries::COCHANGE_OF,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(files)),
    )?;
    let mut out: HashMap<String, f64> = HashMap::new();
    for r in decode_rows::<CochangeOf>(&rows)? {
        if files.iter().any(|f| f == r.other.as_ref()) {
            continue;
        }
        *out.entry(r.other.into_owned()).or_insert(0.0) += r.weight;
    }
    Ok(out)
}
