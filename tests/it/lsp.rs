//! `graphctx lsp`: the handlers in-process, the protocol over stdio, and a
//! real editor (headless Neovim) driving the binary.

use crate::common;

use common::lsp_rpc::Rpc;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use graphctx::analyse::select::BaseSpec;
use graphctx::emit::Format;
use graphctx::graph::{self, Direction};
use graphctx::serve::nav::Span;
use graphctx::serve::watch::{Delays, Refresher, Trigger};
use graphctx::serve::{Refresh, ServeError, Workspace};
use graphctx::store::lock::WriteLock;

const POINT: &str = "src/geometry/point.rs";
const BIN: &str = env!("CARGO_BIN_EXE_graphctx");

/// A fresh copy of the shapes fixture, indexed into its own `.graphctx/`.
fn shapes() -> (tempfile::TempDir, Arc<Workspace>) {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let ws = Workspace::open(dir.path(), None, "code").unwrap();
    match ws.refresh(true).unwrap() {
        Refresh::Done(s) => assert!(s.entities > 0),
        Refresh::Busy(m) => panic!("fresh index busy: {m}"),
    }
    (dir, ws)
}

/// 0-based (line, UTF-16 column) of the first `needle` in `rel`, plus `offset` chars.
fn position_of(root: &Path, rel: &str, needle: &str, offset: u32) -> (u32, u32) {
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = l.find(needle) {
            return (i as u32, l[..c].encode_utf16().count() as u32 + offset);
        }
    }
    panic!("{needle} not in {rel}");
}

/// The text a span covers (single-line spans).
fn text_at(root: &Path, s: &Span) -> String {
    let text = std::fs::read_to_string(root.join(&s.file)).unwrap();
    let line = text.lines().nth(s.start_line as usize).unwrap();
    let units: Vec<u16> = line.encode_utf16().collect();
    String::from_utf16(&units[s.start_col as usize..s.end_col as usize]).unwrap()
}

fn origin_key(ws: &Workspace) -> String {
    let (line, col) = position_of(ws.root(), POINT, "fn origin", 3);
    let defs = ws.definition(POINT, line, col, None).unwrap();
    assert_eq!(defs.len(), 1, "{defs:?}");
    assert_eq!(defs[0].name, "origin");
    defs[0].key.clone()
}

#[test]
fn definition_from_a_declaration_and_from_a_call_site() {
    let (_d, ws) = shapes();
    let key = origin_key(&ws);
    assert!(key.starts_with("src/geometry/point.rs-") && key.ends_with("Point::origin"));
    // `Point::origin()` inside Rect::new resolves through the stored edge.
    let (line, col) = position_of(ws.root(), "src/geometry/mod.rs", "Point::origin()", 8);
    let defs = ws
        .definition("src/geometry/mod.rs", line, col, None)
        .unwrap();
    assert_eq!(
        defs.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
        vec![key.as_str()]
    );
    // The declaration span covers the name.
    let span = ws.declaration_span(&defs[0]);
    assert_eq!(text_at(ws.root(), &span), "origin");
    // Whitespace has no definition.
    assert!(ws
        .definition(POINT, 0, 0, Some("   \n"))
        .unwrap()
        .is_empty());
}

#[test]
fn references_point_at_the_name_in_every_caller() {
    let (_d, ws) = shapes();
    let key = origin_key(&ws);
    let refs = ws.references(&key, false).unwrap();
    // Every caller recorded in the graph has at least one reference span.
    let callers: Vec<String> = graph::edges_of(ws.store(), "code", &key, Direction::In)
        .unwrap()
        .into_iter()
        .filter(|e| e.rel != "contains")
        .map(|e| e.src)
        .collect();
    assert!(!callers.is_empty());
    for c in &callers {
        let e = ws.entity(c).unwrap().unwrap();
        assert!(
            refs.iter().any(|s| s.file == e.file
                && (s.start_line as i64) + 1 >= e.start_line
                && (s.start_line as i64) < e.end_line),
            "no reference inside caller {c}: {refs:?}"
        );
    }
    for s in &refs {
        assert_eq!(text_at(ws.root(), s), "origin", "{s:?}");
    }
    assert!(refs.iter().any(|s| s.file == "src/geometry/mod.rs"));
    // With the declaration: one more span, at the declaration.
    let with_decl = ws.references(&key, true).unwrap();
    assert_eq!(with_decl.len(), refs.len() + 1);
}

