//! Ranked text search: rankings on the fixture, the text index through
//! incremental runs and the schema 12 migration, bad input, the CLI, and
//! the MCP tools.

use std::process::Command;

use graphctx::search::{search, HeldLists, Hit, Options, SearchError};
use graphctx::store::{Location, Params, Store};
use serde_json::Value;

use crate::common;

const BIN: &str = env!("CARGO_BIN_EXE_graphctx");

fn opts(limit: usize) -> Options {
    Options {
        limit,
        ..Options::default()
    }
}

fn keys(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.key.as_str()).collect()
}

fn ranked(store: &Store, q: &str, limit: usize) -> Vec<Hit> {
    search(store, "code", q, &opts(limit)).unwrap()
}

/// The first hits of a few task descriptions on the shapes fixture.
#[test]
fn golden_rankings_on_the_shapes_fixture() {
    let (store, _) = common::index_fresh(&common::fixture("shapes"));
    let mut out = String::new();
    for q in [
        "scale a rectangle by a factor",
        "area of a circle",
        "render shapes as ascii art",
        "the origin point of the plane",
        "clamp the scale to its maximum",
    ] {
        out.push_str(&format!("# {q}\n"));
        for h in ranked(&store, q, 5) {
            out.push_str(&format!(
                "{:.3} {} [{}]\n",
                h.score,
                h.key,
                h.why.terms.join(" ")
            ));
        }
    }
    common::assert_golden("search/shapes.txt", &out);
    let top = ranked(&store, "scale a rectangle by a factor", 1);
    assert_eq!(top[0].key, "src/geometry/mod.rs-geometry-Rect::scale");
    assert_eq!(top[0].signature, "pub fn scale(&mut self, factor: f64)");
    assert_eq!((top[0].start_line, top[0].end_line), (40, 43));
}

#[test]
fn kind_and_file_filters_and_limit() {
    let (store, _) = common::index_fresh(&common::fixture("shapes"));
    let o = Options {
        limit: 50,
        kind: Some("struct".into()),
        ..Options::default()
    };
    let hits = search(&store, "code", "rectangle circle point", &o).unwrap();
    assert!(!hits.is_empty() && hits.iter().all(|h| h.kind == "struct"));
    let o = Options {
        limit: 50,
        file: Some("src/geometry".into()),
        ..Options::default()
    };
    let hits = search(&store, "code", "rectangle circle point", &o).unwrap();
    assert!(!hits.is_empty() && hits.iter().all(|h| h.file.starts_with("src/geometry/")));
    assert_eq!(ranked(&store, "rectangle circle point", 2).len(), 2);
}

#[test]
fn bad_input_is_an_error_or_an_empty_list_never_an_engine_error() {
    let (store, _) = common::index_fresh(&common::fixture("shapes"));
    assert!(matches!(
        search(&store, "code", "", &opts(5)),
        Err(SearchError::NoWords)
    ));
    assert!(matches!(
        search(&store, "code", "  (*) \"\" ~ ", &opts(5)),
        Err(SearchError::NoWords)
    ));
    assert!(ranked(&store, "the of and is", 5).is_empty());
    assert!(ranked(&store, "zzqx wibble", 5).is_empty());
    for q in [
        "rect* OR \"circle\" AND NOT (area) NEAR/3 point",
        "?[x] := *node{id: x} :put node {x} $graph ' \\' ;",
        "scale:3 ^2 {Rect} [area] <- -> || && ::fts",
        &"rectangle ".repeat(5000),
    ] {
        let hits = search(&store, "code", q, &opts(5));
        assert!(hits.is_ok(), "{q:.60}: {:?}", hits.err());
    }
    let out = Command::new(BIN)
        .current_dir(common::fixture("shapes"))
        .args(["--db", "mem", "search", ""])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no words"));
}

fn text_rows(store: &Store) -> Vec<(String, Vec<String>)> {
    [
        "code_entity_texts",
        "code_word",
        "code_text_version",
        "code_file_text",
        "code_file_word",
    ]
    .iter()
    .map(|r| {
        let rows = store.dump(r).unwrap();
        let mut lines: Vec<String> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(graphctx::store::value::display)
                    .collect::<Vec<_>>()
                    .join("|")
            })
            .collect();
        lines.sort();
        (r.to_string(), lines)
    })
    .collect()
}

#[test]
fn incremental_runs_keep_the_text_index_current() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let store = Store::memory().unwrap();
    common::index(&store, dir.path());
    let old = "src/util.rs-util-clamp_scale";
    assert!(keys(&ranked(&store, "clamp scale", 5)).contains(&old));

    // Rename: found under the new name only.
    let util = dir.path().join("src/util.rs");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("clamp_scale", "bounded_factor")).unwrap();
    common::index(&store, dir.path());
    let hits = ranked(&store, "bounded factor", 10);
    assert_eq!(hits[0].key, "src/util.rs-util-bounded_factor");
    assert!(ranked(&store, "clamp", 50).iter().all(|h| h.key != old));
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));

    // A deleted file's entities are gone.
    std::fs::remove_file(&util).unwrap();
    common::index(&store, dir.path());
    for q in ["bounded factor", "maximum scale", "clamp"] {
        assert!(
            ranked(&store, q, 50)
                .iter()
                .all(|h| h.file != "src/util.rs"),
            "{q}"
        );
    }
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));
}

