//! Ontology graphs and canvas context capture: the model's invariants,
//! Format E and JSON round trips and errors, every capture mode and
//! option, the cache, sanitising, access, seed 000's scenarios as goldens,
//! and the CLI end to end.

use crate::common;

use std::process::Command;

use common::{assert_golden, fixture};
use graphctx::capture::session::{self, Layout, SessionUpdate};
use graphctx::capture::{self, CaptureError, CaptureOptions, Mode};
use graphctx::ontology::io::{self, Format, ImportError};
use graphctx::ontology::store::{load_graph, Changes, OntoTx};
use graphctx::ontology::{
    format_e, NodeType, OntoEdge, OntoNode, OntologyError, Position, RelType,
};
use graphctx::store::{Batch, Store};
use graphctx::support::tokens::{Encoding, TokenCounter};
use serde_json::json;

fn read_fixture(name: &str) -> String {
    std::fs::read_to_string(fixture("ontology").join(name)).unwrap()
}

fn import(store: &Store, graph: &str, text: &str, format: Format) -> Result<Changes, ImportError> {
    let mut tx = OntoTx::begin(store, graph).unwrap();
    io::import(&mut tx, text, format, false)?;
    let mut batch = Batch::new();
    let ch = tx.finish(&mut batch);
    store.apply(batch).unwrap();
    Ok(ch)
}

fn cargo_store() -> Store {
    let store = Store::memory().unwrap();
    import(&store, "cargo", &read_fixture("cargo.e"), Format::E).unwrap();
    store
}

fn set(store: &Store, graph: &str, sid: &str, u: SessionUpdate) {
    let g = load_graph(store, graph).unwrap();
    session::update(store, &g, sid, u).unwrap();
}

fn opts(mode: Mode) -> CaptureOptions {
    CaptureOptions {
        mode,
        ..CaptureOptions::default()
    }
}

fn cap(store: &Store, graph: &str, sid: &str, o: &CaptureOptions) -> capture::CaptureResult {
    capture::capture(store, graph, sid, None, o).unwrap()
}

/// The capture text with its timestamp masked (goldens).
fn masked(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with("**Timestamp:**") {
                "**Timestamp:** <masked>"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn section<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| *l != name);
    lines.next();
    lines
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.is_empty())
        .collect()
}

// ---------------------------------------------------------------- model

#[test]
fn types_parse_by_name_and_abbreviation_and_unknown_ones_are_clear_errors() {
    for (name, ab) in [
        ("SYS", "SY"),
        ("ACTOR", "AC"),
        ("UC", "UC"),
        ("FCHAIN", "FC"),
        ("FUNC", "FN"),
        ("FLOW", "FL"),
        ("REQ", "RQ"),
        ("TEST", "TS"),
        ("MOD", "MD"),
        ("SCHEMA", "SC"),
    ] {
        let t = NodeType::parse(name).unwrap();
        assert_eq!((t.name(), t.abbrev()), (name, ab));
        assert_eq!(NodeType::parse(ab).unwrap(), t);
    }
    let err = NodeType::parse("WIDGET").unwrap_err().to_string();
    assert!(
        err.contains("unknown node type `WIDGET`") && err.contains("FCHAIN"),
        "{err}"
    );
    for (long, short) in [
        ("compose", "cp"),
        ("io", "io"),
        ("satisfy", "st"),
        ("verify", "vf"),
    ] {
        assert_eq!(
            RelType::parse(long).unwrap(),
            RelType::parse(short).unwrap()
        );
        assert_eq!(RelType::parse(long).unwrap().short(), short);
    }
    let err = RelType::parse("owns").unwrap_err().to_string();
    assert!(err.contains("unknown relationship type `owns`"), "{err}");
}

#[test]
fn semantic_ids_are_per_type_persistent_and_never_reused() {
    let store = Store::memory().unwrap();
    let mut tx = OntoTx::begin(&store, "m").unwrap();
    let a = tx
        .upsert_node(OntoNode::new(NodeType::Func, "ParseInput", ""))
        .unwrap()
        .after;
    let b = tx
        .upsert_node(OntoNode::new(NodeType::Func, "Validate Input", ""))
        .unwrap()
        .after;
    let r = tx
        .upsert_node(OntoNode::new(NodeType::Req, "InputOk", ""))
        .unwrap()
        .after;
    assert_eq!(
        [
            a.semantic_id.as_str(),
            b.semantic_id.as_str(),
            r.semantic_id.as_str()
        ],
        [
            "ParseInput.FN.001",
            "ValidateInput.FN.002",
            "InputOk.RQ.001"
        ]
    );
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    store.apply(batch).unwrap();

    // A later transaction continues the counters; the map works both ways.
    let mut tx = OntoTx::begin(&store, "m").unwrap();
    assert_eq!(
        tx.graph().uuid_of("ParseInput.FN.001"),
        Some(a.uuid.as_str())
    );
    assert_eq!(
        tx.graph().semantic_id_of(&b.uuid),
        Some("ValidateInput.FN.002")
    );
    tx.delete_node("ValidateInput.FN.002").unwrap();
    let c = tx
        .upsert_node(OntoNode::new(NodeType::Func, "ValidateInput", ""))
        .unwrap()
        .after;
    assert_eq!(
        c.semantic_id, "ValidateInput.FN.003",
        "a deleted number is not handed out again"
    );
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    store.apply(batch).unwrap();

    let mut tx = OntoTx::begin(&store, "m").unwrap();
    let mut thief = OntoNode::new(NodeType::Func, "Other", "");
    thief.semantic_id = "ValidateInput.FN.002".into();
    let err = tx.upsert_node(thief).unwrap_err();
    assert!(
        matches!(err, OntologyError::SemanticIdRetired { .. }),
        "{err}"
    );
    let mut dup = OntoNode::new(NodeType::Func, "Other", "");
    dup.semantic_id = "ParseInput.FN.001".into();
    assert!(matches!(
        tx.upsert_node(dup),
        Err(OntologyError::SemanticIdTaken { .. })
    ));
    let mut wrong = OntoNode::new(NodeType::Req, "Other", "");
    wrong.semantic_id = "Other.FN.009".into();
    assert!(matches!(
        tx.upsert_node(wrong),
        Err(OntologyError::SemanticIdTypeMismatch { .. })
    ));
    // An LLM-proposed ID (seed 001 §6.1) is taken and moves the counter past it.
    let mut proposed = OntoNode::new(NodeType::Func, "ProcessPayment", "");
    proposed.semantic_id = "ProcessPayment.FN.010".into();
    tx.upsert_node(proposed).unwrap();
    let next = tx
        .upsert_node(OntoNode::new(NodeType::Func, "Next", ""))
        .unwrap()
        .after;
    assert_eq!(next.semantic_id, "Next.FN.011");
    // Type and semantic ID of an existing node do not change.
    let mut retyped = a.clone();
    retyped.node_type = NodeType::Req;
    retyped.semantic_id.clear();
    assert!(matches!(
        tx.upsert_node(retyped),
        Err(OntologyError::TypeChange { .. })
    ));
    assert!(matches!(
        tx.upsert_edge(OntoEdge::new(&a.uuid, RelType::Satisfy, "Nope.RQ.001")),
        Err(OntologyError::UnknownNode(_))
    ));
}

