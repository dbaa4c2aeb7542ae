//! Parsing an LLM response (seed 001 §3.2, §6.1, §11) into [`Operation`]s.
//!
//! The JSON is read by hand from a `serde_json::Value` rather than derived,
//! so that every complaint names the operation (its `id`, or `#N` for the
//! N-th when it has none) and the field that was wrong — the error goes
//! back to the LLM, which can only fix what it is told about.
//!
//! Accepted shapes, all from the seed:
//! - top level: `response` or `textResponse` (the chat text) and
//!   `operations` (missing means none: a pure chat answer);
//! - `create` (`nodeType`, `tempId`, `data` with `Name`, `Descr`, optional
//!   `semanticId` and any further properties; optional nested
//!   `relationships` as in §3.1, expanded into `create-relationship`s);
//! - `update` / `delete` of a node named by `uuid`, `semanticId` or
//!   `tempId` (top level or inside `data`);
//! - `create-relationship` (`relType`, source and target each by
//!   `…TempId`, `…SemanticId` or `…Uuid`);
//! - `delete-relationship` by the edge's `uuid`, or by `relType` + source +
//!   target like a create;
//! - `dependsOn`: ids of operations this one needs (the implied ones —
//!   tempId and semantic-ID references — are added by the chunker).

use serde_json::{Map, Value};

use super::error::OperationError;

/// What an operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    Create,
    Update,
    Delete,
    CreateRelationship,
    DeleteRelationship,
}

impl OpKind {
    pub const ALL: [OpKind; 5] = [
        OpKind::Create,
        OpKind::Update,
        OpKind::Delete,
        OpKind::CreateRelationship,
        OpKind::DeleteRelationship,
    ];

    /// The seed's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Create => "create",
            OpKind::Update => "update",
            OpKind::Delete => "delete",
            OpKind::CreateRelationship => "create-relationship",
            OpKind::DeleteRelationship => "delete-relationship",
        }
    }

    fn parse(s: &str) -> Option<OpKind> {
        if let Some(k) = OpKind::ALL.into_iter().find(|k| k.as_str() == s) {
            return Some(k);
        }
        let norm: String = s
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        match norm.as_str() {
            "create" => Some(OpKind::Create),
            "update" => Some(OpKind::Update),
            "delete" => Some(OpKind::Delete),
            "createrelationship" => Some(OpKind::CreateRelationship),
            "deleterelationship" => Some(OpKind::DeleteRelationship),
            _ => None,
        }
    }

    pub fn is_relationship(self) -> bool {
        matches!(
            self,
            OpKind::CreateRelationship | OpKind::DeleteRelationship
        )
    }

    pub fn is_delete(self) -> bool {
        matches!(self, OpKind::Delete | OpKind::DeleteRelationship)
    }
}

/// How an operation names a node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NodeRef {
    /// A node created by an operation of the same response.
    Temp(String),
    /// `Name.TY.NNN`: an existing node, or one a create of the same
    /// response proposes in `data.semanticId`.
    Semantic(String),
    /// An existing node's UUID.
    Uuid(String),
}

impl NodeRef {
    pub fn kind(&self) -> &'static str {
        match self {
            NodeRef::Temp(_) => "tempId",
            NodeRef::Semantic(_) => "semanticId",
            NodeRef::Uuid(_) => "uuid",
        }
    }

    pub fn value(&self) -> &str {
        match self {
            NodeRef::Temp(s) | NodeRef::Semantic(s) | NodeRef::Uuid(s) => s,
        }
    }
}

impl std::fmt::Display for NodeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind(), self.value())
    }
}

