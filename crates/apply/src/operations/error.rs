//! Errors of applying an LLM response, as JSON objects the caller can feed
//! back to the LLM (seed 001 §7).
//!
//! Every object has `error` (the seed's class name: `CyclicDependencyError`,
//! `MissingDependencyError`, `ChunkExecutionError`, ...), `message`, the
//! fields that name what was wrong, and `llmFeedback`: a short text in the
//! seed's "❌ Error: ..." style that says which operations to fix. Nothing
//! is written when any of them is returned.

use serde_json::{json, Value};

use crate::store::StoreError;

/// A reference that names nothing: an operation id in `dependsOn`, a tempId
/// no create of the response introduces, or a semantic ID that is neither
/// in the graph nor proposed by a create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The operation that makes the reference.
    pub operation: String,
    /// `operation`, `tempId` or `semanticId`.
    pub kind: &'static str,
    pub reference: String,
}

/// One step of a dependency cycle: `operation` depends on the next step's
/// operation, `via` says why (`dependsOn`, `tempId temp-x`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleStep {
    pub operation: String,
    pub description: String,
    pub via: String,
}

#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    #[error("invalid response: {message}")]
    InvalidResponse { message: String },
    #[error("invalid operation {operation}: {message}")]
    InvalidOperation {
        operation: String,
        index: usize,
        message: String,
    },
    #[error("{what} `{value}` is used by more than one operation: {}", operations.join(", "))]
    Duplicate {
        /// `operation id`, `tempId` or `semanticId`.
        what: &'static str,
        value: String,
        operations: Vec<String>,
    },
    #[error("missing dependency: {}", missing.iter().map(|m| format!("{} references unknown {} `{}`", m.operation, m.kind, m.reference)).collect::<Vec<_>>().join("; "))]
    MissingDependency { missing: Vec<Missing> },
    #[error("cyclic dependency: {}", cycles.iter().map(|c| cycle_path(c).join(" -> ")).collect::<Vec<_>>().join("; "))]
    CyclicDependency {
        /// Each cycle as its steps; the last step depends on the first.
        cycles: Vec<Vec<CycleStep>>,
        /// Operations not in a cycle that wait on one.
        blocked: Vec<String>,
    },
    #[error("operation {operation} (chunk {chunk}) failed: {message}")]
    ChunkExecution {
        chunk: usize,
        operation: String,
        description: String,
        /// A stable code: `node_not_found`, `edge_not_found`,
        /// `unknown_node_type`, `invalid_relationship`, ...
        reason: String,
        message: String,
    },
    #[error("nothing to {0} in graph `{1}`")]
    NothingTo(&'static str, String),
    #[error("cannot {action} change {entry} of graph `{graph}`: {message}")]
    Conflict {
        action: &'static str,
        graph: String,
        entry: i64,
        message: String,
    },
    #[error(transparent)]
    Ontology(crate::ontology::OntologyError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<crate::ontology::OntologyError> for OperationError {
    fn from(e: crate::ontology::OntologyError) -> Self {
        match e {
            crate::ontology::OntologyError::Store(s) => OperationError::Store(s),
            other => OperationError::Ontology(other),
        }
    }
}

/// A cycle's operation ids with the first repeated at the end:
/// `[op-1, op-2, op-1]` reads "op-1 depends on op-2 depends on op-1".
pub fn cycle_path(cycle: &[CycleStep]) -> Vec<String> {
    let mut path: Vec<String> = cycle.iter().map(|s| s.operation.clone()).collect();
    if let Some(first) = path.first().cloned() {
        path.push(first);
    }
    path
}

impl OperationError {
    /// The seed's class name of this error.
    pub fn kind(&self) -> &'static str {
        match self {
            OperationError::InvalidResponse { .. } => "InvalidResponseError",
            OperationError::InvalidOperation { .. } => "InvalidOperationError",
            OperationError::Duplicate { .. } => "DuplicateIdError",
            OperationError::MissingDependency { .. } => "MissingDependencyError",
            OperationError::CyclicDependency { .. } => "CyclicDependencyError",
            OperationError::ChunkExecution { .. } => "ChunkExecutionError",
            OperationError::NothingTo(..) => "NothingToDoError",
            OperationError::Conflict { .. } => "ConflictError",
            OperationError::Ontology(_) => "OntologyError",
            OperationError::Store(_) => "StorageError",
        }
    }

    /// Whether the LLM's response was at fault (as opposed to the store or
    /// the undo/redo state).
    pub fn is_response_error(&self) -> bool {
        !matches!(
            self,
            OperationError::NothingTo(..)
                | OperationError::Conflict { .. }
                | OperationError::Ontology(_)
                | OperationError::Store(_)
        )
    }

    /// The error object (seed 001 §7).
    pub fn to_json(&self) -> Value {
        let mut v = match self {
            OperationError::InvalidResponse { message } => json!({
                "message": message,
            }),
            OperationError::InvalidOperation {
                operation,
                index,
                message,
            } => json!({
                "message": message,
                "operation": operation,
                "index": index,
            }),
            OperationError::Duplicate {
                what,
                value,
                operations,
            } => json!({
                "message": format!("{what} `{value}` is used by more than one operation"),
                "field": what,
                "value": value,
                "operations": operations,
            }),
            OperationError::MissingDependency { missing } => {
                let first = &missing[0].operation;
                json!({
                    "message": "Operations reference operations, tempIds or semantic IDs that do not exist",
                    "operation": first,
                    "missingDeps": missing
                        .iter()
                        .filter(|m| &m.operation == first)
                        .map(|m| m.reference.clone())
                        .collect::<Vec<_>>(),
                    "missing": missing
                        .iter()
                        .map(|m| json!({"operation": m.operation, "kind": m.kind, "reference": m.reference}))
                        .collect::<Vec<_>>(),
                })
            }
            OperationError::CyclicDependency { cycles, blocked } => {
                let mut ops: Vec<String> = Vec::new();
                for c in cycles {
                    for s in c {
                        if !ops.contains(&s.operation) {
                            ops.push(s.operation.clone());
                        }
                    }
                }
                json!({
                    "message": "Cyclic dependency detected in operations",
                    "operations": ops,
                    "cycles": cycles.iter().map(|c| cycle_path(c)).collect::<Vec<_>>(),
                    "blocked": blocked,
                })
            }
            OperationError::ChunkExecution {
                chunk,
                operation,
                reason,
                message,
                ..
            } => json!({
                "message": message,
                "chunk": chunk,
                "operation": operation,
                "reason": reason,
            }),
            OperationError::NothingTo(action, graph) => json!({
                "message": self.to_string(),
                "action": action,
                "graph": graph,
            }),
            OperationError::Conflict {
                action,
                graph,
                entry,
                message,
            } => json!({
                "message": message,
                "action": action,
                "graph": graph,
                "entry": entry,
            }),
            OperationError::Ontology(e) => json!({ "message": e.to_string() }),
            OperationError::Store(e) => json!({ "message": e.to_string() }),
        };
        let obj = v.as_object_mut().expect("json! object");
        let mut out = serde_json::Map::new();
        out.insert("error".into(), Value::String(self.kind().into()));
        out.append(obj);
        if self.is_response_error() {
            out.insert("llmFeedback".into(), Value::String(self.feedback()));
        }
        Value::Object(out)
    }

    /// Text for the LLM, in the style of seed 001 §7.1.
    pub fn feedback(&self) -> String {
        match self {
            OperationError::CyclicDependency { cycles, blocked } => {
                let mut s = String::from(
                    "❌ Error: Cannot create operations - cyclic dependency detected.\n\nThe LLM tried to create:\n",
                );
                for c in cycles {
                    for (i, step) in c.iter().enumerate() {
                        let next = &c[(i + 1) % c.len()];
                        s.push_str(&format!(
                            "- {} depends on {} ({})\n",
                            step.description, next.description, step.via
                        ));
                    }
                }
                if !blocked.is_empty() {
                    s.push_str(&format!(
                        "\nWaiting on the cycle: {}.\n",
                        blocked.join(", ")
                    ));
                }
                s.push_str("\nThis is impossible. Please regenerate without circular dependencies.");
                s
            }
            OperationError::MissingDependency { missing } => {
                let mut s = String::from(
                    "❌ Error: Cannot execute operations - missing dependencies.\n\n",
                );
                for m in missing {
                    let hint = match m.kind {
                        "operation" => "no operation has this id",
                        "tempId" => "no create operation in this response has this tempId",
                        _ if crate::ontology::semantic::parse(&m.reference).is_err() => {
                            "it is not a semantic ID, and not the name of exactly one node of the graph"
                        }
                        _ => "no node in the graph has this semantic ID and no create in this response proposes it",
                    };
                    s.push_str(&format!(
                        "- {} references {} `{}`: {hint}\n",
                        m.operation, m.kind, m.reference
                    ));
                }
                s.push_str("\nUse only ids from the graph context or created in the same response, then regenerate.");
                s
            }
            OperationError::ChunkExecution {
                description,
                message,
                ..
            } => format!(
                "❌ Error: Operation {description} cannot be executed: {message}.\n\nNo operation of the response was applied. Please regenerate the operations with this fixed."
            ),
            other => format!(
                "❌ Error: {other}.\n\nNo operation of the response was applied. Please regenerate the response with this fixed."
            ),
        }
    }
}
