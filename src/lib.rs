//! graphctx: an embedded graph engine on CozoDB that turns graphs into
//! token-budgeted LLM context and LLM answers into atomic graph changes.
//!
//! The crate is organised along its pipelines (see ARCHITECTURE.md):
//! [`index`] (repository → entities and references) → [`store`] (CozoDB
//! relations, migrations, queries) → [`analyse`] (blast radius, relevance,
//! cycles, history) → [`emit`] (CodeGraphContext.json, Format E, token
//! budgets). [`graph`] reads the stored graph for the CLI; [`serve`] answers
//! editors (LSP) and agents (MCP) from the live index.
pub use graphctx_base::{model, support};
pub use graphctx_graph as graph;
pub use graphctx_index as index;
pub use graphctx_llm as llm;
pub use graphctx_store as store;

pub mod analyse;
pub mod assistant;
pub mod canvas;
pub mod capture;
pub mod emit;
pub mod flow;
pub mod languages;
pub mod ontology;
pub mod operations;
pub mod serve;
