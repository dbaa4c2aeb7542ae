//! Applying LLM operations (seed 001): the §11 worked example as a golden
//! run of the binary, every error object, atomic rollback, undo and redo.

use std::path::Path;
use std::process::{Command, Output};

use cozo::DataValue;
use serde_json::{json, Value};

use graphctx::operations::sample::{cargo_response, SEED_11};
use graphctx::operations::{
    apply, apply_json, changelog, parse_response, ApplyOptions, OperationError, Summary,
};
use graphctx::store::Store;

const G: &str = "model";

/// Every row of every ontology relation (the change log and the graph's
/// seq row are not part of the model's state).
fn dump(store: &Store) -> Vec<(String, Vec<Vec<DataValue>>)> {
    let mut rels: Vec<String> = store
        .relations()
        .unwrap()
        .into_iter()
        .filter(|r| r == "node" || r == "edge" || r.starts_with("onto_"))
        .collect();
    rels.sort();
    assert!(rels.len() >= 4, "ontology relations present: {rels:?}");
    rels.into_iter()
        .map(|r| {
            let rows = store.dump(&r).unwrap();
            (r, rows)
        })
        .collect()
}

fn seq(store: &Store) -> i64 {
    store
        .read(
            graphctx::store::queries::GRAPH_SEQ,
            graphctx::store::Params::new().with("graph", G),
        )
        .unwrap()
        .rows
        .first()
        .and_then(|r| r[0].get_int())
        .unwrap_or(0)
}

fn run(store: &Store, json: &str) -> Result<(Summary, Vec<Value>), OperationError> {
    let mut lines = Vec::new();
    let s = apply_json(store, G, json, &ApplyOptions::default(), &mut |v| {
        lines.push(v.clone())
    })?;
    Ok((s, lines))
}

fn ok(store: &Store, json: &str) -> (Summary, Vec<Value>) {
    run(store, json).unwrap_or_else(|e| panic!("{}", e.to_json()))
}

fn err(store: &Store, json: &str) -> Value {
    let before = dump(store);
    let seq_before = seq(store);
    let e = run(store, json).expect_err("the response must be rejected");
    assert_eq!(dump(store), before, "a rejected response changed the graph");
    assert_eq!(seq(store), seq_before);
    let j = e.to_json();
    assert_eq!(j["error"], e.kind());
    assert!(j["message"].as_str().is_some_and(|m| !m.is_empty()), "{j}");
    j
}

/// Replace UUIDs (in order of first appearance) and timestamps so a run
/// compares with the golden file.
fn normalise(lines: &str) -> String {
    let mut out = String::new();
    let mut seen: Vec<String> = Vec::new();
    for line in lines.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        walk(&mut v, &mut seen);
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    out
}

fn walk(v: &mut Value, seen: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match (k.as_str(), &*x) {
                    ("timestamp", _) => *x = json!("<timestamp>"),
                    ("elapsedMs", _) => *x = json!(0),
                    _ => walk(x, seen),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| walk(x, seen)),
        Value::String(s) if uuid_like(s) => {
            let i = match seen.iter().position(|u| u == s) {
                Some(i) => i,
                None => {
                    seen.push(s.clone());
                    seen.len() - 1
                }
            };
            *s = format!("<uuid-{}>", i + 1);
        }
        _ => {}
    }
}

fn uuid_like(s: &str) -> bool {
    s.len() == 36
        && s.chars().enumerate().all(|(i, c)| {
            matches!(i, 8 | 13 | 18 | 23) == (c == '-') && (c == '-' || c.is_ascii_hexdigit())
        })
}

fn graphctx(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_graphctx"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("graphctx runs");
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/operations")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing; run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(actual, expected, "golden {name} differs");
}