/// One operation, as the LLM wrote it (references not yet resolved).
#[derive(Debug, Clone)]
pub struct Operation {
    /// Position in the response's `operations` (0-based; nested
    /// relationships count after their parent).
    pub index: usize,
    /// The operation's `id`, or `#N` (1-based position) when it has none.
    pub id: String,
    pub kind: OpKind,
    /// `nodeType` (creates; optional check on update/delete).
    pub node_type: Option<String>,
    /// `tempId` a create introduces.
    pub temp_id: Option<String>,
    /// The node an update or delete acts on.
    pub subject: Option<NodeRef>,
    /// `relType` of a relationship operation.
    pub rel_type: Option<String>,
    pub source: Option<NodeRef>,
    pub target: Option<NodeRef>,
    /// The edge's UUID for a delete-relationship by UUID.
    pub edge_uuid: Option<String>,
    /// `data` without the reference fields (`semanticId`, `uuid`).
    pub data: Map<String, Value>,
    /// The semantic ID a create proposes (`data.semanticId`).
    pub semantic_id: Option<String>,
    /// `dependsOn` as written.
    pub depends_on: Vec<String>,
}

impl Operation {
    /// `Name` from `data`, if any.
    pub fn name(&self) -> Option<&str> {
        self.data.get("Name").and_then(Value::as_str)
    }

    /// A short human description for error feedback:
    /// `op-001 (create ACTOR Customer)`.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            OpKind::Create => format!(
                "create {} {}",
                self.node_type.as_deref().unwrap_or("?"),
                self.name().unwrap_or("?")
            ),
            OpKind::Update | OpKind::Delete => format!(
                "{} {}",
                self.kind.as_str(),
                self.subject
                    .as_ref()
                    .map(|r| r.value().to_string())
                    .unwrap_or_else(|| "?".into())
            ),
            OpKind::CreateRelationship | OpKind::DeleteRelationship => match &self.edge_uuid {
                Some(u) => format!("{} {u}", self.kind.as_str()),
                None => format!(
                    "{} {} -{}-> {}",
                    self.kind.as_str(),
                    self.source.as_ref().map(NodeRef::value).unwrap_or("?"),
                    self.rel_type.as_deref().unwrap_or("?"),
                    self.target.as_ref().map(NodeRef::value).unwrap_or("?"),
                ),
            },
        };
        format!("{} ({what})", self.id)
    }

    /// Every node reference this operation makes (subject, source, target).
    pub fn node_refs(&self) -> impl Iterator<Item = &NodeRef> {
        self.subject
            .iter()
            .chain(self.source.iter())
            .chain(self.target.iter())
    }
}

/// A parsed LLM response.
#[derive(Debug, Clone, Default)]
pub struct Response {
    /// The chat text (`response` or `textResponse`).
    pub text: Option<String>,
    pub operations: Vec<Operation>,
}

/// Parse a response from JSON text.
pub fn parse_response(text: &str) -> Result<Response, OperationError> {
    let value: Value = serde_json::from_str(text).map_err(|e| OperationError::InvalidResponse {
        message: format!("the response is not valid JSON: {e}"),
    })?;
    parse_value(value)
}

/// Parse a response from a JSON value.
pub fn parse_value(mut value: Value) -> Result<Response, OperationError> {
    let kind = type_name(&value);
    let obj = value
        .as_object_mut()
        .ok_or_else(|| OperationError::InvalidResponse {
            message: format!(
                "the response must be a JSON object with `response` and `operations`, not {kind}"
            ),
        })?;
    let text = match (obj.get("textResponse"), obj.get("response")) {
        (Some(Value::String(s)), _) | (None | Some(Value::Null), Some(Value::String(s))) => {
            Some(s.clone())
        }
        (None | Some(Value::Null), None | Some(Value::Null)) => None,
        (Some(v), _) | (_, Some(v)) => {
            return Err(OperationError::InvalidResponse {
                message: format!(
                    "`response`/`textResponse` must be a string, not {}",
                    type_name(v)
                ),
            })
        }
    };
    let raw = match obj.get_mut("operations") {
        None | Some(Value::Null) => &mut [][..],
        Some(Value::Array(a)) => &mut a[..],
        Some(v) => {
            return Err(OperationError::InvalidResponse {
                message: format!("`operations` must be an array, not {}", type_name(v)),
            })
        }
    };
    let mut operations = Vec::with_capacity(raw.len());
    for (pos, v) in raw.iter_mut().enumerate() {
        parse_operation(pos, v, &mut operations)?;
    }
    Ok(Response { text, operations })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads fields of one operation object, naming the operation in errors.
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    id: String,
    index: usize,
}

