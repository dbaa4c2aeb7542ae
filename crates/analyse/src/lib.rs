//! Analysis over the stored graph: blast radius, relevance, cycles, history,
//! and the selection of a context's entities.
use graphctx_base::model;
use graphctx_graph as graph;
use graphctx_index as index;
use graphctx_store as store;

pub mod blast;
pub mod cycles;
pub mod relevance;
pub mod select;