#[test]
fn hover_has_signature_doc_and_blast_summary() {
    let (_d, ws) = shapes();
    let (line, col) = position_of(ws.root(), "src/geometry/mod.rs", "pub fn new(width", 7);
    let defs = ws
        .definition("src/geometry/mod.rs", line, col, None)
        .unwrap();
    let h = ws.hover(&defs[0].key).unwrap().unwrap();
    assert!(
        h.signature.contains("fn new(width: f64, height: f64)"),
        "{}",
        h.signature
    );
    assert_eq!(h.doc, "A rectangle at the origin.");
    // The count is the set of entities reaching it within 2 hops against
    // edges other than `contains`, computed here independently.
    let mut level: Vec<String> = vec![defs[0].key.clone()];
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..2 {
        let mut next = Vec::new();
        for k in &level {
            for e in graph::edges_of(ws.store(), "code", k, Direction::In).unwrap() {
                if e.rel != "contains" && e.src != defs[0].key && seen.insert(e.src.clone()) {
                    next.push(e.src);
                }
            }
        }
        level = next;
    }
    let files: std::collections::BTreeSet<String> = seen
        .iter()
        .map(|k| ws.entity(k).unwrap().unwrap().file)
        .collect();
    assert!(h.dependents > 0);
    assert_eq!((h.dependents, h.dependent_files), (seen.len(), files.len()));
    let md = h.markdown();
    assert!(md.starts_with("```rust\n"));
    assert!(md.contains(&format!(
        "{} dependent{} within 2 hops, in {} file",
        seen.len(),
        if seen.len() == 1 { "" } else { "s" },
        files.len()
    )));
}

#[test]
fn symbols_call_hierarchy_and_context() {
    let (_d, ws) = shapes();
    let key = origin_key(&ws);
    let in_file: Vec<String> = ws
        .entities_in_file(POINT)
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    for n in ["Point", "origin", "distance", "ORIGIN_X"] {
        assert!(in_file.iter().any(|x| x == n), "{n} missing: {in_file:?}");
    }
    let found = ws.workspace_symbols("orgn", 10).unwrap();
    assert_eq!(found[0].name, "origin", "{found:?}");
    assert!(found.iter().all(|e| e.name.to_lowercase().contains('o')));
    assert_eq!(ws.workspace_symbols("Rect", 10).unwrap()[0].name, "Rect");

    let incoming = ws.incoming_calls(&key).unwrap();
    let new = incoming
        .iter()
        .find(|c| c.entity.name == "new" && c.entity.file == "src/geometry/mod.rs")
        .expect("Rect::new calls Point::origin");
    for r in &new.ranges {
        assert_eq!(text_at(ws.root(), r), "origin");
    }
    let outgoing = ws.outgoing_calls(&new.entity.key).unwrap();
    assert!(outgoing.iter().any(|c| c.entity.key == key));

    let out = ws
        .context(BaseSpec::Keys(vec![key.clone()]), 1, 2000, Format::E)
        .unwrap();
    assert!(
        out.text.starts_with("# graphctx context · Format E"),
        "{}",
        out.text
    );
    assert!(out.text.contains(&key));
    assert!(out.token_count <= 2000);
    match ws.context(BaseSpec::Keys(vec!["nope".into()]), 1, 2000, Format::Json) {
        Err(ServeError::Context(e)) => assert_eq!(e.to_json()["error"], "entity_not_found"),
        other => panic!("{:?}", other.map(|o| o.text)),
    }
}

