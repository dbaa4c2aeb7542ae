//! `graphctx index`: bring a repository's code graph up to date.
//!
//! 1. walk (gitignore-aware) and hash every `.rs` file with blake3;
//! 2. parse new or changed files in parallel, one tree-sitter parser per
//!    rayon thread, extracting everything from that one tree;
//! 3. load the stored extracts of unchanged files and resolve the
//!    references of all files together ([`super::rust::resolve`]);
//! 4. write the difference — entities of changed files, edges of files
//!    whose resolved links changed, deletions — in one transaction.
//!
//! Because step 3 always sees every file, references from unchanged files
//! into a changed file are re-resolved, and the stored graph equals what a
//! full rebuild of the same tree would store.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::rust::interface;
use super::rust::resolve::{self, FileLinks};
use super::rust::RustExtractor;
use super::usage;
use super::walk::{self, SourceFile};
use crate::model::{FileContext, FileExtract, ParseStatus};
use crate::store::rows::{CodeExtractRow, CodeFileStatRow, CodeInterfaceRow, CodeStatsRow};
use crate::store::value::{self, get_int, get_str, json, opt_str, str_list};
use crate::store::{queries, Batch, Params, Row, Store, StoreError};
use cozo::DataValue;

/// Name of the graph that holds a repository's code.
pub const CODE_GRAPH: &str = "code";

#[derive(Debug, Clone)]
pub struct IndexOptions {
    pub graph: String,
    /// Files larger than this are skipped (default 4 MiB).
    pub max_file_bytes: u64,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Read co-change history from git (when the root is in a repository).
    pub history: bool,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            graph: CODE_GRAPH.to_string(),
            max_file_bytes: 4 * 1024 * 1024,
            progress: false,
            history: true,
        }
    }
}

/// A file that was not indexed, or indexed only in part, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FileNote {
    pub path: String,
    pub reason: String,
}

