//! Operation chunking and atomic apply (seed 001 §9 targets).
//!
//! Inputs are seed 001's cargo management and order system examples
//! scaled up (`operations::sample::cargo_response`: nine operations per
//! system, creates → relationships → an update every fifth system).
//!
//! Reports, each as p50/p95 over repeated runs:
//! - chunking the seed's 5-operation response (§3.2; target < 2 ms);
//! - chunking 10k operations (goal < 10 ms), and a 10k-operation chain
//!   (10k levels: the worst case for levelling) — parse time separately;
//! - applying 1,000 operations atomically (goal < 200 ms) on a fresh
//!   in-memory and a fresh SQLite store, split into plan + execute
//!   (Rust), change-log images (reads), and the one transaction; the
//!   baseline in the same run is the same batch written without the
//!   change log;
//! - applying 1,000 operations to a graph already holding 10k nodes;
//! - undoing and redoing that 1,000-operation entry.
//!
//! Run: `cargo bench --bench operations`.

use std::time::Instant;

use serde_json::{json, Value};

use graphctx::ontology::store::OntoTx;
use graphctx::operations::sample::cargo_response;
use graphctx::operations::{apply, changelog, chunk, execute, parse_response, ApplyOptions};
use graphctx::store::{Batch, Location, Store};

mod common;
use common::{ms, stats};

/// The first `n` operations of a scaled cargo response (a prefix only
/// references earlier operations, so it is a valid response).
fn ops_response(n: usize) -> Value {
    let mut r = cargo_response(n / 9 + 1);
    r["operations"].as_array_mut().unwrap().truncate(n);
    r
}

/// `n` updates of one node, each depending on the previous: n levels.
fn chain_response(n: usize) -> Value {
    let mut ops = vec![json!({"id": "c0", "type": "create", "nodeType": "FUNC",
        "tempId": "t", "data": {"Name": "OptimizeRoutes"}})];
    for i in 1..n {
        ops.push(
            json!({"id": format!("c{i}"), "type": "update", "tempId": "t",
            "data": {"Descr": format!("revision {i}")}, "dependsOn": [format!("c{}", i - 1)]}),
        );
    }
    json!({"operations": ops})
}

const SEED_3_2: &str = r#"{"response":"Ich habe das System mit Customer und PlaceOrder erstellt.","operations":[
 {"id":"op-001","type":"create","nodeType":"ACTOR","tempId":"temp-customer","data":{"Name":"Customer","Descr":"Customer placing orders"},"dependsOn":[]},
 {"id":"op-002","type":"create","nodeType":"UC","tempId":"temp-placeorder","data":{"Name":"PlaceOrder","Descr":"Place an order"},"dependsOn":[]},
 {"id":"op-003","type":"create","nodeType":"FLOW","tempId":"temp-orderrequest","data":{"Name":"OrderRequest","Descr":"Order data from customer"},"dependsOn":[]},
 {"id":"op-004","type":"create-relationship","relType":"io","sourceTempId":"temp-customer","targetTempId":"temp-orderrequest","dependsOn":["op-001","op-003"]},
 {"id":"op-005","type":"create-relationship","relType":"io","sourceTempId":"temp-orderrequest","targetTempId":"temp-placeorder","dependsOn":["op-002","op-003"]}]}"#;

fn bench_chunking() {
    let known = |_: &str| true;
    let small = parse_response(SEED_3_2).unwrap();
    let mut v = vec![];
    for _ in 0..2000 {
        let t = Instant::now();
        let p = chunk::plan(&small.operations, &known).unwrap();
        v.push(ms(t));
        assert_eq!(p.chunks.len(), 2);
    }
    stats("chunk seed §3.2 response (5 ops)", v);

    for (label, resp) in [
        ("cargo x1112", ops_response(10_000)),
        ("chain", chain_response(10_000)),
    ] {
        let text = resp.to_string();
        let mut parse = vec![];
        let mut plan = vec![];
        let mut levels = 0;
        for _ in 0..50 {
            let t = Instant::now();
            let r = parse_response(&text).unwrap();
            parse.push(ms(t));
            let t = Instant::now();
            let p = chunk::plan(&r.operations, &known).unwrap();
            plan.push(ms(t));
            levels = p.chunks.len();
        }
        stats(&format!("parse 10k ops ({label})"), parse);
        stats(&format!("chunk 10k ops ({label}, {levels} chunks)"), plan);
    }
}

fn open(kind: &str, dir: &std::path::Path, i: usize) -> Store {
    match kind {
        "mem" => Store::memory().unwrap(),
        _ => Store::open(&Location::Sqlite(dir.join(format!("g{i}.db")))).unwrap(),
    }
}