#[test]
fn blast_radius_and_cycles_run_on_ontology_graphs() {
    let store = cargo_store();
    let g = load_graph(&store, "cargo").unwrap();
    let fleet = g.uuid_of("ManageFleet.UC.001").unwrap().to_string();
    let reached =
        graphctx::analyse::blast::blast_radius(&store, "cargo", std::slice::from_ref(&fleet), 1)
            .unwrap();
    let mut near: Vec<&str> = reached
        .iter()
        .filter(|r| r.distance == 1)
        .map(|r| g.semantic_id_of(&r.key).unwrap())
        .collect();
    near.sort();
    assert_eq!(
        near,
        [
            "AssignVehicle.FN.005",
            "CargoManagement.SY.001",
            "Dispatcher.AC.002",
            "FleetAvailability.RQ.005"
        ]
    );
    assert!(graphctx::ontology::find_cycles(&store, "cargo")
        .unwrap()
        .is_empty());
    import(
        &store,
        "cargo",
        "## Edges\nAssignVehicle.FN.005 -cp-> CargoManagement.SY.001\n",
        Format::E,
    )
    .unwrap();
    let cycles = graphctx::ontology::find_cycles(&store, "cargo").unwrap();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let members: Vec<&str> = cycles[0]
        .members
        .iter()
        .map(|u| g.semantic_id_of(u).unwrap())
        .collect();
    assert_eq!(members.len(), 3, "{members:?}");
    assert!(members.contains(&"ManageFleet.UC.001"));
}

// ------------------------------------------------------- import / export

#[test]
fn format_e_round_trips_the_seed_system() {
    let store = cargo_store();
    let g = load_graph(&store, "cargo").unwrap();
    assert_eq!((g.nodes.len(), g.edges.len()), (42, 58));
    let text = io::export(&g, Format::E);
    // The fixture writes one edge per line; the export groups them.
    assert_golden("ontology/cargo_grouped.e", &text);
    // Parsing the export into a new graph gives the same graph again.
    import(&store, "copy", &text, Format::E).unwrap();
    let copy = load_graph(&store, "copy").unwrap();
    assert_eq!(io::export(&copy, Format::E), text);
    assert_eq!(copy.counters, g.counters);
}

#[test]
fn format_e_round_trips_escapes_positions_and_properties() {
    let store = Store::memory().unwrap();
    let mut tx = OntoTx::begin(&store, "m").unwrap();
    let mut a = OntoNode::new(
        NodeType::Schema,
        "#Pipe|Name\\x",
        "line one\nline two | three",
    );
    a.position = Some(Position { x: -12.5, y: 3.0 });
    a.props.insert("fields".into(), json!(["a|b", {"n": 1}]));
    let a = tx.upsert_node(a).unwrap().after;
    let mut b = OntoNode::new(NodeType::Flow, "Ünïcode Flow", "");
    b.props.insert("rate".into(), json!(2.5));
    let b = tx.upsert_node(b).unwrap().after;
    let mut e = OntoEdge::new(&b.uuid, RelType::Relation, &a.uuid);
    e.props.insert("note".into(), json!("x -> y"));
    tx.upsert_edge(e).unwrap();
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    store.apply(batch).unwrap();
    let g = load_graph(&store, "m").unwrap();

    let text = io::export(&g, Format::E);
    let parsed = format_e::parse(&text).unwrap();
    assert_eq!(parsed.nodes.len(), 2);
    let pa = &parsed
        .nodes
        .iter()
        .find(|p| p.node.semantic_id == a.semantic_id)
        .unwrap()
        .node;
    assert_eq!(
        (pa.name.as_str(), pa.descr.as_str()),
        (a.name.as_str(), a.descr.as_str())
    );
    assert_eq!(pa.position, a.position);
    assert_eq!(pa.props, a.props);
    assert_eq!(parsed.edges[0].props["note"], "x -> y");

    import(&store, "copy", &text, Format::E).unwrap();
    assert_eq!(
        io::export(&load_graph(&store, "copy").unwrap(), Format::E),
        text
    );
}

#[test]
fn json_round_trips_with_uuids() {
    let store = Store::memory().unwrap();
    let input = read_fixture("order.json");
    import(&store, "order", &input, Format::Json).unwrap();
    let g = load_graph(&store, "order").unwrap();
    assert_eq!(
        g.uuid_of("Customer.AC.001"),
        Some("550e8400-e29b-41d4-a716-446655440000")
    );
    assert_eq!(g.edge_by_uuid("e-3").unwrap().props["volume"], "high");
    let out = io::export(&g, Format::Json);
    import(&store, "order2", &out, Format::Json).unwrap();
    let g2 = load_graph(&store, "order2").unwrap();
    assert_eq!(io::export(&g2, Format::Json), out);
    // Same graph as the input: every node and edge with its uuid and fields.
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let want: serde_json::Value = serde_json::from_str(&input).unwrap();
    let by_uuid = |v: &serde_json::Value, k: &str| {
        let mut items: Vec<serde_json::Value> = v[k]
            .as_array()
            .unwrap()
            .iter()
            .cloned()
            .map(|mut x| {
                // Compare positions as numbers.
                if let Some(p) = x["properties"].get_mut("position") {
                    *p = json!({"x": p["x"].as_f64(), "y": p["y"].as_f64()});
                }
                x
            })
            .collect();
        items.sort_by_key(|x| x["uuid"].as_str().unwrap().to_string());
        items
    };
    assert_eq!(by_uuid(&v, "nodes"), by_uuid(&want, "nodes"));
    assert_eq!(
        by_uuid(&v, "relationships"),
        by_uuid(&want, "relationships")
    );
    // A JSON graph exports to Format E and back.
    let e = io::export(&g, Format::E);
    import(&store, "order3", &e, Format::E).unwrap();
    assert_eq!(
        io::export(&load_graph(&store, "order3").unwrap(), Format::E),
        e
    );
}

