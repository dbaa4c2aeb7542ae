//! Property: after any sequence of edits, an incremental index equals a
//! full rebuild of the same tree.
//!
//! The tree starts as the `shapes` fixture plus some of graphctx's own
//! sources (real Rust), and each case applies a random sequence of edits —
//! delete, add (copies of real files at new paths), move, delete a line
//! range, rename an identifier everywhere in a file, truncate (syntax
//! errors), duplicate content (repeated keys), touch, edits that keep
//! every interface (a comment or a doc line inserted, a call added to a
//! function body: the run resolves the edited file alone), and edits that
//! change what names resolve to: a method added to an impl, `pub use`
//! lines added or removed, a `#[path]` module declared, the package's
//! Cargo targets changed (files moving between crates) — indexing
//! incrementally after each (mostly with the interfaces kept between runs,
//! as the servers do), and comparing every relation of the graph (the text
//! index's included) with a fresh index of the same tree.

use crate::common;

use std::path::{Path, PathBuf};

use common::{copy_dir, dump, fixture, index, index_fresh, temp_package, write_file};
use graphctx::store::value::display;
use graphctx::store::{Location, Store};
use proptest::prelude::*;

const OWN_SOURCES: &[&str] = &[
    "crates/rust/src/resolve.rs",
    "crates/index/src/pipeline/mod.rs",
    "crates/index/src/walk/mod.rs",
    "crates/store/src/lib.rs",
    "crates/base/src/model.rs",
];

const RENAMES: &[(&str, &str)] = &[
    ("Point", "Pnt"),
    ("area", "surface"),
    ("Rect", "Rectangle"),
    ("Store", "Db"),
    ("resolve", "lookup"),
    ("pub fn", "fn"),
    ("mod ", "mod renamed_"),
    ("use ", "// use "),
];

const NEW_PATHS: &[&str] = &[
    "src/extra.rs",
    "src/geometry/extra.rs",
    "src/render/deep.rs",
    "tests/more.rs",
    "crates/shapes-cli/src/helper.rs",
    "src/util.rs",
];

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize),
    Add { pool: usize, path: usize },
    Move { file: usize, path: usize },
    DeleteLines { file: usize, at: f64, len: usize },
    Rename { file: usize, rename: usize },
    Truncate { file: usize, at: f64 },
    Duplicate(usize),
    Touch(usize),
    AddMethod(usize),
    PubUse(bool),
    PathModule(usize),
    Targets(usize),
    Comment { file: usize, at: f64, doc: bool },
    AddCall(usize),
}

/// Manifests of the root package: the fixture's own, a binary whose root
/// is a library module, tests off with a `[[test]]` elsewhere, a library
/// at another path.
const MANIFESTS: &[&str] = &[
    "",
    "[[bin]]\nname = \"render-tool\"\npath = \"src/render.rs\"\n",
    "autotests = false\n\n[[test]]\nname = \"checks\"\npath = \"src/geometry/point.rs\"\n",
    "\n[lib]\npath = \"src/util.rs\"\n",
];

fn edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), any::<usize>()).prop_map(|(pool, path)| Edit::Add { pool, path }),
        (any::<usize>(), any::<usize>()).prop_map(|(file, path)| Edit::Move { file, path }),
        (any::<usize>(), 0.0..1.0f64, 1usize..40).prop_map(|(file, at, len)| Edit::DeleteLines {
            file,
            at,
            len
        }),
        (any::<usize>(), any::<usize>()).prop_map(|(file, rename)| Edit::Rename { file, rename }),
        (any::<usize>(), 0.0..1.0f64).prop_map(|(file, at)| Edit::Truncate { file, at }),
        any::<usize>().prop_map(Edit::Duplicate),
        any::<usize>().prop_map(Edit::Touch),
        any::<usize>().prop_map(Edit::AddMethod),
        any::<bool>().prop_map(Edit::PubUse),
        any::<usize>().prop_map(Edit::PathModule),
        any::<usize>().prop_map(Edit::Targets),
        (any::<usize>(), 0.0..1.0f64, any::<bool>()).prop_map(|(file, at, doc)| Edit::Comment {
            file,
            at,
            doc
        }),
        any::<usize>().prop_map(Edit::AddCall),
    ]
}

fn rust_files(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = graphctx::index::walk::walk(root)
        .files
        .into_iter()
        .map(|f| f.abs_path)
        .collect();
    out.sort();
    out
}

fn pool() -> Vec<String> {
    let mut pool: Vec<String> = rust_files(&fixture("shapes"))
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    pool.extend(
        OWN_SOURCES
            .iter()
            .map(|p| std::fs::read_to_string(here.join(p)).unwrap()),
    );
    pool
}