impl Fields<'_> {
    fn err(&self, message: String) -> OperationError {
        OperationError::InvalidOperation {
            operation: self.id.clone(),
            index: self.index,
            message,
        }
    }

    /// An optional non-empty string field.
    fn str(&self, key: &str) -> Result<Option<String>, OperationError> {
        str_in(self.obj, key).map_err(|m| self.err(m))
    }

    /// A node reference from `{prefix}TempId` / `{prefix}SemanticId` /
    /// `{prefix}Uuid` (prefix empty: `tempId`, `semanticId`, `uuid`).
    fn node_ref(&self, prefix: &str) -> Result<Option<NodeRef>, OperationError> {
        node_ref_in(self.obj, prefix).map_err(|m| self.err(m))
    }
}

fn str_in(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Err(format!("`{key}` is empty")),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(format!("`{key}` must be a string, not {}", type_name(v))),
    }
}

fn node_ref_in(obj: &Map<String, Value>, prefix: &str) -> Result<Option<NodeRef>, String> {
    // A UUID is the most specific; a semantic ID names an existing node or
    // a create's proposal; a tempId only a create of this response.
    let [uuid, sid, temp] = match prefix {
        "source" => ["sourceUuid", "sourceSemanticId", "sourceTempId"],
        "target" => ["targetUuid", "targetSemanticId", "targetTempId"],
        _ => ["uuid", "semanticId", "tempId"],
    };
    if let Some(u) = str_in(obj, uuid)? {
        return Ok(Some(NodeRef::Uuid(u)));
    }
    if let Some(s) = str_in(obj, sid)? {
        return Ok(Some(NodeRef::Semantic(s)));
    }
    if let Some(t) = str_in(obj, temp)? {
        return Ok(Some(NodeRef::Temp(t)));
    }
    Ok(None)
}

/// One operation of a response (and the relationships nested in a
/// create, as operations of their own), appended to `out`.
fn parse_operation(
    pos: usize,
    value: &mut Value,
    out: &mut Vec<Operation>,
) -> Result<(), OperationError> {
    // `data` is moved out rather than copied (the rest is only read).
    let data_value = value.as_object_mut().and_then(|o| {
        if o.contains_key("data") {
            o.get_mut("data")
        } else {
            o.get_mut("properties")
        }
        .map(Value::take)
    });
    let f = operation_fields(pos, &*value, out.len())?;
    let kind = operation_kind(&f)?;
    let mut data = match data_value {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m,
        Some(v) => return Err(f.err(format!("`data` must be an object, not {}", type_name(&v)))),
    };
    let depends_on = depends_on(&f)?;
    let mut op = Operation {
        index: f.index,
        id: f.id.clone(),
        kind,
        node_type: f.str("nodeType")?,
        temp_id: None,
        subject: None,
        rel_type: None,
        source: None,
        target: None,
        edge_uuid: None,
        data: Map::new(),
        semantic_id: None,
        depends_on,
    };
    let nested = match kind {
        OpKind::Create => read_create(&f, &mut op, &mut data)?,
        OpKind::Update | OpKind::Delete => {
            read_subject(&f, &mut op, &mut data)?;
            Vec::new()
        }
        OpKind::CreateRelationship | OpKind::DeleteRelationship => {
            read_relationship(&f, &mut op)?;
            Vec::new()
        }
    };
    op.data = data;
    let parent_id = op.id.clone();
    out.push(op);
    push_nested_relationships(&parent_id, nested, out)
}

