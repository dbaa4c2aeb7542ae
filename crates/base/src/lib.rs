//! The bottom layer every crate shares: the vocabulary of the pipelines
//! ([`model`]: entities, references, extracts, file contexts, the code
//! relationships) and what needs no other part of graphctx ([`support`]:
//! token counts, words, compression, time, freed memory).

pub mod model;
pub mod support;