#[test]
fn seed_11_worked_example_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("response.json");
    std::fs::write(&input, SEED_11).unwrap();
    let out = graphctx(
        dir.path(),
        &[
            "--db",
            "g.db",
            "--graph",
            "orders",
            "apply",
            "response.json",
        ],
        None,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Chat first, then chunk 0 (the two nodes), chunk 1 (the edge), summary.
    let shape: Vec<(String, Value)> = lines
        .iter()
        .map(|l| {
            (
                l["view"].as_str().unwrap_or("summary").to_string(),
                l["chunk"].clone(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("chat".into(), Value::Null),
            ("text".into(), json!(0)),
            ("graph".into(), json!(0)),
            ("graph".into(), json!(1)),
            ("summary".into(), Value::Null),
        ]
    );
    // The edge joins the UUIDs the two creates got.
    let nodes = &lines[2]["updates"];
    let edge = &lines[3]["updates"][0]["edge"];
    assert_eq!(edge["sourceUuid"], nodes[0]["node"]["uuid"]);
    assert_eq!(edge["targetUuid"], nodes[1]["node"]["uuid"]);
    assert_eq!(
        lines[4]["summary"]["idMap"]["temp-ordersystem"],
        nodes[0]["node"]["uuid"]
    );
    golden("seed_11.jsonl", &normalise(&stdout));

    // Undo and redo through the binary.
    let undo = graphctx(
        dir.path(),
        &["--db", "g.db", "--graph", "orders", "undo"],
        None,
    );
    assert_eq!(undo.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8_lossy(&undo.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The graph view loses the edge first, then both nodes.
    let graph_view = lines.iter().find(|l| l["view"] == "graph").unwrap();
    assert_eq!(graph_view["action"], "undo");
    let kinds: Vec<&str> = graph_view["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["edge-delete", "node-delete", "node-delete"]);
    let u = lines.last().unwrap();
    assert_eq!(u["undo"]["entry"], 1);
    assert_eq!(u["undo"]["redo"], 1);
    let again = graphctx(
        dir.path(),
        &["--db", "g.db", "--graph", "orders", "undo"],
        None,
    );
    assert_eq!(again.status.code(), Some(2));
    let e: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(e["error"], "NothingToDoError");
    let redo = graphctx(
        dir.path(),
        &["--db", "g.db", "--graph", "orders", "redo"],
        None,
    );
    assert_eq!(redo.status.code(), Some(0));
}

#[test]
fn cli_errors_are_json_with_exit_2_and_stdin_works() {
    let dir = tempfile::tempdir().unwrap();
    let cyclic = r#"{"operations":[
        {"id":"a","type":"create","nodeType":"UC","data":{"Name":"A"},"dependsOn":["b"]},
        {"id":"b","type":"create","nodeType":"UC","data":{"Name":"B"},"dependsOn":["a"]}]}"#;
    let out = graphctx(
        dir.path(),
        &["--db", "g.db", "--graph", "m", "apply", "-"],
        Some(cyclic),
    );
    assert_eq!(out.status.code(), Some(2));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"], "CyclicDependencyError");
    assert_eq!(e["cycles"], json!([["a", "b", "a"]]));
    assert!(e["llmFeedback"].as_str().unwrap().starts_with("❌ Error"));

    let out = graphctx(
        dir.path(),
        &["--db", "g.db", "--graph", "m", "apply", "-"],
        Some("not json"),
    );
    assert_eq!(out.status.code(), Some(2));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"], "InvalidResponseError");
}

#[test]
fn every_error_leaves_the_graph_alone() {
    let store = Store::memory().unwrap();
    ok(&store, SEED_11);

    let j = err(&store, "{\"operations\": 3}");
    assert_eq!(j["error"], "InvalidResponseError");

    let j = err(
        &store,
        r#"{"operations":[{"id":"x","type":"create","nodeType":"UC"}]}"#,
    );
    assert_eq!(j["error"], "InvalidOperationError");
    assert_eq!(j["operation"], "x");

    let j = err(
        &store,
        r#"{"operations":[{"id":"x","type":"create","nodeType":"UC","data":{"Name":"A"}},
                          {"id":"x","type":"create","nodeType":"UC","data":{"Name":"B"}}]}"#,
    );
    assert_eq!(j["error"], "DuplicateIdError");

    // Unknown operation, tempId and semantic ID: all named.
    let j = err(
        &store,
        r#"{"operations":[{"id":"r","type":"create-relationship","relType":"compose",
            "sourceSemanticId":"OrderSystem.SY.001","targetTempId":"temp-nowhere","dependsOn":["op-404"]},
           {"id":"s","type":"create-relationship","relType":"io",
            "sourceSemanticId":"Ghost.AC.009","targetSemanticId":"PlaceOrder.UC.001"}]}"#,
    );
    assert_eq!(j["error"], "MissingDependencyError");
    assert_eq!(j["operation"], "r");
    assert_eq!(j["missingDeps"], json!(["op-404", "temp-nowhere"]));
    assert_eq!(
        j["missing"],
        json!([
            {"operation": "r", "kind": "operation", "reference": "op-404"},
            {"operation": "r", "kind": "tempId", "reference": "temp-nowhere"},
            {"operation": "s", "kind": "semanticId", "reference": "Ghost.AC.009"},
        ])
    );

    let j = err(
        &store,
        r#"{"operations":[
            {"id":"a","type":"create","nodeType":"FUNC","tempId":"ta","data":{"Name":"A"},"dependsOn":["c"]},
            {"id":"b","type":"update","tempId":"ta","data":{"Descr":"x"}},
            {"id":"c","type":"create","nodeType":"FUNC","tempId":"tc","data":{"Name":"C"},"dependsOn":["b"]}]}"#,
    );
    assert_eq!(j["error"], "CyclicDependencyError");
    // a depends on c (dependsOn), c on b (dependsOn), b on a (its tempId).
    assert_eq!(j["cycles"], json!([["a", "c", "b", "a"]]));
    assert!(j["llmFeedback"].as_str().unwrap().contains("(tempId ta)"));

    for (bad, reason) in [
        (
            r#"{"operations":[{"id":"u","type":"update","uuid":"00000000-0000-4000-8000-000000000000","data":{"Descr":"x"}}]}"#,
            "node_not_found",
        ),
        (
            r#"{"operations":[{"id":"u","type":"create","nodeType":"WIDGET","data":{"Name":"W"}}]}"#,
            "unknown_node_type",
        ),
        (
            r#"{"operations":[{"id":"u","type":"create-relationship","relType":"likes","sourceSemanticId":"OrderSystem.SY.001","targetSemanticId":"PlaceOrder.UC.001"}]}"#,
            "unknown_relationship_type",
        ),
        (
            r#"{"operations":[{"id":"u","type":"delete-relationship","relType":"io","sourceSemanticId":"OrderSystem.SY.001","targetSemanticId":"PlaceOrder.UC.001"}]}"#,
            "edge_not_found",
        ),
        (
            r#"{"operations":[{"id":"u","type":"update","semanticId":"OrderSystem.SY.001","nodeType":"UC","data":{"Descr":"x"}}]}"#,
            "type_change",
        ),
    ] {
        let j = err(&store, bad);
        assert_eq!(j["error"], "ChunkExecutionError", "{j}");
        assert_eq!(j["reason"], reason, "{j}");
        assert_eq!(j["operation"], "u");
    }
}