/// An operation's object, its id (given, or `#n` by position) and index.
fn operation_fields(pos: usize, value: &Value, index: usize) -> Result<Fields<'_>, OperationError> {
    let auto_id = || format!("#{}", pos + 1);
    let obj = value
        .as_object()
        .ok_or_else(|| OperationError::InvalidOperation {
            operation: auto_id(),
            index,
            message: format!("an operation must be an object, not {}", type_name(value)),
        })?;
    let id = match obj.get("id") {
        None | Some(Value::Null) => auto_id(),
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(v) => {
            return Err(OperationError::InvalidOperation {
                operation: auto_id(),
                index,
                message: format!("`id` must be a non-empty string, not {}", type_name(v)),
            })
        }
    };
    Ok(Fields { obj, id, index })
}

/// The operation's `type`.
fn operation_kind(f: &Fields) -> Result<OpKind, OperationError> {
    match f.obj.get("type") {
        Some(Value::String(s)) => OpKind::parse(s).ok_or_else(|| {
            f.err(format!(
                "unknown operation type `{s}`; use one of {}",
                OpKind::ALL.map(OpKind::as_str).join(", ")
            ))
        }),
        None | Some(Value::Null) => Err(f.err(format!(
            "`type` is missing; use one of {}",
            OpKind::ALL.map(OpKind::as_str).join(", ")
        ))),
        Some(v) => Err(f.err(format!("`type` must be a string, not {}", type_name(v)))),
    }
}

/// The ids of the operations it depends on (`dependsOn`).
fn depends_on(f: &Fields) -> Result<Vec<String>, OperationError> {
    match f.obj.get("dependsOn") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|d| match d {
                Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                v => Err(f.err(format!(
                    "`dependsOn` must list operation ids (strings), found {}",
                    type_name(v)
                ))),
            })
            .collect(),
        Some(v) => Err(f.err(format!(
            "`dependsOn` must be an array of operation ids, not {}",
            type_name(v)
        ))),
    }
}

/// A create: its node type, temp and semantic ids and name; the
/// relationships nested in it, by position, are returned.
fn read_create<'a>(
    f: &Fields<'a>,
    op: &mut Operation,
    data: &mut Map<String, Value>,
) -> Result<Vec<(usize, &'a Value)>, OperationError> {
    if op.node_type.is_none() {
        return Err(f.err("a create needs `nodeType` (SYS, ACTOR, UC, ...)".into()));
    }
    op.temp_id = f.str("tempId")?;
    op.semantic_id = match f.str("semanticId")? {
        Some(s) => Some(s),
        None => str_in(data, "semanticId").map_err(|m| f.err(format!("data: {m}")))?,
    };
    data.remove("semanticId");
    match data.get("Name") {
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        Some(Value::String(_)) => {
            return Err(f.err("a create needs a non-empty `data.Name`".into()))
        }
        None | Some(Value::Null) => return Err(f.err("a create needs `data.Name`".into())),
        Some(v) => {
            return Err(f.err(format!(
                "`data.Name` must be a string, not {}",
                type_name(v)
            )))
        }
    }
    let rels = match f.obj.get("relationships") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => &a[..],
        Some(v) => {
            return Err(f.err(format!(
                "`relationships` must be an array, not {}",
                type_name(v)
            )))
        }
    };
    Ok(rels.iter().enumerate().collect())
}

/// An update's or delete's node, given at the top or in its data.
fn read_subject(
    f: &Fields,
    op: &mut Operation,
    data: &mut Map<String, Value>,
) -> Result<(), OperationError> {
    let top = f.node_ref("")?;
    let inner = node_ref_in(data, "").map_err(|m| f.err(format!("data: {m}")))?;
    op.subject = top.or(inner);
    if op.subject.is_none() {
        return Err(f.err(format!(
            "a {} needs the node it acts on: `uuid`, `semanticId` or `tempId`",
            op.kind.as_str()
        )));
    }
    data.remove("uuid");
    data.remove("semanticId");
    data.remove("tempId");
    if op.kind == OpKind::Update && data.is_empty() {
        return Err(f.err("an update needs `data` with the properties to change".into()));
    }
    Ok(())
}

