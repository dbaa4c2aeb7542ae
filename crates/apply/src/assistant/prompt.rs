//! What the ontology assistant sends: the rules, the graph context, the
//! canvas state line and the feedback after a rejected answer; and how an
//! answer's JSON is found in what the model wrote.
//!
//! The request is laid out for prompt caching, most stable first:
//!
//! 1. the rules ([`rules`]) — the same for every request of every graph
//!    (built from the node and relationship vocabularies, so it changes
//!    only with graphctx);
//! 2. the graph context ([`context_block`]) — the capture's Format E with
//!    a header of counts only, so it stays byte-identical while the
//!    capture cache entry is valid (for FULL: while the graph's seq is
//!    unchanged, whatever the viewport or selection);
//! 3. the conversation window;
//! 4. the user's turn: the canvas state ([`canvas_line`]: selection,
//!    filters, layout, zoom — what changes between requests without
//!    changing the graph) and the request.
//!
//! Blocks 1 and 2 are the cacheable system blocks.

use serde_json::Value;

use crate::capture::session::SessionState;
use crate::capture::{format_filters, CaptureResult};
use crate::ontology::{sanitize, NodeType, OntologyGraph, RelType};
use crate::operations::{parse_response, OperationError, Response};

/// The rules of the ontology and of the answer format.
pub fn rules() -> String {
    let mut s = String::from(
        "You are the modelling assistant of a systems-engineering ontology editor. A person \
         asks you to explain or change the model shown on their canvas. You change the model only \
         through operations in your answer; graphctx applies them all or none.\n\n\
         ## Node types\n",
    );
    for t in NodeType::ALL {
        s.push_str(&format!(
            "- {} (semantic-ID abbreviation {}): {}\n",
            t.name(),
            t.abbrev(),
            node_meaning(*t)
        ));
    }
    s.push_str("\n## Relationship types (long name, short name in Format E)\n");
    for r in RelType::ALL {
        s.push_str(&format!(
            "- {} ({}): {}\n",
            r.name(),
            r.short(),
            r.meaning()
        ));
    }
    s.push_str(RULES_TAIL);
    s
}

fn node_meaning(t: NodeType) -> &'static str {
    match t {
        NodeType::Sys => "a system or subsystem",
        NodeType::Actor => "a person or external system that exchanges data with the system",
        NodeType::Uc => "a use case: a goal an actor reaches with the system",
        NodeType::Fchain => "a function chain: functions in sequence for one use case",
        NodeType::Func => "a function the system performs",
        NodeType::Flow => "data flowing between actors and functions",
        NodeType::Req => "a requirement",
        NodeType::Test => "a test that verifies a requirement",
        NodeType::Mod => "a module (a part that implements functions)",
        NodeType::Schema => "a data schema (the structure of a flow's data)",
    }
}

const RULES_TAIL: &str = r#"
## Graph context
The graph is given in Format E: node lines `Name|TYPE|SemanticID|Description` (optionally `|{properties}`), edge lines `Source -short-> Target, Target` (every target of one relationship from one source). An edge end is the node's Name where no other node has that name, else its semantic ID; the node lines say which node it is.

## Semantic IDs
Existing nodes are named by their semantic ID `Name.TY.NNN`: the name in CamelCase, the type's abbreviation, a number of at least three digits (e.g. `ManageFleet.UC.001`). Refer to existing nodes by the semantic IDs of their node lines in the graph context (a Name an edge line uses for a node is accepted too). A new node gets a `tempId` of your choice (e.g. `temp-payment`) that later operations of the same answer use; graphctx assigns its semantic ID. You may propose one in `data.semanticId` instead: the node's CamelCase name, its type's abbreviation and a number no node of that type has (e.g. `ProcessPayment.FN.002`); operations of the same answer may then refer to it.

## Answer format
Answer with exactly one JSON object and nothing else (no prose around it, no code fence):
{"response": "what you did or your answer, in the person's language",
 "operations": [
  {"id": "op-1", "type": "create", "nodeType": "FUNC", "tempId": "temp-pay", "data": {"Name": "ProcessPayment", "Descr": "Process the customer's payment"}},
  {"id": "op-2", "type": "create-relationship", "relType": "compose", "sourceSemanticId": "ManageFleet.UC.001", "targetTempId": "temp-pay", "dependsOn": ["op-1"]},
  {"id": "op-3", "type": "update", "semanticId": "OptimizeRoutes.FN.001", "data": {"Descr": "New description"}},
  {"id": "op-4", "type": "delete-relationship", "relType": "io", "sourceSemanticId": "Customer.AC.001", "targetSemanticId": "OrderRequest.FL.001"},
  {"id": "op-5", "type": "delete", "semanticId": "OldFunction.FN.004"}
 ]}
- `type` is one of create, update, delete, create-relationship, delete-relationship.
- Relationship ends are given as `sourceTempId`/`sourceSemanticId` and `targetTempId`/`targetSemanticId`; `relType` is a long or short relationship name.
- `dependsOn` lists ids of operations that must run first (references to tempIds are dependencies by themselves). No cycles.
- A question that needs no change gets `"operations": []`.
- If graphctx rejects an answer, it tells you why; then send the whole corrected answer again (nothing of a rejected answer was applied).
"#;

