//! `flow`, `tools`, `ask` and `history`: flow graphs edited by an LLM.

use super::Outcome;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};

use graphctx::canvas::ask::ask_canvas;
use graphctx::flow::ask::{ask, AskOptions, AskOutcome};
use graphctx::flow::executor::{FlowSession, ToolCall};
use graphctx::flow::model::Flow;
use graphctx::flow::{self, history, tools};
use graphctx::index::CODE_GRAPH;
use graphctx::llm::{ChatClient, LlmConfig, ProviderFailure};
use graphctx::store::lock::WriteLock;
use graphctx::store::{Location, Store};

use super::output::print_json;
use super::Global;

#[derive(Subcommand)]
pub enum FlowAction {
    /// Replace the flow of --graph with a JSON document (React Flow
    /// `{nodes, edges}` or the compact form; `-` reads stdin). Undoable.
    Import { file: PathBuf },
    /// Print the flow of --graph as React Flow JSON (with visualSettings).
    Export {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Revert the last change to nodes and edges.
    Undo,
    /// Reapply the last undone change.
    Redo,
}

#[derive(Subcommand)]
pub enum HistoryAction {
    /// Print the stored conversation of --graph.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Forget the conversation of --graph.
    Clear,
}

#[derive(Args)]
pub struct AskArgs {
    /// What to change, in plain words.
    pub request: String,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
    /// Answers at most (the first and the retries).
    #[arg(long, default_value_t = flow::ask::MAX_ITERATIONS)]
    pub max_iterations: usize,
}

#[derive(Args)]
pub struct CanvasAskArgs {
    /// The .canvas file (the answer is written into it atomically).
    pub file: PathBuf,
    /// Id of the node to answer.
    #[arg(long)]
    pub node: String,
    /// Vault root for file nodes (default: the nearest directory with
    /// `.obsidian` above the canvas, else the canvas's directory).
    #[arg(long)]
    pub vault: Option<PathBuf>,
    /// Print the outcome as JSON (provider, tokens, answer, new node).
    #[arg(long)]
    pub json: bool,
}

/// The database for flow commands: `--db`, the nearest `.graphctx/graph.db`,
/// or (when `create`) a new one in the current directory.
pub fn flow_location(global: &Global, create: bool) -> Result<Location> {
    if let Ok(l) = super::locate(global) {
        return Ok(l);
    }
    if create {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        return Ok(Location::default_for(&cwd));
    }
    super::locate(global)
}

/// Flow commands need a graph of their own: the default graph holds the
/// repository's code.
fn flow_graph(global: &Global) -> Result<&str> {
    if global.graph == CODE_GRAPH {
        bail!(
            "flow commands need --graph NAME, a graph other than '{CODE_GRAPH}' (which holds the \
             repository's code)"
        );
    }
    Ok(&global.graph)
}

fn open(location: &Location) -> Result<Store> {
    Ok(Store::open(location)?)
}

pub fn flow_cmd(global: &Global, action: FlowAction) -> Result<Outcome> {
    let graph = flow_graph(global)?;
    match action {
        FlowAction::Import { file } => {
            let text = read_input(&file)?;
            let doc: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not valid JSON", file.display()))?;
            let (flow_doc, visuals) = Flow::from_json(&doc)?;
            let location = flow_location(global, true)?;
            let _lock = WriteLock::acquire(&location)?;
            let store = open(&location)?;
            let (n, e) = (flow_doc.nodes.len(), flow_doc.edges.len());
            let c = flow::import(&store, graph, flow_doc, visuals)?;
            outln!(
                "imported {n} nodes and {e} edges into flow graph {graph} (seq {}{})",
                c.seq,
                if c.changed { "" } else { ", unchanged" }
            );
            Ok(Outcome::Done)
        }
        FlowAction::Export { out } => {
            let store = open(&flow_location(global, false)?)?;
            let stored = flow::store::load(&store, graph)?;
            if stored.seq.is_none() {
                bail!("there is no flow graph named {graph}");
            }
            let doc = stored.flow.to_react_flow(&stored.visuals);
            let text = serde_json::to_string_pretty(&doc)? + "\n";
            match out {
                Some(p) => std::fs::write(&p, text)
                    .with_context(|| format!("cannot write {}", p.display()))?,
                None => std::io::stdout().lock().write_all(text.as_bytes())?,
            }
            Ok(Outcome::Done)
        }
        FlowAction::Undo | FlowAction::Redo => {
            let name = if matches!(action, FlowAction::Undo) {
                "undo"
            } else {
                "redo"
            };
            let location = flow_location(global, false)?;
            let _lock = WriteLock::acquire(&location)?;
            let store = open(&location)?;
            let mut session = FlowSession::open(&store, graph)?;
            let done = session.execute_one(&ToolCall::new(name, serde_json::json!({})))?;
            if let Some(err) = &done.result.error {
                outln!("{err}");
                return Ok(Outcome::NothingToRevert);
            }
            let c = session.commit()?;
            outln!("{} (seq {})", done.change.unwrap_or_default(), c.seq);
            Ok(Outcome::Done)
        }
    }
}

pub fn tools_cmd(json: bool) -> Result<Outcome> {
    let defs = tools::definitions();
    if json {
        print_json(&defs)?;
        return Ok(Outcome::Done);
    }
    let mut out = std::io::stdout().lock();
    for d in defs.as_array().into_iter().flatten() {
        writeln!(
            out,
            "{:<17} {}",
            d["name"].as_str().unwrap_or(""),
            d["description"].as_str().unwrap_or("")
        )?;
    }
    Ok(Outcome::Done)
}

pub fn history_cmd(global: &Global, action: HistoryAction) -> Result<Outcome> {
    let graph = flow_graph(global)?;
    let location = flow_location(global, false)?;
    match action {
        HistoryAction::Show { json } => {
            let store = open(&location)?;
            let all = history::newest(&store, graph, usize::MAX >> 1)?;
            if json {
                print_json(&all)?;
            } else {
                let mut out = std::io::stdout().lock();
                for m in &all {
                    writeln!(out, "--- {} {} ({})", m.idx, m.role, m.at)?;
                    writeln!(out, "{}", m.content)?;
                }
            }
            Ok(Outcome::Done)
        }
        HistoryAction::Clear => {
            let _lock = WriteLock::acquire(&location)?;
            let store = open(&location)?;
            let n = history::clear(&store, graph)?;
            outln!("cleared {n} messages of graph {graph}");
            Ok(Outcome::Done)
        }
    }
}

/// The LLM client of this process: config file and environment.
pub fn client() -> Result<ChatClient> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = LlmConfig::load(&cwd, &|k| std::env::var(k).ok())?;
    Ok(ChatClient::new(config))
}

