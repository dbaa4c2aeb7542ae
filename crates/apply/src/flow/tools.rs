//! The tools the model may call, in OpenAI's function-calling format.
//!
//! The same definitions go three ways: as text into the prompt (every
//! provider understands that), as the request's `tools` field for providers
//! configured with `native_tools`, and out of `graphctx tools --json`. The
//! executor's parameter checks follow these schemas; a test keeps the two
//! in step (every property named here is accepted by the executor, and
//! nothing else is).

use serde_json::{json, Value};

/// Names of the tools, in the order they are presented.
pub const TOOL_NAMES: &[&str] = &[
    "addNode",
    "updateNode",
    "deleteNode",
    "addEdge",
    "updateEdge",
    "deleteEdge",
    "undo",
    "redo",
    "changeVisuals",
    "changeDimensions",
];

/// The tool definitions: `[{name, description, parameters}]`.
pub fn definitions() -> Value {
    Value::Array(vec![
        add_node(),
        update_node(),
        delete_node(),
        add_edge(),
        update_edge(),
        delete_edge(),
        undo(),
        redo(),
        change_visuals(),
        change_dimensions(),
    ])
}

/// `addNode`: creates a node, optionally under a parent.
fn add_node() -> Value {
    json!({
        "name": "addNode",
        "description": "Creates a node. Without `id` the id is made from the label (\"My Node\" becomes \"my_node\"; a taken id gets a suffix _2, _3, ...). With `parentNodeId` an edge from the parent to the new node is created as well, labelled with `edgeLabel` if given. `parentNodeId` may be a node id or a node label, including the label of a node created earlier in the same answer, so a chain of nodes can be built in one answer.",
        "parameters": {
            "type": "object",
            "properties": {
                "id": {"type": ["string", "null"], "description": "Optional id for the node (letters, digits, _ - . :). Omit it to derive the id from the label."},
                "label": {"type": "string", "description": "The node's label."},
                "description": {"type": ["string", "null"], "description": "Optional description of the node."},
                "parentNodeId": {"type": ["string", "null"], "description": "Optional id or label of the parent node; an edge parent -> new node is created."},
                "edgeLabel": {"type": ["string", "null"], "description": "Optional label of the edge created from parentNodeId. Only when the user asks for one or the relationship needs a name."}
            },
            "required": ["label"]
        }
    })
}

/// `updateNode`: changes a node's label, description or position.
fn update_node() -> Value {
    json!({
        "name": "updateNode",
        "description": "Changes a node's label, description or position (at least one of them).",
        "parameters": {
            "type": "object",
            "properties": {
                "nodeId": {"type": "string", "description": "Id of the node to change."},
                "label": {"type": "string", "description": "New label."},
                "description": {"type": "string", "description": "New description."},
                "position": {
                    "type": "object",
                    "description": "New position.",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                    "required": ["x", "y"]
                }
            },
            "required": ["nodeId"]
        }
    })
}

/// `deleteNode`: deletes a node and its edges.
fn delete_node() -> Value {
    json!({
        "name": "deleteNode",
        "description": "Deletes a node together with every edge into or out of it.",
        "parameters": {
            "type": "object",
            "properties": {
                "nodeId": {"type": "string", "description": "Id of the node to delete."}
            },
            "required": ["nodeId"]
        }
    })
}

/// `addEdge`: connects two existing nodes.
fn add_edge() -> Value {
    json!({
        "name": "addEdge",
        "description": "Connects two existing nodes (given by id or label) with an edge from source to target.",
        "parameters": {
            "type": "object",
            "properties": {
                "sourceNodeId": {"type": "string", "description": "Id or label of the source node."},
                "targetNodeId": {"type": "string", "description": "Id or label of the target node."},
                "label": {"type": ["string", "null"], "description": "Optional edge label."}
            },
            "required": ["sourceNodeId", "targetNodeId"]
        }
    })
}

/// `updateEdge`: changes an edge's label.
fn update_edge() -> Value {
    json!({
        "name": "updateEdge",
        "description": "Changes an edge's label (an empty label removes it).",
        "parameters": {
            "type": "object",
            "properties": {
                "edgeId": {"type": "string", "description": "Id of the edge."},
                "label": {"type": "string", "description": "New label."}
            },
            "required": ["edgeId", "label"]
        }
    })
}