/// Words only a file's comments or bodies hold find the file (by its module
/// entity when none of its entities' own texts holds them), and follow
/// edits of the body.
#[test]
fn the_words_of_a_whole_file_find_it_and_follow_body_edits() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let store = Store::memory().unwrap();
    common::index(&store, dir.path());
    assert!(ranked(&store, "zorblax quuxification", 5).is_empty());

    let render = dir.path().join("src/render.rs");
    let text = std::fs::read_to_string(&render).unwrap();
    let edited = text.replacen(
        "{\n",
        "{\n    // zorblax quuxification of the zorblax grid\n",
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&render, &edited).unwrap();
    common::index(&store, dir.path());
    let hits = ranked(&store, "zorblax quuxification", 5);
    assert_eq!(hits[0].file, "src/render.rs");
    // The comment is in `render`'s body: its words are `render`'s.
    assert_eq!(hits[0].key, "src/render.rs-render-render");
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));

    // A body edit that leaves every other word's count alone.
    std::fs::write(
        &render,
        edited.replace("of the zorblax grid", "of the grid"),
    )
    .unwrap();
    common::index(&store, dir.path());
    assert_eq!(ranked(&store, "zorblax", 5)[0].file, "src/render.rs");
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));

    std::fs::write(&render, &text).unwrap();
    common::index(&store, dir.path());
    assert!(ranked(&store, "zorblax quuxification", 5).is_empty());
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));
}

/// A server holds the posting lists its searches read (and the paths and
/// spans they read): its answers are the ones a search reading every list
/// gives, through edits that add, move and remove words and lines, for its
/// own store only, within its bound.
#[test]
fn lists_a_server_holds_follow_every_index_run() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let store = Store::memory().unwrap();
    common::index(&store, dir.path());
    let held = std::sync::Arc::new(HeldLists::new(&store));
    let server = Options {
        limit: 10,
        held: Some(held.clone()),
        sources: Some(dir.path().to_path_buf()),
        ..Options::default()
    };
    let reading_every_list = Options {
        held: None,
        ..server.clone()
    };
    let queries = [
        "zorblax quuxification",
        "clamp the scale of a shape",
        "render the grid of shapes",
        "thread 'main' panicked at src/extra.rs:2:5: the widget broke",
    ];
    let same_as_reading_every_list = |q: &str| {
        let hits = search(&store, "code", q, &server).unwrap();
        assert_eq!(
            hits,
            search(&store, "code", q, &reading_every_list).unwrap(),
            "{q}"
        );
        hits
    };
    for q in queries {
        same_as_reading_every_list(q);
    }
    // The words asked for are held, those without a list too.
    let (lists, bytes) = held.size();
    assert!(lists > 0 && bytes > 0, "{lists} lists, {bytes} bytes");
    assert!(same_as_reading_every_list("zorblax quuxification").is_empty());

    // A word gains a list, then loses it again: each run is seen. A run
    // of the server's own says which lists it rewrote: only those go.
    let run_in_server = || {
        let before = store.graph_seq("code").unwrap();
        let s = common::index(&store, dir.path());
        held.after_run("code", before, s.seq, &s.lists_rewritten);
    };
    let render = dir.path().join("src/render.rs");
    let text = std::fs::read_to_string(&render).unwrap();
    let edited = text.replacen("{\n", "{\n    // zorblax quuxification\n", 1);
    std::fs::write(&render, &edited).unwrap();
    let (lists_before, _) = held.size();
    run_in_server();
    let (lists_after, _) = held.size();
    assert!(
        0 < lists_after && lists_after < lists_before,
        "{lists_before} lists held, {lists_after} after the run"
    );
    let hits = same_as_reading_every_list("zorblax quuxification");
    assert_eq!(hits[0].file, "src/render.rs");
    let util = dir.path().join("src/util.rs");
    let util_text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, util_text.replace("clamp_scale", "bounded_factor")).unwrap();
    std::fs::write(&render, &text).unwrap();
    std::fs::write(
        dir.path().join("src/extra.rs"),
        "/// Breaks.\npub fn widget() {\n    panic!(\"the widget broke\");\n}\n",
    )
    .unwrap();
    run_in_server();
    for q in queries {
        same_as_reading_every_list(q);
    }
    // The new file is among the paths quoted locations are matched to.
    assert_eq!(
        same_as_reading_every_list(queries[3])[0].key,
        "src/extra.rs-extra-widget"
    );
    assert!(same_as_reading_every_list("zorblax quuxification").is_empty());
    assert!(same_as_reading_every_list("clamp")
        .iter()
        .all(|h| h.key != "src/util.rs-util-clamp_scale"));

    // Another store's search does not use them.
    let first = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), first.path());
    let (other, _) = common::index_fresh(first.path());
    let theirs = search(&other, "code", "clamp", &server).unwrap();
    assert_eq!(
        theirs,
        search(&other, "code", "clamp", &reading_every_list).unwrap()
    );
    assert!(theirs
        .iter()
        .any(|h| h.key == "src/util.rs-util-clamp_scale"));

    // Bounded: over its bound, the least recently used lists go.
    let small = std::sync::Arc::new(HeldLists::with_limit(&store, 4096));
    let bounded = Options {
        held: Some(small.clone()),
        ..server.clone()
    };
    for q in queries {
        assert_eq!(
            search(&store, "code", q, &bounded).unwrap(),
            search(&store, "code", q, &reading_every_list).unwrap()
        );
        assert!(small.size().1 <= 4096, "{:?}", small.size());
    }
}

