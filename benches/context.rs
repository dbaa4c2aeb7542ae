//! Context latency and Format E reduction on a large real index.
//!
//! Builds one index from several crates of ~/.cargo/registry/src (real
//! Rust, ≥ 50k entities), then for a sample of entity keys measures
//! `context KEY --hops 2 --budget 100000` cold (no cached result) — with a
//! fresh token counter per request, and with piece counts cached as in a
//! long-running server — and warm (from the context cache), and the token
//! reduction of Format E against the JSON form of the same selection.
//! Baseline in the same run: the blast radius query alone.
//!
//! Run: `cargo bench --bench context` (optional arguments: crate names).

use std::time::Instant;

use graphctx::analyse::blast;
use graphctx::analyse::select::BaseSpec;
use graphctx::emit::{self, ContextRequest, Format};
use graphctx::index::{index_repository, IndexOptions};
use graphctx::store::{Location, Store};
use graphctx::support::tokens::{Encoding, TokenCounter};

mod common;
use common::{copy_crates, crate_names_from_args, ms, percentile, stats};

fn main() {
    graphctx::languages::install();
    // As the binary does (src/main.rs): before any parser exists.
    graphctx::index::parser_memory::parsers_use_mimalloc();
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

    // A deterministic sample of keys: every k-th function, method or struct.
    let all = graphctx::graph::list_entities(&store, "code", &Default::default()).unwrap();
    let pool: Vec<&str> = all
        .iter()
        .filter(|e| {
            matches!(
                e.kind.as_str(),
                "function" | "method" | "struct" | "enum" | "trait"
            )
        })
        .map(|e| e.key.as_str())
        .collect();
    let step = (pool.len() / 200).max(1);
    let sample: Vec<&str> = pool.iter().step_by(step).take(200).copied().collect();

    // Three figures per key: a fresh token counter per request (a one-shot
    // `graphctx context` process: every piece is tokenized), a counter that
    // has served the whole sample once (a server's steady state: piece
    // counts cached, results not), and a context-cache hit.
    let counter = TokenCounter::new(Encoding::O200k);
    counter.count_exact("warm up the tokenizer");
    let mut blast_ms = vec![];
    let mut fresh = vec![];
    let mut tokens = vec![];
    for key in &sample {
        let t = Instant::now();
        let r = blast::blast_radius(&store, "code", &[key.to_string()], 2).unwrap();
        blast_ms.push(ms(t));
        std::hint::black_box(r);
        let req = ContextRequest::new("code", BaseSpec::Keys(vec![key.to_string()]));
        let own = TokenCounter::new(Encoding::O200k);
        let t = Instant::now();
        let out = emit::build_context(&store, &req, &own).unwrap();
        fresh.push(ms(t));
        tokens.push(out.token_count as f64);
        // Serve the sample once on the shared counter.
        emit::build_context(&store, &req, &counter).unwrap();
    }
    let mut steady = vec![];
    let mut warm = vec![];
    for key in &sample {
        let req = ContextRequest::new("code", BaseSpec::Keys(vec![key.to_string()]));
        let t = Instant::now();
        let out = emit::build_context(&store, &req, &counter).unwrap();
        steady.push(ms(t));
        std::hint::black_box(out);
        emit::cached_context(&store, &req, &counter, true).unwrap();
        let t = Instant::now();
        let out = emit::cached_context(&store, &req, &counter, true).unwrap();
        warm.push(ms(t));
        assert!(out.from_cache);
    }
    println!(
        "context KEY --hops 2 --budget 100000 on {} entities:",
        s.entities
    );
    let (blast50, _) = stats("  blast radius query (baseline)", blast_ms);
    let (fresh50, _) = stats("  cold, fresh token counter", fresh);
    let (steady50, _) = stats("  cold, piece counts cached", steady);
    stats("  warm (context cache hit)", warm);
    tokens.sort_by(|a, b| a.total_cmp(b));
    println!(
        "  cold p50 = {:.1}x (fresh counter) / {:.1}x (cached pieces) the blast radius query p50; emitted tokens p50 {:.0}, max {:.0}",
        fresh50 / blast50.max(1e-9),
        steady50 / blast50.max(1e-9),
        percentile(&tokens, 0.5),
        tokens.last().copied().unwrap_or(0.0)
    );

    // Format E against JSON on the same selections.
    let mut reductions = vec![];
    let mut big = vec![];
    for key in sample.iter().take(60) {
        let mut req = ContextRequest::new("code", BaseSpec::Keys(vec![key.to_string()]));
        req.format = Format::Json;
        let c = emit::compare_formats(&store, &req, &counter).unwrap();
        reductions.push(c.reduction);
        if c.json_tokens > 2000 {
            big.push(c.reduction);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "Format E vs JSON (same selection, 100k budget): mean reduction {:.1}% over {} contexts; {:.1}% over the {} with > 2000 JSON tokens",
        100.0 * mean(&reductions),
        reductions.len(),
        100.0 * mean(&big),
        big.len()
    );
}