#[test]
fn files_outside_the_workspace_are_refused() {
    let (d, ws) = shapes();
    assert_eq!(ws.relative(&d.path().join(POINT)).unwrap(), POINT);
    for p in [
        PathBuf::from("/etc/hostname"),
        d.path().join("../x.rs"),
        d.path().join("src/../../x.rs"),
    ] {
        assert!(
            matches!(ws.relative(&p), Err(ServeError::OutsideWorkspace { .. })),
            "{} accepted",
            p.display()
        );
    }
    #[cfg(unix)]
    {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.rs"), "fn s() {}").unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("src/link")).unwrap();
        assert!(matches!(
            ws.relative(&d.path().join("src/link/secret.rs")),
            Err(ServeError::OutsideWorkspace { .. })
        ));
    }
}

#[test]
fn edits_and_deletions_are_picked_up_by_refresh() {
    let (d, ws) = shapes();
    let key = origin_key(&ws);
    let before = ws.references(&key, false).unwrap().len();
    let mut text = std::fs::read_to_string(d.path().join(POINT)).unwrap();
    text.push_str("\npub fn fresh_caller() -> Point {\n    Point::origin()\n}\n");
    std::fs::write(d.path().join(POINT), &text).unwrap();
    assert!(matches!(ws.refresh(false).unwrap(), Refresh::Done(_)));
    let after = ws.references(&key, false).unwrap();
    assert_eq!(after.len(), before + 1, "{after:?}");

    // A file deleted under the server: its entities go, questions about it
    // answer nothing instead of failing.
    let render_entities = ws.entities_in_file("src/render.rs").unwrap();
    assert!(!render_entities.is_empty());
    std::fs::remove_file(d.path().join("src/render.rs")).unwrap();
    assert!(ws.definition("src/render.rs", 3, 4, None).unwrap().len() <= render_entities.len());
    assert!(matches!(ws.refresh(false).unwrap(), Refresh::Done(_)));
    assert!(ws.entities_in_file("src/render.rs").unwrap().is_empty());
    assert!(ws
        .definition("src/render.rs", 3, 4, None)
        .unwrap()
        .is_empty());
    assert!(ws.hover(&render_entities[0].key).unwrap().is_none());
    assert!(ws
        .references(&render_entities[0].key, true)
        .unwrap()
        .is_empty());
}