/// The messages an issue quotes are string literals, in the body of the
/// entity that reports them: a panic's message finds that function, and
/// edits of literals and comments alone (no name, doc or signature
/// changes) keep the text index equal to a rebuild's.
#[test]
fn a_message_in_a_body_finds_its_function_and_follows_literal_edits() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let store = Store::memory().unwrap();
    common::index(&store, dir.path());
    let render = dir.path().join("src/render.rs");
    let text = std::fs::read_to_string(&render).unwrap();
    let describe = "format!(\"{r} with area {}\", r.area())";
    assert!(text.contains(describe));
    let with_message = text.replace(
        describe,
        &format!("assert!(r.width > 0.0, \"degenerate rectangle: zero width\");\n    {describe}"),
    );
    std::fs::write(&render, &with_message).unwrap();
    common::index(&store, dir.path());
    let hits = ranked(&store, "panicked: degenerate rectangle", 5);
    assert_eq!(hits[0].key, "src/render.rs-render-describe");
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));

    // Only the message changes: its old words go, its new ones find it.
    let reworded = with_message.replace(
        "degenerate rectangle: zero width",
        "flattened quadrilateral",
    );
    std::fs::write(&render, &reworded).unwrap();
    common::index(&store, dir.path());
    assert!(ranked(&store, "degenerate", 20)
        .iter()
        .all(|h| h.file != "src/render.rs"));
    assert_eq!(
        ranked(&store, "flattened quadrilateral", 5)[0].key,
        "src/render.rs-render-describe"
    );
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));

    // A comment alone, then back to the fixture.
    let commented = reworded.replace(
        "fn describe(",
        "// quadrilateral folding happens here\nfn describe(",
    );
    std::fs::write(&render, &commented).unwrap();
    common::index(&store, dir.path());
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));
    std::fs::write(&render, &text).unwrap();
    common::index(&store, dir.path());
    assert!(ranked(&store, "quadrilateral", 20).is_empty());
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));
}

/// A database indexed before schema 12 has no text index: the migration
/// adds the relations and the next index run fills them, as a fresh index
/// would.
#[test]
fn an_index_from_before_schema_12_gets_its_text_index_on_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let location = Location::Sqlite(dir.path().join("graph.db"));
    {
        let store = Store::open(&location).unwrap();
        common::index(&store, dir.path());
        // Back to what graphctx before schema 12 left (the later versions
        // come back with it).
        for script in crate::schema::BEFORE_24
            .iter()
            .chain(&crate::schema::BEFORE_23)
        {
            store.write(script, Params::new()).unwrap();
        }
        store
            .write(
                "::remove code_entity_texts, code_word, code_text_version, code_interface, code_names, \
                 code_file_text, code_file_word, code_file_edges, code_file_entities",
                Params::new(),
            )
            .unwrap();
        store
            .write(
                "::index create edge:by_origin { graph, origin, src, rel, dst, weight }",
                Params::new(),
            )
            .unwrap();
        store
            .write(
                "::index create code_entity:by_file { graph, file, id }",
                Params::new(),
            )
            .unwrap();
        store
            .write(
                "?[version] := *schema_version{version}, version >= 12 \
                 :rm schema_version {version}",
                Params::new(),
            )
            .unwrap();
    }
    let store = common::open_migrated(&location);
    assert!(ranked(&store, "scale a rectangle", 5).is_empty());
    common::index(&store, dir.path());
    assert_eq!(
        ranked(&store, "scale a rectangle by a factor", 1)[0].key,
        "src/geometry/mod.rs-geometry-Rect::scale"
    );
    let (fresh, _) = common::index_fresh(dir.path());
    assert_eq!(text_rows(&store), text_rows(&fresh));
}

