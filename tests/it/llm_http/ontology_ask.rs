//! `graph ask`, the ontology assistant, against the scripted servers of
//! this binary: an OpenAI-compatible one and one answering as the
//! Anthropic Messages API. The model's answers are scripted; everything
//! else — capture, prompt, HTTP, parsing, the operations engine, the
//! change log, the conversation — is the real code, through the library
//! and through the binary.

use std::path::Path;

use graphctx::assistant::{self, prompt, AskOptions as OntoAsk, AskOutcome};
use graphctx::capture::session::{self, SessionUpdate};
use graphctx::capture::Mode;
use graphctx::llm::ProviderKind;
use graphctx::ontology::io::{self as onto_io, Format};
use graphctx::ontology::store::{load_graph, OntoTx};
use graphctx::operations::changelog;
use graphctx::operations::sample::SEED_11;
use graphctx::store::{Batch, Store};
use serde_json::{json, Value};

use super::{answer, bin, client, provider, Reply, Server};

const G: &str = "fleet";

fn cargo_e() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ontology/cargo.e"),
    )
    .unwrap()
}

/// The cargo model of the capture tests (42 nodes), in memory.
fn cargo_store() -> Store {
    let store = Store::memory().unwrap();
    let mut tx = OntoTx::begin(&store, G).unwrap();
    onto_io::import(&mut tx, &cargo_e(), Format::E, false).unwrap();
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    store.apply(batch).unwrap();
    store
}

/// The graph as Format E (with properties), and its seq.
fn snapshot(store: &Store) -> (String, i64) {
    let g = load_graph(store, G).unwrap();
    (onto_io::export(&g, Format::E), g.seq)
}

fn run_ask(
    store: &Store,
    session: &str,
    c: &graphctx::llm::ChatClient,
    request: &str,
    opts: &OntoAsk,
) -> (AskOutcome, Vec<Value>) {
    let mut lines = Vec::new();
    let o = assistant::ask(store, G, session, c, request, opts, &mut |v| {
        lines.push(v.clone())
    })
    .unwrap();
    (o, lines)
}

fn anthropic(text: &str, usage: Value) -> Reply {
    Reply::Json(
        200,
        json!({
            "id": "msg_test", "type": "message", "role": "assistant", "model": "scripted",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": usage,
        })
        .to_string(),
    )
}