#[test]
fn malformed_format_e_lines_are_reported_with_their_line_number() {
    let cases = [
        (
            "## Nodes\nA|SYS|A.SY.001|ok\nB|WIDGET|B.SY.002|x\n",
            3,
            "unknown node type `WIDGET`",
        ),
        (
            "## Nodes\nA|SYS\n",
            2,
            "a node line is Name|TYPE|SemanticID|Descr",
        ),
        (
            "## Nodes\nA|SYS|A.SY.1|x\n",
            2,
            "malformed semantic ID `A.SY.1`",
        ),
        (
            "## Nodes\nA|SYS|A.FN.001|x\n",
            2,
            "is for type FUNC, but the node is a SYS",
        ),
        ("## Nodes\nA|SYS|A.SY.001|x|@1,zz\n", 2, "position `@1,zz`"),
        (
            "## Nodes\nA|SYS|A.SY.001|x|{not json\n",
            2,
            "JSON object of properties",
        ),
        (
            "## Nodes\nA|SYS|A.SY.001|x\nA|SYS|A.SY.001|y\n",
            3,
            "already defined on line 2",
        ),
        (
            "## Nodes\nA|SYS|A.SY.001|x\n\n## Edges\nA.SY.001 -owns-> A.SY.001\n",
            5,
            "unknown relationship type `owns`",
        ),
        (
            "## Edges\nA.SY.001 => B.UC.001\n",
            2,
            "an edge line is `Source -rel-> Target`",
        ),
        ("hello\n## Nodes\n", 1, "expected `## Nodes` or `## Edges`"),
        ("## Nodes\n## Stuff\n", 2, "unknown section"),
    ];
    for (text, line, msg) in cases {
        let err = format_e::parse(text).unwrap_err();
        assert_eq!(err.line, line, "{text:?}: {err}");
        assert!(err.to_string().contains(msg), "{text:?}: {err}");
        assert!(err
            .to_string()
            .starts_with(&format!("Format E line {line}: ")));
    }
    // References are checked on import, with the line of the edge.
    let store = Store::memory().unwrap();
    let err = import(
        &store,
        "m",
        "## Nodes\nA|SYS|A.SY.001|x\n\n## Edges\nA.SY.001 -cp-> Missing.UC.001\n",
        Format::E,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("line 5") && err.to_string().contains("Missing.UC.001"),
        "{err}"
    );
}

#[test]
fn a_failed_import_stores_nothing() {
    let store = cargo_store();
    let before = io::export(&load_graph(&store, "cargo").unwrap(), Format::Json);
    let seq = load_graph(&store, "cargo").unwrap().seq;
    let bad = "## Nodes\nNew|UC|New.UC.009|fine\nCargoManagement|UC|CargoManagement.SY.001|bad\n";
    assert!(import(&store, "cargo", bad, Format::E).is_err());
    let bad_json = r#"{"nodes": [{"type": "UC", "properties": {"Name": "X"}}, {"type": "GIZMO", "properties": {"Name": "Y"}}]}"#;
    let err = import(&store, "cargo", bad_json, Format::Json).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("nodes[1]: unknown node type `GIZMO`"),
        "{err}"
    );
    let g = load_graph(&store, "cargo").unwrap();
    assert_eq!(g.seq, seq);
    assert_eq!(io::export(&g, Format::Json), before);
}

#[test]
fn json_import_errors_name_the_element() {
    let store = Store::memory().unwrap();
    let cases = [
        ("[1]", "top level"),
        ("{\"nodes\": [{\"properties\": {\"Name\": \"A\"}}]}", "nodes[0]: missing `type`"),
        ("{\"nodes\": [{\"type\": \"SYS\", \"properties\": {}}]}", "nodes[0]: missing `properties.Name`"),
        (
            "{\"nodes\": [{\"type\": \"SYS\", \"properties\": {\"Name\": \"A\"}}], \"relationships\": [{\"type\": \"compose\", \"source\": \"A.SY.001\", \"target\": \"nope\"}]}",
            "relationships[0]: no node `nope`",
        ),
        ("{\"nodes\": [", "not valid JSON"),
    ];
    for (text, msg) in cases {
        let err = import(&store, "m", text, Format::Json)
            .unwrap_err()
            .to_string();
        assert!(err.contains(msg), "{text}: {err}");
    }
}

#[test]
fn import_replace_makes_the_graph_equal_to_the_input() {
    let store = cargo_store();
    let small = "## Nodes\nCargoManagement|SYS|CargoManagement.SY.001|Central cargo management system\nManageFleet|UC|ManageFleet.UC.001|Manage fleet operations\n\n## Edges\nCargoManagement.SY.001 -cp-> ManageFleet.UC.001\n";
    let mut tx = OntoTx::begin(&store, "cargo").unwrap();
    let uuid = tx
        .graph()
        .uuid_of("ManageFleet.UC.001")
        .unwrap()
        .to_string();
    io::import(&mut tx, small, Format::E, true).unwrap();
    let mut batch = Batch::new();
    let ch = tx.finish(&mut batch);
    store.apply(batch).unwrap();
    assert_eq!((ch.nodes_deleted.len(), ch.edges_deleted.len()), (40, 57));
    let g = load_graph(&store, "cargo").unwrap();
    // The export writes the edge's ends by their (unique) names.
    assert_eq!(
        io::export(&g, Format::E),
        small.replace(
            "CargoManagement.SY.001 -cp-> ManageFleet.UC.001",
            "CargoManagement -cp-> ManageFleet"
        )
    );
    assert_eq!(
        g.uuid_of("ManageFleet.UC.001"),
        Some(uuid.as_str()),
        "matched by semantic ID"
    );
}

