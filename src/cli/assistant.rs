//! `graph ask` and `graph history`: the ontology assistant.
//!
//! Output of `graph ask` is JSON lines on stdout as they happen: the view
//! updates of the applied answer (chat, then per chunk text and graph,
//! exactly as `apply` prints them), and with `--json` also the
//! `{"event": "context"}` and `{"event": "iteration"}` reports and a last
//! `{"outcome": ...}` line (`{"stats": ...}` before it with `--stats`).
//! Without `--json` the reports go to stderr as text. Exit code 0 when an
//! answer was accepted, 1 when none was within `--max-iterations`.

use super::Outcome;
use std::io::Write;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use graphctx::assistant::{self, history, AskOptions, AskOutcome};
use graphctx::capture::{self, Mode};
use graphctx::index::CODE_GRAPH;
use graphctx::store::lock::WriteLock;
use graphctx::store::{Location, Store};

use super::output::print_json;
use super::Global;

#[derive(Clone, Copy, ValueEnum)]
pub enum AskModeArg {
    Auto,
    Full,
    Selected,
    Visible,
    Changed,
    Minimal,
}

#[derive(Args)]
pub struct GraphAskArgs {
    /// What to change or ask, in plain words.
    pub request: String,
    /// Canvas session id (created with default state when new).
    #[arg(long)]
    pub session: String,
    /// Capture mode; `auto` chooses minimal, selected or full by a fixed rule
    /// (docs/ontology-assistant.md) and reports which.
    #[arg(long, value_enum, default_value = "auto")]
    pub mode: AskModeArg,
    /// Answers at most (the first and the retries after rejected answers).
    #[arg(long, default_value_t = assistant::MAX_ITERATIONS)]
    pub max_iterations: usize,
    /// The user asking; must be a member of the session when it has members.
    #[arg(long)]
    pub user: Option<String>,
    /// Reports and the outcome as JSON lines on stdout.
    #[arg(long)]
    pub json: bool,
    /// Capture cache hit rate of the session and the provider's token usage.
    #[arg(long)]
    pub stats: bool,
}

#[derive(Args)]
pub struct GraphHistoryArgs {
    #[arg(long)]
    pub session: String,
    #[arg(long)]
    pub json: bool,
    /// Forget the session's conversation.
    #[arg(long)]
    pub clear: bool,
}

fn ontology_graph(global: &Global) -> Result<&str> {
    if global.graph == CODE_GRAPH {
        anyhow::bail!(
            "pass --graph NAME: the assistant edits ontology graphs, and `{CODE_GRAPH}` is the \
             default name of the code graph"
        );
    }
    Ok(&global.graph)
}

fn location(global: &Global) -> Result<Location> {
    if let Ok(l) = super::locate(global) {
        return Ok(l);
    }
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(Location::default_for(&cwd))
}