/// UUIDs numbered in order of first appearance, timestamps blanked.
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
                match k.as_str() {
                    "timestamp" => *x = json!("<timestamp>"),
                    "elapsedMs" => *x = json!(0),
                    _ => walk(x, seen),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| walk(x, seen)),
        Value::String(s) if uuid_like(s) => {
            let i = seen.iter().position(|u| u == s).unwrap_or_else(|| {
                seen.push(s.clone());
                seen.len() - 1
            });
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

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/assistant")
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

/// The binary in `dir` with a clean LLM environment plus `env`.
fn graphctx(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = bin();
    cmd.current_dir(dir)
        .env("HOME", dir)
        .env_remove("GRAPHCTX_LLM_CONFIG")
        .env_remove("GRAPHCTX_LLM_BASE_URL")
        .env_remove("GRAPHCTX_LLM_MODEL")
        .env_remove("GRAPHCTX_LLM_API_KEY")
        .env_remove("GRAPHCTX_LLM_KIND")
        .env_remove("GRAPHCTX_LLM_TIMEOUT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The second answer of the seed example: a function under the use case
/// the first answer created, named by semantic IDs (one proposed by the
/// create itself), and an actor and a flow by tempIds.
const PAYMENT: &str = r#"{
  "response": "I added ProcessPayment under PlaceOrder; the customer's payment data flows into it.",
  "operations": [
    {"id": "op-1", "type": "create", "nodeType": "FUNC",
     "data": {"semanticId": "ProcessPayment.FN.001", "Name": "ProcessPayment", "Descr": "Process customer payment"}},
    {"id": "op-2", "type": "create-relationship", "relType": "compose",
     "sourceSemanticId": "PlaceOrder.UC.001", "targetSemanticId": "ProcessPayment.FN.001"},
    {"id": "op-3", "type": "create", "nodeType": "ACTOR", "tempId": "temp-customer",
     "data": {"Name": "Customer", "Descr": "Customer placing orders"}},
    {"id": "op-4", "type": "create", "nodeType": "FLOW", "tempId": "temp-payment-data",
     "data": {"Name": "PaymentData", "Descr": "Card or account data"}},
    {"id": "op-5", "type": "create-relationship", "relType": "io",
     "sourceTempId": "temp-customer", "targetTempId": "temp-payment-data"},
    {"id": "op-6", "type": "create-relationship", "relType": "io",
     "sourceTempId": "temp-payment-data", "targetSemanticId": "ProcessPayment.FN.001"}
  ]
}"#;

#[test]
fn seed_example_end_to_end_with_golden_view_updates_and_undo() {
    let server = Server::start(vec![answer(SEED_11), answer(PAYMENT)]);
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("GRAPHCTX_LLM_BASE_URL", server.url.as_str()),
        ("GRAPHCTX_LLM_MODEL", "local-model"),
    ];
    let db = dir.path().join("g.db");
    let db = db.to_str().unwrap();
    let ask = |request: &str| {
        graphctx(
            dir.path(),
            &env,
            &[
                "--db",
                db,
                "--graph",
                "orders",
                "graph",
                "ask",
                "--session",
                "s1",
                request,
            ],
        )
    };
    // An empty canvas: the graph does not exist yet.
    let (code, first, stderr) =
        ask("Ich möchte ein Bestellsystem mit dem Use Case 'Bestellung aufgeben' erstellen");
    assert_eq!(code, Some(0), "{first}{stderr}");
    assert!(stderr.contains("mode FULL (default)"), "{stderr}");
    let export = |dir: &Path| {
        graphctx(
            dir,
            &[],
            &[
                "--db", db, "--graph", "orders", "graph", "export", "--format", "e",
            ],
        )
        .1
    };
    let after_first = export(dir.path());
    assert!(
        after_first.contains("OrderSystem -cp-> PlaceOrder"),
        "{after_first}"
    );

    let (code, second, stderr) =
        ask("Add a payment function under PlaceOrder, fed by the customer");
    assert_eq!(code, Some(0), "{second}{stderr}");
    golden(
        "seed_example.jsonl",
        &normalise(&format!("{first}{second}")),
    );

    // The second request carried the captured graph and the first exchange.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let m = reqs[1].messages();
    assert_eq!(m[0].role, "system");
    assert!(m[0].content.contains("## Answer format"));
    assert_eq!(m[1].role, "system");
    assert!(m[1]
        .content
        .starts_with("## Current Graph Context (FULL capture)"));
    assert!(m[1]
        .content
        .contains("PlaceOrder|UC|PlaceOrder.UC.001|Customer places an order"));
    assert!(m[1].content.contains("OrderSystem -cp-> PlaceOrder"));
    assert_eq!(m[2].role, "user");
    assert!(m[2].content.contains("Bestellsystem"));
    assert_eq!(
        (m[3].role.as_str(), m[3].content.as_str()),
        ("assistant", SEED_11)
    );
    assert!(m[4]
        .content
        .ends_with("Add a payment function under PlaceOrder, fed by the customer"));
    assert_eq!(m.len(), 5);

    let after_second = export(dir.path());
    for line in [
        "ProcessPayment|FUNC|ProcessPayment.FN.001|Process customer payment",
        "PlaceOrder -cp-> ProcessPayment",
        "Customer -io-> PaymentData",
        "PaymentData -io-> ProcessPayment",
    ] {
        assert!(
            after_second.contains(line),
            "{line} missing:\n{after_second}"
        );
    }

    // `graphctx undo` reverts the last applied answer, exactly.
    let (code, out, err) = graphctx(dir.path(), &[], &["--db", db, "--graph", "orders", "undo"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(export(dir.path()), after_first);

    // The conversation of the session holds both exchanges.
    let (code, out, _) = graphctx(
        dir.path(),
        &[],
        &[
            "--db",
            db,
            "--graph",
            "orders",
            "graph",
            "history",
            "--session",
            "s1",
            "--json",
        ],
    );
    assert_eq!(code, Some(0));
    let h: Vec<Value> = serde_json::from_str(&out).unwrap();
    let roles: Vec<&str> = h.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(h[1]["result"]["status"], "applied");
    assert_eq!(h[3]["result"]["entry"], 2);
}

#[test]
fn a_missing_dependency_is_fixed_by_the_answer_after_its_feedback() {
    let wrong = r#"{"response": "Added refunds.", "operations": [
        {"id": "op-1", "type": "create", "nodeType": "FUNC", "tempId": "temp-refund",
         "data": {"Name": "ProcessRefund", "Descr": "Pay back returned goods"}},
        {"id": "op-2", "type": "create-relationship", "relType": "compose",
         "sourceSemanticId": "HandleReturn.UC.007", "targetTempId": "temp-refund"}]}"#;
    let fixed = wrong.replace("HandleReturn.UC.007", "HandleReturns.UC.007");
    let server = Server::start(vec![answer(wrong), answer(&fixed)]);
    let store = cargo_store();
    let before = snapshot(&store);
    let c = client(vec![provider("local", &server)]);
    let (o, lines) = run_ask(
        &store,
        "s",
        &c,
        "Add a refund function to HandleReturns",
        &OntoAsk::default(),
    );
    assert!(o.success, "{}", serde_json::to_string_pretty(&o).unwrap());
    assert_eq!((o.iterations, o.status), (2, "applied"));
    let first = &o.answers[0];
    assert_eq!(first.status, "rejected");
    let err = first.error.as_ref().unwrap();
    assert_eq!(err["error"], "MissingDependencyError");
    let feedback = err["llmFeedback"].as_str().unwrap();
    assert!(feedback.contains("`HandleReturn.UC.007`"), "{feedback}");

    // The retry carried the rejected answer and its feedback.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let m = reqs[1].messages();
    let n = m.len();
    assert_eq!(
        (m[n - 2].role.as_str(), m[n - 2].content.as_str()),
        ("assistant", wrong)
    );
    assert_eq!(m[n - 1].content, prompt::feedback(err));
    assert!(m[n - 1].content.starts_with(feedback));

    // Reports in order: context, the rejection, the views, the success.
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| match (l["event"].as_str(), l["view"].as_str()) {
            (Some(e), _) => format!("{e}:{}", l["status"].as_str().unwrap_or("")),
            (_, Some(v)) => v.to_string(),
            _ => "?".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "context:",
            "iteration:rejected",
            "chat",
            "text",
            "graph",
            "graph",
            "iteration:applied"
        ]
    );

    let (after, seq) = snapshot(&store);
    assert_eq!(seq, before.1 + 1, "one applied answer, one seq step");
    assert!(
        // Format E groups the targets of one source and relationship.
        after.lines().any(|l| l
            .strip_prefix("HandleReturns -cp-> ")
            .is_some_and(|ts| ts.split(", ").any(|t| t == "ProcessRefund"))),
        "{after}"
    );
}

