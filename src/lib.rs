//! graphctx: an embedded graph engine on CozoDB that turns graphs into
//! token-budgeted LLM context and LLM answers into atomic graph changes.
//!
//! The crate is organised along its pipelines (see ARCHITECTURE.md):
//! [`index`] (repository → entities and references) → [`store`] (CozoDB
//! relations, migrations, queries) → [`graph`] (reading the stored graph).
pub mod graph;
pub mod index;
pub mod model;
pub mod store;
