//! The `graphctx` command: argument parsing and exit codes only; the work
//! is done by the library.
//!
//! Exit codes: 0 success, 1 success with something to look at (files
//! skipped while indexing), 2 usage, input or storage errors.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("graphctx: {}", error_chain(&err));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes, `: `-separated, leaving out a cause whose
/// text the message before it already contains (library errors often
/// name their cause in their own message).
fn error_chain(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
