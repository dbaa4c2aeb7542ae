//! Indexing: walk → hash → parse changed files → extract → resolve → store.
//!
//! Language-specific work lives in [`rust`]; the pipeline, the walk, the
//! co-change history and the usage summaries are about files and edges.
mod file_edges;
mod fresh;
pub mod history;
pub mod keys;
pub mod pipeline;
pub mod rust;
mod state;
pub mod text;
pub mod usage;
pub mod walk;
mod write;

pub use fresh::index_location;
pub use pipeline::{
    index_repository, index_repository_cached, IndexError, IndexOptions, IndexSummary,
    InterfaceCache, Warmed, CODE_GRAPH,
};
