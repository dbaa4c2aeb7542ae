//! Writing an answer back (seed 002): a new assistant node below its
//! source, joined by an edge from the source's bottom to its top.
//!
//! The node is a text node with color `"3"` whose text opens with
//! frontmatter naming its role and when it was written:
//!
//! ```text
//! ---
//! role: assistant
//! timestamp: 2025-10-29T16:00:00Z
//! ---
//!
//! <the answer>
//! ```
//!
//! **Placement.** The node is at least [`MIN_WIDTH`] wide (the source's
//! width if that is more), as tall as its text needs at about 8.5 px per
//! character and 24 px per line ([`estimate_height`]), left-aligned with
//! the source and [`GAP`] px below it. While it would come closer than
//! [`MARGIN`] px to existing nodes (group boxes excepted: they are meant
//! to contain nodes), it moves right, to [`GAP`] px past the right edge of
//! the rightmost of them. It only ever moves right, so this ends, and
//! answers to the same source line up left to right like the branches of
//! a tree.
//!
//! Everything else in the file is written back as it was read (see
//! [`super::model`]), atomically.

use std::path::Path;

use super::model::{Canvas, Edge, Node, Rect, Side};
use super::CanvasError;

/// Obsidian's palette colour for assistant answers ("3", seed 002).
pub const RESPONSE_COLOR: &str = "3";
/// Vertical distance below the source, and horizontal step past a blocker.
pub const GAP: f64 = 60.0;
/// The least distance kept to other nodes.
pub const MARGIN: f64 = 20.0;
/// The least width of an answer node.
pub const MIN_WIDTH: f64 = 400.0;

/// What [`add_response`] added.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Response {
    pub node: String,
    pub edge: String,
    #[serde(flatten)]
    pub rect: Rect,
}

/// The text of an answer node.
pub fn response_text(answer: &str, timestamp: &str) -> String {
    format!("---\nrole: assistant\ntimestamp: {timestamp}\n---\n\n{answer}")
}

/// Add `answer` as an assistant node below `source`. `timestamp` is
/// written into the frontmatter as given (RFC 3339).
pub fn add_response(
    canvas: &mut Canvas,
    source: &str,
    answer: &str,
    timestamp: &str,
) -> Result<Response, CanvasError> {
    let answer = answer.trim_end().trim_start_matches(['\n', '\r']);
    if answer.trim().is_empty() {
        return Err(CanvasError::EmptyAnswer);
    }
    let src = canvas.require(source)?.rect();
    let text = response_text(answer, timestamp);
    let width = src.width.max(MIN_WIDTH).round();
    let height = estimate_height(&text, width);
    let rect = place_below(canvas, &src, width, height);
    let node_id = new_id(canvas, &[source, answer, timestamp, "node"]);
    let node = Node::text(&node_id, &text, rect, Some(RESPONSE_COLOR));
    canvas.push_node(node).map_err(|m| internal(canvas, m))?;
    let edge_id = new_id(canvas, &[source, &node_id, timestamp, "edge"]);
    let edge = Edge::new(&edge_id, source, Side::Bottom, &node_id, Side::Top);
    canvas.push_edge(edge).map_err(|m| internal(canvas, m))?;
    Ok(Response {
        node: node_id,
        edge: edge_id,
        rect,
    })
}

fn internal(canvas: &Canvas, message: String) -> CanvasError {
    CanvasError::Format {
        path: canvas.origin().to_string(),
        message,
    }
}

/// Load `path`, add the answer below `source` (timestamped now) and save
/// the file atomically. Returns what was added.
pub fn respond_file(path: &Path, source: &str, answer: &str) -> Result<Response, CanvasError> {
    let mut canvas = Canvas::load(path)?;
    let added = add_response(
        &mut canvas,
        source,
        answer,
        &crate::support::time::now_rfc3339(),
    )?;
    canvas.save(path)?;
    Ok(added)
}

/// Height for `text` in a card `width` px wide: 24 px per rendered line
/// (lines wrap at about 8.5 px per character inside 24 px padding each
/// side) plus 48 px, between 120 and 1200 px (Obsidian scrolls inside
/// taller cards).
pub fn estimate_height(text: &str, width: f64) -> f64 {
    let per_line = (((width - 48.0) / 8.5).floor() as usize).max(20);
    let lines: usize = text
        .lines()
        .map(|l| l.chars().count().div_ceil(per_line).max(1))
        .sum();
    (lines as f64 * 24.0 + 48.0).clamp(120.0, 1200.0)
}

/// The box for a new node below `source` (see the module doc).
pub fn place_below(canvas: &Canvas, source: &Rect, width: f64, height: f64) -> Rect {
    let mut rect = Rect {
        x: source.x,
        y: source.bottom() + GAP,
        width,
        height,
    };
    loop {
        let blocker = canvas
            .nodes()
            .iter()
            .filter(|n| !n.is_group())
            .map(|n| n.rect())
            .filter(|r| rect.overlaps(r, MARGIN))
            .map(|r| r.right())
            .fold(f64::NEG_INFINITY, f64::max);
        if blocker == f64::NEG_INFINITY {
            return rect;
        }
        rect.x = (blocker + GAP).round();
    }
}

/// A fresh 16-hex-digit id (Obsidian's form), unused by nodes and edges.
fn new_id(canvas: &Canvas, salt: &[&str]) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for attempt in 0u32.. {
        let mut h = blake3::Hasher::new();
        h.update(&nanos.to_le_bytes());
        h.update(&std::process::id().to_le_bytes());
        h.update(&attempt.to_le_bytes());
        h.update(&(canvas.nodes().len() + canvas.edges().len()).to_le_bytes());
        for s in salt {
            h.update(s.as_bytes());
            h.update(&[0]);
        }
        let id = h.finalize().to_hex()[..16].to_string();
        if !canvas.id_in_use(&id) {
            return id;
        }
    }
    unreachable!("an unbounded range of attempts")
}