/// What an index run did; `--json` prints it as is.
#[derive(Debug, Clone, Serialize, Default)]
pub struct IndexSummary {
    pub root: String,
    pub files_seen: usize,
    pub files_parsed: usize,
    pub files_unchanged: usize,
    pub files_deleted: usize,
    pub files_skipped: usize,
    pub files_partial: usize,
    /// Totals in the graph after the run.
    pub entities: i64,
    pub edges: i64,
    pub unresolved: i64,
    /// Unresolved references that had several equally good candidates.
    pub ambiguous: i64,
    /// Rows written (puts and deletes) in this run.
    pub rows_written: usize,
    /// Files whose references this run resolved: every file, or only the
    /// edited ones when no file's interface changed.
    pub files_resolved: usize,
    pub skipped: Vec<FileNote>,
    pub partial: Vec<FileNote>,
    /// The graph's change sequence number after the run.
    pub seq: i64,
    pub elapsed_ms: f64,
    /// Milliseconds per phase: walk, parse, load, resolve, diff, usage,
    /// write, history.
    pub phases_ms: BTreeMap<&'static str, f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{0} is not a directory")]
    NotADirectory(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

struct StoredFile {
    hash: String,
    status: String,
    edge_digest: String,
}

/// A file's size and modification time when its hash was computed, and the
/// layout digest the hash covered (`code_file_stat`, schema 11).
#[derive(PartialEq)]
struct FileStat {
    bytes: i64,
    mtime_ns: i64,
    layout: String,
    hash: String,
}

/// A file modified this long before a run started is recorded in
/// `code_file_stat`: later edits are sure to give it another time, even on
/// file systems with coarse timestamps.
const STAT_SETTLED_NS: i64 = 2_000_000_000;

enum Outcome {
    Unchanged,
    Parsed {
        hash: String,
        extract: Box<FileExtract>,
        note: Option<String>,
    },
    Skipped(String),
}

const FILE_HEADERS: [&str; 9] = [
    "graph",
    "path",
    "hash",
    "bytes",
    "status",
    "reason",
    "crate_name",
    "entities",
    "edge_digest",
];

/// Index `root` into `store`. The caller holds the write lock.
pub fn index_repository(
    store: &Store,
    root: &Path,
    opts: &IndexOptions,
) -> Result<IndexSummary, IndexError> {
    index_repository_cached(store, root, opts, &mut InterfaceCache::default())
}

/// The interfaces of every indexed file as the last run left them, kept
/// by a long-lived process (the servers) so the next run after an edit
/// does not read them all from the store again. Valid only for the graph
/// and `seq` it was taken at: a run by another process moves `seq`, and
/// the next run then reads the store as usual.
#[derive(Default)]
pub struct InterfaceCache {
    graph: String,
    seq: i64,
    interfaces: BTreeMap<String, FileExtract>,
}

impl InterfaceCache {
    /// Files held.
    pub fn len(&self) -> usize {
        self.interfaces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.interfaces.is_empty()
    }
}

/// [`index_repository`] that reads and refreshes `cache`.
pub fn index_repository_cached(
    store: &Store,
    root: &Path,
    opts: &IndexOptions,
    cache: &mut InterfaceCache,
) -> Result<IndexSummary, IndexError> {
    let started = Instant::now();
    if !root.is_dir() {
        return Err(IndexError::NotADirectory(root.display().to_string()));
    }
    let graph = opts.graph.as_str();
    let run_started_ns = walk::unix_nanos(std::time::SystemTime::now());
    let mut phases = Phases::new();
    let walked = walk::walk(root);
    let layout_digest = layout_key(&walked);
    let stored = load_file_states(store, graph)?;
    let stats = load_file_stats(store, graph)?;
    phases.lap("walk");

    let bar = progress_bar(opts.progress, walked.files.len() as u64);
    let outcomes: Vec<Outcome> = walked
        .files
        .par_iter()
        .map_init(RustExtractor::new, |extractor, file| {
            let known = stored.get(&file.ctx.path);
            let o = if stat_vouches(file, known, stats.get(&file.ctx.path), &layout_digest) {
                Outcome::Unchanged
            } else {
                examine(extractor, file, known, opts.max_file_bytes, &layout_digest)
            };
            bar.inc(1);
            o
        })
        .collect();
    bar.finish_and_clear();
    phases.lap("parse");

    let mut summary = IndexSummary {
        root: root.display().to_string(),
        files_seen: walked.files.len() + walked.issues.len(),
        ..IndexSummary::default()
    };
    let mut batch = Batch::new();
    let mut extracts: BTreeMap<String, (FileContext, FileExtract)> = BTreeMap::new();
    let mut unchanged: Vec<&SourceFile> = Vec::new();
    // Files whose entities must be replaced: re-parsed, skipped now, or gone.
    let mut replaced: BTreeSet<String> = BTreeSet::new();
    let mut new_files: BTreeMap<String, (String, u64, String, String)> = BTreeMap::new();

    for (file, outcome) in walked.files.iter().zip(outcomes) {
        let path = file.ctx.path.clone();
        match outcome {
            Outcome::Unchanged => unchanged.push(file),
            Outcome::Parsed {
                hash,
                extract,
                note,
            } => {
                summary.files_parsed += 1;
                let (status, reason) = parse_status(&extract, note.as_deref());
                if status == "partial" {
                    summary.partial.push(FileNote {
                        path: path.clone(),
                        reason: reason.clone(),
                    });
                }
                put_extract(&mut batch, graph, &path, &extract);
                new_files.insert(path.clone(), (hash, file.bytes, status.to_string(), reason));
                replaced.insert(path.clone());
                extracts.insert(path, (file.ctx.clone(), *extract));
            }
            Outcome::Skipped(reason) => {
                summary.skipped.push(FileNote {
                    path: path.clone(),
                    reason: reason.clone(),
                });
                new_files.insert(
                    path.clone(),
                    (String::new(), file.bytes, "skipped".into(), reason),
                );
                replaced.insert(path);
            }
        }
    }
    for issue in &walked.issues {
        summary.skipped.push(FileNote {
            path: issue.path.clone(),
            reason: issue.reason.clone(),
        });
    }
    let current: BTreeSet<&str> = walked.files.iter().map(|f| f.ctx.path.as_str()).collect();
    let deleted: Vec<String> = stored
        .keys()
        .filter(|p| !current.contains(p.as_str()))
        .cloned()
        .collect();
    summary.files_deleted = deleted.len();
    summary.files_skipped = summary.skipped.len();
    summary.files_partial = summary.partial.len();
    summary.files_unchanged = unchanged.len();

    let usage_current = usage::is_current(store, graph)?;
    let text_current = super::text::is_current(store, graph)?;
    let nothing_changed = usage_current
        && text_current
        && summary.files_parsed == 0
        && deleted.is_empty()
        && new_files
            .iter()
            .all(|(p, (_, _, status, _))| stored.get(p).is_some_and(|s| &s.status == status));
    if !nothing_changed {
        // Interfaces of every file (the symbol table needs them all), and
        // the stored ones of the files parsed now, to see what changed.
        let mut old_interfaces: BTreeMap<String, FileExtract> = BTreeMap::new();
        let mut reparse: Vec<&SourceFile> = Vec::new();
        {
            let cached =
                cache.graph == graph && cache.seq > 0 && cache.seq == store.graph_seq(graph)?;
            // Taken either way: a run that fails leaves no cache behind.
            let held = std::mem::take(&mut cache.interfaces);
            cache.seq = 0;
            let mut loaded = if cached {
                held
            } else {
                drop(held);
                load_interfaces(store, graph)?
            };
            for file in &unchanged {
                match loaded.remove(&file.ctx.path) {
                    Some(ex) => {
                        extracts.insert(file.ctx.path.clone(), (file.ctx.clone(), ex));
                    }
                    None => reparse.push(file),
                }
            }
            for path in &replaced {
                if let Some(ex) = loaded.remove(path) {
                    old_interfaces.insert(path.clone(), ex);
                }
            }
        }
        // A missing or unreadable stored interface: parse the file again.
        let reparsed = reparse_files(&reparse, graph, opts, &layout_digest, &mut batch);
        let reparsed_any = !reparsed.is_empty();
        for (file, extract) in reparsed {
            extracts.insert(file.ctx.path.clone(), (file.ctx.clone(), extract));
        }

        let replaced_before = replaced.len();
        settle_contexts(
            &walked,
            graph,
            &layout_digest,
            opts.max_file_bytes,
            Settle {
                batch: &mut batch,
                extracts: &mut extracts,
                replaced: &mut replaced,
                new_files: &mut new_files,
                unchanged: &mut unchanged,
            },
        );
        let stored_counts = read_counts(store, graph)?;
        // Only the files parsed now need resolving when none of them
        // changed what other files can see (see `rust::interface`).
        let narrow = usage_current
            && !reparsed_any
            && deleted.is_empty()
            && replaced.len() == replaced_before
            && stored_counts.as_ref().is_some_and(|c| c.ambiguous >= 0)
            && replaced.iter().all(|p| {
                let now = extracts.get(p).map(|(_, e)| e);
                let before = old_interfaces.get(p);
                matches!((now, before), (Some(n), Some(b)) if interface::digest(n) == interface::digest(b))
            });
        if !narrow {
            // Every file is resolved: join the other references of the
            // files held as interfaces.
            let held: Vec<&str> = unchanged.iter().map(|f| f.ctx.path.as_str()).collect();
            let mut bodies = load_bodies(store, graph, &held)?;
            let mut missing: Vec<&SourceFile> = Vec::new();
            for file in &unchanged {
                let path = &file.ctx.path;
                match (bodies.remove(path), extracts.remove(path)) {
                    (Some(body), Some((ctx, iface))) => {
                        extracts.insert(path.clone(), (ctx, interface::join(iface, body)));
                    }
                    (None, Some(_)) => missing.push(file),
                    _ => {}
                }
            }
            for (file, extract) in reparse_files(&missing, graph, opts, &layout_digest, &mut batch)
            {
                extracts.insert(file.ctx.path.clone(), (file.ctx.clone(), extract));
            }
        }

        phases.lap("load");
        let inputs: Vec<(&FileContext, &FileExtract)> =
            extracts.values().map(|(c, e)| (c, e)).collect();
        let links = if narrow {
            resolve::resolve_files(&inputs, |p| replaced.contains(p))
        } else {
            resolve::resolve(&inputs)
        };
        let digests: BTreeMap<String, String> = links
            .par_iter()
            .map(|(p, l)| (p.clone(), l.digest()))
            .collect();
        phases.lap("resolve");

        let written = write_entities(store, graph, &mut batch, &replaced, &deleted, &extracts)?;
        let mut touched = written.touched;
        super::text::write(
            store,
            graph,
            &mut batch,
            &extracts,
            text_current.then_some(&touched),
        )?;
        let linked = write_links(
            store, graph, &mut batch, &links, &digests, &stored, &deleted,
        )?;
        touched.extend(linked.endpoints);
        phases.lap("diff");
        let usage_scope = if narrow {
            UsageScope::Around(&replaced)
        } else {
            UsageScope::AllLinks
        };
        write_usage(
            store,
            graph,
            &mut batch,
            &links,
            &extracts,
            usage_current.then_some(&touched),
            usage_scope,
        )?;
        phases.lap("usage");
        write_files(
            graph, &mut batch, &new_files, &digests, &stored, &extracts, &deleted, &unchanged,
        );
        let stats = match stored_counts.filter(|_| narrow) {
            Some(old) => CodeCounts {
                entities: old.entities + written.entities_delta,
                edges: old.edges + linked.delta.edges,
                unresolved: old.unresolved + linked.delta.unresolved,
                ambiguous: old.ambiguous + linked.delta.ambiguous,
            },
            None => {
                let count =
                    |f: fn(&FileLinks) -> usize| links.values().map(f).sum::<usize>() as i64;
                CodeCounts {
                    entities: extracts
                        .values()
                        .map(|(_, e)| e.entities.len())
                        .sum::<usize>() as i64,
                    edges: count(|l| l.edges.len()),
                    unresolved: count(|l| l.unresolved.len()),
                    ambiguous: count(|l| l.unresolved.values().filter(|u| u.2 > 1).count()),
                }
            }
        };
        batch.put_row(CodeStatsRow {
            graph: graph.into(),
            files: walked.files.len() as i64,
            entities: stats.entities,
            edges: stats.edges,
            unresolved: stats.unresolved,
            ambiguous: stats.ambiguous,
        });
        let change = store
            .begin_graph_change(graph)?
            .with_source(root.display().to_string());
        batch.lands_as(change);
        summary.rows_written = batch.len();
        summary.files_resolved = links.len();
        phases.lap("diff");
        store.apply(batch)?;
        phases.lap("write");
        drop(links);
        cache.graph = graph.to_string();
        cache.interfaces = extracts
            .into_iter()
            .map(|(path, (_, ex))| (path, interface::split(ex).0))
            .collect();
    }

    if opts.history && super::history::refresh(store, graph, root)? {
        phases.lap("history");
    }
    if !nothing_changed {
        // The caller holds the write lock: no other writer came between.
        cache.seq = store.graph_seq(graph)?;
    }

    // A run that wrote changed stored hashes: read the ones it left.
    let written;
    let states = if nothing_changed {
        &stored
    } else {
        written = load_file_states(store, graph)?;
        &written
    };
    record_stats(
        store,
        graph,
        &walked.files,
        states,
        &layout_digest,
        &stats,
        run_started_ns,
    )?;

    if let Some(c) = read_counts(store, graph)? {
        summary.entities = c.entities;
        summary.edges = c.edges;
        summary.unresolved = c.unresolved;
        summary.ambiguous = c.ambiguous;
    }
    if summary.ambiguous < 0 {
        // Last written before the count was kept: count once by a scan.
        let ambiguous = store.read(queries::AMBIGUOUS_COUNT, Params::new().with("graph", graph))?;
        summary.ambiguous = ambiguous.rows.first().map_or(0, |r| get_int(r, 0));
    }
    summary.seq = store.graph_seq(graph)?;
    summary.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    summary.phases_ms = phases.done;
    Ok(summary)
}

/// Wall-clock time per pipeline phase, reported in the summary.
struct Phases {
    last: Instant,
    done: BTreeMap<&'static str, f64>,
}

impl Phases {
    fn new() -> Phases {
        Phases {
            last: Instant::now(),
            done: BTreeMap::new(),
        }
    }

    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        *self.done.entry(name).or_insert(0.0) += (now - self.last).as_secs_f64() * 1000.0;
        self.last = now;
    }
}

fn progress_bar(enabled: bool, len: u64) -> indicatif::ProgressBar {
    if !enabled {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} indexing {pos}/{len} files {wide_bar}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// Changes whenever the extractor or the `FileExtract` format changes, so
/// every file of an index written by an older graphctx is parsed again
/// instead of being resolved from a stale extract.
pub const EXTRACT_VERSION: &str = "graphctx-extract-4";

/// What a file's stored hash and stat row were computed under: the
/// extract version and the workspace's targets. A stat row made under
/// another version vouches for nothing, so a new graphctx parses again.
fn layout_key(walked: &walk::WalkResult) -> String {
    format!("{EXTRACT_VERSION}/{}", walked.layout.digest())
}

/// The stored hash of a file: blake3 over the extract version, the
/// workspace's targets (a file may belong to another crate when they
/// change) and the bytes.
fn content_hash(bytes: &[u8], layout_digest: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(EXTRACT_VERSION.as_bytes());
    h.update(&[0]);
    h.update(layout_digest.as_bytes());
    h.update(&[0]);
    h.update(bytes);
    h.finalize().to_hex().to_string()
}

/// Read, hash and (if changed) parse one file. Never panics on content.
fn examine(
    extractor: &mut RustExtractor,
    file: &SourceFile,
    stored: Option<&StoredFile>,
    max_bytes: u64,
    layout_digest: &str,
) -> Outcome {
    if file.bytes > max_bytes {
        return Outcome::Skipped(format!(
            "larger than the {max_bytes}-byte limit ({} bytes)",
            file.bytes
        ));
    }
    let mut bytes = Vec::with_capacity(file.bytes as usize);
    let read = std::fs::File::open(&file.abs_path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Outcome::Skipped(format!("unreadable: {e}"));
    }
    if bytes.len() as u64 > max_bytes {
        return Outcome::Skipped(format!("larger than the {max_bytes}-byte limit"));
    }
    let hash = content_hash(&bytes, layout_digest);
    if let Some(s) = stored {
        if s.hash == hash && s.status != "skipped" {
            return Outcome::Unchanged;
        }
    }
    if bytes.contains(&0) {
        return Outcome::Skipped("binary file (contains NUL bytes)".into());
    }
    let (text, note) = match String::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Some(format!(
                "not valid UTF-8 (first bad byte at offset {}); invalid bytes replaced",
                e.utf8_error().valid_up_to()
            )),
        ),
    };
    let extract = Box::new(extractor.extract(&file.ctx, &text));
    Outcome::Parsed {
        hash,
        extract,
        note,
    }
}

