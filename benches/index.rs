//! Indexing benchmark on real code: the crates under ~/.cargo/registry/src
//! and this repository.
//!
//! For each tree it measures, in the same run and with the same rayon
//! threads: parse-only time (tree-sitter alone over the same files, read
//! into memory beforehand), a cold full index into a fresh SQLite database,
//! a no-change re-index, and a one-file edit → index current. It prints the
//! index ÷ parse ratio, entities/s and edges/s, and the peak RSS of a child
//! process that does only the cold index.
//!
//! Run: `cargo bench --bench index` (add crate directory names or paths as
//! arguments to choose the trees; default: regex-automata, syn, serde_json,
//! clap_builder and this repository). `cargo bench --bench index --
//! registry` indexes every crate under ~/.cargo/registry/src as one tree
//! (the large-monorepo case; one cold run instead of the best of three).

use std::path::{Path, PathBuf};
use std::time::Instant;

use graphctx::index::rust::extract::{new_rust_parser, parse_only};
use graphctx::index::{index_repository, walk, IndexOptions};
use graphctx::store::{Location, Store};
use rayon::prelude::*;

mod common;
use common::{copy_tree, find_crate};

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

/// Child mode: cold-index one tree into a fresh database and print peak RSS.
fn child(root: &Path) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(dir.path().join("graph.db"))).unwrap();
    index_repository(&store, root, &IndexOptions::default()).unwrap();
    println!("{}", peak_rss_kb().unwrap_or(0));
}

fn bench_tree(label: &str, root: &Path) {
    // Work on a private copy so the edit step never touches the source.
    let work = tempfile::tempdir().unwrap();
    copy_tree(root, work.path());
    let root = work.path();
    let files = walk::walk(root).files;
    let sources: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(&f.abs_path).ok())
        .collect();
    let bytes: usize = sources.iter().map(String::len).sum();

    // Parse-only baseline, best of 3.
    let mut parse = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let n: usize = sources
            .par_iter()
            .map_init(new_rust_parser, |p, s| parse_only(p, s))
            .sum();
        std::hint::black_box(n);
        parse = parse.min(ms(t.elapsed()));
    }

    // Cold full index into a fresh SQLite database, best of 3 (one run for
    // trees of thousands of files, where a run takes minutes).
    let mut cold = f64::MAX;
    let mut summary = None;
    let runs = if files.len() > 3000 { 1 } else { 3 };
    for _ in 0..runs {
        let db = tempfile::tempdir().unwrap();
        let store = Store::open(&Location::Sqlite(db.path().join("graph.db"))).unwrap();
        let t = Instant::now();
        let s = index_repository(&store, root, &IndexOptions::default()).unwrap();
        cold = cold.min(ms(t.elapsed()));
        summary = Some(s);
    }
    let s = summary.unwrap();

    // Re-index with nothing changed, and a one-file edit.
    let db = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(db.path().join("graph.db"))).unwrap();
    index_repository(&store, root, &IndexOptions::default()).unwrap();
    let t = Instant::now();
    index_repository(&store, root, &IndexOptions::default()).unwrap();
    let noop = ms(t.elapsed());
    // One-file edits: a file at each size quartile and the largest one;
    // the typical figure is the median, the worst is the largest file.
    let mut by_size: Vec<&walk::SourceFile> = files.iter().collect();
    by_size.sort_by_key(|f| f.bytes);
    let picks: Vec<PathBuf> = [0.25, 0.5, 0.75, 0.9, 1.0]
        .iter()
        .map(|q| {
            let i = ((by_size.len() - 1) as f64 * q).round() as usize;
            by_size[i].abs_path.clone()
        })
        .collect();
    let mut edits = Vec::new();
    let mut worst = 0.0;
    for (n, target) in picks.iter().enumerate() {
        let original = std::fs::read_to_string(target).unwrap_or_default();
        let mut times = Vec::new();
        for i in 0..3 {
            let edited = format!("{original}\npub fn graphctx_bench_edit_{i}() -> u32 {{ {i} }}\n");
            std::fs::write(target, edited).unwrap();
            let t = Instant::now();
            index_repository(&store, root, &IndexOptions::default()).unwrap();
            times.push(ms(t.elapsed()));
        }
        std::fs::write(target, &original).unwrap();
        index_repository(&store, root, &IndexOptions::default()).unwrap();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let t = times[1];
        if n + 1 == picks.len() {
            worst = t;
        }
        edits.push(t);
    }
    edits.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let edit = edits[edits.len() / 2];

    let rss = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--child")
        .arg(root)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);

    println!(
        "{label:<22} {:>5} files {:>6} KiB | parse {:>7.1} ms | cold index {:>7.1} ms = {:>4.2}x parse | \
         no-op {:>6.1} ms | 1-file edit {:>6.1} ms (largest file {:>6.1}) | {:>6} entities {:>6} edges | {:>8.0} entities/s {:>8.0} edges/s | peak RSS {:>5.1} MiB",
        files.len(),
        bytes / 1024,
        parse,
        cold,
        cold / parse,
        noop,
        edit,
        worst,
        s.entities,
        s.edges,
        s.entities as f64 / (cold / 1000.0),
        s.edges as f64 / (cold / 1000.0),
        rss as f64 / 1024.0,
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--child") {
        child(Path::new(&args[1]));
        return;
    }
    println!(
        "graphctx index benchmark, {} rayon threads",
        rayon::current_num_threads()
    );
    let names: Vec<String> = if args.is_empty() {
        ["regex-automata", "syn", "serde_json", "clap_builder"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .into_iter()
            .chain([env!("CARGO_MANIFEST_DIR").to_string()])
            .collect()
    } else {
        args
    };
    for name in names {
        let path = PathBuf::from(&name);
        let (label, root) = if name == "registry" {
            match common::registry_src() {
                Some(src) => ("registry tree".to_string(), src),
                None => {
                    println!("registry: no ~/.cargo/registry/src, skipped");
                    continue;
                }
            }
        } else if path.is_dir() {
            let label = if name == env!("CARGO_MANIFEST_DIR") {
                "graphctx (this repo)".to_string()
            } else {
                path.file_name().unwrap().to_string_lossy().into_owned()
            };
            (label, path)
        } else if let Some(p) = find_crate(&name) {
            (p.file_name().unwrap().to_string_lossy().into_owned(), p)
        } else {
            println!("{name}: not found in the cargo registry, skipped");
            continue;
        };
        bench_tree(&label, &root);
    }
}
