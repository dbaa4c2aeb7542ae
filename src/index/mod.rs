//! Indexing: walk → hash → parse changed files → extract → resolve → store.
pub mod history;
pub mod keys;
pub mod layout;
pub mod pipeline;
pub mod resolve;
pub mod rust_extract;
pub mod types;
pub mod usage;
pub mod walk;

pub use pipeline::{index_repository, IndexError, IndexOptions, IndexSummary, CODE_GRAPH};
