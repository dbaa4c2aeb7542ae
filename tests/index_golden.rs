//! Golden entity and edge sets for the `shapes` fixture workspace, plus
//! explicit checks of the cases the fixture was written for.

mod common;

use common::{assert_golden, fixture, index_fresh};
use graphctx::graph::{self, Direction, EntityFilter};
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
