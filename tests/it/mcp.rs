//! `graphctx mcp`: every tool in-process (schemas, answers, token bounds,
//! error objects) and the binary driven by the official MCP Python SDK.

use crate::common;

use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use graphctx::serve::tools::{self, ToolReply, DEFAULT_MAX_TOKENS};
use graphctx::serve::{Refresh, Workspace};
use graphctx::support::tokens::{Encoding, TokenCounter};

const BIN: &str = env!("CARGO_BIN_EXE_graphctx");
const ORIGIN: &str = "src/geometry/point.rs-geometry::point-Point::origin";

fn shapes() -> (tempfile::TempDir, Arc<Workspace>) {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let ws = Workspace::open(dir.path(), None, "code").unwrap();
    assert!(matches!(ws.refresh(true).unwrap(), Refresh::Done(_)));
    (dir, ws)
}

fn call(ws: &Workspace, name: &str, args: Value) -> ToolReply {
    let args: Map<String, Value> = serde_json::from_value(args).unwrap();
    tools::call(ws, &graphctx::serve::registry::all(), name, &args).expect("tool exists")
}

fn ok_json(r: &ToolReply) -> Value {
    assert!(!r.is_error, "{}", r.text);
    serde_json::from_str(&r.text).unwrap()
}

fn err_json(r: &ToolReply) -> Value {
    assert!(r.is_error, "expected an error, got {}", r.text);
    serde_json::from_str(&r.text).unwrap()
}

fn tokens(s: &str) -> usize {
    TokenCounter::new(Encoding::O200k).count_exact(s)
}

#[test]
fn every_tool_has_an_object_schema_with_max_tokens() {
    let reg = graphctx::serve::registry::all();
    let names: Vec<&str> = reg.iter().map(|t| t.name).collect();
    for n in [
        "context",
        "blast_radius",
        "callers",
        "callees",
        "search_entities",
        "cycles",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    for t in &reg {
        let s = Value::Object(t.input_schema());
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["max_tokens"]["default"], DEFAULT_MAX_TOKENS);
        for r in s["required"].as_array().unwrap() {
            assert!(
                s["properties"].get(r.as_str().unwrap()).is_some(),
                "{}",
                t.name
            );
        }
        assert!(!t.description.is_empty());
    }
}

