//! The integration tests, one test binary (`it`) with one module per
//! area. Each former test file links CozoDB and the whole library, so one
//! binary instead of fifteen saves most of the link time, and the test
//! harness runs every test of the suite side by side instead of one
//! binary after another.
//!
//! Tests share a process here: none may set environment variables, change
//! the current directory or rely on process-wide state being fresh; pass
//! such settings explicitly (a child process's environment, an env lookup
//! closure, a root path) instead. `cargo test --release --test it cli::`
//! runs one module.
//!
//! Proptest reads and records the failure cases of the properties in
//! `<module>.rs` in `tests/proptest-regressions/<module>.txt`: its default
//! place for sources under a directory holding a `main.rs` (the
//! `<source>.proptest-regressions` sibling is only its fallback).

mod common;

/// The languages, installed before any test runs (the binary installs
/// them in `main`; a library user calls the same function).
#[ctor::ctor]
fn install_languages() {
    graphctx::languages::install();
}

mod architecture;
mod bad_input;
mod canvas;
mod cli;
mod context;
mod conveniences;
mod cozo_regressions;
mod diagram;
mod export;
mod flow;
mod incremental;
mod index_golden;
mod llm_http;
mod lsp;
mod mcp;
mod mixed_repository;
mod ontology;
mod operations;
mod python;
mod python_repository;
mod recovery;
mod schema;
mod search;
mod settled_files;
mod typescript;
mod view;
