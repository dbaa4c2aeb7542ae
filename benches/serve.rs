//! Server latency on a large real index (≥ 50k entities).
//!
//! Indexes about thirty registry crates together (as `benches/context.rs`
//! does) into a workspace, then measures for a deterministic sample of
//! entities, at the cursor on each entity's name:
//!
//! - in-process handler time (what the server spends): references
//!   (definition + references), hover (definition + hover with the blast
//!   summary), `graphctx/context` cold and from the cache;
//! - the same three through `graphctx lsp` over stdio (JSON-RPC round trip
//!   from a client's point of view);
//! - time from a saved edit (file written, `didSave` sent) to the first
//!   answer that reflects it (`documentSymbol` of the file lists the new
//!   function),
//!   next to the incremental index run alone.
//!
//! - the same from a saved body edit (a comment line on top of the file:
//!   every symbol moves a line, no interface changes).
//!
//! As an editor saves, each file is opened (`didOpen`) and edited for a
//! moment before it is saved, and closed after the answer; the in-process
//! runs are measured with the file open and not.
//!
//! Run: `cargo bench --bench serve` (optional arguments: crate names, or
//! `registry` for every crate under ~/.cargo/registry/src as one tree —
//! the large-monorepo case, thousands of files).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use graphctx::analyse::select::BaseSpec;
use graphctx::emit::Format;
use graphctx::index::{index_location, IndexOptions};
use graphctx::serve::{Refresh, Workspace};
use graphctx::store::Location;

mod common;
#[path = "../tests/it/common/lsp_rpc.rs"]
mod lsp_rpc;
use common::{copy_crates, crate_names_from_args, ms, percentile, stats};
use lsp_rpc::Rpc;

const SAMPLE: usize = 200;
const STDIO_SAMPLE: usize = 100;
/// Saves per kind of edit: enough that the p95 is not simply the slowest
/// save (of 12, it was; one large file moved it by 60 ms from run to run).
const EDITS: usize = 40;

fn uri(p: &Path) -> String {
    format!("file://{}", p.display())
}

