//! Flow graphs without a model: tool execution (golden), undo/redo,
//! validation, the retry message, response parsing, import/export and the
//! `tools`/`flow` commands.

use crate::common;

use std::process::Command;

use graphctx::flow::executor::{id_from_label, Executed, FlowSession, ToolCall, ToolResult};
use graphctx::flow::model::{Flow, FlowNode, Position, VisualSettings};
use graphctx::flow::parse::{parse_reply, parse_text};
use graphctx::flow::prompt::retry_message;
use graphctx::flow::{self, tools, FlowError};
use graphctx::llm::{ChatReply, NativeToolCall};
use graphctx::store::value::display;
use graphctx::store::{Params, Store};
use serde_json::{json, Value};

use common::assert_golden;

const G: &str = "app";

fn call(name: &str, params: Value) -> ToolCall {
    ToolCall::new(name, params)
}

/// The seed's example flow: one node, Login.
fn seed_flow() -> Flow {
    Flow {
        nodes: vec![FlowNode {
            id: "login".into(),
            label: "Login".into(),
            description: "User authentication".into(),
            position: Position { x: 0.0, y: 0.0 },
        }],
        edges: vec![],
    }
}

fn store_with(flow: Flow) -> Store {
    let store = Store::memory().unwrap();
    flow::import(&store, G, flow, None).unwrap();
    store
}

/// Run one answer's calls and commit them.
fn answer(store: &Store, calls: &[ToolCall]) -> Vec<Executed> {
    let mut s = FlowSession::open(store, G).unwrap();
    let done = s.execute(calls).unwrap();
    s.commit().unwrap();
    done
}

fn stored(store: &Store) -> Flow {
    flow::store::load(store, G).unwrap().flow
}

fn labels(flow: &Flow) -> Vec<&str> {
    flow.nodes.iter().map(|n| n.label.as_str()).collect()
}

