//! Reading tool calls out of a model's answer.
//!
//! Two forms arrive: native `tool_calls` (providers that do function
//! calling), and the seed's text form —
//!
//! ```text
//! <thinking>why</thinking>
//! <response>
//! [{"type": "tool_use", "id": "...", "name": "addNode", "input": {...}}]
//! </response>
//! ```
//!
//! The JSON inside `<response>` may carry `//` and `/* */` comments (models
//! add them); they are removed outside strings only, so a URL in a label
//! survives. A Markdown code fence around the array is removed too. An
//! answer that cannot be read is a parse error, returned to the user as it
//! is: a retry would only repeat the same form.

use serde::Serialize;
use serde_json::Value;

use crate::llm::{strip_think, ChatReply};

use super::executor::ToolCall;

/// What an answer said.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Parsed {
    /// The `<thinking>` text (empty without one).
    pub thinking: String,
    /// The `<response>` text, or the whole answer when it has no tags.
    pub content: String,
    #[serde(rename = "toolCalls")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(rename = "parseError", skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
}

/// Parse a reply: native tool calls when it has any, else the text form.
pub fn parse_reply(reply: &ChatReply) -> Parsed {
    if reply.tool_calls.is_empty() {
        return parse_text(&reply.content);
    }
    let text = strip_think(&reply.content);
    let mut parsed = Parsed {
        thinking: tag(&text, "thinking")
            .map(|(t, _)| t.trim().to_string())
            .unwrap_or_else(|| text.trim().to_string()),
        content: String::new(),
        tool_calls: Vec::new(),
        parse_error: None,
    };
    for (i, call) in reply.tool_calls.iter().enumerate() {
        let args = call.arguments.trim();
        let params = if args.is_empty() {
            Value::Object(Default::default())
        } else {
            match serde_json::from_str::<Value>(args) {
                Ok(v) => v,
                Err(e) => {
                    parsed.parse_error = Some(format!(
                        "Failed to parse tool calls: arguments of call {} ({}) are not valid JSON: {e}",
                        i + 1,
                        call.name
                    ));
                    return parsed;
                }
            }
        };
        parsed.tool_calls.push(ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            params,
        });
    }
    parsed
}

/// Parse the seed's `<thinking>`/`<response>` text form.
pub fn parse_text(answer: &str) -> Parsed {
    let text = strip_think(answer);
    let thinking = tag(&text, "thinking")
        .map(|(t, _)| t.trim().to_string())
        .unwrap_or_default();
    let Some((body, closed)) = tag(&text, "response") else {
        let rest = match tag_span(&text, "thinking") {
            Some((_, end)) => text[end..].trim().to_string(),
            None => text.trim().to_string(),
        };
        return Parsed {
            thinking,
            content: rest,
            ..Parsed::default()
        };
    };
    let content = body.trim().to_string();
    let mut parsed = Parsed {
        thinking,
        content: content.clone(),
        ..Parsed::default()
    };
    let cleaned = strip_fence(strip_json_comments(&content).trim())
        .trim()
        .to_string();
    if cleaned.is_empty() {
        return parsed;
    }
    let value: Value = match serde_json::from_str(&cleaned) {
        Ok(v) => v,
        Err(e) => {
            let hint = if closed {
                ""
            } else {
                " (the answer has no </response>; was it cut off?)"
            };
            parsed.parse_error = Some(format!("Failed to parse tool calls: {e}{hint}"));
            return parsed;
        }
    };
    let blocks = match value {
        Value::Array(a) => a,
        other => vec![other],
    };
    for (i, block) in blocks.iter().enumerate() {
        match tool_call_of(block) {
            Ok(c) => parsed.tool_calls.push(c),
            Err(e) => {
                parsed.parse_error =
                    Some(format!("Failed to parse tool calls: call {}: {e}", i + 1));
                parsed.tool_calls.clear();
                return parsed;
            }
        }
    }
    parsed
}

fn tool_call_of(block: &Value) -> Result<ToolCall, String> {
    let o = block.as_object().ok_or("not a JSON object")?;
    let name = o
        .get("name")
        .and_then(Value::as_str)
        .ok_or("no string \"name\"")?;
    let mut params = Value::Object(Default::default());
    for key in ["input", "params", "parameters", "arguments"] {
        match o.get(key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => {
                params = serde_json::from_str(s)
                    .map_err(|e| format!("\"{key}\" of {name} is not valid JSON: {e}"))?;
            }
            Some(v) => params = v.clone(),
        }
        break;
    }
    Ok(ToolCall {
        id: o.get("id").and_then(Value::as_str).map(str::to_string),
        name: name.to_string(),
        params,
    })
}

/// The text inside the first `<name>...</name>`, and whether the closing
/// tag was there (without it the text runs to the end).
fn tag<'t>(text: &'t str, name: &str) -> Option<(&'t str, bool)> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = text.find(&open)? + open.len();
    Some(match text[start..].find(&close) {
        Some(end) => (&text[start..start + end], true),
        None => (&text[start..], false),
    })
}

/// Byte span of `<name>...</name>` including the tags.
fn tag_span(text: &str, name: &str) -> Option<(usize, usize)> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = text.find(&open)?;
    let end = text[start..].find(&close)? + start + close.len();
    Some((start, end))
}

fn strip_fence(s: &str) -> &str {
    let Some(rest) = s.strip_prefix("```") else {
        return s;
    };
    let rest = rest.split_once('\n').map(|(_, r)| r).unwrap_or("");
    rest.trim_end().strip_suffix("```").unwrap_or(rest)
}

/// Remove `//` line comments and `/* */` block comments outside JSON
/// strings.
pub fn strip_json_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}