#[test]
fn bad_answers_change_nothing_and_the_loop_stops_at_the_limit() {
    let prose = "I have added a payment function for you.";
    let malformed = r#"{"response": "x", "operations": [{"id": "op-1", "type": "create""#;
    let unknown_type = r#"{"response": "Added a widget.", "operations": [
        {"id": "op-1", "type": "create", "nodeType": "WIDGET", "tempId": "t-w", "data": {"Name": "Widget"}}]}"#;
    let never_asked = r#"{"response": "ok", "operations": []}"#;
    let server = Server::start(vec![
        answer(prose),
        answer(malformed),
        answer(unknown_type),
        answer(never_asked),
    ]);
    let store = cargo_store();
    let before = snapshot(&store);
    let c = client(vec![provider("local", &server)]);
    let (o, _) = run_ask(
        &store,
        "s",
        &c,
        "Add a payment function",
        &OntoAsk::default(),
    );
    assert!(!o.success);
    assert_eq!((o.iterations, o.status), (3, "rejected"));
    assert_eq!(server.requests().len(), 3, "the limit is three answers");
    let errors: Vec<&Value> = o
        .answers
        .iter()
        .map(|a| a.error.as_ref().unwrap())
        .collect();
    assert_eq!(errors[0]["error"], "InvalidResponseError");
    assert!(errors[0]["message"].as_str().unwrap().contains("prose"));
    assert_eq!(errors[1]["error"], "InvalidResponseError");
    assert!(errors[1]["message"]
        .as_str()
        .unwrap()
        .contains("not valid JSON"));
    assert!(
        errors[2]["llmFeedback"]
            .as_str()
            .unwrap()
            .contains("WIDGET"),
        "{}",
        errors[2]
    );
    for e in &errors {
        assert!(e["llmFeedback"]
            .as_str()
            .is_some_and(|f| f.starts_with("❌ Error")));
    }
    assert_eq!(
        snapshot(&store),
        before,
        "a rejected answer changed the graph"
    );

    // A semantic ID that does not exist, with one iteration allowed.
    let ghost = r#"{"response": "Updated.", "operations": [
        {"id": "op-1", "type": "update", "semanticId": "Ghost.FN.099", "data": {"Descr": "x"}}]}"#;
    let server = Server::start(vec![answer(ghost), answer(never_asked)]);
    let c = client(vec![provider("local", &server)]);
    let opts = OntoAsk {
        max_iterations: 1,
        ..OntoAsk::default()
    };
    let (o, _) = run_ask(&store, "s", &c, "Describe Ghost better", &opts);
    assert!(!o.success);
    assert_eq!(o.iterations, 1);
    assert_eq!(server.requests().len(), 1);
    let e = o.answers[0].error.as_ref().unwrap();
    assert_eq!(e["error"], "MissingDependencyError", "{e}");
    assert!(e["llmFeedback"].as_str().unwrap().contains("Ghost.FN.099"));
    assert_eq!(snapshot(&store), before);

    // A dependency cycle, then the answer without it.
    let cyclic = r#"{"response": "Linked.", "operations": [
        {"id": "op-1", "type": "create", "nodeType": "REQ", "tempId": "t-a", "data": {"Name": "A"}, "dependsOn": ["op-2"]},
        {"id": "op-2", "type": "create", "nodeType": "REQ", "tempId": "t-b", "data": {"Name": "B"}, "dependsOn": ["op-1"]}]}"#;
    let fixed = cyclic.replace(r#", "dependsOn": ["op-2"]"#, "");
    let server = Server::start(vec![answer(cyclic), answer(&fixed)]);
    let c = client(vec![provider("local", &server)]);
    let (o, _) = run_ask(
        &store,
        "s",
        &c,
        "Add requirements A and B",
        &OntoAsk::default(),
    );
    assert_eq!((o.success, o.iterations), (true, 2));
    let e = o.answers[0].error.as_ref().unwrap();
    assert_eq!(e["error"], "CyclicDependencyError", "{e}");
    assert_eq!(e["cycles"][0], json!(["op-1", "op-2", "op-1"]));
    let m = server.requests()[1].messages();
    assert!(m.last().unwrap().content.contains("cyclic dependency"));
}

