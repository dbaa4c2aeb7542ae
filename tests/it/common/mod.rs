//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod chromium;
pub mod lsp_rpc;
pub mod mcp_client;
pub mod renderers;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use graphctx::index::{index_repository, IndexOptions, IndexSummary};
use graphctx::store::value::display;
use graphctx::store::{schema, Location, Store};

/// Whether a test client is missing and may be skipped: only outside CI,
/// and only when GRAPHCTX_SKIP_CLIENT_TESTS is set. Otherwise a missing
/// client fails the test.
pub fn client_missing(what: &str, install: &str) -> bool {
    if std::env::var_os("GRAPHCTX_SKIP_CLIENT_TESTS").is_some() && std::env::var_os("CI").is_none()
    {
        eprintln!("\n!!! SKIPPED: {what} is not installed ({install}); GRAPHCTX_SKIP_CLIENT_TESTS is set\n");
        return true;
    }
    panic!("{what} is not installed: run {install} (or set GRAPHCTX_SKIP_CLIENT_TESTS=1 locally to skip)");
}

/// Run the `graphctx` binary in `dir` with `args`, feeding it `stdin`.
pub fn graphctx(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    run_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_graphctx"))
            .args(args)
            .current_dir(dir),
        stdin,
    )
}

/// Run `cmd` to its end, feeding it `stdin` (none: an empty stdin).
pub fn run_with_stdin(cmd: &mut Command, stdin: Option<&str>) -> Output {
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Run git in `dir` as a test author; the command must succeed.
pub fn git(dir: &Path, args: &[&str]) {
    let st = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=graphctx",
            "-c",
            "user.email=graphctx@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git runs");
    assert!(st.success(), "git {args:?}");
}

/// Write `text` to `rel` under `root`, making the directories it needs.
pub fn write_file(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A temporary directory holding a Cargo package named `name` (edition
/// 2021), with its manifest and nothing else yet.
pub fn temp_package(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_file(
        dir.path(),
        "Cargo.toml",
        &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
    );
    dir
}

pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dst = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dst).unwrap();
            copy_dir(&entry.path(), &dst);
        } else {
            std::fs::copy(entry.path(), &dst).unwrap();
        }
    }
}

/// The store at `location` opened as graphctx opens it, migrated: its
/// schema is the latest.
pub fn open_migrated(location: &Location) -> Store {
    let store = Store::open(location).unwrap();
    assert_eq!(
        schema::current_version(&store).unwrap(),
        schema::latest_version()
    );
    store
}

pub fn index(store: &Store, root: &Path) -> IndexSummary {
    index_repository(store, root, &IndexOptions::default()).expect("index runs")
}

pub fn index_fresh(root: &Path) -> (Store, IndexSummary) {
    let store = Store::memory().unwrap();
    let s = index(&store, root);
    (store, s)
}

/// The relations that make up a code graph, each sorted; `graph.seq`
/// (how many runs it took) is left out on purpose.
pub const GRAPH_RELATIONS: &[&str] = &[
    "node",
    "edge",
    "code_entity",
    "code_file_entities",
    "code_file",
    "code_extract",
    "code_interface",
    "code_names",
    "code_unresolved",
    "code_file_edges",
    "code_stats",
    "code_usage",
    "code_usage_version",
    "code_entity_texts",
    "code_word",
    "code_text_version",
    "code_file_text",
    "code_file_word",
];

pub fn dump(store: &Store) -> Vec<(String, Vec<String>)> {
    GRAPH_RELATIONS
        .iter()
        .map(|r| {
            let rows = store.dump(r).unwrap();
            (
                r.to_string(),
                rows.iter()
                    .map(|row| row.iter().map(display).collect::<Vec<_>>().join(" | "))
                    .collect(),
            )
        })
        .collect()
}

/// Compare with a golden file; `UPDATE_GOLDEN=1` rewrites it instead.
pub fn assert_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing golden file {}; run with UPDATE_GOLDEN=1",
            path.display()
        )
    });
    if expected != actual {
        let diff: Vec<String> = diff_lines(&expected, actual);
        panic!(
            "{} differs from the golden file ({} lines differ):\n{}",
            name,
            diff.len(),
            diff.join("\n")
        );
    }
}

fn diff_lines(expected: &str, actual: &str) -> Vec<String> {
    let e: std::collections::BTreeSet<&str> = expected.lines().collect();
    let a: std::collections::BTreeSet<&str> = actual.lines().collect();
    e.difference(&a)
        .map(|l| format!("- {l}"))
        .chain(a.difference(&e).map(|l| format!("+ {l}")))
        .collect()
}

/// This project's sources, every crate's `src` folder, copied under
/// `dst` (a folder each): real code, a few hundred files.
pub fn copy_own_sources(dst: &Path) {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = vec![("graphctx".to_string(), here.join("src"))];
    for entry in std::fs::read_dir(here.join("crates")).unwrap() {
        let krate = entry.unwrap().path();
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        sources.push((name, krate.join("src")));
    }
    for (name, src) in sources {
        let to = dst.join(name);
        std::fs::create_dir_all(&to).unwrap();
        copy_dir(&src, &to);
    }
}
