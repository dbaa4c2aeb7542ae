//! The JSON Canvas 1.0 model: nodes and edges over their raw JSON objects.
//!
//! Each node and edge keeps the object it was read from (`raw`, a
//! `serde_json::Map` in insertion order), and the typed view graphctx needs
//! (id, kind, geometry, sides) is parsed from it once. Writing emits the raw
//! objects, so fields graphctx does not understand, and the order of keys,
//! nodes and edges, survive a read → write round trip unchanged.
//!
//! Validation is the spec's: every node needs a string `id` and `type` and
//! numeric `x`, `y`, `width`, `height`; text nodes a `text`, file nodes a
//! `file`, link nodes a `url`; every edge an `id`, `fromNode` and `toNode`.
//! Ids must be unique. Optional fields of the wrong type are ignored (and
//! kept). Node types outside the spec are kept as [`NodeKind::Other`].
//!
//! Files are written in Obsidian's layout (tab-indented, one node or edge
//! per line), through a temporary file in the same directory that is
//! renamed over the original: a crash leaves the old file or the new one,
//! never a truncated canvas.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{CanvasError, INLINE};

/// Where an edge attaches to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Top,
    Right,
    Bottom,
    Left,
}

impl Side {
    pub fn parse(s: &str) -> Option<Side> {
        match s {
            "top" => Some(Side::Top),
            "right" => Some(Side::Right),
            "bottom" => Some(Side::Bottom),
            "left" => Some(Side::Left),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Side::Top => "top",
            Side::Right => "right",
            Side::Bottom => "bottom",
            Side::Left => "left",
        }
    }

    /// Left and right: the sides horizontal context hangs on.
    pub fn is_horizontal(self) -> bool {
        matches!(self, Side::Left | Side::Right)
    }
}

/// A node's box in canvas pixels (y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl Rect {
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    pub fn center(&self) -> (f64, f64) {
        (self.x + self.width / 2.0, self.y + self.height / 2.0)
    }

    /// Whether `other` lies entirely inside this box (edges may touch).
    pub fn contains(&self, other: &Rect) -> bool {
        other.x >= self.x
            && other.y >= self.y
            && other.right() <= self.right()
            && other.bottom() <= self.bottom()
    }

    /// Whether the boxes overlap once this one is grown by `margin` on
    /// every side (boxes that merely touch do not overlap at margin 0).
    pub fn overlaps(&self, other: &Rect, margin: f64) -> bool {
        self.x - margin < other.right()
            && other.x < self.right() + margin
            && self.y - margin < other.bottom()
            && other.y < self.bottom() + margin
    }

    /// The side of this box that faces `other`: along the axis on which
    /// the centres are further apart, relative to the boxes' combined half
    /// extents (so wide cards side by side face left/right, stacked cards
    /// top/bottom). Used when an edge leaves a side unspecified.
    pub fn side_facing(&self, other: &Rect) -> Side {
        let (ax, ay) = self.center();
        let (bx, by) = other.center();
        let (dx, dy) = (bx - ax, by - ay);
        let half_w = ((self.width + other.width) / 2.0).max(1.0);
        let half_h = ((self.height + other.height) / 2.0).max(1.0);
        if (dx / half_w).abs() > (dy / half_h).abs() {
            if dx < 0.0 {
                Side::Left
            } else {
                Side::Right
            }
        } else if dy < 0.0 {
            Side::Top
        } else {
            Side::Bottom
        }
    }
}

/// What a node shows.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    Text {
        text: String,
    },
    /// `file` is relative to the vault root; `subpath` starts with `#`.
    File {
        file: String,
        subpath: Option<String>,
    },
    Link {
        url: String,
    },
    Group {
        label: Option<String>,
    },
    /// A node type outside JSON Canvas 1.0, kept as it is.
    Other(String),
}

impl NodeKind {
    /// The `type` string: `text`, `file`, `link`, `group` or the other type.
    pub fn type_name(&self) -> &str {
        match self {
            NodeKind::Text { .. } => "text",
            NodeKind::File { .. } => "file",
            NodeKind::Link { .. } => "link",
            NodeKind::Group { .. } => "group",
            NodeKind::Other(t) => t,
        }
    }
}

/// A canvas node: its raw JSON object and the parsed view of it.
#[derive(Debug, Clone)]
pub struct Node {
    id: String,
    kind: NodeKind,
    rect: Rect,
    color: Option<String>,
    raw: Map<String, Value>,
}

impl Node {
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn kind(&self) -> &NodeKind {
        &self.kind
    }

