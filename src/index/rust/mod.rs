//! Rust: everything the index knows about the language.
//!
//! - [`layout`] — the Cargo layout: packages, targets, and the crate and
//!   module of every file (from `mod` declarations, `#[path]` honoured).
//! - [`extract`] — one file's tree-sitter parse into a `FileExtract`.
//! - [`held_trees`] — the trees of files open in an editor, so their next
//!   parse is incremental.
//! - [`resolve`] — name resolution over all extracts into edges.
//! - [`interface`] — what of a file other files' resolution can see.
//! - [`names`] — which files an interface change can reach.
//! - [`types`] — declared types parsed into structure, std's common types.
//! - [`parser_memory`] — tree-sitter allocates with mimalloc.
//!
//! The rest of `index` (walking, hashing, diffing, writing) handles files,
//! extracts and edges without looking inside them; a second language would
//! be a sibling folder with the same three roles.
pub mod extract;
pub mod held_trees;
pub mod interface;
pub mod layout;
pub mod names;
pub mod parser_memory;
pub mod resolve;
pub mod types;

pub use extract::RustExtractor;
