//! `context`, `blast`, `callers`, `callees`, `cycles`.

use super::Outcome;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use graphctx::analyse::blast::{self, MAX_HOPS};
use graphctx::analyse::cycles;
use graphctx::analyse::relevance::Strategy;
use graphctx::analyse::search::{self, SearchError};
use graphctx::analyse::select::BaseSpec;
use graphctx::emit::{self, ChangeType, ContextError, ContextRequest, Format};
use graphctx::graph;
use graphctx::store::lock::WriteLock;
use graphctx::store::Store;
use graphctx::support::tokens::{Encoding, TokenCounter};

use super::output::{print_json, print_table};

#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Json,
    E,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ChangeTypeArg {
    Edit,
    Create,
    Delete,
    Refactor,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum TokenizerArg {
    O200k,
    Cl100k,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    Blended,
    Seed,
}

#[derive(Args)]
pub struct ContextArgs {
    /// Base entity keys.
    pub keys: Vec<String>,
    /// Take every entity of this file (repository-relative) as base.
    #[arg(long)]
    pub file: Option<String>,
    /// Take every entity with this name as base.
    #[arg(long)]
    pub name: Option<String>,
    /// Take the best hits of this free-text query (a task, a bug report) as base;
    /// `-` reads it from standard input.
    #[arg(long)]
    pub query: Option<String>,
    /// Read the query text from FILE (`-`: standard input), e.g. an issue's body.
    #[arg(long, value_name = "FILE", conflicts_with = "query")]
    pub query_file: Option<PathBuf>,
    /// Hop depth, 0 to 3.
    #[arg(long, default_value_t = 2)]
    pub hops: u32,
    /// Token budget; the output never exceeds it.
    #[arg(long, default_value_t = graphctx::emit::DEFAULT_BUDGET)]
    pub budget: usize,
    #[arg(long, value_enum, default_value = "json")]
    pub format: FormatArg,
    #[arg(long, value_enum, default_value = "edit")]
    pub change_type: ChangeTypeArg,
    #[arg(long, value_enum, default_value = "o200k")]
    pub tokenizer: TokenizerArg,
    /// Relevance strategy: blended (graph, history and fan-in) or seed (the fixed
    /// hop-distance formula: base 1.0, direct dependency 0.8, two hops 0.6).
    #[arg(long, value_enum, default_value = "blended")]
    pub strategy: StrategyArg,
    /// Write the document to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Fail with dependency_cycle_detected if the selection has a cycle.
    #[arg(long)]
    pub fail_on_cycles: bool,
    /// Neither read nor write the context cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Print token and selection figures on stderr.
    #[arg(long)]
    pub stats: bool,
}

fn check_hops(hops: u32) -> Result<()> {
    if hops > MAX_HOPS {
        bail!("--hops must be between 0 and {MAX_HOPS}, got {hops}");
    }
    Ok(())
}

/// Errors of `context` are seed 004 error objects on stdout, exit code 2.
pub fn context(
    store: &Store,
    graph_name: &str,
    a: ContextArgs,
    stale: Vec<String>,
) -> Result<Outcome> {
    check_hops(a.hops)?;
    let base = match (a.keys.is_empty(), &a.file, &a.name, &a.query) {
        (false, None, None, None) => BaseSpec::Keys(a.keys.clone()),
        (true, Some(f), None, None) => BaseSpec::File(f.clone()),
        (true, None, Some(n), None) => BaseSpec::Name(n.clone()),
        (true, None, None, Some(q)) => match search::query_base(store, graph_name, q) {
            Ok(keys) if !keys.is_empty() => BaseSpec::Ranked(keys),
            Ok(_) => bail!("no entity matches the query; try other words"),
            Err(SearchError::NoWords) => bail!("the query has no words to search for"),
            Err(SearchError::Store(e)) => return Err(e.into()),
        },
        _ => bail!(
            "give base entities as KEY..., or --file PATH, or --name NAME, or --query TEXT \
             (exactly one of them)"
        ),
    };
    if a.budget == 0 {
        bail!("--budget must be a positive number of tokens");
    }
    let req = ContextRequest {
        graph: graph_name.to_string(),
        base,
        hops: a.hops,
        budget: a.budget,
        format: match a.format {
            FormatArg::Json => Format::Json,
            FormatArg::E => Format::E,
        },
        change_type: match a.change_type {
            ChangeTypeArg::Edit => ChangeType::Edit,
            ChangeTypeArg::Create => ChangeType::Create,
            ChangeTypeArg::Delete => ChangeType::Delete,
            ChangeTypeArg::Refactor => ChangeType::Refactor,
        },
        encoding: match a.tokenizer {
            TokenizerArg::O200k => Encoding::O200k,
            TokenizerArg::Cl100k => Encoding::Cl100k,
        },
        strategy: match a.strategy {
            StrategyArg::Blended => Strategy::Blended,
            StrategyArg::Seed => Strategy::Seed,
        },
        fail_on_cycles: a.fail_on_cycles,
        stale_files: stale,
        query: a.query.clone(),
    };
    let counter = TokenCounter::new(req.encoding);
    // Caching writes to the store: only when no other writer is busy.
    let lock = if a.no_cache {
        None
    } else {
        WriteLock::try_acquire(store.location()).ok()
    };
    let result = if a.no_cache {
        emit::build_context(store, &req, &counter)
    } else {
        emit::cached_context(store, &req, &counter, lock.is_some())
    };
    drop(lock);
    match result {
        Ok(out) => {
            match &a.out {
                Some(path) => {
                    std::fs::write(path, &out.text)
                        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
                }
                None => {
                    let mut stdout = std::io::stdout().lock();
                    stdout.write_all(out.text.as_bytes())?;
                }
            }
            if a.stats {
                eprintln!(
                    "graphctx: {} tokens ({}), {} entities included, {} excluded, {} relationships, {} cycles{}{}",
                    out.token_count,
                    req.encoding.name(),
                    out.entities_included,
                    out.entities_excluded,
                    out.relationships,
                    out.cycles,
                    if out.steps.is_empty() { String::new() } else { format!(", truncation: {}", graphctx::emit::fit::FitStep::join(&out.steps)) },
                    if out.from_cache { ", from cache" } else { "" }
                );
            }
            if a.stats && req.format == Format::E {
                if let Ok(c) = emit::compare_formats(store, &req, &counter) {
                    eprintln!(
                        "graphctx: Format E {} tokens vs {} for the JSON form of the same request: {:.1}% smaller",
                        c.format_e_tokens,
                        c.json_tokens,
                        100.0 * c.reduction
                    );
                }
            }
            Ok(Outcome::Done)
        }
        Err(ContextError::Store(e)) => Err(e.into()),
        Err(e) => {
            print_json(&e.to_json())?;
            Ok(Outcome::Refused)
        }
    }
}

pub fn blast(store: &Store, graph_name: &str, key: &str, hops: u32, json: bool) -> Result<Outcome> {
    check_hops(hops)?;
    require(store, graph_name, key)?;
    let reached = blast::blast_radius(store, graph_name, &[key.to_string()], hops)?;
    if json {
        print_json(&reached)?;
    } else {
        let rows: Vec<Vec<String>> = reached
            .iter()
            .map(|r| {
                vec![
                    r.distance.to_string(),
                    r.directions().join(","),
                    r.rels().join(","),
                    r.key.clone(),
                ]
            })
            .collect();
        print_table(&["HOPS", "DIRECTION", "VIA", "KEY"], &rows)?;
    }
    Ok(Outcome::Done)
}

pub fn calls(
    store: &Store,
    graph_name: &str,
    key: &str,
    callers: bool,
    json: bool,
) -> Result<Outcome> {
    require(store, graph_name, key)?;
    let links = if callers {
        blast::callers(store, graph_name, key)?
    } else {
        blast::callees(store, graph_name, key)?
    };
    if json {
        print_json(&links)?;
    } else {
        let rows: Vec<Vec<String>> = links
            .iter()
            .map(|l| vec![l.count.to_string(), l.key.clone()])
            .collect();
        print_table(&["CALLS", if callers { "CALLER" } else { "CALLEE" }], &rows)?;
    }
    Ok(Outcome::Done)
}

pub fn cycles(store: &Store, graph_name: &str, json: bool) -> Result<Outcome> {
    let found = cycles::find_cycles(store, graph_name)?;
    if json {
        print_json(&found)?;
    } else if found.is_empty() {
        outln!("no dependency cycles");
    } else {
        for c in &found {
            outln!(
                "{} ({} members): {}",
                c.kind,
                c.members.len(),
                c.cycle_path.join(" -> ")
            );
        }
    }
    Ok(Outcome::Done)
}

fn require(store: &Store, graph_name: &str, key: &str) -> Result<()> {
    if !graph::entity_exists(store, graph_name, key)? {
        let suggestions =
            graphctx::analyse::select::suggest(store, graph_name, &[key.to_string()])?;
        let hint = if suggestions.is_empty() {
            "list keys with `graphctx entities`".to_string()
        } else {
            format!("did you mean: {}", suggestions.join(", "))
        };
        bail!("no entity with key '{key}' in graph '{graph_name}' ({hint})");
    }
    Ok(())
}