/// A relationship's type and ends (or, for a delete, the edge's uuid).
fn read_relationship(f: &Fields, op: &mut Operation) -> Result<(), OperationError> {
    let kind = op.kind;
    op.rel_type = match f.str("relType")? {
        Some(r) => Some(r),
        None => f.str("relationshipType")?,
    };
    op.source = f.node_ref("source")?;
    op.target = f.node_ref("target")?;
    if kind == OpKind::DeleteRelationship {
        op.edge_uuid = f.str("uuid")?;
    }
    let by_ends = op.rel_type.is_some() && op.source.is_some() && op.target.is_some();
    if by_ends || op.edge_uuid.is_some() {
        return Ok(());
    }
    let mut missing = Vec::new();
    if op.rel_type.is_none() {
        missing.push("`relType`");
    }
    if op.source.is_none() {
        missing.push("the source (`sourceTempId`, `sourceSemanticId` or `sourceUuid`)");
    }
    if op.target.is_none() {
        missing.push("the target (`targetTempId`, `targetSemanticId` or `targetUuid`)");
    }
    let how = if kind == OpKind::DeleteRelationship {
        " (or the edge's `uuid`)"
    } else {
        ""
    };
    Err(f.err(format!(
        "a {} needs {}{how}",
        kind.as_str(),
        missing.join(", ")
    )))
}

