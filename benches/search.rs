//! Text search latency on a large real index.
//!
//! Builds one index from several crates of ~/.cargo/registry/src (real
//! Rust, ≥ 50k entities), takes as queries the first sentence of the doc
//! comments of sampled functions, methods and types (how an agent or a
//! commit message describes code), and measures warm in-process
//! `analyse::search::search` (limit 50) p50/p95. Baseline in the same run:
//! the postings lookup alone (`queries/search_postings.cozo` for the
//! query's words, no ranking, spread or history). Also prints the search's
//! CPU time (the wall time less the waits for a core, on a shared machine)
//! and how often the entity whose doc the query came from is among the
//! first 10 hits.
//!
//! Then the same for bug reports as written (`GRAPHCTX_BENCH_ISSUES`, JSON
//! lines with a `problem_statement`; default: `../shared/data/issues-dev.jsonl`
//! beside the repository, when there), also timed under the hand rules
//! (`--scoring hand`) in the same run, and without reading the best files'
//! sources (the body signal left out; its cost is the ratio printed last).
//!
//! Run: `cargo bench --bench search` (optional arguments: crate names, or
//! `registry` for every crate under ~/.cargo/registry/src as one tree).
//! With `GRAPHCTX_BENCH_DB=PATH` the index is kept in that SQLite file and
//! reused by the next run (when comparing search changes, not index ones;
//! `GRAPHCTX_BENCH_SOURCES=PATH` names the tree it was made from, whose
//! best files' bodies are then read as in a fresh run);
//! with `GRAPHCTX_BENCH_HITS=PATH` every query's hits (doc sentences, each
//! after a `## own entity:` line with its entity's key, and bug reports),
//! with their scores in full, are written to PATH (to compare rankings
//! before and after a change).

use std::io::Write;
use std::time::Instant;

use graphctx::index::{index_repository, IndexOptions};
use graphctx::search::{self, Options};
use graphctx::store::value::str_list;
use graphctx::store::{queries, Location, Params, Store};
use graphctx::support::words::query_terms;

mod common;
use common::{
    copy_crates, copy_tree, crate_names_from_args, ms, registry_src, stats, thread_cpu_ms,
};

/// The first sentence of a doc comment, if it is a sentence of words.
fn first_sentence(doc: &str) -> Option<String> {
    let line = doc.lines().next()?.trim();
    let end = line.find(". ").map(|i| i + 1).unwrap_or(line.len());
    let s = &line[..end];
    (s.split_whitespace().count() >= 4 && !s.starts_with('#')).then(|| s.to_string())
}

