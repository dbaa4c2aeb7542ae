//! `graphctx status`: where the index is, how big and how fresh, which
//! schema and engine, and whether a server keeps it current. Reads only:
//! unlike the commands that answer from the graph, it does not bring the
//! index current first (that would hide what changed since).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;

use graphctx::index::languages;
use graphctx::index::pipeline::stale_files;
use graphctx::serve::presence::{self, Watcher};
use graphctx::store::runs::Run;
use graphctx::store::status::{self, Totals, STORAGE_ENGINE};
use graphctx::store::{Location, Store};

use super::output::print_json;
use super::{locate, open_existing, root_of, Global, Outcome};

/// Changed files named in the text output; `--json` lists all.
const SHOWN_CHANGED: usize = 10;

#[derive(Serialize)]
struct DiskFile {
    path: String,
    bytes: u64,
}

/// What `status --json` prints (documented in docs/commands.md).
#[derive(Serialize)]
struct Status {
    db: String,
    root: Option<String>,
    graph: String,
    size_bytes: Option<u64>,
    disk_files: Vec<DiskFile>,
    seq: i64,
    /// The graph's totals; `None` for a graph no index run wrote.
    totals: Option<Totals>,
    /// Files and entities by the language of their file; edges and
    /// unresolved references too when one language holds every file.
    languages: BTreeMap<&'static str, LanguageTotals>,
    last_run: Option<Run>,
    last_change: Option<Run>,
    /// `None` when it cannot be told cheaply and truly (see `unknown`).
    files_changed: Option<usize>,
    changed_files: Vec<String>,
    files_changed_unknown: Option<String>,
    schema_version: i64,
    schema_supported: i64,
    storage_engine: &'static str,
    storage_backend: &'static str,
    graphctx_version: &'static str,
    watching: bool,
    watchers: Vec<Watcher>,
}

/// One language's part of a graph (see `Status::languages`).
#[derive(Serialize, Default)]
struct LanguageTotals {
    files: i64,
    entities: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    edges: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unresolved: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ambiguous: Option<i64>,
}

/// The graph's files and entities by the language of each file; a graph
/// of one language has the graph's edge totals too.
fn by_language(
    files: Vec<(String, i64)>,
    totals: Option<Totals>,
) -> BTreeMap<&'static str, LanguageTotals> {
    let mut out: BTreeMap<&'static str, LanguageTotals> = BTreeMap::new();
    for (path, entities) in files {
        let name = languages::of_file(&path).map_or("other", |l| l.name());
        let t = out.entry(name).or_default();
        t.files += 1;
        t.entities += entities;
    }
    if let (Some(t), 1) = (totals, out.len()) {
        for part in out.values_mut() {
            part.edges = Some(t.edges);
            part.unresolved = Some(t.unresolved);
            part.ambiguous = Some(t.ambiguous);
        }
    }
    out
}

pub fn status(global: &Global, json: bool) -> Result<Outcome> {
    let disk = match locate(global)? {
        Location::Sqlite(db) => Some(status::disk_use(&db)),
        Location::Memory => None,
    };
    let store = open_existing(global)?;
    let graph = global.graph.as_str();
    let facts = status::read(&store, graph)?;
    let root = root_of(&store);
    let (files_changed, changed_files, files_changed_unknown) = changed_since(&store, root, graph);
    let db = match store.location() {
        Location::Sqlite(p) => p.canonicalize().unwrap_or_else(|_| p.clone()),
        Location::Memory => PathBuf::from("mem"),
    };
    let watchers = match store.location() {
        Location::Sqlite(p) => presence::watchers(p),
        Location::Memory => Vec::new(),
    };
    let (last_run, last_change) = match facts.runs {
        Some(r) => (Some(r.last_run), r.last_change),
        None => (None, None),
    };
    let s = Status {
        db: db.display().to_string(),
        root: root.map(|r| r.display().to_string()),
        graph: graph.to_string(),
        size_bytes: disk.as_ref().map(|d| d.bytes),
        disk_files: disk
            .iter()
            .flat_map(|d| &d.files)
            .map(|(p, bytes)| DiskFile {
                path: p.display().to_string(),
                bytes: *bytes,
            })
            .collect(),
        seq: facts.seq,
        totals: facts.totals,
        languages: by_language(status::file_entities(&store, graph)?, facts.totals),
        last_run,
        last_change,
        files_changed,
        changed_files,
        files_changed_unknown,
        schema_version: facts.schema_version,
        schema_supported: facts.schema_supported,
        storage_engine: STORAGE_ENGINE,
        storage_backend: match store.location() {
            Location::Sqlite(_) => "sqlite",
            Location::Memory => "mem",
        },
        graphctx_version: env!("CARGO_PKG_VERSION"),
        watching: !watchers.is_empty(),
        watchers,
    };
    if json {
        print_json(&s)?;
    } else {
        print_text(&s)?;
    }
    Ok(Outcome::Done)
}

