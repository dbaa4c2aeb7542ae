//! The LLM client and the ask loop over real HTTP: a small HTTP/1.1 server
//! on 127.0.0.1, started by each test, replays scripted answers and records
//! the requests it got. No mocks inside the client.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use graphctx::flow::ask::{ask, AskOptions};
use graphctx::flow::model::{Flow, FlowNode, Position};
use graphctx::flow::{self, history};
use graphctx::llm::{ChatClient, ChatMessage, KeySource, LlmConfig, LlmError, Provider, Secret};
use graphctx::store::Store;
use serde_json::{json, Value};

/// `graph ask`, the ontology assistant, against these servers.
#[path = "llm_http/ontology_ask.rs"]
mod ontology_ask;

// ---------------------------------------------------------------- server

/// What the server does with one request.
enum Reply {
    /// Status and JSON body.
    Json(u16, String),
    /// A chat completion whose message content is this text.
    Answer(String),
    /// A chat completion with native tool calls `(name, arguments)`.
    Tools(Vec<(&'static str, String)>),
    /// Read the request, then say nothing until the client gives up
    /// (bounded: at most 10 s, or until the server stops).
    Hang,
    /// Read the request and close the connection without an answer.
    Close,
}

fn answer(text: &str) -> Reply {
    Reply::Answer(text.to_string())
}

/// A recorded request.
#[derive(Debug, Clone)]
struct Recorded {
    path: String,
    authorization: Option<String>,
    /// `x-api-key` and `anthropic-version` (Anthropic Messages requests).
    api_key: Option<String>,
    anthropic_version: Option<String>,
    body: Value,
}

impl Recorded {
    fn messages(&self) -> Vec<ChatMessage> {
        serde_json::from_value(self.body["messages"].clone()).unwrap()
    }
}

struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    port: u16,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (req2, stop2) = (requests.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut replies: VecDeque<Reply> = replies.into();
            for stream in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                let Some(rec) = read_request(&mut stream) else {
                    continue;
                };
                req2.lock().unwrap().push(rec);
                let reply = replies.pop_front().unwrap_or(Reply::Json(
                    500,
                    r#"{"error":{"message":"no scripted reply left"}}"#.into(),
                ));
                respond(&mut stream, reply, &stop2);
            }
        });
        Server {
            url: format!("http://127.0.0.1:{port}/v1"),
            requests,
            stop,
            port,
            thread: Some(thread),
        }
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let mut length = 0usize;
    let mut authorization = None;
    let mut api_key = None;
    let mut anthropic_version = None;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            "x-api-key" => api_key = Some(value.trim().to_string()),
            "anthropic-version" => anthropic_version = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded {
        path,
        authorization,
        api_key,
        anthropic_version,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

fn completion(message: Value) -> String {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]
    })
    .to_string()
}

fn respond(stream: &mut TcpStream, reply: Reply, stop: &AtomicBool) {
    let (status, body) = match reply {
        Reply::Json(s, b) => (s, b),
        Reply::Answer(text) => (
            200,
            completion(json!({"role": "assistant", "content": text})),
        ),
        Reply::Tools(calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": args}})
                })
                .collect();
            (
                200,
                completion(json!({"role": "assistant", "content": null, "tool_calls": calls})),
            )
        }
        Reply::Hang => {
            let start = Instant::now();
            while !stop.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        Reply::Close => return,
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.flush();
}

// ---------------------------------------------------------------- helpers

fn provider(name: &str, server: &Server) -> Provider {
    let mut p = Provider::new(name, &server.url, "scripted-model");
    p.timeout = Duration::from_secs(2);
    p
}

fn client(providers: Vec<Provider>) -> ChatClient {
    ChatClient::with_env(
        LlmConfig {
            providers,
            source: None,
        },
        |_| None,
    )
}

