//! `context`, `blast`, `callers`, `callees`, `cycles`.

use super::Outcome;
use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};

use graphctx::analyse::blast::{self, MAX_HOPS};
use graphctx::analyse::cycles;
use graphctx::analyse::relevance::Strategy;
use graphctx::analyse::select::BaseSpec;
use graphctx::emit::{self, ChangeType, ContextError, ContextRequest, Format};
use graphctx::graph;
use graphctx::search::{self, SearchError};
use graphctx::store::lock::WriteLock;
use graphctx::store::Store;
use graphctx::support::tokens::{Encoding, TokenCounter};

use super::diagram::{self, DiagramArgs};
use super::output::{print_json, print_table};
use graphctx::emit::diagram::{code, DiagramFormat, DiagramGraph};

#[derive(Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Json,
    E,
    /// The selection as a Mermaid flowchart.
    Mermaid,
    /// The selection as a Graphviz DOT graph.
    Dot,
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

/// The base entities of a `context` or `view`: exactly one way of naming them.
#[derive(Args)]
pub struct BaseArgs {
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
}

#[derive(Args)]
pub struct ContextArgs {
    #[command(flatten)]
    pub base: BaseArgs,
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

pub(super) fn check_hops(hops: u32) -> Result<()> {
    if hops > MAX_HOPS {
        bail!("--hops must be between 0 and {MAX_HOPS}, got {hops}");
    }
    Ok(())
}

impl BaseArgs {
    /// Whether no base was named at all.
    pub(super) fn is_empty(&self) -> bool {
        self.keys.is_empty()
            && self.file.is_none()
            && self.name.is_none()
            && self.query.is_none()
            && self.query_file.is_none()
    }

    /// The base named: KEY..., `--file`, `--name` or `--query` (the best
    /// hits of a search), exactly one of them.
    /// Read a query given as `-` or `--query-file` into `query`, so that
    /// the answer records the text itself.
    pub(super) fn read_query(&mut self) -> Result<()> {
        if self.query.as_deref() == Some("-") || self.query_file.is_some() {
            self.query = Some(super::search::query_text(
                self.query.take(),
                self.query_file.take(),
            )?);
        }
        Ok(())
    }