#[test]
fn last_of_a_thousand_failing_writes_nothing() {
    let store = Store::memory().unwrap();
    ok(&store, SEED_11);
    let before = dump(&store);
    let seq_before = seq(&store);
    let log = |s: &Store| (s.dump("op_log").unwrap(), s.dump("op_changes").unwrap());
    let log_before = log(&store);

    let mut resp = cargo_response(110); // 990 operations + 22 updates
    let ops = resp["operations"].as_array_mut().unwrap();
    ops.truncate(999);
    ops.push(json!({"id": "last", "type": "update",
        "uuid": "0badc0de-0000-4000-8000-000000000000", "data": {"Descr": "x"}}));
    assert_eq!(ops.len(), 1000);
    let e = run(&store, &resp.to_string()).unwrap_err();
    let j = e.to_json();
    assert_eq!(j["error"], "ChunkExecutionError");
    assert_eq!(j["operation"], "last");
    assert_eq!(j["reason"], "node_not_found");
    assert_eq!(dump(&store), before);
    assert_eq!(seq(&store), seq_before);
    assert_eq!(log(&store), log_before);

    // The same batch, now failing inside the database transaction itself
    // (after the node and edge rows were written in it).
    let resp = cargo_response(110);
    let mut lines = 0;
    let opts = ApplyOptions {
        fail_at_commit: true,
    };
    let e = apply(
        &store,
        G,
        &parse_response(&resp.to_string()).unwrap(),
        &opts,
        &mut |_| lines += 1,
    )
    .unwrap_err();
    assert_eq!(e.kind(), "StorageError");
    assert_eq!(lines, 0, "no view update before the commit");
    assert_eq!(dump(&store), before);
    assert_eq!(seq(&store), seq_before);
    assert_eq!(log(&store), log_before);

    // And without the fault it lands whole.
    let (s, _) = ok(&store, &resp.to_string());
    assert_eq!(s.counts.nodes_created, 550);
    assert_eq!(s.counts.relationships_created, 440);
    assert_eq!(s.chunks, 3);
}

