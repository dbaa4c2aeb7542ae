//! Python through the language seam: the `python` fixture (a src-layout
//! package with relative imports, a namespace package, inheritance,
//! `super()`, constructors, annotations, a property, a `.pyi` stub, tests
//! of each kind, and bad input: Python 2, a syntax error, latin-1, mixed
//! tabs), golden entities and edges, the CLI end to end, incremental
//! equal to a rebuild after Python edits, a mixed Rust and Python tree,
//! and the flask dev set's accuracy floors.

use crate::common;

use std::path::{Path, PathBuf};

use common::{
    assert_golden, copy_dir, dump, fixture, graphctx, index, index_fresh, stderr, stdout,
};
use graphctx::graph::{self, EntityFilter};
use graphctx::store::{Params, Store};

fn edge_set(store: &Store) -> Vec<String> {
    let rows = store
        .read(
            "?[s, r, d] := *edge{graph: 'code', src: s, rel: r, dst: d}\n:order s, r, d",
            Params::new(),
        )
        .unwrap();
    rows.rows
        .iter()
        .map(|r| {
            format!(
                "{} -{}-> {}",
                r[0].get_str().unwrap(),
                r[1].get_str().unwrap(),
                r[2].get_str().unwrap()
            )
        })
        .collect()
}

const M: &str = "src/shop/models.py-shop.models";
const S: &str = "src/shop/store.py-shop.store";
const T: &str = "tests/test_store.py-tests.test_store";

fn has(edges: &[String], src: &str, rel: &str, dst: &str) -> bool {
    edges.contains(&format!("{src} -{rel}-> {dst}"))
}

