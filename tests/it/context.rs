//! Context emission: golden documents, seed 004 structure, the budget
//! property, errors, cycles, the cache.

use crate::common;

use std::path::Path;

use common::{assert_golden, copy_dir, fixture, index};
use graphctx::analyse::relevance::Strategy as Relevance;
use graphctx::analyse::select::BaseSpec;
use graphctx::emit::{self, ContextError, ContextRequest, Format};
use graphctx::index::{index_repository, IndexOptions};
use graphctx::store::Store;
use graphctx::support::tokens::{Encoding, TokenCounter};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

/// A copy of a fixture outside any git checkout (so no history), indexed.
fn indexed(name: &str) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    let store = Store::memory().unwrap();
    index(&store, dir.path());
    (dir, store)
}

fn request(base: BaseSpec) -> ContextRequest {
    ContextRequest::new("code", base)
}

fn normalise(text: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["generated_at"] = serde_json::json!("<normalised>");
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

// Seed 004's structure, field by field.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Doc {
    version: String,
    generated_at: String,
    token_count: usize,
    size_status: String,
    query_context: QueryContext,
    entities: Vec<EntityJson>,
    relationships: Vec<RelJson>,
    optimization_info: OptInfo,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct QueryContext {
    base_entities: Vec<String>,
    hop_depth: u32,
    change_type: String,
    focus_areas: Vec<String>,
    size_limit: usize,
    optimization_strategy: String,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct EntityJson {
    isgl1_key: String,
    interface_signature: Iface,
    #[serde(default)]
    tdd_classification: Option<Tdd>,
    #[serde(default)]
    lsp_metadata: Option<serde_json::Value>,
    relevance_score: f64,
    dependency_level: u32,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Iface {
    entity_type: String,
    name: String,
    #[serde(default)]
    visibility: Option<String>,
    file_path: String,
    line_range: LineRange,
    #[serde(default)]
    signature: Option<serde_json::Value>,
    #[serde(default)]
    module_path: Option<Vec<String>>,
    #[serde(default)]
    documentation: Option<String>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct LineRange {
    start: u32,
    end: u32,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Tdd {
    testability: String,
    complexity: String,
    dependencies: usize,
    test_coverage_estimate: f64,
    critical_path: bool,
    change_risk: String,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct RelJson {
    dependent: String,
    dependency: String,
    relationship_type: String,
    strength: f64,
    context: serde_json::Value,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct OptInfo {
    excluded_entities: Vec<String>,
    truncation_applied: bool,
    prioritization_strategy: String,
}

#[test]
fn golden_context_for_the_fixture() {
    let (_dir, store) = indexed("shapes");
    let counter = TokenCounter::new(Encoding::O200k);
    let req = request(BaseSpec::Keys(vec![
        "src/geometry/mod.rs-geometry-Rect".into()
    ]));
    let out = emit::build_context(&store, &req, &counter).unwrap();
    assert_golden("shapes_context_rect.json", &normalise(&out.text));
    let mut e = req.clone();
    e.format = Format::E;
    let out_e = emit::build_context(&store, &e, &counter).unwrap();
    let text_e = out_e
        .text
        .replacen(&format!("{} tokens", out_e.token_count), "N tokens", 1);
    assert_golden("shapes_context_rect.e.txt", &text_e);

    // Every endpoint of every edge line names exactly one node line, and
    // the edges are the JSON form's relationships, grouped.
    let parsed = emit::format_e::parse(&out_e.text).unwrap();
    assert_eq!(parsed.edges.len(), out_e.relationships);
    let doc: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    let mut json_edges: Vec<(String, String, String)> = doc["relationships"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["dependent"].as_str().unwrap().to_string(),
                r["relationship_type"].as_str().unwrap().to_string(),
                r["dependency"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut e_edges = parsed.edges.clone();
    json_edges.sort();
    e_edges.sort();
    assert_eq!(e_edges, json_edges);
    // Node lines carry location and signature.
    let rect = parsed
        .nodes
        .iter()
        .find(|n| n.key == "src/geometry/mod.rs-geometry-Rect")
        .unwrap();
    assert_eq!(rect.location, "src/geometry/mod.rs:11-15");
    assert!(
        rect.signature
            .starts_with("pub struct Rect { pub origin: Point, pub width: f64"),
        "{rect:?}"
    );
}

/// A copy of a fixture committed to git in one commit (so every pair of
/// its files changed together once), indexed with that history.
fn indexed_with_one_commit(name: &str) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=graphctx",
            "-c",
            "user.email=graphctx@example.com",
            "commit",
            "-qm",
            "one",
        ],
    ] {
        let st = std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .status()
            .expect("git runs");
        assert!(st.success(), "git {args:?}");
    }
    let store = Store::memory().unwrap();
    index(&store, dir.path());
    (dir, store)
}

#[test]
fn priority_one_entities_get_full_detail_before_others_get_any() {
    let (_dir, store) = indexed_with_one_commit("warm");
    let counter = TokenCounter::new(Encoding::O200k);
    let warm = "src/store/cache.rs-store::cache-warm";
    let mut req = request(BaseSpec::Keys(vec![warm.into()]));
    req.budget = 3000;
    let out = emit::build_context(&store, &req, &counter).unwrap();
    assert!(out.token_count <= 3000);
    let doc: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(
        doc["optimization_info"]["truncation_applied"], true,
        "{doc}"
    );
    let entities = doc["entities"].as_array().unwrap();
    let full = |e: &serde_json::Value| e["lsp_metadata"]["type_information"].is_object();
    let above_minimal = |e: &serde_json::Value| e.get("tdd_classification").is_some();
    let level = |e: &serde_json::Value| e["dependency_level"].as_u64().unwrap();
    // The direct callees in the base's own file are there in full.
    for callee in ["is_even", "checksum"] {
        let e = entities
            .iter()
            .find(|e| e["interface_signature"]["name"] == callee)
            .unwrap_or_else(|| panic!("{callee} missing from {doc}"));
        assert_eq!(level(e), 1);
        assert!(full(e), "{callee} not in full detail: {e}");
    }
    let p1_full = entities.iter().filter(|e| level(e) <= 1).all(full);
    let p2_above_minimal = entities.iter().filter(|e| level(e) >= 2).any(above_minimal);
    assert!(p1_full || !p2_above_minimal, "{doc}");
    assert!(
        entities.iter().any(|e| level(e) >= 2),
        "the budget leaves room for two-hop entities: {doc}"
    );
    assert_golden("warm_context_3000.json", &normalise(&out.text));

    // Format E at a small budget.
    let mut e = req.clone();
    e.format = Format::E;
    e.budget = 500;
    let out_e = emit::build_context(&store, &e, &counter).unwrap();
    assert!(out_e.token_count <= 500);
    let text_e = out_e
        .text
        .replacen(&format!("{} tokens", out_e.token_count), "N tokens", 1);
    assert_golden("warm_context_500.e.txt", &text_e);
    // Tier-major: every priority-1 entity keeps a line with location and
    // signature — entities farther out were dropped to make that room
    // (their files are named in `# more in:`), and any that stayed are
    // minimal.
    let parsed = emit::format_e::parse(&out_e.text).unwrap();
    let near: Vec<&str> = entities
        .iter()
        .filter(|e| level(e) <= 1)
        .map(|e| e["isgl1_key"].as_str().unwrap())
        .collect();
    let base = parsed.nodes.iter().find(|n| n.key == warm).unwrap();
    assert!(base.signature.starts_with("pub fn warm(t"), "{base:?}");
    for callee in ["is_even", "checksum", "persist"] {
        let n = parsed.nodes.iter().find(|n| n.name == callee).unwrap();
        assert!(!n.location.is_empty() && !n.signature.is_empty(), "{n:?}");
    }
    assert!(out_e.entities_excluded > 0);
    assert!(out_e.text.contains("\n# more in: "), "{}", out_e.text);
    for n in &parsed.nodes {
        if !near.contains(&n.key.as_str()) {
            assert!(n.signature.is_empty() && n.doc.is_empty(), "{n:?}");
        }
    }
}

#[test]
fn the_document_has_seed_004_structure_and_round_trips() {
    let (_dir, store) = indexed("shapes");
    let counter = TokenCounter::new(Encoding::O200k);
    let out = emit::build_context(
        &store,
        &request(BaseSpec::File("src/geometry/mod.rs".into())),
        &counter,
    )
    .unwrap();
    let doc: Doc = serde_json::from_str(&out.text).expect("seed 004 structure");
    assert_eq!(doc.version, "1.0");
    assert_eq!(doc.token_count, out.token_count);
    assert_eq!(doc.token_count, counter.count_exact(&out.text));
    assert_eq!(doc.query_context.hop_depth, 2);
    assert_eq!(doc.query_context.size_limit, 100_000);
    assert!(!doc.entities.is_empty());
    for e in &doc.entities {
        assert!((0.0..=1.0).contains(&e.relevance_score));
        assert!(
            e.tdd_classification.is_some(),
            "full detail at 100k: {}",
            e.isgl1_key
        );
    }
    let base: Vec<&EntityJson> = doc
        .entities
        .iter()
        .filter(|e| e.dependency_level == 0)
        .collect();
    assert!(base.iter().all(|e| e.relevance_score == 1.0));
    assert!(doc
        .relationships
        .iter()
        .any(|r| r.relationship_type == "implements"));
    let again: Doc = serde_json::from_str(&serde_json::to_string(&doc).unwrap()).unwrap();
    assert_eq!(again, doc);
}

#[test]
fn tdd_and_usage_come_from_the_graph() {
    let (_dir, store) = indexed("shapes");
    let counter = TokenCounter::new(Encoding::O200k);
    let key = "src/geometry/point.rs-geometry::point-Point::distance";
    let out =
        emit::build_context(&store, &request(BaseSpec::Keys(vec![key.into()])), &counter).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    let e = doc["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["isgl1_key"] == key)
        .unwrap();
    // One #[test] calls it: 0.6 + 0.1.
    assert_eq!(e["tdd_classification"]["test_coverage_estimate"], 0.7);
    assert_eq!(
        e["lsp_metadata"]["usage_analysis"]["call_sites"],
        serde_json::json!(["src/geometry/point.rs"])
    );
    assert_eq!(
        e["interface_signature"]["signature"]["parameters"][1]["pattern"],
        "ref"
    );
}

#[test]
fn unknown_keys_get_entity_not_found_with_suggestions() {
    let (_dir, store) = indexed("shapes");
    let counter = TokenCounter::new(Encoding::O200k);
    let err = emit::build_context(
        &store,
        &request(BaseSpec::Keys(vec![
            "src/geometry/mod.rs-geometry-Rectangle".into(),
        ])),
        &counter,
    )
    .unwrap_err();
    let j = err.to_json();
    assert_eq!(j["error"], "entity_not_found");
    assert_eq!(
        j["missing_entities"][0],
        "src/geometry/mod.rs-geometry-Rectangle"
    );
    assert_eq!(j["suggestions"][0], "src/geometry/mod.rs-geometry-Rect");
}

#[test]
fn explicit_bases_that_cannot_fit_are_context_size_exceeded() {
    let (_dir, store) = indexed("shapes");
    let counter = TokenCounter::new(Encoding::O200k);
    let mut req = request(BaseSpec::Keys(vec![
        "src/geometry/mod.rs-geometry-Rect".into(),
        "src/geometry/mod.rs-geometry-Circle".into(),
    ]));
    req.budget = 60;
    match emit::build_context(&store, &req, &counter) {
        Err(e @ ContextError::SizeExceeded { .. }) => {
            let j = e.to_json();
            assert_eq!(j["error"], "context_size_exceeded");
            assert!(j["attempted_size"].as_u64().unwrap() > 60);
            assert!(j["suggestion"].as_str().unwrap().contains("hop_depth"));
        }
        other => panic!("expected context_size_exceeded, got {other:?}"),
    }
}

#[test]
fn cycles_are_reported_and_fatal_only_on_request() {
    let (_dir, store) = indexed("cycles");
    let counter = TokenCounter::new(Encoding::O200k);
    let mut req = request(BaseSpec::Keys(vec!["src/lib.rs-crate-is_even".into()]));
    let out = emit::build_context(&store, &req, &counter).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(
        doc["cycles"][0],
        serde_json::json!([
            "src/lib.rs-crate-is_even",
            "src/lib.rs-crate-is_odd",
            "src/lib.rs-crate-is_even"
        ])
    );
    req.fail_on_cycles = true;
    let err = emit::build_context(&store, &req, &counter).unwrap_err();
    assert_eq!(err.to_json()["error"], "dependency_cycle_detected");
    assert_eq!(err.to_json()["cycle_path"][1], "src/lib.rs-crate-is_odd");

    let all = graphctx::analyse::cycles::find_cycles(&store, "code").unwrap();
    let kinds: Vec<(&str, Vec<String>)> =
        all.iter().map(|c| (c.kind, c.cycle_path.clone())).collect();
    assert!(kinds.contains(&(
        "self_loop",
        vec![
            "src/lib.rs-crate-factorial".into(),
            "src/lib.rs-crate-factorial".into()
        ]
    )));
    assert!(kinds.contains(&(
        "module",
        vec![
            "src/left.rs-crate-left".into(),
            "src/right.rs-crate-right".into(),
            "src/left.rs-crate-left".into()
        ]
    )));
    assert!(!all
        .iter()
        .any(|c| c.members.iter().any(|m| m.ends_with("-square"))));
}

#[test]
fn the_seed_strategy_follows_the_seed_formula() {
    let (_dir, store) = indexed("shapes");
    let counter = TokenCounter::new(Encoding::O200k);
    let mut req = request(BaseSpec::Keys(vec!["src/util.rs-util-clamp_scale".into()]));
    req.strategy = Relevance::Seed;
    let out = emit::build_context(&store, &req, &counter).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    for e in doc["entities"].as_array().unwrap() {
        let level = e["dependency_level"].as_u64().unwrap();
        let score = e["relevance_score"].as_f64().unwrap();
        let is_test = e["lsp_metadata"]["semantic_tokens"]["modifier"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("test"));
        let critical = e["tdd_classification"]["critical_path"].as_bool().unwrap();
        let expected = f64::min(
            match level {
                0 => 1.0,
                1 => 0.8,
                2 => 0.6,
                _ => 0.0,
            } + if is_test { 0.2 } else { 0.0 }
                + if critical { 0.3 } else { 0.0 },
            1.0,
        );
        assert!(
            (score - expected).abs() < 1e-9,
            "{}: {score} vs {expected}",
            e["isgl1_key"]
        );
    }
}

#[test]
fn the_cache_answers_until_the_graph_changes() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture("shapes"), dir.path());
    let store = Store::memory().unwrap();
    index(&store, dir.path());
    let counter = TokenCounter::new(Encoding::O200k);
    let req = request(BaseSpec::Keys(vec!["src/util.rs-util-clamp_scale".into()]));
    let first = emit::cached_context(&store, &req, &counter, true).unwrap();
    assert!(!first.from_cache);
    let second = emit::cached_context(&store, &req, &counter, true).unwrap();
    assert!(second.from_cache);
    assert_eq!(second.text, first.text);
    // A different request is a different entry.
    let mut other = req.clone();
    other.hops = 1;
    assert!(
        !emit::cached_context(&store, &other, &counter, true)
            .unwrap()
            .from_cache
    );
    // Re-indexing an unchanged tree keeps the cache valid…
    index(&store, dir.path());
    assert!(
        emit::cached_context(&store, &req, &counter, true)
            .unwrap()
            .from_cache
    );
    // …a change invalidates it.
    let util = dir.path().join("src/util.rs");
    let text = std::fs::read_to_string(&util).unwrap();
    std::fs::write(&util, text.replace("100.0", "50.0")).unwrap();
    index(&store, dir.path());
    assert!(
        !emit::cached_context(&store, &req, &counter, true)
            .unwrap()
            .from_cache
    );
}

#[test]
fn blast_radius_matches_a_breadth_first_search() {
    let (_dir, store) = indexed("shapes");
    let rows = store
        .read(
            "?[s, d] := *edge{graph: 'code', src: s, dst: d}",
            Default::default(),
        )
        .unwrap();
    let edges: Vec<(String, String)> = rows
        .rows
        .iter()
        .map(|r| {
            (
                r[0].get_str().unwrap().to_string(),
                r[1].get_str().unwrap().to_string(),
            )
        })
        .collect();
    let all = graphctx::graph::list_entities(&store, "code", &Default::default()).unwrap();
    for start in all.iter().step_by(3) {
        for hops in 0..=3u32 {
            let got = graphctx::analyse::blast::blast_radius(
                &store,
                "code",
                std::slice::from_ref(&start.key),
                hops,
            )
            .unwrap();
            let mut dist = std::collections::BTreeMap::new();
            dist.insert(start.key.clone(), 0u32);
            let mut frontier = vec![start.key.clone()];
            for d in 1..=hops {
                let mut next = vec![];
                for n in &frontier {
                    for (a, b) in &edges {
                        for (x, y) in [(a, b), (b, a)] {
                            if x == n && !dist.contains_key(y) {
                                dist.insert(y.clone(), d);
                                next.push(y.clone());
                            }
                        }
                    }
                }
                frontier = next;
            }
            let got: std::collections::BTreeMap<String, u32> =
                got.into_iter().map(|r| (r.key, r.distance)).collect();
            assert_eq!(got, dist, "from {} with {hops} hops", start.key);
        }
    }
}

// ---- the budget property over random graphs ----

#[derive(Debug, Clone)]
struct RandomCrate {
    /// For each function: the functions it calls, its doc length, its params.
    fns: Vec<(Vec<usize>, usize, usize)>,
    structs: Vec<(Vec<usize>, usize)>,
}

fn random_crate() -> impl Strategy<Value = RandomCrate> {
    let f = (
        prop::collection::vec(0usize..40, 0..6),
        0usize..400,
        0usize..5,
    );
    let s = (prop::collection::vec(0usize..12, 0..5), 0usize..200);
    (
        prop::collection::vec(f, 1..40),
        prop::collection::vec(s, 0..12),
    )
        .prop_map(|(fns, structs)| RandomCrate { fns, structs })
}

fn write_crate(root: &Path, c: &RandomCrate) {
    let words = [
        "alpha", "beta", "gamma", "delta", "graph", "token", "budget", "entity",
    ];
    let mut files: Vec<String> = vec![String::new(); 3];
    for (i, (fields, doc)) in c.structs.iter().enumerate() {
        let doc: Vec<&str> = (0..*doc)
            .map(|k| words[(k * 7 + i) % words.len()])
            .collect();
        let mut s = format!("/// {}\npub struct S{i} {{\n", doc.join(" "));
        for (k, f) in fields.iter().enumerate() {
            let ty = if *f < c.structs.len() {
                format!("Box<S{f}>")
            } else {
                "u32".into()
            };
            s.push_str(&format!("    pub f{k}: {ty},\n"));
        }
        s.push_str("}\n");
        files[i % 3].push_str(&s);
    }
    for (i, (calls, doc, params)) in c.fns.iter().enumerate() {
        let doc: Vec<&str> = (0..*doc)
            .map(|k| words[(k * 3 + i) % words.len()])
            .collect();
        let ps: Vec<String> = (0..*params)
            .map(|p| format!("p{p}: &mut Vec<String>"))
            .collect();
        let mut body = String::new();
        for t in calls.iter().filter(|t| **t < c.fns.len()) {
            body.push_str(&format!("    crate::m{}::f{t}();\n", t % 3));
        }
        files[i % 3].push_str(&format!(
            "/// {}\npub fn f{i}({}) {{\n{body}}}\n",
            doc.join(" "),
            ps.join(", ")
        ));
    }
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub mod m0;\npub mod m1;\npub mod m2;\n",
    )
    .unwrap();
    for (i, f) in files.iter().enumerate() {
        std::fs::write(root.join(format!("src/m{i}.rs")), f).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn emitted_tokens_never_exceed_the_budget(
        c in random_crate(),
        budget in 40usize..6000,
        hops in 0u32..=3,
        pick in any::<usize>(),
        by_file in any::<bool>(),
        e_format in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        write_crate(dir.path(), &c);
        let store = Store::memory().unwrap();
        index_repository(&store, dir.path(), &IndexOptions { history: false, ..IndexOptions::default() }).unwrap();
        let entities = graphctx::graph::list_entities(&store, "code", &Default::default()).unwrap();
        let base = if by_file {
            BaseSpec::File(format!("src/m{}.rs", pick % 3))
        } else {
            BaseSpec::Keys(vec![entities[pick % entities.len()].key.clone()])
        };
        let mut req = request(base);
        req.budget = budget;
        req.hops = hops;
        req.format = if e_format { Format::E } else { Format::Json };
        let counter = TokenCounter::new(Encoding::O200k);
        match emit::build_context(&store, &req, &counter) {
            Ok(out) => {
                let exact = counter.count_exact(&out.text);
                prop_assert_eq!(out.token_count, exact);
                prop_assert!(exact <= budget, "{} > {}", exact, budget);
                // Below ~1500 tokens one entity is a large share of the budget.
                if !out.steps.is_empty() && out.entities_excluded > 0 && budget >= 1500 {
                    prop_assert!(exact as f64 >= 0.9 * budget as f64,
                        "cut document uses only {} of {} tokens ({:?})", exact, budget, out.steps);
                }
                if !e_format {
                    let doc: serde_json::Value = serde_json::from_str(&out.text).unwrap();
                    prop_assert_eq!(doc["token_count"].as_u64().unwrap() as usize, exact);
                } else {
                    // Every edge endpoint names exactly one node line.
                    let parsed = emit::format_e::parse(&out.text);
                    prop_assert!(parsed.is_ok(), "{:?}\n{}", parsed, out.text);
                    prop_assert_eq!(parsed.unwrap().edges.len(), out.relationships);
                }
            }
            Err(ContextError::SizeExceeded { attempted_size, .. }) => {
                // Only explicitly named entities are never dropped; otherwise
                // only a budget below the empty document's size fails.
                prop_assert!(req.base.is_explicit() || budget < 400, "{}", budget);
                prop_assert!(attempted_size > budget);
            }
            Err(ContextError::EntityNotFound { .. }) => {
                // A random file may have no entities.
                prop_assert!(by_file);
            }
            Err(e) => prop_assert!(false, "unexpected error {e:?}"),
        }
    }
}

/// A case the property once found: a whole file as the base, no hops. The
/// estimate ran long, the first top-up overshot the budget and trimming it
/// ended far below the document before it; the fuller document that fitted
/// is the answer.
#[test]
fn a_top_up_that_overshoots_keeps_the_fuller_document() {
    let mut fns = vec![(vec![], 0usize, 0usize); 39];
    fns[2] = (vec![0], 0, 0);
    fns[11] = (vec![0], 63, 0);
    fns[14] = (vec![0], 0, 4);
    fns[17] = (vec![0], 131, 1);
    let c = RandomCrate {
        fns,
        structs: vec![(vec![], 0), (vec![], 0), (vec![3, 3], 155)],
    };
    let dir = tempfile::tempdir().unwrap();
    write_crate(dir.path(), &c);
    let store = Store::memory().unwrap();
    let options = IndexOptions {
        history: false,
        ..IndexOptions::default()
    };
    index_repository(&store, dir.path(), &options).unwrap();
    let mut req = request(BaseSpec::File("src/m2.rs".into()));
    req.budget = 1515;
    req.hops = 0;
    let counter = TokenCounter::new(Encoding::O200k);
    let out = emit::build_context(&store, &req, &counter).unwrap();
    assert!(out.entities_excluded > 0, "{}", out.text);
    assert_eq!(out.token_count, counter.count_exact(&out.text));
    assert!(
        out.token_count <= req.budget && out.token_count as f64 >= 0.9 * req.budget as f64,
        "{} of {} tokens ({:?})",
        out.token_count,
        req.budget,
        out.steps
    );
}

/// A crate whose `bindings` module holds more items than a hub may have
/// (`blast::HUB_EDGES`), one of them called from the crate root.
fn crate_with_a_hub_module() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"hub\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("src/lib.rs"),
        "pub mod bindings;\n\n/// Uses one binding.\npub fn caller() {\n    bindings::item_0();\n}\n",
    )
    .unwrap();
    let items: String = (0..300)
        .map(|i| format!("/// Binding {i}.\npub fn item_{i}() {{}}\n"))
        .collect();
    std::fs::write(root.join("src/bindings.rs"), items).unwrap();
    let store = Store::memory().unwrap();
    index(&store, root);
    (dir, store)
}

/// A context's neighbourhood reaches a module of hundreds of items but does
/// not walk on to every item in it: the blast radius (the `blast` command)
/// holds all 300, the context's candidates the base's own neighbours. With
/// the module itself as base, its items are all candidates.
#[test]
fn a_context_does_not_spread_through_a_hub() {
    use graphctx::analyse::blast;
    use graphctx::analyse::select::select;
    let (_dir, store) = crate_with_a_hub_module();
    let item = "src/bindings.rs-bindings-item_0".to_string();
    let module = "src/bindings.rs-crate-bindings";
    let sibling = "src/bindings.rs-bindings-item_299";
    let caller = "src/lib.rs-crate-caller";
    let keys = |reached: &[blast::Reached]| -> Vec<String> {
        reached.iter().map(|r| r.key.clone()).collect()
    };
    let radius =
        keys(&blast::blast_radius(&store, "code", std::slice::from_ref(&item), 2).unwrap());
    assert!(radius.iter().any(|k| k == sibling), "{radius:?}");
    let near = keys(&blast::neighbourhood(&store, "code", std::slice::from_ref(&item), 2).unwrap());
    for k in [module, caller] {
        assert!(near.iter().any(|n| n == k), "{k} missing from {near:?}");
    }
    assert!(!near.iter().any(|k| k == sibling), "{near:?}");
    assert!(near.len() < 10, "{near:?}");

    let selection = select(
        &store,
        "code",
        &BaseSpec::Keys(vec![item.clone()]),
        2,
        Relevance::default(),
    )
    .unwrap();
    assert!(selection.candidates.iter().any(|c| c.key == caller));
    assert!(!selection.candidates.iter().any(|c| c.key == sibling));

    let from_module =
        keys(&blast::neighbourhood(&store, "code", &[module.to_string()], 1).unwrap());
    assert!(from_module.iter().any(|k| k == sibling));
    assert_eq!(
        from_module
            .iter()
            .filter(|k| k.contains("-bindings-item_"))
            .count(),
        300
    );
}

/// Where no entity has more than `HUB_EDGES` edges, a context's
/// neighbourhood is the blast radius: the same entities at the same
/// distances, reached through the same edges, around every entity of
/// the `shapes` and `resolution` fixtures and at every depth.
#[test]
fn away_from_hubs_the_neighbourhood_is_the_blast_radius() {
    use graphctx::analyse::blast;
    for name in ["shapes", "resolution"] {
        let store = Store::memory().unwrap();
        index(&store, &fixture(name));
        let rows = store
            .read("?[id] := *node{graph: 'code', id}", Default::default())
            .unwrap();
        let keys: Vec<String> = rows
            .rows
            .iter()
            .map(|r| r[0].get_str().unwrap().to_string())
            .collect();
        assert!(keys.len() > 40, "{name}: {} entities", keys.len());
        for (i, key) in keys.iter().enumerate() {
            let base = [key.clone(), keys[(i * 7 + 3) % keys.len()].clone()];
            for bases in [&base[..1], &base[..]] {
                for hops in 0..=blast::MAX_HOPS {
                    let radius = blast::blast_radius(&store, "code", bases, hops).unwrap();
                    let near = blast::neighbourhood(&store, "code", bases, hops).unwrap();
                    assert_eq!(near, radius, "{name}: {bases:?}, {hops} hops");
                }
            }
        }
        let missing = vec!["no such entity".to_string()];
        assert!(blast::neighbourhood(&store, "code", &missing, 2)
            .unwrap()
            .is_empty());
    }
}