/// A server lists a file's entities from the interfaces it holds, not by
/// joining rows: they are the store's rows, in the store's order, after
/// every kind of edit; once another process wrote the index they are not
/// used until the server's next run.
#[test]
fn a_file_s_entities_as_the_server_holds_them_are_the_store_s() {
    let (d, ws) = shapes();
    let files = [
        "src/lib.rs",
        "src/render.rs",
        "src/util.rs",
        "src/geometry/mod.rs",
        POINT,
        "src/extra.rs",
    ];
    let same_as_stored = |ws: &Workspace| {
        for f in files {
            assert_eq!(
                ws.entities_in_file(f).unwrap(),
                ws.stored_entities_in_file(f).unwrap(),
                "{f}"
            );
        }
        assert!(ws.held_entities_of(POINT).unwrap().is_some());
    };
    same_as_stored(&ws);
    let edit = |rel: &str, f: &dyn Fn(String) -> String| {
        let path = d.path().join(rel);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::write(&path, f(text)).unwrap();
        assert!(matches!(ws.refresh(false).unwrap(), Refresh::Done(_)));
    };
    // Every entity's lines move.
    edit(POINT, &|t| format!("// moved\n\n{t}"));
    same_as_stored(&ws);
    // An entity appears, one goes, a doc comment changes.
    edit("src/util.rs", &|t| {
        let t = t.replace("pub static MAX_SCALE: f64 = 100.0;", "");
        let t = t.replace("/// Keep scale factors", "/// Keep the scale factors");
        format!("{t}\npub const MAX_SCALE: f64 = 100.0;\npub fn added_here() {{}}\n")
    });
    same_as_stored(&ws);
    // A new file, and a module declaration for it.
    edit("src/extra.rs", &|_| {
        "pub struct Extra;\nimpl Extra {\n    pub fn new() -> Extra { Extra }\n}\n".into()
    });
    edit("src/lib.rs", &|t| format!("{t}\npub mod extra;\n"));
    same_as_stored(&ws);
    assert!(!ws.entities_in_file("src/extra.rs").unwrap().is_empty());
    // Another writer: what the server holds is not the store's now.
    std::fs::write(d.path().join("src/extra.rs"), "pub struct Other;\n").unwrap();
    let out = Command::new(BIN)
        .args(["index"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ws.held_entities_of("src/extra.rs").unwrap().is_none());
    let listed = ws.entities_in_file("src/extra.rs").unwrap();
    assert!(listed.iter().any(|e| e.name == "Other"), "{listed:?}");
    // The server's next run finds the index current and holds nothing
    // new; warming reads what it holds from the store.
    assert!(matches!(ws.refresh(false).unwrap(), Refresh::Done(_)));
    assert!(ws.held_entities_of("src/extra.rs").unwrap().is_none());
    ws.warm().unwrap();
    same_as_stored(&ws);
}

/// A file the editor opened keeps its syntax tree in the server, updated
/// by each run that parses it again, until the editor closes it.
#[test]
fn a_file_open_in_the_editor_keeps_its_tree_until_closed() {
    let (d, ws) = shapes();
    ws.hold_tree(POINT);
    ws.hold_tree("Cargo.toml");
    assert!(ws.holds_tree(POINT));
    assert!(!ws.holds_tree("Cargo.toml"));
    let path = d.path().join(POINT);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        format!("// moved\n{text}\npub fn opened_and_saved() {{}}\n"),
    )
    .unwrap();
    assert!(matches!(ws.refresh(false).unwrap(), Refresh::Done(_)));
    assert!(ws.holds_tree(POINT));
    let listed = ws.entities_in_file(POINT).unwrap();
    assert!(
        listed.iter().any(|e| e.name == "opened_and_saved"),
        "{listed:?}"
    );
    assert_eq!(listed, ws.stored_entities_in_file(POINT).unwrap());
    ws.release_tree(POINT);
    assert!(!ws.holds_tree(POINT));
}

