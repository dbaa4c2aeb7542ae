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

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::frontmatter::{self, Role};
use super::model::{Canvas, Node, NodeKind};
use super::walk::{classify, default_vault_root, is_markdown, read_vault_file};
use super::CanvasError;
use crate::store::value::{get_int, get_str, json, opt_str, str_list};
use crate::store::{queries, Batch, GraphChange, Params, Store};

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

    let (seq, old_source) = match store
        .read(queries::GRAPH_SEQ, Params::new().with("graph", graph))?
        .rows
        .first()
    {
        Some(r) => (get_int(r, 0), Some(get_str(r, 1).to_string())),
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

    let mut batch = Batch::new();
    for r in &old.rows {
        let key = |i: usize| get_str(r, i).into();
        match get_str(r, 0) {
            "node" => batch.delete("node", &["graph", "id"], vec![graph.into(), key(1)]),
            "edge" => batch.delete(
                "edge",
                &["graph", "src", "rel", "dst", "origin"],
                vec![graph.into(), key(1), key(2), key(3), key(4)],
            ),
            rel @ ("canvas_node" | "canvas_edge") => {
                batch.delete(rel, &["graph", "id"], vec![graph.into(), key(1)])
            }
            _ => {}
        }
    }
    let replaced_rows = old.rows.len();

    let mut warnings = Vec::new();
    for (position, node) in canvas.nodes().iter().enumerate() {
        let (role, tags, doc) = describe(node, &vault, &mut warnings);
        let (file, url) = match node.kind() {
            NodeKind::File { file, .. } => (Some(file.as_str()), None),
            NodeKind::Link { url } => (None, Some(url.as_str())),
            _ => (None, None),
        };
        let rect = node.rect();
        batch.put(
            "node",
            &["graph", "id", "kind", "name", "doc"],
            vec![
                graph.into(),
                node.id().into(),
                node.kind().type_name().into(),
                name_of(node, &doc).into(),
                doc.into(),
            ],
        );
        batch.put(
            "canvas_node",
            &[
                "graph", "id", "position", "x", "y", "width", "height", "color", "role", "tags",
                "file", "url", "data",
            ],
            vec![
                graph.into(),
                node.id().into(),
                (position as i64).into(),
                rect.x.into(),
                rect.y.into(),
                rect.width.into(),
                rect.height.into(),
                opt_str(node.color()),
                role.as_str().into(),
                str_list(&tags),
                opt_str(file),
                opt_str(url),
                json(serde_json::Value::Object(node.raw().clone())),
            ],
        );
    }
    let mut edges = 0;
    let mut skipped_edges = 0;
    for (position, edge) in canvas.edges().iter().enumerate() {
        let rel = match classify(&canvas, edge) {
            Some(class) => {
                edges += 1;
                batch.put(
                    "edge",
                    &["graph", "src", "rel", "dst", "origin", "weight"],
                    vec![
                        graph.into(),
                        edge.from_node().into(),
                        class.rel().into(),
                        edge.to_node().into(),
                        edge.id().into(),
                        1.0.into(),
                    ],
                );
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
        batch.put(
            "canvas_edge",
            &[
                "graph",
                "id",
                "position",
                "from_node",
                "from_side",
                "to_node",
                "to_side",
                "rel",
                "label",
                "color",
                "data",
            ],
            vec![
                graph.into(),
                edge.id().into(),
                (position as i64).into(),
                edge.from_node().into(),
                opt_str(edge.from_side().map(|s| s.as_str())),
                edge.to_node().into(),
                opt_str(edge.to_side().map(|s| s.as_str())),
                rel.into(),
                opt_str(edge.label()),
                opt_str(edge.color()),
                json(serde_json::Value::Object(edge.raw().clone())),
            ],
        );
    }
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
