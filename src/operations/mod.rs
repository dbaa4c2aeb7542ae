//! Applying an LLM's operations to an ontology graph (seed 001).
//!
//! The pipeline: [`parse`] the response → [`chunk`] it into dependency
//! levels (cycle and missing-dependency errors) → resolve tempIds and
//! semantic IDs to UUIDs chunk by chunk → stage every change into one
//! `Batch` → land it with one `Store::apply` → stream per-chunk view
//! updates. Any error leaves the graph exactly as it was.

pub mod changelog;
pub mod chunk;
pub mod error;
pub mod parse;

pub use error::OperationError;
