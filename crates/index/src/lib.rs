//! Indexing: walk → hash → parse changed files → extract → resolve → store.
//!
//! Language-specific work lives in a crate per language, behind
//! [`lang::Language`] and found through [`languages`], which the binary
//! fills at start-up (`graphctx::languages::install`); the
//! pipeline, the walk, the co-change history, the text index and the
//! usage summaries are about files, extracts and links.
use graphctx_base::model;
use graphctx_base::support;
use graphctx_store as store;

pub mod body_text;
mod file_edges;
mod fresh;
pub mod held_trees;
pub mod history;
pub mod history_text;
pub mod keys;
pub mod lang;
pub mod languages;
pub mod links;
pub mod names;
pub mod parser_memory;
pub mod pipeline;
pub mod polyglot;
pub mod rebuilt;
pub mod refless;
pub mod replay;
mod state;
pub mod text;
#[cfg(test)]
mod toy;
pub mod usage;
pub mod walk;
mod write;

pub use fresh::index_location;
pub use pipeline::{
    index_repository, index_repository_cached, IndexError, IndexOptions, IndexSummary,
    InterfaceCache, ListsRewritten, Warmed, CODE_GRAPH,
};
