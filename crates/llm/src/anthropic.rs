//! The Anthropic Messages API (`POST {base_url}/messages`).
//!
//! Why a provider kind of its own rather than an OpenAI-compatible shim:
//! prompt caching. The system prompt is a list of blocks, and a block with
//! `cache_control: {type: "ephemeral"}` marks the end of a prefix the
//! provider keeps for a few minutes; a later request that starts with the
//! same prefix reads it from the cache (reported as
//! `cache_read_input_tokens`, billed at a fraction of input tokens)
//! instead of processing it again (`cache_creation_input_tokens` when it
//! is written). The ontology assistant sends its rules and the captured
//! graph as two such blocks, so repeated requests on an unchanged graph pay
//! mostly for the conversation and the request.
//!
//! System-role messages inside the conversation become further system
//! blocks (uncached); user and assistant turns go to `messages` as they
//! are (the API joins consecutive turns of one role). Native tool
//! definitions are not sent: callers that use tools (the flow assistant)
//! read the text form of tool calls, which every provider can write.

use serde_json::{json, Value};

use super::{truncate, ChatRequest, Completion, NativeToolCall, Provider, Usage, ERROR_BODY_CHARS};

/// The `anthropic-version` header.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` is required by the API; used when the provider sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The request body.
pub fn body(p: &Provider, request: &ChatRequest) -> Value {
    let mut system: Vec<Value> = request
        .system
        .iter()
        .map(|b| {
            let mut block = json!({"type": "text", "text": b.text});
            if b.cache {
                block["cache_control"] = json!({"type": "ephemeral"});
            }
            block
        })
        .collect();
    let mut messages = Vec::new();
    for m in request.messages {
        match m.role.as_str() {
            "system" => system.push(json!({"type": "text", "text": m.content})),
            "assistant" => messages.push(json!({"role": "assistant", "content": m.content})),
            _ => messages.push(json!({"role": "user", "content": m.content})),
        }
    }
    let mut body = json!({
        "model": p.model,
        "max_tokens": p.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
    });
    if !system.is_empty() {
        body["system"] = Value::Array(system);
    }
    if let Some(t) = p.temperature {
        body["temperature"] = json!(t);
    }
    body
}

/// Text, tool uses and usage of a Messages response.
pub fn parse(body: &str) -> Result<Completion, String> {
    let v: Value = serde_json::from_str(body).map_err(|e| {
        format!(
            "the response is not JSON ({e}): {}",
            truncate(body.trim(), ERROR_BODY_CHARS)
        )
    })?;
    if v.get("type").and_then(Value::as_str) == Some("error")
        || v.get("error").is_some_and(|e| !e.is_null())
    {
        let msg = v
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| v["error"].to_string());
        return Err(format!(
            "the provider returned an error: {}",
            truncate(&msg, ERROR_BODY_CHARS)
        ));
    }
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the response has no content array (not an Anthropic Messages response)")?;
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => content.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => tool_calls.push(NativeToolCall {
                id: b.get("id").and_then(Value::as_str).map(str::to_string),
                name: b
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a tool_use block has no name")?
                    .to_string(),
                arguments: b.get("input").map(Value::to_string).unwrap_or_default(),
            }),
            _ => {}
        }
    }
    if content.is_empty() && tool_calls.is_empty() {
        return Err("the response has neither text nor tool use".into());
    }
    let usage = v.get("usage").filter(|u| u.is_object()).map(|u| Usage {
        input_tokens: u.get("input_tokens").and_then(Value::as_u64),
        output_tokens: u.get("output_tokens").and_then(Value::as_u64),
        cache_creation_input_tokens: u.get("cache_creation_input_tokens").and_then(Value::as_u64),
        cache_read_input_tokens: u.get("cache_read_input_tokens").and_then(Value::as_u64),
    });
    Ok(Completion {
        content,
        tool_calls,
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ChatMessage, SystemBlock};

    #[test]
    fn system_blocks_carry_cache_control_and_system_messages_join_them() {
        let p = Provider::new("a", "http://x/v1", "claude-test");
        let system = [SystemBlock::cached("rules"), SystemBlock::plain("state")];
        let messages = [
            ChatMessage::system("more"),
            ChatMessage::user("hi"),
            ChatMessage::assistant("hello"),
        ];
        let b = body(
            &p,
            &ChatRequest {
                system: &system,
                messages: &messages,
                tools: None,
            },
        );
        assert_eq!(
            b["system"],
            json!([
                {"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}},
                {"type": "text", "text": "state"},
                {"type": "text", "text": "more"}
            ])
        );
        assert_eq!(
            b["messages"],
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
        );
        assert_eq!(b["max_tokens"], DEFAULT_MAX_TOKENS);
    }

    #[test]
    fn parses_text_usage_and_errors() {
        let c = parse(
            r#"{"type":"message","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
                "usage":{"input_tokens":5,"output_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":900}}"#,
        )
        .unwrap();
        assert_eq!(c.content, "ab");
        assert_eq!(c.usage.unwrap().cache_read_input_tokens, Some(900));
        let e =
            parse(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#)
                .unwrap_err();
        assert!(e.contains("Overloaded"), "{e}");
        assert!(parse(r#"{"choices":[]}"#).is_err());
    }
}