/// `ok` or `partial`, and why, for a file's row.
fn parse_status(extract: &FileExtract, note: Option<&str>) -> (&'static str, String) {
    let status = match extract.status {
        ParseStatus::Ok if note.is_none() => "ok",
        _ => "partial",
    };
    let reason = match (note, extract.syntax_errors) {
        (Some(n), _) => n.to_string(),
        (None, 0) => String::new(),
        (None, n) => format!("{n} syntax error(s); kept what parsed"),
    };
    (status, reason)
}

/// What [`settle_contexts`] updates.
struct Settle<'b, 'w> {
    batch: &'b mut Batch,
    extracts: &'b mut BTreeMap<String, (FileContext, FileExtract)>,
    replaced: &'b mut BTreeSet<String>,
    new_files: &'b mut BTreeMap<String, (String, u64, String, String)>,
    unchanged: &'b mut Vec<&'w SourceFile>,
}

/// Places every file in its crate and module now that the `mod`
/// declarations of all files are known, and extracts again the files whose
/// extract was made for another place (keys contain the module path). The
/// contexts are a function of the targets and every file's declarations,
/// so a full and an incremental run settle on the same ones.
fn settle_contexts<'w>(
    walked: &'w walk::WalkResult,
    graph: &str,
    layout_digest: &str,
    max_bytes: u64,
    s: Settle<'_, 'w>,
) {
    let paths: BTreeSet<String> = s.extracts.keys().cloned().collect();
    let contexts = walked
        .layout
        .contexts(&paths, |p| s.extracts.get(p).map(|(_, e)| &e.mods[..]));
    let by_path: BTreeMap<&str, &SourceFile> = walked
        .files
        .iter()
        .map(|f| (f.ctx.path.as_str(), f))
        .collect();
    let mut moved: Vec<SourceFile> = Vec::new();
    for (path, ctx) in contexts {
        let Some((held, extract)) = s.extracts.get_mut(&path) else {
            continue;
        };
        if extract.context == ctx {
            *held = ctx;
        } else if let Some(file) = by_path.get(path.as_str()) {
            let mut file = (*file).clone();
            file.ctx = ctx;
            moved.push(file);
        }
    }
    if moved.is_empty() {
        return;
    }
    let outcomes: Vec<Outcome> = moved
        .par_iter()
        .map_init(RustExtractor::new, |x, f| {
            examine(x, f, None, max_bytes, layout_digest)
        })
        .collect();
    for (file, outcome) in moved.iter().zip(outcomes) {
        let Outcome::Parsed {
            hash,
            extract,
            note,
        } = outcome
        else {
            continue;
        };
        let path = file.ctx.path.clone();
        let (status, reason) = parse_status(&extract, note.as_deref());
        put_extract(s.batch, graph, &path, &extract);
        s.new_files
            .insert(path.clone(), (hash, file.bytes, status.to_string(), reason));
        s.replaced.insert(path.clone());
        s.unchanged.retain(|f| f.ctx.path != path);
        s.extracts.insert(path, (file.ctx.clone(), *extract));
    }
}