#[test]
fn cli_search_and_context_query() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["index"]);
    let hits: Value = serde_json::from_str(&run(&[
        "search",
        "scale a rectangle",
        "--limit",
        "3",
        "--json",
    ]))
    .unwrap();
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 3);
    for field in [
        "key",
        "kind",
        "name",
        "file",
        "start_line",
        "end_line",
        "score",
        "signature",
        "why",
    ] {
        assert!(hits[0].get(field).is_some(), "{field}");
    }
    let table = run(&["search", "scale a rectangle"]);
    assert!(table.contains("Rect::scale"), "{table}");
    let doc: Value = serde_json::from_str(&run(&[
        "context",
        "--query",
        "scale a rectangle",
        "--budget",
        "4000",
    ]))
    .unwrap();
    assert_eq!(doc["query_context"]["query"], "scale a rectangle");
    let bases = doc["query_context"]["base_entities"].as_array().unwrap();
    assert!(bases.contains(&Value::from("src/geometry/mod.rs-geometry-Rect::scale")));
    let e = run(&[
        "context",
        "--query",
        "scale a rectangle",
        "--format",
        "e",
        "--budget",
        "500",
    ]);
    // As many of the hits as fit a quarter of 500 tokens, at least one.
    let base: usize = e
        .strip_prefix("# graphctx context · Format E · base ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!((1..=10).contains(&base), "{e}");
}

/// The MCP tools through the official Python SDK: a sentence is searched
/// as text, `context` takes `query`, answers stay within `max_tokens`.
#[test]
fn mcp_text_search_and_context_query_through_the_python_client() {
    if !common::mcp_client::sdk_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let calls = serde_json::json!([
        {"tool": "search_entities", "arguments": {"query": "scale a rectangle by a factor", "limit": 3}},
        {"tool": "search_entities", "arguments": {"query": "scale a rectangle", "max_tokens": 60}},
        {"tool": "context", "arguments": {"query": "scale a rectangle", "max_tokens": 800}},
        {"tool": "search_entities", "arguments": {"query": "the of and"}},
        {"tool": "search_entities", "arguments": {"query": " \"\" (*) ~ "}},
    ]);
    let s = common::mcp_client::run(dir.path(), &calls);
    let found = s.ok_json(0);
    assert_eq!(found["mode"], "text");
    assert_eq!(
        found["results"][0]["key"],
        "src/geometry/mod.rs-geometry-Rect::scale"
    );
    assert!(found["results"][0]["signature"].is_string());
    let tok =
        graphctx::support::tokens::TokenCounter::new(graphctx::support::tokens::Encoding::O200k);
    assert!(tok.count(s.text(1)) <= 60, "{}", s.text(1));
    let doc = s.text(2);
    assert_eq!(s.calls()[2]["is_error"], false, "{doc}");
    assert!(
        doc.starts_with("# graphctx context · Format E") && tok.count(doc) <= 800,
        "{doc}"
    );
    let empty = s.ok_json(3);
    assert_eq!(empty["results"].as_array().unwrap().len(), 0);
    assert_eq!(s.calls()[4]["is_error"], true);
    assert!(s.text(4).contains("no words"), "{}", s.text(4));
}

