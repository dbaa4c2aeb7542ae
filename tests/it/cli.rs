//! End-to-end runs of the `graphctx` binary: exit codes, output shapes,
//! read-only queries, crash safety.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{copy_dir, copy_own_sources, fixture};

pub(crate) fn graphctx(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_graphctx"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("graphctx runs")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(crate) fn shapes_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("shapes"), dir.path());
    dir
}

#[test]
fn index_then_look_around() {
    let repo = shapes_copy();
    let out = graphctx(repo.path(), &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for field in [
        "files_seen",
        "files_parsed",
        "files_skipped",
        "entities",
        "edges",
        "unresolved",
        "elapsed_ms",
    ] {
        assert!(summary.get(field).is_some(), "summary lacks {field}");
    }
    assert_eq!(summary["files_parsed"], 7);
    assert!(repo.path().join(".graphctx/graph.db").is_file());

    // A second run parses nothing.
    let again = graphctx(repo.path(), &["index", "--json"]);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&again)).unwrap();
    assert_eq!(summary["files_parsed"], 0);
    assert_eq!(summary["files_unchanged"], 7);

    // entities, from a subdirectory (the index is found upwards).
    let out = graphctx(
        &repo.path().join("src"),
        &["entities", "--kind", "trait", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let traits: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(traits.as_array().unwrap().len(), 1);
    assert_eq!(traits[0]["key"], "src/lib.rs-crate-Area");

    // Plain output is a table with the key.
    let out = graphctx(repo.path(), &["entities", "--file", "src/util.rs"]);
    assert!(stdout(&out).contains("src/util.rs-util-clamp_scale"));

    // edges
    let out = graphctx(
        repo.path(),
        &[
            "edges",
            "src/lib.rs-crate-Area",
            "--direction",
            "in",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rels: Vec<&str> = v["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["rel"].as_str().unwrap())
        .collect();
    assert!(rels.contains(&"implements"));
}

#[test]
fn unknown_keys_and_kinds_are_clear_errors() {
    let repo = shapes_copy();
    graphctx(repo.path(), &["index"]);
    let out = graphctx(repo.path(), &["edges", "src/lib.rs-crate-Nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no entity with key 'src/lib.rs-crate-Nope'"));
    let out = graphctx(repo.path(), &["entities", "--kind", "klass"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown entity kind 'klass'"));
}

#[test]
fn commands_outside_an_index_say_how_to_make_one() {
    let empty = tempfile::tempdir().unwrap();
    let out = graphctx(empty.path(), &["entities"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("run `graphctx index` first"));
}

#[test]
fn query_is_read_only_unless_asked_and_takes_parameters() {
    let repo = shapes_copy();
    graphctx(repo.path(), &["index"]);
    let out = graphctx(
        repo.path(),
        &[
            "query",
            "?[id] := *code_entity{graph: 'code', id, file: $f}",
            "--param",
            "f=src/util.rs",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 3);

    let put = "?[graph, id, kind, name, doc] <- [['code', 'x', 'function', 'x', '']] :put node {graph, id => kind, name, doc}";
    let out = graphctx(repo.path(), &["query", put]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--write"), "{}", stderr(&out));
    let out = graphctx(repo.path(), &["query", put, "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // A malformed script is an error, not a crash.
    let out = graphctx(repo.path(), &["query", "?[x := broken"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("query failed"));
}

#[test]
fn skipped_files_exit_with_one() {
    let repo = shapes_copy();
    std::fs::write(repo.path().join("src/blob.rs"), b"\x00\x01binary").unwrap();
    let out = graphctx(repo.path(), &["index"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("skipped src/blob.rs: binary file"));
}

/// `graphctx entities | head -1`: when the reader has gone, the command
/// stops quietly with 0, as other Unix tools do (the reading end is closed
/// before the run starts, so every write meets a closed pipe).
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    let repo = shapes_copy();
    let out = graphctx(repo.path(), &["index"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for args in [
        &["entities"][..],
        &["entities", "--json"],
        &["cycles"],
        &["export", "--jsonl"],
        &["status"],
        &["completions", "bash"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_graphctx"))
            .args(args)
            .current_dir(repo.path())
            .stdout(writer)
            .output()
            .expect("graphctx runs");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

#[test]
fn usage_errors_exit_with_two() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        graphctx(dir.path(), &["index", "--bogus"]).status.code(),
        Some(2)
    );
    assert_eq!(
        graphctx(dir.path(), &["index", "does/not/exist"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn in_memory_runs_leave_no_files() {
    let repo = shapes_copy();
    let out = graphctx(repo.path(), &["--db", "mem", "index"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!repo.path().join(".graphctx").exists());
}

#[test]
fn a_newer_schema_is_refused() {
    let repo = shapes_copy();
    graphctx(repo.path(), &["index"]);
    let bump = "?[version, name] <- [[999, 'future']] :put schema_version {version => name}";
    let out = graphctx(repo.path(), &["query", bump, "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = graphctx(repo.path(), &["index"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("schema version 999"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_second_writer_gets_index_busy_with_no_wait() {
    let repo = shapes_copy();
    graphctx(repo.path(), &["index"]);
    let db = repo.path().join(".graphctx/graph.db");
    let _held =
        graphctx::store::lock::WriteLock::acquire(&graphctx::store::Location::Sqlite(db)).unwrap();
    let out = graphctx(repo.path(), &["index", "--no-wait"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("index busy"), "{}", stderr(&out));
}

#[test]
fn killing_an_index_run_leaves_a_database_the_next_run_completes() {
    // A tree big enough that the run takes a while: the fixture plus many
    // copies of real sources.
    let repo = shapes_copy();
    for i in 0..40 {
        copy_own_sources(&repo.path().join(format!("src/copy{i}")));
    }
    let started = std::time::Instant::now();
    let expected = {
        let fresh = tempfile::tempdir().unwrap();
        let db = fresh.path().join("g.db");
        let out = graphctx(
            repo.path(),
            &["--db", db.to_str().unwrap(), "index", "--json"],
        );
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        (
            v["entities"].clone(),
            v["edges"].clone(),
            v["unresolved"].clone(),
        )
    };
    // Kills early (walk, parse) and then spread over the whole run as
    // long as it took here, so some land while stages are written chunk
    // by chunk and while the finished file is synced and linked.
    let whole_ms = started.elapsed().as_millis() as u64;
    let spread = [15u64, 45, 75, 95].map(|pct| whole_ms * pct / 100);
    for delay_ms in [20u64].into_iter().chain(spread) {
        let db = tempfile::tempdir().unwrap();
        let db_path = db.path().join("g.db");
        let mut child = Command::new(env!("CARGO_BIN_EXE_graphctx"))
            .args(["--db", db_path.to_str().unwrap(), "index"])
            .current_dir(repo.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        // A first index is built aside: what a reader finds at the
        // database's path is no index or the whole one.
        if db_path.exists() {
            assert_eq!(
                stored_counts(repo.path(), &db_path),
                expected,
                "a reader after a kill at {delay_ms} ms found half an index"
            );
        }
        let out = graphctx(
            repo.path(),
            &["--db", db_path.to_str().unwrap(), "index", "--json"],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "after kill at {delay_ms} ms: {}",
            stderr(&out)
        );
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(
            (
                v["entities"].clone(),
                v["edges"].clone(),
                v["unresolved"].clone()
            ),
            expected,
            "after kill at {delay_ms} ms"
        );
        let left: Vec<_> = std::fs::read_dir(db.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".building"))
            .collect();
        assert!(left.is_empty(), "build files left behind: {left:?}");
    }
}

/// Entities, edges and unresolved references as the stored totals say,
/// read without bringing the index current.
fn stored_counts(
    repo: &Path,
    db: &Path,
) -> (serde_json::Value, serde_json::Value, serde_json::Value) {
    let out = graphctx(
        repo,
        &[
            "--db",
            db.to_str().unwrap(),
            "query",
            "--json",
            "?[e, d, u] := *code_stats{graph: 'code', entities: e, edges: d, unresolved: u}",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let row = &v["rows"][0];
    (row[0].clone(), row[1].clone(), row[2].clone())
}

#[test]
fn killing_a_run_over_an_existing_index_leaves_the_old_index_readable() {
    // An index of a tree of real sources, then an edit to every file: the
    // run that rewrites them all is killed at several moments of its
    // course. Readers after each kill find the old index or the new one,
    // whole.
    let repo = shapes_copy();
    for i in 0..8 {
        copy_own_sources(&repo.path().join(format!("src/copy{i}")));
    }
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("g.db");
    let db_arg = db_path.to_str().unwrap();
    let out = graphctx(repo.path(), &["--db", db_arg, "index", "--no-history"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let before = stored_counts(repo.path(), &db_path);
    let mut rs_files = Vec::new();
    collect_rs(&repo.path().join("src"), &mut rs_files);
    for f in &rs_files {
        let mut text = std::fs::read_to_string(f).unwrap();
        text.push_str("\npub fn appended_for_the_kill_test() {}\n");
        std::fs::write(f, text).unwrap();
    }
    let (after, full_run) = {
        let fresh = tempfile::tempdir().unwrap();
        let fresh_db = fresh.path().join("g.db");
        let started = std::time::Instant::now();
        graphctx(
            repo.path(),
            &["--db", fresh_db.to_str().unwrap(), "index", "--no-history"],
        );
        (stored_counts(repo.path(), &fresh_db), started.elapsed())
    };
    assert_ne!(before, after);
    // Kills spread over the run: parsing, resolving, writing.
    for share in [0.2, 0.5, 0.8, 0.95] {
        let delay = full_run.mul_f64(share);
        let delay_ms = delay.as_millis();
        let mut child = Command::new(env!("CARGO_BIN_EXE_graphctx"))
            .args(["--db", db_arg, "index", "--no-history"])
            .current_dir(repo.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let found = stored_counts(repo.path(), &db_path);
        assert!(
            found == before || found == after,
            "a reader after a kill at {delay_ms} ms found {found:?}, neither {before:?} nor {after:?}"
        );
    }
    let out = graphctx(repo.path(), &["--db", db_arg, "index", "--no-history"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stored_counts(repo.path(), &db_path), after);
}

fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn context_from_the_command_line() {
    let repo = shapes_copy();
    graphctx(repo.path(), &["index", "--no-history"]);
    // JSON on stdout, within the budget.
    let out = graphctx(
        repo.path(),
        &[
            "context",
            "--file",
            "src/geometry/mod.rs",
            "--budget",
            "3000",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(doc["token_count"].as_u64().unwrap() <= 3000);
    // Format E into a file.
    let target = repo.path().join("ctx.e");
    let out = graphctx(
        repo.path(),
        &[
            "context",
            "src/geometry/mod.rs-geometry-Rect",
            "--format",
            "e",
            "--hops",
            "1",
            "--out",
            target.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains("## Nodes\nRect|struct|src/geometry/mod.rs-geometry-Rect|"));
    assert!(text.contains("\nRect -im-> Area"), "{text}");
    // Errors are seed 004 objects on stdout with exit code 2.
    let out = graphctx(
        repo.path(),
        &["context", "src/geometry/mod.rs-geometry-Rectangle"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(err["error"], "entity_not_found");
    assert_eq!(err["suggestions"][0], "src/geometry/mod.rs-geometry-Rect");
    // Bad arguments are usage errors.
    let out = graphctx(repo.path(), &["context", "--hops", "7", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--hops must be between 0 and 3"));
    let out = graphctx(repo.path(), &["cycles", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Answers describe the files on disk: an edit is taken in before the
/// next answer, and while another process holds the write lock the answer
/// names the files it cannot reflect.
#[test]
fn answers_follow_edits_made_just_before() {
    let repo = shapes_copy();
    let out = graphctx(repo.path(), &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let util = repo.path().join("src/util.rs");
    let mut text = std::fs::read_to_string(&util).unwrap();
    text.push_str("\n/// Added after indexing.\npub fn brand_new(x: u8) -> u8 {\n    x\n}\n");
    std::fs::write(&util, &text).unwrap();

    let out = graphctx(
        repo.path(),
        &["context", "--name", "brand_new", "--format", "e"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = stdout(&out);
    assert!(
        doc.contains("brand_new|fn|src/util.rs-util-brand_new|src/util.rs:"),
        "{doc}"
    );
    assert!(
        doc.contains("pub fn brand_new(x: u8) -> u8|Added after indexing."),
        "{doc}"
    );
    assert!(!doc.contains("# stale:"), "{doc}");
    let out = graphctx(
        repo.path(),
        &["callers", "src/util.rs-util-brand_new", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Another process writing: the answer names what it cannot reflect.
    let location = graphctx::store::Location::default_for(&repo.path().canonicalize().unwrap());
    let lock = graphctx::store::lock::WriteLock::acquire(&location).unwrap();
    std::fs::write(&util, text.replace("brand_new", "renamed_fn")).unwrap();
    let out = graphctx(
        repo.path(),
        &["context", "src/util.rs-util-clamp_scale", "--no-cache"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        doc["stale_files"],
        serde_json::json!(["src/util.rs"]),
        "{doc}"
    );
    let out = graphctx(
        repo.path(),
        &["context", "src/util.rs-util-clamp_scale", "--format", "e"],
    );
    assert!(
        stdout(&out).contains("\n# stale: src/util.rs ("),
        "{}",
        stdout(&out)
    );
    let out = graphctx(repo.path(), &["blast", "src/util.rs-util-clamp_scale"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("src/util.rs"), "{}", stderr(&out));
    drop(lock);
    // Once the writer is gone, the next answer takes the edit in.
    let out = graphctx(
        repo.path(),
        &["context", "--name", "renamed_fn", "--format", "e"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).contains("# stale:"));
}

#[test]
fn a_recorded_walk_sees_new_files_and_directories() {
    let repo = shapes_copy();
    // Settled, as a tree is between edits: a manifest or ignore file
    // changed in the last moments is never trusted to a record.
    backdate(repo.path());
    let out = graphctx(repo.path(), &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The second run records the walk beside the database.
    let out = graphctx(repo.path(), &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let record = repo.path().join(".graphctx/graph.db.walk");
    assert!(record.is_file());
    // A module in a new directory, declared by an edited file.
    let lib = repo.path().join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push_str("\npub mod fresh;\n");
    std::fs::write(&lib, text).unwrap();
    std::fs::create_dir(repo.path().join("src/fresh")).unwrap();
    std::fs::write(
        repo.path().join("src/fresh/mod.rs"),
        "/// Made after the walk was recorded.\npub fn fresh_fn() {}\n",
    )
    .unwrap();
    let out = graphctx(repo.path(), &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["walk_kept"], serde_json::json!(false), "{summary}");
    let out = graphctx(repo.path(), &["entities", "--json"]);
    assert!(stdout(&out).contains("fresh_fn"), "{}", stdout(&out));
    // Nothing changed since: the recorded walk holds.
    let out = graphctx(repo.path(), &["index", "--json"]);
    let summary: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(summary["walk_kept"], serde_json::json!(true), "{summary}");
    // A reading command brings the index current the same way, and
    // records its walk too.
    std::fs::remove_file(&record).unwrap();
    let out = graphctx(
        repo.path(),
        &["context", "--file", "src/fresh/mod.rs", "--format", "e"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("fresh_fn"), "{}", stdout(&out));
    assert!(record.is_file());
}

/// Every file and directory under `dir` made a minute old.
fn backdate(dir: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            backdate(&path);
        }
        std::fs::File::open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    std::fs::File::open(dir).unwrap().set_modified(old).unwrap();
}