fn apply(root: &Path, edit: &Edit, pool: &[String]) {
    let files = rust_files(root);
    let pick = |i: usize| files.get(i % files.len().max(1)).cloned();
    let write = |p: &Path, text: &str| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    match edit {
        Edit::Delete(i) => {
            if let Some(f) = pick(*i) {
                std::fs::remove_file(f).unwrap();
            }
        }
        Edit::Add { pool: p, path } => {
            write(
                &root.join(NEW_PATHS[path % NEW_PATHS.len()]),
                &pool[p % pool.len()],
            );
        }
        Edit::Move { file, path } => {
            if let Some(f) = pick(*file) {
                let text = std::fs::read_to_string(&f).unwrap();
                std::fs::remove_file(&f).unwrap();
                write(&root.join(NEW_PATHS[path % NEW_PATHS.len()]), &text);
            }
        }
        Edit::DeleteLines { file, at, len } => {
            if let Some(f) = pick(*file) {
                let text = std::fs::read_to_string(&f).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                let start = ((lines.len() as f64) * at) as usize;
                let kept: Vec<&str> = lines
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i < start || *i >= start + len)
                    .map(|(_, l)| *l)
                    .collect();
                write(&f, &kept.join("\n"));
            }
        }
        Edit::Rename { file, rename } => {
            if let Some(f) = pick(*file) {
                let (from, to) = RENAMES[rename % RENAMES.len()];
                let text = std::fs::read_to_string(&f).unwrap();
                write(&f, &text.replace(from, to));
            }
        }
        Edit::Truncate { file, at } => {
            if let Some(f) = pick(*file) {
                let text = std::fs::read_to_string(&f).unwrap();
                let mut cut = ((text.len() as f64) * at) as usize;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                write(&f, &text[..cut]);
            }
        }
        Edit::Duplicate(i) => {
            if let Some(f) = pick(*i) {
                let text = std::fs::read_to_string(&f).unwrap();
                write(&f, &format!("{text}\n{text}"));
            }
        }
        Edit::Touch(i) => {
            if let Some(f) = pick(*i) {
                let text = std::fs::read_to_string(&f).unwrap();
                write(&f, &text);
            }
        }
        Edit::AddMethod(i) => {
            if let Some(f) = pick(*i) {
                let text = std::fs::read_to_string(&f).unwrap();
                write(
                    &f,
                    &format!("{text}\nimpl Rect {{ pub fn area(&self) -> f64 {{ 0.0 }} pub fn added(&self) -> Point {{ todo!() }} }}\n"),
                );
            }
        }
        Edit::PubUse(add) => {
            let lib = root.join("src/lib.rs");
            let text = std::fs::read_to_string(&lib).unwrap_or_default();
            let text = if *add {
                format!("{text}\npub use crate::geometry::*;\npub use crate::util::clamp_scale as scale;\n")
            } else {
                text.lines()
                    .filter(|l| !l.trim_start().starts_with("pub use"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            write(&lib, &text);
        }
        Edit::PathModule(i) => {
            let target = format!("own/m{}.rs", i % OWN_SOURCES.len());
            let host = root.join("src/geometry/mod.rs");
            let text = std::fs::read_to_string(&host).unwrap_or_default();
            write(
                &host,
                &format!("{text}\n#[path = \"../{target}\"]\npub mod via_path;\n"),
            );
        }
        Edit::Comment { file, at, doc } => {
            if let Some(f) = pick(*file) {
                let text = std::fs::read_to_string(&f).unwrap();
                let mut lines: Vec<&str> = text.lines().collect();
                let at = ((lines.len() as f64) * at) as usize;
                lines.insert(at, if *doc { "/// Noted." } else { "// noted" });
                write(&f, &lines.join("\n"));
            }
        }
        Edit::AddCall(i) => {
            if let Some(f) = pick(*i) {
                // Into the first function body: references change, what
                // other files can see does not.
                let text = std::fs::read_to_string(&f).unwrap();
                let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
                if let Some(l) = lines
                    .iter_mut()
                    .find(|l| l.contains("fn ") && l.trim_end().ends_with('{'))
                {
                    l.push_str(" let _probe = Point::new(1.0, 2.0).area(); resolve(); ");
                }
                write(&f, &lines.join("\n"));
            }
        }
        Edit::Targets(i) => {
            let manifest = root.join("Cargo.toml");
            let base = std::fs::read_to_string(fixture("shapes").join("Cargo.toml")).unwrap();
            write(
                &manifest,
                &format!("{base}{}", MANIFESTS[i % MANIFESTS.len()]),
            );
        }
    }
}

/// One index run as a server makes it: with the interfaces, symbol table
/// and walk that `cache` kept from its last run.
fn server_run(
    store: &Store,
    root: &Path,
    cache: &mut graphctx::index::InterfaceCache,
) -> graphctx::index::IndexSummary {
    graphctx::index::index_repository_cached(
        store,
        root,
        &graphctx::index::IndexOptions::default(),
        cache,
    )
    .expect("index runs")
}

fn initial_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("shapes"), dir.path());
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (i, p) in OWN_SOURCES.iter().enumerate() {
        let dst = dir.path().join(format!("src/own/m{i}.rs"));
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(here.join(p), dst).unwrap();
    }
    dir
}

