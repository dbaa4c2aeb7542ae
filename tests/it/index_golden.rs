//! Golden entity and edge sets for the `shapes` fixture workspace, plus
//! explicit checks of the cases the fixture was written for; the same for
//! the `resolution` fixture, and the accuracy floors on the fd dev set.

use crate::common;

use common::{assert_golden, fixture, index_fresh, temp_package, write_file};
use graphctx::graph::{self, Direction, EntityFilter};
use graphctx::store::{Params, Store};
use std::path::Path;

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

fn has_edge(edges: &[String], src: &str, rel: &str, dst: &str) -> bool {
    edges.contains(&format!("{src} -{rel}-> {dst}"))
}

#[test]
fn shapes_entities_match_the_golden_set() {
    let (store, summary) = index_fresh(&fixture("shapes"));
    assert_eq!(summary.files_skipped, 0);
    assert_eq!(summary.files_partial, 0);
    let entities = graph::list_entities(&store, "code", &EntityFilter::default()).unwrap();
    let text: String = entities
        .iter()
        .map(|e| {
            format!(
                "{} {} {}:{}-{}{}\n",
                e.kind,
                e.key,
                e.file,
                e.start_line,
                e.end_line,
                if e.is_test { " test" } else { "" }
            )
        })
        .collect();
    assert_golden("shapes_entities.txt", &text);
}

#[test]
fn shapes_edges_match_the_golden_set() {
    let (store, _) = index_fresh(&fixture("shapes"));
    let edges = edge_set(&store);
    assert_golden("shapes_edges.txt", &(edges.join("\n") + "\n"));
}

