//! A Tauri-style repository — a TypeScript package at the top and a Rust
//! crate in `src-tauri/` — is one index: both languages' entities, every
//! command and both servers answering across them, and git co-change
//! between a Rust file and a TypeScript file that change together.

use crate::common;

use std::path::Path;

use serde_json::{json, Map, Value};

use common::{copy_dir, fixture, git, graphctx, index, stderr, stdout};
use graphctx::index::history::cochanged_with;
use graphctx::serve::{tools, Refresh, Workspace};
use graphctx::store::Store;

const COMMAND: &str = "src-tauri/src/main.rs";
const STORE: &str = "src/store.ts";
const UTIL: &str = "src/util.js";

fn append(root: &Path, file: &str, line: &str) {
    let mut text = std::fs::read_to_string(root.join(file)).unwrap();
    text.push_str(line);
    std::fs::write(root.join(file), text).unwrap();
}

/// The TypeScript fixture with a Rust command crate beside it, in one
/// commit; then two commits that change the command and the store
/// together, and one that changes the util alone.
fn tauri_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&fixture("typescript"), root);
    common::write_file(
        root,
        "src-tauri/Cargo.toml",
        "[package]\nname = \"shop-app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    common::write_file(
        root,
        COMMAND,
        "/// Opens the shop window and reports the store it opened.\n\
         pub fn open_shop_window(title: &str) -> String {\n    window_title(title)\n}\n\n\
         fn window_title(title: &str) -> String {\n    format!(\"shop: {title}\")\n}\n\n\
         fn main() {\n    open_shop_window(\"main\");\n}\n",
    );
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "the shop app"]);
    for n in 0..2 {
        append(root, COMMAND, &format!("\n// change {n}\n"));
        append(root, STORE, &format!("\n// change {n}\n"));
        git(
            root,
            &["commit", "-qam", "the command and the store together"],
        );
    }
    append(root, UTIL, "\n// alone\n");
    git(root, &["commit", "-qam", "util alone"]);
    dir
}

#[test]
fn status_counts_both_languages_of_one_index() {
    let repo = tauri_repository();
    let root = repo.path();
    let out = graphctx(root, &["index"], None);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&out)
    );
    let out = graphctx(root, &["status", "--json"], None);
    let s: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let languages = s["languages"].as_object().unwrap();
    assert_eq!(
        languages.keys().collect::<Vec<_>>(),
        ["rust", "typescript"],
        "{s}"
    );
    let files = |l: &str| s["languages"][l]["files"].as_i64().unwrap();
    assert_eq!(files("rust"), 1, "{s}");
    assert_eq!(files("rust") + files("typescript"), s["totals"]["files"]);
}

#[test]
fn git_history_gives_co_change_across_the_languages() {
    let repo = tauri_repository();
    let store = Store::memory().unwrap();
    index(&store, repo.path());
    let with_command = cochanged_with(&store, "code", &[COMMAND.to_string()]).unwrap();
    let with_util = cochanged_with(&store, "code", &[UTIL.to_string()]).unwrap();
    // Three commits together (the first one had every file) against one.
    assert!(
        with_command.get(STORE).copied().unwrap_or(0.0)
            > with_util.get(STORE).copied().unwrap_or(0.0),
        "{with_command:?} {with_util:?}"
    );
}

#[test]
fn commands_answer_across_both_languages() {
    let repo = tauri_repository();
    let root = repo.path();
    assert!(graphctx(root, &["index"], None)
        .status
        .code()
        .is_some_and(|c| c <= 1));
    // A search finds each language's entities by their words.
    let hits = |query: &str| -> Vec<Value> {
        let out = graphctx(root, &["search", query, "--json", "--limit", "5"], None);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let window = hits("open the shop window");
    assert!(window.iter().any(|h| h["file"] == COMMAND), "{window:?}");
    let store = hits("opens a store");
    assert!(store.iter().any(|h| h["file"] == STORE), "{store:?}");
    // A context of the Rust file names its callee; one of the TypeScript
    // store names what it imports.
    for (file, name) in [(COMMAND, "window_title"), (STORE, "Cart")] {
        let out = graphctx(
            root,
            &[
                "context", "--file", file, "--format", "e", "--budget", "4000",
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).contains(name), "{file}: {}", stdout(&out));
    }
}

#[test]
fn both_servers_answer_across_both_languages() {
    let repo = tauri_repository();
    let ws = Workspace::open(repo.path(), None, "code").unwrap();
    assert!(matches!(ws.refresh(true).unwrap(), Refresh::Done(_)));
    // The editor's workspace symbols.
    let rust = ws.workspace_symbols("open_shop_window", 5).unwrap();
    assert_eq!(rust[0].name, "open_shop_window");
    let ts = ws.workspace_symbols("openStore", 5).unwrap();
    assert_eq!(ts[0].name, "openStore");
    // The agent's search tool.
    let call = |args: Value| {
        let args: Map<String, Value> = serde_json::from_value(args).unwrap();
        let r = tools::call(
            &ws,
            &graphctx::serve::registry::all(),
            "search_entities",
            &args,
        )
        .expect("tool exists");
        assert!(!r.is_error, "{}", r.text);
        serde_json::from_str::<Value>(&r.text).unwrap()
    };
    for (name, file) in [("window_title", COMMAND), ("Store", STORE)] {
        let v = call(json!({"query": name}));
        let results = v["results"].as_array().unwrap();
        assert!(results.iter().any(|r| r["file"] == file), "{name}: {v}");
    }
}
