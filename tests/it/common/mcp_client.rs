//! The official MCP Python SDK driving `graphctx mcp` over stdio
//! (`tests/mcp_client.py`): the tests that check the server against a
//! real client start it through here.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_graphctx");

/// Whether the SDK is installed. When it is not, the test fails, unless
/// it may be skipped (see [`super::client_missing`]): then `false`.
pub fn sdk_available() -> bool {
    let have_sdk = Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    have_sdk || !super::client_missing("the MCP Python SDK", "scripts/install-test-clients.sh")
}

/// What the client got: `server`, `protocol`, `tools` (name and input
/// schema of each listed tool), `calls` (per call `tool`, `is_error` and
/// `text`, in order) and `unknown_tool_error`.
pub struct Session(pub Value);

impl Session {
    /// The calls' answers.
    pub fn calls(&self) -> &[Value] {
        self.0["calls"].as_array().expect("calls")
    }

    /// The text of call `i`, parsed as JSON, after checking that it was not
    /// a tool error.
    pub fn ok_json(&self, i: usize) -> Value {
        let c = &self.calls()[i];
        assert_eq!(c["is_error"], false, "call {i}: {c}");
        serde_json::from_str(c["text"].as_str().unwrap()).unwrap()
    }

    /// The text of call `i`.
    pub fn text(&self, i: usize) -> &str {
        self.calls()[i]["text"].as_str().unwrap()
    }
}

/// Start `graphctx mcp --root ROOT`, initialise, list the tools, make
/// `calls` (a list of `{"tool", "arguments"}`) in order, and call an
/// unknown tool.
pub fn run(root: &Path, calls: &Value) -> Session {
    let dir = tempfile::tempdir().unwrap();
    let calls_path = dir.path().join("calls.json");
    std::fs::write(&calls_path, calls.to_string()).unwrap();
    let out_path = dir.path().join("out.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(BIN)
        .arg(root)
        .arg(&calls_path)
        .arg(&out_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Session(serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap())
}