/// How the index in `store` differs from a fresh rebuild of `root`: the
/// first relation whose rows differ, with up to five rows only each side
/// holds; `None` when every relation is the same.
fn differs_from_rebuild(store: &Store, root: &Path) -> Option<String> {
    let (fresh, _) = index_fresh(root);
    let (a, b) = (dump(store), dump(&fresh));
    a.iter().zip(b.iter()).find_map(|((name, rows_a), (_, rows_b))| {
        let only_inc: Vec<&String> = rows_a.iter().filter(|r| !rows_b.contains(r)).take(5).collect();
        let only_full: Vec<&String> = rows_b.iter().filter(|r| !rows_a.contains(r)).take(5).collect();
        (!only_inc.is_empty() || !only_full.is_empty()).then(|| {
            format!("relation {name} differs\nonly incremental: {only_inc:#?}\nonly rebuild: {only_full:#?}")
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn incremental_index_equals_full_rebuild(edits in prop::collection::vec(edit_strategy(), 1..7)) {
        let pool = pool();
        let tree = initial_tree();
        let db = tempfile::tempdir().unwrap();
        let store = Store::open(&Location::Sqlite(db.path().join("graph.db"))).unwrap();
        // Most runs keep the interfaces and the symbol table between runs
        // as a server does; every third is another process's, which the
        // cache must notice.
        // And the syntax tree of every file there at the start, as a
        // server holds the files open in an editor: those parse
        // incrementally from the second run on.
        let trees = std::sync::Arc::new(graphctx::index::held_trees::HeldTrees::default());
        for f in rust_files(tree.path()) {
            let rel = f.strip_prefix(tree.path()).unwrap().to_string_lossy().replace('\\', "/");
            trees.want(&rel);
        }
        let mut cache = graphctx::index::InterfaceCache::with_symbol_table().with_trees(trees.clone());
        let mut run = |step: usize| {
            if step % 3 == 2 {
                index(&store, tree.path());
            } else if step % 4 == 3 {
                // Another process's run, then a server started on the
                // current index: its first run changes nothing, and its
                // cache is read ahead of the next save.
                index(&store, tree.path());
                let mut fresh_cache = graphctx::index::InterfaceCache::with_symbol_table().with_trees(trees.clone());
                let first = server_run(&store, tree.path(), &mut fresh_cache);
                assert_eq!(first.rows_written, 0);
                assert!(fresh_cache.is_empty());
                fresh_cache.warm(&store, "code").expect("warm");
                assert!(!fresh_cache.is_empty());
                cache = fresh_cache;
            } else {
                server_run(&store, tree.path(), &mut cache);
                // A server warms after its first run, changing or not: the
                // table's indexes for edits are then made ahead of the
                // next edit instead of by it.
                if step % 2 == 1 {
                    cache.warm(&store, "code").expect("warm");
                }
            }
        };
        // Directories and manifests settle between edits, as a server's
        // tree does, so the server's runs check the kept walk by `stat`.
        let settled = |step: u64| {
            std::time::SystemTime::now() - std::time::Duration::from_secs(600 - step)
        };
        settle_tree(tree.path(), settled(0));
        run(0);
        for (step, edit) in edits.iter().enumerate() {
            apply(tree.path(), edit, &pool);
            settle_tree(tree.path(), settled(step as u64 + 1));
            run(step + 1);
            prop_assert!(trees.bytes() > 0);
            let differs = differs_from_rebuild(&store, tree.path());
            prop_assert!(differs.is_none(), "after step {} ({:?}) {}", step, edit, differs.unwrap_or_default());
        }
    }
}

/// Edits that leave most interfaces alone: comments (docs too), a call
/// added, lines deleted, a file touched, a method added.
fn body_edit_strategy() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<usize>(), 0.0..1.0f64, any::<bool>()).prop_map(|(file, at, doc)| Edit::Comment {
            file,
            at,
            doc
        }),
        2 => any::<usize>().prop_map(Edit::AddCall),
        1 => (any::<usize>(), 0.0..1.0f64, 1usize..6).prop_map(|(file, at, len)| Edit::DeleteLines {
            file,
            at,
            len
        }),
        1 => any::<usize>().prop_map(Edit::Touch),
        1 => any::<usize>().prop_map(Edit::AddMethod),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every run a command-line run, which keeps nothing between runs and
    /// takes an edited file's stored links when the edit moved lines only:
    /// after each edit the index equals a rebuild.
    #[test]
    fn command_line_runs_after_body_edits_equal_a_rebuild(edits in prop::collection::vec(body_edit_strategy(), 1..6)) {
        let pool = pool();
        let tree = initial_tree();
        let store = Store::memory().unwrap();
        index(&store, tree.path());
        for (step, edit) in edits.iter().enumerate() {
            apply(tree.path(), edit, &pool);
            index(&store, tree.path());
            let differs = differs_from_rebuild(&store, tree.path());
            prop_assert!(differs.is_none(), "after step {} ({:?}) {}", step, edit, differs.unwrap_or_default());
        }
    }
}

#[test]
fn reindexing_an_unchanged_tree_writes_nothing() {
    let tree = initial_tree();
    let store = Store::memory().unwrap();
    let first = index(&store, tree.path());
    assert!(first.rows_written > 0);
    let second = index(&store, tree.path());
    assert_eq!(second.rows_written, 0);
    assert_eq!(second.files_parsed, 0);
    assert_eq!(second.seq, first.seq);
}

#[test]
fn a_changed_file_reresolves_references_from_other_files() {
    let tree = initial_tree();
    let store = Store::memory().unwrap();
    index(&store, tree.path());
    let key = "src/util.rs-util-clamp_scale";
    let callers = |s: &Store| {
        graphctx::graph::edges_of(s, "code", key, graphctx::graph::Direction::In)
            .unwrap()
            .into_iter()
            .filter(|e| e.rel == "calls")
            .count()
    };
    assert_eq!(callers(&store), 1);
    // Rename the function: the caller in lib.rs (unchanged) loses its edge…
    let util = tree.path().join("src/util.rs");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("clamp_scale", "clamp_factor")).unwrap();
    let s = index(&store, tree.path());
    assert_eq!(s.files_parsed, 1);
    assert!(!graphctx::graph::entity_exists(&store, "code", key).unwrap());
    let unresolved =
        graphctx::graph::unresolved_of(&store, "code", "src/lib.rs-crate-total_area").unwrap();
    assert!(unresolved.iter().any(|u| u.text == "clamp_scale"));
    // …and gets it back when the name returns.
    std::fs::write(&util, text).unwrap();
    index(&store, tree.path());
    assert_eq!(callers(&store), 1);
}

/// A file's stored edge list that cannot be read (a damaged row) is not
/// taken as "no edges": the run finds the file's edges by a scan, so the
/// edges the rename removes are gone as in a rebuild.
#[test]
fn a_damaged_edge_list_does_not_leave_stale_edges() {
    let tree = initial_tree();
    let store = Store::memory().unwrap();
    index(&store, tree.path());
    let lists = |s: &Store| s.dump("code_file_edges").unwrap().len();
    assert!(lists(&store) > 0);
    // The list of the file the edit renames a function in.
    store
        .write(
            "?[graph, file, edges] := *code_file_edges{graph, file}, file = 'src/util.rs', \
             edges = decode_base64('bm90IGEgbGlzdA==') :put code_file_edges {graph, file => edges}",
            graphctx::store::Params::new(),
        )
        .unwrap();
    let util = tree.path().join("src/util.rs");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("clamp_scale", "clamp_factor")).unwrap();
    index(&store, tree.path());
    let (fresh, _) = index_fresh(tree.path());
    assert_eq!(dump(&store), dump(&fresh));
}

