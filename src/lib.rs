//! graphctx: an embedded graph engine on CozoDB that turns graphs into
//! token-budgeted LLM context and LLM answers into atomic graph changes.
//!
//! This crate assembles the workspace's crates, one per layer of the
//! pipelines (see ARCHITECTURE.md): [`index`] (repository → entities and
//! references, with each language a crate of its own that [`languages`]
//! installs) → [`store`] (CozoDB relations, migrations, queries) →
//! [`analyse`] (blast radius, relevance, cycles) → [`search`] (ranked
//! search from a task or bug report) and [`emit`]
//! (CodeGraphContext.json, Format E, token budgets) and the graphs an
//! LLM edits ([`ontology`], [`operations`], [`canvas`], [`flow`], …) →
//! [`serve`] (editors over LSP, agents over MCP). [`graph`] reads the
//! stored graph for the CLI. The modules keep the paths they are known
//! by (`graphctx::store::Store`), whichever crate holds them.
pub use graphctx_analyse as analyse;
pub use graphctx_apply::{assistant, canvas, capture, flow, ontology, operations};
pub use graphctx_base::{model, support};
pub use graphctx_emit as emit;
pub use graphctx_graph as graph;
pub use graphctx_index as index;
pub use graphctx_llm as llm;
pub use graphctx_search as search;
pub use graphctx_serve as serve;
pub use graphctx_store as store;

pub mod languages;