#[test]
fn format_e_groups_edges_and_parses_both_forms_alike() {
    let store = cargo_store();
    let g = load_graph(&store, "cargo").unwrap();
    let grouped = io::export(&g, Format::E);
    let edge_lines: Vec<&str> = grouped
        .split("## Edges\n")
        .nth(1)
        .unwrap()
        .lines()
        .collect();
    // One line per source and relationship: fewer lines than edges.
    assert!(edge_lines.iter().any(|l| l.contains(", ")), "{grouped}");
    assert!(edge_lines.len() < g.edges_ordered().len());
    // The same document one edge per line.
    let mut ungrouped = grouped.split("## Edges\n").next().unwrap().to_string();
    ungrouped.push_str("## Edges\n");
    for l in &edge_lines {
        let (head, targets) = l.split_once("-> ").unwrap();
        for t in targets.split(", ") {
            ungrouped.push_str(&format!("{head}-> {t}\n"));
        }
    }
    let a = format_e::parse(&grouped).unwrap();
    let b = format_e::parse(&ungrouped).unwrap();
    let key = |p: &format_e::Parsed| {
        let mut e: Vec<(String, String, String)> = p
            .edges
            .iter()
            .map(|e| (e.src.clone(), e.rel.short().to_string(), e.dst.clone()))
            .collect();
        e.sort();
        e
    };
    assert_eq!(key(&a), key(&b));
    assert_eq!(a.edges.len(), g.edges_ordered().len());
    // Round trip: importing either form and exporting gives the grouped text.
    for (name, text) in [("from_grouped", &grouped), ("from_ungrouped", &ungrouped)] {
        let copy = Store::memory().unwrap();
        let mut tx = OntoTx::begin(&copy, name).unwrap();
        io::import(&mut tx, text, Format::E, false).unwrap();
        let mut batch = Batch::new();
        tx.finish(&mut batch);
        copy.apply(batch).unwrap();
        let back = load_graph(&copy, name).unwrap();
        assert_eq!(
            key(&format_e::parse(&io::export(&back, Format::E)).unwrap()),
            key(&a)
        );
    }
    // Properties belong to one edge: a grouped line cannot carry them.
    let err = format_e::parse(
        "## Nodes\nA|SYS|A.SY.001|x\nB|UC|B.UC.001|y\nC|UC|C.UC.002|z\n## Edges\nA.SY.001 -cp-> B.UC.001, C.UC.002 {\"k\":1}\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("one edge"), "{err}");
}

/// The fixtures as graphs: the cargo system with the CHANGED scenario's
/// nodes and edges, the order system (JSON), the SELECTED scenario.
fn fixture_graphs() -> Vec<graphctx::ontology::OntologyGraph> {
    let store = cargo_store();
    import(&store, "cargo", &read_fixture("changed_base.e"), Format::E).unwrap();
    import(
        &store,
        "cargo",
        &read_fixture("changed_update.e"),
        Format::E,
    )
    .unwrap();
    import(&store, "order", &read_fixture("order.json"), Format::Json).unwrap();
    import(&store, "selected", &read_fixture("selected.e"), Format::E).unwrap();
    ["cargo", "order", "selected"]
        .iter()
        .map(|g| load_graph(&store, g).unwrap())
        .collect()
}

/// Names that must not all be short: duplicates, spaces, separators, a
/// semantic ID, a heading, padding, another node's name.
const RENAMES: &[&str] = &[
    "Dup",
    "Dup",
    "With space",
    "a,b",
    "OptimizeRoutes.FN.001",
    "#Head",
    "x{y}",
    "p|q",
    " Pad ",
    "Ünï",
    "CargoManagement",
    "Customer",
    "Run<script>",
    "a -cp-> b",
];

mod round_trip {
    use super::*;
    use graphctx::ontology::{NameIndex, OntoEdge};
    use proptest::prelude::*;

    fn sid_edges(
        g: &graphctx::ontology::OntologyGraph,
        edges: &[&OntoEdge],
    ) -> Vec<(String, RelType, String)> {
        let mut v: Vec<_> = edges
            .iter()
            .map(|e| {
                (
                    g.semantic_id_of(&e.src).unwrap().to_string(),
                    e.rel,
                    g.semantic_id_of(&e.dst).unwrap().to_string(),
                )
            })
            .collect();
        v.sort();
        v
    }

    fn parsed_edges(p: &format_e::Parsed) -> Vec<(String, RelType, String)> {
        let mut v: Vec<_> = p
            .edges
            .iter()
            .map(|e| (e.src.clone(), e.rel, e.dst.clone()))
            .collect();
        v.sort();
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any part of a fixture graph, with nodes renamed so that some
        /// names collide or cannot be short, emitted with any options,
        /// parses back to the same nodes (by semantic ID) and edges —
        /// edges between the part's nodes by the text alone, edges leaving
        /// it with the graph resolving what has no line.
        #[test]
        fn emit_then_parse_is_exact(
            which in 0usize..3,
            keep in proptest::collection::vec(any::<bool>(), 60),
            renames in proptest::collection::vec(proptest::option::weighted(0.3, 0..RENAMES.len()), 60),
            positions in any::<bool>(),
            props in any::<bool>(),
            sanitize in any::<bool>(),
        ) {
            let mut g = fixture_graphs().swap_remove(which);
            let uuids: Vec<String> = g.nodes_ordered().iter().map(|n| n.uuid.clone()).collect();
            for (u, r) in uuids.iter().zip(&renames) {
                if let Some(r) = r {
                    g.nodes.get_mut(u).unwrap().name = RENAMES[*r].to_string();
                }
            }
            let opts = format_e::EmitOptions { positions, props, sanitize };
            let nodes: Vec<&OntoNode> = g
                .nodes_ordered()
                .into_iter()
                .zip(keep.iter().chain(std::iter::repeat(&true)))
                .filter(|(_, k)| **k)
                .map(|(n, _)| n)
                .collect();
            let inside: std::collections::HashSet<&str> = nodes.iter().map(|n| n.uuid.as_str()).collect();
            let all = g.edges_ordered();
            let internal: Vec<&OntoEdge> = all
                .iter()
                .copied()
                .filter(|e| inside.contains(e.src.as_str()) && inside.contains(e.dst.as_str()))
                .collect();
            let touching: Vec<&OntoEdge> = all
                .iter()
                .copied()
                .filter(|e| inside.contains(e.src.as_str()) || inside.contains(e.dst.as_str()))
                .collect();
            let want_nodes: Vec<&str> = nodes.iter().map(|n| n.semantic_id.as_str()).collect();

            let text = format_e::emit_parts(&g, &nodes, &internal, opts);
            let p = format_e::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let got: Vec<&str> = p.nodes.iter().map(|n| n.node.semantic_id.as_str()).collect();
            prop_assert_eq!(&got, &want_nodes);
            prop_assert_eq!(parsed_edges(&p), sid_edges(&g, &internal), "{}", text);

            let text = format_e::emit_parts(&g, &nodes, &touching, opts);
            let names = NameIndex::new(&g);
            let p = format_e::parse_with(&text, &|n: &str| names.semantic_id(&g, n))
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(parsed_edges(&p), sid_edges(&g, &touching), "{}", text);
            // Every short name is the name of exactly one node line.
            for l in text.split("## Edges\n").nth(1).unwrap().lines() {
                let (src, rest) = l.split_once(' ').unwrap();
                let targets = rest.split_once("-> ").unwrap().1;
                let targets = targets.split(" {").next().unwrap();
                for end in std::iter::once(src).chain(targets.split(", ")) {
                    if graphctx::ontology::semantic::parse(end).is_err() {
                        let lines = p.nodes.iter().filter(|n| n.node.name == end).count();
                        prop_assert_eq!(lines, 1, "{} in {}", end, text);
                    }
                }
            }
        }
    }
}

// --------------------------------------------------------------- capture

#[test]
fn seed_scenario_1_minimal() {
    let store = cargo_store();
    set(&store, "cargo", "s", SessionUpdate::default());
    let r = cap(&store, "cargo", "s", &opts(Mode::Minimal));
    assert_golden("ontology/scenario1_minimal.txt", &masked(&r.format_e));
    let bare = cap(
        &store,
        "cargo",
        "s",
        &CaptureOptions {
            include_metadata: false,
            ..opts(Mode::Minimal)
        },
    );
    assert_eq!(
        bare.format_e.lines().take(3).collect::<Vec<_>>(),
        [
            "**Total Nodes:** 42",
            "**Total Edges:** 58",
            "**Node Types:** SYS (3), ACTOR (5), UC (8), FUNC (15), REQ (11)"
        ]
    );
}

#[test]
fn seed_scenario_2_selected() {
    let store = Store::memory().unwrap();
    import(&store, "g", &read_fixture("selected.e"), Format::E).unwrap();
    set(
        &store,
        "g",
        "s",
        SessionUpdate {
            select_nodes: Some(vec!["ParseInput.FN.001".into()]),
            ..Default::default()
        },
    );
    let r = cap(&store, "g", "s", &opts(Mode::Selected));
    assert_golden("ontology/scenario2_selected.txt", &masked(&r.format_e));
    assert_eq!(
        section(&r.format_e, "## Nodes"),
        ["ParseInput|FUNC|ParseInput.FN.001|Parses user input data"]
    );
    assert_eq!(
        section(&r.format_e, "## Edges"),
        // The selected node by its name; the other end has no line here.
        ["ParseInput -st-> REQ-InputValidation.RQ.003"]
    );
    assert!(r.format_e.contains("**Selected Nodes:** ParseInput (FUNC)"));
    // A selected edge comes along even when its ends are not selected.
    let g = load_graph(&store, "g").unwrap();
    let by_sid = session::update(
        &store,
        &g,
        "s",
        SessionUpdate {
            select_edges: Some(vec![
                "REQ-InputValidation.RQ.003 -vf-> TestInputValidation.TS.001".into(),
            ]),
            ..Default::default()
        },
    )
    .unwrap();
    let r = cap(&store, "g", "s", &opts(Mode::Selected));
    assert_eq!(section(&r.format_e, "## Edges").len(), 2);
    // An edge may be selected by its ends' names where they are unique.
    let named = session::update(
        &store,
        &g,
        "s",
        SessionUpdate {
            select_edges: Some(vec!["REQ-InputValidation -vf-> TestInputValidation".into()]),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(named.selected_edges, by_sid.selected_edges);
    assert_eq!(named.selected_edges.len(), 1);
    // selectedOnly overrides the mode.
    let o = CaptureOptions {
        selected_only: true,
        ..opts(Mode::Full)
    };
    assert_eq!(
        section(&cap(&store, "g", "s", &o).format_e, "## Nodes").len(),
        1
    );
}

#[test]
fn seed_scenario_3_full() {
    let store = cargo_store();
    set(&store, "cargo", "s", SessionUpdate::default());
    let r = cap(&store, "cargo", "s", &opts(Mode::Full));
    assert_golden("ontology/scenario3_full.txt", &masked(&r.format_e));
    assert!(r
        .format_e
        .contains("**Total Nodes:** 42\n**Total Edges:** 58\n"));
    let nodes = section(&r.format_e, "## Nodes");
    assert_eq!(
        nodes[0],
        "CargoManagement|SYS|CargoManagement.SY.001|Central cargo management system"
    );
    assert!(nodes.contains(&"ManageFleet|UC|ManageFleet.UC.001|Manage fleet operations"));
    assert!(section(&r.format_e, "## Edges").iter().any(|l| l
        .strip_prefix("CargoManagement -cp-> ")
        .is_some_and(|t| t.split(", ").any(|t| t == "ManageFleet"))));
    assert_eq!(
        r.token_count,
        TokenCounter::new(Encoding::O200k).count_exact(&r.format_e)
    );
    assert_ne!(
        r.token_count,
        r.format_e.len().div_ceil(4),
        "a real tokenizer, not chars/4"
    );
}

#[test]
fn seed_scenario_4_changed() {
    let store = cargo_store();
    import(&store, "cargo", &read_fixture("changed_base.e"), Format::E).unwrap();
    set(&store, "cargo", "s", SessionUpdate::default());
    // The first capture of a session shows everything; after it, nothing changed.
    let first = cap(&store, "cargo", "s", &opts(Mode::Changed));
    assert_eq!(first.metadata.total_nodes, 44);
    let none = cap(&store, "cargo", "s", &opts(Mode::Changed));
    assert_eq!(
        (none.metadata.total_nodes, none.metadata.total_edges),
        (0, 0)
    );
    import(
        &store,
        "cargo",
        &read_fixture("changed_update.e"),
        Format::E,
    )
    .unwrap();
    let r = cap(&store, "cargo", "s", &opts(Mode::Changed));
    assert_golden("ontology/scenario4_changed.txt", &masked(&r.format_e));
    assert!(r
        .format_e
        .starts_with("## Current Graph Context (Changed Elements Only)\n"));
    assert!(r
        .format_e
        .contains("**Total Nodes:** 3 (changed)\n**Total Edges:** 4 (changed)\n"));
    // Deletions since the last capture are listed; other sessions keep their own mark.
    set(&store, "cargo", "other", SessionUpdate::default());
    cap(&store, "cargo", "other", &opts(Mode::Full));
    let mut tx = OntoTx::begin(&store, "cargo").unwrap();
    tx.delete_node("NewRequirement2.RQ.024").unwrap();
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    store.apply(batch).unwrap();
    let r = cap(&store, "cargo", "s", &opts(Mode::Changed));
    assert_eq!(
        section(&r.format_e, "## Deleted"),
        [
            "NewRequirement2|REQ|NewRequirement2.RQ.024",
            "NewRequirement2.RQ.024 -vf-> TestPerformance.TS.006",
            "ValidateRequirements.FN.012 -st-> NewRequirement2.RQ.024",
        ]
    );
    // The CHANGED document parses as Format E.
    let parsed = format_e::parse(&r.format_e).unwrap();
    assert_eq!(parsed.deleted_nodes.len(), 1);
    assert_eq!(parsed.deleted_edges.len(), 2);

    // A new node with a deleted node's name: both are in the document, so
    // its edges write it by semantic ID, not by the name.
    let mut tx = OntoTx::begin(&store, "cargo").unwrap();
    tx.delete_node("TestSafety.TS.005").unwrap();
    let new = tx
        .upsert_node(OntoNode::new(NodeType::Test, "TestSafety", "Replacement"))
        .unwrap()
        .after;
    let req = tx.resolve("NewRequirement1.RQ.023").unwrap();
    tx.upsert_edge(OntoEdge::new(&req, RelType::Verify, &new.uuid))
        .unwrap();
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    store.apply(batch).unwrap();
    let r = cap(&store, "cargo", "s", &opts(Mode::Changed));
    assert_eq!(
        section(&r.format_e, "## Edges"),
        [format!("NewRequirement1.RQ.023 -vf-> {}", new.semantic_id)],
        "{}",
        r.format_e
    );
    assert!(section(&r.format_e, "## Deleted").contains(&"TestSafety|TEST|TestSafety.TS.005"));
    let parsed = format_e::parse(&r.format_e).unwrap();
    assert_eq!(parsed.edges[0].dst, new.semantic_id);
}

#[test]
fn visible_applies_filters_and_hides_flows() {
    let store = Store::memory().unwrap();
    import(&store, "order", &read_fixture("order.json"), Format::Json).unwrap();
    set(&store, "order", "s", SessionUpdate::default());
    let all = cap(&store, "order", "s", &opts(Mode::Visible));
    assert_eq!((all.metadata.total_nodes, all.metadata.total_edges), (5, 4));
    set(
        &store,
        "order",
        "s",
        SessionUpdate {
            show_flows: Some(false),
            ..Default::default()
        },
    );
    let r = cap(&store, "order", "s", &opts(Mode::Visible));
    assert!(
        !r.format_e.contains("|FLOW|") && !r.format_e.contains("-io->"),
        "{}",
        r.format_e
    );
    assert!(r.format_e.contains("Show Flows: No"));
    assert_eq!(
        r.metadata.total_edges, 1,
        "only edges between visible nodes"
    );
    set(
        &store,
        "order",
        "s",
        SessionUpdate {
            show_flows: Some(true),
            node_types: Some(vec![NodeType::Actor, NodeType::Flow, NodeType::Uc]),
            relation_types: Some(vec![RelType::Io]),
            ..Default::default()
        },
    );
    let r = cap(&store, "order", "s", &opts(Mode::Visible));
    assert_eq!(section(&r.format_e, "## Nodes").len(), 3);
    assert_eq!(
        section(&r.format_e, "## Edges"),
        [
            "Customer -io-> OrderRequest",
            "OrderRequest -io-> PlaceOrder {\"volume\":\"high\"}"
        ]
    );
    assert!(r.format_e.contains(
        "**Active Filters:** Node Types: ACTOR, FLOW, UC | Relations: io | Show Flows: Yes"
    ));
    // FULL ignores the filters.
    assert_eq!(
        cap(&store, "order", "s", &opts(Mode::Full))
            .metadata
            .total_nodes,
        5
    );

    // Rollup: only the first levels of the compose hierarchy.
    let store = cargo_store();
    set(
        &store,
        "cargo",
        "s",
        SessionUpdate {
            rollup_level: Some(Some(1)),
            node_types: Some(vec![NodeType::Sys, NodeType::Uc, NodeType::Func]),
            ..Default::default()
        },
    );
    let r = cap(&store, "cargo", "s", &opts(Mode::Visible));
    let nodes = section(&r.format_e, "## Nodes");
    assert!(
        nodes.iter().any(|l| l.starts_with("ManageFleet|UC")),
        "UC below the root system"
    );
    assert!(nodes.iter().all(|l| !l.contains("|FUNC|")), "{nodes:?}");
}

#[test]
fn options_metadata_positions_viewport() {
    let store = Store::memory().unwrap();
    import(&store, "order", &read_fixture("order.json"), Format::Json).unwrap();
    set(
        &store,
        "order",
        "s",
        SessionUpdate {
            zoom: Some(1.5),
            center: Some((10.0, -20.0)),
            layout: Some(Layout::Force),
            ..Default::default()
        },
    );
    let plain = cap(
        &store,
        "order",
        "s",
        &CaptureOptions {
            include_metadata: false,
            ..opts(Mode::Full)
        },
    );
    assert!(plain.format_e.starts_with("## Nodes\n"));
    assert!(!plain.format_e.contains('@'));
    let with = cap(
        &store,
        "order",
        "s",
        &CaptureOptions {
            include_positions: true,
            include_viewport: true,
            ..opts(Mode::Full)
        },
    );
    assert!(with
        .format_e
        .contains("Customer|ACTOR|Customer.AC.001|Customer placing orders|@-240.5,120\n"));
    assert!(with
        .format_e
        .contains("**Layout:** force\n**Zoom:** 150%\n**Center:** (10, -20)\n"));
    assert_eq!(with.metadata.zoom, 150);
}

#[test]
fn max_nodes_keeps_the_most_relevant_nodes() {
    let store = cargo_store();
    // Selected: a requirement listed near the end of the output order.
    set(
        &store,
        "cargo",
        "s",
        SessionUpdate {
            select_nodes: Some(vec!["InvoiceCorrectness.RQ.010".into()]),
            ..Default::default()
        },
    );
    let o = CaptureOptions {
        max_nodes: Some(4),
        ..opts(Mode::Full)
    };
    let r = cap(&store, "cargo", "s", &o);
    let mut kept: Vec<&str> = section(&r.format_e, "## Nodes")
        .iter()
        .map(|l| l.split('|').nth(2).unwrap())
        .collect();
    kept.sort();
    // The selection and its direct neighbours, not the first four in list order.
    assert_eq!(
        kept,
        [
            "InvoiceCorrectness.RQ.010",
            "InvoiceCustomer.UC.006",
            "PaymentSecurity.RQ.004",
            "RecordDelivery.FN.010"
        ]
    );
    assert_eq!(r.metadata.truncated_from, Some(42));
    assert!(r
        .format_e
        .contains("**Truncated:** 4 of 42 nodes kept (by relevance)"));
    // Without a selection the system's top stays.
    set(
        &store,
        "cargo",
        "s",
        SessionUpdate {
            select_nodes: Some(vec![]),
            ..Default::default()
        },
    );
    let r = cap(
        &store,
        "cargo",
        "s",
        &CaptureOptions {
            max_nodes: Some(3),
            ..opts(Mode::Full)
        },
    );
    let nodes = section(&r.format_e, "## Nodes");
    assert!(nodes[0].starts_with("CargoManagement|SYS"), "{nodes:?}");
    assert!(section(&r.format_e, "## Edges").iter().all(|e| {
        let (s, d) = e.split_once(" -").unwrap();
        let d = d.split("-> ").nth(1).unwrap();
        nodes.iter().any(|n| n.contains(s))
            && d.split(", ").all(|d| nodes.iter().any(|n| n.contains(d)))
    }));
}

#[test]
fn cache_hits_and_exact_invalidation() {
    let store = cargo_store();
    set(&store, "cargo", "s", SessionUpdate::default());
    let full = opts(Mode::Full);
    // The seed's stream: 10 identical requests.
    let first = cap(&store, "cargo", "s", &full);
    assert!(!first.cached);
    for _ in 0..9 {
        let r = cap(&store, "cargo", "s", &full);
        assert!(r.cached);
        assert_eq!(r.format_e, first.format_e);
        assert_eq!(r.cache_key, first.cache_key);
    }
    let st = &capture::stats(&store, "cargo", Some("s")).unwrap()[0];
    assert_eq!((st.hits, st.misses), (9, 1));
    assert!(st.hit_rate >= 0.8);

    // A graph change invalidates.
    import(
        &store,
        "cargo",
        "## Nodes\nExtra|REQ|Extra.RQ.050|x\n",
        Format::E,
    )
    .unwrap();
    let r = cap(&store, "cargo", "s", &full);
    assert!(!r.cached);
    assert_eq!(r.metadata.total_nodes, 43);
    assert!(cap(&store, "cargo", "s", &full).cached);
    // A no-op import does not (nothing changed, seq stays).
    import(
        &store,
        "cargo",
        "## Nodes\nExtra|REQ|Extra.RQ.050|x\n",
        Format::E,
    )
    .unwrap();
    assert!(cap(&store, "cargo", "s", &full).cached);
    // A filter change invalidates VISIBLE and the header of FULL ...
    let vis = opts(Mode::Visible);
    cap(&store, "cargo", "s", &vis);
    assert!(cap(&store, "cargo", "s", &vis).cached);
    set(
        &store,
        "cargo",
        "s",
        SessionUpdate {
            node_types: Some(vec![NodeType::Req]),
            ..Default::default()
        },
    );
    let r = cap(&store, "cargo", "s", &vis);
    assert!(!r.cached);
    assert_eq!(r.metadata.total_nodes, 12);
    assert!(!cap(&store, "cargo", "s", &full).cached);
    // ... but not a FULL capture without metadata, which does not show it.
    let bare = CaptureOptions {
        include_metadata: false,
        ..full.clone()
    };
    cap(&store, "cargo", "s", &bare);
    set(
        &store,
        "cargo",
        "s",
        SessionUpdate {
            node_types: Some(vec![]),
            zoom: Some(2.0),
            ..Default::default()
        },
    );
    assert!(cap(&store, "cargo", "s", &bare).cached);
    // Different options are different entries.
    let pos = CaptureOptions {
        include_positions: true,
        ..bare.clone()
    };
    assert!(!cap(&store, "cargo", "s", &pos).cached);
    // Sessions keep separate statistics.
    set(&store, "cargo", "t", SessionUpdate::default());
    cap(&store, "cargo", "t", &full);
    let all = capture::stats(&store, "cargo", None).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(
        (all[1].session.as_str(), all[1].hits, all[1].misses),
        ("t", 0, 1)
    );
}

#[test]
fn sanitising_removes_scripts_and_never_emits_sensitive_properties() {
    let store = Store::memory().unwrap();
    let json = r#"{"nodes": [
        {"type": "FUNC", "properties": {"Name": "Login<script>alert(1)</script>", "Descr": "see javascript:steal()",
         "password": "hunter2", "apiKey": "AK-123", "accessToken": "tok", "clientSecret": "s3", "owner": "ops <SCRIPT src=x>"}}
    ], "relationships": []}"#;
    import(&store, "m", json, Format::Json).unwrap();
    set(&store, "m", "s", SessionUpdate::default());
    let g = load_graph(&store, "m").unwrap();
    let stored = g.nodes.values().next().unwrap();
    assert_eq!(stored.props["password"], "hunter2", "stored as given");
    let outputs = [
        cap(&store, "m", "s", &opts(Mode::Full)).format_e,
        io::export(&g, Format::E),
        io::export(&g, Format::Json),
    ];
    for out in outputs {
        for bad in [
            "<script",
            "<SCRIPT",
            "javascript:",
            "hunter2",
            "AK-123",
            "tok\"",
            "s3",
            "password",
            "apiKey",
        ] {
            assert!(!out.contains(bad), "`{bad}` leaked into:\n{out}");
        }
        assert!(
            out.contains("Loginalert(1)") && out.contains("ops"),
            "{out}"
        );
    }
}

#[test]
fn only_members_get_context() {
    let store = cargo_store();
    set(
        &store,
        "cargo",
        "s",
        SessionUpdate {
            add_members: vec!["alice".into(), "bob".into()],
            ..Default::default()
        },
    );
    let o = opts(Mode::Full);
    assert!(capture::capture(&store, "cargo", "s", Some("alice"), &o).is_ok());
    let err = capture::capture(&store, "cargo", "s", Some("mallory"), &o).unwrap_err();
    assert!(matches!(err, CaptureError::AccessDenied { .. }));
    assert_eq!(
        err.to_string(),
        "access denied: user `mallory` is not a member of session `s`"
    );
    assert!(matches!(
        capture::capture(&store, "cargo", "s", None, &o).unwrap_err(),
        CaptureError::UserRequired { .. }
    ));
    // A cached result is no way around the check.
    let err = capture::capture(&store, "cargo", "s", Some("mallory"), &o).unwrap_err();
    assert!(matches!(err, CaptureError::AccessDenied { .. }));
    set(
        &store,
        "cargo",
        "s",
        SessionUpdate {
            remove_members: vec!["bob".into()],
            ..Default::default()
        },
    );
    assert!(capture::capture(&store, "cargo", "s", Some("bob"), &o).is_err());
    // Unknown sessions and graphs are errors too.
    assert!(matches!(
        capture::capture(&store, "cargo", "nope", None, &o).unwrap_err(),
        CaptureError::NoSession { .. }
    ));
    set(&store, "other", "s", SessionUpdate::default());
    assert!(matches!(
        capture::capture(&store, "other", "s", None, &o).unwrap_err(),
        CaptureError::NoGraph(_)
    ));
    // Selecting what does not exist is refused.
    let g = load_graph(&store, "cargo").unwrap();
    let err = session::update(
        &store,
        &g,
        "s",
        SessionUpdate {
            select_nodes: Some(vec!["Ghost.UC.099".into()]),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("Ghost.UC.099"), "{err}");
}

// -------------------------------------------------------------------- CLI

fn graphctx(db: &std::path::Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_graphctx"));
    cmd.arg("--db").arg(db).args(args);
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let cargo = read_fixture("cargo.e");
    let (code, out, err) = graphctx(
        &db,
        &["--graph", "cargo", "graph", "import", "--format", "e"],
        Some(&cargo),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("42 nodes, 58 edges (seq 1)"), "{out}");
    let (code, out, _) = graphctx(
        &db,
        &["--graph", "cargo", "graph", "export", "--format", "e"],
        None,
    );
    let grouped = std::fs::read_to_string(fixture("../golden/ontology/cargo_grouped.e")).unwrap();
    assert_eq!((code, out.as_str()), (0, grouped.as_str()));
    let (_, json_out, _) = graphctx(
        &db,
        &["--graph", "cargo", "graph", "export", "--format", "json"],
        None,
    );
    let f = dir.path().join("cargo.json");
    std::fs::write(&f, &json_out).unwrap();
    let (code, _, err) = graphctx(
        &db,
        &["--graph", "copy", "graph", "import", f.to_str().unwrap()],
        None,
    );
    assert_eq!(code, 0, "{err}");
    let (_, copy, _) = graphctx(
        &db,
        &["--graph", "copy", "graph", "export", "--format", "json"],
        None,
    );
    assert_eq!(copy, json_out);

    // Errors: a malformed line (with its number), a missing canvas, unknown graph.
    let (code, _, err) = graphctx(
        &db,
        &["--graph", "cargo", "graph", "import", "--format", "e"],
        Some("## Nodes\nA|SYS|A.SY.001|x\nbroken line\n"),
    );
    assert_ne!(code, 0);
    assert!(err.contains("Format E line 3"), "{err}");
    let (code, _, err) = graphctx(
        &db,
        &["--graph", "c", "graph", "import", "--canvas", "x.canvas"],
        None,
    );
    assert_ne!(code, 0);
    assert!(err.contains("cannot read x.canvas"), "{err}");
    assert_eq!(err.matches("No such file").count(), 1, "{err}");

    // Sessions and capture.
    let (code, out, err) = graphctx(
        &db,
        &[
            "--graph",
            "cargo",
            "session",
            "set",
            "--session",
            "s1",
            "--select",
            "ManageFleet.UC.001",
            "--zoom",
            "0.8",
            "--node-types",
            "SYS,UC",
            "--show-flows",
            "false",
            "--add-member",
            "alice",
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\"zoom\": 0.8") && out.contains("\"SYS\""),
        "{out}"
    );
    let (code, _, err) = graphctx(
        &db,
        &[
            "--graph",
            "cargo",
            "session",
            "set",
            "--session",
            "s1",
            "--layout",
            "spiral",
        ],
        None,
    );
    assert_ne!(code, 0);
    assert!(err.contains("unknown layout `spiral`"), "{err}");
    let (code, _, err) = graphctx(
        &db,
        &[
            "--graph",
            "cargo",
            "capture",
            "--session",
            "s1",
            "--mode",
            "full",
            "--user",
            "eve",
        ],
        None,
    );
    assert_ne!(code, 0);
    assert!(err.contains("access denied"), "{err}");
    for _ in 0..10 {
        let (code, out, err) = graphctx(
            &db,
            &[
                "--graph",
                "cargo",
                "capture",
                "--session",
                "s1",
                "--mode",
                "visible",
                "--user",
                "alice",
            ],
            None,
        );
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("**Active Filters:** Node Types: SYS, UC | Show Flows: No"),
            "{out}"
        );
        assert!(out.contains("**Zoom:** 80%"));
    }
    let (code, out, _) = graphctx(
        &db,
        &["--graph", "cargo", "capture", "--session", "s1", "--stats"],
        None,
    );
    assert_eq!(code, 0);
    let stats: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats[0]["hits"], 9);
    assert_eq!(stats[0]["misses"], 1);
    let (code, out, _) = graphctx(
        &db,
        &[
            "--graph",
            "cargo",
            "capture",
            "--session",
            "s1",
            "--mode",
            "selected",
            "--user",
            "alice",
            "--json",
            "--max-nodes",
            "1",
        ],
        None,
    );
    assert_eq!(code, 0);
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["metadata"]["selectedNodes"][0], "ManageFleet (UC)");
    assert!(r["tokenCount"].as_u64().unwrap() > 0);
    assert_eq!(r["mode"], "SELECTED");
}