/// Store an extract: its interface and its other references apart (see
/// [`interface`]), so a run that resolves only edited files reads the
/// interfaces of the rest and nothing else.
fn put_extract(batch: &mut Batch, graph: &str, path: &str, extract: &FileExtract) {
    let (iface, body) = interface::encode(extract);
    batch.put_row(CodeInterfaceRow {
        graph: graph.into(),
        path: path.into(),
        data: iface.into(),
    });
    batch.put_row(CodeExtractRow {
        graph: graph.into(),
        path: path.into(),
        data: body.into(),
    });
}

/// Parse files whose stored extract could not be read, and store the new
/// extracts. Their stored hash stays: the content is the one it names.
fn reparse_files<'f>(
    files: &[&'f SourceFile],
    graph: &str,
    opts: &IndexOptions,
    layout_digest: &str,
    batch: &mut Batch,
) -> Vec<(&'f SourceFile, FileExtract)> {
    let mut out = Vec::new();
    let mut extractor = RustExtractor::new();
    for &file in files {
        if let Outcome::Parsed { extract, .. } = examine(
            &mut extractor,
            file,
            None,
            opts.max_file_bytes,
            layout_digest,
        ) {
            put_extract(batch, graph, &file.ctx.path, &extract);
            out.push((file, *extract));
        }
    }
    out
}