/// `deleteEdge`: removes an edge.
fn delete_edge() -> Value {
    json!({
        "name": "deleteEdge",
        "description": "Removes an edge; both nodes stay.",
        "parameters": {
            "type": "object",
            "properties": {
                "edgeId": {"type": "string", "description": "Id of the edge to delete."}
            },
            "required": ["edgeId"]
        }
    })
}

/// `undo`: reverts the last change.
fn undo() -> Value {
    json!({
        "name": "undo",
        "description": "Reverts the last change to nodes and edges (one earlier answer's edits). May be called repeatedly.",
        "parameters": {"type": "object", "properties": {}}
    })
}

/// `redo`: reapplies what the last undo reverted.
fn redo() -> Value {
    json!({
        "name": "redo",
        "description": "Reapplies the change the last undo reverted.",
        "parameters": {"type": "object", "properties": {}}
    })
}

/// `changeVisuals`: sets a colour of the canvas or of nodes.
fn change_visuals() -> Value {
    json!({
        "name": "changeVisuals",
        "description": "Sets a colour: the canvas background (a CSS colour or gradient), a colour of all nodes, or a colour of one node (an override). `reset` removes a node's override.",
        "parameters": {
            "type": "object",
            "properties": {
                "target": {"type": "string", "enum": ["background", "allNodes", "node"], "description": "What to colour."},
                "nodeId": {"type": ["string", "null"], "description": "The node, when target is \"node\"."},
                "property": {"type": ["string", "null"], "enum": ["background", "border", "text", null], "description": "Which colour of the node(s); default \"background\"."},
                "color": {"type": ["string", "null"], "description": "A CSS colour (#rgb, #rrggbb, #rrggbbaa, rgb(), rgba(), hsl(), hsla() or a colour name); for the canvas background also linear-gradient(...) or radial-gradient(...)."},
                "reset": {"type": ["boolean", "null"], "description": "With target \"node\": remove the override (of `property`, or all of them when no property is given) instead of setting a colour."}
            },
            "required": ["target"]
        }
    })
}

/// `changeDimensions`: resizes nodes, zoom, spacing or padding by 10% steps.
fn change_dimensions() -> Value {
    json!({
        "name": "changeDimensions",
        "description": "Makes something 10% larger or smaller per step: the size of one node or of all nodes, the zoom level, the dagre spacing between nodes (horizontal) or ranks (vertical), or the fit-view padding.",
        "parameters": {
            "type": "object",
            "properties": {
                "target": {"type": "string", "enum": ["node", "allNodes", "zoom", "dagreHorizontal", "dagreVertical", "fitViewPadding"], "description": "What to resize."},
                "direction": {"type": "string", "enum": ["increase", "decrease"], "description": "Larger or smaller."},
                "nodeId": {"type": ["string", "null"], "description": "The node, when target is \"node\"."},
                "axis": {"type": ["string", "null"], "enum": ["width", "height", "both", null], "description": "For node sizes: which side; default both."},
                "steps": {"type": ["integer", "null"], "minimum": 1, "maximum": 5, "description": "How many 10% steps (default 1)."}
            },
            "required": ["target", "direction"]
        }
    })
}

/// The definitions in the request's `tools` field shape:
/// `[{type: "function", function: {name, description, parameters}}]`.
pub fn openai_tools() -> Value {
    Value::Array(
        definitions()
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|d| json!({"type": "function", "function": d}))
                    .collect()
            })
            .unwrap_or_default(),
    )
}

/// The definitions as prompt text: `name: description` and the
/// parameter schema, one tool after another.
pub fn prompt_text() -> String {
    let defs = definitions();
    let mut out = String::new();
    for d in defs.as_array().into_iter().flatten() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(d["name"].as_str().unwrap_or(""));
        out.push_str(": ");
        out.push_str(d["description"].as_str().unwrap_or(""));
        out.push_str("\nParameters: ");
        out.push_str(&serde_json::to_string(&d["parameters"]).unwrap_or_default());
    }
    out
}

/// The parameter names a tool accepts (from its schema).
pub fn parameter_names(tool: &str) -> Option<Vec<String>> {
    let defs = definitions();
    defs.as_array()?
        .iter()
        .find(|d| d["name"] == tool)
        .map(|d| {
            d["parameters"]["properties"]
                .as_object()
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        })
}