#[test]
fn an_edit_that_keeps_every_interface_resolves_only_the_edited_file() {
    let tree = initial_tree();
    let store = Store::memory().unwrap();
    let first = index(&store, tree.path());
    assert_eq!(first.files_resolved, first.files_seen);
    let lib = tree.path().join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    // A body now calls `clamp_scale` twice more and every line moves: a
    // function's references are kept once each, so the extract differs in
    // lines alone, and the stored links are taken with their lines moved.
    let moved = format!(
        "// A comment that moves every line.\n{}",
        text.replacen(
            "clamp_scale(1.0)",
            "clamp_scale(clamp_scale(clamp_scale(1.0)))",
            1
        )
    );
    std::fs::write(&lib, &moved).unwrap();
    let body = index(&store, tree.path());
    assert_eq!(
        (body.files_parsed, body.files_resolved, body.files_replayed),
        (1, 0, 1)
    );
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
    // A body now calls what it did not: the other files cannot see it,
    // and the edited file alone is resolved.
    let edited = moved.replacen("clamp_scale(1.0)", "clamp_scale(f64::from(1u8))", 1);
    std::fs::write(&lib, &edited).unwrap();
    let body = index(&store, tree.path());
    assert_eq!(
        (body.files_parsed, body.files_resolved, body.files_replayed),
        (1, 1, 0)
    );
    let (fresh, fresh_summary) = index_fresh(tree.path());
    assert_eq!(dump(&store), dump(&fresh));
    assert_eq!(
        (body.entities, body.edges, body.unresolved, body.ambiguous),
        (
            fresh_summary.entities,
            fresh_summary.edges,
            fresh_summary.unresolved,
            fresh_summary.ambiguous
        )
    );
    // A new signature is seen by the files that mention it: `util.rs`
    // itself and `lib.rs`, its one caller.
    let util = tree.path().join("src/util.rs");
    let util_text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(
        &util,
        util_text.replace("(s: f64) -> f64", "(s: f32) -> f64"),
    )
    .unwrap();
    let iface = index(&store, tree.path());
    assert_eq!((iface.files_parsed, iface.files_resolved), (1, 2));
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
    // A glob re-export hands a whole module on: every file is resolved.
    std::fs::write(&lib, format!("{edited}\npub use crate::geometry::*;\n")).unwrap();
    let glob = index(&store, tree.path());
    assert_eq!(glob.files_resolved, first.files_seen);
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
}

#[test]
fn an_interface_change_reaches_the_files_that_see_it_through_declared_types() {
    // `c.rs` never names `U`: it calls `make()`, whose return type is the
    // alias. Retargeting the alias must re-resolve `c.rs` too.
    let tree = temp_package("chain");
    let write = |rel: &str, text: &str| write_file(tree.path(), rel, text);
    write("src/lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n");
    write(
        "src/a.rs",
        "pub struct V;\nimpl V { pub fn poke(&self) {} }\npub struct W;\nimpl W { pub fn poke(&self) {} }\npub type U = V;\n",
    );
    write("src/b.rs", "pub fn make() -> crate::a::U { todo!() }\n");
    write("src/c.rs", "fn f() { crate::b::make().poke(); }\n");
    write("src/d.rs", "fn g() -> u8 { 0 }\n");
    let store = Store::memory().unwrap();
    index(&store, tree.path());
    let callee = |store: &Store| {
        store
            .dump("edge")
            .unwrap()
            .iter()
            .map(|r| format!("{r:?}"))
            .filter(|r| r.contains("c.rs") && r.contains("poke"))
            .collect::<Vec<_>>()
    };
    let before = callee(&store);
    assert!(before.iter().any(|e| e.contains("a-V::poke")), "{before:?}");
    write(
        "src/a.rs",
        "pub struct V;\nimpl V { pub fn poke(&self) {} }\npub struct W;\nimpl W { pub fn poke(&self) {} }\npub type U = W;\n",
    );
    let run = index(&store, tree.path());
    // a.rs (edited), b.rs (names `U`), c.rs (calls `make`); not lib.rs or d.rs.
    assert_eq!((run.files_parsed, run.files_resolved), (1, 3));
    let after = callee(&store);
    assert!(after.iter().any(|e| e.contains("a-W::poke")), "{after:?}");
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
}

#[test]
fn a_glob_import_cycle_resolves_alike_in_a_first_index_and_after_an_edit() {
    // `base` re-exports `matrix::*`; `matrix` imports `Unit` back through
    // `base`. `a.rs`, resolved first, asks `base` for `Unit` before
    // `matrix` does: the first index must still find `norm`'s `Unit`, as
    // re-resolving `matrix.rs` alone after an edit does.
    let tree = temp_package("cyc");
    let write = |rel: &str, text: &str| write_file(tree.path(), rel, text);
    write("src/lib.rs", "pub mod a;\npub mod base;\n");
    write("src/a.rs", "pub fn first(_: crate::base::Unit) {}\n");
    write(
        "src/base/mod.rs",
        "mod matrix;\nmod unit;\npub use self::matrix::*;\npub use self::unit::*;\n",
    );
    let matrix = "use crate::base::Unit;\npub fn norm(u: Unit) -> Unit { u }\n";
    write("src/base/matrix.rs", matrix);
    write("src/base/unit.rs", "pub struct Unit;\n");
    let store = Store::memory().unwrap();
    index(&store, tree.path());
    let norm_uses_unit = |store: &Store| {
        store
            .dump("edge")
            .unwrap()
            .iter()
            .map(|r| format!("{r:?}"))
            .any(|r| r.contains("matrix-norm") && r.contains("unit-Unit"))
    };
    assert!(norm_uses_unit(&store));
    // A body that calls what it did not: `matrix.rs` alone is resolved.
    write(
        "src/base/matrix.rs",
        &matrix.replace("{ u }", "{ let _ = std::mem::size_of::<Unit>(); u }"),
    );
    let run = index(&store, tree.path());
    assert_eq!((run.files_resolved, run.files_replayed), (1, 0));
    assert!(norm_uses_unit(&store));
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
}