/// Files whose content differs from what the index of `graph` holds —
/// changed, new or deleted since the last index run — found without
/// writing anything. An answer read while another process holds the write
/// lock names these, since it may not reflect them.
pub fn stale_files(store: &Store, root: &Path, graph: &str) -> Result<Vec<String>, StoreError> {
    let walked = walk::walk(root);
    let layout_digest = layout_key(&walked);
    let stored = load_file_states(store, graph)?;
    let stats = load_file_stats(store, graph)?;
    let mut stale: Vec<String> = walked
        .files
        .par_iter()
        .filter_map(|file| {
            let known = stored.get(&file.ctx.path);
            // Skipped files (too large, binary) hold nothing in the index.
            let fresh = stat_vouches(file, known, stats.get(&file.ctx.path), &layout_digest)
                || known.is_some_and(|s| {
                    s.status == "skipped"
                        || std::fs::read(&file.abs_path)
                            .is_ok_and(|b| content_hash(&b, &layout_digest) == s.hash)
                });
            (!fresh).then(|| file.ctx.path.clone())
        })
        .collect();
    let seen: BTreeSet<&str> = walked.files.iter().map(|f| f.ctx.path.as_str()).collect();
    stale.extend(
        stored
            .keys()
            .filter(|p| !seen.contains(p.as_str()))
            .cloned(),
    );
    stale.sort();
    Ok(stale)
}