fn login_flow() -> Flow {
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

fn store_with_login(graph: &str) -> Store {
    let store = Store::memory().unwrap();
    flow::import(&store, graph, login_flow(), None).unwrap();
    store
}

fn tool_answer(thinking: &str, calls: Value) -> String {
    format!("<thinking>{thinking}</thinking>\n<response>\n{calls}\n</response>")
}

fn last_user(r: &Recorded) -> String {
    r.messages().last().unwrap().content.clone()
}

// ---------------------------------------------------------------- client

#[test]
fn failover_on_server_error_timeout_closed_connection_and_refusal() {
    let hi = [ChatMessage::user("hi")];
    // 500, then a working backup.
    let primary = Server::start(vec![Reply::Json(
        500,
        r#"{"error":{"message":"overloaded"}}"#.into(),
    )]);
    let backup = Server::start(vec![answer("hello")]);
    let c = client(vec![
        provider("primary", &primary),
        provider("backup", &backup),
    ]);
    let reply = c.chat(&hi, None).unwrap();
    assert_eq!(
        (reply.provider.as_str(), reply.content.as_str()),
        ("backup", "hello")
    );
    assert_eq!(reply.failures.len(), 1);
    assert_eq!(reply.failures[0].provider, "primary");
    assert_eq!(reply.failures[0].error, "HTTP 500: overloaded");
    assert_eq!(primary.requests().len(), 1);
    assert_eq!(backup.requests()[0].path, "/v1/chat/completions");
    assert_eq!(backup.requests()[0].body["model"], "scripted-model");
    assert_eq!(backup.requests()[0].body["messages"][0]["content"], "hi");

    // A primary that hangs past its timeout.
    let primary = Server::start(vec![Reply::Hang]);
    let backup = Server::start(vec![answer("late but here")]);
    let mut slow = provider("primary", &primary);
    slow.timeout = Duration::from_millis(500);
    let reply = client(vec![slow, provider("backup", &backup)])
        .chat(&hi, None)
        .unwrap();
    assert_eq!(reply.provider, "backup");
    assert!(
        reply.failures[0].error.contains("timed out"),
        "{:?}",
        reply.failures
    );

    // A primary that closes the connection without an answer.
    let primary = Server::start(vec![Reply::Close]);
    let backup = Server::start(vec![answer("ok")]);
    let reply = client(vec![
        provider("primary", &primary),
        provider("backup", &backup),
    ])
    .chat(&hi, None)
    .unwrap();
    assert_eq!(reply.provider, "backup");
    assert_eq!(reply.failures.len(), 1);

    // Nobody listening, and a body that is not a chat completion.
    let refused_port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let garbage = Server::start(vec![Reply::Json(200, "<html>gateway</html>".into())]);
    let backup = Server::start(vec![answer("third time")]);
    let dead = Provider::new("dead", &format!("http://127.0.0.1:{refused_port}/v1"), "m");
    let reply = client(vec![
        dead,
        provider("garbage", &garbage),
        provider("backup", &backup),
    ])
    .chat(&hi, None)
    .unwrap();
    assert_eq!(reply.provider, "backup");
    let failed: Vec<&str> = reply.failures.iter().map(|f| f.provider.as_str()).collect();
    assert_eq!(failed, ["dead", "garbage"]);
    assert!(
        reply.failures[1].error.contains("not JSON"),
        "{:?}",
        reply.failures
    );
}

#[test]
fn when_every_provider_fails_the_error_names_each() {
    let a = Server::start(vec![Reply::Json(503, "{}".into())]);
    let b = Server::start(vec![Reply::Json(
        429,
        r#"{"error":{"message":"rate limited"}}"#.into(),
    )]);
    let err = client(vec![provider("a", &a), provider("b", &b)])
        .chat(&[ChatMessage::user("hi")], None)
        .unwrap_err();
    assert!(matches!(err, LlmError::AllFailed(ref f) if f.len() == 2));
    assert_eq!(
        err.to_string(),
        "every LLM provider failed: a: HTTP 503; b: HTTP 429: rate limited"
    );
}

#[test]
fn the_api_key_is_sent_but_never_shown() {
    const KEY: &str = "sk-test-0123456789abcdef";
    // The primary echoes the key back in its error, as some providers do.
    let primary = Server::start(vec![Reply::Json(
        401,
        format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#),
    )]);
    let backup = Server::start(vec![Reply::Json(500, format!("boom {KEY}"))]);
    let mut p = provider("primary", &primary);
    p.key = KeySource::Literal(Secret::new(KEY));
    let mut b = provider("backup", &backup);
    b.key = KeySource::Env("BACKUP_KEY".into());
    let c = ChatClient::with_env(
        LlmConfig {
            providers: vec![p.clone(), b],
            source: None,
        },
        |k| (k == "BACKUP_KEY").then(|| KEY.to_string()),
    );
    let err = c.chat(&[ChatMessage::user("hi")], None).unwrap_err();
    assert_eq!(
        primary.requests()[0].authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        backup.requests()[0].authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );
    let text = err.to_string();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("Incorrect API key provided: ***"), "{text}");
    assert!(!format!("{err:?}").contains(KEY));
    assert!(!format!("{p:?}").contains(KEY));

    // A key read from a variable that is not set is a failure of that
    // provider, not of the process.
    let mut unset = provider("needs-key", &primary);
    unset.key = KeySource::Env("GRAPHCTX_TEST_UNSET_KEY".into());
    let err = client(vec![unset])
        .chat(&[ChatMessage::user("hi")], None)
        .unwrap_err();
    assert!(err.to_string().contains("GRAPHCTX_TEST_UNSET_KEY"), "{err}");
}