#[test]
fn same_name_trait_methods_get_distinct_keys() {
    let (store, _) = index_fresh(&fixture("shapes"));
    let fmts = graph::list_entities(
        &store,
        "code",
        &EntityFilter {
            name: Some("fmt".into()),
            file: Some("src/geometry/point.rs".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let keys: Vec<&str> = fmts.iter().map(|e| e.key.as_str()).collect();
    assert_eq!(
        keys,
        vec![
            "src/geometry/point.rs-geometry::point-<Point as Display>::fmt",
            "src/geometry/point.rs-geometry::point-<Point as Debug>::fmt",
        ]
    );
}

#[test]
fn resolution_covers_renames_globs_reexports_and_crates() {
    let (store, _) = index_fresh(&fixture("shapes"));
    let e = edge_set(&store);
    // `use crate::geometry::{Rect as Rectangle}` then `fn describe(r: &Rectangle)`.
    assert!(has_edge(
        &e,
        "src/render.rs-render-describe",
        "uses_type",
        "src/geometry/mod.rs-geometry-Rect"
    ));
    // `use util::*;` then `clamp_scale(..)` in lib.rs.
    assert!(has_edge(
        &e,
        "src/lib.rs-crate-total_area",
        "calls",
        "src/util.rs-util-clamp_scale"
    ));
    // `pub use geometry::point::Point as Pt` used from another workspace crate.
    assert!(has_edge(
        &e,
        "crates/shapes-cli/src/main.rs-crate-main",
        "calls",
        "src/geometry/point.rs-geometry::point-Point::origin"
    ));
    // `super::super::geometry::Rect` from a nested inline module.
    assert!(has_edge(
        &e,
        "src/render.rs-render::ascii-draw",
        "uses_type",
        "src/geometry/mod.rs-geometry-Rect"
    ));
    // `inner::repeat_line` in a nested inline module.
    assert!(has_edge(
        &e,
        "src/render.rs-render::ascii-draw",
        "calls",
        "src/render.rs-render::ascii::inner-repeat_line"
    ));
    // impl Trait for Type.
    assert!(has_edge(
        &e,
        "src/geometry/mod.rs-geometry-Rect",
        "implements",
        "src/lib.rs-crate-Area"
    ));
    // Methods belong to their type through the impl block.
    assert!(has_edge(
        &e,
        "src/geometry/mod.rs-geometry-Rect",
        "contains",
        "src/geometry/mod.rs-geometry-<Rect as Area>::area"
    ));
    // A method call on a typed parameter goes to that type's method, though
    // several types have an `area` (`r: &Rectangle`, the renamed `Rect`).
    assert!(has_edge(
        &e,
        "src/render.rs-render-describe",
        "calls",
        "src/geometry/mod.rs-geometry-<Rect as Area>::area"
    ));
    assert!(!has_edge(
        &e,
        "src/render.rs-render-describe",
        "calls",
        "src/geometry/mod.rs-geometry-<Circle as Area>::area"
    ));
    // ... and inside a macro's token tree: `format!(.., shape.area())` with `shape: &Shape`.
    assert!(has_edge(
        &e,
        "src/render.rs-render-render",
        "calls",
        "src/geometry/mod.rs-geometry-Shape::area"
    ));
    // A default method calling a required one: self.area() inside the trait.
    assert!(has_edge(
        &e,
        "src/lib.rs-crate-Area::is_empty",
        "calls",
        "src/lib.rs-crate-Area::area"
    ));
    // Macros, and test functions → what they call.
    assert!(has_edge(
        &e,
        "tests/area.rs-crate-total_area_adds_up",
        "calls",
        "src/lib.rs-crate-square"
    ));
    assert!(has_edge(
        &e,
        "tests/area.rs-crate-total_area_adds_up",
        "tests",
        "src/lib.rs-crate-total_area"
    ));
    // The file module of point.rs sits inside geometry.
    assert!(has_edge(
        &e,
        "src/geometry/mod.rs-crate-geometry",
        "contains",
        "src/geometry/point.rs-geometry-point"
    ));
}

#[test]
fn every_edge_ends_at_an_existing_entity() {
    let (store, _) = index_fresh(&fixture("shapes"));
    let dangling = store
        .read(
            "?[s, r, d] := *edge{graph: 'code', src: s, rel: r, dst: d}, not *node{graph: 'code', id: d}
             ?[s, r, d] := *edge{graph: 'code', src: s, rel: r, dst: d}, not *node{graph: 'code', id: s}",
            Params::new(),
        )
        .unwrap();
    assert!(
        dangling.rows.is_empty(),
        "dangling edges: {:?}",
        dangling.rows
    );
}

#[test]
fn std_references_stay_unresolved_with_their_text() {
    let (store, summary) = index_fresh(&fixture("shapes"));
    assert!(summary.unresolved > 0);
    let u = graph::unresolved_of(
        &store,
        "code",
        "src/geometry/point.rs-geometry::point-<Point as Display>::fmt",
    )
    .unwrap();
    let texts: Vec<&str> = u.iter().map(|u| u.text.as_str()).collect();
    assert!(texts.contains(&"fmt::Formatter"), "{texts:?}");
    assert!(texts.contains(&"write!"), "{texts:?}");
    let incoming = graph::edges_of(&store, "code", "src/lib.rs-crate-Area", Direction::In).unwrap();
    assert!(incoming.iter().any(|e| e.rel == "implements"));
}

#[test]
fn test_code_is_marked() {
    let (store, _) = index_fresh(&fixture("shapes"));
    let all = graph::list_entities(&store, "code", &EntityFilter::default()).unwrap();
    let is_test = |key: &str| all.iter().find(|e| e.key == key).map(|e| e.is_test);
    assert_eq!(
        is_test("src/geometry/point.rs-geometry::point::tests-distance_to_self_is_zero"),
        Some(true)
    );
    assert_eq!(
        is_test("tests/area.rs-crate-total_area_adds_up"),
        Some(true)
    );
    assert_eq!(
        is_test("src/geometry/point.rs-geometry::point-Point::distance"),
        Some(false)
    );
}

// ---------------------------------------------------------------------------
// The `resolution` fixture: a package with a `[[bin]]` and a `[[test]]` at
// non-standard paths and `autotests = false`, a `#[path]` module, builder
// chains and aliases, trait bounds and objects, local items, an ambiguous
// name.
// ---------------------------------------------------------------------------

fn resolution_edges() -> (Store, graphctx::index::IndexSummary, Vec<String>) {
    let (store, summary) = index_fresh(&fixture("resolution"));
    let edges = edge_set(&store);
    (store, summary, edges)
}

#[test]
fn resolution_edges_match_the_golden_set() {
    let (_, _, edges) = resolution_edges();
    assert_golden("resolution_edges.txt", &(edges.join("\n") + "\n"));
}

#[test]
fn cargo_targets_make_files_modules_of_their_crate() {
    let (store, _, edges) = resolution_edges();
    // `cli/main.rs` is the root of crate `kit_cli`; `commands.rs` is its
    // module, so `crate::commands::report` resolves inside the binary.
    assert!(has_edge(
        &edges,
        "kit/cli/commands.rs-commands-run",
        "calls",
        "kit/cli/commands.rs-commands-report"
    ));
    assert!(has_edge(
        &edges,
        "kit/cli/commands.rs-commands-run",
        "references",
        "kit/cli/main.rs-crate-kit_cli"
    ));
    // `checks/support/mod.rs` is a module of the `checks` test target.
    assert!(has_edge(
        &edges,
        "kit/checks/run.rs-crate-loads",
        "calls",
        "kit/checks/support/mod.rs-support-Env::new"
    ));
    // `#[path = "generated/out.rs"] mod generated` is `crate::generated`.
    assert!(has_edge(
        &edges,
        "kit/cli/commands.rs-commands-report",
        "calls",
        "kit/src/generated/out.rs-generated-limit_of"
    ));
    let support = graph::list_entities(
        &store,
        "code",
        &EntityFilter {
            file: Some("kit/checks/support/mod.rs".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        support.iter().all(|e| e.is_test),
        "a test target's modules are test code"
    );
}

#[test]
fn a_first_index_parses_each_file_once_in_the_module_declared_for_it() {
    // `sys/unix/net.rs` reads as module `sys::unix::net` by its path but
    // is `net` by its `#[path]` declaration, `generated/out.rs` is
    // `generated`: a first index parses the crate roots first and every
    // other file where its parent's declaration puts it, once.
    let (_, summary) = index_fresh(&fixture("resolution"));
    assert!(summary.files_parsed > 10, "{summary:?}");
    assert_eq!(summary.files_reparsed, 0, "{summary:?}");

    // A later run meets a new such file by its path first, so it parses
    // it again where it belongs, and lands what a first index would.
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture("resolution"), dir.path());
    let store = Store::memory().unwrap();
    common::index(&store, dir.path());
    std::fs::write(
        dir.path().join("kit/src/sys/unix/extra.rs"),
        "pub fn extra() -> u8 { 1 }\n",
    )
    .unwrap();
    let lib = dir.path().join("kit/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(
        &lib,
        text + "#[path = \"sys/unix/extra.rs\"]\npub mod extra;\npub fn one() -> u8 { extra::extra() }\n",
    )
    .unwrap();
    let again = common::index(&store, dir.path());
    assert_eq!(again.files_reparsed, 1, "{again:?}");
    let edges = edge_set(&store);
    assert!(has_edge(
        &edges,
        "kit/src/lib.rs-crate-one",
        "calls",
        "kit/src/sys/unix/extra.rs-extra-extra"
    ));
    let (fresh, first) = index_fresh(dir.path());
    assert_eq!(first.files_reparsed, 0, "{first:?}");
    assert_eq!(common::dump(&store), common::dump(&fresh));
}

/// A file two crate roots declare (the library's `mod shared;`, a
/// binary's `#[path]` to the same file) belongs where the walk from the
/// roots in target order first reaches it: the library's. A first index
/// parses files as their parents finish, so the binary may claim it
/// first; the index must not depend on which did.
#[test]
fn a_file_declared_by_two_crate_roots_belongs_to_the_first_in_target_order() {
    let tree = temp_package("twin");
    let write = |rel: &str, text: &str| write_file(tree.path(), rel, text);
    // The binary's root is small and the library's large, so the binary
    // is parsed first more often than not.
    let filler: String = (0..400)
        .map(|i| format!("pub fn filler_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    write("src/lib.rs", &format!("pub mod shared;\n{filler}"));
    write(
        "src/bin/tool.rs",
        "#[path = \"../shared.rs\"]\nmod shared;\nfn main() { shared::helper(); }\n",
    );
    write("src/shared.rs", "pub fn helper() {}\n");
    for _ in 0..5 {
        let (store, summary) = index_fresh(tree.path());
        assert_eq!(summary.files_parsed, 3, "{summary:?}");
        // Parsed again if the binary claimed it first, never more.
        assert!(summary.files_reparsed <= 1, "{summary:?}");
        let rows = store
            .read(
                "?[id, package] := *code_entity{graph: 'code', id, package, file: 'src/shared.rs'}",
                Params::new(),
            )
            .unwrap();
        let rows: Vec<(String, String)> = rows
            .rows
            .iter()
            .map(|r| {
                (
                    graphctx::store::value::display(&r[0]),
                    graphctx::store::value::display(&r[1]),
                )
            })
            .collect();
        assert!(
            rows.contains(&("src/shared.rs-shared-helper".into(), "twin".into())),
            "{rows:?}"
        );
        assert!(rows.iter().all(|(_, c)| c == "twin"), "{rows:?}");
    }
}

#[test]
fn a_module_with_a_file_per_target_resolves_within_each_file() {
    // `#[cfg(unix)] #[path = "sys/unix/net.rs"] mod net;` and the same for
    // Windows: two `net::Socket`s, of which a build compiles one. The code
    // in each file is written against its own.
    let (store, _, edges) = resolution_edges();
    for (os, other) in [("unix", "windows"), ("windows", "unix")] {
        let at = |item: &str| format!("kit/src/sys/{os}/net.rs-net-{item}");
        let elsewhere = |item: &str| format!("kit/src/sys/{other}/net.rs-net-{item}");
        assert!(has_edge(
            &edges,
            &at("Socket"),
            "contains",
            &at("Socket::open")
        ));
        assert!(!has_edge(
            &edges,
            &at("Socket"),
            "contains",
            &elsewhere("Socket::open")
        ));
        assert!(has_edge(
            &edges,
            &at("connect"),
            "calls",
            &at("Socket::open")
        ));
        assert!(has_edge(
            &edges,
            &at("connect"),
            "calls",
            &at("Socket::raw")
        ));
        assert!(!has_edge(
            &edges,
            &at("connect"),
            "calls",
            &elsewhere("Socket::raw")
        ));
        assert!(has_edge(
            &edges,
            &at("impl Socket"),
            "uses_type",
            &at("Socket")
        ));
    }
    let ambiguous = store
        .read(
            "?[src] := *code_unresolved{graph: 'code', src, refs}, \
             starts_with(src, 'kit/src/sys/'), str_includes(dump_json(refs), 'ambiguous')",
            Params::new(),
        )
        .unwrap();
    assert!(ambiguous.rows.is_empty(), "{:?}", ambiguous.rows);
}

#[test]
fn receivers_are_typed_through_declarations() {
    let (_, _, edges) = resolution_edges();
    let calls = |from: &str, to: &str| {
        has_edge(
            &edges,
            &format!("kit/src/config.rs-config-{from}"),
            "calls",
            &format!("kit/src/config.rs-config-{to}"),
        )
    };
    // `Builder::new().limit(..).build()`.
    assert!(calls("Config::load", "Builder::limit"));
    assert!(calls("Config::load", "Builder::build"));
    // `let config = Config::load(path)?` through the `Result<T>` alias,
    // then a method of it and of the elements of its `Vec<Entry>` field.
    assert!(calls("total", "Config::first"));
    assert!(calls("total", "Entry::weigh"));
    // A qualifier names its type: `Config::DEFAULT_LIMIT`.
    assert!(has_edge(
        &edges,
        "kit/src/config.rs-config-Builder::new",
        "uses_type",
        "kit/src/config.rs-config-Config"
    ));
    // A field read references the struct.
    assert!(has_edge(
        &edges,
        "kit/src/generated/out.rs-generated-limit_of",
        "references",
        "kit/src/config.rs-config-Config"
    ));
}

#[test]
fn trait_methods_resolve_through_bounds_objects_and_types() {
    let (_, _, edges) = resolution_edges();
    let m = |s: &str| format!("kit/src/matcher.rs-matcher-{s}");
    for from in ["generic", "object", "boxed"] {
        assert!(
            has_edge(&edges, &m(from), "calls", &m("Matcher::is_match")),
            "{from}"
        );
    }
    assert!(has_edge(
        &edges,
        &m("bounded"),
        "calls",
        &m("Matcher::describe")
    ));
    // The inherent `Exact::label` wins over `<Exact as Named>::label`.
    assert!(has_edge(
        &edges,
        &m("concrete"),
        "calls",
        &m("Exact::label")
    ));
    assert!(!has_edge(
        &edges,
        &m("concrete"),
        "calls",
        &m("<Exact as Named>::label")
    ));
    // `S::Error` of `S: Sink` is the trait's associated type.
    assert!(has_edge(
        &edges,
        &m("drain"),
        "uses_type",
        &m("Sink::Error")
    ));
    assert!(has_edge(&edges, &m("drain"), "calls", &m("Sink::write")));
}

#[test]
fn local_items_and_ambiguous_names_never_fan_out() {
    let (store, summary, edges) = resolution_edges();
    let l = |s: &str| format!("kit/src/locals.rs-locals-{s}");
    assert!(has_edge(
        &edges,
        &l("second"),
        "uses_type",
        &l("second()::Width")
    ));
    assert!(!has_edge(
        &edges,
        &l("second"),
        "uses_type",
        &l("first()::Width")
    ));
    assert!(has_edge(
        &edges,
        &l("first()::Local"),
        "uses_type",
        &l("first()::Width")
    ));
    // No source links through one relationship to several entities whose
    // keys differ only in `#N`, or to both `pick`s.
    assert!(!edges.iter().any(|e| e.starts_with(&l("ambiguous"))));
    let unresolved = graph::unresolved_of(&store, "code", &l("ambiguous")).unwrap();
    assert!(
        unresolved
            .iter()
            .any(|u| u.text == "pick (ambiguous: 2 candidates)"),
        "{unresolved:?}"
    );
    assert!(summary.ambiguous >= 1);
}

/// The fd dev set in `../shared` (or `$GRAPHCTX_SHARED`): graphctx's edges
/// measured against rust-analyzer's by `eval/edge_accuracy.py`. The floors
/// are the figures reached when resolution last changed, rounded down.
#[test]
fn fd_dev_set_accuracy_stays_above_its_floors() {
    use std::path::PathBuf;
    use std::process::Command;
    let shared = std::env::var_os("GRAPHCTX_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let tarball = shared.join("data/fd-ee20f42.tar.gz");
    assert!(
        tarball.is_file(),
        "the fd dev set is missing at {}: set GRAPHCTX_SHARED to the shared folder",
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
    let root = dir.path().join("fd-ee20f42");
    let bin = env!("CARGO_BIN_EXE_graphctx");
    ok(Command::new(bin)
        .args(["index", "--json"])
        .current_dir(&root));
    // The script reads the graph through `graphctx export --jsonl` when the
    // binary has it, and through `graphctx query` otherwise: both ways, by
    // wrappers that log each command (the second refusing `export`), must
    // give the same figures.
    let measure = |name: &str, refuse_export: bool| -> (serde_json::Value, String) {
        let log = dir.path().join(format!("{name}.log"));
        let wrapper = dir.path().join(name);
        let refuse = if refuse_export {
            "[ \"$1\" = export ] && exit 2\n"
        } else {
            ""
        };
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\necho \"$@\" >> '{}'\n{refuse}exec '{bin}' \"$@\"\n",
                log.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(
            &wrapper,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let report = dir.path().join(format!("{name}.json"));
        ok(Command::new("python3")
            .arg(shared.join("eval/edge_accuracy.py"))
            .arg(&root)
            .arg(shared.join("eval/truth/fd-ee20f42.jsonl"))
            .arg("--graphctx")
            .arg(&wrapper)
            .arg("--json")
            .arg(&report));
        let v = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
        (v, std::fs::read_to_string(&log).unwrap())
    };
    let (v, exported) = measure("through-export", false);
    assert!(
        exported.contains("export --jsonl --graph code"),
        "{exported}"
    );
    assert!(!exported.contains("query"), "{exported}");
    let (queried, log) = measure("through-query", true);
    assert!(log.contains("query"), "{log}");
    assert_eq!(v, queried, "export and query give different figures");
    let ratio = |k: &str| v[k][0].as_f64().unwrap() / v[k][1].as_f64().unwrap();
    let (p, r, x) = (
        ratio("precision"),
        ratio("recall"),
        ratio("recall_cross_file"),
    );
    assert!(p >= 0.97, "precision {p:.3} below 0.97");
    assert!(r >= 0.95, "recall {r:.3} below 0.95");
    assert!(x >= 0.96, "cross-file recall {x:.3} below 0.96");
}

#[test]
fn a_binary_and_build_scripts_named_alike_are_crates_of_their_own() {
    // The library and the binary of `app` are both called `app`, and
    // every package's build script is `build_script_build`: each is a
    // crate of its own. The binary's `cli` is not the library's, and it
    // calls the library by its name, as does the test crate `app`, whose
    // glob names the library; each build script calls its own `helper`.
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("Cargo.toml", "[package]\nname = \"app\"\n"),
        (
            "src/lib.rs",
            "pub mod cli {\n    pub fn start() -> u8 { 3 }\n}\npub fn run() -> u8 { cli::start() }\n",
        ),
        (
            "src/main.rs",
            "mod cli;\nfn main() {\n    cli::start();\n    app::run();\n}\n",
        ),
        ("src/cli.rs", "pub fn start() -> u8 { 2 }\n"),
        ("tests/app.rs", "use app::*;\n#[test]\nfn t() {\n    run();\n}\n"),
        ("build.rs", "fn helper() {}\nfn main() { helper(); }\n"),
        ("other/Cargo.toml", "[package]\nname = \"other\"\n"),
        ("other/src/lib.rs", "pub fn other() {}\n"),
        ("other/build.rs", "fn helper() {}\nfn main() { helper(); }\n"),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let (store, summary) = index_fresh(dir.path());
    assert_eq!(summary.ambiguous, 0, "{summary:?}");
    let edges = edge_set(&store);
    let calls = |from: &str, to: &str| has_edge(&edges, from, "calls", to);
    assert!(
        calls("src/lib.rs-crate-run", "src/lib.rs-cli-start"),
        "{edges:#?}"
    );
    assert!(
        calls("src/main.rs-crate-main", "src/cli.rs-cli-start"),
        "{edges:#?}"
    );
    assert!(
        calls("src/main.rs-crate-main", "src/lib.rs-crate-run"),
        "{edges:#?}"
    );
    assert!(
        calls("tests/app.rs-crate-t", "src/lib.rs-crate-run"),
        "{edges:#?}"
    );
    assert!(
        calls("build.rs-crate-main", "build.rs-crate-helper"),
        "{edges:#?}"
    );
    assert!(
        calls("other/build.rs-crate-main", "other/build.rs-crate-helper"),
        "{edges:#?}"
    );
    let across = |a: &str, b: &str| {
        edges
            .iter()
            .filter(|e| e.starts_with(a) && e.contains(&format!("-> {b}")))
            .count()
    };
    assert_eq!(across("src/lib.rs", "src/cli.rs"), 0, "{edges:#?}");
    assert_eq!(across("build.rs", "other/"), 0, "{edges:#?}");
    assert_eq!(across("other/build.rs", "build.rs"), 0, "{edges:#?}");
}