#[test]
fn a_kept_symbol_table_follows_every_interface_change() {
    // As a server runs: the interfaces and the symbol table kept between
    // runs. A body edit resolves against the kept table; after a run that
    // renamed a function, the next body edit must see the new name.
    let tree = initial_tree();
    let store = Store::memory().unwrap();
    let mut cache = graphctx::index::InterfaceCache::with_symbol_table();
    let mut run = || server_run(&store, tree.path(), &mut cache);
    let edit = |rel: &str, from: &str, to: &str| {
        let path = tree.path().join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{rel} has no {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    let first = run();
    assert_eq!(first.files_resolved, first.files_seen);

    edit(
        "src/lib.rs",
        "clamp_scale(1.0)",
        "clamp_scale(clamp_scale(1.0))",
    );
    let body = run();
    assert_eq!((body.files_parsed, body.files_resolved), (1, 1));
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));

    edit("src/util.rs", "fn clamp_scale(", "fn clamp_factor(");
    let renamed = run();
    // `util.rs` and `lib.rs`, the one file that mentions the old name.
    assert_eq!(renamed.files_resolved, 2);
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));

    edit("src/lib.rs", "clamp_scale(1.0)", "clamp_factor(1.0)");
    let body = run();
    assert_eq!((body.files_parsed, body.files_resolved), (1, 1));
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
}

#[test]
fn alternatives_of_one_item_in_several_files_follow_every_edit() {
    // `net::Socket` defined once per target file; each file's impl block
    // and calls take their own. Targets come and go, and a definition
    // leaves one file: a server's runs must land what a rebuild does.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("resolution"), dir.path());
    let root = dir.path();
    let store = Store::memory().unwrap();
    let mut cache = graphctx::index::InterfaceCache::with_symbol_table();
    let mut run = || server_run(&store, root, &mut cache);
    let lib = root.join("kit/src/lib.rs");
    let unix = root.join("kit/src/sys/unix/net.rs");
    let wasi = root.join("kit/src/sys/wasi/net.rs");
    let unix_text = std::fs::read_to_string(&unix).unwrap();
    let lib_text = std::fs::read_to_string(&lib).unwrap();
    run();
    let steps: Vec<Box<dyn Fn()>> = vec![
        // A third target: its own file and `mod` declaration.
        Box::new(|| {
            std::fs::create_dir_all(wasi.parent().unwrap()).unwrap();
            std::fs::write(&wasi, unix_text.replace("Unix", "WASI")).unwrap();
            let with = format!(
                "{lib_text}#[cfg(target_os = \"wasi\")]\n#[path = \"sys/wasi/net.rs\"]\npub mod net;\n"
            );
            std::fs::write(&lib, with).unwrap();
        }),
        // The Unix file's type goes: its impl block and calls are left
        // with the other targets' definitions, all equally far.
        Box::new(|| {
            let without = unix_text.replace("pub struct Socket {\n    fd: i32,\n}\n", "");
            assert_ne!(without, unix_text);
            std::fs::write(&unix, without).unwrap();
        }),
        // And comes back.
        Box::new(|| std::fs::write(&unix, &unix_text).unwrap()),
        // The third target goes.
        Box::new(|| {
            std::fs::remove_file(&wasi).unwrap();
            std::fs::write(&lib, &lib_text).unwrap();
        }),
    ];
    for (i, step) in steps.iter().enumerate() {
        step();
        run();
        assert_eq!(
            dump(&store),
            dump(&index_fresh(root).0),
            "after step {i}, the incremental index differs from a rebuild"
        );
    }
}

#[test]
fn usage_rows_missing_or_outdated_are_rebuilt_by_the_next_run() {
    let tree = initial_tree();
    let fresh = Store::memory().unwrap();
    index(&fresh, tree.path());
    // As a database indexed before per-entity usage existed looks after
    // migrating: the relations are there, empty.
    let store = Store::memory().unwrap();
    index(&store, tree.path());
    for rel in ["code_usage", "code_usage_version"] {
        let rows = store.dump(rel).unwrap();
        assert!(!rows.is_empty(), "{rel} is written by an index run");
        let mut batch = graphctx::store::Batch::new();
        for row in rows {
            let keys: Vec<&str> = if rel == "code_usage" {
                vec!["graph", "id"]
            } else {
                vec!["graph"]
            };
            batch.delete(rel, &keys, row[..keys.len()].to_vec());
        }
        store.apply(batch).unwrap();
    }
    // A context refuses to answer from a graph without usage rows…
    let req = graphctx::emit::ContextRequest::new(
        "code",
        graphctx::analyse::select::BaseSpec::Keys(vec!["src/util.rs-util-clamp_scale".into()]),
    );
    let counter = graphctx::support::tokens::TokenCounter::new(Default::default());
    match graphctx::emit::build_context(&store, &req, &counter) {
        Err(graphctx::emit::ContextError::Store(e)) => {
            assert!(e.to_string().contains("run `graphctx index`"), "{e}")
        }
        other => panic!(
            "expected an outdated-index error, got {:?}",
            other.map(|o| o.text)
        ),
    }
    // …and the next run over the unchanged tree fills them in.
    let second = index(&store, tree.path());
    assert!(second.rows_written > 0);
    assert_eq!(dump(&store), dump(&fresh));
    assert!(graphctx::emit::build_context(&store, &req, &counter).is_ok());
}

#[test]
fn a_first_index_built_aside_equals_one_landed_in_place() {
    // `graphctx index` builds a new database aside, landing stage by
    // stage; into an existing one a run lands in one batch. Every
    // relation must come out the same.
    use graphctx::index::{index_location, IndexOptions};
    let tree = initial_tree();
    let dir = tempfile::tempdir().unwrap();
    let aside = Location::Sqlite(dir.path().join("aside.db"));
    let in_place = Location::Sqlite(dir.path().join("in_place.db"));
    drop(Store::open(&in_place).unwrap());
    let opts = IndexOptions::default();
    let a = index_location(&aside, tree.path(), &opts).unwrap();
    let b = index_location(&in_place, tree.path(), &opts).unwrap();
    assert_eq!(a.rows_written, b.rows_written);
    assert!(!dir.path().join("aside.db.building").exists());
    let (a, b) = (
        Store::open(&aside).unwrap(),
        Store::open(&in_place).unwrap(),
    );
    let relations = a.relations().unwrap();
    assert_eq!(relations, b.relations().unwrap());
    for r in relations.iter().filter(|r| !r.contains(':')) {
        assert_eq!(a.dump(r).unwrap(), b.dump(r).unwrap(), "relation {r}");
    }
}