/// The graph context block: a header of counts and the capture's Format E.
pub fn context_block(c: &CaptureResult) -> String {
    let mut s = format!("## Current Graph Context ({} capture)\n\n", c.mode.name());
    if c.mode != crate::capture::Mode::Minimal {
        s.push_str(&format!(
            "**Nodes shown:** {}\n**Edges shown:** {}\n",
            c.metadata.total_nodes, c.metadata.total_edges
        ));
        if let Some(from) = c.metadata.truncated_from {
            s.push_str(&format!(
                "**Truncated:** {} of {from} nodes kept (by relevance)\n",
                c.metadata.total_nodes
            ));
        }
        s.push('\n');
    }
    s.push_str(&c.format_e);
    s
}

/// The canvas state as one line for the user's turn (what the person sees
/// right now, which does not change the graph).
pub fn canvas_line(state: &SessionState, g: &OntologyGraph) -> String {
    let selected: Vec<String> = state
        .selected_nodes
        .iter()
        .filter_map(|u| g.nodes.get(u))
        .map(|n| {
            format!(
                "{} ({})",
                sanitize::text(&n.name),
                g.semantic_id_of(&n.uuid).unwrap_or(n.node_type.name())
            )
        })
        .collect();
    format!(
        "[Canvas] Selected: {} | Filters: {} | Layout: {} | Zoom: {}%",
        if selected.is_empty() {
            "none".to_string()
        } else {
            selected.join(", ")
        },
        format_filters(&state.filters).join(", "),
        state.layout.name(),
        (state.viewport.zoom * 100.0).round() as i64
    )
}

/// The user's turn of a request.
pub fn user_turn(canvas: &str, request: &str) -> String {
    format!("{canvas}\n\n{request}")
}

/// What goes back to the model after a rejected answer.
pub fn feedback(error: &Value) -> String {
    let text = error
        .get("llmFeedback")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "❌ Error: {}",
                error.get("message").and_then(Value::as_str).unwrap_or("")
            )
        });
    format!(
        "{text}\n\nSend the complete corrected answer as one JSON object \
         {{\"response\": ..., \"operations\": [...]}}."
    )
}

/// The response in what the model wrote: the whole text as JSON, else
/// the content of a fenced code block, else the outermost `{...}`. A text
/// without any JSON object is an `InvalidResponse` that says so.
pub fn extract(answer: &str) -> Result<Response, OperationError> {
    let whole_err = match parse_response(answer.trim()) {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    let mut candidates: Vec<&str> = Vec::new();
    if let Some(start) = answer.find("```") {
        let rest = &answer[start + 3..];
        let body_start = rest.find('\n').map(|i| i + 1).unwrap_or(0);
        if let Some(end) = rest[body_start..].find("```") {
            candidates.push(&rest[body_start..body_start + end]);
        }
    }
    if let Some(a) = answer.find('{') {
        match answer.rfind('}') {
            Some(b) if a < b => candidates.push(&answer[a..=b]),
            // Cut off: its JSON error says where.
            _ => candidates.push(&answer[a..]),
        }
    }
    if candidates.is_empty() {
        return Err(OperationError::InvalidResponse {
            message: "the answer is prose without a JSON object; answer with one JSON object \
                      with `response` and `operations`"
                .into(),
        });
    }
    let mut first_err = None;
    for c in candidates {
        match parse_response(c.trim()) {
            Ok(r) => return Ok(r),
            Err(e) => {
                if first_err.is_none() {
                    first_err = Some(e);
                }
            }
        }
    }
    Err(first_err.unwrap_or(whole_err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extract_finds_the_json() {
        let ok = r#"{"response":"hi","operations":[]}"#;
        assert_eq!(extract(ok).unwrap().text.as_deref(), Some("hi"));
        let fenced = format!("Here you go:\n```json\n{ok}\n```\n");
        assert_eq!(extract(&fenced).unwrap().text.as_deref(), Some("hi"));
        let wrapped = format!("Sure. {ok} Done.");
        assert_eq!(extract(&wrapped).unwrap().text.as_deref(), Some("hi"));
        let prose = extract("I added the function for you.").unwrap_err();
        assert!(prose.to_string().contains("prose"), "{prose}");
        let broken = extract(r#"{"response": "x", "operations": [}"#).unwrap_err();
        assert!(broken.to_string().contains("not valid JSON"), "{broken}");
    }

    #[test]
    fn rules_name_every_type_and_short_name() {
        let r = rules();
        for t in NodeType::ALL {
            assert!(r.contains(&format!(
                "- {} (semantic-ID abbreviation {})",
                t.name(),
                t.abbrev()
            )));
        }
        for rel in RelType::ALL {
            assert!(r.contains(&format!("- {} ({})", rel.name(), rel.short())));
        }
    }
}
