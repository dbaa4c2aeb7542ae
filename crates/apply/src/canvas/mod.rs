//! JSON Canvas conversations (seed 002).
//!
//! A `.canvas` file (the open JSON Canvas 1.0 format Obsidian writes) is a
//! drawing of a conversation tree: text, file, link and group nodes joined
//! by edges. graphctx reads one, walks up from a node to build the messages
//! an LLM needs ([`walk`]), writes the LLM's answer back as a new node
//! ([`respond`]), and can ingest the drawing as a graph so the engine's
//! queries (blast radius, cycles) run on it ([`import`]).
//!
//! Why the model keeps every node and edge as its raw JSON object: people
//! edit these files in Obsidian and plugins add fields graphctx has never
//! heard of. graphctx only ever *adds* nodes and edges, so writing a file
//! back re-emits each untouched object exactly as read (keys, order,
//! unknown fields) and the user's drawing survives us.
//!
//! - [`model`] — `Canvas`, `Node`, `Edge`: parsing, validation, writing
//!   (Obsidian's layout), atomic saves.
//! - [`frontmatter`] — `role`/`tags` from a leading YAML block.
//! - [`walk`] — the context walk: parent chain, horizontal context,
//!   siblings excluded, messages in seed 002's order.
//! - [`respond`] — an assistant answer as a new node below its source.
//! - [`import`] — a canvas into `node`/`edge` + `canvas_node`/`canvas_edge`.

pub mod ask;
pub mod frontmatter;
pub mod import;
pub mod model;
pub mod respond;
pub mod walk;

pub use frontmatter::Role;
pub use import::{import_canvas, ImportOptions, ImportSummary};
pub use model::{Canvas, Edge, Node, NodeKind, Rect, Side};
pub use respond::{add_response, respond_file, Response};
pub use walk::{default_vault_root, walk, Excluded, Included, Message, Placement, Walk};

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CanvasError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source} (the file was left as it was)")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not valid JSON: {message}")]
    Json { path: String, message: String },
    #[error("{path} is not a JSON Canvas: {message}")]
    Format { path: String, message: String },
    #[error("no node with id '{id}' in {path}")]
    NoSuchNode { id: String, path: String },
    #[error("the answer is empty: nothing to write")]
    EmptyAnswer,
    #[error(
        "graph '{graph}' holds {source_desc}, not a canvas; import the canvas into another graph \
         (--graph NAME)"
    )]
    GraphInUse { graph: String, source_desc: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How a canvas is named in messages when it did not come from a file.
pub const INLINE: &str = "(canvas text)";
