//! A canvas as a graph, so the engine's queries (blast radius, cycles,
//! Datalog) run on it.
//!
//! Nodes go into `node` (kind = the node type, name = the first line of
//! the text, the file's name, the URL or the group's label; doc = the text
//! without frontmatter, the vault file's text for file nodes). Edges go
//! into `edge` from `fromNode` to `toNode` with `origin` = the canvas edge
//! id and `rel` = `thread` (a conversation step) or `context` (a side
//! edge), classified as the walk does. `canvas_node`/`canvas_edge` keep
//! the geometry, colours, roles, file positions and raw JSON.
//!
//! An import replaces everything the graph held, in one transaction with
//! the graph's `seq` bumped: a failed import leaves the previous content.
//! Graphs that came from something else (a code index) are refused.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::frontmatter::{self, Role};
use super::model::{Canvas, Node, NodeKind};
use super::walk::{classify, default_vault_root, is_markdown, read_vault_file};
use super::CanvasError;
use crate::store::rows::{
    self, query_rows, CanvasEdgeRow, CanvasNodeRow, EdgeRow, GraphSeq, NodeRow, Str,
};
use crate::store::{queries, Batch, GraphChange, Params, Store, StoreError};

query_rows! {
    /// `queries/canvas_graph_rows.cozo`: the key of every row a graph holds
    /// in `r` (a relation), its key columns after `graph` in `a` to `d`.
    CanvasGraphRows = "canvas_graph_rows" {
        key { r: Str<'a>, a: Str<'a>, b: Str<'a>, c: Str<'a>, d: Str<'a> }
    }
}

/// `graph.source` of an imported canvas starts with this.
pub const SOURCE_PREFIX: &str = "canvas:";
/// Names are cut to this many characters.
pub const NAME_CHARS: usize = 80;

#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Where file nodes' paths start; default: [`default_vault_root`].
    pub vault: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImportSummary {
    pub graph: String,
    pub source: String,
    pub nodes: usize,
    pub edges: usize,
    /// Edges not imported because an end is missing.
    pub skipped_edges: usize,
    /// Rows of an earlier import that were replaced.
    pub replaced_rows: usize,
    pub seq: i64,
    pub warnings: Vec<String>,
}

/// Import the canvas at `path` into `graph`, replacing the graph's earlier
/// content.
pub fn import_canvas(
    store: &Store,
    graph: &str,
    path: &Path,
    opts: &ImportOptions,
) -> Result<ImportSummary, CanvasError> {
    let canvas = Canvas::load(path)?;
    let vault = opts
        .vault
        .clone()
        .unwrap_or_else(|| default_vault_root(path));
    let abs = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let source = format!("{SOURCE_PREFIX}{}", abs.display());

    let (seq, old) = earlier_canvas(store, graph)?;
    let mut batch = Batch::new();
    stage_removal(&mut batch, graph, &old)?;
    let replaced_rows = old.rows.len();

    let mut warnings = Vec::new();
    for (position, node) in canvas.nodes().iter().enumerate() {
        stage_node(&mut batch, graph, position, node, &vault, &mut warnings);
    }
    let (edges, skipped_edges) = stage_edges(&mut batch, graph, &canvas, &mut warnings);
    let seq = store.apply_to_graph(&GraphChange::at(graph, seq).with_source(&source), batch)?;
    Ok(ImportSummary {
        graph: graph.to_string(),
        source,
        nodes: canvas.nodes().len(),
        edges,
        skipped_edges,
        replaced_rows,
        seq,
        warnings,
    })
}

/// The graph's seq (0 when new) and its current rows; an error when the
/// graph holds anything but an earlier canvas import.
fn earlier_canvas(store: &Store, graph: &str) -> Result<(i64, cozo::NamedRows), CanvasError> {
    let rows = store.read(queries::GRAPH_SEQ, Params::new().with("graph", graph))?;
    let (seq, old_source) = match rows::decode_first::<GraphSeq>(&rows).map_err(StoreError::from)? {
        Some(r) => (r.seq, Some(r.source.into_owned())),
        None => (0, None),
    };
    let old = store.read(
        queries::CANVAS_GRAPH_ROWS,
        Params::new().with("graph", graph),
    )?;
    let foreign = match &old_source {
        Some(s) => !s.starts_with(SOURCE_PREFIX),
        None => !old.rows.is_empty(),
    };
    if foreign {
        return Err(CanvasError::GraphInUse {
            graph: graph.to_string(),
            source_desc: match old_source {
                Some(s) if !s.is_empty() => format!("content from {s}"),
                _ => "other content".to_string(),
            },
        });
    }
    Ok((seq, old))
}

/// Stage the deletion of the earlier import's rows (the import replaces
/// the graph's content).
fn stage_removal(batch: &mut Batch, graph: &str, old: &cozo::NamedRows) -> Result<(), CanvasError> {
    for r in rows::decode_rows::<CanvasGraphRows>(old).map_err(StoreError::from)? {
        let id = || vec![graph.into(), r.a.as_ref().into()];
        match r.r.as_ref() {
            "node" => batch.delete_key::<NodeRow>(id()),
            "edge" => batch.delete_key::<EdgeRow>(vec![
                graph.into(),
                r.a.as_ref().into(),
                r.b.as_ref().into(),
                r.c.as_ref().into(),
                r.d.as_ref().into(),
            ]),
            "canvas_node" => batch.delete_key::<CanvasNodeRow>(id()),
            "canvas_edge" => batch.delete_key::<CanvasEdgeRow>(id()),
            _ => {}
        }
    }
    Ok(())
}

/// Stage a canvas node as a graph node and a canvas-node row (its place,
/// role, tags and raw JSON).
fn stage_node(
    batch: &mut Batch,
    graph: &str,
    position: usize,
    node: &Node,
    vault: &Path,
    warnings: &mut Vec<String>,
) {
    let (role, tags, doc) = describe(node, vault, warnings);
    let (file, url) = match node.kind() {
        NodeKind::File { file, .. } => (Some(file.as_str()), None),
        NodeKind::Link { url } => (None, Some(url.as_str())),
        _ => (None, None),
    };
    let rect = node.rect();
    batch.put_row(NodeRow {
        graph: graph.into(),
        id: node.id().into(),
        kind: node.kind().type_name().into(),
        name: name_of(node, &doc).into(),
        doc: doc.into(),
    });
    batch.put_row(CanvasNodeRow {
        graph: graph.into(),
        id: node.id().into(),
        position: position as i64,
        x: rect.x,
        y: rect.y,
        width: rect.width,
        height: rect.height,
        color: node.color().map(Cow::Borrowed),
        role: role.as_str().into(),
        tags: tags.iter().map(|t| Cow::Borrowed(t.as_str())).collect(),
        file: file.map(Cow::Borrowed),
        url: url.map(Cow::Borrowed),
        data: Cow::Owned(serde_json::Value::Object(node.raw().clone())),
    });
}

/// Stage every canvas edge as a canvas-edge row, and as a graph edge when
/// both its ends exist; the counts of graph edges and of skipped edges.
fn stage_edges(
    batch: &mut Batch,
    graph: &str,
    canvas: &Canvas,
    warnings: &mut Vec<String>,
) -> (usize, usize) {
    let mut edges = 0;
    let mut skipped_edges = 0;
    for (position, edge) in canvas.edges().iter().enumerate() {
        let rel = match classify(canvas, edge) {
            Some(class) => {
                edges += 1;
                batch.put_row(EdgeRow {
                    graph: graph.into(),
                    src: edge.from_node().into(),
                    rel: class.rel().into(),
                    dst: edge.to_node().into(),
                    origin: edge.id().into(),
                    weight: 1.0,
                });
                class.rel()
            }
            None => {
                skipped_edges += 1;
                warnings.push(format!(
                    "edge '{}' joins a node that does not exist ({} -> {}); not in the graph",
                    edge.id(),
                    edge.from_node(),
                    edge.to_node()
                ));
                ""
            }
        };
        batch.put_row(CanvasEdgeRow {
            graph: graph.into(),
            id: edge.id().into(),
            position: position as i64,
            from_node: edge.from_node().into(),
            from_side: edge.from_side().map(|s| Cow::Borrowed(s.as_str())),
            to_node: edge.to_node().into(),
            to_side: edge.to_side().map(|s| Cow::Borrowed(s.as_str())),
            rel: rel.into(),
            label: edge.label().map(Cow::Borrowed),
            color: edge.color().map(Cow::Borrowed),
            data: Cow::Owned(serde_json::Value::Object(edge.raw().clone())),
        });
    }
    (edges, skipped_edges)
}

/// Role, tags and doc text of a node.
fn describe(node: &Node, vault: &Path, warnings: &mut Vec<String>) -> (Role, Vec<String>, String) {
    let mut note = |w: String| warnings.push(format!("node '{}': {w}", node.id()));
    match node.kind() {
        NodeKind::Text { text } => {
            let p = frontmatter::parse(text);
            p.warnings.into_iter().for_each(&mut note);
            (p.role, p.tags, p.body.trim().to_string())
        }
        NodeKind::File { file, .. } => match read_vault_file(vault, file) {
            Ok(text) if is_markdown(file) => {
                let p = frontmatter::parse(&text);
                p.warnings.into_iter().for_each(&mut note);
                (p.role, p.tags, p.body.trim().to_string())
            }
            Ok(text) => (Role::User, Vec::new(), text),
            Err(why) => {
                note(format!("{why}; imported without its text"));
                (Role::User, Vec::new(), String::new())
            }
        },
        NodeKind::Link { url } => (Role::User, Vec::new(), url.clone()),
        NodeKind::Group { label } => (Role::User, Vec::new(), label.clone().unwrap_or_default()),
        NodeKind::Other(_) => (Role::User, Vec::new(), String::new()),
    }
}

/// The first non-empty line of the doc (heading marks removed), the file's
/// name, the URL or the group's label; cut to [`NAME_CHARS`].
fn name_of(node: &Node, doc: &str) -> String {
    let name = match node.kind() {
        NodeKind::File { file, .. } => {
            let base = file.rsplit('/').next().unwrap_or(file);
            base.strip_suffix(".md").unwrap_or(base).to_string()
        }
        NodeKind::Link { url } => url.clone(),
        NodeKind::Group { label } => label.clone().unwrap_or_default(),
        _ => doc
            .lines()
            .map(|l| l.trim().trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .to_string(),
    };
    name.chars().take(NAME_CHARS).collect()
}