#[test]
fn a_first_index_landed_in_small_chunks_equals_one_landed_in_place() {
    // A database being built lands a stage's rows in chunks as its writers
    // stage them (`Store::land_when_full`). With chunks of a few rows every
    // stage lands in hundreds of pieces, cut at every kind of row, and
    // usage is computed a few entities at a time (containers shared by
    // several chunks): the result must still equal one batch landed in
    // place.
    use graphctx::index::{index_location, index_repository, IndexOptions};
    let tree = initial_tree();
    let dir = tempfile::tempdir().unwrap();
    let chunked_path = dir.path().join("chunked.db");
    let in_place = Location::Sqlite(dir.path().join("in_place.db"));
    drop(Store::open(&in_place).unwrap());
    let opts = IndexOptions::default();
    let building = Store::create_building(&chunked_path)
        .unwrap()
        .with_land_chunk_rows(7);
    let a = index_repository(&building, tree.path(), &opts).unwrap();
    building.finish_building(&chunked_path).unwrap();
    let b = index_location(&in_place, tree.path(), &opts).unwrap();
    assert_eq!(a.rows_written, b.rows_written);
    assert!(
        a.rows_written > 1000,
        "the tree is large enough for many chunks"
    );
    let (a, b) = (
        Store::open(&Location::Sqlite(chunked_path)).unwrap(),
        Store::open(&in_place).unwrap(),
    );
    let relations = a.relations().unwrap();
    assert_eq!(relations, b.relations().unwrap());
    for r in relations.iter().filter(|r| !r.contains(':')) {
        assert_eq!(a.dump(r).unwrap(), b.dump(r).unwrap(), "relation {r}");
    }
}

#[test]
fn a_first_index_landed_directly_holds_the_bytes_cozodbs_import_writes() {
    // A database being built lands its rows straight into CozoDB's table
    // (src/store/direct.rs); one indexed in place lands them through
    // CozoDB's import. Every key and value, index entries and catalogue
    // included, must be the same bytes.
    use graphctx::index::{index_location, index_repository, IndexOptions};
    let tree = initial_tree();
    let dir = tempfile::tempdir().unwrap();
    let built_path = dir.path().join("built.db");
    let in_place = Location::Sqlite(dir.path().join("in_place.db"));
    drop(Store::open(&in_place).unwrap());
    let opts = IndexOptions::default();
    // Chunks of a few rows as well: rows of one file, and index entries,
    // then land in many transactions.
    let chunked_path = dir.path().join("chunked.db");
    let chunked = Store::create_building(&chunked_path)
        .unwrap()
        .with_land_chunk_rows(7);
    index_repository(&chunked, tree.path(), &opts).unwrap();
    chunked.finish_building(&chunked_path).unwrap();
    let building = Store::create_building(&built_path).unwrap();
    let a = index_repository(&building, tree.path(), &opts).unwrap();
    let direct = building.rows_landed_directly();
    building.finish_building(&built_path).unwrap();
    let b = index_location(&in_place, tree.path(), &opts).unwrap();
    assert_eq!(a.rows_written, b.rows_written);
    // Every row but the last batch's (the graph's own row and what lands
    // with it, through CozoDB's import) landed directly.
    assert!(
        direct > a.rows_written * 9 / 10,
        "{direct} of {} rows landed directly",
        a.rows_written
    );
    let table = |path: &Path| -> Vec<(Vec<u8>, Vec<u8>)> {
        let conn = sqlite::Connection::open(path).unwrap();
        let mut rows = Vec::new();
        let mut st = conn.prepare("SELECT k, v FROM cozo ORDER BY k").unwrap();
        while st.next().unwrap() == sqlite::State::Row {
            rows.push((
                st.read::<Vec<u8>, _>(0).unwrap(),
                st.read::<Vec<u8>, _>(1).unwrap(),
            ));
        }
        rows
    };
    let (built, placed) = (table(&built_path), table(&dir.path().join("in_place.db")));
    assert_eq!(built.len(), placed.len());
    for (x, y) in built.iter().zip(&placed) {
        assert_eq!(x, y, "first differing row");
    }
    assert!(table(&chunked_path) == placed, "landed in chunks of 7 rows");
}

/// Directories, manifests and ignore files changed since the last settle
/// dated back to `when`, as a server's tree is between saves: what did
/// not change keeps the time it had, what changed gets a later one than
/// before (source files keep their times: the index decides from those).
fn settle_tree(root: &Path, when: std::time::SystemTime) {
    let set = |path: &Path| {
        let file = std::fs::File::open(path).unwrap();
        if file.metadata().unwrap().modified().unwrap() > when {
            file.set_modified(when).unwrap();
        }
    };
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != ".graphctx" {
                    stack.push(path);
                }
            } else if name == "Cargo.toml" || name == ".gitignore" {
                set(&path);
            }
        }
        set(&dir);
    }
}