#[test]
fn anthropic_request_layout_caching_and_usage() {
    const KEY: &str = "sk-ant-test-key-5566778899";
    let usage_write = json!({"input_tokens": 31, "output_tokens": 40,
        "cache_creation_input_tokens": 1800, "cache_read_input_tokens": 0});
    let usage_read = json!({"input_tokens": 35, "output_tokens": 90,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1800});
    let tests = r#"{"response": "Added a test for ValidateOrder's requirement.", "operations": [
        {"id": "op-1", "type": "create", "nodeType": "TEST", "tempId": "temp-test",
         "data": {"Name": "ValidateOrderTest", "Descr": "Orders without address are rejected"}},
        {"id": "op-2", "type": "create-relationship", "relType": "verify",
         "sourceSemanticId": "OrderCompleteness.RQ.003", "targetTempId": "temp-test"}]}"#;
    let server = Server::start(vec![
        anthropic(
            r#"{"response": "It checks an order for completeness.", "operations": []}"#,
            usage_write,
        ),
        anthropic(tests, usage_read),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.db");
    let db = db.to_str().unwrap();
    let model = dir.path().join("cargo.e");
    std::fs::write(&model, cargo_e()).unwrap();
    let env = [
        ("GRAPHCTX_LLM_BASE_URL", server.url.as_str()),
        ("GRAPHCTX_LLM_MODEL", "claude-scripted"),
        ("GRAPHCTX_LLM_KIND", "anthropic"),
        ("GRAPHCTX_LLM_API_KEY", KEY),
    ];
    let run = |args: &[&str]| {
        let mut all = vec!["--db", db, "--graph", G];
        all.extend_from_slice(args);
        graphctx(dir.path(), &env, &all)
    };
    let (code, out, err) = run(&["graph", "import", model.to_str().unwrap(), "--format", "e"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, out, err) = run(&[
        "session",
        "set",
        "--session",
        "s",
        "--select",
        "ValidateOrder.FN.003",
    ]);
    assert_eq!(code, Some(0), "{out}{err}");

    let (code, out1, err1) = run(&[
        "graph",
        "ask",
        "--session",
        "s",
        "What does this function check?",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{out1}{err1}");
    // A zoom change between the requests does not touch the SELECTED capture.
    assert_eq!(
        run(&["session", "set", "--session", "s", "--zoom", "0.5"]).0,
        Some(0)
    );
    let (code, out2, err2) = run(&[
        "graph",
        "ask",
        "--session",
        "s",
        "Add tests for the selected function",
        "--json",
        "--stats",
    ]);
    assert_eq!(code, Some(0), "{out2}{err2}");
    for text in [&out1, &err1, &out2, &err2] {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.api_key.as_deref(), Some(KEY));
        assert_eq!(r.authorization, None);
        assert_eq!(r.anthropic_version.as_deref(), Some("2023-06-01"));
        assert_eq!(r.body["model"], "claude-scripted");
        assert!(r.body["max_tokens"].as_u64().is_some());
        let system = r.body["system"].as_array().unwrap();
        assert_eq!(system.len(), 2);
        for block in system {
            assert_eq!(block["type"], "text");
            assert_eq!(block["cache_control"], json!({"type": "ephemeral"}));
        }
        assert!(system[0]["text"]
            .as_str()
            .unwrap()
            .contains("## Semantic IDs"));
        let context = system[1]["text"].as_str().unwrap();
        assert!(
            context.starts_with("## Current Graph Context (SELECTED capture)"),
            "{context}"
        );
        assert!(context
            .contains("ValidateOrder|FUNC|ValidateOrder.FN.003|Checks an order for completeness"));
        assert!(context.contains("ValidateOrder -st-> OrderCompleteness.RQ.003"));
        assert!(
            !context.contains("CargoManagement|SYS"),
            "only the selection: {context}"
        );
        assert!(r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["role"] != "system"));
    }
    // The cacheable blocks are byte-identical across the two requests.
    assert_eq!(reqs[0].body["system"], reqs[1].body["system"]);
    let last = reqs[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let last = last["content"].as_str().unwrap();
    assert!(
        last.starts_with("[Canvas] Selected: ValidateOrder (ValidateOrder.FN.003)"),
        "{last}"
    );
    assert!(last.contains("Zoom: 50%"));
    assert!(last.ends_with("Add tests for the selected function"));

    let lines1 = json_lines(&out1);
    assert_eq!(lines1[0]["event"], "context");
    assert_eq!(
        lines1[0]["mode"],
        json!({"requested": "auto", "mode": "SELECTED", "rule": "selection"})
    );
    assert_eq!(lines1[0]["capture"]["cached"], false);
    let it = lines1.iter().find(|l| l["event"] == "iteration").unwrap();
    assert_eq!(it["status"], "answered");
    assert_eq!(it["usage"]["cacheCreationInputTokens"], 1800);

    let lines2 = json_lines(&out2);
    assert_eq!(lines2[0]["capture"]["cached"], true, "{}", lines2[0]);
    let t = &lines2[0]["tokens"];
    assert_eq!(
        t["cacheable"].as_u64().unwrap(),
        t["rules"].as_u64().unwrap() + t["context"].as_u64().unwrap()
    );
    assert!(
        t["history"].as_u64().unwrap() > 0,
        "the first exchange is history: {t}"
    );
    let stats = lines2.iter().find(|l| l.get("stats").is_some()).unwrap();
    let cache = &stats["stats"]["captureCache"][0];
    assert_eq!(
        (cache["hits"].as_i64(), cache["misses"].as_i64()),
        (Some(1), Some(1))
    );
    assert_eq!(cache["hitRate"], 0.5);
    let outcome = &lines2.last().unwrap()["outcome"];
    assert_eq!(outcome["status"], "applied");
    assert_eq!(outcome["usage"]["cacheReadInputTokens"], 1800);
    assert_eq!(outcome["mode"]["mode"], "SELECTED");
    // The view updates are on stdout between the reports.
    assert!(lines2.iter().any(|l| l["view"] == "graph"));
}

#[test]
fn failover_to_the_next_provider_and_outages_leave_the_graph_alone() {
    const KEY: &str = "sk-failover-secret-112233";
    let primary = Server::start(vec![Reply::Json(
        500,
        format!(r#"{{"error":{{"message":"internal error for key {KEY}"}}}}"#),
    )]);
    let backup = Server::start(vec![anthropic(
        r#"{"response": "Added.", "operations": [
            {"id": "op-1", "type": "create", "nodeType": "REQ", "tempId": "t",
             "data": {"Name": "Uptime", "Descr": "99.9 % availability"}}]}"#,
        json!({"input_tokens": 10, "output_tokens": 5}),
    )]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("llm.toml");
    std::fs::write(
        &config,
        format!(
            "[[provider]]\nname = \"primary\"\nbase_url = \"{}\"\nmodel = \"m1\"\napi_key_env = \"PRIMARY_KEY\"\ntimeout_secs = 5\n\n\
             [[provider]]\nname = \"backup\"\nkind = \"anthropic\"\nbase_url = \"{}\"\nmodel = \"m2\"\napi_key_env = \"PRIMARY_KEY\"\ntimeout_secs = 5\n",
            primary.url, backup.url
        ),
    )
    .unwrap();
    let db = dir.path().join("g.db");
    let db = db.to_str().unwrap();
    let model = dir.path().join("cargo.e");
    std::fs::write(&model, cargo_e()).unwrap();
    let cfg = config.to_str().unwrap();
    let env = [("GRAPHCTX_LLM_CONFIG", cfg), ("PRIMARY_KEY", KEY)];
    let run = |env: &[(&str, &str)], args: &[&str]| {
        let mut all = vec!["--db", db, "--graph", G];
        all.extend_from_slice(args);
        graphctx(dir.path(), env, &all)
    };
    assert_eq!(
        run(
            &env,
            &["graph", "import", model.to_str().unwrap(), "--format", "e"]
        )
        .0,
        Some(0)
    );
    let (code, out, err) = run(
        &env,
        &[
            "graph",
            "ask",
            "--session",
            "s",
            "Add an uptime requirement",
            "--json",
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        !out.contains(KEY) && !err.contains(KEY),
        "the key leaked:\n{out}\n{err}"
    );
    let lines = json_lines(&out);
    let it = lines.iter().find(|l| l["event"] == "iteration").unwrap();
    assert_eq!(it["provider"], "backup");
    assert_eq!(it["failovers"][0]["provider"], "primary");
    assert_eq!(
        it["failovers"][0]["error"],
        "HTTP 500: internal error for key ***"
    );
    assert_eq!(
        primary.requests()[0].authorization,
        Some(format!("Bearer {KEY}"))
    );
    assert_eq!(backup.requests()[0].api_key.as_deref(), Some(KEY));

    // Every provider down (one hangs past its timeout, one answers 500):
    // each iteration is reported, retried, and the graph stays as it was.
    let export = || run(&[], &["graph", "export", "--format", "e"]).1;
    let before = export();
    let hang = Server::start(vec![Reply::Hang, Reply::Hang]);
    let down = Server::start(vec![
        Reply::Json(500, r#"{"error":{"message":"overloaded"}}"#.into()),
        Reply::Json(500, r#"{"error":{"message":"overloaded"}}"#.into()),
    ]);
    std::fs::write(
        &config,
        format!(
            "[[provider]]\nname = \"slow\"\nbase_url = \"{}\"\nmodel = \"m1\"\ntimeout_secs = 1\n\n\
             [[provider]]\nname = \"down\"\nbase_url = \"{}\"\nmodel = \"m2\"\ntimeout_secs = 5\n",
            hang.url, down.url
        ),
    )
    .unwrap();
    let (code, out, err) = run(
        &env,
        &[
            "graph",
            "ask",
            "--session",
            "s",
            "Add a latency requirement",
            "--max-iterations",
            "2",
        ],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.is_empty(), "no view updates: {out}");
    assert_eq!(err.matches("provider_failed").count(), 2, "{err}");
    assert!(
        err.contains("provider slow failed (timed out after 1 s)"),
        "{err}"
    );
    assert!(
        err.contains("provider down failed (HTTP 500: overloaded)"),
        "{err}"
    );
    assert!(err.contains("no answer accepted after 2 answers"), "{err}");
    assert!(!hang.requests().is_empty());
    assert_eq!(down.requests().len(), 2);
    assert_eq!(export(), before);
}

#[test]
fn history_window_sessions_capture_cache_and_undo() {
    let req = |i: usize| {
        format!(
            r#"{{"response": "Added Req{i}.", "operations": [
                {{"id": "op-1", "type": "create", "nodeType": "REQ", "tempId": "t",
                  "data": {{"Name": "Req{i}", "Descr": "Requirement {i}"}}}}]}}"#
        )
    };
    let mut replies: Vec<Reply> = (1..=7).map(|i| answer(&req(i))).collect();
    let chat = r#"{"response": "Seven requirements so far.", "operations": []}"#;
    replies.push(answer(chat));
    replies.push(answer(chat)); // session b
    replies.push(answer(chat)); // session a, after a selection change
    let server = Server::start(replies);
    let store = cargo_store();
    let c = client(vec![provider("local", &server)]);
    let opts = OntoAsk::default();
    let mut snapshots = vec![snapshot(&store)];
    let mut entries = Vec::new();
    for i in 1..=7 {
        let (o, _) = run_ask(
            &store,
            "a",
            &c,
            &format!("Add requirement number {i}"),
            &opts,
        );
        assert_eq!(o.status, "applied");
        assert_eq!(o.mode.mode, Mode::Full);
        assert!(!o.capture.cached, "every answer changed the graph");
        entries.push(o.summary.unwrap().entry.unwrap());
        snapshots.push(snapshot(&store));
    }
    let (o, _) = run_ask(&store, "a", &c, "List the requirements", &opts);
    assert_eq!((o.status, o.mode.mode), ("answered", Mode::Full));
    let reqs = server.requests();
    let m = reqs[7].messages();
    // Two system blocks, six pairs, the request.
    assert_eq!(m.len(), 2 + 12 + 1);
    assert!(
        m[2].content.ends_with("Add requirement number 2"),
        "{}",
        m[2].content
    );
    assert_eq!(m[3].content, req(2));
    assert!(m[13].content == req(7));
    assert!(m[14].content.ends_with("List the requirements"));

    // Another session on the same graph has a conversation of its own.
    let (o, _) = run_ask(&store, "b", &c, "Add a requirement", &opts);
    assert!(o.session_created);
    assert_eq!(server.requests()[8].messages().len(), 3);

    // Selection and viewport changes do not invalidate the FULL capture.
    let g = load_graph(&store, G).unwrap();
    session::update(
        &store,
        &g,
        "a",
        SessionUpdate {
            zoom: Some(2.0),
            center: Some((10.0, -4.0)),
            select_nodes: Some(vec!["Req3.RQ.014".into()]),
            ..SessionUpdate::default()
        },
    )
    .unwrap();
    let (o, _) = run_ask(&store, "a", &c, "Add a requirement", &opts);
    assert_eq!(o.mode.mode, Mode::Full);
    assert!(
        o.capture.cached,
        "FULL was invalidated by a selection change"
    );
    let stats = graphctx::capture::stats(&store, G, Some("a")).unwrap();
    assert_eq!((stats[0].hits, stats[0].misses), (1, 8));

    // Undo reverts the last applied answer, then the one before.
    let undone = changelog::undo(&store, G).unwrap();
    assert_eq!(undone.entry, entries[6]);
    assert_eq!(snapshot(&store).0, snapshots[6].0);
    changelog::undo(&store, G).unwrap();
    assert_eq!(snapshot(&store).0, snapshots[5].0);
    // The conversation is not undone.
    let h = assistant::history::newest(&store, G, "a", 100).unwrap();
    assert_eq!(h.len(), 2 * 9);
}

#[test]
fn provider_kind_from_config_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("llm.toml");
    std::fs::write(
        &f,
        "[[provider]]\nname = \"claude\"\nkind = \"anthropic\"\nbase_url = \"https://api.anthropic.com/v1\"\nmodel = \"claude-sonnet-4\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n",
    )
    .unwrap();
    let p = f.to_str().unwrap().to_string();
    let env = move |k: &str| (k == "GRAPHCTX_LLM_CONFIG").then(|| p.clone());
    let c = graphctx::llm::LlmConfig::load(dir.path(), &env).unwrap();
    assert_eq!(c.providers[0].kind, ProviderKind::Anthropic);
    std::fs::write(
        &f,
        "[[provider]]\nname = \"x\"\nkind = \"gemini\"\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let err = graphctx::llm::LlmConfig::load(dir.path(), &env).unwrap_err();
    assert!(
        err.to_string().contains("kind must be openai or anthropic"),
        "{err}"
    );
    let bad = |k: &str| match k {
        "GRAPHCTX_LLM_BASE_URL" => Some("http://h/v1".to_string()),
        "GRAPHCTX_LLM_MODEL" => Some("m".to_string()),
        "GRAPHCTX_LLM_KIND" => Some("bogus".to_string()),
        _ => None,
    };
    assert!(graphctx::llm::LlmConfig::load(dir.path(), &bad)
        .unwrap_err()
        .to_string()
        .contains("GRAPHCTX_LLM_KIND"));
}

#[test]
fn mcp_tool_ontology_ask_applies_and_reports() {
    use graphctx::serve::tools;
    use graphctx::serve::Workspace;
    let server = Server::start(vec![answer(
        r#"{"response": "Added ProcessRefund under HandleReturns.", "operations": [
            {"id": "op-1", "type": "create", "nodeType": "FUNC", "tempId": "temp-refund",
             "data": {"Name": "ProcessRefund", "Descr": "Pay back returned goods"}},
            {"id": "op-2", "type": "create-relationship", "relType": "cp",
             "sourceSemanticId": "HandleReturns.UC.007", "targetTempId": "temp-refund"}]}"#,
    )]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join(".graphctx");
    std::fs::create_dir_all(&cfg).unwrap();
    std::fs::write(
        cfg.join("llm.toml"),
        format!(
            "[[provider]]\nname = \"local\"\nbase_url = \"{}\"\nmodel = \"m\"\ntimeout_secs = 5\n",
            server.url
        ),
    )
    .unwrap();
    let ws = Workspace::open(dir.path(), None, "code").unwrap();
    let mut tx = OntoTx::begin(ws.store(), G).unwrap();
    onto_io::import(&mut tx, &cargo_e(), Format::E, false).unwrap();
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    ws.store().apply(batch).unwrap();

    let call = |args: Value| {
        let args: serde_json::Map<String, Value> = serde_json::from_value(args).unwrap();
        tools::call(
            &ws,
            &graphctx::serve::registry::all(),
            "ontology_ask",
            &args,
        )
        .expect("tool exists")
    };
    let r = call(
        json!({"graph": G, "session": "agent", "request": "Add a refund function to HandleReturns"}),
    );
    assert!(!r.is_error, "{}", r.text);
    let v: Value = serde_json::from_str(&r.text).unwrap();
    assert_eq!(v["outcome"]["status"], "applied");
    assert_eq!(v["outcome"]["mode"]["mode"], "FULL");
    assert_eq!(
        v["outcome"]["summary"]["created"][0]["semanticId"],
        "ProcessRefund.FN.016"
    );
    let views: Vec<&str> = v["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["view"].as_str().unwrap())
        .collect();
    assert_eq!(views, ["chat", "text", "graph", "graph"]);

    let r = call(json!({"graph": G, "session": "agent"}));
    assert!(r.is_error);
    assert!(
        r.text.contains("missing required argument 'request'"),
        "{}",
        r.text
    );
    let r = call(json!({"graph": G, "session": "agent", "request": "x", "mode": "sideways"}));
    assert!(r.is_error);
    assert!(r.text.contains("unknown capture mode"), "{}", r.text);
}

#[test]
fn requests_that_cannot_run_fail_before_the_model_is_asked() {
    let server = Server::start(vec![]);
    let store = cargo_store();
    let before = snapshot(&store);
    let c = client(vec![provider("local", &server)]);
    let ask = |session: &str, request: &str, user: Option<&str>| {
        let opts = OntoAsk {
            user: user.map(str::to_string),
            ..OntoAsk::default()
        };
        assistant::ask(&store, G, session, &c, request, &opts, &mut |_| {}).unwrap_err()
    };
    let e = ask("s", "   ", None);
    assert!(e.to_string().contains("the request is empty"), "{e}");
    // A stranger asking in a new session: denied, and no session is left behind.
    let e = ask("new", "Add a requirement", Some("mallory"));
    assert!(e.to_string().contains("access denied"), "{e}");
    assert!(session::load(&store, G, "new").unwrap().is_none());
    // A graph that is not an ontology graph.
    let flow_store = Store::memory().unwrap();
    graphctx::flow::import(&flow_store, "app", super::login_flow(), None).unwrap();
    let e = assistant::ask(
        &flow_store,
        "app",
        "s",
        &c,
        "Add X",
        &OntoAsk::default(),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("not an ontology graph"), "{e}");
    assert!(server.requests().is_empty());
    assert_eq!(snapshot(&store), before);
}
