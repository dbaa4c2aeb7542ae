//! The bottom layer: small services every other module may use and that
//! use nothing of the crate — exact token counting, timestamps, words,
//! compressed blobs and how the heap returns memory.
//!
//! They live apart from `emit` so that writers of history rows, the
//! assistants and the servers do not reach up into the emitter for them
//! (see ARCHITECTURE.md, "Layers point down").
pub mod heap;
pub mod packed;
pub mod time;
pub mod tokens;
pub mod words;