/// Tell the user on stderr which providers failed before one answered.
pub fn report_failovers(failures: &[ProviderFailure], used: &str) {
    for f in failures {
        eprintln!(
            "graphctx: provider {} failed ({}); trying the next",
            f.provider, f.error
        );
    }
    if !failures.is_empty() {
        eprintln!("graphctx: answered by provider {used}");
    }
}

pub fn ask_cmd(global: &Global, args: AskArgs) -> Result<Outcome> {
    let graph = flow_graph(global)?;
    let client = client()?;
    let location = flow_location(global, false)?;
    let _lock = WriteLock::acquire(&location)?;
    let store = open(&location)?;
    let opts = AskOptions {
        max_iterations: args.max_iterations,
        ..AskOptions::default()
    };
    let outcome = ask(&store, graph, &client, &args.request, &opts)?;
    for a in &outcome.answers {
        report_failovers(&a.failovers, &a.provider);
    }
    if args.json {
        print_json(&outcome)?;
    } else {
        print_outcome(&outcome)?;
    }
    Ok(if outcome.success {
        Outcome::Done
    } else {
        Outcome::NotAnswered
    })
}

fn print_outcome(o: &AskOutcome) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for a in &o.answers {
        writeln!(
            out,
            "answer {} from {} ({}), {} context tokens",
            a.iteration, a.provider, a.model, a.context_tokens
        )?;
        if !a.thinking.is_empty() {
            writeln!(
                out,
                "  thinking: {}",
                a.thinking.replace('\n', "\n            ")
            )?;
        }
        for c in &a.calls {
            let params = serde_json::to_string(&c.params)?;
            if c.result.success {
                writeln!(out, "  ✅ {}({params})", c.name)?;
            } else {
                writeln!(
                    out,
                    "  ❌ {}({params}): {}",
                    c.name,
                    c.result.error.as_deref().unwrap_or("")
                )?;
            }
        }
        if a.calls.is_empty() && !a.content.is_empty() {
            writeln!(out, "  {}", a.content.replace('\n', "\n  "))?;
        }
    }
    if let Some(e) = &o.parse_error {
        writeln!(out, "parse error (not retried): {e}")?;
    }
    if let Some(e) = &o.retry_error {
        writeln!(out, "the retry could not be sent: {e}")?;
    }
    if o.changes.is_empty() {
        writeln!(out, "no changes")?;
    } else {
        writeln!(out, "changes:")?;
        for c in &o.changes {
            writeln!(out, "  {c}")?;
        }
    }
    let status = if o.success { "done" } else { "not done" };
    writeln!(
        out,
        "{status} after {} iteration{}; {} nodes, {} edges (seq {})",
        o.iterations,
        if o.iterations == 1 { "" } else { "s" },
        o.flow.nodes.len(),
        o.flow.edges.len(),
        o.seq
    )?;
    Ok(())
}

fn read_input(file: &Path) -> Result<String> {
    if file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s)?;
        return Ok(s);
    }
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
}

pub fn canvas_ask_cmd(args: CanvasAskArgs) -> Result<Outcome> {
    let client = client()?;
    let done = ask_canvas(&client, &args.file, &args.node, args.vault.as_deref())?;
    for w in &done.warnings {
        eprintln!("graphctx: warning: {w}");
    }
    report_failovers(&done.failovers, &done.provider);
    if args.json {
        print_json(&done)?;
    } else {
        outln!(
            "answered by {} ({}) from {} messages, {} tokens: node {} (edge {})",
            done.provider,
            done.model,
            done.messages,
            done.context_tokens,
            done.response.node,
            done.response.edge
        );
    }
    Ok(Outcome::Done)
}