#[test]
fn undo_and_redo_restore_exactly() {
    let store = Store::memory().unwrap();
    let empty = dump(&store);
    let (first, _) = ok(&store, SEED_11);
    let s0 = dump(&store);

    // A second response that touches the first's nodes every way: update,
    // new edges to them, deleting one (its edge goes with it), a semantic-ID
    // reference to an existing node and to a proposed one.
    let second = json!({
        "response": "Ich habe PlaceOrder ersetzt.",
        "operations": [
            {"id": "u", "type": "update", "semanticId": "OrderSystem.SY.001",
             "data": {"Descr": "Orders, payments", "Owner": "Sales"}},
            {"id": "f", "type": "create", "nodeType": "FUNC",
             "data": {"semanticId": "ProcessPayment.FN.002", "Name": "ProcessPayment", "Descr": "Process customer payment"}},
            {"id": "r", "type": "create-relationship", "relType": "compose",
             "sourceSemanticId": "OrderSystem.SY.001", "targetSemanticId": "ProcessPayment.FN.002"},
            {"id": "d", "type": "delete", "uuid": first.created[1].uuid},
        ]
    });
    let (s, lines) = ok(&store, &second.to_string());
    assert_eq!(s.created[0].semantic_id, "ProcessPayment.FN.002");
    // Chunks: [u, f], [r], [d] — the delete last, with its edge.
    assert_eq!(s.chunks, 3);
    let last = lines.iter().rev().find(|l| l["view"] == "graph").unwrap();
    let kinds: Vec<&str> = last["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["edge-delete", "node-delete"]);
    let s1 = dump(&store);
    assert_ne!(s0, s1);

    let seq1 = seq(&store);
    let u = changelog::undo(&store, G).unwrap();
    assert_eq!(u.entry, 2);
    assert_eq!(seq(&store), seq1 + 1, "undo bumps the seq");
    // The views get the way back: the new edge and node go, the deleted
    // node and its edge return, the updated node is updated again.
    let kinds = |u: &changelog::Reverted| -> Vec<String> {
        u.view
            .graph
            .iter()
            .map(|x| {
                let what = x.get("node").or(x.get("edge")).unwrap();
                format!(
                    "{} {}",
                    x["type"].as_str().unwrap(),
                    what["Name"]
                        .as_str()
                        .unwrap_or(what["type"].as_str().unwrap())
                )
            })
            .collect()
    };
    assert_eq!(
        kinds(&u),
        [
            "edge-delete compose",
            "node-delete ProcessPayment",
            "node-add PlaceOrder",
            "node-update OrderSystem",
            "edge-add compose"
        ],
        "{:?}",
        u.view
    );
    assert_eq!(dump(&store), s0);
    let u = changelog::undo(&store, G).unwrap();
    assert_eq!(u.entry, 1);
    assert_eq!(dump(&store), empty);
    assert!(matches!(
        changelog::undo(&store, G),
        Err(OperationError::NothingTo("undo", _))
    ));

    changelog::redo(&store, G).unwrap();
    assert_eq!(dump(&store), s0);
    let r = changelog::redo(&store, G).unwrap();
    assert_eq!(r.entry, 2);
    assert_eq!(seq(&store), seq1 + 4);
    assert_eq!(dump(&store), s1);

    // A new apply after an undo clears the redo stack.
    changelog::undo(&store, G).unwrap();
    assert_eq!(changelog::stats(&store, G).unwrap().redo, 1);
    ok(
        &store,
        r#"{"operations":[{"type":"create","nodeType":"REQ","data":{"Name":"FastCheckout"}}]}"#,
    );
    let st = changelog::stats(&store, G).unwrap();
    assert_eq!((st.undo, st.redo), (2, 0));
    assert!(matches!(
        changelog::redo(&store, G),
        Err(OperationError::NothingTo("redo", _))
    ));
}

#[test]
fn undo_refuses_to_overwrite_changes_made_outside_the_log() {
    let store = Store::memory().unwrap();
    let (first, _) = ok(&store, SEED_11);
    // Someone renames a node without going through the log.
    store
        .write(
            "?[graph, id, kind, name, doc] <- [[$g, $id, 'SYS', 'Renamed', '']] :put node {graph, id => kind, name, doc}",
            graphctx::store::Params::new()
                .with("g", G)
                .with("id", first.created[0].uuid.as_str()),
        )
        .unwrap();
    let before = dump(&store);
    let e = changelog::undo(&store, G).unwrap_err();
    assert_eq!(e.kind(), "ConflictError", "{e}");
    assert_eq!(dump(&store), before);
}

#[test]
fn semantic_ids_resolve_against_the_graph_and_the_response() {
    let store = Store::memory().unwrap();
    // Seed 001 §6.1's graph, then its answer.
    ok(
        &store,
        r#"{"operations":[
        {"id":"s","type":"create","nodeType":"SYS","tempId":"s","data":{"Name":"CargoManagement"}},
        {"id":"u","type":"create","nodeType":"UC","tempId":"u","data":{"Name":"ManageFleet"}},
        {"id":"f","type":"create","nodeType":"FUNC","tempId":"f","data":{"Name":"OptimizeRoutes"}},
        {"type":"create-relationship","relType":"cp","sourceTempId":"s","targetTempId":"u"},
        {"type":"create-relationship","relType":"cp","sourceTempId":"u","targetTempId":"f"}]}"#,
    );
    let (s, lines) = ok(
        &store,
        r#"{"response":"Ich habe die Funktion ProcessPayment hinzugefügt.","operations":[
        {"type":"create","nodeType":"FUNC","data":{"semanticId":"ProcessPayment.FN.002","Name":"ProcessPayment","Descr":"Process customer payment"}},
        {"type":"create-relationship","relType":"compose","sourceSemanticId":"ManageFleet.UC.001","targetSemanticId":"ProcessPayment.FN.002"}]}"#,
    );
    assert_eq!(s.chunks, 2);
    let chunk1 = lines
        .iter()
        .find(|l| l["view"] == "graph" && l["chunk"] == 1)
        .unwrap();
    let fleet = &chunk1["updates"][0]["edge"];
    assert_eq!(fleet["type"], "compose");
    assert_eq!(fleet["targetUuid"], json!(s.created[0].uuid));
    assert_eq!(lines[0]["update"]["metadata"]["relationshipsCreated"], 1);

    // A proposal that is taken gets a fresh ID; references inside the
    // response still reach the new node.
    let (s, _) = ok(
        &store,
        r#"{"operations":[
        {"type":"create","nodeType":"FUNC","data":{"semanticId":"ProcessPayment.FN.002","Name":"Refund"}},
        {"type":"create-relationship","relType":"compose","sourceSemanticId":"ManageFleet.UC.001","targetSemanticId":"ProcessPayment.FN.002"}]}"#,
    );
    assert_eq!(s.created[0].semantic_id, "Refund.FN.003");
    assert_eq!(
        s.created[0].proposed_semantic_id.as_deref(),
        Some("ProcessPayment.FN.002")
    );
}