fn bench_apply() {
    let dir = tempfile::tempdir().unwrap();
    let resp = ops_response(1000);
    let text = resp.to_string();
    let parsed = parse_response(&text).unwrap();
    for kind in ["mem", "sqlite"] {
        let (mut total, mut rust, mut images, mut commit, mut baseline) =
            (vec![], vec![], vec![], vec![], vec![]);
        for i in 0..15 {
            // End to end, fresh store.
            let store = open(kind, dir.path(), i);
            let t = Instant::now();
            apply(&store, "m", &parsed, &ApplyOptions::default(), &mut |_| {}).unwrap();
            total.push(ms(t));

            // The same pipeline step by step on another fresh store.
            let store = open(kind, dir.path(), 100 + i);
            let t = Instant::now();
            let mut tx = OntoTx::begin(&store, "m").unwrap();
            let plan =
                chunk::plan(&parsed.operations, &|s| tx.graph().uuid_of(s).is_some()).unwrap();
            execute::execute(&mut tx, &parsed.operations, &plan).unwrap();
            let mut batch = Batch::new();
            let seq = tx.finish(&mut batch).seq.unwrap();
            rust.push(ms(t));
            let t = Instant::now();
            changelog::record(&store, "m", &mut batch, seq, Value::Null).unwrap();
            images.push(ms(t));
            let t = Instant::now();
            store.apply(batch).unwrap();
            commit.push(ms(t));

            // Baseline: the same change without the change log.
            let store = open(kind, dir.path(), 200 + i);
            let mut tx = OntoTx::begin(&store, "m").unwrap();
            let plan =
                chunk::plan(&parsed.operations, &|s| tx.graph().uuid_of(s).is_some()).unwrap();
            execute::execute(&mut tx, &parsed.operations, &plan).unwrap();
            let mut batch = Batch::new();
            tx.finish(&mut batch);
            let t = Instant::now();
            store.apply(batch).unwrap();
            baseline.push(ms(t));
        }
        println!("-- apply 1,000 ops ({kind}, fresh graph)");
        let (p_total, _) = stats("  apply end to end", total);
        stats("  load + plan + execute + stage (Rust)", rust);
        stats("  change-log images (reads)", images);
        let (p_commit, _) = stats("  one transaction (with log)", commit);
        let (p_base, _) = stats("  baseline: transaction without log", baseline);
        println!(
            "  log overhead on the transaction: x{:.2}; end to end vs bare write: x{:.2}",
            p_commit / p_base,
            p_total / p_base
        );
    }

    // 1,000 operations onto a graph that already holds ~10k nodes.
    let store = Store::open(&Location::Sqlite(dir.path().join("big.db"))).unwrap();
    let big = parse_response(&cargo_response(2000).to_string()).unwrap();
    apply(&store, "m", &big, &ApplyOptions::default(), &mut |_| {}).unwrap();
    let (mut load, mut rust, mut log, mut commit) = (vec![], vec![], vec![], vec![]);
    for _ in 0..5 {
        let t = Instant::now();
        let mut tx = OntoTx::begin(&store, "m").unwrap();
        load.push(ms(t));
        let t = Instant::now();
        let plan = chunk::plan(&parsed.operations, &|s| tx.graph().uuid_of(s).is_some()).unwrap();
        execute::execute(&mut tx, &parsed.operations, &plan).unwrap();
        let mut batch = Batch::new();
        let seq = tx.finish(&mut batch).seq.unwrap();
        rust.push(ms(t));
        let t = Instant::now();
        changelog::record(&store, "m", &mut batch, seq, Value::Null).unwrap();
        log.push(ms(t));
        let t = Instant::now();
        store.apply(batch).unwrap();
        commit.push(ms(t));
        changelog::undo(&store, "m").unwrap();
    }
    let mut v = vec![];
    let mut undo = vec![];
    let mut redo = vec![];
    for _ in 0..10 {
        let t = Instant::now();
        apply(&store, "m", &parsed, &ApplyOptions::default(), &mut |_| {}).unwrap();
        v.push(ms(t));
        let t = Instant::now();
        changelog::undo(&store, "m").unwrap();
        undo.push(ms(t));
        let t = Instant::now();
        changelog::redo(&store, "m").unwrap();
        redo.push(ms(t));
        changelog::undo(&store, "m").unwrap();
    }
    println!(
        "-- on a graph of {} nodes (sqlite)",
        big.operations
            .iter()
            .filter(|o| o.kind == graphctx::operations::parse::OpKind::Create)
            .count()
    );
    stats("  apply 1,000 ops end to end", v);
    stats("  of which: load the graph (OntoTx::begin)", load);
    stats("  of which: plan + execute + stage", rust);
    stats("  of which: change-log images + entry", log);
    stats("  of which: one transaction", commit);
    stats("  undo of that entry", undo);
    stats("  redo of that entry", redo);
}

fn main() {
    graphctx::languages::install();
    bench_chunking();
    bench_apply();
}