#[test]
fn navigation_tools_answer_from_the_graph() {
    let (_d, ws) = shapes();
    let found = ok_json(&call(
        &ws,
        "search_entities",
        json!({"query": "origin", "kind": "method"}),
    ));
    assert_eq!(found["results"][0]["key"], ORIGIN, "{found}");

    let callers = ok_json(&call(&ws, "callers", json!({"key": ORIGIN})));
    let keys: Vec<&str> = callers["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert!(
        keys.contains(&"src/geometry/mod.rs-geometry-Rect::new"),
        "{keys:?}"
    );
    for c in callers["callers"].as_array().unwrap() {
        assert!(c["line"].as_i64().unwrap() > 0);
        // Each caller's callees include the entity.
        let back = ok_json(&call(&ws, "callees", json!({"key": c["key"]})));
        assert!(back["callees"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["key"] == ORIGIN));
    }

    let blast = ok_json(&call(
        &ws,
        "blast_radius",
        json!({"key": ORIGIN, "hops": 1}),
    ));
    assert!(blast["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["distance"] == 1));
    for k in &keys {
        assert!(blast["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["key"] == *k));
    }
    let cycles = ok_json(&call(&ws, "cycles", json!({})));
    assert_eq!(
        cycles["count"].as_u64().unwrap() as usize,
        cycles["cycles"].as_array().unwrap().len()
    );

    let ctx = call(
        &ws,
        "context",
        json!({"key": ORIGIN, "hops": 1, "format": "e"}),
    );
    assert!(!ctx.is_error, "{}", ctx.text);
    assert!(ctx.text.starts_with("# graphctx context · Format E"));
    let by_file = call(
        &ws,
        "context",
        json!({"file": "src/geometry/point.rs", "format": "json", "budget": 3000}),
    );
    let doc: Value = serde_json::from_str(&by_file.text).unwrap();
    assert!(doc["token_count"].as_u64().unwrap() <= 3000);
    assert!(tokens(&by_file.text) <= 3000);
}

#[test]
fn every_answer_stays_within_max_tokens() {
    let (_d, ws) = shapes();
    for max in [64usize, 200, 1000] {
        for (tool, args) in [
            ("search_entities", json!({"query": "", "limit": 500})),
            ("blast_radius", json!({"key": ORIGIN, "hops": 3})),
            (
                "callees",
                json!({"key": "src/geometry/mod.rs-geometry-Rect::new"}),
            ),
            (
                "context",
                json!({"name": "area", "hops": 3, "format": "json"}),
            ),
            ("context", json!({"key": ORIGIN, "hops": 3, "format": "e"})),
            ("cycles", json!({})),
        ] {
            let mut a = args.clone();
            a["max_tokens"] = json!(max);
            let r = call(&ws, tool, a);
            assert!(
                tokens(&r.text) <= max,
                "{tool} at {max}: {} tokens",
                tokens(&r.text)
            );
            if !r.is_error {
                let v: Value = serde_json::from_str(&r.text).unwrap_or(Value::Null);
                // A cut list says so, with what was kept and the total.
                if v.get("truncated") == Some(&json!(true)) {
                    assert!(v["returned"].as_u64().unwrap() < v["total"].as_u64().unwrap());
                }
            }
        }
    }
    // With room, nothing is cut: the full search lists every entity.
    let all = ok_json(&call(
        &ws,
        "search_entities",
        json!({"query": "", "limit": 500, "max_tokens": 100000}),
    ));
    assert!(all.get("truncated").is_none());
    let cut = ok_json(&call(
        &ws,
        "search_entities",
        json!({"query": "", "limit": 500, "max_tokens": 300}),
    ));
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["total"], all["results"].as_array().unwrap().len());
    assert_eq!(
        cut["results"].as_array().unwrap()[..],
        all["results"].as_array().unwrap()[..cut["returned"].as_u64().unwrap() as usize]
    );
}

/// `kind` filters by the kinds the index stores, written out or
/// abbreviated as Format E writes them; an unknown kind is refused with
/// the kinds there are.
#[test]
fn search_filters_by_stored_or_abbreviated_kind() {
    let (_d, ws) = shapes();
    let listed = |kind: &str| {
        let v = ok_json(&call(
            &ws,
            "search_entities",
            json!({"query": "", "kind": kind, "limit": 500, "max_tokens": 100000}),
        ));
        v["results"].as_array().unwrap().clone()
    };
    let functions = listed("fn");
    assert!(!functions.is_empty());
    assert!(
        functions.iter().all(|e| e["kind"] == "function"),
        "{functions:?}"
    );
    assert_eq!(functions, listed("function"));
    let modules = listed("mod");
    assert!(!modules.is_empty());
    assert!(modules.iter().all(|e| e["kind"] == "module"));
    let e = err_json(&call(
        &ws,
        "search_entities",
        json!({"query": "area", "kind": "widget"}),
    ));
    assert_eq!(e["error"], "invalid_arguments");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("'widget'") && message.contains("function"),
        "{message}"
    );
}

#[test]
fn bad_calls_are_tool_errors_with_error_objects() {
    let (_d, ws) = shapes();
    let e = err_json(&call(
        &ws,
        "callers",
        json!({"key": "src/geometry/point.rs-geometry::point-Point::orign"}),
    ));
    assert_eq!(e["error"], "entity_not_found");
    assert!(
        e["suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == ORIGIN),
        "{e}"
    );
    let e = err_json(&call(&ws, "context", json!({"key": "nope"})));
    assert_eq!(e["error"], "entity_not_found");
    for (tool, args) in [
        ("callers", json!({})),
        ("callers", json!({"key": 5})),
        ("blast_radius", json!({"key": ORIGIN, "hops": 9})),
        ("context", json!({"key": ORIGIN, "file": "src/lib.rs"})),
        ("context", json!({"key": ORIGIN, "format": "xml"})),
        ("context", json!({"file": "/etc/hostname"})),
        ("context", json!({"file": "../../etc/passwd"})),
        ("search_entities", json!({"query": "x", "bogus": 1})),
        ("cycles", json!({"max_tokens": 3})),
        ("cycles", json!({"max_tokens": "many"})),
    ] {
        let e = err_json(&call(&ws, tool, args.clone()));
        assert_eq!(e["error"], "invalid_arguments", "{tool} {args}: {e}");
        assert!(!e["message"].as_str().unwrap().is_empty());
    }
    // A document that cannot fit: the seed's size error.
    let e = err_json(&call(
        &ws,
        "context",
        json!({"keys": [ORIGIN, "src/geometry/mod.rs-geometry-Rect"], "max_tokens": 64}),
    ));
    assert_eq!(e["error"], "context_size_exceeded", "{e}");
    assert!(tools::call(
        &ws,
        &graphctx::serve::registry::all(),
        "no_such_tool",
        &Map::new()
    )
    .is_none());
}

/// The shapes workspace plus an ontology graph `cargo` with a session `s1`
/// (through the CLI, as a user would set it up) and the seed canvas vault.
fn with_graphs() -> (tempfile::TempDir, Arc<Workspace>) {
    let (d, ws) = shapes();
    let db = d.path().join(".graphctx/graph.db");
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let cargo_e = common::fixture("ontology/cargo.e");
    run(&[
        "--graph",
        "cargo",
        "graph",
        "import",
        cargo_e.to_str().unwrap(),
        "--format",
        "e",
    ]);
    run(&[
        "--graph",
        "cargo",
        "session",
        "set",
        "--session",
        "s1",
        "--select",
        "ManageFleet.UC.001",
    ]);
    std::fs::create_dir_all(d.path().join("vault")).unwrap();
    common::copy_dir(&common::fixture("canvas/seed"), &d.path().join("vault"));
    (d, ws)
}

#[test]
fn capture_tool_answers_within_max_tokens() {
    let (_d, ws) = with_graphs();
    let full = call(
        &ws,
        "capture",
        json!({"graph": "cargo", "session": "s1", "mode": "full"}),
    );
    assert!(!full.is_error, "{}", full.text);
    assert!(
        full.text
            .contains("CargoManagement|SYS|CargoManagement.SY.001"),
        "{}",
        full.text
    );
    let n_full = tokens(&full.text);
    // A bound below the full capture keeps the most relevant nodes that fit.
    let max = n_full / 2;
    let cut = call(
        &ws,
        "capture",
        json!({"graph": "cargo", "session": "s1", "max_tokens": max}),
    );
    assert!(!cut.is_error, "{}", cut.text);
    assert!(tokens(&cut.text) <= max);
    assert!(cut.text.lines().count() < full.text.lines().count());
    let minimal = call(
        &ws,
        "capture",
        json!({"graph": "cargo", "session": "s1", "mode": "minimal"}),
    );
    assert!(!minimal.is_error && tokens(&minimal.text) < n_full);
    assert_eq!(
        err_json(&call(
            &ws,
            "capture",
            json!({"graph": "cargo", "session": "nope"})
        ))["error"],
        "session_not_found"
    );
    assert_eq!(
        err_json(&call(
            &ws,
            "capture",
            json!({"graph": "cargo", "session": "s1", "mode": "all"})
        ))["error"],
        "invalid_arguments"
    );
    assert_eq!(
        err_json(&call(
            &ws,
            "capture",
            json!({"graph": "cargo", "session": "s1", "max_nodes": 0})
        ))["error"],
        "invalid_arguments"
    );
}

#[test]
fn apply_operations_tool_is_all_or_nothing() {
    let (_d, ws) = with_graphs();
    let seed: Value = serde_json::from_str(
        &std::fs::read_to_string(common::fixture("operations/seed_11.json")).unwrap(),
    )
    .unwrap();
    let r = ok_json(&call(
        &ws,
        "apply_operations",
        json!({"graph": "orders", "response": seed}),
    ));
    let created = r["summary"]["created"].as_array().unwrap();
    assert!(!created.is_empty(), "{r}");
    assert!(!r["updates"].as_array().unwrap().is_empty());
    // The graph now holds what was created: a second response may refer to it.
    let sid = created[0]["semanticId"]
        .as_str()
        .or(created[0]["semantic_id"].as_str())
        .unwrap()
        .to_string();
    let follow = json!({"operations": [
        {"id": "op-1", "type": "update", "semanticId": sid, "data": {"Descr": "changed"}, "dependsOn": []}
    ]});
    let r2 = call(
        &ws,
        "apply_operations",
        json!({"graph": "orders", "response": follow.to_string()}),
    );
    assert!(!r2.is_error, "{}", r2.text);
    // A response with a missing dependency changes nothing and says why.
    let bad = json!({"operations": [
        {"id": "op-1", "type": "create-relationship", "sourceTempId": "temp-x", "targetTempId": "temp-y",
         "relationType": "compose", "dependsOn": ["op-9"]}
    ]});
    let before = ws.store().dump("node").unwrap().len();
    let e = err_json(&call(
        &ws,
        "apply_operations",
        json!({"graph": "orders", "response": bad}),
    ));
    assert!(e["error"].is_string() && e["message"].is_string(), "{e}");
    assert_eq!(ws.store().dump("node").unwrap().len(), before);
    let e = err_json(&call(
        &ws,
        "apply_operations",
        json!({"graph": "orders", "response": "not json"}),
    ));
    assert!(e["error"].is_string(), "{e}");
    assert_eq!(
        err_json(&call(
            &ws,
            "apply_operations",
            json!({"graph": "orders", "response": 5})
        ))["error"],
        "invalid_arguments"
    );
}

#[test]
fn canvas_context_tool_walks_up_from_a_node() {
    let (_d, ws) = with_graphs();
    let canvas = "vault/conversations/ml.canvas";
    let r = ok_json(&call(
        &ws,
        "canvas_context",
        json!({"canvas": canvas, "node": "i-supervised-answer", "vault": "vault"}),
    ));
    let msgs = r["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "system", "{r}");
    assert_eq!(r["target"], "i-supervised-answer");
    assert!(msgs.len() >= 3);
    // Bounded: fewer messages, the target's last message kept.
    let full_tokens = tokens(&r.to_string());
    let max = (full_tokens / 2).max(64);
    let cut = call(
        &ws,
        "canvas_context",
        json!({"canvas": canvas, "node": "i-supervised-answer", "vault": "vault", "max_tokens": max}),
    );
    assert!(tokens(&cut.text) <= max, "{}", cut.text);
    if !cut.is_error {
        let v: Value = serde_json::from_str(&cut.text).unwrap();
        assert_eq!(v["messages"].as_array().unwrap().last(), msgs.last());
    }
    assert_eq!(
        err_json(&call(
            &ws,
            "canvas_context",
            json!({"canvas": canvas, "node": "zzz"})
        ))["error"],
        "node_not_found"
    );
    assert_eq!(
        err_json(&call(
            &ws,
            "canvas_context",
            json!({"canvas": "/etc/passwd", "node": "a"})
        ))["error"],
        "invalid_arguments"
    );
    assert_eq!(
        err_json(&call(
            &ws,
            "canvas_context",
            json!({"canvas": "vault/none.canvas", "node": "a"})
        ))["error"],
        "canvas_not_found"
    );
}

/// The official MCP Python SDK lists the tools and calls each one against
/// the binary over stdio.
#[test]
fn python_sdk_client_lists_and_calls_every_tool() {
    if !common::mcp_client::sdk_available() {
        return;
    }
    // Shapes, an ontology graph with a session, a canvas vault; the server
    // shares the database with this process.
    let (dir, ws) = with_graphs();
    drop(ws);
    let seed: Value = serde_json::from_str(
        &std::fs::read_to_string(common::fixture("operations/seed_11.json")).unwrap(),
    )
    .unwrap();
    let calls = json!([
        {"tool": "search_entities", "arguments": {"query": "origin"}},
        {"tool": "context", "arguments": {"key": ORIGIN, "hops": 1, "max_tokens": 1500}},
        {"tool": "blast_radius", "arguments": {"key": ORIGIN}},
        {"tool": "callers", "arguments": {"key": ORIGIN}},
        {"tool": "callees", "arguments": {"key": "src/geometry/mod.rs-geometry-Rect::new"}},
        {"tool": "cycles", "arguments": {}},
        {"tool": "callers", "arguments": {"key": "no-such-key"}},
        {"tool": "capture", "arguments": {"graph": "cargo", "session": "s1", "mode": "selected"}},
        {"tool": "apply_operations", "arguments": {"graph": "orders", "response": seed}},
        {"tool": "canvas_context", "arguments": {"canvas": "vault/conversations/ml.canvas", "node": "i-supervised-answer", "vault": "vault"}},
    ]);
    let session = common::mcp_client::run(dir.path(), &calls);
    let r = &session.0;
    assert_eq!(r["server"], "graphctx");
    let listed: Vec<&str> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let registry: Vec<&str> = graphctx::serve::registry::all()
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, registry);
    for t in r["tools"].as_array().unwrap() {
        assert_eq!(t["inputSchema"]["type"], "object");
    }
    let c = r["calls"].as_array().unwrap();
    assert_eq!(c.len(), 10);
    for call in &c[7..] {
        assert_eq!(call["is_error"], false, "{call}");
    }
    assert!(c[7]["text"].as_str().unwrap().contains("ManageFleet"));
    let applied: Value = serde_json::from_str(c[8]["text"].as_str().unwrap()).unwrap();
    assert!(!applied["summary"]["created"].as_array().unwrap().is_empty());
    let walked: Value = serde_json::from_str(c[9]["text"].as_str().unwrap()).unwrap();
    assert_eq!(walked["messages"][0]["role"], "system");
    for call in &c[..6] {
        assert_eq!(call["is_error"], false, "{call}");
    }
    let found: Value = serde_json::from_str(c[0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(found["results"][0]["key"], ORIGIN);
    let doc = c[1]["text"].as_str().unwrap();
    assert!(
        doc.starts_with("# graphctx context · Format E") && tokens(doc) <= 1500,
        "{doc}"
    );
    let callers: Value = serde_json::from_str(c[3]["text"].as_str().unwrap()).unwrap();
    assert!(callers["callers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["key"] == "src/geometry/mod.rs-geometry-Rect::new"));
    assert_eq!(c[6]["is_error"], true);
    let e: Value = serde_json::from_str(c[6]["text"].as_str().unwrap()).unwrap();
    assert_eq!(e["error"], "entity_not_found");
    assert!(
        r["unknown_tool_error"]
            .as_str()
            .unwrap_or_default()
            .contains("unknown tool"),
        "{r}"
    );
}

const BRAND_NEW: &str = "\n/// Added after indexing.\npub fn brand_new(x: u8) -> u8 {\n    x\n}\n";

/// Tools answer from the files on disk: an edit made just before a call is
/// in the answer, and while another process holds the write lock answers
/// name the files they cannot reflect.
#[test]
fn tools_answer_from_the_files_on_disk() {
    let (dir, ws) = shapes();
    let util = dir.path().join("src/util.rs");
    let original = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, format!("{original}{BRAND_NEW}")).unwrap();
    let r = call(&ws, "context", json!({"name": "brand_new"}));
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains("brand_new|fn|src/util.rs-util-brand_new|"),
        "{}",
        r.text
    );
    let found = ok_json(&call(&ws, "search_entities", json!({"query": "brand_new"})));
    assert_eq!(found["results"][0]["key"], "src/util.rs-util-brand_new");
    assert!(found.get("stale_files").is_none());

    let location = graphctx::store::Location::default_for(&dir.path().canonicalize().unwrap());
    let lock = graphctx::store::lock::WriteLock::acquire(&location).unwrap();
    std::fs::write(&util, &original).unwrap();
    let callers = ok_json(&call(
        &ws,
        "callers",
        json!({"key": "src/util.rs-util-clamp_scale"}),
    ));
    assert_eq!(callers["stale_files"], json!(["src/util.rs"]));
    let r = call(
        &ws,
        "context",
        json!({"key": "src/util.rs-util-clamp_scale"}),
    );
    assert!(r.text.contains("\n# stale: src/util.rs ("), "{}", r.text);
    drop(lock);
    let found = ok_json(&call(&ws, "search_entities", json!({"query": "brand_new"})));
    assert_eq!(found["matched"], 0, "{found}");
}

/// Text searches hold the posting lists they read between answers; an
/// edit on disk is in the next answer, and the server's run before it
/// lets go of the lists it rewrote only.
#[test]
fn text_search_follows_edits_while_the_server_holds_lists() {
    let (dir, ws) = shapes();
    let query = || json!({"query": "zorblax quuxification"});
    let hits = |r: &Value| r["results"].as_array().unwrap().len();
    assert_eq!(hits(&ok_json(&call(&ws, "search_entities", query()))), 0);
    ok_json(&call(
        &ws,
        "search_entities",
        json!({"query": "scale a rectangle by a factor"}),
    ));
    let (held, _) = ws.held_lists().size();
    assert!(held > 0);

    let render = dir.path().join("src/render.rs");
    let original = std::fs::read_to_string(&render).unwrap();
    let edited = original.replacen("{\n", "{\n    // zorblax quuxification\n", 1);
    std::fs::write(&render, &edited).unwrap();
    let found = ok_json(&call(&ws, "search_entities", query()));
    assert_eq!(found["results"][0]["file"], "src/render.rs", "{found}");
    // The two words' lists were read again; the others stayed held.
    assert_eq!(ws.held_lists().size().0, held);

    std::fs::write(&render, &original).unwrap();
    assert_eq!(hits(&ok_json(&call(&ws, "search_entities", query()))), 0);
}

/// The same over the protocol: `graphctx mcp --no-watch` on stdio, a file
/// edited after the session started, then asked about at once.
#[test]
fn the_stdio_server_answers_from_the_files_on_disk() {
    use std::io::{BufRead, BufReader, Write};
    let (dir, ws) = shapes();
    drop(ws);
    let mut child = Command::new(BIN)
        .args(["mcp", "--no-watch", "--root"])
        .arg(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    let mut reply = |id: i64| -> Value {
        loop {
            let line = lines.next().expect("server answers").unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "graphctx-test", "version": "0"}}}),
    );
    assert!(reply(1)["result"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let util = dir.path().join("src/util.rs");
    let original = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, format!("{original}{BRAND_NEW}")).unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "context", "arguments": {"name": "brand_new", "hops": 1}}}),
    );
    let r = reply(2);
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.contains("brand_new|fn|src/util.rs-util-brand_new|src/util.rs:"),
        "{r}"
    );
    let _ = child.kill();
    let _ = child.wait();
}
