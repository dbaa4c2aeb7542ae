//! Text search latency on a large real index.
//!
//! Builds one index from several crates of ~/.cargo/registry/src (real
//! Rust, ≥ 50k entities), takes as queries the first sentence of the doc
//! comments of sampled functions, methods and types (how an agent or a
//! commit message describes code), and measures warm in-process
//! `analyse::search::search` (limit 50) p50/p95. Baseline in the same run:
//! the postings lookup alone (`queries/search_postings.cozo` for the
//! query's words, no ranking, spread or history). Also prints how often the
//! entity whose doc the query came from is among the first 10 hits.
//!
//! Run: `cargo bench --bench search` (optional arguments: crate names).

use std::time::Instant;

use graphctx::analyse::search::{self, Options};
use graphctx::index::{index_repository, IndexOptions};
use graphctx::store::value::str_list;
use graphctx::store::{queries, Location, Params, Store};
use graphctx::support::words::query_terms;

mod common;
use common::{copy_crates, crate_names_from_args, ms, stats};

/// The first sentence of a doc comment, if it is a sentence of words.
fn first_sentence(doc: &str) -> Option<String> {
    let line = doc.lines().next()?.trim();
    let end = line.find(". ").map(|i| i + 1).unwrap_or(line.len());
    let s = &line[..end];
    (s.split_whitespace().count() >= 4 && !s.starts_with('#')).then(|| s.to_string())
}

fn main() {
    let work = tempfile::tempdir().unwrap();
    let used = copy_crates(&crate_names_from_args(), work.path());
    let db = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(db.path().join("graph.db"))).unwrap();
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
    let mut found = 0;
    for (id, q) in &sample {
        let t = Instant::now();
        std::hint::black_box(postings(q));
        base_ms.push(ms(t));
        let t = Instant::now();
        let hits = search::search(&store, "code", q, &opts).unwrap();
        search_ms.push(ms(t));
        if hits.iter().take(10).any(|h| &h.key == id) {
            found += 1;
        }
    }
    println!(
        "search DOC-SENTENCE --limit 50 on {} entities, {} queries:",
        s.entities,
        sample.len()
    );
    let (b50, b95) = stats("  postings lookup alone (baseline)", base_ms);
    let (s50, s95) = stats("  ranked search (warm)", search_ms);
    println!(
        "  search p50 = {:.1}x, p95 = {:.1}x the postings lookup; the query's own entity in the first 10 hits: {:.0} %",
        s50 / b50.max(1e-9),
        s95 / b95.max(1e-9),
        100.0 * found as f64 / sample.len().max(1) as f64
    );
}