/// Whether the stat snapshot says the file is as it was when its stored
/// hash was computed: same size, same modification time, same layout,
/// and that hash is still the stored one.
fn stat_vouches(
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

fn load_file_stats(store: &Store, graph: &str) -> Result<BTreeMap<String, FileStat>, StoreError> {
    let rows = store.read(queries::FILE_STATS, Params::new().with("graph", graph))?;
    Ok(rows
        .rows
        .iter()
        .map(|r| {
            (
                get_str(r, 0).to_string(),
                FileStat {
                    bytes: get_int(r, 1),
                    mtime_ns: get_int(r, 2),
                    layout: get_str(r, 3).to_string(),
                    hash: get_str(r, 4).to_string(),
                },
            )
        })
        .collect())
}

/// Bring `code_file_stat` in line with the files as this run left them
/// (`states`: the stored file rows after the run):
/// a row for every indexed file whose modification time is settled (see
/// [`STAT_SETTLED_NS`]), none for files gone, skipped or still settling.
/// Its own small write: the stat rows are a cache, not graph content, so
/// they move no `seq`.
fn record_stats(
    store: &Store,
    graph: &str,
    files: &[SourceFile],
    states: &BTreeMap<String, StoredFile>,
    layout_digest: &str,
    old: &BTreeMap<String, FileStat>,
    run_started_ns: i64,
) -> Result<(), StoreError> {
    let mut batch = Batch::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for file in files {
        let path = file.ctx.path.as_str();
        seen.insert(path);
        let wanted = states.get(path).and_then(|s| {
            let settled = file.mtime_ns != 0 && file.mtime_ns < run_started_ns - STAT_SETTLED_NS;
            (settled && s.status != "skipped" && !s.hash.is_empty()).then(|| FileStat {
                bytes: file.bytes as i64,
                mtime_ns: file.mtime_ns,
                layout: layout_digest.to_string(),
                hash: s.hash.clone(),
            })
        });
        match (wanted, old.get(path)) {
            (Some(w), o) if o != Some(&w) => batch.put_row(CodeFileStatRow {
                graph: graph.into(),
                path: path.into(),
                bytes: w.bytes,
                mtime_ns: w.mtime_ns,
                layout: w.layout.into(),
                hash: w.hash.into(),
            }),
            (None, Some(_)) => batch.delete_key::<CodeFileStatRow>(vec![graph.into(), path.into()]),
            _ => {}
        }
    }
    for path in old.keys().filter(|p| !seen.contains(p.as_str())) {
        batch.delete_key::<CodeFileStatRow>(vec![graph.into(), path.as_str().into()]);
    }
    if !batch.is_empty() {
        store.apply(batch)?;
    }
    Ok(())
}

fn load_file_states(
    store: &Store,
    graph: &str,
) -> Result<BTreeMap<String, StoredFile>, StoreError> {
    let rows = store.read(queries::FILE_STATES, Params::new().with("graph", graph))?;
    Ok(rows
        .rows
        .iter()
        .map(|r| {
            (
                get_str(r, 0).to_string(),
                StoredFile {
                    hash: get_str(r, 1).to_string(),
                    status: get_str(r, 2).to_string(),
                    edge_digest: get_str(r, 3).to_string(),
                },
            )
        })
        .collect())
}

/// Every stored interface of `graph` that this version can read.
fn load_interfaces(
    store: &Store,
    graph: &str,
) -> Result<BTreeMap<String, FileExtract>, StoreError> {
    let rows = store.read(queries::INTERFACES, Params::new().with("graph", graph))?;
    Ok(rows
        .rows
        .par_iter()
        .filter_map(|r| {
            let ex = interface::decode_interface(value::get_bytes(r, 1))?;
            Some((get_str(r, 0).to_string(), ex))
        })
        .collect())
}

/// The stored other references of the given files.
fn load_bodies(
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
    Ok(rows
        .rows
        .par_iter()
        .filter_map(|r| {
            let body = interface::decode_body(value::get_bytes(r, 1))?;
            Some((get_str(r, 0).to_string(), body))
        })
        .collect())
}

/// A graph's stored totals (`code_stats`).
struct CodeCounts {
    entities: i64,
    edges: i64,
    unresolved: i64,
    /// -1 when last written before the count was kept.
    ambiguous: i64,
}

fn read_counts(store: &Store, graph: &str) -> Result<Option<CodeCounts>, StoreError> {
    let counts = store.read(queries::CODE_COUNTS, Params::new().with("graph", graph))?;
    Ok(counts.rows.first().map(|row| CodeCounts {
        entities: get_int(row, 1),
        edges: get_int(row, 2),
        unresolved: get_int(row, 3),
        ambiguous: get_int(row, 4),
    }))
}

const NODE_HEADERS: [&str; 5] = ["graph", "id", "kind", "name", "doc"];
const ENTITY_HEADERS: [&str; 13] = [
    "graph",
    "id",
    "file",
    "crate_name",
    "module_path",
    "visibility",
    "start_line",
    "end_line",
    "signature",
    "is_test",
    "owner",
    "trait_name",
    "parent",
];

/// `(node row, code_entity row)` of an entity, without the graph column,
/// in the column order of `queries/entity_rows_in_files.cozo`.
fn entity_row(crate_name: &str, e: &crate::model::Entity) -> Vec<DataValue> {
    vec![
        e.key.as_str().into(),
        e.kind.as_str().into(),
        e.name.as_str().into(),
        e.doc.as_str().into(),
        e.file.as_str().into(),
        crate_name.into(),
        str_list(&e.module_path),
        e.visibility.as_str().into(),
        (e.start_line as i64).into(),
        (e.end_line as i64).into(),
        json(serde_json::to_value(&e.signature).unwrap_or_default()),
        e.is_test.into(),
        opt_str(e.owner.as_deref()),
        opt_str(e.trait_name.as_deref()),
        opt_str(e.parent.as_deref()),
    ]
}

/// What [`write_entities`] changed.
struct EntitiesWritten {
    /// Entities that appeared, changed or went.
    touched: BTreeSet<String>,
    /// Entities now minus entities before.
    entities_delta: i64,
}

/// Write the entities of re-parsed, skipped and deleted files: only the
/// rows that differ from what is stored (an edit to one function rewrites
/// that function's rows, not its file's).
fn write_entities(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    replaced: &BTreeSet<String>,
    deleted: &[String],
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
) -> Result<EntitiesWritten, StoreError> {
    let files: Vec<&str> = replaced
        .iter()
        .map(String::as_str)
        .chain(deleted.iter().map(String::as_str))
        .collect();
    let mut old: BTreeMap<String, Vec<DataValue>> = BTreeMap::new();
    if !files.is_empty() {
        let rows = store.read(
            queries::ENTITY_ROWS_IN_FILES,
            Params::new()
                .with("graph", graph)
                .with("files", str_list(files)),
        )?;
        for row in rows.rows {
            old.insert(get_str(&row, 0).to_string(), row);
        }
    }
    let mut new: BTreeMap<&str, Vec<DataValue>> = BTreeMap::new();
    for path in replaced {
        if let Some((ctx, ex)) = extracts.get(path) {
            for e in &ex.entities {
                new.insert(e.key.as_str(), entity_row(&ctx.crate_name, e));
            }
        }
    }
    // Entities that appeared, changed or went: their usage rows follow
    // (an unchanged row keeps kind, file and test flag; edges around it
    // are the other writer's business, see `write_links`).
    let touched: BTreeSet<String> = old
        .keys()
        .filter(|k| !new.contains_key(k.as_str()))
        .cloned()
        .chain(
            new.iter()
                .filter(|(k, row)| old.get(**k) != Some(*row))
                .map(|(k, _)| k.to_string()),
        )
        .collect();
    let entities_delta = new.len() as isize - old.len() as isize;
    for key in old.keys().filter(|k| !new.contains_key(k.as_str())) {
        let k: Row = vec![graph.into(), key.as_str().into()];
        batch.delete("node", &["graph", "id"], k.clone());
        batch.delete("code_entity", &["graph", "id"], k);
    }
    for (key, row) in new {
        if old.get(key) == Some(&row) {
            continue;
        }
        let mut node: Row = vec![graph.into()];
        node.extend_from_slice(&row[0..4]);
        batch.put("node", &NODE_HEADERS, node);
        let mut ent: Row = vec![graph.into(), row[0].clone()];
        ent.extend_from_slice(&row[4..]);
        batch.put("code_entity", &ENTITY_HEADERS, ent);
    }
    for path in deleted
        .iter()
        .chain(replaced.iter().filter(|p| !extracts.contains_key(*p)))
    {
        // Gone, or skipped now: drop its stored extract too.
        batch.delete_key::<CodeExtractRow>(vec![graph.into(), path.as_str().into()]);
        batch.delete_key::<CodeInterfaceRow>(vec![graph.into(), path.as_str().into()]);
    }
    Ok(EntitiesWritten {
        touched,
        entities_delta: entities_delta as i64,
    })
}

/// Edges, unresolved and ambiguous references: now minus before.
#[derive(Default)]
struct LinkDelta {
    edges: i64,
    unresolved: i64,
    ambiguous: i64,
}

/// What [`write_links`] changed.
struct LinksWritten {
    /// Both ends of every edge added or removed.
    endpoints: BTreeSet<String>,
    delta: LinkDelta,
}

/// Write the links of files whose digest differs from the stored one (and
/// drop those of deleted files): only the rows that changed.
fn write_links(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    links: &BTreeMap<String, FileLinks>,
    digests: &BTreeMap<String, String>,
    stored: &BTreeMap<String, StoredFile>,
    deleted: &[String],
) -> Result<LinksWritten, StoreError> {
    let mut endpoints = BTreeSet::new();
    let mut delta = LinkDelta::default();
    let mut changed: Vec<&str> = deleted.iter().map(String::as_str).collect();
    for (path, digest) in digests {
        if stored.get(path).map(|s| s.edge_digest.as_str()) != Some(digest.as_str()) {
            changed.push(path);
        }
    }
    if changed.is_empty() {
        return Ok(LinksWritten { endpoints, delta });
    }
    let origins = str_list(changed.iter().copied());
    let params = Params::new().with("graph", graph).with("origins", origins);
    // Stored rows of these origins, diffed against the new links: only
    // what changed is deleted or written.
    let mut old_edges: BTreeMap<(String, String, String, String), f64> = BTreeMap::new();
    for r in store
        .read(queries::EDGES_FROM_ORIGINS, params.clone())?
        .rows
    {
        old_edges.insert(
            (
                get_str(&r, 0).to_string(),
                get_str(&r, 1).to_string(),
                get_str(&r, 2).to_string(),
                get_str(&r, 3).to_string(),
            ),
            value::get_float(&r, 4),
        );
    }
    let mut old_unresolved: BTreeMap<(String, String), serde_json::Value> = BTreeMap::new();
    for r in store.read(queries::UNRESOLVED_FROM_ORIGINS, params)?.rows {
        old_unresolved.insert(
            (get_str(&r, 0).to_string(), get_str(&r, 1).to_string()),
            value::get_json(&r, 2),
        );
    }
    delta.edges -= old_edges.len() as i64;
    for refs in old_unresolved.values() {
        for r in refs.as_array().into_iter().flatten() {
            delta.unresolved -= 1;
            let text = r.get(1).and_then(|t| t.as_str()).unwrap_or_default();
            if text.contains(crate::index::rust::resolve::AMBIGUOUS_MARK) {
                delta.ambiguous -= 1;
            }
        }
    }
    for path in changed {
        let Some(l) = links.get(path) else { continue };
        delta.edges += l.edges.len() as i64;
        delta.unresolved += l.unresolved.len() as i64;
        delta.ambiguous += l.unresolved.values().filter(|u| u.2 > 1).count() as i64;
        for ((src, rel, dst), weight) in &l.edges {
            endpoints.insert(src.to_string());
            endpoints.insert(dst.to_string());
            let key = (
                src.to_string(),
                rel.to_string(),
                dst.to_string(),
                path.to_string(),
            );
            let w = *weight as f64;
            if old_edges.remove(&key) == Some(w) {
                continue;
            }
            batch.put(
                "edge",
                &["graph", "src", "rel", "dst", "origin", "weight"],
                vec![
                    graph.into(),
                    (*src).into(),
                    (*rel).into(),
                    (*dst).into(),
                    path.into(),
                    w.into(),
                ],
            );
        }
        let mut per_src: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
        for ((src, rel, text), (line, count, candidates)) in &l.unresolved {
            // An ambiguous reference says so in its text, with the number
            // of entities it could have meant.
            let text = match candidates {
                0 | 1 => text.clone(),
                n => format!(
                    "{text} {}{n} candidates)",
                    crate::index::rust::resolve::AMBIGUOUS_MARK
                ),
            };
            per_src
                .entry(*src)
                .or_default()
                .push(serde_json::json!([rel, text, line, count]));
        }
        for (src, refs) in per_src {
            let refs = serde_json::Value::Array(refs);
            if old_unresolved
                .remove(&(path.to_string(), src.to_string()))
                .as_ref()
                == Some(&refs)
            {
                continue;
            }
            batch.put(
                "code_unresolved",
                &["graph", "origin", "src", "refs"],
                vec![graph.into(), path.into(), src.into(), json(refs)],
            );
        }
    }
    // Whatever is left of the old rows is gone.
    for (src, rel, dst, origin) in old_edges.into_keys() {
        endpoints.insert(src.clone());
        endpoints.insert(dst.clone());
        batch.delete(
            "edge",
            &["graph", "src", "rel", "dst", "origin"],
            vec![
                graph.into(),
                src.into(),
                rel.into(),
                dst.into(),
                origin.into(),
            ],
        );
    }
    for (origin, src) in old_unresolved.into_keys() {
        batch.delete(
            "code_unresolved",
            &["graph", "origin", "src"],
            vec![graph.into(), origin.into(), src.into()],
        );
    }
    Ok(LinksWritten { endpoints, delta })
}

const USAGE_HEADERS: [&str; 11] = [
    "graph",
    "id",
    "kind",
    "file",
    "is_test",
    "fan_in",
    "references",
    "call_sites",
    "tests",
    "tested_members",
    "out",
];

/// Which edges `links` holds: every file's, or only those of the files a
/// narrow run resolved (the rest are read from the store).
enum UsageScope<'r> {
    AllLinks,
    Around(&'r BTreeSet<String>),
}

/// Bring `code_usage` up to date (see [`usage`]): recompute the entities
/// whose surroundings changed — `touched`, or every entity when `None`
/// (no rows yet, or rows of another version) — and write the rows that
/// differ from the stored ones.
fn write_usage(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    links: &BTreeMap<String, FileLinks>,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    touched: Option<&BTreeSet<String>>,
    scope: UsageScope,
) -> Result<(), StoreError> {
    if touched.is_some_and(|t| t.is_empty()) {
        return Ok(());
    }
    // The entities whose facts (kind, file, test flag) this run knows:
    // every file's, or in a narrow run those of the files it resolved
    // (any other entity keeps the facts its stored row has).
    let entities: rustc_hash::FxHashMap<&str, &crate::model::Entity> = extracts
        .iter()
        .filter(|(path, _)| match &scope {
            UsageScope::AllLinks => true,
            UsageScope::Around(resolved) => resolved.contains(*path),
        })
        .flat_map(|(_, (_, ex))| ex.entities.iter().map(|e| (e.key.as_str(), e)))
        .collect();
    let all: BTreeSet<String>;
    let touched = match touched {
        Some(t) => t,
        None => {
            batch.put(
                "code_usage_version",
                &["graph", "version"],
                vec![graph.into(), usage::USAGE_VERSION.into()],
            );
            all = entities.keys().map(|k| k.to_string()).collect();
            &all
        }
    };
    let computed = match scope {
        UsageScope::AllLinks => usage::compute(links, touched),
        UsageScope::Around(resolved) => {
            usage::compute_around(store, graph, links, resolved, touched)?
        }
    };
    let asked: BTreeSet<&str> = touched
        .iter()
        .map(String::as_str)
        .chain(computed.keys().map(String::as_str))
        .collect();
    let stored: BTreeMap<String, Row> = store
        .read(
            queries::USAGE_OF,
            Params::new()
                .with("graph", graph)
                .with("keys", str_list(asked.iter().copied())),
        )?
        .rows
        .into_iter()
        .map(|r| (get_str(&r, 0).to_string(), r))
        .collect();
    for key in asked {
        let facts: Option<[DataValue; 3]> = match (entities.get(key), &scope, stored.get(key)) {
            (Some(e), ..) => Some([
                e.kind.as_str().into(),
                e.file.as_str().into(),
                e.is_test.into(),
            ]),
            // Not in a resolved file: unchanged, as stored.
            (None, UsageScope::Around(resolved), Some(row))
                if row.len() > 3 && !resolved.contains(get_str(row, 2)) =>
            {
                Some([row[1].clone(), row[2].clone(), row[3].clone()])
            }
            _ => None,
        };
        let Some([kind, file, is_test]) = facts else {
            if stored.contains_key(key) {
                batch.delete(
                    "code_usage",
                    &["graph", "id"],
                    vec![graph.into(), key.into()],
                );
            }
            continue;
        };
        let u = computed.get(key).cloned().unwrap_or_default();
        let row: Row = vec![
            key.into(),
            kind,
            file,
            is_test,
            u.fan_in.into(),
            (u.references as i64).into(),
            str_list(&u.call_sites),
            (u.tests as i64).into(),
            (u.tested_members as i64).into(),
            usage::encode_out(&u.out).into(),
        ];
        if stored.get(key) == Some(&row) {
            continue;
        }
        let mut put: Row = vec![graph.into()];
        put.extend(row);
        batch.put("code_usage", &USAGE_HEADERS, put);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn write_files(
    graph: &str,
    batch: &mut Batch,
    new_files: &BTreeMap<String, (String, u64, String, String)>,
    digests: &BTreeMap<String, String>,
    stored: &BTreeMap<String, StoredFile>,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    deleted: &[String],
    unchanged: &[&SourceFile],
) {
    for path in deleted {
        batch.delete(
            "code_file",
            &["graph", "path"],
            vec![graph.into(), path.as_str().into()],
        );
    }
    let digest_of = |p: &str| digests.get(p).cloned().unwrap_or_default();
    let crate_of = |p: &str| {
        extracts
            .get(p)
            .map(|(c, _)| c.crate_name.clone())
            .unwrap_or_default()
    };
    let entities_of = |p: &str| {
        extracts
            .get(p)
            .map(|(_, e)| e.entities.len() as i64)
            .unwrap_or(0)
    };
    let mut put = |path: &str, hash: &str, bytes: u64, status: &str, reason: &str| {
        batch.put(
            "code_file",
            &FILE_HEADERS,
            vec![
                graph.into(),
                path.into(),
                hash.into(),
                (bytes as i64).into(),
                status.into(),
                reason.into(),
                crate_of(path).into(),
                entities_of(path).into(),
                digest_of(path).into(),
            ],
        );
    };
    for (path, (hash, bytes, status, reason)) in new_files {
        put(path, hash, *bytes, status, reason);
    }
    // Unchanged files whose resolved links changed: refresh the digest
    // (files not resolved in this run keep theirs).
    for file in unchanged {
        let path = file.ctx.path.as_str();
        let (Some(s), Some(digest)) = (stored.get(path), digests.get(path)) else {
            continue;
        };
        if &s.edge_digest != digest {
            let reason = extracts
                .get(path)
                .map(|(_, e)| match e.syntax_errors {
                    0 => String::new(),
                    n => format!("{n} syntax error(s); kept what parsed"),
                })
                .unwrap_or_default();
            put(path, &s.hash, file.bytes, &s.status, &reason);
        }
    }
}

#[cfg(test)]
#[path = "pipeline_stat_tests.rs"]
mod stat_tests;