/// `search_entities` with a single word, through the Python SDK: a word
/// some name contains is matched against names; a plain lowercase word no
/// name contains is searched as text when the text finds it (with the
/// kind filter applied), and otherwise the name matches stand.
#[test]
fn mcp_single_word_search_falls_back_to_text_through_the_python_client() {
    if !common::mcp_client::sdk_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    let calls = serde_json::json!([
        // Names: `Rect::scale` exactly, `clamp_scale` and `MAX_SCALE` contain it.
        {"tool": "search_entities", "arguments": {"query": "scale"}},
        // No name contains it; the docs of `Rect` and `Rect::new` do.
        {"tool": "search_entities", "arguments": {"query": "rectangle"}},
        {"tool": "search_entities", "arguments": {"query": "rectangle", "kind": "struct"}},
        // Only scattered letters of names (`Rect`), and no text: names.
        {"tool": "search_entities", "arguments": {"query": "rct"}},
        // A name exactly, written like a word: names.
        {"tool": "search_entities", "arguments": {"query": "Rect"}},
        // A word neither names nor text hold.
        {"tool": "search_entities", "arguments": {"query": "zebra"}},
    ]);
    let s = common::mcp_client::run(dir.path(), &calls);
    let keys = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_string())
            .collect()
    };

    let by_name = s.ok_json(0);
    assert!(by_name.get("mode").is_none(), "{by_name}");
    assert_eq!(
        keys(&by_name),
        [
            "src/geometry/mod.rs-geometry-Rect::scale",
            "src/util.rs-util-MAX_SCALE",
            "src/util.rs-util-clamp_scale"
        ]
    );

    let text = s.ok_json(1);
    assert_eq!(text["mode"], "text", "{text}");
    // The two whose docs say it are among the first hits (beside
    // `describe`, whose parameter's type is imported as `Rectangle`).
    let found = keys(&text);
    let first: Vec<&str> = found.iter().take(4).map(String::as_str).collect();
    assert!(
        first.contains(&"src/geometry/mod.rs-geometry-Rect::new"),
        "{text}"
    );
    assert!(
        first.contains(&"src/geometry/mod.rs-geometry-Rect"),
        "{text}"
    );
    assert_eq!(text["results"][0]["why"]["terms"][0], "rectangle");
    assert!(text["results"][0]["signature"].is_string());

    let structs = s.ok_json(2);
    assert_eq!(structs["mode"], "text", "{structs}");
    assert_eq!(keys(&structs)[0], "src/geometry/mod.rs-geometry-Rect");
    assert!(structs["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["kind"] == "struct"));

    let scattered = s.ok_json(3);
    assert!(scattered.get("mode").is_none(), "{scattered}");
    assert_eq!(keys(&scattered)[0], "src/geometry/mod.rs-geometry-Rect");

    let exact = s.ok_json(4);
    assert!(exact.get("mode").is_none(), "{exact}");
    assert_eq!(keys(&exact)[0], "src/geometry/mod.rs-geometry-Rect");

    let nothing = s.ok_json(5);
    assert!(nothing.get("mode").is_none(), "{nothing}");
    assert_eq!(nothing["matched"], 0);
}

/// A bug report as an agent pastes it: an issue template, a panic with
/// its location, a backtrace, shell metacharacters and lines that start
/// with `-`, read from a file and from standard input.
const ISSUE: &str = "Drawing a rectangle panics\n\
## Version\n\
shapes v0.1.0, rustc 1.80.0 (Linux x86_64)\n\
## Description\n\
- run `shapes-cli` with $(echo 'a; b') && `--width 0`\n\
```\n\
thread 'main' panicked at src/geometry/mod.rs:41:9:\n\
attempt to multiply with overflow\n\
stack backtrace:\n\
   0: shapes::geometry::Rect::scale\n\
             at ./src/geometry/mod.rs:41:9\n\
```\n";

/// A copy of the shapes fixture, indexed by the CLI.
fn indexed_shapes() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::fixture("shapes"), dir.path());
    assert!(cli(dir.path(), &["index"], "").status.success());
    dir
}

/// `graphctx ARGS` in `dir` with `stdin` on its standard input.
fn cli(dir: &std::path::Path, args: &[&str], stdin: &str) -> std::process::Output {
    common::graphctx(dir, args, Some(stdin))
}

#[test]
fn a_panic_location_in_an_issue_ranks_its_entity_first_from_a_file_or_stdin() {
    let dir = indexed_shapes();
    let issue = dir.path().join("issue.md");
    std::fs::write(&issue, ISSUE).unwrap();
    let from_file = cli(
        dir.path(),
        &["search", "--query-file", "issue.md", "--json", "--explain"],
        "",
    );
    assert!(from_file.status.success(), "{from_file:?}");
    let from_stdin = cli(dir.path(), &["search", "-", "--json", "--explain"], ISSUE);
    assert_eq!(from_file.stdout, from_stdin.stdout);
    let hits: Value = serde_json::from_slice(&from_file.stdout).unwrap();
    let first = &hits[0];
    assert_eq!(first["key"], "src/geometry/mod.rs-geometry-Rect::scale");
    assert_eq!(first["why"]["location"], "src/geometry/mod.rs:41");
    let signals = &first["why"]["signals"];
    assert!(signals["location"].as_f64().unwrap() > 0.0, "{signals}");
    assert_eq!(signals["test_prior"], 1.0);
    // The table says why in one line per hit.
    let table = cli(
        dir.path(),
        &["search", "--query-file", "issue.md", "--explain"],
        "",
    );
    let table = String::from_utf8(table.stdout).unwrap();
    let line = table.lines().nth(1).unwrap();
    assert!(line.contains("at src/geometry/mod.rs:41"), "{table}");
    // … and its file's strongest signals, under the fitted weights.
    assert!(line.contains("file: "), "{table}");
    // The context of the same report starts from the same entity.
    let doc = cli(
        dir.path(),
        &["context", "--query-file", "-", "--budget", "3000"],
        ISSUE,
    );
    assert!(doc.status.success(), "{doc:?}");
    let doc: Value = serde_json::from_slice(&doc.stdout).unwrap();
    assert_eq!(
        doc["query_context"]["base_entities"][0],
        "src/geometry/mod.rs-geometry-Rect::scale"
    );
}