    pub(super) fn spec(&self, store: &Store, graph_name: &str) -> Result<BaseSpec> {
        Ok(
            match (self.keys.is_empty(), &self.file, &self.name, &self.query) {
                (false, None, None, None) => BaseSpec::Keys(self.keys.clone()),
                (true, Some(f), None, None) => BaseSpec::File(f.clone()),
                (true, None, Some(n), None) => BaseSpec::Name(n.clone()),
                (true, None, None, Some(q)) => {
                    match search::query_base(store, graph_name, q, super::root_of(store), None) {
                        Ok(keys) if !keys.is_empty() => BaseSpec::Ranked(keys),
                        Ok(_) => bail!("no entity matches the query; try other words"),
                        Err(SearchError::NoWords) => bail!("the query has no words to search for"),
                        Err(SearchError::Store(e)) => return Err(e.into()),
                    }
                }
                _ => bail!(
                "give base entities as KEY..., or --file PATH, or --name NAME, or --query TEXT \
                 (exactly one of them)"
            ),
            },
        )
    }
}

/// Errors of `context` are seed 004 error objects on stdout, exit code 2.
pub fn context(
    store: &Store,
    graph_name: &str,
    a: ContextArgs,
    stale: Vec<String>,
) -> Result<Outcome> {
    check_hops(a.hops)?;
    let base = a.base.spec(store, graph_name)?;
    if a.budget == 0 {
        bail!("--budget must be a positive number of tokens");
    }
    let encoding = a.tokenizer.encoding();
    let strategy = a.strategy.strategy();
    let format = match a.format {
        FormatArg::Json => Format::Json,
        FormatArg::E => Format::E,
        FormatArg::Mermaid => {
            return context_diagram(
                store,
                graph_name,
                &a,
                base,
                DiagramFormat::Mermaid,
                encoding,
                strategy,
            )
        }
        FormatArg::Dot => {
            return context_diagram(
                store,
                graph_name,
                &a,
                base,
                DiagramFormat::Dot,
                encoding,
                strategy,
            )
        }
    };
    let req = ContextRequest {
        graph: graph_name.to_string(),
        base,
        hops: a.hops,
        budget: a.budget,
        format,
        change_type: a.change_type.change_type(),
        encoding,
        strategy,
        fail_on_cycles: a.fail_on_cycles,
        stale_files: stale,
        query: a.base.query.clone(),
    };
    let counter = TokenCounter::new(req.encoding);
    match compute_context(store, &req, &counter, a.no_cache) {
        Ok(out) => {
            write_context(&out, a.out.as_deref())?;
            if a.stats {
                print_context_stats(store, &req, &counter, &out);
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

impl TokenizerArg {
    /// The token encoding this `--tokenizer` names.
    fn encoding(self) -> Encoding {
        match self {
            TokenizerArg::O200k => Encoding::O200k,
            TokenizerArg::Cl100k => Encoding::Cl100k,
        }
    }
}

impl StrategyArg {
    /// The relevance strategy this `--strategy` names.
    fn strategy(self) -> Strategy {
        match self {
            StrategyArg::Blended => Strategy::Blended,
            StrategyArg::Seed => Strategy::Seed,
        }
    }
}

impl ChangeTypeArg {
    /// The change type this `--change-type` names.
    fn change_type(self) -> ChangeType {
        match self {
            ChangeTypeArg::Edit => ChangeType::Edit,
            ChangeTypeArg::Create => ChangeType::Create,
            ChangeTypeArg::Delete => ChangeType::Delete,
            ChangeTypeArg::Refactor => ChangeType::Refactor,
        }
    }
}

/// The context document: computed afresh with `--no-cache`, else through
/// the cache, which is written only when no other writer is busy.
fn compute_context(
    store: &Store,
    req: &ContextRequest,
    counter: &TokenCounter,
    no_cache: bool,
) -> Result<emit::ContextOutput, ContextError> {
    // Caching writes to the store: only when no other writer is busy.
    let lock = if no_cache {
        None
    } else {
        WriteLock::try_acquire(store.location()).ok()
    };
    let result = if no_cache {
        emit::build_context(store, req, counter)
    } else {
        emit::cached_context(store, req, counter, lock.is_some())
    };
    drop(lock);
    result
}

/// Writes the document to `--out`, else to stdout.
fn write_context(out: &emit::ContextOutput, path: Option<&std::path::Path>) -> Result<()> {
    match path {
        Some(path) => {
            std::fs::write(path, &out.text)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(out.text.as_bytes())?;
        }
    }
    Ok(())
}

/// `--stats`: the document's counts on stderr, and for Format E how much
/// smaller it is than the JSON form of the same request.
fn print_context_stats(
    store: &Store,
    req: &ContextRequest,
    counter: &TokenCounter,
    out: &emit::ContextOutput,
) {
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
    if req.format == Format::E {
        if let Ok(c) = emit::compare_formats(store, req, counter) {
            eprintln!(
                "graphctx: Format E {} tokens vs {} for the JSON form of the same request: {:.1}% smaller",
                c.format_e_tokens,
                c.json_tokens,
                100.0 * c.reduction
            );
        }
    }
}

/// `context --format mermaid|dot`: the same selection, drawn. Errors
/// are messages (the output is meant for a renderer, not a JSON reader).
fn context_diagram(
    store: &Store,
    graph_name: &str,
    a: &ContextArgs,
    base: BaseSpec,
    format: DiagramFormat,
    encoding: Encoding,
    strategy: Strategy,
) -> Result<Outcome> {
    let g = context_graph(store, graph_name, &base, a.hops, strategy, a.budget)?;
    diagram::print(&g, format, a.budget, encoding, a.out.as_deref(), a.stats)
}

/// The graph of the selection `context` makes (see
/// `emit::diagram::code::context_graph`), its errors as messages: the
/// drawn forms and `view` are read by renderers and people, not JSON readers.
pub(super) fn context_graph(
    store: &Store,
    graph_name: &str,
    base: &BaseSpec,
    hops: u32,
    strategy: Strategy,
    budget: usize,
) -> Result<DiagramGraph> {
    match code::context_graph(store, graph_name, base, hops, strategy, budget) {
        Ok(g) => Ok(g),
        Err(ContextError::EntityNotFound {
            missing,
            suggestions,
            ..
        }) if !missing.is_empty() => Err(not_found(graph_name, &missing, &suggestions)),
        Err(ContextError::Store(e)) => Err(e.into()),
        Err(e) => bail!(
            "{}",
            e.to_json()["message"].as_str().unwrap_or("context failed")
        ),
    }
}

pub fn blast(
    store: &Store,
    graph_name: &str,
    key: &str,
    hops: u32,
    json: bool,
    d: &DiagramArgs,
) -> Result<Outcome> {
    check_hops(hops)?;
    require(store, graph_name, key)?;
    let reached = blast::blast_radius(store, graph_name, &[key.to_string()], hops)?;
    if let Some(f) = d.format {
        let budget = d.budget()?;
        let g = code::blast_graph(
            store,
            graph_name,
            key,
            hops,
            &reached,
            code::max_nodes(budget),
            budget,
        )?;
        return diagram::print(&g, f.format(), budget, Encoding::O200k, None, false);
    }
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
    d: &DiagramArgs,
) -> Result<Outcome> {
    require(store, graph_name, key)?;
    let links = if callers {
        blast::callers(store, graph_name, key)?
    } else {
        blast::callees(store, graph_name, key)?
    };
    if let Some(f) = d.format {
        let budget = d.budget()?;
        let g = code::calls_graph(
            store,
            graph_name,
            key,
            &links,
            callers,
            code::max_nodes(budget),
            budget,
        )?;
        return diagram::print(&g, f.format(), budget, Encoding::O200k, None, false);
    }
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

pub fn cycles(store: &Store, graph_name: &str, json: bool, d: &DiagramArgs) -> Result<Outcome> {
    let found = cycles::find_cycles(store, graph_name)?;
    if let Some(f) = d.format {
        let budget = d.budget()?;
        let g = code::cycles_graph(store, graph_name, &found, code::max_nodes(budget), budget)?;
        return diagram::print(&g, f.format(), budget, Encoding::O200k, None, false);
    }
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
        let keys = [key.to_string()];
        let suggestions = graphctx::analyse::select::suggest(store, graph_name, &keys)?;
        return Err(not_found(graph_name, &keys, &suggestions));
    }
    Ok(())
}

/// The error for keys that name no entity, with the keys they may mean.
fn not_found(graph_name: &str, keys: &[String], suggestions: &[String]) -> anyhow::Error {
    let hint = if suggestions.is_empty() {
        "list keys with `graphctx entities`".to_string()
    } else {
        format!("did you mean: {}", suggestions.join(", "))
    };
    let keys: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    anyhow::anyhow!(
        "no entity with key {} in graph '{graph_name}' ({hint})",
        keys.join(", ")
    )
}
