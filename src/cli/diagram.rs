//! `--format mermaid|dot` of the commands that answer with a graph:
//! `blast`, `callers`, `callees`, `cycles`, `context`, `graph export`.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};

use graphctx::emit::diagram::{self, DiagramFormat, DiagramGraph};
use graphctx::support::tokens::{Encoding, TokenCounter};

use super::Outcome;

#[derive(Clone, Copy, ValueEnum)]
pub enum DiagramFormatArg {
    Mermaid,
    Dot,
}

impl DiagramFormatArg {
    pub fn format(self) -> DiagramFormat {
        match self {
            DiagramFormatArg::Mermaid => DiagramFormat::Mermaid,
            DiagramFormatArg::Dot => DiagramFormat::Dot,
        }
    }
}

/// The diagram options of a listing command (`blast`, `callers`, …).
#[derive(Args)]
pub struct DiagramArgs {
    /// Print a diagram instead of the list: Mermaid or Graphviz DOT.
    #[arg(long, value_enum, conflicts_with = "json")]
    pub format: Option<DiagramFormatArg>,
    /// Token budget of a diagram; a larger one is cut and says so.
    #[arg(long, default_value_t = graphctx::emit::DEFAULT_BUDGET)]
    pub budget: usize,
}

impl DiagramArgs {
    /// The budget, checked.
    pub fn budget(&self) -> Result<usize> {
        check_budget(self.budget)
    }
}

pub fn check_budget(budget: usize) -> Result<usize> {
    if budget == 0 {
        bail!("--budget must be a positive number of tokens");
    }
    Ok(budget)
}

/// Fit `g` to `budget` tokens and write it to `out` (stdout when `None`).
pub fn print(
    g: &DiagramGraph,
    format: DiagramFormat,
    budget: usize,
    encoding: Encoding,
    out: Option<&Path>,
    stats: bool,
) -> Result<Outcome> {
    let counter = TokenCounter::new(encoding);
    let fitted = diagram::fit_to_budget(g, format, budget, &counter)?;
    if stats {
        eprintln!(
            "graphctx: {} tokens ({}), {} nodes, {} edges{}",
            fitted.token_count,
            encoding.name(),
            fitted.graph.nodes.len(),
            fitted.graph.edges.len(),
            fitted
                .graph
                .cut
                .as_ref()
                .map(|c| format!(", {}", c.note()))
                .unwrap_or_default()
        );
    }
    match out {
        Some(path) => std::fs::write(path, &fitted.text)
            .with_context(|| format!("cannot write {}", path.display()))?,
        None => std::io::stdout().lock().write_all(fitted.text.as_bytes())?,
    }
    Ok(Outcome::Done)
}
