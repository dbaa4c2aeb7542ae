//! The everyday conveniences of the command line, end to end: the index
//! kept out of git, shell completions, `graphctx status`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cli::{graphctx, shapes_copy, stderr, stdout};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=graphctx",
            "-c",
            "user.email=graphctx@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout(&out)
}

fn untracked(repo: &Path) -> String {
    git(repo, &["status", "--porcelain", "--untracked-files=all"])
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = graphctx(dir, args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

fn json(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&ok(dir, args)).unwrap()
}

#[test]
fn an_index_in_a_git_repository_leaves_git_status_clean() {
    let repo = shapes_copy();
    let root = repo.path();
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "fixture"]);
    assert_eq!(untracked(root), "");
    ok(root, &["index"]);
    assert!(root.join(".graphctx/graph.db").is_file());
    assert_eq!(untracked(root), "", "the index shows in git status");

    // A `.graphctx/` made before graphctx wrote the ignore file gets one
    // from the next command that uses it.
    let ignore = root.join(".graphctx/.gitignore");
    std::fs::remove_file(&ignore).unwrap();
    assert!(untracked(root).contains(".graphctx/graph.db"));
    ok(root, &["entities"]);
    assert_eq!(untracked(root), "");

    // A user's own ignore file is left as it is.
    std::fs::write(&ignore, "*\n!notes.md\n").unwrap();
    ok(root, &["index"]);
    assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "*\n!notes.md\n");

    // A database kept elsewhere writes nothing beside it but its own files.
    let elsewhere = tempfile::tempdir().unwrap();
    let db = elsewhere.path().join("dbs/graph.db");
    ok(root, &["--db", db.to_str().unwrap(), "index"]);
    assert!(db.is_file());
    assert!(!elsewhere.path().join("dbs/.gitignore").exists());
}

#[test]
fn completions_list_the_subcommands_for_each_shell_and_bash_s_parse() {
    let dir = tempfile::tempdir().unwrap();
    // How each shell's script offers a subcommand.
    type Offer = fn(&str) -> String;
    let offers: [(&str, Offer); 4] = [
        ("bash", |c| format!("graphctx,{c})")),
        ("zsh", |c| format!("'{c}:")),
        ("fish", |c| format!("-a \"{c}\"")),
        ("powershell", |c| format!("'{c}'")),
    ];
    for (shell, offer) in offers {
        let script = ok(dir.path(), &["completions", shell]);
        for sub in [
            "index",
            "context",
            "status",
            "export",
            "completions",
            "lsp",
            "mcp",
        ] {
            assert!(
                script.contains(&offer(sub)),
                "{shell} completions do not offer `{sub}`"
            );
        }
        assert!(
            script.contains("--budget") || script.contains("-l budget"),
            "{shell}: options of `context`"
        );
    }
    let bash = dir.path().join("graphctx.bash");
    std::fs::write(&bash, ok(dir.path(), &["completions", "bash"])).unwrap();
    let parsed = Command::new("bash").arg("-n").arg(&bash).output().unwrap();
    assert!(parsed.status.success(), "{}", stderr(&parsed));

    let bad = graphctx(dir.path(), &["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("tcsh"), "{}", stderr(&bad));
}

/// The version of package `name` in this repository's Cargo.lock.
fn locked_version(name: &str) -> String {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).unwrap();
    let at = lock
        .find(&format!("name = \"{name}\"\nversion = \""))
        .expect("package in Cargo.lock");
    let rest = &lock[at..];
    let version = rest.lines().nth(1).unwrap();
    version["version = \"".len()..version.len() - 1].to_string()
}

#[test]
fn status_reports_the_index_its_totals_runs_freshness_and_versions() {
    let repo = shapes_copy();
    let root = repo.path();
    let none = graphctx(root, &["status"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none).contains("no index found") && stderr(&none).contains("graphctx index"),
        "{}",
        stderr(&none)
    );
    assert!(!root.join(".graphctx").exists(), "status made an index");

    let summary = json(root, &["index", "--json"]);
    let s = json(root, &["status", "--json"]);
    let db = root.canonicalize().unwrap().join(".graphctx/graph.db");
    assert_eq!(s["db"], db.display().to_string());
    assert_eq!(
        s["root"],
        root.canonicalize().unwrap().display().to_string()
    );
    let on_disk: u64 = ["graph.db", "graph.db-wal", "graph.db-shm"]
        .iter()
        .filter_map(|f| std::fs::metadata(root.join(".graphctx").join(f)).ok())
        .map(|m| m.len())
        .sum();
    assert_eq!(s["size_bytes"], on_disk);
    assert!(on_disk > 0);
    let rust = &s["languages"]["rust"];
    for (field, of_summary) in [
        ("files", "files_seen"),
        ("entities", "entities"),
        ("edges", "edges"),
        ("unresolved", "unresolved"),
        ("ambiguous", "ambiguous"),
    ] {
        assert_eq!(rust[field], summary[of_summary], "{field}");
    }
    assert_eq!(s["languages"].as_object().unwrap().len(), 1);
    let run = &s["last_run"];
    assert_eq!(run["elapsed_ms"], summary["elapsed_ms"]);
    assert_eq!(run["files_parsed"], 7);
    assert_eq!(run["seq"], summary["seq"]);
    assert_eq!(s["last_change"], s["last_run"]);
    assert_eq!(s["files_changed"], 0);
    assert_eq!(s["changed_files"], serde_json::json!([]));
    let schema = graphctx::store::schema::latest_version();
    assert_eq!(
        (s["schema_version"].clone(), s["schema_supported"].clone()),
        (schema.into(), schema.into())
    );
    assert_eq!(
        s["storage_engine"],
        format!("cozo-ce {}", locked_version("cozo-ce"))
    );
    assert_eq!(s["storage_backend"], "sqlite");
    assert_eq!(s["watching"], false);

    // Edited, added and deleted files are changes; status itself does not
    // bring the index current.
    let util = root.join("src/util.rs");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, format!("{text}\npub fn added() {{}}\n")).unwrap();
    std::fs::write(root.join("src/extra.rs"), "pub fn extra() {}\n").unwrap();
    std::fs::remove_file(root.join("src/render.rs")).unwrap();
    let s = json(root, &["status", "--json"]);
    assert_eq!(s["files_changed"], 3);
    assert_eq!(
        s["changed_files"],
        serde_json::json!(["src/extra.rs", "src/render.rs", "src/util.rs"])
    );
    let text = ok(root, &["status"]);
    assert!(
        text.contains(
            "changed   3 files since the last run: src/extra.rs, src/render.rs, src/util.rs"
        ),
        "{text}"
    );

    // A command that answers brings the index current: a run that changed
    // the graph, then one that changed nothing.
    ok(root, &["callers", "src/lib.rs-crate-Area"]);
    let changed = json(root, &["status", "--json"]);
    assert_eq!(changed["files_changed"], 0);
    assert_eq!(changed["last_change"], changed["last_run"]);
    assert_eq!(changed["last_run"]["files_deleted"], 1);
    ok(root, &["callers", "src/lib.rs-crate-Area"]);
    let idle = json(root, &["status", "--json"]);
    assert_eq!(idle["last_change"], changed["last_change"]);
    assert_eq!(idle["last_run"]["files_parsed"], 0);
    assert_eq!(idle["last_run"]["seq"], changed["last_run"]["seq"]);
    assert_ne!(idle["last_run"], idle["last_change"]);

    let text = ok(root, &["status"]);
    for line in [
        format!("index     {}, ", db.display()),
        "graph     code, seq ".to_string(),
        format!("rust      {} files, ", rust["files"]),
        "changed   no files since the last run".to_string(),
        format!("schema    {schema} (this graphctx "),
        format!("engine    cozo-ce {}, sqlite", locked_version("cozo-ce")),
        "server    none watching".to_string(),
    ] {
        assert!(text.contains(&line), "no `{line}` in:\n{text}");
    }
}