#[test]
fn query_text_that_is_empty_garbage_huge_or_only_a_template_never_fails_badly() {
    let dir = indexed_shapes();
    // Empty or whitespace-only: an error naming the problem.
    for empty in ["", "  \n\t\n"] {
        let out = cli(dir.path(), &["search", "-"], empty);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no words"));
        let out = cli(dir.path(), &["context", "--query", "-"], empty);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
    // A missing query file is named.
    let out = cli(dir.path(), &["search", "--query-file", "nope.md"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.md"));
    // Binary garbage, 100 KB of text, an issue template with nothing in
    // it: a ranked list (maybe empty), never a panic.
    let garbage: String = (0..20_000u32)
        .map(|i| char::from_u32((i * 7919) % 0xD000 + 1).unwrap_or('x'))
        .collect();
    let huge = "scale the rectangle ".repeat(5_000);
    let template = "## Version\n\n## Platform\n\n## Description\n\n## Steps to reproduce\n";
    for text in [garbage.as_str(), huge.as_str(), template] {
        let out = cli(dir.path(), &["search", "-", "--json"], text);
        assert!(
            out.status.success(),
            "{:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(hits.is_array());
    }
    let huge_hits: Value =
        serde_json::from_slice(&cli(dir.path(), &["search", "-", "--json"], &huge).stdout).unwrap();
    assert!(huge_hits[0]["key"].as_str().unwrap().contains("Rect"));
    // Bytes that are not UTF-8 are read, not refused.
    std::fs::write(
        dir.path().join("bin.txt"),
        [0xff, 0xfe, b's', b'c', 0x80, b'a'],
    )
    .unwrap();
    let out = cli(dir.path(), &["search", "--query-file", "bin.txt"], "");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_query_context_under_a_small_budget_keeps_as_many_hits_as_fit() {
    let dir = indexed_shapes();
    // 600 tokens answered `context_size_exceeded` when five hits had to fit.
    for budget in [600usize, 1200, 8000] {
        let b = budget.to_string();
        let out = cli(
            dir.path(),
            &[
                "context",
                "--query",
                "scale a rectangle and draw it",
                "--budget",
                &b,
            ],
            "",
        );
        assert!(out.status.success(), "{budget}: {out:?}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(doc["token_count"].as_u64().unwrap() as usize <= budget);
        let bases = doc["query_context"]["base_entities"].as_array().unwrap();
        assert!(!bases.is_empty(), "{budget}: {doc}");
        let included: Vec<&str> = doc["entities"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e["isgl1_key"].as_str())
            .collect();
        assert!(
            included.contains(&bases[0].as_str().unwrap()),
            "{budget}: {doc}"
        );
    }
}

/// A long query on a tree where its words match thousands of entities:
/// ranking keeps only the best matches of the words, and those are the
/// entities that hold most of them, first the one that holds the rare
/// word too.
#[test]
fn a_query_matching_thousands_of_entities_still_ranks_the_best_first() {
    let dir = common::temp_package("many");
    let root = dir.path();
    let words = ["lantern", "harbor", "meadow", "copper"];
    let mut lib = String::new();
    // 5,200 functions, each word in 1,250 of them (under a quarter of
    // the entities, so every word is read): 5,000 match the query.
    for file in 0..26 {
        lib.push_str(&format!("pub mod m{file};\n"));
        let mut text = String::new();
        for i in 0..200 {
            let n = file * 200 + i;
            let doc = match n % 26 {
                w @ 0..=19 => format!("/// The {} of item {n}.\n", words[w % 4]),
                _ => format!("/// Item {n}, plain.\n"),
            };
            text.push_str(&format!("{doc}pub fn item_{n}() -> u32 {{ {n} }}\n"));
        }
        if file == 7 {
            text.push_str(
                "/// The lantern, harbor, meadow and copper of everything.\npub fn all_four() {}\n",
            );
            text.push_str(
                "/// The quibbled lantern, harbor, meadow and copper.\npub fn quibbled() {}\n",
            );
        }
        common::write_file(root, &format!("src/m{file}.rs"), &text);
    }
    common::write_file(root, "src/lib.rs", &lib);
    let (store, _) = common::index_fresh(root);
    let hits = ranked(
        &store,
        "the quibbled lantern harbor meadow copper, again lantern and harbor",
        5,
    );
    let top: Vec<&str> = keys(&hits);
    assert_eq!(top[0], "src/m7.rs-m7-quibbled", "{top:?}");
    assert!(top.contains(&"src/m7.rs-m7-all_four"), "{top:?}");
}

/// A long report keeps up to 160 terms: a hit found by one of its
/// lightest words still says which word found it (the terms after the
/// 64th were once left out of `why.terms`, and the hit read "file text").
#[test]
fn a_hit_found_by_a_late_word_of_a_long_query_names_that_word() {
    let dir = common::temp_package("late");
    let root = dir.path();
    common::write_file(
        root,
        "src/lib.rs",
        "/// Quibbled onions.\npub fn quibbled() {}\n\n/// Something else.\npub fn other() {}\n",
    );
    let (store, _) = common::index_fresh(root);
    // 80 distinct words of one weight before the one the code holds.
    let letters: Vec<char> = ('a'..='z').collect();
    let filler: Vec<String> = (0..80)
        .map(|i| format!("zed{}{}", letters[i / 26], letters[i % 26]))
        .collect();
    let query = format!("{} quibbled", filler.join(" "));
    let hits = ranked(&store, &query, 5);
    let hit = hits
        .iter()
        .find(|h| h.name == "quibbled")
        .unwrap_or_else(|| panic!("{:?}", keys(&hits)));
    assert_eq!(hit.why.terms, vec!["quibbled".to_string()], "{:?}", hit.why);
}

/// A repository whose history says what its code does not: `src/net.rs`
/// was changed by a commit about the reconnect backoff, in words its
/// source never uses.
fn repository_with_history() -> tempfile::TempDir {
    let dir = common::temp_package("history");
    let root = dir.path();
    common::write_file(root, "src/lib.rs", "pub mod net;\npub mod store;\n");
    common::write_file(
        root,
        "src/net.rs",
        "/// Opens a link.\npub fn open_link(addr: &str) -> usize {\n    addr.len()\n}\n",
    );
    common::write_file(
        root,
        "src/store.rs",
        "/// Saves a row.\npub fn save_row(row: &str) -> usize {\n    row.len()\n}\n",
    );
    common::git(root, &["init", "-q"]);
    common::git(root, &["add", "."]);
    common::git(
        root,
        &["commit", "-q", "-m", "Start the link and the store"],
    );
    common::write_file(
        root,
        "src/net.rs",
        "/// Opens a link.\npub fn open_link(addr: &str) -> usize {\n    addr.len() + 1\n}\n",
    );
    common::git(
        root,
        &["commit", "-q", "-am", "Stop the flaky reconnect backoff"],
    );
    dir
}

#[test]
fn the_messages_of_the_commits_that_changed_a_file_find_it() {
    let dir = repository_with_history();
    assert!(cli(dir.path(), &["index"], "").status.success());
    for scoring in ["fitted", "hand"] {
        let out = cli(
            dir.path(),
            &[
                "search",
                "reconnect backoff is flaky",
                "--json",
                "--scoring",
                scoring,
            ],
            "",
        );
        assert!(out.status.success(), "{out:?}");
        let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(hits[0]["file"], "src/net.rs", "{scoring}: {hits}");
    }
    let out = cli(
        dir.path(),
        &["search", "reconnect backoff is flaky", "--features"],
        "",
    );
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    let files = answer["files"].as_array().unwrap();
    let net = files.iter().find(|f| f["file"] == "src/net.rs").unwrap();
    assert_eq!(net["features"]["history_text"], 1.0, "{answer}");
    assert!(
        files.iter().all(|f| f["file"] != "src/store.rs"),
        "{answer}"
    );
}

#[test]
fn a_batch_answers_each_query_in_order_and_its_files_come_in_score_order() {
    let dir = indexed_shapes();
    let batch = dir.path().join("queries.jsonl");
    std::fs::write(
        &batch,
        "{\"id\": \"a\", \"text\": \"scale a rectangle by a factor\"}\n\n\
         {\"id\": 7, \"text\": \"area of a circle\"}\n\
         {\"id\": \"c\", \"text\": \"  \"}\n",
    )
    .unwrap();
    for scoring in ["fitted", "hand"] {
        let out = cli(
            dir.path(),
            &[
                "search",
                "--batch",
                "queries.jsonl",
                "--features",
                "--scoring",
                scoring,
            ],
            "",
        );
        assert!(out.status.success(), "{out:?}");
        let answers: Vec<Value> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
        assert_eq!(ids, [&Value::from("a"), &Value::from(7), &Value::from("c")]);
        assert!(answers[2]["error"].as_str().unwrap().contains("no words"));
        for a in &answers[..2] {
            // Files in the list come in the order of their scores.
            let by_score: Vec<&str> = a["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["file"].as_str().unwrap())
                .collect();
            let mut listed: Vec<&str> = Vec::new();
            for h in a["hits"].as_array().unwrap() {
                let f = h["file"].as_str().unwrap();
                if !listed.contains(&f) {
                    listed.push(f);
                }
            }
            assert_eq!(listed, by_score[..listed.len()], "{scoring}: {a}");
        }
    }
    std::fs::write(&batch, "{\"id\": 1, \"text\": \"area\"}\nnot json\n").unwrap();
    let out = cli(dir.path(), &["search", "--batch", "queries.jsonl"], "");
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("queries.jsonl:2"), "{err}");
}

/// An index from before schema 24 had co-change but no history text: the
/// next run reads the history again (its stamp names what is derived from
/// it), and the messages find their file.
#[test]
fn an_index_from_before_schema_24_reads_its_history_text_on_the_next_run() {
    let dir = repository_with_history();
    let location = Location::Sqlite(dir.path().join("graph.db"));
    {
        let store = Store::open(&location).unwrap();
        common::index(&store, dir.path());
        for script in crate::schema::BEFORE_24 {
            store.write(script, Params::new()).unwrap();
        }
        store
            .write(
                "?[version] := *schema_version{version}, version >= 24 \
                 :rm schema_version {version}",
                Params::new(),
            )
            .unwrap();
        // The stamp as graphctx before schema 24 wrote it: HEAD and the
        // pathspecs, nothing about the text.
        store
            .write(
                "?[graph, head, pairs] := *code_history{graph, head: old, pairs}, \
                 head = regex_replace(old, ' text[0-9.]+$', '') \
                 :put code_history {graph => head, pairs}",
                Params::new(),
            )
            .unwrap();
    }
    let store = common::open_migrated(&location);
    let query = "reconnect backoff is flaky";
    assert!(ranked(&store, query, 5)
        .iter()
        .all(|h| h.file != "src/net.rs"));
    common::index(&store, dir.path());
    assert_eq!(ranked(&store, query, 1)[0].file, "src/net.rs");
}

/// A module whose functions are named for what they are, not for what a
/// report says they do: only their bodies use the report's words.
fn repository_of_bodies() -> tempfile::TempDir {
    let dir = common::temp_package("bodies");
    let root = dir.path();
    common::write_file(root, "src/lib.rs", "pub mod session;\n");
    common::write_file(
        root,
        "src/session.rs",
        "//! Sessions with a server.\n\
         \n\
         /// Starts a session.\n\
         pub fn start(host: &str) -> usize {\n    host.len()\n}\n\
         \n\
         /// Keeps a session alive.\n\
         pub fn keep(host: &str) -> usize {\n\
         \x20   let mut backoff = 1;\n\
         \x20   while reconnect(host, backoff) {\n\
         \x20       backoff *= 2;\n\
         \x20   }\n\
         \x20   backoff\n\
         }\n\
         \n\
         fn reconnect(host: &str, delay: usize) -> bool {\n    host.len() > delay\n}\n\
         \n\
         /// Ends a session.\n\
         pub fn end(host: &str) -> usize {\n    host.len() + 1\n}\n",
    );
    dir
}

#[test]
fn a_function_whose_body_does_what_the_report_says_comes_first_in_its_file() {
    let dir = repository_of_bodies();
    assert!(cli(dir.path(), &["index"], "").status.success());
    let report = "Session never gives up\n\nThe backoff doubles forever when the \
                  session cannot reach the host; the backoff should stop growing.";
    let out = cli(dir.path(), &["search", "-", "--json", "--explain"], report);
    assert!(out.status.success(), "{out:?}");
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    let functions: Vec<&str> = hits
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == "function")
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(functions.first(), Some(&"keep"), "{hits}");
    // Its body holds the report's words more than any other function's
    // (the module's lines hold them all: its share is against that).
    let body = |h: &Value| h["why"]["signals"]["body"].as_f64().unwrap();
    let all = hits.as_array().unwrap();
    let keep = all.iter().find(|h| h["name"] == "keep").unwrap();
    assert!(body(keep) > 0.0, "{keep}");
    assert!(
        all.iter()
            .filter(|h| h["kind"] == "function" && h["name"] != "keep")
            .all(|h| body(h) < body(keep)),
        "{hits}"
    );
    assert!(
        keep["why"]["terms"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "backoff"),
        "{keep}"
    );
    // The context of the same report starts from it.
    let doc = cli(
        dir.path(),
        &["context", "--query-file", "-", "--budget", "3000"],
        report,
    );
    assert!(doc.status.success(), "{doc:?}");
    let doc: Value = serde_json::from_slice(&doc.stdout).unwrap();
    let base = doc["query_context"]["base_entities"].as_array().unwrap();
    let first_function = base
        .iter()
        .map(|k| k.as_str().unwrap())
        .find(|k| k.contains("-session-"))
        .unwrap();
    assert!(first_function.ends_with("-session-keep"), "{doc}");
    // A database kept apart from its repository has no sources to read:
    // the same search still answers, without the body signal.
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("apart.db");
    let db_arg = db_path.to_str().unwrap();
    assert!(cli(dir.path(), &["--db", db_arg, "index"], "")
        .status
        .success());
    let out = cli(
        dir.path(),
        &["--db", db_arg, "search", "-", "--json", "--explain"],
        report,
    );
    assert!(out.status.success(), "{out:?}");
    let hits: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        hits.as_array()
            .unwrap()
            .iter()
            .all(|h| h["why"]["signals"]["body"] == 0.0),
        "{hits}"
    );
}
