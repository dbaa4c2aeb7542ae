//! `graphctx completions SHELL`: a completion script made from the command
//! definitions themselves, so it never falls behind them.

use std::io::Write as _;

use anyhow::Result;
use clap::CommandFactory;
use clap_complete::Shell;

use super::{Cli, Outcome};

pub fn print(shell: Shell) -> Result<Outcome> {
    // Made in memory first: clap_complete panics on a failed write, and a
    // closed pipe (`graphctx completions bash | head`) is no failure.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "graphctx", &mut script);
    std::io::stdout().lock().write_all(&script)?;
    Ok(Outcome::Done)
}