#[test]
fn config_file_and_environment_precedence() {
    let dir = tempfile::tempdir().unwrap();
    let cfg_dir = dir.path().join(".graphctx");
    std::fs::create_dir_all(&cfg_dir).unwrap();
    std::fs::write(
        cfg_dir.join("llm.toml"),
        r#"
timeout_secs = 30

[[provider]]
name = "groq"
base_url = "https://api.groq.com/openai/v1"
model = "openai/gpt-oss-120b"
api_key_env = "GROQ_API_KEY"

[[provider]]
name = "local"
base_url = "http://127.0.0.1:8080/v1"
model = "llama"
timeout_secs = 5
native_tools = true
"#,
    )
    .unwrap();
    let sub = dir.path().join("a/b");
    std::fs::create_dir_all(&sub).unwrap();
    let none = |_: &str| None;
    // Found from a subdirectory, in file order.
    let c = LlmConfig::load(&sub, &none).unwrap();
    let names: Vec<&str> = c.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["groq", "local"]);
    assert_eq!(c.providers[0].timeout, Duration::from_secs(30));
    assert_eq!(c.providers[0].key, KeySource::Env("GROQ_API_KEY".into()));
    assert_eq!(c.providers[1].timeout, Duration::from_secs(5));
    assert!(c.providers[1].native_tools);

    // Model and key without a base URL: the first provider's.
    let env = |k: &str| match k {
        "GRAPHCTX_LLM_MODEL" => Some("other-model".to_string()),
        "GRAPHCTX_LLM_API_KEY" => Some("k-123456".to_string()),
        "GRAPHCTX_LLM_TIMEOUT" => Some("1.5".to_string()),
        _ => None,
    };
    let c = LlmConfig::load(&sub, &env).unwrap();
    assert_eq!(c.providers[0].model, "other-model");
    assert_eq!(
        c.providers[0].key,
        KeySource::Literal(Secret::new("k-123456"))
    );
    assert_eq!(c.providers[1].model, "llama");
    assert!(c
        .providers
        .iter()
        .all(|p| p.timeout == Duration::from_millis(1500)));

    // A base URL puts an `env` provider first.
    let env = |k: &str| match k {
        "GRAPHCTX_LLM_BASE_URL" => Some("http://127.0.0.1:11434/v1".to_string()),
        "GRAPHCTX_LLM_MODEL" => Some("qwen".to_string()),
        _ => None,
    };
    let c = LlmConfig::load(&sub, &env).unwrap();
    let names: Vec<&str> = c.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["env", "groq", "local"]);
    assert_eq!(c.providers[0].model, "qwen");

    // GRAPHCTX_LLM_CONFIG wins over the directory's file.
    let other = dir.path().join("other.toml");
    std::fs::write(
        &other,
        "[[provider]]\nname = \"x\"\nbase_url = \"http://h/v1\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let o = other.to_str().unwrap().to_string();
    let env = move |k: &str| (k == "GRAPHCTX_LLM_CONFIG").then(|| o.clone());
    assert_eq!(LlmConfig::load(&sub, &env).unwrap().providers[0].name, "x");

    // Errors name what is wrong.
    let empty = tempfile::tempdir().unwrap();
    let err = LlmConfig::load(empty.path(), &none)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no LLM provider configured"), "{err}");
    let err = LlmConfig::parse(
        "[[provider]]\nname = \"x\"\nbase_url = \"ftp://h\"\nmodel = \"m\"\n",
        Path::new("f.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("base_url must start with http"), "{err}");
    let err = LlmConfig::parse(
        "[[provider]]\nname = \"x\"\nurl = \"http://h\"\nmodel = \"m\"\n",
        Path::new("f.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("f.toml"), "{err}");
    let env = |k: &str| (k == "GRAPHCTX_LLM_BASE_URL").then(|| "http://h/v1".to_string());
    let err = LlmConfig::load(empty.path(), &env).unwrap_err().to_string();
    assert!(err.contains("GRAPHCTX_LLM_MODEL is not"), "{err}");
}

// ---------------------------------------------------------------- ask loop

#[test]
fn a_wrong_node_id_is_fixed_by_the_retry() {
    let store = store_with_login("app");
    let server = Server::start(vec![
        answer(&tool_answer(
            "Home goes after login.",
            json!([
                {"type": "tool_use", "id": "t1", "name": "addNode", "input": {"label": "Settings"}},
                {"type": "tool_use", "id": "t2", "name": "addNode", "input": {"label": "Home", "parentNodeId": "logn"}}
            ]),
        )),
        answer(&tool_answer(
            "The id is login.",
            json!([{"type": "tool_use", "id": "t3", "name": "addNode", "input": {"label": "Home", "parentNodeId": "login"}}]),
        )),
    ]);
    let c = client(vec![provider("local", &server)]);
    let out = ask(
        &store,
        "app",
        &c,
        "add a home page after login",
        &AskOptions::default(),
    )
    .unwrap();
    assert!(out.success);
    assert_eq!(out.iterations, 2);
    assert_eq!(out.parse_error, None);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);

    // The first request: system prompt, then the context message.
    let first = reqs[0].messages();
    assert_eq!(first.len(), 2);
    assert_eq!(first[0].role, "system");
    let ctx = &first[1].content;
    assert!(
        ctx.starts_with("Current Flow State:\n{\n  \"nodes\": [\n    {\n      \"id\": \"login\""),
        "{ctx}"
    );
    assert!(ctx.contains("\n\nVisual Settings:\n{"));
    assert!(ctx.contains("\n\nAvailable Tools:\naddNode: "));
    assert!(ctx.ends_with("\n\nUser Request: add a home page after login"));
    assert!(out.answers[0].context_tokens > 100);

    // The second request carries the retry message, and the first
    // exchange as history.
    let second = reqs[1].messages();
    assert_eq!(second.len(), 4);
    assert_eq!(second[1].content, "add a home page after login");
    assert_eq!(second[2].role, "assistant");
    assert!(
        second[2].content.contains("\"parentNodeId\": \"logn\"")
            || second[2].content.contains("\"parentNodeId\":\"logn\"")
    );
    let retry = last_user(&reqs[1]);
    let expected = "User Request: Previous tool execution results:

✅ addNode({\"label\":\"Settings\"}) → Success!
❌ addNode({\"label\":\"Home\",\"parentNodeId\":\"logn\"}) → Failed
   Error: Parent node logn not found

📊 Current Flow State:
  Available Nodes (2 total):
    • \"Login\" (ID: \"login\") - User authentication
    • \"Settings\" (ID: \"settings\")

🔧 Instructions:
Please retry the failed operations using the correct node IDs shown above.";
    assert!(retry.ends_with(expected), "{retry}");
    assert_eq!(
        out.answers[0].retry_message.as_deref(),
        expected.strip_prefix("User Request: ")
    );
    // The retry's flow state already has Settings (the first answer landed).
    assert!(retry.starts_with("Current Flow State:") && retry.contains("\"id\": \"settings\""));

    let stored = flow::store::load(&store, "app").unwrap().flow;
    let ids: Vec<&str> = stored.nodes.iter().map(|n| n.id.as_str()).collect();
    assert_eq!(ids, ["login", "settings", "home"]);
    assert_eq!(stored.edges[0].source, "login");
    assert_eq!(
        out.changes,
        [
            "added node settings \"Settings\"",
            "added node home \"Home\" after login",
        ]
    );
    // Two answers, two exchanges in the history.
    assert_eq!(history::count(&store, "app").unwrap(), 4);
}

#[test]
fn the_loop_stops_after_three_answers() {
    let store = store_with_login("app");
    let bad = || {
        answer(&tool_answer(
            "",
            json!([{"type": "tool_use", "id": "t", "name": "deleteNode", "input": {"nodeId": "home"}}]),
        ))
    };
    let server = Server::start(vec![bad(), bad(), bad(), bad()]);
    let out = ask(
        &store,
        "app",
        &client(vec![provider("p", &server)]),
        "delete home",
        &AskOptions::default(),
    )
    .unwrap();
    assert!(!out.success);
    assert_eq!(out.iterations, 3);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        out.answers[2].calls[0].result.error.as_deref(),
        Some("Node home not found")
    );
}

#[test]
fn malformed_output_is_reported_not_retried() {
    let store = store_with_login("app");
    let server = Server::start(vec![
        answer("<thinking>ok</thinking><response>[{\"name\": \"addNode\", \"input\": {\"label\": \"Home\"}</response>"),
        answer(&tool_answer("", json!([]))),
    ]);
    let out = ask(
        &store,
        "app",
        &client(vec![provider("p", &server)]),
        "add home",
        &AskOptions::default(),
    )
    .unwrap();
    assert!(!out.success);
    assert_eq!(out.iterations, 1);
    assert!(out
        .parse_error
        .as_deref()
        .unwrap()
        .starts_with("Failed to parse tool calls"));
    assert_eq!(server.requests().len(), 1);
    assert_eq!(flow::store::load(&store, "app").unwrap().flow, login_flow());
}

#[test]
fn history_window_is_the_last_six_pairs_and_clear_empties_it() {
    let store = store_with_login("app");
    let mut replies: Vec<Reply> = (0..9)
        .map(|_| answer(&tool_answer("nothing", json!([]))))
        .collect();
    replies.push(answer("<response>[]</response>"));
    let server = Server::start(replies);
    let c = client(vec![provider("p", &server)]);
    for i in 0..9 {
        let out = ask(
            &store,
            "app",
            &c,
            &format!("request {i}"),
            &AskOptions::default(),
        )
        .unwrap();
        assert!(out.success && out.iterations == 1);
    }
    let reqs = server.requests();
    // The ninth request: system, 6 pairs (requests 2..=7), the context.
    let msgs = reqs[8].messages();
    assert_eq!(msgs.len(), 1 + 12 + 1);
    let users: Vec<&str> = msgs[1..13]
        .iter()
        .filter(|m| m.role == "user")
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        users,
        [
            "request 2",
            "request 3",
            "request 4",
            "request 5",
            "request 6",
            "request 7"
        ]
    );
    assert!(msgs[1..13]
        .iter()
        .skip(1)
        .step_by(2)
        .all(|m| m.role == "assistant"));
    assert!(last_user(&reqs[8]).ends_with("User Request: request 8"));
    // Early requests grow the window one pair at a time.
    assert_eq!(reqs[0].messages().len(), 2);
    assert_eq!(reqs[3].messages().len(), 2 + 6);

    assert_eq!(history::clear(&store, "app").unwrap(), 18);
    ask(&store, "app", &c, "fresh start", &AskOptions::default()).unwrap();
    assert_eq!(server.requests()[9].messages().len(), 2);
    // Another graph's history is its own.
    assert_eq!(history::count(&store, "other").unwrap(), 0);
}

#[test]
fn native_tool_calls_with_the_tools_field() {
    let store = store_with_login("app");
    let server = Server::start(vec![Reply::Tools(vec![
        (
            "addNode",
            r#"{"label":"Home","parentNodeId":"login","edgeLabel":"signed in"}"#.into(),
        ),
        (
            "changeDimensions",
            r#"{"target":"zoom","direction":"increase"}"#.into(),
        ),
    ])]);
    let mut p = provider("native", &server);
    p.native_tools = true;
    let out = ask(
        &store,
        "app",
        &client(vec![p]),
        "add home after login, zoom in",
        &AskOptions::default(),
    )
    .unwrap();
    assert!(out.success, "{:?}", out.answers);
    let body = &server.requests()[0].body;
    assert_eq!(body["tools"].as_array().unwrap().len(), 10);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "addNode");
    let s = flow::store::load(&store, "app").unwrap();
    assert_eq!(s.flow.edges[0].label, "signed in");
    assert_eq!(s.visuals.dimensions.zoom, 1.1);
    // The history shows the calls in the text form.
    let h = history::newest(&store, "app", 1).unwrap();
    assert!(h[0].content.contains("<response>") && h[0].content.contains("\"addNode\""));

    // Without native_tools no `tools` field is sent.
    let plain = Server::start(vec![answer("<response>[]</response>")]);
    ask(
        &store,
        "app",
        &client(vec![provider("plain", &plain)]),
        "nothing",
        &AskOptions::default(),
    )
    .unwrap();
    assert!(plain.requests()[0].body.get("tools").is_none());
}

// ---------------------------------------------------------------- CLI

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_graphctx"))
}

#[test]
fn cli_ask_with_a_failing_primary_and_history_clear() {
    const KEY: &str = "sk-cli-secret-key-987654";
    let primary = Server::start(vec![Reply::Json(
        401,
        format!(r#"{{"error":{{"message":"bad key {KEY}"}}}}"#),
    )]);
    let backup = Server::start(vec![
        answer(&tool_answer(
            "Add home.",
            json!([{"type": "tool_use", "id": "t1", "name": "addNode", "input": {"label": "Home", "parentNodeId": "Login"}}]),
        )),
        answer("<response>[{\"name\": \"addNode\", \"input\": </response>"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("llm.toml");
    std::fs::write(
        &config,
        format!(
            "[[provider]]\nname = \"primary\"\nbase_url = \"{}\"\nmodel = \"m1\"\napi_key_env = \"PRIMARY_KEY\"\ntimeout_secs = 5\n\n[[provider]]\nname = \"backup\"\nbase_url = \"{}\"\nmodel = \"m2\"\ntimeout_secs = 5\n",
            primary.url, backup.url
        ),
    )
    .unwrap();
    let db = dir.path().join("g.db");
    let flow_file = dir.path().join("flow.json");
    std::fs::write(&flow_file, serde_json::to_string(&login_flow()).unwrap()).unwrap();
    let run = |args: &[&str]| {
        let out = bin()
            .current_dir(dir.path())
            .env("GRAPHCTX_LLM_CONFIG", &config)
            .env("PRIMARY_KEY", KEY)
            .env_remove("GRAPHCTX_LLM_BASE_URL")
            .env_remove("GRAPHCTX_LLM_MODEL")
            .env_remove("GRAPHCTX_LLM_API_KEY")
            .args(["--db", db.to_str().unwrap(), "--graph", "app"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    assert_eq!(
        run(&["flow", "import", flow_file.to_str().unwrap()]).0,
        Some(0)
    );
    let (code, stdout, stderr) = run(&["ask", "add a home page after login", "--json"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["success"], true);
    assert_eq!(out["iterations"], 1);
    assert_eq!(out["answers"][0]["provider"], "backup");
    assert_eq!(out["answers"][0]["failovers"][0]["provider"], "primary");
    assert_eq!(
        out["changes"],
        json!(["added node home \"Home\" after login"])
    );
    assert!(
        stderr.contains("provider primary failed (HTTP 401: bad key ***)"),
        "{stderr}"
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    assert_eq!(
        primary.requests()[0].authorization.as_deref(),
        Some(format!("Bearer {KEY}").as_str())
    );

    // Malformed output: exit 1, the parse error printed, nothing changed.
    let (code, stdout, stderr) = run(&["ask", "and another"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("parse error (not retried): Failed to parse tool calls"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not done after 1 iteration; 2 nodes, 1 edges"),
        "{stdout}"
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));

    // Everything failing: exit 2, each provider named, no key.
    let (code, _, stderr) = run(&["ask", "once more"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("every LLM provider failed: primary: HTTP 500"),
        "{stderr}"
    );
    assert!(!stderr.contains(KEY));

    let (code, stdout, _) = run(&["history", "clear"]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout.trim(), "cleared 4 messages of graph app");
    let (_, shown, _) = run(&["history", "show", "--json"]);
    assert_eq!(serde_json::from_str::<Value>(&shown).unwrap(), json!([]));
}

// ---------------------------------------------------------------- canvas

const CANVAS: &str = r#"{
  "nodes": [
    {"id": "sys", "type": "text", "text": "---\nrole: system\n---\nYou are helpful.", "x": 0, "y": 0, "width": 250, "height": 60},
    {"id": "q1", "type": "text", "text": "What is ML?", "x": 0, "y": 200, "width": 250, "height": 60},
    {"id": "a1", "type": "text", "text": "---\nrole: assistant\n---\nML is learning from data.", "x": 0, "y": 400, "width": 250, "height": 60},
    {"id": "q2", "type": "text", "text": "What about deep learning?", "x": 300, "y": 600, "width": 250, "height": 60},
    {"id": "q3", "type": "text", "text": "Tell me about supervised learning", "x": -300, "y": 600, "width": 250, "height": 60}
  ],
  "edges": [
    {"id": "e1", "fromNode": "sys", "fromSide": "bottom", "toNode": "q1", "toSide": "top"},
    {"id": "e2", "fromNode": "q1", "fromSide": "bottom", "toNode": "a1", "toSide": "top"},
    {"id": "e3", "fromNode": "a1", "fromSide": "bottom", "toNode": "q2", "toSide": "top"},
    {"id": "e4", "fromNode": "a1", "fromSide": "bottom", "toNode": "q3", "toSide": "top"}
  ]
}"#;

#[test]
fn canvas_ask_walks_asks_and_writes_the_answer() {
    use graphctx::canvas::ask::ask_canvas;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("chat.canvas");
    std::fs::write(&file, CANVAS).unwrap();
    let primary = Server::start(vec![Reply::Close]);
    let backup = Server::start(vec![answer(
        "<think>let me see</think>Deep learning uses many layers.",
    )]);
    let c = client(vec![
        provider("primary", &primary),
        provider("backup", &backup),
    ]);
    let done = ask_canvas(&c, &file, "q2", None).unwrap();
    assert_eq!(done.provider, "backup");
    assert_eq!(done.answer, "Deep learning uses many layers.");
    let sent = backup.requests()[0].messages();
    let roles: Vec<&str> = sent.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(sent[3].content, "What about deep learning?");
    assert!(
        sent.iter().all(|m| !m.content.contains("supervised")),
        "sibling branch sent"
    );
    assert!(backup.requests()[0].body.get("tools").is_none());

    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let node = written["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == done.response.node.as_str())
        .unwrap();
    let text = node["text"].as_str().unwrap();
    assert!(
        text.contains("role: assistant") && text.ends_with("Deep learning uses many layers."),
        "{text}"
    );
    assert!(written["edges"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["fromNode"] == "q2" && e["toNode"] == done.response.node.as_str()));

    // An unknown node fails before any request.
    let quiet = Server::start(vec![]);
    let err = ask_canvas(&client(vec![provider("q", &quiet)]), &file, "nope", None).unwrap_err();
    assert!(err.to_string().contains("no node with id 'nope'"), "{err}");
    assert!(quiet.requests().is_empty());

    // Through the CLI, with the provider from the environment.
    let server = Server::start(vec![answer("Supervised learning uses labels.")]);
    let out = bin()
        .current_dir(dir.path())
        .env_remove("GRAPHCTX_LLM_CONFIG")
        .env("GRAPHCTX_LLM_BASE_URL", &server.url)
        .env("GRAPHCTX_LLM_MODEL", "local-model")
        .env("HOME", dir.path())
        .env_remove("XDG_CONFIG_HOME")
        .args([
            "canvas",
            "ask",
            file.to_str().unwrap(),
            "--node",
            "q3",
            "--json",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(printed["provider"], "env");
    assert_eq!(printed["messages"], 4);
    assert_eq!(server.requests()[0].body["model"], "local-model");
    let canvas_text = std::fs::read_to_string(&file).unwrap();
    assert!(canvas_text.contains("Supervised learning uses labels."));
    assert!(canvas_text.contains("Deep learning uses many layers."));
}

#[test]
fn a_retry_that_no_provider_answers_reports_what_landed() {
    let store = store_with_login("app");
    let server = Server::start(vec![
        answer(&tool_answer(
            "",
            json!([
                {"type": "tool_use", "id": "t1", "name": "addNode", "input": {"label": "Home", "parentNodeId": "login"}},
                {"type": "tool_use", "id": "t2", "name": "deleteEdge", "input": {"edgeId": "e9"}}
            ]),
        )),
        Reply::Json(502, r#"{"error":{"message":"bad gateway"}}"#.into()),
    ]);
    let out = ask(
        &store,
        "app",
        &client(vec![provider("p", &server)]),
        "add home",
        &AskOptions::default(),
    )
    .unwrap();
    assert!(!out.success);
    assert_eq!(out.iterations, 1);
    assert_eq!(
        out.retry_error.as_deref(),
        Some("every LLM provider failed: p: HTTP 502: bad gateway")
    );
    assert_eq!(out.changes, ["added node home \"Home\" after login"]);
    assert_eq!(
        flow::store::load(&store, "app").unwrap().flow.nodes.len(),
        2
    );
}