/// The graph context writes edge ends with unique names by name; an answer
/// that copies such a name where a semantic ID belongs still reaches the
/// node. A name two nodes share, or none has, is a missing dependency.
#[test]
fn unique_names_stand_for_semantic_ids() {
    let store = Store::memory().unwrap();
    ok(
        &store,
        r#"{"operations":[
        {"id":"s","type":"create","nodeType":"SYS","tempId":"s","data":{"Name":"CargoManagement"}},
        {"id":"u","type":"create","nodeType":"UC","tempId":"u","data":{"Name":"ManageFleet"}},
        {"id":"a","type":"create","nodeType":"FUNC","data":{"Name":"Twin"}},
        {"id":"b","type":"create","nodeType":"FUNC","data":{"Name":"Twin"}}]}"#,
    );
    let (s, _) = ok(
        &store,
        r#"{"operations":[
        {"type":"create-relationship","relType":"cp","sourceSemanticId":"CargoManagement","targetSemanticId":"ManageFleet"},
        {"type":"update","semanticId":"ManageFleet","data":{"Descr":"Keeps the fleet running"}}]}"#,
    );
    assert_eq!(
        (s.counts.relationships_created, s.counts.nodes_updated),
        (1, 1)
    );
    let g = graphctx::ontology::store::load_graph(&store, G).unwrap();
    let fleet = g.by_semantic_id("ManageFleet.UC.001").unwrap();
    assert_eq!(fleet.descr, "Keeps the fleet running");
    let sys = g.uuid_of("CargoManagement.SY.001").unwrap();
    assert!(g
        .edges
        .keys()
        .any(|(src, _, dst)| src == sys && dst == &fleet.uuid));

    let j = err(
        &store,
        r#"{"operations":[
        {"id":"t","type":"create-relationship","relType":"cp","sourceSemanticId":"ManageFleet","targetSemanticId":"Twin"},
        {"id":"n","type":"update","semanticId":"Nobody","data":{"Descr":"x"}}]}"#,
    );
    assert_eq!(j["error"], "MissingDependencyError");
    assert_eq!(
        j["missing"],
        json!([
            {"operation": "t", "kind": "semanticId", "reference": "Twin"},
            {"operation": "n", "kind": "semanticId", "reference": "Nobody"},
        ])
    );
    assert!(
        j["llmFeedback"]
            .as_str()
            .unwrap()
            .contains("not the name of exactly one node"),
        "{j}"
    );
}