/// Executed calls without the bulky `updatedFlow`, one JSON line each.
fn render(done: &[Executed]) -> String {
    done.iter()
        .map(|e| {
            let mut r = e.result.clone();
            r.updated_flow = None;
            r.visual_settings = None;
            format!(
                "{}({}) -> {} | {}",
                e.name,
                e.params,
                serde_json::to_string(&r).unwrap(),
                e.change.as_deref().unwrap_or("-")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn golden_tool_execution_on_the_seed_example() {
    let store = store_with(seed_flow());
    let calls = vec![
        call("addNode", json!({"label": "Home", "parentNodeId": "login"})),
        call(
            "addNode",
            json!({"label": "Profile Settings", "description": "Edit name and avatar", "parentNodeId": "Home", "edgeLabel": "gear icon"}),
        ),
        call("addNode", json!({"label": "Home", "parentNodeId": "home"})),
        call("addNode", json!({"label": "Home", "parentNodeId": "logn"})),
        call(
            "addEdge",
            json!({"sourceNodeId": "profile_settings", "targetNodeId": "Login", "label": "log out"}),
        ),
        call(
            "addEdge",
            json!({"sourceNodeId": "login", "targetNodeId": "home"}),
        ),
        call(
            "updateNode",
            json!({"nodeId": "home_2", "label": "Dashboard", "position": {"x": 400, "y": 86}}),
        ),
        call(
            "updateEdge",
            json!({"edgeId": "e_home_home_2", "label": "more"}),
        ),
        call("deleteEdge", json!({"edgeId": "e_home_home_2"})),
        call("deleteNode", json!({"nodeId": "home_2"})),
        call("deleteNode", json!({"nodeId": "home_2"})),
        call(
            "changeVisuals",
            json!({"target": "background", "color": "linear-gradient(90deg, #ff0000, #0000ff)"}),
        ),
        call(
            "changeVisuals",
            json!({"target": "node", "nodeId": "login", "property": "border", "color": "#00ff00"}),
        ),
        call(
            "changeDimensions",
            json!({"target": "allNodes", "direction": "increase"}),
        ),
        call(
            "changeDimensions",
            json!({"target": "node", "nodeId": "home", "direction": "decrease", "axis": "width", "steps": 2}),
        ),
        call(
            "changeDimensions",
            json!({"target": "zoom", "direction": "decrease"}),
        ),
        call(
            "changeDimensions",
            json!({"target": "dagreVertical", "direction": "increase"}),
        ),
    ];
    let done = answer(&store, &calls);
    let after = flow::store::load(&store, G).unwrap();
    let text = format!(
        "{}\n\nflow:\n{}\n\nvisuals:\n{}\n",
        render(&done),
        serde_json::to_string_pretty(&after.flow).unwrap(),
        serde_json::to_string_pretty(&after.visuals).unwrap()
    );
    assert_golden("flow/tool_execution.txt", &text);

    // The seed's result objects.
    let first = serde_json::to_value(&done[0].result).unwrap();
    assert_eq!(first["success"], true);
    assert_eq!(first["nodeId"], "home");
    assert_eq!(first["edgeId"], "e_login_home");
    assert!(first["updatedFlow"]["nodes"].is_array());
    assert_eq!(
        serde_json::to_value(&done[3].result).unwrap(),
        json!({"success": false, "error": "Parent node logn not found"})
    );
}

#[test]
fn flow_rows_are_ordinary_graph_rows() {
    let store = store_with(seed_flow());
    answer(
        &store,
        &[call(
            "addNode",
            json!({"label": "Home", "parentNodeId": "login"}),
        )],
    );
    let nodes = store
        .read(
            "?[id, kind, name] := *node{graph: $g, id, kind, name}",
            Params::new().with("g", G),
        )
        .unwrap();
    let rows: Vec<String> = nodes
        .rows
        .iter()
        .map(|r| r.iter().map(display).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(rows, ["home flow_node Home", "login flow_node Login"]);
    let edges = store
        .read(
            "?[src, rel, dst, origin] := *edge{graph: $g, src, rel, dst, origin}",
            Params::new().with("g", G),
        )
        .unwrap();
    assert_eq!(edges.rows.len(), 1);
    assert_eq!(display(&edges.rows[0][3]), "e_login_home");
}

#[test]
fn undo_and_redo_revert_whole_answers() {
    let store = store_with(seed_flow());
    let seq0 = flow::store::load(&store, G).unwrap().seq.unwrap();
    answer(
        &store,
        &[
            call("addNode", json!({"label": "Home", "parentNodeId": "login"})),
            call(
                "addNode",
                json!({"label": "Settings", "parentNodeId": "Home"}),
            ),
        ],
    );
    let after_one = stored(&store);
    answer(&store, &[call("deleteNode", json!({"nodeId": "home"}))]);
    assert_eq!(labels(&stored(&store)), ["Login", "Settings"]);
    assert!(stored(&store).edges.is_empty());

    // Undo reverts the whole previous answer, in a later session.
    let done = answer(&store, &[call("undo", json!({}))]);
    assert!(done[0].result.success);
    assert_eq!(stored(&store), after_one);
    let done = answer(&store, &[call("undo", json!({}))]);
    assert!(done[0].result.success);
    assert_eq!(stored(&store), seed_flow());
    let done = answer(&store, &[call("redo", json!({}))]);
    assert!(done[0].result.success);
    assert_eq!(stored(&store), after_one);

    // Every landed change bumped seq.
    assert!(flow::store::load(&store, G).unwrap().seq.unwrap() >= seq0 + 5);

    // A new edit drops the redo stack.
    answer(
        &store,
        &[call(
            "updateNode",
            json!({"nodeId": "login", "label": "Sign in"}),
        )],
    );
    let done = answer(&store, &[call("redo", json!(null))]);
    assert_eq!(done[0].result.error.as_deref(), Some("Nothing to redo"));

    // Undo in the middle of an answer closes the edits before it: they
    // are reverted as one snapshot, and redo brings them back.
    let before = stored(&store);
    let done = answer(
        &store,
        &[
            call("addNode", json!({"label": "A"})),
            call("addNode", json!({"label": "B", "parentNodeId": "A"})),
            call("undo", json!({})),
        ],
    );
    assert!(done.iter().all(|e| e.result.success));
    assert_eq!(stored(&store), before);
    answer(&store, &[call("redo", json!({}))]);
    assert_eq!(
        labels(&stored(&store)),
        ["Sign in", "Home", "Settings", "A", "B"]
    );
}

#[test]
fn undo_on_a_new_graph_has_nothing_to_undo_and_visuals_are_not_undone() {
    let store = Store::memory().unwrap();
    let done = answer(&store, &[call("undo", json!({}))]);
    assert_eq!(done[0].result.error.as_deref(), Some("Nothing to undo"));
    answer(
        &store,
        &[
            call("addNode", json!({"label": "Start"})),
            call(
                "changeVisuals",
                json!({"target": "allNodes", "color": "#123456"}),
            ),
        ],
    );
    answer(&store, &[call("undo", json!({}))]);
    let s = flow::store::load(&store, G).unwrap();
    assert!(s.flow.nodes.is_empty());
    assert_eq!(s.visuals.node_colors.background.as_deref(), Some("#123456"));
}

#[test]
fn undo_history_is_bounded() {
    let store = Store::memory().unwrap();
    for i in 0..(flow::store::UNDO_LIMIT + 5) {
        answer(
            &store,
            &[call("addNode", json!({"label": format!("N{i}")}))],
        );
    }
    let mut undone = 0;
    loop {
        let done = answer(&store, &[call("undo", json!({}))]);
        if !done[0].result.success {
            break;
        }
        undone += 1;
    }
    assert_eq!(undone, flow::store::UNDO_LIMIT - 1);
    let snapshots = store.dump("flow_snapshot").unwrap();
    assert_eq!(snapshots.len() as i64, flow::store::UNDO_LIMIT);
}

#[test]
fn bad_calls_fail_with_a_reason_and_change_nothing() {
    let store = store_with(seed_flow());
    let cases: Vec<(ToolCall, &str)> = vec![
        (call("addNod", json!({"label": "X"})), "Unknown tool addNod"),
        (
            call("addNode", json!({})),
            "Missing required parameter 'label'",
        ),
        (
            call("addNode", json!({"label": "   "})),
            "Parameter 'label' must not be empty",
        ),
        (
            call("addNode", json!({"label": 7})),
            "Parameter 'label' must be a string",
        ),
        (
            call("addNode", json!({"label": "X", "colour": "red"})),
            "Unknown parameter 'colour' for addNode",
        ),
        (
            call("addNode", json!("X")),
            "Parameters of addNode must be a JSON object",
        ),
        (
            call("addNode", json!({"label": "X", "id": "login"})),
            "Node with ID login already exists",
        ),
        (
            call("addNode", json!({"label": "X", "id": "a b"})),
            "may only contain",
        ),
        (
            call("addNode", json!({"label": "X", "edgeLabel": "y"})),
            "edgeLabel needs parentNodeId",
        ),
        (
            call("updateNode", json!({"nodeId": "login"})),
            "at least one of",
        ),
        (
            call("updateNode", json!({"nodeId": "nope", "label": "Y"})),
            "Node nope not found",
        ),
        (
            call(
                "updateNode",
                json!({"nodeId": "login", "position": {"x": "1"}}),
            ),
            "Parameter 'position'",
        ),
        (
            call("deleteNode", json!({"nodeId": "nope"})),
            "Node nope not found",
        ),
        (
            call(
                "addEdge",
                json!({"sourceNodeId": "login", "targetNodeId": "nope"}),
            ),
            "Target node nope not found",
        ),
        (
            call(
                "addEdge",
                json!({"sourceNodeId": "login", "targetNodeId": "login"}),
            ),
            "to itself",
        ),
        (
            call("updateEdge", json!({"edgeId": "e1"})),
            "Missing required parameter 'label'",
        ),
        (
            call("updateEdge", json!({"edgeId": "e1", "label": "x"})),
            "Edge e1 not found",
        ),
        (
            call("deleteEdge", json!({"edgeId": "e1"})),
            "Edge e1 not found",
        ),
        (
            call("undo", json!({"steps": 2})),
            "undo takes no parameters",
        ),
        (
            call(
                "changeVisuals",
                json!({"target": "background", "color": "url(http://x)"}),
            ),
            "Invalid background",
        ),
        (
            call(
                "changeVisuals",
                json!({"target": "allNodes", "color": "linear-gradient(red, blue)"}),
            ),
            "Invalid colour",
        ),
        (
            call("changeVisuals", json!({"target": "node", "color": "#fff"})),
            "'nodeId'",
        ),
        (
            call(
                "changeVisuals",
                json!({"target": "node", "nodeId": "login", "reset": true}),
            ),
            "no colour override",
        ),
        (
            call("changeVisuals", json!({"target": "sky", "color": "#fff"})),
            "Parameter 'target' must be one of",
        ),
        (
            call(
                "changeDimensions",
                json!({"target": "zoom", "direction": "up"}),
            ),
            "Parameter 'direction' must be one of",
        ),
        (
            call(
                "changeDimensions",
                json!({"target": "zoom", "direction": "increase", "steps": 9}),
            ),
            "from 1 to 5",
        ),
        (
            call(
                "changeDimensions",
                json!({"target": "zoom", "direction": "increase", "axis": "width"}),
            ),
            "axis is only used",
        ),
        (
            call(
                "changeDimensions",
                json!({"target": "node", "nodeId": "nope", "direction": "increase"}),
            ),
            "Node nope not found",
        ),
    ];
    let before = flow::store::load(&store, G).unwrap();
    for (c, expected) in &cases {
        let done = answer(&store, std::slice::from_ref(c));
        let err = done[0].result.error.clone().unwrap_or_default();
        assert!(
            !done[0].result.success,
            "{} {} should fail",
            c.name, c.params
        );
        assert!(
            err.contains(expected),
            "{} {}: error {err:?} does not contain {expected:?}",
            c.name,
            c.params
        );
        assert!(done[0].change.is_none());
    }
    let after = flow::store::load(&store, G).unwrap();
    assert_eq!(after.flow, before.flow);
    assert_eq!(after.visuals, before.visuals);
    assert_eq!(after.seq, before.seq, "failed calls must not bump seq");
}

#[test]
fn every_schema_parameter_is_accepted_and_only_those() {
    let defs = tools::definitions();
    let defs = defs.as_array().unwrap();
    assert_eq!(
        defs.iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        tools::TOOL_NAMES
    );
    let store = store_with(seed_flow());
    for d in defs {
        let name = d["name"].as_str().unwrap();
        for (prop, _) in d["parameters"]["properties"].as_object().unwrap() {
            let mut s = FlowSession::open(&store, G).unwrap();
            let done = s
                .execute_one(&call(name, json!({ prop.as_str(): null })))
                .unwrap();
            let err = done.result.error.unwrap_or_default();
            assert!(!err.contains("Unknown parameter"), "{name}.{prop}: {err}");
        }
        let required: Vec<&str> = d["parameters"]["required"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| r.as_str().unwrap())
            .collect();
        for missing in &required {
            // Every other required parameter gets a plausible value.
            let mut params = serde_json::Map::new();
            for other in required.iter().filter(|r| *r != missing) {
                let schema = &d["parameters"]["properties"][*other];
                let value = schema["enum"].get(0).cloned().unwrap_or(json!("login"));
                params.insert(other.to_string(), value);
            }
            let mut s = FlowSession::open(&store, G).unwrap();
            let done = s.execute_one(&call(name, Value::Object(params))).unwrap();
            let err = done.result.error.unwrap_or_default();
            assert!(
                err.contains(&format!("Missing required parameter '{missing}'")),
                "{name} without {missing}: {err}"
            );
        }
    }
}

#[test]
fn ids_come_from_labels_and_labels_resolve_parents() {
    assert_eq!(id_from_label("My Node"), "my_node");
    assert_eq!(id_from_label("  Log-in / Sign up! "), "log_in_sign_up");
    assert_eq!(id_from_label("Über Größe"), "über_größe");
    assert_eq!(id_from_label("!!!"), "node");
    let store = Store::memory().unwrap();
    let done = answer(
        &store,
        &[
            call("addNode", json!({"label": "Lion"})),
            call("addNode", json!({"label": "Cub", "parentNodeId": "Lion"})),
            call("addNode", json!({"label": "Cub", "parentNodeId": "LION"})),
            call("addNode", json!({"label": "Den", "parentNodeId": "cub"})),
        ],
    );
    assert!(done.iter().all(|e| e.result.success), "{}", render(&done));
    let f = stored(&store);
    let ids: Vec<&str> = f.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["lion", "cub", "cub_2", "den"]);
    // "cub" is an id: the first Cub, not the most recent one.
    assert!(f
        .edges
        .iter()
        .any(|e| e.source == "cub" && e.target == "den"));
    // Children of one parent sit side by side below it.
    let cub = f.node("cub").unwrap().position;
    let cub2 = f.node("cub_2").unwrap().position;
    assert_eq!(cub.y, cub2.y);
    assert!(cub.y > f.node("lion").unwrap().position.y);
    assert!(cub2.x > cub.x);
}

#[test]
fn retry_message_matches_the_seed() {
    // The seed's example, verbatim.
    let flow = seed_flow();
    let executed = vec![
        Executed {
            name: "addNode".into(),
            params: json!({"label": "Login"}),
            result: ToolResult {
                success: true,
                node_id: Some("login".into()),
                ..ToolResult::default()
            },
            change: Some("added node login".into()),
        },
        Executed {
            name: "addNode".into(),
            params: json!({"label": "Home", "parentNodeId": "logn"}),
            result: ToolResult {
                success: false,
                error: Some("Parent node logn not found".into()),
                ..ToolResult::default()
            },
            change: None,
        },
    ];
    let expected = "Previous tool execution results:

✅ addNode({\"label\":\"Login\"}) → Success!
❌ addNode({\"label\":\"Home\",\"parentNodeId\":\"logn\"}) → Failed
   Error: Parent node logn not found

📊 Current Flow State:
  Available Nodes (1 total):
    • \"Login\" (ID: \"login\") - User authentication

🔧 Instructions:
Please retry the failed operations using the correct node IDs shown above.";
    assert_eq!(retry_message(&executed, &flow), expected);
}

#[test]
fn golden_retry_message_after_a_real_answer() {
    let store = store_with(seed_flow());
    let done = answer(
        &store,
        &[
            call(
                "addNode",
                json!({"label": "Home", "parentNodeId": "login", "edgeLabel": "success"}),
            ),
            call(
                "addEdge",
                json!({"sourceNodeId": "home", "targetNodeId": "settings"}),
            ),
            call("updateEdge", json!({"edgeId": "e1", "label": "x"})),
        ],
    );
    assert_golden(
        "flow/retry_message.txt",
        &(retry_message(&done, &stored(&store)) + "\n"),
    );
    let empty = retry_message(&[], &Flow::default());
    assert!(empty.contains("  No nodes exist yet."));
}

fn reply(content: &str, calls: Vec<NativeToolCall>) -> ChatReply {
    ChatReply {
        provider: "p".into(),
        model: "m".into(),
        content: content.into(),
        tool_calls: calls,
        failures: vec![],
        usage: None,
    }
}

#[test]
fn parses_the_seed_form_with_comments_fences_and_think_blocks() {
    let answer = r#"<think>hidden reasoning</think>
<thinking>
Add Home after Login.
</thinking>
<response>
```json
[
  // the page after login
  {"type": "tool_use", "id": "toolu_1", "name": "addNode", "input": {"label": "Home", "description": "see http://example.com/a//b", "parentNodeId": "login"}},
  /* a second call,
     on two lines */
  {"type": "tool_use", "id": "toolu_2", "name": "undo", "input": {}}
]
```
</response>"#;
    let p = parse_text(answer);
    assert_eq!(p.parse_error, None);
    assert_eq!(p.thinking, "Add Home after Login.");
    assert_eq!(p.tool_calls.len(), 2);
    assert_eq!(p.tool_calls[0].id.as_deref(), Some("toolu_1"));
    assert_eq!(
        p.tool_calls[0].params["description"],
        "see http://example.com/a//b"
    );
    assert_eq!(p.tool_calls[1].name, "undo");

    // A single object, `params` instead of `input`.
    let p = parse_text(r#"<response>{"name": "deleteNode", "params": {"nodeId": "x"}}</response>"#);
    assert_eq!(
        p.tool_calls,
        vec![call("deleteNode", json!({"nodeId": "x"}))]
    );

    // No tags: no calls, the text is kept.
    let p = parse_text("I cannot do that.");
    assert!(p.tool_calls.is_empty() && p.parse_error.is_none());
    assert_eq!(p.content, "I cannot do that.");
}

#[test]
fn malformed_answers_are_parse_errors() {
    for bad in [
        r#"<response>[{"name": "addNode", "input": {"label": "Home"}</response>"#,
        r#"<response>[{"input": {"label": "Home"}}]</response>"#,
        r#"<response>[1, 2]</response>"#,
        r#"<thinking>x</thinking><response>[{"name": "addNode", "input": {"label": "#,
    ] {
        let p = parse_text(bad);
        let err = p
            .parse_error
            .unwrap_or_else(|| panic!("no parse error for {bad}"));
        assert!(err.starts_with("Failed to parse tool calls"), "{err}");
        assert!(p.tool_calls.is_empty());
    }
    let cut = parse_text(r#"<response>[{"name": "addNode", "input": {"label": "#);
    assert!(cut.parse_error.unwrap().contains("no </response>"));

    let native = reply(
        "",
        vec![NativeToolCall {
            id: Some("c1".into()),
            name: "addNode".into(),
            arguments: "{\"label\": ".into(),
        }],
    );
    assert!(parse_reply(&native)
        .parse_error
        .unwrap()
        .contains("call 1 (addNode)"));
}

#[test]
fn parses_native_tool_calls() {
    let r = reply(
        "Adding it.",
        vec![
            NativeToolCall {
                id: Some("c1".into()),
                name: "addNode".into(),
                arguments: "{\"label\":\"Home\",\"parentNodeId\":\"login\"}".into(),
            },
            NativeToolCall {
                id: None,
                name: "redo".into(),
                arguments: String::new(),
            },
        ],
    );
    let p = parse_reply(&r);
    assert_eq!(p.parse_error, None);
    assert_eq!(p.thinking, "Adding it.");
    assert_eq!(p.tool_calls[0].params["parentNodeId"], "login");
    assert_eq!(p.tool_calls[1].params, json!({}));
}

#[test]
fn import_refuses_bad_documents_and_keeps_the_stored_flow() {
    let store = store_with(seed_flow());
    for (doc, expected) in [
        (json!([1]), "must be a JSON object"),
        (json!({"nodes": [{"id": "a"}]}), "node a has no label"),
        (
            json!({"nodes": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}),
            "node id a appears twice",
        ),
        (
            json!({"nodes": [{"id": "a", "label": "A"}], "edges": [{"source": "a", "target": "b"}]}),
            "refers to node b",
        ),
        (
            json!({"nodes": [{"id": "a", "label": "A", "position": {"x": 1}}]}),
            "position",
        ),
        (
            json!({"nodes": [], "visualSettings": {"zoom": 2}}),
            "visualSettings",
        ),
    ] {
        let err = Flow::from_json(&doc).unwrap_err();
        assert!(matches!(err, FlowError::InvalidFlow(_)));
        assert!(err.to_string().contains(expected), "{err}");
    }
    assert_eq!(stored(&store), seed_flow());

    // Both shapes read the same flow; the export reads back to it.
    let compact = serde_json::to_value(seed_flow()).unwrap();
    let (a, _) = Flow::from_json(&compact).unwrap();
    let (b, v) = Flow::from_json(&seed_flow().to_react_flow(&VisualSettings::default())).unwrap();
    assert_eq!(a, seed_flow());
    assert_eq!(b, seed_flow());
    assert_eq!(v, Some(VisualSettings::default()));
}

#[test]
fn a_code_graph_is_not_a_flow() {
    let store = Store::memory().unwrap();
    store
        .write(
            "?[graph, source, seq] <- [['code', '/repo', 3]] :put graph {graph => source, seq}",
            Params::new(),
        )
        .unwrap();
    let err = FlowSession::open(&store, "code").err().unwrap();
    assert!(matches!(err, FlowError::NotFlowGraph { .. }), "{err}");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_graphctx"))
}

#[test]
fn cli_tools_import_export_undo() {
    let out = bin().args(["tools", "--json"]).output().unwrap();
    assert!(out.status.success());
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed, tools::definitions());

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let db = db.to_str().unwrap();
    let input = dir.path().join("flow.json");
    std::fs::write(
        &input,
        r#"{"nodes":[{"id":"login","type":"default","position":{"x":0,"y":0},"data":{"label":"Login","description":"User authentication"}},{"id":"home","position":{"x":0,"y":86},"data":{"label":"Home"}}],"edges":[{"id":"e1","source":"login","target":"home"}]}"#,
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = bin()
            .args(["--db", db, "--graph", "app"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, stdout, _) = run(&["flow", "import", input.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("imported 2 nodes and 1 edges"), "{stdout}");
    let (_, exported, _) = run(&["flow", "export"]);
    let doc: Value = serde_json::from_str(&exported).unwrap();
    assert_eq!(doc["nodes"][1]["data"]["label"], "Home");
    assert_eq!(doc["edges"][0]["id"], "e1");
    assert_eq!(doc["visualSettings"]["dimensions"]["zoom"], 1.0);

    let (code, stdout, _) = run(&["flow", "undo"]);
    assert_eq!(code, Some(0), "{stdout}");
    let (_, exported, _) = run(&["flow", "export"]);
    assert_eq!(
        serde_json::from_str::<Value>(&exported).unwrap()["nodes"],
        json!([])
    );
    let (code, stdout, _) = run(&["flow", "undo"]);
    assert_eq!((code, stdout.trim()), (Some(1), "Nothing to undo"));
    run(&["flow", "redo"]);
    let (_, again, _) = run(&["flow", "export"]);
    assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), doc);

    let out = bin()
        .args(["--db", db, "--graph", "other", "flow", "export"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no flow graph named other"), "{stderr}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const LABELS: &[&str] = &["Login", "Home", "Settings", "home", "Log in", "Profile"];
    const REFS: &[&str] = &[
        "login", "home", "settings", "Home", "log_in", "profile", "nope",
    ];

    fn arb_call(with_undo: bool) -> impl Strategy<Value = ToolCall> {
        let label = proptest::sample::select(LABELS);
        let r = || proptest::sample::select(REFS);
        let mut options: Vec<BoxedStrategy<ToolCall>> = vec![
            (label.clone(), proptest::option::of(r()))
                .prop_map(|(l, p)| call("addNode", json!({"label": l, "parentNodeId": p})))
                .boxed(),
            r().prop_map(|id| call("deleteNode", json!({"nodeId": id})))
                .boxed(),
            (r(), r())
                .prop_map(|(s, t)| call("addEdge", json!({"sourceNodeId": s, "targetNodeId": t})))
                .boxed(),
            (r(), r())
                .prop_map(|(s, t)| call("deleteEdge", json!({"edgeId": format!("e_{s}_{t}")})))
                .boxed(),
            (r(), label)
                .prop_map(|(id, l)| call("updateNode", json!({"nodeId": id, "label": l})))
                .boxed(),
        ];
        if with_undo {
            options.push(Just(call("undo", json!({}))).boxed());
            options.push(Just(call("redo", json!({}))).boxed());
        }
        proptest::strategy::Union::new(options)
    }

    fn check_integrity(f: &Flow) {
        let mut ids: Vec<&str> = f.nodes.iter().map(|n| n.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), f.nodes.len(), "duplicate node ids");
        let mut eids: Vec<&str> = f.edges.iter().map(|e| e.id.as_str()).collect();
        eids.sort();
        eids.dedup();
        assert_eq!(eids.len(), f.edges.len(), "duplicate edge ids");
        for e in &f.edges {
            assert!(
                f.node(&e.source).is_some() && f.node(&e.target).is_some(),
                "dangling {e:?}"
            );
        }
    }

    fn shared_rows(store: &Store) -> (usize, usize) {
        let n = store
            .read("?[id] := *node{graph: $g, id}", Params::new().with("g", G))
            .unwrap()
            .rows
            .len();
        let e = store
            .read(
                "?[o] := *edge{graph: $g, origin: o}",
                Params::new().with("g", G),
            )
            .unwrap()
            .rows
            .len();
        (n, e)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Whatever the calls, the stored flow is the session's, it stays
        /// well formed, and the shared node/edge rows mirror it.
        #[test]
        fn stored_state_follows_the_session(
            answers in proptest::collection::vec(proptest::collection::vec(arb_call(true), 1..5), 1..8)
        ) {
            let store = Store::memory().unwrap();
            for calls in &answers {
                let mut s = FlowSession::open(&store, G).unwrap();
                s.execute(calls).unwrap();
                let expected = s.flow().clone();
                s.commit().unwrap();
                let f = stored(&store);
                prop_assert_eq!(&f, &expected);
                check_integrity(&f);
                prop_assert_eq!(shared_rows(&store), (f.nodes.len(), f.edges.len()));
            }
        }

        /// Undo walks back through the answers that changed the flow, one
        /// answer per step, and redo walks forward again.
        #[test]
        fn undo_walks_back_answer_by_answer(
            answers in proptest::collection::vec(proptest::collection::vec(arb_call(false), 1..4), 1..7)
        ) {
            let store = Store::memory().unwrap();
            let mut states = vec![Flow::default()];
            for calls in &answers {
                answer(&store, calls);
                let f = stored(&store);
                if &f != states.last().unwrap() {
                    states.push(f);
                }
            }
            for expected in states.iter().rev().skip(1) {
                let done = answer(&store, &[call("undo", json!({}))]);
                prop_assert!(done[0].result.success);
                prop_assert_eq!(&stored(&store), expected);
            }
            let done = answer(&store, &[call("undo", json!({}))]);
            prop_assert_eq!(done[0].result.error.as_deref(), Some("Nothing to undo"));
            for expected in states.iter().skip(1) {
                let done = answer(&store, &[call("redo", json!({}))]);
                prop_assert!(done[0].result.success);
                prop_assert_eq!(&stored(&store), expected);
            }
        }
    }
}

#[test]
fn golden_undo_redo_session() {
    let store = store_with(seed_flow());
    let steps: Vec<(&str, Vec<ToolCall>)> = vec![
        (
            "add Home and Settings",
            vec![
                call("addNode", json!({"label": "Home", "parentNodeId": "login"})),
                call(
                    "addNode",
                    json!({"label": "Settings", "parentNodeId": "Home", "edgeLabel": "gear"}),
                ),
            ],
        ),
        (
            "rename Home",
            vec![call(
                "updateNode",
                json!({"nodeId": "home", "label": "Dashboard"}),
            )],
        ),
        (
            "delete Settings",
            vec![call("deleteNode", json!({"nodeId": "settings"}))],
        ),
        ("undo", vec![call("undo", json!({}))]),
        ("undo", vec![call("undo", json!({}))]),
        ("redo", vec![call("redo", json!({}))]),
        (
            "add Profile, then undo in the same answer",
            vec![
                call(
                    "addNode",
                    json!({"label": "Profile", "parentNodeId": "home"}),
                ),
                call("undo", json!({})),
            ],
        ),
        ("redo", vec![call("redo", json!({}))]),
        ("redo", vec![call("redo", json!({}))]),
        (
            "undo x3",
            vec![
                call("undo", json!({})),
                call("undo", json!({})),
                call("undo", json!({})),
            ],
        ),
        ("undo", vec![call("undo", json!({}))]),
        ("undo", vec![call("undo", json!({}))]),
    ];
    let mut out = String::new();
    for (what, calls) in &steps {
        let done = answer(&store, calls);
        let s = flow::store::load(&store, G).unwrap();
        let nodes: Vec<String> = s
            .flow
            .nodes
            .iter()
            .map(|n| format!("{}:{}", n.id, n.label))
            .collect();
        let edges: Vec<String> = s
            .flow
            .edges
            .iter()
            .map(|e| {
                format!(
                    "{}->{}{}",
                    e.source,
                    e.target,
                    if e.label.is_empty() {
                        String::new()
                    } else {
                        format!("[{}]", e.label)
                    }
                )
            })
            .collect();
        let results: Vec<String> = done
            .iter()
            .map(|e| {
                e.change.clone().unwrap_or_else(|| {
                    format!("failed: {}", e.result.error.clone().unwrap_or_default())
                })
            })
            .collect();
        out.push_str(&format!(
            "{what}\n  calls: {}\n  nodes: {}\n  edges: {}\n  seq: {}\n",
            results.join("; "),
            nodes.join(", "),
            edges.join(", "),
            s.seq.unwrap()
        ));
    }
    assert_golden("flow/undo_redo.txt", &out);
}