    pub fn rect(&self) -> Rect {
        self.rect
    }

    /// `"1"`–`"6"` (Obsidian's palette) or a hex colour.
    pub fn color(&self) -> Option<&str> {
        self.color.as_deref()
    }

    /// The JSON object as read (or as built), unknown fields included.
    pub fn raw(&self) -> &Map<String, Value> {
        &self.raw
    }

    pub fn is_group(&self) -> bool {
        matches!(self.kind, NodeKind::Group { .. })
    }

    /// A new text node (fields in Obsidian's order).
    pub fn text(id: &str, text: &str, rect: Rect, color: Option<&str>) -> Node {
        let mut raw = Map::new();
        raw.insert("id".into(), id.into());
        raw.insert("type".into(), "text".into());
        raw.insert("text".into(), text.into());
        raw.insert("x".into(), number(rect.x));
        raw.insert("y".into(), number(rect.y));
        raw.insert("width".into(), number(rect.width));
        raw.insert("height".into(), number(rect.height));
        if let Some(c) = color {
            raw.insert("color".into(), c.into());
        }
        Node::from_raw(raw).expect("a node built from valid parts")
    }

    /// Parse a node object; the error names the missing or mistyped field.
    pub fn from_raw(raw: Map<String, Value>) -> Result<Node, String> {
        let id = req_str(&raw, "id")?.to_string();
        let ty = req_str(&raw, "type").map_err(|e| format!("node '{id}': {e}"))?;
        let field = |name: &str| -> Result<String, String> {
            req_str(&raw, name)
                .map(str::to_string)
                .map_err(|e| format!("{ty} node '{id}': {e}"))
        };
        let kind = match ty {
            "text" => NodeKind::Text {
                text: field("text")?,
            },
            "file" => NodeKind::File {
                file: field("file")?,
                subpath: opt_str(&raw, "subpath"),
            },
            "link" => NodeKind::Link { url: field("url")? },
            "group" => NodeKind::Group {
                label: opt_str(&raw, "label"),
            },
            other => NodeKind::Other(other.to_string()),
        };
        let num = |name: &str| -> Result<f64, String> {
            raw.get(name)
                .and_then(Value::as_f64)
                .ok_or_else(|| format!("node '{id}': '{name}' must be a number"))
        };
        let rect = Rect {
            x: num("x")?,
            y: num("y")?,
            width: num("width")?,
            height: num("height")?,
        };
        let color = opt_str(&raw, "color");
        Ok(Node {
            id,
            kind,
            rect,
            color,
            raw,
        })
    }
}

/// A canvas edge: its raw JSON object and the parsed view of it.
#[derive(Debug, Clone)]
pub struct Edge {
    id: String,
    from_node: String,
    from_side: Option<Side>,
    to_node: String,
    to_side: Option<Side>,
    label: Option<String>,
    color: Option<String>,
    raw: Map<String, Value>,
}

impl Edge {
    pub fn id(&self) -> &str {
        &self.id
    }
    pub fn from_node(&self) -> &str {
        &self.from_node
    }
    pub fn from_side(&self) -> Option<Side> {
        self.from_side
    }
    pub fn to_node(&self) -> &str {
        &self.to_node
    }
    pub fn to_side(&self) -> Option<Side> {
        self.to_side
    }
    pub fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
    pub fn color(&self) -> Option<&str> {
        self.color.as_deref()
    }
    pub fn raw(&self) -> &Map<String, Value> {
        &self.raw
    }

    /// A new edge (fields in Obsidian's order).
    pub fn new(id: &str, from: &str, from_side: Side, to: &str, to_side: Side) -> Edge {
        let mut raw = Map::new();
        raw.insert("id".into(), id.into());
        raw.insert("fromNode".into(), from.into());
        raw.insert("fromSide".into(), from_side.as_str().into());
        raw.insert("toNode".into(), to.into());
        raw.insert("toSide".into(), to_side.as_str().into());
        Edge::from_raw(raw).expect("an edge built from valid parts")
    }

    pub fn from_raw(raw: Map<String, Value>) -> Result<Edge, String> {
        let id = req_str(&raw, "id")?.to_string();
        let end = |name: &str| -> Result<String, String> {
            req_str(&raw, name)
                .map(str::to_string)
                .map_err(|e| format!("edge '{id}': {e}"))
        };
        let side = |name: &str| raw.get(name).and_then(Value::as_str).and_then(Side::parse);
        Ok(Edge {
            from_node: end("fromNode")?,
            to_node: end("toNode")?,
            from_side: side("fromSide"),
            to_side: side("toSide"),
            label: opt_str(&raw, "label"),
            color: opt_str(&raw, "color"),
            id,
            raw,
        })
    }
}