#[test]
fn status_of_a_database_outside_a_repository_says_its_changes_are_unknown() {
    let repo = shapes_copy();
    let elsewhere = tempfile::tempdir().unwrap();
    let db = elsewhere.path().join("graph.db");
    let db = db.to_str().unwrap();
    ok(repo.path(), &["--db", db, "index"]);
    let s = json(repo.path(), &["--db", db, "status", "--json"]);
    assert_eq!(s["root"], Value::Null);
    assert_eq!(s["files_changed"], Value::Null);
    assert!(s["files_changed_unknown"]
        .as_str()
        .unwrap()
        .contains(".graphctx"));
    assert!(ok(repo.path(), &["--db", db, "status"]).contains("changed   unknown: "));
    let missing = elsewhere.path().join("none.db");
    let out = graphctx(repo.path(), &["--db", missing.to_str().unwrap(), "status"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("does not exist"), "{}", stderr(&out));
}

/// Poll `status --json` until `watching` is `want` (a server marks itself
/// once its watch is set up).
fn wait_watching(root: &Path, want: bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = json(root, &["status", "--json"]);
        if s["watching"] == want {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "watching never became {want}: {s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn start_mcp(root: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_graphctx"))
        .args(["mcp", "--root"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("graphctx mcp starts")
}

#[test]
fn status_sees_a_watching_server_until_it_ends_or_is_killed() {
    let repo = shapes_copy();
    let root = repo.path();
    ok(root, &["index"]);
    let mark = |pid: u32| -> PathBuf { root.join(format!(".graphctx/graph.db.watch-{pid}")) };

    // Ended by its client: the mark goes with it.
    let mut server = start_mcp(root);
    let s = wait_watching(root, true);
    assert_eq!(s["watchers"][0]["pid"], server.id());
    assert_eq!(
        s["watchers"][0]["root"],
        root.canonicalize().unwrap().display().to_string()
    );
    let text = ok(root, &["status"]);
    assert!(
        text.contains(&format!("server    watching: pid {} since ", server.id())),
        "{text}"
    );
    drop(server.stdin.take());
    server.wait().unwrap();
    assert!(!mark(server.id()).exists());
    wait_watching(root, false);

    // Killed with -9: its mark stays behind, unlocked, and is not counted.
    let mut server = start_mcp(root);
    wait_watching(root, true);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        mark(server.id()).exists(),
        "a killed server removed its mark"
    );
    let s = json(root, &["status", "--json"]);
    assert_eq!(s["watching"], false, "{s}");
    assert_eq!(s["watchers"], serde_json::json!([]));
    assert!(
        !mark(server.id()).exists(),
        "the leftover mark was not removed"
    );
}
