//! What the model reads: the system prompt, the context message of each
//! request, and the retry message after failed calls.
//!
//! The context message carries the flow in its compact form (ids, labels,
//! descriptions, positions; edges with ids, ends and labels), the visual
//! settings, the tool definitions and the request, in that order — the
//! seed's "Current Flow State / Available Tools / User Request" layout.
//! The retry message follows the seed's format line for line: every call
//! with ✅ or ❌ (and its error), the node ids and labels the model can use,
//! and what to do.

use serde_json::Value;

use super::executor::Executed;
use super::model::{Flow, VisualSettings};
use super::tools;

/// The system prompt of flow requests.
pub const SYSTEM_PROMPT: &str = "You edit a flow diagram (React Flow nodes and edges) for the user.

Each request shows the current flow state (nodes with id, label, description and position; edges with id, source, target and label), the visual settings, the tools you can call and the user's request. Earlier turns of the conversation come before it.

Answer in exactly this form:
<thinking>
Short reasoning: what the user wants and which tool calls do it.
</thinking>
<response>
[
  {\"type\": \"tool_use\", \"id\": \"call_1\", \"name\": \"addNode\", \"input\": {\"label\": \"Login\", \"description\": \"User authentication\"}},
  {\"type\": \"tool_use\", \"id\": \"call_2\", \"name\": \"addNode\", \"input\": {\"label\": \"Home\", \"parentNodeId\": \"Login\"}}
]
</response>

Rules:
- The array in <response> is plain JSON: no comments, no trailing commas. Use [] when nothing is to be done.
- Calls run in order; a call can refer to a node an earlier call of the same answer created (by its label or its id).
- Use node and edge ids exactly as shown in the flow state.
- Only use the tools listed, with the parameters their schemas name.";

/// The flow as the model sees it (pretty JSON of the compact form).
pub fn flow_state_json(flow: &Flow) -> String {
    serde_json::to_string_pretty(flow).unwrap_or_default()
}

/// The user turn of a request.
pub fn context_message(flow: &Flow, visuals: &VisualSettings, request: &str) -> String {
    let visuals_json = serde_json::to_string_pretty(visuals).unwrap_or_default();
    format!(
        "Current Flow State:\n{}\n\nVisual Settings:\n{}\n\nAvailable Tools:\n{}\n\nUser Request: {}",
        flow_state_json(flow),
        visuals_json,
        tools::prompt_text(),
        request
    )
}

/// The message sent back after an answer whose calls did not all succeed.
pub fn retry_message(executed: &[Executed], flow: &Flow) -> String {
    let mut lines = vec![
        "Previous tool execution results:".to_string(),
        String::new(),
    ];
    for e in executed {
        let params = compact(&e.params);
        if e.result.success {
            lines.push(format!("✅ {}({params}) → Success!", e.name));
        } else {
            lines.push(format!("❌ {}({params}) → Failed", e.name));
            lines.push(format!(
                "   Error: {}",
                e.result.error.as_deref().unwrap_or("unknown error")
            ));
        }
    }
    lines.push(String::new());
    lines.push("📊 Current Flow State:".to_string());
    if flow.nodes.is_empty() {
        lines.push("  No nodes exist yet.".to_string());
    } else {
        lines.push(format!("  Available Nodes ({} total):", flow.nodes.len()));
        for n in &flow.nodes {
            let desc = if n.description.is_empty() {
                String::new()
            } else {
                format!(" - {}", n.description)
            };
            lines.push(format!("    • \"{}\" (ID: \"{}\"){desc}", n.label, n.id));
        }
    }
    if !flow.edges.is_empty() {
        lines.push(String::new());
        lines.push(format!("  Existing Edges ({} total):", flow.edges.len()));
        for e in &flow.edges {
            let label = if e.label.is_empty() {
                String::new()
            } else {
                format!(" [{}]", e.label)
            };
            lines.push(format!(
                "    • {} → {}{label} (ID: \"{}\")",
                e.source, e.target, e.id
            ));
        }
    }
    lines.push(String::new());
    lines.push("🔧 Instructions:".to_string());
    lines.push(
        "Please retry the failed operations using the correct node IDs shown above.".to_string(),
    );
    lines.join("\n")
}

fn compact(v: &Value) -> String {
    match v {
        Value::Null => "{}".into(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}