fn main() {
    graphctx::languages::install();
    // As the binary does (src/main.rs): before any parser exists.
    graphctx::index::parser_memory::parsers_use_mimalloc();
    let db = tempfile::tempdir().unwrap();
    let kept = std::env::var_os("GRAPHCTX_BENCH_DB").map(std::path::PathBuf::from);
    let reuse = kept.as_ref().is_some_and(|p| p.is_file());
    let path = kept.unwrap_or_else(|| db.path().join("graph.db"));
    let store = Store::open(&Location::Sqlite(path.clone())).unwrap();
    // The indexed tree stays for the whole run: search reads the best
    // files' sources from it (a reused index has none unless
    // `GRAPHCTX_BENCH_SOURCES` names it; without, the body signal is left
    // out).
    let work = tempfile::tempdir().unwrap();
    let entities = if reuse {
        let rows = store
            .read(
                "?[n] := *code_stats{graph: 'code', entities: n}",
                Params::new(),
            )
            .unwrap();
        let n = rows.rows[0][0].get_int().unwrap();
        println!("index reused from {}: {n} entities", path.display());
        n
    } else {
        let names = crate_names_from_args();
        let used = match (names.as_slice(), registry_src()) {
            ([one], Some(src)) if one == "registry" => {
                copy_tree(&src, work.path());
                vec!["every registry crate".to_string()]
            }
            _ => copy_crates(&names, work.path()),
        };
        let t = Instant::now();
        let s = index_repository(
            &store,
            work.path(),
            &IndexOptions {
                history: false,
                ..IndexOptions::default()
            },
        )
        .unwrap();
        println!(
            "index of {} crates: {} files, {} entities, {} edges in {:.1} s",
            used.len(),
            s.files_seen,
            s.entities,
            s.edges,
            t.elapsed().as_secs_f64()
        );
        s.entities
    };

    // Queries: doc sentences of every k-th documented fn, method or type.
    let rows = store
        .read(
            "?[id, doc] := *node{graph: 'code', id, kind, doc}, \
             kind in ['function', 'method', 'struct', 'enum', 'trait'], doc != ''",
            Params::new(),
        )
        .unwrap();
    let pool: Vec<(String, String)> = rows
        .rows
        .iter()
        .filter_map(|r| {
            let id = r[0].get_str()?.to_string();
            Some((id, first_sentence(r[1].get_str()?)?))
        })
        .collect();
    let step = (pool.len() / 200).max(1);
    let sample: Vec<&(String, String)> = pool.iter().step_by(step).take(200).collect();

    let opts = Options {
        limit: 50,
        sources: match reuse {
            false => Some(work.path().to_path_buf()),
            true => std::env::var_os("GRAPHCTX_BENCH_SOURCES").map(std::path::PathBuf::from),
        },
        ..Options::default()
    };
    let postings = |q: &str| {
        let words: Vec<String> = query_terms(q).into_iter().map(|t| t.stem).collect();
        store
            .read(
                queries::SEARCH_POSTINGS,
                Params::new()
                    .with("graph", "code")
                    .with("words", str_list(words.iter().map(String::as_str))),
            )
            .unwrap()
    };
    // Warm up: every query once.
    for (_, q) in &sample {
        std::hint::black_box(search::search(&store, "code", q, &opts).unwrap());
        std::hint::black_box(postings(q));
    }
    let mut base_ms = vec![];
    let mut search_ms = vec![];
    let mut search_cpu = vec![];
    let mut found = 0;
    let mut dump = std::env::var_os("GRAPHCTX_BENCH_HITS")
        .map(|p| std::io::BufWriter::new(std::fs::File::create(p).unwrap()));
    for (id, q) in &sample {
        let t = Instant::now();
        std::hint::black_box(postings(q));
        base_ms.push(ms(t));
        let t = Instant::now();
        let cpu = thread_cpu_ms();
        let hits = search::search(&store, "code", q, &opts).unwrap();
        search_cpu.push(thread_cpu_ms() - cpu);
        search_ms.push(ms(t));
        if hits.iter().take(10).any(|h| &h.key == id) {
            found += 1;
        }
        if let Some(out) = dump.as_mut() {
            writeln!(out, "## own entity: {id}").unwrap();
            write_hits(out, q, &hits);
        }
    }
    println!(
        "search DOC-SENTENCE --limit 50 on {} entities, {} queries:",
        entities,
        sample.len()
    );
    let (b50, b95) = stats("  postings lookup alone (baseline)", base_ms);
    let (s50, s95) = stats("  ranked search (warm)", search_ms);
    stats("  ranked search (warm), CPU time of the thread", search_cpu);
    println!(
        "  search p50 = {:.1}x, p95 = {:.1}x the postings lookup; the query's own entity in the first 10 hits: {:.0} %",
        s50 / b50.max(1e-9),
        s95 / b95.max(1e-9),
        100.0 * found as f64 / sample.len().max(1) as f64
    );

    // Bug reports as written (title and body), as an agent pastes them.
    let issues = issue_texts();
    if issues.is_empty() {
        return;
    }
    for q in &issues {
        std::hint::black_box(search::search(&store, "code", q, &opts).unwrap());
    }
    let hand = Options {
        scoring: search::weights::Scoring::Hand,
        ..opts.clone()
    };
    let no_bodies = Options {
        sources: None,
        ..opts.clone()
    };
    let (mut base_ms, mut search_ms, mut hand_ms) = (vec![], vec![], vec![]);
    let mut no_bodies_ms = vec![];
    let mut fitted_hits = vec![];
    for q in &issues {
        let t = Instant::now();
        std::hint::black_box(postings(q));
        base_ms.push(ms(t));
        let t = Instant::now();
        std::hint::black_box(search::search(&store, "code", q, &no_bodies).unwrap());
        no_bodies_ms.push(ms(t));
        let t = Instant::now();
        std::hint::black_box(search::search(&store, "code", q, &hand).unwrap());
        hand_ms.push(ms(t));
        let t = Instant::now();
        let hits = std::hint::black_box(search::search(&store, "code", q, &opts).unwrap());
        search_ms.push(ms(t));
        if let Some(out) = dump.as_mut() {
            let title = q.lines().next().unwrap_or_default();
            write_hits(out, title, &hits);
        }
        fitted_hits.push(hits);
    }
    let mean_kb =
        issues.iter().map(String::len).sum::<usize>() as f64 / 1024.0 / issues.len() as f64;
    println!(
        "search ISSUE-TEXT --limit 50, {} issues ({mean_kb:.1} KiB each on average):",
        issues.len()
    );
    let (b50, b95) = stats("  postings lookup alone (baseline)", base_ms);
    let (h50, h95) = stats("  ranked search, hand rules (warm)", hand_ms);
    let (n50, n95) = stats(
        "  ranked search, fitted weights, no sources read (warm)",
        no_bodies_ms,
    );
    let (s50, s95) = stats("  ranked search, fitted weights (warm)", search_ms);
    println!(
        "  search p50 = {:.1}x, p95 = {:.1}x the postings lookup; {:.2}x, {:.2}x the hand rules",
        s50 / b50.max(1e-9),
        s95 / b95.max(1e-9),
        s50 / h50.max(1e-9),
        s95 / h95.max(1e-9)
    );
    println!(
        "  reading the best files' bodies: p50 {:.2}x, p95 {:.2}x the same search without",
        s50 / n50.max(1e-9),
        s95 / n95.max(1e-9)
    );

    // A server, which holds the posting lists its searches read: it has
    // answered the doc sentences above, and each report is new to it (the
    // lists held are those of the sentences and of the reports before it).
    let held = std::sync::Arc::new(search::HeldLists::new(&store));
    let server = Options {
        held: Some(held.clone()),
        ..opts.clone()
    };
    for (_, q) in &sample {
        std::hint::black_box(search::search(&store, "code", q, &server).unwrap());
    }
    let (mut held_ms, mut held_cpu) = (vec![], vec![]);
    for (q, unheld) in issues.iter().zip(&fitted_hits) {
        let t = Instant::now();
        let cpu = thread_cpu_ms();
        let hits = search::search(&store, "code", q, &server).unwrap();
        held_cpu.push(thread_cpu_ms() - cpu);
        held_ms.push(ms(t));
        assert_eq!(&hits, unheld, "held lists changed the hits of {q:?}");
    }
    let (lists, bytes) = held.size();
    println!(
        "search ISSUE-TEXT in a server that holds the lists it read ({lists} lists, {:.0} MiB held at the end):",
        bytes as f64 / (1 << 20) as f64
    );
    let (l50, l95) = stats("  ranked search, fitted weights, each report new", held_ms);
    stats("  the same, CPU time of the thread", held_cpu);
    println!(
        "  p50 {:.2}x, p95 {:.2}x the same search reading every list; hits identical",
        l50 / s50.max(1e-9),
        l95 / s95.max(1e-9)
    );
    if !reuse {
        after_edits(&store, work.path(), &issues, &server, &held);
    }
}