fn main() {
    graphctx::languages::install();
    // As the binary does (src/main.rs): before any parser exists.
    graphctx::index::parser_memory::parsers_use_mimalloc();
    let work = tempfile::tempdir().unwrap();
    let root = work.path().canonicalize().unwrap();
    let names = crate_names_from_args();
    let used = if names == ["registry"] {
        let src = common::registry_src().expect("~/.cargo/registry/src");
        common::copy_tree(&src, &root);
        std::fs::read_dir(&root).unwrap().count()
    } else {
        copy_crates(&names, &root).len()
    };
    // Indexed first as `graphctx index` does (a database built aside),
    // then opened as an editor opens it: the server's first run finds the
    // index current.
    let t = Instant::now();
    let s = index_location(
        &Location::default_for(&root),
        &root,
        &IndexOptions {
            history: false,
            ..IndexOptions::default()
        },
    )
    .unwrap();
    println!(
        "index of {used} crates: {} files, {} entities, {} edges in {:.1} s",
        s.files_seen,
        s.entities,
        s.edges,
        t.elapsed().as_secs_f64()
    );
    let ws = Workspace::open(&root, None, "code").unwrap();
    let t = Instant::now();
    let Refresh::Done(_) = ws.refresh(false).unwrap() else {
        panic!("busy")
    };
    println!(
        "the server's first run over it: {:.1} s",
        t.elapsed().as_secs_f64()
    );

    // A deterministic sample: every k-th function, method, struct, enum, trait.
    let all = ws.all_symbols().unwrap();
    let pool: Vec<_> = all
        .iter()
        .filter(|e| {
            matches!(
                e.kind.as_str(),
                "fn" | "method" | "struct" | "enum" | "trait"
            )
        })
        .collect();
    let step = (pool.len() / SAMPLE).max(1);
    let sample: Vec<_> = pool.iter().step_by(step).take(SAMPLE).copied().collect();
    let at: Vec<(String, String, u32, u32)> = sample
        .iter()
        .map(|e| {
            let s = ws.declaration_span(e);
            (e.key.clone(), e.file.clone(), s.start_line, s.start_col)
        })
        .collect();

    let (mut refs, mut hover, mut cold, mut warm, mut cold_full) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut ref_counts = vec![];
    for (key, file, line, col) in &at {
        let t = Instant::now();
        let defs = ws.definition(file, *line, *col, None).unwrap();
        let target = defs.first().map(|d| d.key.clone()).unwrap_or(key.clone());
        let r = ws.references(&target, false).unwrap();
        refs.push(ms(t));
        ref_counts.push(r.len() as f64);
        let t = Instant::now();
        let defs = ws.definition(file, *line, *col, None).unwrap();
        let h = ws
            .hover(&defs.first().map(|d| d.key.clone()).unwrap_or(key.clone()))
            .unwrap();
        hover.push(ms(t));
        std::hint::black_box(h);
        let base = BaseSpec::Keys(vec![key.clone()]);
        let t = Instant::now();
        ws.context(base.clone(), 2, 8000, Format::E).unwrap();
        cold.push(ms(t));
        let t = Instant::now();
        let out = ws.context(base.clone(), 2, 8000, Format::E).unwrap();
        warm.push(ms(t));
        assert!(out.from_cache);
        let t = Instant::now();
        ws.context(base, 2, 100_000, Format::Json).unwrap();
        cold_full.push(ms(t));
    }
    ref_counts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "in-process handlers on {} entities (references per answer: p50 {:.0}, max {:.0}):",
        s.entities,
        percentile(&ref_counts, 0.5),
        ref_counts.last().copied().unwrap_or(0.0)
    );
    stats("  references (definition + references)", refs);
    stats("  hover (definition + hover + blast)", hover);
    stats("  graphctx/context hops 2, 8k, E, cold", cold);
    stats("  graphctx/context hops 2, 8k, E, cached", warm);
    stats("  graphctx/context hops 2, 100k, JSON, cold", cold_full);
    drop(ws);

    // Through the binary over stdio.
    // As an editor runs it: watching the files, so that an answer over an
    // unchanged tree needs no index run.
    let mut lsp = Rpc::start_with(&root, &["lsp"]);
    // The first request waits for the first index run of the corpus.
    lsp.timeout = Duration::from_secs(600);
    let t = Instant::now();
    let init = lsp.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&root), "capabilities": {}}),
    );
    assert!(init.get("result").is_some());
    lsp.notify("initialized", json!({}));
    // The first request waits for the initial (no-change) index run.
    lsp.request("workspace/symbol", json!({"query": "x"}));
    println!(
        "graphctx lsp over stdio: initialize + no-change index run {:.0} ms",
        ms(t)
    );
    let (mut refs, mut hover, mut ctx, mut ctx_cached) = (vec![], vec![], vec![], vec![]);
    for (i, (key, file, line, col)) in at.iter().take(STDIO_SAMPLE).enumerate() {
        let pos = json!({"textDocument": {"uri": uri(&root.join(file))}, "position": {"line": line, "character": col}});
        let mut p = pos.clone();
        p["context"] = json!({"includeDeclaration": false});
        let t = Instant::now();
        let r = lsp.request("textDocument/references", p);
        refs.push(ms(t));
        assert!(r.get("error").is_none(), "{r}");
        let t = Instant::now();
        let r = lsp.request("textDocument/hover", pos.clone());
        hover.push(ms(t));
        assert!(r.get("error").is_none(), "{r}");
        // A budget not used in-process above: the first request is cold.
        let params = json!({"key": key, "hops": 2, "budget": 7000 + i, "format": "e"});
        let t = Instant::now();
        let r = lsp.request("graphctx/context", params.clone());
        ctx.push(ms(t));
        assert!(r.get("error").is_none(), "{r}");
        assert_eq!(r["result"]["from_cache"], false);
        let t = Instant::now();
        let r = lsp.request("graphctx/context", params);
        ctx_cached.push(ms(t));
        assert_eq!(r["result"]["from_cache"], true, "{r}");
    }
    println!("graphctx lsp over stdio (JSON-RPC round trip):");
    stats("  textDocument/references", refs);
    stats("  textDocument/hover", hover);
    stats("  graphctx/context hops 2, ~7k, E, cold", ctx);
    stats("  graphctx/context hops 2, ~7k, E, cached", ctx_cached);

    // Saved edit → answer reflecting it.
    let mut files: Vec<&String> = at.iter().map(|a| &a.1).collect();
    files.dedup();
    let step = (files.len() / EDITS).max(1);
    // The first line of every symbol's range: the entity's stored lines
    // (the selection range is found in the file's text as it is now, so
    // it moves before the index does).
    fn starts(v: &Value, out: &mut Vec<i64>) {
        if let Some(list) = v.as_array() {
            for s in list {
                out.extend(s["range"]["start"]["line"].as_i64());
                starts(&s["children"], out);
            }
        }
    }
    let symbols = |lsp: &mut Rpc, path: &Path| {
        let r = lsp.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri(path)}}),
        );
        let mut lines = Vec::new();
        starts(&r["result"], &mut lines);
        lines
    };
    // As an editor saves: the file was opened first, and edited for a
    // while (the server parses an opened file off the request path, and
    // parses its saves from that tree); it is closed after the answer.
    let open = |lsp: &mut Rpc, path: &Path| {
        let text = std::fs::read_to_string(path).unwrap();
        lsp.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "rust", "version": 1, "text": text}}),
        );
    };
    let close = |lsp: &mut Rpc, path: &Path| {
        lsp.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri(path)}}),
        );
    };
    const EDITING: Duration = Duration::from_millis(200);
    // One save first: the server's first run after its start reads every
    // interface and builds the symbol table, which later saves reuse.
    let (mut save_to_answer, mut body_to_answer) = (vec![], vec![]);
    for (i, file) in files.iter().step_by(step).take(EDITS + 1).enumerate() {
        let path = root.join(file);
        open(&mut lsp, &path);
        let before = symbols(&mut lsp, &path);
        let text = std::fs::read_to_string(&path).unwrap();
        std::thread::sleep(EDITING);
        let t = Instant::now();
        std::fs::write(&path, format!("// graphctx bench save {i}\n{text}")).unwrap();
        lsp.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri(&path)}}),
        );
        // (The file's module starts on the first line before and after.)
        while symbols(&mut lsp, &path) == before {}
        if i > 0 {
            body_to_answer.push(ms(t));
        }
        close(&mut lsp, &path);
    }
    for (i, file) in files.iter().step_by(step).take(EDITS).enumerate() {
        let path = root.join(file);
        let name = format!("graphctx_bench_saved_{i}");
        open(&mut lsp, &path);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("\npub fn {name}() {{}}\n"));
        std::thread::sleep(EDITING);
        let t = Instant::now();
        std::fs::write(&path, &text).unwrap();
        lsp.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri(&path)}}),
        );
        loop {
            let r = lsp.request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri(&path)}}),
            );
            if r["result"].to_string().contains(&name) {
                break;
            }
        }
        save_to_answer.push(ms(t));
        close(&mut lsp, &path);
    }
    lsp.request("shutdown", Value::Null);
    lsp.notify("exit", Value::Null);
    let _ = lsp.child.wait();

    // A server as it is after its start: its interfaces and symbol table
    // read ahead of the first save (not timed).
    let ws = Workspace::open(&root, None, "code").unwrap();
    let Refresh::Done(_) = ws.refresh(false).unwrap() else {
        panic!("busy")
    };
    ws.warm().unwrap();
    // A `pub fn` appended to a file, then the run that indexes it (timed).
    let append_and_run = |file: &str, name: &str| {
        let path = root.join(file);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&format!("\npub fn {name}() {{}}\n"));
        std::fs::write(&path, &text).unwrap();
        let t = Instant::now();
        let Refresh::Done(s) = ws.refresh(false).unwrap() else {
            panic!("busy")
        };
        (ms(t), s, text.len())
    };
    let mut runs = vec![];
    let mut slowest = vec![];
    let mut phases: std::collections::BTreeMap<&'static str, Vec<f64>> = Default::default();
    for (i, file) in files.iter().step_by(step).take(EDITS).enumerate() {
        let (run, s, bytes) = append_and_run(file, &format!("graphctx_bench_direct_{i}"));
        runs.push(run);
        for (k, v) in &s.phases_ms {
            phases.entry(*k).or_default().push(*v);
        }
        slowest.push((
            run,
            file.to_string(),
            bytes,
            s.files_resolved,
            s.phases_ms.clone(),
        ));
    }
    // The same, each file open in the editor (its tree held) first.
    let mut runs_open = vec![];
    for (i, file) in files.iter().step_by(step).take(EDITS).enumerate() {
        ws.hold_tree(file);
        runs_open.push(append_and_run(file, &format!("graphctx_bench_open_{i}")).0);
        ws.release_tree(file);
    }
    println!(
        "saved edit → answer reflecting it ({} entities):",
        s.entities
    );
    stats(
        "  new pub fn: write + didSave → documentSymbol shows it",
        save_to_answer,
    );
    stats(
        "  body edit: write + didSave → documentSymbol moved",
        body_to_answer,
    );
    stats("  the incremental index run alone (in-process)", runs);
    stats("  the same, the file open in the editor", runs_open);
    let medians: Vec<String> = phases
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            format!("{k} {:.0}", percentile(&v, 0.5))
        })
        .collect();
    println!("  index run phases, median ms: {}", medians.join(", "));
    // What the tail is made of.
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (run, file, bytes, resolved, phases) in slowest.iter().take(3) {
        let phases: Vec<String> = phases.iter().map(|(k, v)| format!("{k} {v:.0}")).collect();
        println!(
            "  slow run {run:.0} ms: {file} ({} KiB, {resolved} files resolved): {}",
            bytes / 1024,
            phases.join(", ")
        );
    }
}
