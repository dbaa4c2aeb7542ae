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
//! nothing on an unchanged checkout. The same read gives each file the
//! words of the messages of the commits that changed it
//! ([`history_text`], `code_history_word`).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use crate::history_text;
use crate::languages;
use crate::store::rows::{
    decode_first, decode_rows, query_rows, CodeCochangeRow, CodeHistoryRow, CodeHistoryWordRow, Str,
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

/// One commit of the history read: who made it, its message, and the
/// source files it changed (sorted, distinct).
#[derive(Debug, Clone)]
pub struct Commit {
    pub author: String,
    pub message: String,
    pub files: Vec<String>,
}

/// The last `max_commits` non-merge commits reachable from HEAD that touch
/// a source file of some language, newest first. Paths are relative to
/// `root` (which may be a subdirectory of the checkout).
pub fn read_log(root: &Path, max_commits: usize) -> Option<Vec<Commit>> {
    // Paths as they are (not octal-quoted), so a file named in UTF-8
    // beyond ASCII is still one of the index's.
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotePath=false"])
        .args([
            "log",
            "--no-merges",
            "--relative",
            "--name-only",
            "--format=%x00%an%x1f%B%x1e",
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
    let commits = text
        .split('\0')
        .filter(|c| !c.is_empty())
        .map(|c| {
            // A message may hold the separator; a path cannot (git
            // quotes control characters in paths).
            let (head, names) = c.rsplit_once('\x1e').unwrap_or(("", c));
            let (author, message) = head.split_once('\x1f').unwrap_or(("", head));
            let mut files: Vec<String> = names
                .lines()
                .map(str::trim)
                .filter(|l| languages::of_file(l).is_some())
                .map(str::to_string)
                .collect();
            files.sort();
            files.dedup();
            Commit {
                author: author.to_string(),
                message: message.to_string(),
                files,
            }
        })
        .collect();
    Some(commits)
}

/// Co-change weights of the commits' files: every pair of files of a
/// commit touching 2 to [`MAX_FILES_PER_COMMIT`] files gains `1 / (n - 1)`.
pub fn cochange_of(commits: &[Commit]) -> CoChange {
    let mut pairs: CoChange = BTreeMap::new();
    for commit in commits {
        let files = &commit.files;
        let n = files.len();
        if !(2..=MAX_FILES_PER_COMMIT).contains(&n) {
            continue;
        }
        let w = 1.0 / (n as f64 - 1.0);
        for (i, a) in files.iter().enumerate() {
            for b in &files[i + 1..] {
                for (x, y) in [(a, b), (b, a)] {
                    let e = pairs.entry((x.clone(), y.clone())).or_insert((0.0, 0));
                    e.0 += w;
                    e.1 += 1;
                }
            }
        }
    }
    pairs
}

/// Co-change weights from the last `max_commits` commits reachable from
/// HEAD that touch a source file of some language.
pub fn read_cochange(root: &Path, max_commits: usize) -> Option<CoChange> {
    read_log(root, max_commits).map(|c| cochange_of(&c))
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
    let commits = if head.is_empty() {
        Vec::new()
    } else {
        read_log(root, MAX_COMMITS).unwrap_or_default()
    };
    let pairs = cochange_of(&commits);
    let words = history_text::words_of_files(&commits);
    let mut batch = Batch::new();
    for r in store
        .read(queries::COCHANGE_ALL, Params::new().with("graph", graph))?
        .rows
    {
        batch.delete_key::<CodeCochangeRow>(r);
    }
    for r in store
        .read(
            queries::HISTORY_WORDS_ALL,
            Params::new().with("graph", graph),
        )?
        .rows
    {
        batch.delete_key::<CodeHistoryWordRow>(r);
    }
    for (file, text) in &words {
        for (word, messages) in &text.words {
            batch.put_row(CodeHistoryWordRow {
                graph: graph.into(),
                word: word.as_str().into(),
                file: file.as_str().into(),
                messages: *messages,
                length: text.length,
            });
        }
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

/// What the stored history was computed for: HEAD, the pathspecs read
/// and the versions of what is derived from it and of the words' stemming
/// (empty outside a repository), so that history is read again when a
/// language is added, when HEAD moves and when a version of graphctx
/// derives more from it or splits words otherwise.
fn history_stamp(head: &str) -> String {
    match head.is_empty() {
        true => String::new(),
        false => format!(
            "{head} {} text{}.{}",
            source_pathspecs().join(","),
            history_text::VERSION,
            crate::text::TEXT_VERSION
        ),
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