/// The server of [`main`], each report after an edit of a file's body and
/// the server's own index run: the run drops the held lists it rewrote,
/// the others stay. Timed against the same search reading every list,
/// after the same edit (their hits checked equal).
fn after_edits(
    store: &Store,
    root: &std::path::Path,
    issues: &[String],
    server: &Options,
    held: &search::HeldLists,
) {
    let mut files: Vec<std::path::PathBuf> = walkdir(root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    if files.is_empty() {
        return;
    }
    let every_list = Options {
        held: None,
        ..server.clone()
    };
    let (mut held_ms, mut read_ms, mut run_ms) = (vec![], vec![], vec![]);
    for (i, q) in issues.iter().enumerate() {
        let file = &files[i * 7919 % files.len()];
        let mut text = std::fs::read_to_string(file).unwrap_or_default();
        text.push_str(&format!("\n// quillwort {i}\n"));
        std::fs::write(file, text).unwrap();
        let before = store.graph_seq("code").unwrap();
        let t = Instant::now();
        let run = index_repository(
            store,
            root,
            &IndexOptions {
                history: false,
                ..IndexOptions::default()
            },
        )
        .unwrap();
        run_ms.push(ms(t));
        held.after_run("code", before, run.seq, &run.lists_rewritten);
        let t = Instant::now();
        let hits = search::search(store, "code", q, server).unwrap();
        held_ms.push(ms(t));
        let t = Instant::now();
        let unheld = search::search(store, "code", q, &every_list).unwrap();
        read_ms.push(ms(t));
        assert_eq!(
            hits, unheld,
            "held lists after an edit changed the hits of {q:?}"
        );
    }
    println!("search ISSUE-TEXT in that server, each report after a body edit and its index run:");
    stats("  the index run", run_ms);
    let (r50, r95) = stats("  ranked search reading every list", read_ms);
    let (h50, h95) = stats("  ranked search, the lists the run left held", held_ms);
    println!(
        "  p50 {:.2}x, p95 {:.2}x the search reading every list; hits identical",
        h50 / r50.max(1e-9),
        h95 / r95.max(1e-9)
    );
}

/// Every file under `root`.
fn walkdir(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

/// One query's hits, each score in full (a change meant to keep the
/// ranking must leave this byte for byte the same).
fn write_hits(out: &mut impl Write, query: &str, hits: &[search::Hit]) {
    writeln!(out, "# {query}").unwrap();
    for h in hits {
        writeln!(out, "{:?} {} {:?}", h.score, h.key, h.why).unwrap();
    }
}

/// The issue texts of `GRAPHCTX_BENCH_ISSUES` (JSON lines with a
/// `problem_statement`), else of the shared Rust issue set beside the
/// repository, if there.
fn issue_texts() -> Vec<String> {
    let path = std::env::var_os("GRAPHCTX_BENCH_ISSUES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/issues-dev.jsonl")
        });
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("problem_statement")?.as_str().map(str::to_string))
        .collect()
}