/// A whole canvas.
#[derive(Debug, Clone)]
pub struct Canvas {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// The top-level object; `nodes` and `edges` hold placeholders that
    /// keep their position among other top-level keys.
    top: Map<String, Value>,
    node_index: HashMap<String, usize>,
    edge_ids: HashMap<String, usize>,
    origin: String,
}

impl Default for Canvas {
    fn default() -> Self {
        Canvas::new()
    }
}

impl Canvas {
    /// An empty canvas (`{"nodes":[],"edges":[]}`).
    pub fn new() -> Canvas {
        let mut top = Map::new();
        top.insert("nodes".into(), Value::Null);
        top.insert("edges".into(), Value::Null);
        Canvas {
            nodes: Vec::new(),
            edges: Vec::new(),
            top,
            node_index: HashMap::new(),
            edge_ids: HashMap::new(),
            origin: INLINE.to_string(),
        }
    }

    /// Parse canvas JSON text.
    pub fn parse(text: &str) -> Result<Canvas, CanvasError> {
        Canvas::parse_named(text, INLINE)
    }

    /// Read and parse a `.canvas` file.
    pub fn load(path: &Path) -> Result<Canvas, CanvasError> {
        let text = std::fs::read_to_string(path).map_err(|e| CanvasError::Read {
            path: path.display().to_string(),
            source: e,
        })?;
        Canvas::parse_named(&text, &path.display().to_string())
    }

    fn parse_named(text: &str, origin: &str) -> Result<Canvas, CanvasError> {
        let format = |message: String| CanvasError::Format {
            path: origin.to_string(),
            message,
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // An empty file is an empty canvas (Obsidian creates them so).
        let value: Value = if text.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_str(text).map_err(|e| CanvasError::Json {
                path: origin.to_string(),
                message: e.to_string(),
            })?
        };
        let Value::Object(mut top) = value else {
            return Err(format("the top level must be an object".into()));
        };
        let mut canvas = Canvas {
            nodes: Vec::new(),
            edges: Vec::new(),
            top: Map::new(),
            node_index: HashMap::new(),
            edge_ids: HashMap::new(),
            origin: origin.to_string(),
        };
        for (i, item) in take_array(&mut top, "nodes")
            .map_err(format)?
            .into_iter()
            .enumerate()
        {
            let Value::Object(raw) = item else {
                return Err(format(format!("node {i} is not an object")));
            };
            let node = Node::from_raw(raw).map_err(|e| format(format!("node {i}: {e}")))?;
            canvas.push_node(node).map_err(format)?;
        }
        for (i, item) in take_array(&mut top, "edges")
            .map_err(format)?
            .into_iter()
            .enumerate()
        {
            let Value::Object(raw) = item else {
                return Err(format(format!("edge {i} is not an object")));
            };
            let edge = Edge::from_raw(raw).map_err(|e| format(format!("edge {i}: {e}")))?;
            canvas.push_edge(edge).map_err(format)?;
        }
        canvas.top = top;
        Ok(canvas)
    }

