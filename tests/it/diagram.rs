//! Diagram text (`--format mermaid|dot`): goldens for the code fixture and
//! an ontology fixture, every output checked by the real renderers
//! (Graphviz's `dot`, Mermaid's parser), names that are syntax in either
//! format, bad input, and the budget.

use crate::common;

use std::path::Path;

use common::renderers::{assert_dot_renders, assert_mermaid_parses};
use common::{assert_golden, copy_dir, fixture, graphctx, stderr, stdout};
use graphctx::support::tokens::{Encoding, TokenCounter};
use serde_json::json;

const RECT: &str = "src/geometry/mod.rs-geometry-Rect";
const CLAMP: &str = "src/util.rs-util-clamp_scale";

/// A copy of a code fixture, indexed by the binary.
fn indexed(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(name), dir.path());
    let out = graphctx(dir.path(), &["index", "--no-history"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

/// `graphctx ARGS` in `dir`, which must succeed; its stdout.
fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = graphctx(dir, args, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "graphctx {}: {}",
        args.join(" "),
        stderr(&out)
    );
    stdout(&out)
}

/// An ontology graph `graph` imported from JSON into `db`.
fn ontology_db(dir: &Path, graph: &str, json_text: &str) -> String {
    let db = dir.join("onto.db").display().to_string();
    let out = graphctx(
        dir,
        &["--db", &db, "--graph", graph, "graph", "import"],
        Some(json_text),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    db
}

/// Both formats of one command (`args` without `--format`), named.
fn both_formats(dir: &Path, name: &str, args: &[&str]) -> Vec<(String, String, String)> {
    ["mermaid", "dot"]
        .iter()
        .map(|f| {
            let mut a = args.to_vec();
            a.extend(["--format", f]);
            let ext = if *f == "mermaid" { "mmd" } else { "dot" };
            (format!("{name}.{ext}"), f.to_string(), run_ok(dir, &a))
        })
        .collect()
}

/// Every diagram through its renderer.
fn assert_all_render(diagrams: &[(String, String, String)]) {
    let of = |format: &str| -> Vec<(&str, &str)> {
        diagrams
            .iter()
            .filter(|(_, f, _)| f == format)
            .map(|(n, _, t)| (n.as_str(), t.as_str()))
            .collect()
    };
    assert_dot_renders(&of("dot"));
    assert_mermaid_parses(&of("mermaid"));
}

#[test]
fn golden_diagrams_of_the_code_fixture() {
    let shapes = indexed("shapes");
    let cycles = indexed("cycles");
    let mut all = Vec::new();
    all.extend(both_formats(
        shapes.path(),
        "shapes_context_rect",
        &["context", RECT],
    ));
    all.extend(both_formats(
        shapes.path(),
        "shapes_context_geometry_file",
        &["context", "--file", "src/geometry/mod.rs", "--hops", "1"],
    ));
    all.extend(both_formats(
        shapes.path(),
        "shapes_blast_rect",
        &["blast", RECT, "--hops", "1"],
    ));
    all.extend(both_formats(
        shapes.path(),
        "shapes_callers_clamp",
        &["callers", CLAMP],
    ));
    all.extend(both_formats(
        shapes.path(),
        "shapes_callees_clamp",
        &["callees", CLAMP],
    ));
    all.extend(both_formats(cycles.path(), "cycles_cycles", &["cycles"]));
    for (name, _, text) in &all {
        assert_golden(&format!("diagram/{name}"), text);
    }
    assert_all_render(&all);

    // What the pictures promise: the base entity outlined as a base, edges
    // labelled by relationship, cycle edges in the cycle colour.
    let context = &all[0].2;
    assert!(context.contains("[\"Rect\"]"), "{context}");
    assert!(
        context.contains("stroke:#d1400f,stroke-width:3px"),
        "{context}"
    );
    assert!(context.contains("-->|\"contains\"|"), "{context}");
    let cycles_dot = &all.last().unwrap().2;
    assert!(cycles_dot.contains("is_even") && cycles_dot.contains("is_odd"));
    assert!(cycles_dot.contains("color=\"#e5534b\""), "{cycles_dot}");
}

#[test]
fn golden_diagrams_of_an_ontology_fixture() {
    let dir = tempfile::tempdir().unwrap();
    let order = std::fs::read_to_string(fixture("ontology").join("order.json")).unwrap();
    let db = ontology_db(dir.path(), "order", &order);
    let all = both_formats(
        dir.path(),
        "ontology_order",
        &["--db", &db, "--graph", "order", "graph", "export"],
    );
    for (name, _, text) in &all {
        assert_golden(&format!("diagram/{name}"), text);
    }
    assert_all_render(&all);
    // Semantic IDs label the nodes, names under them; `|` of a
    // description never reaches the picture's syntax.
    let mermaid = &all[0].2;
    assert!(
        mermaid.contains("[\"PlaceOrder.UC.001<br>PlaceOrder\"]"),
        "{mermaid}"
    );
    assert!(mermaid.contains("-->|\"compose\"|"), "{mermaid}");
}

/// Names that are syntax somewhere: quotes, brackets, `<`, `&`, `|`,
/// `#`, `;`, backticks, backslashes, newlines, emoji.
const NASTY: &[&str] = &[
    "say \"hi\" & <b>bye</b>",
    "[x] (y) {z} a|b #1; c",
    "line one\nline two\r\nthree",
    "back\\slash \\n \\\" `tick`",
    "emoji 🚀🔥 ünïcödé",
    "<script>alert(1)</script>end",
    "%% not a comment --> n0",
    "\"]; n0 --> n1; n1[\"",
];

/// Lines of a diagram whose first two words pass `is`.
fn statements(text: &str, is: impl Fn(&str, &str) -> bool) -> usize {
    text.lines()
        .filter(|l| {
            let mut words = l.split_whitespace();
            is(words.next().unwrap_or(""), words.next().unwrap_or(""))
        })
        .count()
}

#[test]
fn names_that_are_syntax_stay_labels_in_every_format_and_renderer() {
    let dir = tempfile::tempdir().unwrap();
    let nodes: Vec<serde_json::Value> = NASTY
        .iter()
        .enumerate()
        .map(|(i, name)| {
            json!({"uuid": format!("u{i}"), "type": "FUNC",
                   "properties": {"Name": name, "Descr": format!("descr of {name}")}})
        })
        .collect();
    let edges: Vec<serde_json::Value> = (1..NASTY.len())
        .map(|i| json!({"type": "compose", "source": "u0", "target": format!("u{i}"), "properties": {}}))
        .collect();
    let text = json!({"nodes": nodes, "relationships": edges}).to_string();
    let db = ontology_db(dir.path(), "nasty", &text);
    let all = both_formats(
        dir.path(),
        "nasty",
        &["--db", &db, "--graph", "nasty", "graph", "export"],
    );
    assert_all_render(&all);
    let (mermaid, dot) = (&all[0].2, &all[1].2);
    // One node line per node and one edge line per edge: no name opened
    // a node or an edge of its own.
    assert_eq!(
        statements(mermaid, |first, _| first.contains("[\"")),
        NASTY.len(),
        "{mermaid}"
    );
    assert_eq!(
        statements(mermaid, |_, second| second.starts_with("-->|")),
        NASTY.len() - 1,
        "{mermaid}"
    );
    assert_eq!(
        statements(dot, |first, second| first.starts_with('n')
            && second.starts_with("[label=")),
        NASTY.len(),
        "{dot}"
    );
    assert_eq!(
        statements(dot, |_, second| second == "->"),
        NASTY.len() - 1,
        "{dot}"
    );
    // The names come through (escaped), and sanitised like every export.
    assert!(
        mermaid.contains("#quot;hi#quot; #amp; #lt;b#gt;bye#lt;/b#gt;"),
        "{mermaid}"
    );
    assert!(
        mermaid.contains("line one<br>line two<br>three"),
        "{mermaid}"
    );
    assert!(mermaid.contains("🚀🔥"), "{mermaid}");
    assert!(dot.contains(r#"say \"hi\" &amp; <b>bye</b>"#), "{dot}");
    assert!(dot.contains(r#"back\\slash \\n \\\" `tick`"#), "{dot}");
    assert!(!mermaid.contains("<script") && !dot.contains("<script"));
    // The SVG shows the names as text (Graphviz escapes them).
    let svg = assert_dot_renders(&[("nasty.dot", dot)]);
    if let Some(svg) = svg.first() {
        assert!(
            svg.contains("say &quot;hi&quot; &amp; &lt;b&gt;bye&lt;/b&gt;"),
            "{svg}"
        );
    }
}

#[test]
fn a_missing_key_is_an_error_and_empty_and_one_node_graphs_still_render() {
    let shapes = indexed("shapes");
    for args in [
        vec!["context", "src/nope.rs-crate-Ghost", "--format", "mermaid"],
        vec!["blast", "src/nope.rs-crate-Ghost", "--format", "dot"],
        vec!["callers", "src/nope.rs-crate-Ghost", "--format", "mermaid"],
    ] {
        let out = graphctx(shapes.path(), &args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("no entity with key 'src/nope.rs-crate-Ghost'"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    }
    let mut all = Vec::new();
    // A package without cycles: an empty graph with its note.
    let acyclic = common::temp_package("acyclic");
    common::write_file(
        acyclic.path(),
        "src/lib.rs",
        "pub fn one() -> u32 {\n    1\n}\n",
    );
    run_ok(acyclic.path(), &["index", "--no-history"]);
    all.extend(both_formats(acyclic.path(), "no_cycles", &["cycles"]));
    assert!(all
        .iter()
        .all(|(_, _, t)| t.contains("no dependency cycles")));
    // A function nobody calls: the entity alone.
    let main = "crates/shapes-cli/src/main.rs-crate-main";
    all.extend(both_formats(
        shapes.path(),
        "nobody_calls_main",
        &["callers", main],
    ));
    assert!(all[2].2.contains("[\"main\"]"), "{}", all[2].2);
    // An ontology of one node.
    let dir = tempfile::tempdir().unwrap();
    let one = json!({"nodes": [{"uuid": "a", "type": "SYS", "properties": {"Name": "Alone"}}],
                     "relationships": []});
    let db = ontology_db(dir.path(), "one", &one.to_string());
    all.extend(both_formats(
        dir.path(),
        "one_node",
        &["--db", &db, "--graph", "one", "graph", "export"],
    ));
    assert!(all[4].2.contains("Alone.SY.001<br>Alone"), "{}", all[4].2);
    assert_all_render(&all);
}

#[test]
fn a_diagram_never_exceeds_its_budget_and_says_what_it_left_out() {
    let shapes = indexed("shapes");
    let counter = TokenCounter::new(Encoding::O200k);
    let whole = run_ok(
        shapes.path(),
        &[
            "context",
            "--file",
            "src/geometry/mod.rs",
            "--format",
            "mermaid",
        ],
    );
    let whole_tokens = counter.count_exact(&whole);
    assert!(!whole.contains("left out"), "{whole}");
    let mut all = Vec::new();
    for budget in [whole_tokens / 2, whole_tokens / 4, 160] {
        for format in ["mermaid", "dot"] {
            let b = budget.to_string();
            let args = [
                "context",
                "--file",
                "src/geometry/mod.rs",
                "--format",
                format,
                "--budget",
                &b,
            ];
            let text = run_ok(shapes.path(), &args);
            let n = counter.count_exact(&text);
            assert!(n <= budget, "{format} at {budget}: {n} tokens\n{text}");
            assert!(
                text.contains("nodes left out to stay within the")
                    && text.contains(&format!("{budget}-token budget")),
                "{format} at {budget}:\n{text}"
            );
            all.push((format!("{format}_{budget}"), format.to_string(), text));
        }
    }
    // Fewer nodes for a smaller budget, the base entity among them.
    let nodes = |t: &str| {
        statements(t, |first, _| {
            first.starts_with('n') && first.contains("[\"")
        })
    };
    assert!(
        nodes(&all[0].2) > nodes(&all[4].2),
        "{}\n{}",
        all[0].2,
        all[4].2
    );
    assert!(all[4].2.contains("[\"Rect\"]"), "{}", all[4].2);
    assert_all_render(&all);

    // Blast and graph export hold their budgets too; a budget too small
    // for any diagram is an error, not an empty picture.
    let blast = run_ok(
        shapes.path(),
        &["blast", RECT, "--format", "dot", "--budget", "200"],
    );
    assert!(
        counter.count_exact(&blast) <= 200 && blast.contains("left out"),
        "{blast}"
    );
    let out = graphctx(
        shapes.path(),
        &["context", RECT, "--format", "dot", "--budget", "20"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("over the 20-token budget"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn mcp_context_and_blast_radius_answer_with_mermaid() {
    use graphctx::serve::{registry, tools, Workspace};
    let shapes = indexed("shapes");
    let ws = Workspace::open(shapes.path(), None, "code").unwrap();
    let call = |name: &str, args: serde_json::Value| {
        let args = serde_json::from_value(args).unwrap();
        tools::call(&ws, &registry::all(), name, &args).expect("tool exists")
    };
    let spec = registry::all()
        .into_iter()
        .find(|t| t.name == "blast_radius")
        .unwrap();
    assert!(serde_json::to_string(&spec.input_schema())
        .unwrap()
        .contains("mermaid"));
    let context = call(
        "context",
        json!({"key": RECT, "format": "mermaid", "budget": 400}),
    );
    let blast = call(
        "blast_radius",
        json!({"key": RECT, "hops": 1, "format": "mermaid", "max_tokens": 300}),
    );
    let counter = TokenCounter::new(Encoding::O200k);
    for (reply, budget) in [(&context, 400), (&blast, 300)] {
        assert!(!reply.is_error, "{}", reply.text);
        assert!(reply.text.contains("\nflowchart LR\n"), "{}", reply.text);
        assert!(reply.text.contains("[\"Rect\"]"), "{}", reply.text);
        assert!(counter.count_exact(&reply.text) <= budget, "{}", reply.text);
    }
    assert!(blast.text.contains("left out"), "{}", blast.text);
    assert_mermaid_parses(&[("mcp context", &context.text), ("mcp blast", &blast.text)]);
    let bad = call("blast_radius", json!({"key": RECT, "format": "svg"}));
    assert!(
        bad.is_error && bad.text.contains("unknown format 'svg'"),
        "{}",
        bad.text
    );
}
