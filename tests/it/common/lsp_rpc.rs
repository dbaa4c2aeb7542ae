//! A minimal JSON-RPC client for `graphctx lsp` over stdio, shared by the
//! LSP tests and the serve benchmark (which includes this file by path).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

pub struct Rpc {
    pub child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
    /// How long to wait for any one response.
    pub timeout: Duration,
}

impl Rpc {
    /// `graphctx lsp --no-watch` in `root`, its stdout read on a thread
    /// (the tests start their servers with it).
    #[allow(dead_code)]
    pub fn start(root: &Path) -> Rpc {
        Rpc::start_with(root, &["lsp", "--no-watch"])
    }

    /// `graphctx ARGS` in `root`, its stdout read on a thread (the serve
    /// benchmark starts a watching server with it).
    #[allow(dead_code)]
    pub fn start_with(root: &Path, args: &[&str]) -> Rpc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_graphctx"))
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || loop {
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                if stdout.read_line(&mut h).unwrap_or(0) == 0 {
                    return;
                }
                let h = h.trim();
                if h.is_empty() {
                    break;
                }
                if let Some(v) = h.strip_prefix("Content-Length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            if stdout.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                return;
            }
        });
        Rpc {
            child,
            stdin,
            rx,
            next_id: 1,
            timeout: Duration::from_secs(120),
        }
    }

    /// Send a body as is, framed (for malformed input too).
    pub fn send_raw(&mut self, body: &str) {
        write!(self.stdin, "Content-Length: {}\r\n\r\n{}", body.len(), body).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let body = json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string();
        self.send_raw(&body);
    }

    /// Send a request and return its response (server requests and
    /// notifications in between are skipped; server requests get `null`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        self.send_raw(&body);
        self.response_to(json!(id))
    }

    /// The next response with this id.
    pub fn response_to(&mut self, id: Value) -> Value {
        loop {
            let msg = self
                .rx
                .recv_timeout(self.timeout)
                .expect("the server answers");
            if msg.get("method").is_some() {
                if let Some(sid) = msg.get("id") {
                    let reply = json!({"jsonrpc": "2.0", "id": sid, "result": null}).to_string();
                    self.send_raw(&reply);
                }
                continue;
            }
            if msg["id"] == id {
                return msg;
            }
        }
    }
}