    /// The file (or [`INLINE`]) the canvas was read from, for messages.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn edges(&self) -> &[Edge] {
        &self.edges
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.node_index.get(id).map(|&i| &self.nodes[i])
    }

    /// Position of a node in file order.
    pub fn node_position(&self, id: &str) -> Option<usize> {
        self.node_index.get(id).copied()
    }

    /// The node, or a `NoSuchNode` error naming the canvas.
    pub fn require(&self, id: &str) -> Result<&Node, CanvasError> {
        self.node(id).ok_or_else(|| CanvasError::NoSuchNode {
            id: id.to_string(),
            path: self.origin.clone(),
        })
    }

    /// Whether a node or an edge has this id.
    pub fn id_in_use(&self, id: &str) -> bool {
        self.node_index.contains_key(id) || self.edge_ids.contains_key(id)
    }

    /// Append a node; its id must be new.
    pub fn push_node(&mut self, node: Node) -> Result<(), String> {
        if self.node_index.contains_key(&node.id) {
            return Err(format!("two nodes have the id '{}'", node.id));
        }
        self.node_index.insert(node.id.clone(), self.nodes.len());
        self.nodes.push(node);
        Ok(())
    }

    /// Append an edge; its id must be new. (Edges to nodes that do not
    /// exist are kept — Obsidian keeps them too — and skipped by readers.)
    pub fn push_edge(&mut self, edge: Edge) -> Result<(), String> {
        if self.edge_ids.contains_key(&edge.id) {
            return Err(format!("two edges have the id '{}'", edge.id));
        }
        self.edge_ids.insert(edge.id.clone(), self.edges.len());
        self.edges.push(edge);
        Ok(())
    }

    /// The canvas as JSON text in Obsidian's layout: the top-level object
    /// tab-indented, one node or edge object per line, every object's keys
    /// in the order they were read. No trailing newline.
    pub fn to_json_string(&self) -> String {
        let mut out = String::from("{");
        let mut first = true;
        let mut member = |out: &mut String, key: &str, body: &str| {
            out.push_str(if first { "\n\t" } else { ",\n\t" });
            first = false;
            out.push_str(&serde_json::to_string(key).unwrap_or_default());
            out.push(':');
            out.push_str(body);
        };
        let nodes = || list(self.nodes.iter().map(|n| &n.raw));
        let edges = || list(self.edges.iter().map(|e| &e.raw));
        for (key, value) in &self.top {
            let body = match key.as_str() {
                "nodes" => nodes(),
                "edges" => edges(),
                _ => serde_json::to_string(value).unwrap_or_default(),
            };
            member(&mut out, key, &body);
        }
        if !self.top.contains_key("nodes") && !self.nodes.is_empty() {
            member(&mut out, "nodes", &nodes());
        }
        if !self.top.contains_key("edges") && !self.edges.is_empty() {
            member(&mut out, "edges", &edges());
        }
        out.push_str(if first { "}" } else { "\n}" });
        out
    }

    /// Write the canvas to `path` atomically (see [`write_atomic`]).
    pub fn save(&self, path: &Path) -> Result<(), CanvasError> {
        let text = self.to_json_string();
        write_atomic(path, |f| f.write_all(text.as_bytes())).map_err(|e| CanvasError::Write {
            path: path.display().to_string(),
            source: e,
        })
    }
}

fn list<'a>(items: impl Iterator<Item = &'a Map<String, Value>>) -> String {
    let lines: Vec<String> = items
        .map(|m| format!("\t\t{}", serde_json::to_string(m).unwrap_or_default()))
        .collect();
    if lines.is_empty() {
        "[]".to_string()
    } else {
        format!("[\n{}\n\t]", lines.join(",\n"))
    }
}

/// Remove `key` from the top-level object, leaving a placeholder at its
/// position; a missing or null key is an empty list.
fn take_array(top: &mut Map<String, Value>, key: &str) -> Result<Vec<Value>, String> {
    match top.get_mut(key) {
        None => Ok(Vec::new()),
        Some(v) => match std::mem::take(v) {
            Value::Array(items) => Ok(items),
            Value::Null => Ok(Vec::new()),
            _ => Err(format!("'{key}' must be a list")),
        },
    }
}

fn req_str<'a>(raw: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match raw.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("'{name}' must be a string")),
        None => Err(format!("missing '{name}'")),
    }
}

fn opt_str(raw: &Map<String, Value>, name: &str) -> Option<String> {
    raw.get(name).and_then(Value::as_str).map(str::to_string)
}

/// Whole numbers as JSON integers (as Obsidian writes them).
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// Replace `path` with what `write` puts into a new file, atomically: the
/// bytes go to a temporary file in the same directory (so the rename never
/// crosses a file system), which is flushed to disk, given the original's
/// permissions and renamed over `path`; the directory is then synced.
/// A failure at any step removes the temporary file and leaves `path` as
/// it was; a crash leaves either the old or the new file. A symlink is
/// followed: the file it points to is replaced, the link stays.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    // Through a symlink: replace the file it points to, keep the link.
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            resolved = std::fs::canonicalize(path)?;
            resolved.as_path()
        }
        _ => path,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "canvas".into());
    let (tmp, mut file) = create_temp(&dir, &name)?;
    let result = (|| {
        write(&mut file)?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    // Make the rename itself durable (best effort: not every platform
    // lets a directory be opened for syncing).
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn create_temp(dir: &Path, name: &str) -> std::io::Result<(std::path::PathBuf, File)> {
    let pid = std::process::id();
    let mut attempt = 0u32;
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let tmp = dir.join(format!(".{name}.{pid}-{nanos:08x}-{attempt}.tmp"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1
            }
            Err(e) => return Err(e),
        }
    }
}