#[test]
fn the_python_fixture_gives_its_golden_entities_and_edges() {
    let (store, summary) = index_fresh(&fixture("python"));
    assert_eq!(summary.files_skipped, 0, "{:?}", summary.skipped);
    let entities = graph::list_entities(&store, "code", &EntityFilter::default()).unwrap();
    let text: String = entities
        .iter()
        .map(|e| format!("{} {} {}:{}\n", e.kind, e.key, e.start_line, e.end_line))
        .collect();
    assert_golden("python_entities.txt", &text);
    let edges = edge_set(&store);
    assert_golden("python_edges.txt", &(edges.join("\n") + "\n"));
    let e = |s: &str, r: &str, d: &str| assert!(has(&edges, s, r, d), "{s} -{r}-> {d}\n{edges:#?}");
    // Inheritance, `super()`, constructors and `self` through attributes.
    e(
        &format!("{M}-SpecialCart"),
        "implements",
        &format!("{M}-Cart"),
    );
    e(
        &format!("{M}-SpecialCart.__init__"),
        "calls",
        &format!("{M}-Cart.__init__"),
    );
    e(
        &format!("{M}-SpecialCart.add"),
        "calls",
        &format!("{M}-Cart.add"),
    );
    e(
        &format!("{M}-SpecialCart.add"),
        "calls",
        &format!("{M}-SpecialCart.check"),
    );
    e(
        &format!("{M}-SpecialCart.check"),
        "calls",
        &format!("{M}-Cart.total"),
    );
    e(
        &format!("{M}-Cart.add"),
        "calls",
        &format!("{M}-Item.label"),
    );
    e(&format!("{M}-Cart.empty"), "calls", &format!("{M}-Cart"));
    e(
        &format!("{S}-Store.__init__"),
        "calls",
        &format!("{M}-SpecialCart"),
    );
    // `self.cart` is a `SpecialCart`: its override, not the base's.
    e(
        &format!("{S}-Store.buy"),
        "calls",
        &format!("{M}-SpecialCart.add"),
    );
    e(
        &format!("{S}-Store.buy"),
        "calls",
        &format!("{M}-Cart.total"),
    );
    e(
        &format!("{S}-Store.buy"),
        "references",
        &format!("{S}-Store.cart"),
    );
    e(
        &format!("{S}-Store.restock"),
        "calls",
        &format!("{M}-Cart.add"),
    );
    // A write to an attribute declared with a type uses that declaration;
    // a plain `self.x = …` is the attribute's own binding.
    e(
        &format!("{S}-Store.__init__"),
        "references",
        &format!("{S}-Store.opened"),
    );
    e(
        &format!("{S}-Store.close"),
        "references",
        &format!("{S}-Store.opened"),
    );
    assert!(!has(
        &edges,
        &format!("{S}-Store.__init__"),
        "references",
        &format!("{S}-Store.name")
    ));
    // A return annotation through a namespace package and `Optional`.
    e(
        &format!("{S}-Store.buy"),
        "calls",
        "src/shop/ns/helpers.py-shop.ns.helpers-cheapest",
    );
    e(
        &format!("{S}-Store.buy"),
        "calls",
        &format!("{M}-Item.label"),
    );
    e(&format!("{S}-open_store"), "calls", &format!("{S}-Store"));
    e(
        &format!("{S}-open_store"),
        "uses_type",
        &format!("{S}-Store"),
    );
    // Tests reach the package through its re-exports and `__all__`.
    e(
        &format!("{T}-test_buy"),
        "calls",
        &format!("{S}-open_store"),
    );
    e(&format!("{T}-test_buy"), "tests", &format!("{S}-Store.buy"));
    e(
        &format!("{T}-TestCart.test_add"),
        "calls",
        &format!("{M}-Cart.add"),
    );
    e(
        &format!("{T}-CartCase.test_empty"),
        "calls",
        &format!("{M}-Cart.empty"),
    );
    e("src/shop/__init__.py-shop", "imports", &format!("{M}-Cart"));
    e(
        "src/shop/__init__.py-shop",
        "contains",
        "src/shop/store.py-shop.store",
    );
    // The stub stands beside its module without taking its place: only
    // its package contains it.
    assert!(!edges.iter().any(|x| x.contains("-> src/shop/models.pyi")
        && !x.starts_with("src/shop/models.pyi")
        && !x.contains("-contains->")));
    // Never guessed: an unknown receiver stays unresolved, with its text.
    let unresolved = graph::unresolved_of(&store, "code", &format!("{S}-_helper")).unwrap();
    assert!(
        unresolved.iter().any(|u| u.text == "unknown_thing.go()"),
        "{unresolved:?}"
    );
    let by_key = |k: &str| entities.iter().find(|e| e.key == k).unwrap();
    let total = by_key(&format!("{M}-Cart.total"));
    assert_eq!(total.kind, "property");
    let restock = by_key(&format!("{S}-Store.restock"));
    assert_eq!(restock.kind, "method");
    assert_eq!(by_key(&format!("{M}-Cart")).kind, "class");
    assert_eq!(by_key(&format!("{T}-TestCart.test_add")).kind, "method");
}

#[test]
fn bad_python_input_is_indexed_as_far_as_it_parses() {
    let (store, summary) = index_fresh(&fixture("python"));
    assert_eq!(summary.files_skipped, 0);
    let partial: Vec<&str> = summary.partial.iter().map(|n| n.path.as_str()).collect();
    assert!(
        partial.contains(&"src/shop/broken.py"),
        "broken.py not partial: {:?}",
        summary.partial
    );
    // A file that declares its encoding (PEP 263) reads as declared.
    assert!(
        !partial.contains(&"src/shop/latin.py"),
        "latin.py partial: {:?}",
        summary.partial
    );
    let out = store
        .read(
            "?[doc] := *node{graph: 'code', id: 'src/shop/latin.py-shop.latin', doc}",
            Params::new(),
        )
        .unwrap();
    assert_eq!(
        out.rows
            .first()
            .map(|r| graphctx::store::value::display(&r[0])),
        Some("Café prices.".to_string())
    );
    let keys: Vec<String> = graph::list_entities(&store, "code", &EntityFilter::default())
        .unwrap()
        .into_iter()
        .map(|e| e.key)
        .collect();
    for k in [
        "src/shop/broken.py-shop.broken-good",
        "src/shop/broken.py-shop.broken-after",
        "src/shop/latin.py-shop.latin-cafe",
        "src/shop/legacy.py-shop.legacy-old",
        "src/shop/tabs.py-shop.tabs-tabbed",
        "src/shop/models.pyi-shop.models-Item.label",
    ] {
        assert!(keys.iter().any(|x| x == k), "{k} missing: {keys:#?}");
    }
}