/// One writer at a time: while another holder has the write lock, a
/// server's refresh reports busy and answers go on from the committed
/// state; a CLI `index --no-wait` fails with "index busy"; once the lock is
/// free the refresher's retry lands.
#[test]
fn a_second_writer_gets_index_busy_and_readers_go_on() {
    let (d, ws) = shapes();
    let key = origin_key(&ws);
    let location = ws.store().location().clone();
    let lock = WriteLock::acquire(&location).unwrap();
    match ws.refresh(false).unwrap() {
        Refresh::Busy(m) => assert!(m.contains("index busy"), "{m}"),
        Refresh::Done(_) => panic!("refresh ran while another writer held the lock"),
    }
    assert!(!ws.references(&key, false).unwrap().is_empty());
    let out = Command::new(BIN)
        .args(["index", "--no-wait"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("index busy"));

    // The refresher retries until the lock is free.
    std::fs::write(
        d.path().join("src/extra.rs"),
        "pub fn extra() -> crate::geometry::point::Point { crate::geometry::point::Point::origin() }\n",
    )
    .unwrap();
    let runs = ws.runs();
    let refresher = Refresher::start(ws.clone(), Delays::default(), None);
    refresher.trigger(Trigger::Save);
    std::thread::sleep(Duration::from_millis(300));
    drop(lock);
    assert!(ws.wait_runs_after(runs, Duration::from_secs(120)));
    assert!(!ws.entities_in_file("src/extra.rs").unwrap().is_empty());
}

/// Files changed on disk by someone else (a `git checkout`, another
/// editor) reach the index through the watcher, in new directories too.
#[test]
fn the_watcher_picks_up_changes_made_outside_the_editor() {
    let (d, ws) = shapes();
    let refresher = Refresher::start(ws.clone(), Delays::default(), None);
    let _watch = graphctx::serve::watch::watch_workspace(&ws, refresher).unwrap();
    let runs = ws.runs();
    std::fs::create_dir_all(d.path().join("src/fresh")).unwrap();
    // Let the watcher see the new directory before a file lands in it.
    assert!(ws.wait_runs_after(runs, Duration::from_secs(120)));
    std::fs::write(
        d.path().join("src/fresh/mod.rs"),
        "pub fn watched_fn() {}\n",
    )
    .unwrap();
    std::fs::write(d.path().join("src/fresh.rs"), "pub fn watched_too() {}\n").unwrap();
    let mut found = false;
    for _ in 0..600 {
        let runs = ws.runs();
        found = ws
            .workspace_symbols("watched_fn", 5)
            .unwrap()
            .iter()
            .any(|e| e.name == "watched_fn")
            && ws
                .workspace_symbols("watched_too", 5)
                .unwrap()
                .iter()
                .any(|e| e.name == "watched_too");
        if found {
            break;
        }
        ws.wait_runs_after(runs, Duration::from_millis(200));
    }
    assert!(found, "the watcher did not bring the new files in");
    // Changes inside `.graphctx/` and `target/` are not watched events.
    use graphctx::serve::watch::relevant;
    assert!(!relevant(ws.root(), &ws.root().join(".graphctx/graph.db")));
    assert!(!relevant(ws.root(), &ws.root().join("target/debug/x.rs")));
    assert!(relevant(ws.root(), &ws.root().join("src/lib.rs")));
}

/// Under a file watch, an answer over a tree nobody touched runs no index
/// run; an edit made right before an answer is in it all the same (the
/// answer waits for the watch to catch up with it, not for a timer).
#[test]
fn a_watched_quiet_tree_answers_without_a_run_and_misses_no_edit() {
    let (d, ws) = shapes();
    // The refresher never runs here: only answers bring the index current.
    let never = Duration::from_secs(3600);
    let delays = Delays {
        save: never,
        file_event: never,
        edit: never,
    };
    let refresher = Refresher::start(ws.clone(), delays, None);
    let _watch = graphctx::serve::watch::watch_workspace(&ws, refresher).unwrap();
    // The first answer under the watch runs: what came before is unknown.
    let runs = ws.runs();
    assert!(ws.ensure_current().unwrap().is_empty());
    assert_eq!(ws.runs(), runs + 1);
    for _ in 0..5 {
        assert!(ws.ensure_current().unwrap().is_empty());
        ws.context(BaseSpec::Keys(vec![origin_key(&ws)]), 1, 2000, Format::E)
            .unwrap();
    }
    assert_eq!(ws.runs(), runs + 1, "a quiet tree took an index run");
    for i in 0..10 {
        let name = format!("edited_just_before_{i}");
        std::fs::write(
            d.path().join("src/extra.rs"),
            format!("pub fn {name}() {{}}\n"),
        )
        .unwrap();
        assert!(ws.ensure_current().unwrap().is_empty());
        let found = ws.workspace_symbols(&name, 5).unwrap();
        assert!(found.iter().any(|e| e.name == name), "{name} not indexed");
    }
}

// ---------------------------------------------------------------------------
// The protocol over stdio, with the JSON-RPC client of tests/it/common.

fn file_uri(p: &Path) -> String {
    format!("file://{}", p.canonicalize().unwrap().display())
}

#[test]
fn stdio_survives_bad_input_and_exits_on_exit() {
    let (d, _ws) = shapes();
    let mut rpc = Rpc::start(d.path());
    // Malformed JSON: a parse error, and the server keeps serving.
    rpc.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 99, \"method\": ");
    let err = rpc.response_to(Value::Null);
    assert_eq!(err["error"]["code"], -32700, "{err}");
    // JSON that is not a JSON-RPC message: invalid request.
    rpc.send_raw("{\"jsonrpc\": \"2.0\", \"id\": 7, \"params\": 1}");
    let err = rpc.response_to(json!(7));
    assert_eq!(err["error"]["code"], -32600, "{err}");
    rpc.send_raw("[1, 2]");
    let err = rpc.response_to(Value::Null);
    assert_eq!(err["error"]["code"], -32600, "{err}");
    let init = rpc.request(
        "initialize",
        json!({"processId": null, "rootUri": file_uri(d.path()), "capabilities": {}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "graphctx", "{init}");
    assert_eq!(init["result"]["capabilities"]["referencesProvider"], true);
    rpc.notify("initialized", json!({}));
    let unknown = rpc.request("graphctx/unknown", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let outside = rpc.request(
        "textDocument/references",
        json!({"textDocument": {"uri": "file:///etc/hostname"}, "position": {"line": 0, "character": 0},
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(outside["error"]["code"], -32602, "{outside}");
    assert!(outside["error"]["message"]
        .as_str()
        .unwrap()
        .contains("outside the workspace"));
    // A request with params of the wrong shape is an error, not a crash.
    let bad = rpc.request("textDocument/hover", json!({"textDocument": 5}));
    assert!(bad.get("error").is_some(), "{bad}");
    let (line, col) = position_of(d.path(), POINT, "fn origin", 3);
    let hover = rpc.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": file_uri(&d.path().join(POINT))}, "position": {"line": line, "character": col}}),
    );
    let text = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("fn origin() -> Point"), "{hover}");
    assert!(text.contains("within 2 hops, in "), "{hover}");
    // A file deleted under the server.
    std::fs::remove_file(d.path().join("src/util.rs")).unwrap();
    let gone = rpc.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": file_uri(d.path()).to_string() + "/src/util.rs"}}),
    );
    assert!(gone.get("result").is_some(), "{gone}");

    let down = rpc.request("shutdown", Value::Null);
    assert!(down.get("error").is_none(), "{down}");
    rpc.notify("exit", Value::Null);
    // stdin stays open: the process must end on `exit` alone.
    let status = wait_exit(&mut rpc.child, Duration::from_secs(30));
    assert!(status.is_some(), "graphctx lsp still running after exit");
}

/// Answers about the code reflect an edit made on disk just before the
/// request: the server brings the index current first. No save or change
/// is notified and the watch is off, so only that step can find it.
#[test]
fn lsp_answers_reflect_an_edit_made_just_before_the_request() {
    let (d, ws) = shapes();
    drop(ws);
    let mut rpc = Rpc::start(d.path());
    rpc.request(
        "initialize",
        json!({"processId": null, "rootUri": file_uri(d.path()), "capabilities": {}}),
    );
    rpc.notify("initialized", json!({}));
    let util = file_uri(&d.path().join("src/util.rs"));
    let symbols = |rpc: &mut Rpc| {
        let r = rpc.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": util}}),
        );
        let list: Vec<Value> = serde_json::from_value(r["result"].clone()).unwrap();
        flatten_names(&list)
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let (line, col) = position_of(d.path(), POINT, "fn origin", 3);
    let at_origin = json!({"textDocument": {"uri": file_uri(&d.path().join(POINT))},
                           "position": {"line": line, "character": col},
                           "context": {"includeDeclaration": false}});
    let callers = |rpc: &mut Rpc| {
        let r = rpc.request("textDocument/references", at_origin.clone());
        r["result"].as_array().map_or(0, Vec::len)
    };
    assert!(!symbols(&mut rpc).iter().any(|n| n == "fresh_caller"));
    let before = callers(&mut rpc);

    let path = d.path().join("src/util.rs");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(FRESH_CALLER);
    std::fs::write(&path, &text).unwrap();
    assert!(symbols(&mut rpc).iter().any(|n| n == "fresh_caller"));
    assert_eq!(callers(&mut rpc), before + 1);
    // Going to the definition from the new call site.
    let (line, col) = position_of(d.path(), "src/util.rs", "Point::origin()", 8);
    let def = rpc.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": util}, "position": {"line": line, "character": col}}),
    );
    assert!(
        def["result"]["uri"]
            .as_str()
            .unwrap_or_default()
            .ends_with(POINT),
        "{def}"
    );

    rpc.request("shutdown", Value::Null);
    rpc.notify("exit", Value::Null);
    assert!(wait_exit(&mut rpc.child, Duration::from_secs(30)).is_some());
}

fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let step = Duration::from_millis(20);
    let mut waited = Duration::ZERO;
    while waited < limit {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(step);
        waited += step;
    }
    let _ = child.kill();
    None
}

// ---------------------------------------------------------------------------
// A real editor: headless Neovim.

#[test]
fn neovim_drives_the_server() {
    let nvim_ok = Command::new("nvim")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !nvim_ok && common::client_missing("nvim", "scripts/install-test-clients.sh") {
        return;
    }
    let (d, ws) = shapes();
    let key = origin_key(&ws);
    drop(ws);
    let (line, col) = position_of(d.path(), POINT, "fn origin", 3);
    let out = d.path().join("nvim-results.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/lsp_client.lua");
    let status = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("GRAPHCTX_BIN", BIN)
        .env("GRAPHCTX_ROOT", d.path().canonicalize().unwrap())
        .env("GRAPHCTX_FILE", POINT)
        .env("GRAPHCTX_LINE", line.to_string())
        .env("GRAPHCTX_COL", col.to_string())
        .env(
            "GRAPHCTX_APPEND",
            "pub fn saved_caller() -> Point { Point::origin() }",
        )
        .env("GRAPHCTX_OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(r.get("lua_error").is_none(), "{}", r["lua_error"]);
    assert_eq!(
        r["steps"],
        json!(["initialized", "requests", "saved", "stopped"]),
        "{r}"
    );

    let hover = r["hover"]["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(hover.contains("pub fn origin() -> Point"), "{hover}");
    assert!(hover.contains(" within 2 hops, in "), "{hover}");
    assert!(hover.contains(&key));

    let refs = r["references"]["result"].as_array().expect("references");
    assert!(refs
        .iter()
        .any(|l| l["uri"].as_str().unwrap().ends_with("src/geometry/mod.rs")));
    let saved = r["references_after_save"].as_u64().unwrap();
    assert_eq!(saved as usize, refs.len() + 1, "the saved caller shows up");

    assert!(r["definition"]["result"]["uri"]
        .as_str()
        .unwrap()
        .ends_with(POINT));
    let syms = r["document_symbol"]["result"].as_array().unwrap();
    let names: Vec<&str> = flatten_names(syms);
    assert!(
        names.contains(&"origin") && names.contains(&"Point"),
        "{names:?}"
    );
    assert_eq!(r["workspace_symbol"]["result"][0]["name"], "origin");

    let ctx = &r["context"]["result"];
    assert_eq!(ctx["key"], key.as_str());
    assert!(ctx["token_count"].as_u64().unwrap() <= 2000);
    assert!(ctx["document"]
        .as_str()
        .unwrap()
        .starts_with("# graphctx context · Format E"));
    assert_eq!(
        r["context_by_key"]["error"]["data"]["error"], "entity_not_found",
        "{r}"
    );
    assert!(r["outside"]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("outside the workspace"));
    assert_eq!(r["unknown_method"]["error"]["code"], -32601);
    let incoming = r["incoming_calls"]["result"].as_array().unwrap();
    assert!(incoming.iter().any(|c| c["from"]["name"] == "new"));
    let progress: Vec<&str> = r["progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(progress.first(), Some(&"begin"), "{progress:?}");
    assert_eq!(progress.last(), Some(&"end"), "{progress:?}");
    assert_eq!(r["exit_code"], 0, "{r}");
}

fn flatten_names(syms: &[Value]) -> Vec<&str> {
    let mut out = Vec::new();
    for s in syms {
        out.push(s["name"].as_str().unwrap_or_default());
        if let Some(c) = s["children"].as_array() {
            out.extend(flatten_names(c));
        }
    }
    out
}

/// A caller of `Point::origin` appended to src/util.rs on disk.
const FRESH_CALLER: &str = "\npub fn fresh_caller() -> crate::geometry::point::Point {\n    crate::geometry::point::Point::origin()\n}\n";

/// Headless Neovim running tests/nvim/hover_fresh.lua against `graphctx lsp
/// --no-watch` on the indexed fixture in `d`: hover on `origin`, append
/// [`FRESH_CALLER`] to src/util.rs on disk, hover again at once. `None`
/// when Neovim is missing and may be skipped.
fn hover_around_a_disk_edit(d: &Path) -> Option<Value> {
    let nvim_ok = Command::new("nvim")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !nvim_ok && common::client_missing("nvim", "scripts/install-test-clients.sh") {
        return None;
    }
    let (line, col) = position_of(d, POINT, "fn origin", 3);
    let out = d.join("nvim-hover.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/nvim/hover_fresh.lua");
    let status = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("GRAPHCTX_BIN", BIN)
        .env("GRAPHCTX_ROOT", d.canonicalize().unwrap())
        .env("GRAPHCTX_FILE", POINT)
        .env("GRAPHCTX_LINE", line.to_string())
        .env("GRAPHCTX_COL", col.to_string())
        .env("GRAPHCTX_EDIT", "src/util.rs")
        .env("GRAPHCTX_EDIT_APPEND", FRESH_CALLER)
        .env("GRAPHCTX_OUT", &out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(r.get("lua_error").is_none(), "{}", r["lua_error"]);
    assert_eq!(
        r["steps"],
        json!([
            "initialized",
            "hovered",
            "edited",
            "hovered again",
            "stopped"
        ]),
        "{r}"
    );
    assert_eq!(r["exit_code"], 0, "{r}");
    Some(r)
}

/// The hover's markdown and the dependents count of its blast line.
fn hover_text(r: &Value, which: &str) -> (String, u64) {
    let md = r[which]["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("no {which}: {r}"))
        .to_string();
    assert!(md.contains("pub fn origin() -> Point"), "{md}");
    let head = md
        .split(" dependent")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .unwrap_or_default();
    let n = head
        .parse()
        .unwrap_or_else(|_| panic!("no dependents count in {md}"));
    (md, n)
}

/// With the watcher off, an edit made on disk just before a hover (no
/// save, no change notification) is in the answer: the server brings the
/// index current before answering.
#[test]
fn neovim_hover_reflects_a_disk_edit_made_just_before() {
    let (d, ws) = shapes();
    drop(ws);
    let Some(r) = hover_around_a_disk_edit(d.path()) else {
        return;
    };
    let (before, n_before) = hover_text(&r, "hover_before");
    let (after, n_after) = hover_text(&r, "hover_after");
    assert_eq!(n_after, n_before + 1, "{before}\n---\n{after}");
    assert!(!after.contains("Index behind"), "{after}");
}

/// While another holder has the write lock the index cannot be brought
/// current: the hover answers from the committed state and names the file
/// it cannot reflect.
#[test]
fn neovim_hover_names_the_stale_file_while_another_writer_holds_the_lock() {
    let (d, ws) = shapes();
    let location = ws.store().location().clone();
    drop(ws);
    let lock = WriteLock::acquire(&location).unwrap();
    let Some(r) = hover_around_a_disk_edit(d.path()) else {
        return;
    };
    drop(lock);
    let (before, n_before) = hover_text(&r, "hover_before");
    let (after, n_after) = hover_text(&r, "hover_after");
    assert!(!before.contains("Index behind"), "{before}");
    assert_eq!(n_after, n_before, "{after}");
    assert!(
        after.contains("Index behind for: src/util.rs (another process is indexing)"),
        "{after}"
    );
}