#[test]
fn a_server_that_keeps_its_walk_sees_every_kind_of_change() {
    // As a server runs: the walk kept and checked by `stat`, the file
    // rows kept instead of read. Between edits the directories and
    // manifests settle, so a kept walk is trusted as far as it can be.
    let tree = initial_tree();
    let root = tree.path();
    let store = Store::memory().unwrap();
    let mut cache = graphctx::index::InterfaceCache::with_symbol_table();
    let mut run = || server_run(&store, root, &mut cache);
    let write = |rel: &str, text: &str| write_file(root, rel, text);
    let append = |rel: &str, text: &str| {
        let path = root.join(rel);
        let mut now = std::fs::read_to_string(&path).unwrap();
        now.push_str(text);
        std::fs::write(path, now).unwrap();
    };
    // Settled times a while back, one second later after each step.
    let settled =
        |step: u64| std::time::SystemTime::now() - std::time::Duration::from_secs(600 - step);
    settle_tree(root, settled(0));
    run();
    let mut kept_walks = Vec::new();
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: Vec<Step> = vec![
        ("body edit", Box::new(|| append("src/util.rs", "// note\n"))),
        (
            "new module and file",
            Box::new(|| {
                append("src/lib.rs", "pub mod extra;\n");
                write("src/extra.rs", "pub fn extra() -> f64 { 1.0 }\n");
            }),
        ),
        (
            "the new file's interface",
            Box::new(|| append("src/extra.rs", "pub struct Extra;\n")),
        ),
        (
            "a file saved through a rename",
            Box::new(|| {
                let tmp = root.join("src/.util.rs.tmp");
                let text = std::fs::read_to_string(root.join("src/util.rs")).unwrap();
                std::fs::write(&tmp, format!("{text}pub fn added() {{}}\n")).unwrap();
                std::fs::rename(&tmp, root.join("src/util.rs")).unwrap();
            }),
        ),
        (
            "targets changed",
            Box::new(|| {
                append(
                    "Cargo.toml",
                    "\n[[bin]]\nname = \"tool\"\npath = \"src/extra.rs\"\n",
                )
            }),
        ),
        (
            "ignored",
            Box::new(|| write(".gitignore", "src/extra.rs\n")),
        ),
        (
            "deleted",
            Box::new(|| std::fs::remove_file(root.join("src/render.rs")).unwrap()),
        ),
    ];
    for (step, (what, edit)) in steps.into_iter().enumerate() {
        edit();
        settle_tree(root, settled(step as u64 + 1));
        let summary = run();
        if summary.walk_kept {
            kept_walks.push(what);
        }
        let (fresh, fresh_summary) = index_fresh(root);
        assert_eq!(
            (summary.files_seen, summary.entities, summary.edges),
            (
                fresh_summary.files_seen,
                fresh_summary.entities,
                fresh_summary.edges
            ),
            "after: {what}"
        );
        assert!(dump(&store) == dump(&fresh), "after: {what}");
    }
    // The edits that leave every directory and manifest as it was are
    // checked by `stat` alone; the others make a new walk.
    assert_eq!(
        kept_walks,
        [
            "body edit",
            "the new file's interface",
            "a file saved through a rename"
        ]
    );
}

/// A server reads what warms its cache without holding it, so a run may
/// land meanwhile: what was read before that run is not put in, and the
/// runs after it still store what a full rebuild stores.
#[test]
fn a_warming_read_before_a_change_is_not_put_in() {
    use graphctx::index::{InterfaceCache, Warmed};
    let tree = tempfile::tempdir().unwrap();
    copy_dir(&fixture("shapes"), tree.path());
    let db = tempfile::tempdir().unwrap();
    let store = Store::open(&Location::Sqlite(db.path().join("graph.db"))).unwrap();
    index(&store, tree.path());
    // A server started on the current index: its first run changes nothing.
    let mut cache = InterfaceCache::with_symbol_table();
    assert_eq!(server_run(&store, tree.path(), &mut cache).rows_written, 0);
    let seq = cache
        .wants_warming(&store, "code")
        .unwrap()
        .expect("a cache without interfaces, of the index now");
    let read = Warmed::read(&store, "code", seq)
        .unwrap()
        .expect("no change yet");
    // An edit lands before what was read is put in.
    let point = tree.path().join("src/geometry/point.rs");
    let text = std::fs::read_to_string(&point).unwrap();
    std::fs::write(&point, format!("{text}\npub fn warmed_late() {{}}\n")).unwrap();
    server_run(&store, tree.path(), &mut cache);
    assert!(!cache.take_warmed(&store, read).unwrap());
    // A later edit, and the index is a full rebuild's.
    std::fs::write(
        &point,
        format!("{text}\npub fn warmed_later() -> u8 {{ 1 }}\n"),
    )
    .unwrap();
    server_run(&store, tree.path(), &mut cache);
    let (fresh, _) = index_fresh(tree.path());
    assert_eq!(dump(&store), dump(&fresh));
    // Read and put in with no change between: taken.
    let mut started = InterfaceCache::with_symbol_table();
    assert_eq!(
        server_run(&store, tree.path(), &mut started).rows_written,
        0
    );
    let seq = started.wants_warming(&store, "code").unwrap().unwrap();
    let read = Warmed::read(&store, "code", seq).unwrap().unwrap();
    assert!(started.take_warmed(&store, read).unwrap());
    assert!(!started.is_empty());
}