#[test]
fn the_cli_indexes_python_and_gives_its_context() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("python"), dir.path());
    let out = graphctx(dir.path(), &["index", "--no-history"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = graphctx(
        dir.path(),
        &[
            "context",
            &format!("{M}-Cart"),
            "--format",
            "e",
            "--hops",
            "1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("Cart|class|{M}-Cart|")), "{text}");
    assert!(text.contains("SpecialCart -im-> Cart"), "{text}");
    let out = graphctx(
        dir.path(),
        &["context", "--file", "src/shop/store.py"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(doc.to_string().contains("Open a store called"), "{doc}");
}

/// Edit a copy of the fixture step by step; after each step, an
/// incremental index of the copy equals a fresh index of it.
#[test]
fn incremental_python_index_equals_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("python"), dir.path());
    let store = Store::memory().unwrap();
    index(&store, dir.path());
    let root = dir.path();
    let edit = |rel: &str, f: &dyn Fn(String) -> String| {
        let p = root.join(rel);
        let before = std::fs::read_to_string(&p).unwrap_or_default();
        std::fs::write(&p, f(before)).unwrap();
    };
    // Each step with whether names bound its reach: such a step resolves
    // fewer files than there are (the others may resolve every file).
    let steps: Vec<(bool, Box<dyn Fn()>)> = vec![
        // A body edit: the interface stays.
        (
            true,
            Box::new(|| {
                edit("src/shop/store.py", &|s| {
                    s.replace("return self.cart.total", "return self.cart.total + 0")
                })
            }),
        ),
        // A method added to a base class that a subclass's call now finds.
        (
            true,
            Box::new(|| {
                edit("src/shop/models.py", &|s| {
                    s.replace(
                        "    @property\n    def total",
                        "    def check(self, item) -> bool:\n        return True\n\n    @property\n    def total",
                    )
                })
            }),
        ),
        // A renamed function: its callers' references go unresolved.
        (
            true,
            Box::new(|| {
                edit("src/shop/ns/helpers.py", &|s| {
                    s.replace("def cheapest", "def cheapest_of")
                })
            }),
        ),
        // A re-export removed from `__all__`.
        (
            true,
            Box::new(|| {
                edit("src/shop/store.py", &|s| {
                    s.replace(
                        "__all__ = [\"open_store\", \"Store\"]",
                        "__all__ = [\"Store\"]",
                    )
                })
            }),
        ),
        (
            true,
            Box::new(|| {
                edit("src/shop/store.py", &|s| {
                    s.replace(
                        "__all__ = [\"Store\"]",
                        "__all__ = [\"open_store\", \"Store\"]",
                    )
                })
            }),
        ),
        // A method called on what a function returns, which its class
        // lacks (unresolved) ...
        (
            true,
            Box::new(|| {
                edit("tests/test_store.py", &|s| {
                    s.replace(
                        "    store = open_store(\"corner\")\n",
                        "    store = open_store(\"corner\")\n    store.add(Item(\"plum\"))\n",
                    )
                })
            }),
        ),
        // ... until that class gets a base that has it: the test does not
        // name the class, only the function whose annotation does.
        (
            true,
            Box::new(|| {
                edit("src/shop/store.py", &|s| {
                    s.replace("class Store:", "class Store(Cart):")
                })
            }),
        ),
        (
            true,
            Box::new(|| {
                edit("src/shop/store.py", &|s| {
                    s.replace("class Store(Cart):", "class Store(SpecialCart):")
                })
            }),
        ),
        // An import bound to something else under the same name.
        (
            true,
            Box::new(|| {
                edit("src/shop/__init__.py", &|s| {
                    s.replace(
                        "from .models import Cart as Cart",
                        "from .models import SpecialCart as Cart",
                    )
                })
            }),
        ),
        // A star import added: every file is resolved.
        (
            false,
            Box::new(|| {
                edit("src/shop/ns/helpers.py", &|s| {
                    format!("{s}\nfrom ..store import *\n")
                })
            }),
        ),
        // A new module, and a file deleted.
        (
            false,
            Box::new(|| {
                edit("src/shop/extra.py", &|_| {
                    "from .models import Item\n\n\ndef make() -> Item:\n    return Item(\"x\")\n"
                        .into()
                })
            }),
        ),
        (
            false,
            Box::new(|| {
                let _ = std::fs::remove_file(root.join("src/shop/tabs.py"));
            }),
        ),
        // A syntax error in the middle of a module.
        (
            false,
            Box::new(|| {
                edit("src/shop/models.py", &|s| {
                    s.replace("class SpecialCart(Cart):", "class SpecialCart(Cart:")
                })
            }),
        ),
    ];
    let edges_of_test_buy = |store: &Store| -> Vec<String> {
        store
            .dump("edge")
            .unwrap()
            .iter()
            .map(|row| {
                row.iter()
                    .map(graphctx::store::value::display)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|row| row.contains("test_store-test_buy calls"))
            .collect()
    };
    for (i, (bounded, step)) in steps.iter().enumerate() {
        step();
        let summary = index(&store, root);
        let (fresh, _) = index_fresh(root);
        assert_eq!(dump(&store), dump(&fresh), "after step {i}");
        if *bounded {
            assert!(
                summary.files_resolved < summary.files_seen,
                "step {i} resolved {} of {} files",
                summary.files_resolved,
                summary.files_seen
            );
        }
        // The call through the annotation follows the base class.
        let calls = edges_of_test_buy(&store).join("\n");
        match i {
            5 => assert!(!calls.contains("Cart.add"), "{calls}"),
            6 => assert!(calls.contains("models-Cart.add"), "{calls}"),
            7 => assert!(calls.contains("models-SpecialCart.add"), "{calls}"),
            _ => {}
        }
    }
}

#[test]
fn one_index_answers_for_a_rust_crate_and_a_python_package_beside_it() {
    let dir = common::temp_package("mixed");
    let root = dir.path();
    common::write_file(
        root,
        "src/lib.rs",
        "pub fn area() -> u32 { side() }\nfn side() -> u32 { 2 }\n",
    );
    common::write_file(root, "py/pyproject.toml", "[project]\nname = \"tool\"\n");
    common::write_file(root, "py/tool/__init__.py", "from .core import run\n");
    common::write_file(
        root,
        "py/tool/core.py",
        "def run():\n    return helper()\n\n\ndef helper():\n    return 1\n",
    );
    let (store, summary) = index_fresh(root);
    assert_eq!(summary.files_skipped, 0);
    let edges = edge_set(&store);
    assert!(
        has(
            &edges,
            "src/lib.rs-crate-area",
            "calls",
            "src/lib.rs-crate-side"
        ),
        "{edges:#?}"
    );
    assert!(
        has(
            &edges,
            "py/tool/core.py-tool.core-run",
            "calls",
            "py/tool/core.py-tool.core-helper"
        ),
        "{edges:#?}"
    );
    assert!(
        has(
            &edges,
            "py/tool/__init__.py-tool",
            "imports",
            "py/tool/core.py-tool.core-run"
        ),
        "{edges:#?}"
    );
}

/// The flask dev set in `../shared` (or `$GRAPHCTX_SHARED`), measured
/// against scip-python's edges by `eval/edge_accuracy.py`. The floors sit
/// a little under the figures measured when resolution last changed.
/// Two artefacts of that truth cap the raw precision (see
/// docs/python.md): it has no references from module level, and it
/// resolved `import flask` in the tests and examples to an installed
/// flask, not to `src/flask`; the adjusted precision leaves both out.
#[test]
fn flask_dev_set_accuracy_stays_above_its_floors() {
    use std::process::Command;
    // `../shared` beside the checkout, or beside the worktrees' folder.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("GRAPHCTX_SHARED")
        .map(PathBuf::from)
        .or_else(|| {
            [here.join("../shared"), here.join("../../shared")]
                .into_iter()
                .find(|p| p.join("data/flask-2ac8988.tar.gz").is_file())
        })
        .unwrap_or_else(|| here.join("../shared"));
    let tarball = shared.join("data/flask-2ac8988.tar.gz");
    assert!(
        tarball.is_file(),
        "the flask dev set is missing at {}",
        tarball.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let ok = |c: &mut Command| {
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{:?}: {}",
            c,
            String::from_utf8_lossy(&out.stderr)
        );
    };
    ok(Command::new("tar")
        .arg("-xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(dir.path()));
    let root = dir.path().join("flask-2ac8988");
    let bin = env!("CARGO_BIN_EXE_graphctx");
    ok(Command::new(bin)
        .args(["index", "--json"])
        .current_dir(&root));
    let report = dir.path().join("flask.json");
    ok(Command::new("python3")
        .arg(shared.join("eval/edge_accuracy.py"))
        .arg(&root)
        .arg(shared.join("eval/truth/flask-2ac8988.jsonl"))
        .arg("--graphctx")
        .arg(bin)
        .arg("--json")
        .arg(&report));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let ratio = |k: &str| v[k][0].as_f64().unwrap() / v[k][1].as_f64().unwrap();
    let (p, r, x, d) = (
        ratio("precision"),
        ratio("recall"),
        ratio("recall_cross_file"),
        ratio("code_definitions_mapped"),
    );
    // Precision without the two artefacts: false positives from a module
    // entity, or from outside `src/` into it.
    let file = |k: &str| k.split(".py-").next().unwrap_or(k).to_string();
    let artefacts = v["false_positives"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|fp| {
            let (s, d) = (fp[0].as_str().unwrap(), fp[1].as_str().unwrap());
            let module = s
                .split_once(".py-")
                .is_some_and(|(_, rest)| !rest.contains('-'));
            module || (!file(s).starts_with("src/") && file(d).starts_with("src/"))
        })
        .count() as f64;
    let adjusted =
        v["precision"][0].as_f64().unwrap() / (v["precision"][1].as_f64().unwrap() - artefacts);
    assert!(d >= 0.99, "definitions mapped {d:.3} below 0.99");
    assert!(r >= RECALL, "recall {r:.3} below {RECALL}");
    assert!(x >= CROSS, "cross-file recall {x:.3} below {CROSS}");
    assert!(p >= PRECISION, "precision {p:.3} below {PRECISION}");
    assert!(
        adjusted >= ADJUSTED,
        "adjusted precision {adjusted:.3} below {ADJUSTED}"
    );
}

const RECALL: f64 = 0.86;
const CROSS: f64 = 0.87;
const PRECISION: f64 = 0.44;
const ADJUSTED: f64 = 0.88;

/// The servers over Python: definitions from a call site (through a
/// receiver's type), references in every caller, hover with the Python
/// signature and docstring, a file's symbols.
#[test]
fn lsp_answers_for_python_files() {
    use graphctx::serve::{Refresh, Workspace};
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("python"), dir.path());
    let ws = Workspace::open(dir.path(), None, "code").unwrap();
    match ws.refresh(true).unwrap() {
        Refresh::Done(s) => assert!(s.entities > 0),
        Refresh::Busy(m) => panic!("fresh index busy: {m}"),
    }
    let store_py = "src/shop/store.py";
    let text = std::fs::read_to_string(dir.path().join(store_py)).unwrap();
    let (line, col) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("self.cart.add").map(|c| (i as u32, c as u32 + 11)))
        .unwrap();
    let defs = ws.definition(store_py, line, col, None).unwrap();
    assert_eq!(
        defs.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
        vec![format!("{M}-SpecialCart.add").as_str()]
    );
    let refs = ws.references(&format!("{S}-open_store"), false).unwrap();
    assert!(
        refs.iter().any(|s| s.file == "tests/test_store.py"),
        "{refs:?}"
    );
    let h = ws.hover(&format!("{S}-open_store")).unwrap().unwrap();
    assert!(
        h.signature.contains("def open_store(name: str) -> Store"),
        "{}",
        h.signature
    );
    assert!(h.markdown().starts_with("```python\n"), "{}", h.markdown());
    assert_eq!(h.doc, "Open a store called `name`.");
    let names: Vec<String> = ws
        .entities_in_file("src/shop/models.py")
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    for n in ["Item", "Cart", "total", "SpecialCart", "discount"] {
        assert!(names.iter().any(|x| x == n), "{n} missing: {names:?}");
    }
}
