//! Analysis over the stored graph: blast radius, relevance, cycles, history,
//! and the selection of a context's entities.
pub mod blast;
pub mod cycles;
pub mod relevance;
pub mod search;
pub mod select;