/// The usage of an entity whose edges in did not change is taken from its
/// stored row, and a module's coverage (members a test calls) by the
/// difference of its members: members added, removed and moved, and tests
/// gained and lost, each leave the same rows as a fresh index.
#[test]
fn a_modules_coverage_follows_members_and_tests_as_a_rebuild_does() {
    let dir = temp_package("cover");
    let root = dir.path();
    let write = |rel: &str, text: &str| write_file(root, rel, text);
    write("src/lib.rs", "pub mod geo;\npub mod other;\n");
    let geo = "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    2\n}\n\n\
               #[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    \
               fn checks() {\n        assert_eq!(a(), 1);\n    }\n}\n";
    write("src/geo.rs", geo);
    write("src/other.rs", "pub fn c() -> u32 {\n    3\n}\n");
    let store = Store::memory().unwrap();
    let mut cache = graphctx::index::InterfaceCache::with_symbol_table();
    let mut run = || server_run(&store, root, &mut cache);
    // (tested members of a module, from its `code_usage` row)
    let coverage = |store: &Store, module: &str| -> String {
        let rows = store.dump("code_usage").unwrap();
        let row = rows
            .iter()
            .find(|r| display(&r[1]) == module)
            .unwrap_or_else(|| panic!("no usage row of {module}"));
        display(&row[9])
    };
    let edit = |rel: &str, from: &str, to: &str| {
        let path = root.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{rel} has no {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    };
    run();
    assert_eq!(coverage(&store, "src/geo.rs-crate-geo"), "1");
    let same_as_rebuilt = |store: &Store| {
        assert_eq!(dump(store), dump(&index_fresh(root).0));
    };

    // A member no test calls.
    edit(
        "src/geo.rs",
        "pub fn b()",
        "pub fn d() -> u32 {\n    4\n}\n\npub fn b()",
    );
    run();
    same_as_rebuilt(&store);
    assert_eq!(coverage(&store, "src/geo.rs-crate-geo"), "1");
    // A test now calls a second member.
    edit(
        "src/geo.rs",
        "assert_eq!(a(), 1);",
        "assert_eq!(a() + b(), 3);",
    );
    run();
    same_as_rebuilt(&store);
    assert_eq!(coverage(&store, "src/geo.rs-crate-geo"), "2");
    // A tested member goes.
    edit("src/geo.rs", "pub fn a() -> u32 {\n    1\n}\n", "");
    run();
    same_as_rebuilt(&store);
    assert_eq!(coverage(&store, "src/geo.rs-crate-geo"), "1");
    // A tested member moves to another module, and the test follows it.
    edit("src/geo.rs", "pub fn b() -> u32 {\n    2\n}\n", "");
    edit(
        "src/other.rs",
        "pub fn c()",
        "pub fn b() -> u32 {\n    2\n}\n\npub fn c()",
    );
    edit("src/geo.rs", "a() + b()", "crate::other::b()");
    run();
    same_as_rebuilt(&store);
    assert_eq!(coverage(&store, "src/geo.rs-crate-geo"), "0");
    assert_eq!(coverage(&store, "src/other.rs-crate-other"), "1");
    // A test in the other module calls a member it had not.
    edit(
        "src/other.rs",
        "pub fn c()",
        "#[test]\nfn checks_c() {\n    assert_eq!(c(), 3);\n}\n\npub fn c()",
    );
    run();
    same_as_rebuilt(&store);
    assert_eq!(coverage(&store, "src/other.rs-crate-other"), "2");
}

/// The keys of the entities the store lists for `file`
/// (`queries/entities_in_file.cozo`), as stored.
fn keys_in_file(store: &Store, file: &str) -> Vec<String> {
    store
        .read(
            graphctx::store::queries::ENTITIES_IN_FILE,
            graphctx::store::Params::new()
                .with("graph", "code")
                .with("file", file),
        )
        .unwrap()
        .rows
        .iter()
        .map(|r| display(&r[0]))
        .collect()
}

/// A file's entities are listed by the tails of their keys
/// (`{file}-{tail}`), so a file whose path starts with another's and a
/// dash (`src/a.rs-x/b.rs` next to `src/a.rs`) must not lend it its
/// entities, before or after either changes.
#[test]
fn a_file_whose_path_extends_another_s_keeps_its_entities_apart() {
    let tree = temp_package("paths");
    let write = |rel: &str, text: &str| write_file(tree.path(), rel, text);
    write("src/lib.rs", "mod a;\n");
    write("src/a.rs", "pub fn near() {}\n");
    write("src/a.rs-x/b.rs", "pub fn far() {}\npub fn farther() {}\n");
    let store = Store::memory().unwrap();
    index(&store, tree.path());
    let names_in = |store: &Store, file: &str| -> Vec<String> {
        let mut names: Vec<String> = keys_in_file(store, file)
            .iter()
            .map(|k| k.rsplit('-').next().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names_in(&store, "src/a.rs"), ["a", "near"]);
    assert_eq!(names_in(&store, "src/a.rs-x/b.rs"), ["b", "far", "farther"]);
    write("src/a.rs", "pub fn nearer() {}\n");
    std::fs::remove_file(tree.path().join("src/a.rs-x/b.rs")).unwrap();
    write("src/a.rs-x/c.rs", "pub fn other() {}\n");
    index(&store, tree.path());
    assert_eq!(names_in(&store, "src/a.rs"), ["a", "nearer"]);
    assert!(names_in(&store, "src/a.rs-x/b.rs").is_empty());
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
}

/// A file's entity keys are stored in parts of 64 tails: adding an entity
/// that sorts first moves every part's boundary, removing most of them
/// leaves fewer parts; each run must leave the parts a fresh index makes,
/// and list every entity once.
#[test]
fn a_file_with_many_entities_keeps_its_entity_list_through_edits() {
    let tree = temp_package("many");
    let write = |rel: &str, text: &str| write_file(tree.path(), rel, text);
    let fns = |names: &[String]| -> String {
        names
            .iter()
            .map(|n| format!("pub fn {n}() {{}}\n"))
            .collect()
    };
    let mut names: Vec<String> = (0..150).map(|i| format!("item_{i:03}")).collect();
    write("src/lib.rs", &fns(&names));
    let store = Store::memory().unwrap();
    index(&store, tree.path());
    let listed = |store: &Store| keys_in_file(store, "src/lib.rs").len();
    // The functions and the file's module.
    assert_eq!(listed(&store), 151);
    assert_eq!(store.dump("code_file_entities").unwrap().len(), 3);
    names.insert(0, "aaa_first".to_string());
    write("src/lib.rs", &fns(&names));
    index(&store, tree.path());
    assert_eq!(listed(&store), 152);
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
    names.truncate(40);
    write("src/lib.rs", &fns(&names));
    index(&store, tree.path());
    assert_eq!(listed(&store), 41);
    assert_eq!(store.dump("code_file_entities").unwrap().len(), 1);
    assert_eq!(dump(&store), dump(&index_fresh(tree.path()).0));
}
