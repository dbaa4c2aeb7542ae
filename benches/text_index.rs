//! What the text index (schema 12, `index::text`) costs a cold index run.
//!
//! For each tree, alternating cold `index --no-history` runs into fresh
//! SQLite databases with the text index and without it (the hidden
//! `IndexOptions::text_index` switch, which skips only the text rows), in
//! the order on, off, off, on, … so that drift of a shared machine falls on
//! both sides alike. Prints each run, then the medians of wall time and
//! of the `diff` and `write` phases, the rows written, and the database
//! size (the database directory after the store is closed), and the
//! overhead of the text index in each.
//!
//! Run: `cargo bench --bench text_index` (arguments: registry crate names
//! or directories, default `tokio`; `--runs N` pairs, default 4).

use std::path::{Path, PathBuf};
use std::time::Instant;

use graphctx::index::{index_repository, IndexOptions};
use graphctx::store::{Location, Store};

mod common;
use common::{copy_tree, find_crate};

struct Run {
    ms: f64,
    diff_ms: f64,
    write_ms: f64,
    rows: usize,
    bytes: u64,
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn cold(root: &Path, text_index: bool) -> Run {
    let db = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(db.path().join("graph.db"))).unwrap();
    let opts = IndexOptions {
        history: false,
        text_index,
        ..IndexOptions::default()
    };
    let t = Instant::now();
    let s = index_repository(&store, root, &opts).unwrap();
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    drop(store);
    Run {
        ms,
        diff_ms: s.phases_ms.get("diff").copied().unwrap_or(0.0),
        write_ms: s.phases_ms.get("write").copied().unwrap_or(0.0),
        rows: s.rows_written,
        bytes: dir_bytes(db.path()),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn bench_tree(label: &str, root: &Path, pairs: usize) {
    let work = tempfile::tempdir().unwrap();
    copy_tree(root, work.path());
    // One warm-up run each way: file cache, allocator, lazy statics.
    cold(work.path(), true);
    cold(work.path(), false);
    let mut on = Vec::new();
    let mut off = Vec::new();
    for i in 0..pairs {
        let order = if i % 2 == 0 {
            [true, false]
        } else {
            [false, true]
        };
        for text in order {
            let r = cold(work.path(), text);
            println!(
                "  {label} text index {:<3} {:>8.0} ms (diff {:>6.0}, write {:>6.0}) {:>8} rows {:>6.1} MB",
                if text { "on" } else { "off" },
                r.ms,
                r.diff_ms,
                r.write_ms,
                r.rows,
                r.bytes as f64 / 1e6
            );
            if text {
                on.push(r);
            } else {
                off.push(r);
            }
        }
    }
    let m = |v: &[Run], f: fn(&Run) -> f64| median(v.iter().map(f).collect());
    let line = |name: &str, f: fn(&Run) -> f64, unit: &str| {
        let (a, b) = (m(&on, f), m(&off, f));
        println!(
            "{label}: {name:<8} with {a:>10.1} {unit}  without {b:>10.1} {unit}  overhead {:>+6.1} %",
            100.0 * (a - b) / b.max(1e-9)
        );
    };
    line("time", |r| r.ms, "ms");
    line("diff", |r| r.diff_ms, "ms");
    line("write", |r| r.write_ms, "ms");
    line("rows", |r| r.rows as f64, "  ");
    line("size", |r| r.bytes as f64 / 1e6, "MB");
}

fn main() {
    graphctx::languages::install();
    // As the binary does (src/main.rs): before any parser exists.
    graphctx::index::parser_memory::parsers_use_mimalloc();
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut pairs = 4;
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        pairs = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(4);
        args.drain(i..(i + 2).min(args.len()));
    }
    if args.is_empty() {
        args.push("tokio".into());
    }
    for name in args {
        let path = PathBuf::from(&name);
        let (label, root) = if path.is_dir() {
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                path,
            )
        } else if let Some(p) = find_crate(&name) {
            (p.file_name().unwrap().to_string_lossy().into_owned(), p)
        } else {
            println!("{name}: not found in the cargo registry, skipped");
            continue;
        };
        bench_tree(&label, &root, pairs);
    }
}