fn line(out: &mut impl Write, v: &Value) {
    let _ = serde_json::to_writer(&mut *out, v);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

pub fn ask(global: &Global, a: GraphAskArgs) -> Result<Outcome> {
    let graph = ontology_graph(global)?;
    if a.max_iterations == 0 {
        anyhow::bail!("--max-iterations must be at least 1");
    }
    let client = super::flow::client()?;
    let location = location(global)?;
    let _lock = WriteLock::acquire(&location)?;
    let store = Store::open(&location)?;
    let opts = AskOptions {
        mode: match a.mode {
            AskModeArg::Auto => None,
            AskModeArg::Full => Some(Mode::Full),
            AskModeArg::Selected => Some(Mode::Selected),
            AskModeArg::Visible => Some(Mode::Visible),
            AskModeArg::Changed => Some(Mode::Changed),
            AskModeArg::Minimal => Some(Mode::Minimal),
        },
        max_iterations: a.max_iterations,
        user: a.user.clone(),
        ..AskOptions::default()
    };
    let stdout = std::io::stdout();
    let json_out = a.json;
    let mut emit = |v: &Value| {
        if v.get("event").is_none() || json_out {
            line(&mut stdout.lock(), v);
        } else {
            report(v);
        }
    };
    let outcome = assistant::ask(
        &store, graph, &a.session, &client, &a.request, &opts, &mut emit,
    )?;
    let stats = if a.stats {
        Some(json!({
            "captureCache": capture::stats(&store, graph, Some(&a.session))?,
            "usage": outcome.usage,
            "tokens": outcome.tokens,
        }))
    } else {
        None
    };
    if a.json {
        let mut out = stdout.lock();
        if let Some(s) = &stats {
            line(&mut out, &json!({ "stats": s }));
        }
        line(&mut out, &json!({ "outcome": outcome }));
    } else {
        finish(&outcome, stats.as_ref());
    }
    Ok(if outcome.success {
        Outcome::Done
    } else {
        Outcome::NotAnswered
    })
}

/// A report line as text on stderr.
fn report(v: &Value) {
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    match v["event"].as_str() {
        Some("context") => eprintln!(
            "graphctx: mode {} ({}), {} nodes, {} edges, capture {}; request ~{} tokens ({} cacheable: rules {}, context {}; history {}, request {})",
            s("/mode/mode"),
            s("/mode/rule"),
            n("/capture/nodes"),
            n("/capture/edges"),
            if v.pointer("/capture/cached") == Some(&Value::Bool(true)) { "from cache" } else { "computed" },
            n("/tokens/total"),
            n("/tokens/cacheable"),
            n("/tokens/rules"),
            n("/tokens/context"),
            n("/tokens/history"),
            n("/tokens/request"),
        ),
        Some("iteration") => {
            for f in v["failovers"].as_array().into_iter().flatten() {
                eprintln!(
                    "graphctx: provider {} failed ({})",
                    f["provider"].as_str().unwrap_or(""),
                    f["error"].as_str().unwrap_or("")
                );
            }
            let who = match v["provider"].as_str() {
                Some(p) => format!(" from {p}"),
                None => String::new(),
            };
            let mut msg = format!(
                "graphctx: answer {}{who}: {}",
                n("/iteration"),
                s("/status")
            );
            if let Some(e) = v.get("error") {
                msg.push_str(&format!(
                    " — {}: {}",
                    e["error"].as_str().unwrap_or(""),
                    e["message"].as_str().unwrap_or("")
                ));
            }
            if let Some(u) = v.get("usage") {
                msg.push_str(&format!(" [usage {u}]"));
            }
            eprintln!("{msg}");
        }
        _ => {}
    }
}

fn finish(o: &AskOutcome, stats: Option<&Value>) {
    match (&o.summary, o.success) {
        (Some(s), true) => eprintln!(
            "graphctx: {} after {} answer{}; graph {} at seq {}{}",
            o.status,
            o.iterations,
            if o.iterations == 1 { "" } else { "s" },
            o.graph,
            o.seq,
            s.entry
                .map(|e| format!(
                    ", change-log entry {e} (graphctx undo --graph {} reverts it)",
                    o.graph
                ))
                .unwrap_or_default()
        ),
        _ => eprintln!(
            "graphctx: no answer accepted after {} answer{}; graph {} unchanged (seq {})",
            o.iterations,
            if o.iterations == 1 { "" } else { "s" },
            o.graph,
            o.seq
        ),
    }
    if let Some(s) = stats {
        for c in s["captureCache"].as_array().into_iter().flatten() {
            eprintln!(
                "graphctx: capture cache of session {}: {} hits, {} misses, hit rate {:.1} %",
                c["session"].as_str().unwrap_or(""),
                c["hits"],
                c["misses"],
                c["hitRate"].as_f64().unwrap_or(0.0) * 100.0
            );
        }
        eprintln!("graphctx: provider usage {}", s["usage"]);
    }
}

pub fn history_cmd(global: &Global, a: GraphHistoryArgs) -> Result<Outcome> {
    let graph = ontology_graph(global)?;
    let location = location(global)?;
    if a.clear {
        let _lock = WriteLock::acquire(&location)?;
        let store = Store::open(&location)?;
        let n = history::clear(&store, graph, &a.session)?;
        outln!(
            "cleared {n} messages of graph {graph}, session {}",
            a.session
        );
        return Ok(Outcome::Done);
    }
    let store = super::open_existing(global)?;
    let all = history::newest(&store, graph, &a.session, usize::MAX >> 1)?;
    if a.json {
        print_json(&all)?;
    } else {
        let mut out = std::io::stdout().lock();
        for m in &all {
            writeln!(out, "--- {} {} ({})", m.idx, m.role, m.at)?;
            writeln!(out, "{}", m.content)?;
            if !m.result.is_null() {
                writeln!(out, "=> {}", m.result)?;
            }
        }
    }
    Ok(Outcome::Done)
}
