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
            eprintln!("graphctx: {err:#}");
            ExitCode::from(2)
        }
    }
}
