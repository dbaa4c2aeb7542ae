//! The `graphctx` command: argument parsing and exit codes only; the work
//! is done by the library.
//!
//! Exit codes (documented in docs/commands.md):
//!
//! - 0: done as asked — also when the reader of stdout went away (a closed
//!   pipe, as in `graphctx entities | head -1`), quietly;
//! - 1: done, with something to look at: files skipped while indexing,
//!   nothing to undo or redo, no applicable model answer within the
//!   iteration limit, an `index --rebuild` that could not keep all the
//!   old database held;
//! - 2: refused or failed: usage errors, bad input (an error object on
//!   stdout for `context` and `apply`), storage errors.

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::Outcome;

/// mimalloc instead of the system allocator: an index run allocates
/// millions of small strings and rows on several threads and frees them a
/// stage later; glibc's malloc spends much of a large cold index searching
/// and merging its free lists, and keeps the freed memory mapped.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Before any parser exists (see the function's docs).
    graphctx::index::parser_memory::parsers_use_mimalloc();
    graphctx::languages::install();
    let args = cli::Cli::parse();
    // Servers and one-shot commands alike (see the module's docs).
    graphctx::support::heap::purge_freed_pages_lazily();
    match cli::run(args) {
        Ok(outcome) => ExitCode::from(exit_code(outcome)),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("graphctx: {}", error_chain(&err));
            ExitCode::from(2)
        }
    }
}

fn exit_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Done => 0,
        Outcome::FilesSkipped
        | Outcome::NothingToRevert
        | Outcome::NotAnswered
        | Outcome::NotAllKept => 1,
        Outcome::Refused => 2,
    }
}

/// Whether the command failed only because stdout's reader closed it.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(BrokenPipe))
    })
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