/// A random response: `kinds[i]` 0 = create, 1 = update, 2 =
/// create-relationship, 3 = delete-relationship, 4 = delete; operation i
/// depends (by `dependsOn`) on the listed earlier operations of the same
/// or an earlier phase, listed in a scrambled order.
fn random_response(kinds: &[u8], deps: &[Vec<usize>], back_edge: Option<(usize, usize)>) -> String {
    let n = kinds.len();
    let phase = |k: u8| match k {
        3 => 1,
        4 => 2,
        _ => 0,
    };
    let mut ops = Vec::new();
    for i in 0..n {
        let mut d: Vec<String> = deps[i]
            .iter()
            .map(|&x| x % i.max(1))
            .filter(|&j| j < i && phase(kinds[j]) <= phase(kinds[i]))
            .map(|j| format!("o{j}"))
            .collect();
        if let Some((from, to)) = back_edge {
            if from == i {
                d.push(format!("o{to}"));
            }
        }
        let mut op = match kinds[i] {
            0 => json!({"type": "create", "nodeType": "UC", "data": {"Name": format!("N{i}")}}),
            1 => json!({"type": "update", "semanticId": "Base.UC.001", "data": {"Descr": "x"}}),
            2 => json!({"type": "create-relationship", "relType": "trace",
                        "sourceSemanticId": "Base.UC.001", "targetSemanticId": "Other.UC.002"}),
            3 => json!({"type": "delete-relationship", "relType": "trace",
                        "sourceSemanticId": "Base.UC.001", "targetSemanticId": "Other.UC.002"}),
            _ => json!({"type": "delete", "semanticId": "Other.UC.002"}),
        };
        op["id"] = json!(format!("o{i}"));
        op["dependsOn"] = json!(d);
        ops.push(op);
    }
    // Input order must not matter: reverse every other pair.
    for pair in ops.chunks_mut(2) {
        pair.reverse();
    }
    json!({"operations": ops}).to_string()
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Chunks are tight topological levels: every dependency is in an
    /// earlier chunk, an operation is one chunk after its latest
    /// dependency (or first in its phase), and the phases come in order.
    #[test]
    fn chunks_are_tight_levels(
        kinds in proptest::collection::vec(0u8..5, 1..60),
        deps in proptest::collection::vec(proptest::collection::vec(0usize..1000, 0..4), 60),
    ) {
        let r = parse_response(&random_response(&kinds, &deps, None)).unwrap();
        let known = |_: &str| true;
        let plan = graphctx::operations::chunk::plan(&r.operations, &known).unwrap();
        let by_id: std::collections::HashMap<&str, usize> =
            r.operations.iter().enumerate().map(|(i, o)| (o.id.as_str(), i)).collect();
        let phase = |i: usize| match r.operations[i].kind {
            graphctx::operations::parse::OpKind::DeleteRelationship => 1,
            graphctx::operations::parse::OpKind::Delete => 2,
            _ => 0,
        };
        let mut first_of_phase = [usize::MAX; 3];
        for (i, _) in r.operations.iter().enumerate() {
            let p = phase(i);
            first_of_phase[p] = first_of_phase[p].min(plan.chunk_of[i]);
        }
        for (i, op) in r.operations.iter().enumerate() {
            let c = plan.chunk_of[i];
            let dep_chunks: Vec<usize> =
                op.depends_on.iter().map(|d| plan.chunk_of[by_id[d.as_str()]]).collect();
            for &dc in &dep_chunks {
                prop_assert!(dc < c, "{} in chunk {c} depends on chunk {dc}", op.id);
            }
            let tight = c == first_of_phase[phase(i)] || dep_chunks.contains(&(c - 1));
            prop_assert!(tight, "{} in chunk {c} could run earlier", op.id);
            for (j, _) in r.operations.iter().enumerate() {
                if phase(j) < phase(i) {
                    prop_assert!(plan.chunk_of[j] < c, "phase order broken");
                }
            }
        }
        let total: usize = plan.chunks.iter().map(Vec::len).sum();
        prop_assert_eq!(total, r.operations.len());
        prop_assert!(plan.chunks.iter().all(|c| !c.is_empty()));
    }

    /// A back edge makes a cycle; every reported cycle is a real one.
    #[test]
    fn reported_cycles_are_real(
        kinds in proptest::collection::vec(0u8..3, 2..40),
        deps in proptest::collection::vec(proptest::collection::vec(0usize..1000, 1..3), 40),
        a in 0usize..40, b in 0usize..40,
    ) {
        let n = kinds.len();
        let (to, from) = (a % n, b % n);
        prop_assume!(to >= from);
        // `from` depends on `to` ≥ from; make `to` reach `from` through a chain.
        let mut deps = deps;
        for (i, d) in deps.iter_mut().enumerate().take(to + 1).skip(from + 1) {
            d.push(i - 1);
        }
        let r = parse_response(&random_response(&kinds, &deps, Some((from, to)))).unwrap();
        let known = |_: &str| true;
        let e = graphctx::operations::chunk::plan(&r.operations, &known).unwrap_err();
        let OperationError::CyclicDependency { cycles, .. } = &e else {
            panic!("expected a cycle, got {e}");
        };
        prop_assert!(!cycles.is_empty());
        let op = |id: &str| r.operations.iter().find(|o| o.id == id).unwrap();
        for c in cycles {
            for (k, step) in c.iter().enumerate() {
                let next = &c[(k + 1) % c.len()].operation;
                prop_assert!(op(&step.operation).depends_on.contains(next),
                    "{} does not depend on {}", step.operation, next);
            }
        }
    }
}
