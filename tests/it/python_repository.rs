//! A Python repository gets what a Rust one gets from the shared code:
//! `graphctx status` names its language, git history gives co-change, a
//! watching server reacts to its files and manifests, keys read as
//! Python paths, and a mistyped key gets suggestions. The `python`
//! fixture, committed to git in several commits.

use crate::common;

use common::{copy_dir, fixture, git, graphctx, index, stderr, stdout};
use graphctx::emit::entity::{item_name, qualified_path};
use graphctx::index::history::cochanged_with;
use graphctx::serve::watch::relevant;
use graphctx::store::Store;

const MODELS: &str = "src/shop/models.py";
const STORE: &str = "src/shop/store.py";
const HELPERS: &str = "src/shop/ns/helpers.py";

/// The fixture in one commit, then two commits that change the models
/// and the store together, and one that changes the helpers alone.
fn python_repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_dir(&fixture("python"), root);
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "the shop"]);
    for n in 0..2 {
        for file in [MODELS, STORE] {
            let mut text = std::fs::read_to_string(root.join(file)).unwrap();
            text.push_str(&format!("\n# change {n}\n"));
            std::fs::write(root.join(file), text).unwrap();
        }
        git(root, &["commit", "-qam", "models and store together"]);
    }
    let mut text = std::fs::read_to_string(root.join(HELPERS)).unwrap();
    text.push_str("\n# alone\n");
    std::fs::write(root.join(HELPERS), text).unwrap();
    git(root, &["commit", "-qam", "helpers alone"]);
    dir
}

#[test]
fn status_counts_a_python_repository_as_python() {
    let repo = python_repository();
    let out = graphctx(repo.path(), &["index"], None);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&out)
    );
    let out = graphctx(repo.path(), &["status", "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let s: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let languages = s["languages"].as_object().unwrap();
    assert_eq!(
        languages.keys().collect::<Vec<_>>(),
        ["python"],
        "{languages:?}"
    );
    let python = &languages["python"];
    assert_eq!(python["files"], s["totals"]["files"]);
    assert_eq!(python["entities"], s["totals"]["entities"]);
    assert_eq!(python["edges"], s["totals"]["edges"]);
    assert!(python["entities"].as_i64().unwrap() > 10, "{python}");
    let text = stdout(&graphctx(repo.path(), &["status"], None));
    assert!(
        text.lines()
            .any(|l| l.starts_with("python ") && l.contains(" files, ")),
        "{text}"
    );
    assert!(!text.contains("rust"), "{text}");
}

#[test]
fn a_mixed_repository_counts_each_language_and_the_graph() {
    let repo = python_repository();
    let root = repo.path();
    common::write_file(root, "native/Cargo.toml", "[package]\nname = \"native\"\n");
    common::write_file(root, "native/src/lib.rs", "pub fn speed() -> u32 { 1 }\n");
    assert!(graphctx(root, &["index"], None)
        .status
        .code()
        .is_some_and(|c| c <= 1));
    let out = graphctx(root, &["status", "--json"], None);
    let s: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rust = &s["languages"]["rust"];
    assert_eq!(rust["files"], 1, "{s}");
    assert!(rust.get("edges").is_none(), "edges are the graph's: {s}");
    let files = |l: &str| s["languages"][l]["files"].as_i64().unwrap();
    assert_eq!(files("rust") + files("python"), s["totals"]["files"]);
    let text = stdout(&graphctx(root, &["status"], None));
    for start in ["rust ", "python ", "totals "] {
        assert!(
            text.lines().any(|l| l.starts_with(start)),
            "{start}: {text}"
        );
    }
}

#[test]
fn git_history_of_python_files_gives_co_change() {
    let repo = python_repository();
    let store = Store::memory().unwrap();
    index(&store, repo.path());
    let with_models = cochanged_with(&store, "code", &[MODELS.to_string()]).unwrap();
    let with_helpers = cochanged_with(&store, "code", &[HELPERS.to_string()]).unwrap();
    // Three commits together (the first one had every file) against one.
    assert!(
        with_models[STORE] > with_helpers[MODELS],
        "{with_models:?} {with_helpers:?}"
    );
    assert!(
        !with_models.contains_key("pyproject.toml"),
        "{with_models:?}"
    );
}

#[test]
fn a_watching_server_reacts_to_python_files_and_manifests() {
    let repo = python_repository();
    let root = repo.path();
    for path in [
        MODELS,
        "src/shop/models.pyi",
        "pyproject.toml",
        "setup.cfg",
        ".gitignore",
    ] {
        assert!(relevant(root, &root.join(path)), "{path}");
    }
    for path in ["README.md", ".graphctx/graph.db", ".git/index", "notes.txt"] {
        assert!(!relevant(root, &root.join(path)), "{path}");
    }
}

#[test]
fn python_keys_read_as_python_paths() {
    let key = "src/shop/models.py-shop.models-Cart.add";
    assert_eq!(qualified_path(key), "shop.models.Cart.add");
    assert_eq!(item_name(key), "add");
    assert_eq!(item_name("src/shop/models.py-shop.models"), "models");
    assert_eq!(
        item_name("src/app-v2/make.py-make-create_app().helper#2"),
        "helper"
    );
    // Rust keys read as before.
    let rust = "src/store/cache.rs-store::cache-Cache::warm";
    assert_eq!(qualified_path(rust), "crate::store::cache::Cache::warm");
    assert_eq!(item_name(rust), "warm");
    assert_eq!(qualified_path("src/lib.rs-crate-run"), "crate::run");
}

#[test]
fn a_mistyped_python_key_gets_suggestions_from_its_file() {
    let repo = python_repository();
    assert!(graphctx(repo.path(), &["index"], None)
        .status
        .code()
        .is_some_and(|c| c <= 1));
    let out = graphctx(
        repo.path(),
        &["callers", "src/shop/models.py-shop.models-Cart.ad"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("did you mean: src/shop/models.py-shop.models-Cart.add"),
        "{err}"
    );
}

#[test]
fn a_python_context_imports_as_python_does() {
    let repo = python_repository();
    let out = graphctx(
        repo.path(),
        &["context", "--file", STORE, "--budget", "6000"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("use crate::"), "Rust imports in {text}");
    assert!(text.contains("from shop.models import "), "{text}");
}