/// Files changed, added or deleted since the last run: a walk that trusts
/// each file whose size and time match what the run recorded and reads
/// (hashes) only the others. Unknown when the tree of the index is not
/// known (a `--db` outside a repository's `.graphctx/`) or has no files
/// on record.
fn changed_since(
    store: &Store,
    root: Option<&Path>,
    graph: &str,
) -> (Option<usize>, Vec<String>, Option<String>) {
    let unknown = |why: String| (None, Vec::new(), Some(why));
    let Some(root) = root else {
        return unknown(
            "the database is not in a repository's .graphctx/, so its tree is not known".into(),
        );
    };
    match stale_files(store, root, graph) {
        Ok(changed) => (Some(changed.len()), changed, None),
        Err(e) => unknown(format!("cannot compare with the tree: {e}")),
    }
}

/// A line per language, and the graph's totals on a line of their own
/// when no one language holds them all.
fn print_totals(s: &Status) -> Result<()> {
    let Some(totals) = s.totals else {
        outln!("totals    none: no index run wrote this graph");
        return Ok(());
    };
    let edges = |edges: i64, unresolved: i64, ambiguous: i64| {
        let ambiguous = match ambiguous >= 0 {
            true => format!(" ({ambiguous} ambiguous)"),
            false => String::new(),
        };
        format!(", {edges} edges, {unresolved} unresolved{ambiguous}")
    };
    for (language, t) in &s.languages {
        let rest = match (t.edges, t.unresolved, t.ambiguous) {
            (Some(e), Some(u), Some(a)) => edges(e, u, a),
            _ => String::new(),
        };
        outln!(
            "{language:<9} {} files, {} entities{rest}",
            t.files,
            t.entities
        );
    }
    if s.languages.len() != 1 {
        let Totals {
            files,
            entities,
            edges: e,
            unresolved,
            ambiguous,
        } = totals;
        let rest = edges(e, unresolved, ambiguous);
        outln!("totals    {files} files, {entities} entities{rest}");
    }
    Ok(())
}

fn print_text(s: &Status) -> Result<()> {
    let size = match s.size_bytes {
        Some(total) => {
            let parts: Vec<String> = s
                .disk_files
                .iter()
                .map(|f| {
                    let name = Path::new(&f.path).file_name().unwrap_or_default();
                    format!("{} {}", name.to_string_lossy(), human_bytes(f.bytes))
                })
                .collect();
            format!(", {} on disk ({})", human_bytes(total), parts.join(", "))
        }
        None => String::new(),
    };
    outln!("index     {}{size}", s.db);
    outln!("graph     {}, seq {}", s.graph, s.seq);
    print_totals(s)?;
    match (&s.last_run, &s.last_change) {
        (None, _) => outln!("last run  not recorded (indexed by an older graphctx)"),
        (Some(run), change) => {
            let change = match change {
                Some(c) if c == run => format!(", {} files parsed", c.files_parsed),
                Some(c) => format!(
                    "; last change {}, {:.0} ms, {} files parsed",
                    c.finished_at, c.elapsed_ms, c.files_parsed
                ),
                None => String::new(),
            };
            outln!(
                "last run  {}, {:.0} ms{change}",
                run.finished_at,
                run.elapsed_ms
            );
        }
    }
    match (s.files_changed, &s.files_changed_unknown) {
        (Some(0), _) => outln!("changed   no files since the last run"),
        (Some(n), _) => {
            let more = if n > SHOWN_CHANGED {
                format!(", and {} more", n - SHOWN_CHANGED)
            } else {
                String::new()
            };
            let shown: Vec<&str> = s
                .changed_files
                .iter()
                .take(SHOWN_CHANGED)
                .map(String::as_str)
                .collect();
            outln!(
                "changed   {n} files since the last run: {}{more}",
                shown.join(", ")
            );
        }
        (None, why) => outln!(
            "changed   unknown: {}",
            why.as_deref().unwrap_or("not compared")
        ),
    }
    outln!(
        "schema    {} (this graphctx {} reads up to {})",
        s.schema_version,
        s.graphctx_version,
        s.schema_supported
    );
    outln!("engine    {}, {}", s.storage_engine, s.storage_backend);
    if s.watchers.is_empty() {
        outln!("server    none watching");
    }
    for w in &s.watchers {
        outln!(
            "server    watching: pid {} since {} ({})",
            w.pid,
            w.since,
            w.root
        );
    }
    Ok(())
}

/// `12.3 MB`, `96 KB`, `512 B` (decimal units).
fn human_bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.0} KB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        _ => format!("{:.2} GB", n as f64 / 1e9),
    }
}