/// Seed §3.1: relationships nested in a create become operations of
/// their own right after it, depending on it.
fn push_nested_relationships(
    parent_id: &str,
    nested: Vec<(usize, &Value)>,
    out: &mut Vec<Operation>,
) -> Result<(), OperationError> {
    for (k, r) in nested {
        let id = format!("{parent_id}/rel-{}", k + 1);
        let index = out.len();
        let err = |message: String| OperationError::InvalidOperation {
            operation: id.clone(),
            index,
            message,
        };
        let robj = r.as_object().ok_or_else(|| {
            err(format!(
                "a relationship must be an object, not {}",
                type_name(r)
            ))
        })?;
        let rel_type = match str_in(robj, "type").map_err(&err)? {
            Some(t) => Some(t),
            None => str_in(robj, "relType").map_err(&err)?,
        };
        let source = node_ref_in(robj, "source").map_err(&err)?;
        let target = node_ref_in(robj, "target").map_err(&err)?;
        if rel_type.is_none() || source.is_none() || target.is_none() {
            return Err(err(
                "a nested relationship needs `type`, a source and a target".into(),
            ));
        }
        out.push(Operation {
            index,
            id,
            kind: OpKind::CreateRelationship,
            node_type: None,
            temp_id: None,
            subject: None,
            rel_type,
            source,
            target,
            edge_uuid: None,
            data: Map::new(),
            semantic_id: None,
            depends_on: vec![parent_id.to_string()],
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_11_parses() {
        let r = parse_response(SEED_11).unwrap();
        assert_eq!(
            r.text.as_deref(),
            Some("Ich habe das System 'OrderSystem' mit dem Use Case 'PlaceOrder' erstellt und sie verbunden.")
        );
        assert_eq!(r.operations.len(), 3);
        let rel = &r.operations[2];
        assert_eq!(rel.kind, OpKind::CreateRelationship);
        assert_eq!(rel.source, Some(NodeRef::Temp("temp-ordersystem".into())));
        assert_eq!(rel.depends_on, vec!["op-001", "op-002"]);
        assert_eq!(r.operations[0].name(), Some("OrderSystem"));
    }

    #[test]
    fn missing_ids_get_positions_and_semantic_ids_are_read() {
        let r = parse_response(
            r#"{"response":"x","operations":[
              {"type":"create","nodeType":"FUNC","data":{"semanticId":"ProcessPayment.FN.002","Name":"ProcessPayment","Descr":"d"}},
              {"type":"create-relationship","relType":"compose","sourceSemanticId":"ManageFleet.UC.001","targetSemanticId":"ProcessPayment.FN.002"}]}"#,
        )
        .unwrap();
        assert_eq!(r.operations[0].id, "#1");
        assert_eq!(
            r.operations[0].semantic_id.as_deref(),
            Some("ProcessPayment.FN.002")
        );
        assert!(!r.operations[0].data.contains_key("semanticId"));
        assert_eq!(r.operations[1].id, "#2");
        assert_eq!(
            r.operations[1].target,
            Some(NodeRef::Semantic("ProcessPayment.FN.002".into()))
        );
    }

    #[test]
    fn nested_relationships_become_operations() {
        let r = parse_response(
            r#"{"operations":[{"id":"a","type":"create","nodeType":"UC","tempId":"t1","data":{"Name":"U"},
               "relationships":[{"type":"compose","sourceTempId":"t1","targetTempId":"t2"}]},
               {"id":"b","type":"create","nodeType":"FUNC","tempId":"t2","data":{"Name":"F"}}]}"#,
        )
        .unwrap();
        let ids: Vec<_> = r.operations.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["a", "a/rel-1", "b"]);
        assert_eq!(r.operations[1].depends_on, ["a"]);
    }

    #[test]
    fn errors_name_the_operation_and_field() {
        let cases = [
            (r#"[1]"#, "must be a JSON object"),
            (r#"{"operations":{}}"#, "`operations` must be an array"),
            (
                r#"{"operations":[{"id":"x","type":"make"}]}"#,
                "unknown operation type `make`",
            ),
            (
                r#"{"operations":[{"id":"x","type":"create","data":{"Name":"A"}}]}"#,
                "needs `nodeType`",
            ),
            (
                r#"{"operations":[{"id":"x","type":"create","nodeType":"UC","data":{}}]}"#,
                "needs `data.Name`",
            ),
            (
                r#"{"operations":[{"id":"x","type":"update","data":{"Name":"A"}}]}"#,
                "`uuid`, `semanticId` or `tempId`",
            ),
            (
                r#"{"operations":[{"id":"x","type":"create-relationship","sourceTempId":"a"}]}"#,
                "`relType`",
            ),
            (
                r#"{"operations":[{"id":"x","type":"create","nodeType":"UC","data":{"Name":"A"},"dependsOn":"y"}]}"#,
                "`dependsOn` must be an array",
            ),
        ];
        for (input, expect) in cases {
            let e = parse_response(input).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains(expect), "{input}: {msg}");
            if input.contains("\"id\":\"x\"") {
                assert!(msg.contains('x'), "{msg}");
            }
        }
    }

    pub(crate) const SEED_11: &str = r#"{
      "textResponse": "Ich habe das System 'OrderSystem' mit dem Use Case 'PlaceOrder' erstellt und sie verbunden.",
      "operations": [
        {"id": "op-001", "type": "create", "nodeType": "SYS", "tempId": "temp-ordersystem",
         "data": {"Name": "OrderSystem", "Descr": "System for order management"}, "dependsOn": []},
        {"id": "op-002", "type": "create", "nodeType": "UC", "tempId": "temp-placeorder",
         "data": {"Name": "PlaceOrder", "Descr": "Customer places an order"}, "dependsOn": []},
        {"id": "op-003", "type": "create-relationship", "relType": "compose",
         "sourceTempId": "temp-ordersystem", "targetTempId": "temp-placeorder",
         "dependsOn": ["op-001", "op-002"]}
      ]
    }"#;
}
