//! The graphs an LLM edits, and its answers applied to them: ontology
//! models ([`ontology`]), the operations an answer is read into and
//! applied all or nothing ([`operations`]), JSON Canvas conversations
//! ([`canvas`]) and the context captured from them ([`capture`]), flow
//! graphs edited through tool calls ([`flow`]), and the ontology
//! assistant that joins them ([`assistant`]).
//!
//! The modules are layered among themselves (see ARCHITECTURE.md):
//! `ontology` below `canvas`, `capture`, `flow` and `operations`, all of
//! them below `assistant`.

use graphctx_analyse as analyse;
use graphctx_base::{model, support};
use graphctx_emit as emit;
use graphctx_llm as llm;
use graphctx_store as store;

pub mod assistant;
pub mod canvas;
pub mod capture;
pub mod flow;
pub mod ontology;
pub mod operations;
