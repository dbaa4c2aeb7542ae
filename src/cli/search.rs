//! `search`: entities ranked for a free-text query.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use graphctx::model::EntityKind;
use graphctx::search::weights::Scoring;
use graphctx::search::{self, Options, SearchError};
use graphctx::store::Store;

use super::output::{print_json, print_table};
use super::Outcome;

/// Default number of hits.
pub const DEFAULT_LIMIT: usize = 20;

/// The query text: as given, or read from a file or standard input (`-`),
/// so that an issue's body never has to be escaped for a shell. Bytes that
/// are not UTF-8 are read as U+FFFD, never refused.
pub fn query_text(query: Option<String>, file: Option<PathBuf>) -> Result<String> {
    let from = match (query, file) {
        (Some(q), None) if q != "-" => return Ok(q),
        (Some(_), None) => None,
        (None, Some(f)) if f.as_os_str() == "-" => None,
        (None, Some(f)) => Some(f),
        _ => bail!("give the query as TEXT, as `-` (standard input) or with --query-file FILE"),
    };
    let mut bytes = Vec::new();
    match &from {
        None => {
            std::io::stdin()
                .lock()
                .read_to_end(&mut bytes)
                .context("cannot read the query from standard input")?;
        }
        Some(path) => {
            bytes = std::fs::read(path)
                .with_context(|| format!("cannot read the query file {}", path.display()))?;
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// What `search` was asked: a file of queries, or one query's text.
pub enum Asked {
    Batch(PathBuf),
    Text(String),
}

/// `--scoring`.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ScoringArg {
    Fitted,
    Hand,
}

impl From<ScoringArg> for Scoring {
    fn from(s: ScoringArg) -> Scoring {
        match s {
            ScoringArg::Fitted => Scoring::Fitted,
            ScoringArg::Hand => Scoring::Hand,
        }
    }
}

pub fn run(
    store: &Store,
    graph_name: &str,
    query: &str,
    opts: Options,
    json: bool,
    features: bool,
) -> Result<Outcome> {
    check(&opts)?;
    if features {
        let answer = answer(store, graph_name, query, &opts, true)?;
        print_json(&answer)?;
        return Ok(Outcome::Done);
    }
    let hits = match search::search(store, graph_name, query, &opts) {
        Ok(h) => h,
        Err(SearchError::NoWords) => bail!("the query has no words to search for"),
        Err(SearchError::Store(e)) => return Err(e.into()),
    };
    if json {
        print_json(&hits)?;
    } else {
        print_hits(&hits)?;
    }
    Ok(Outcome::Done)
}

/// One query of a batch.
#[derive(serde::Deserialize)]
struct BatchQuery {
    id: serde_json::Value,
    text: String,
}

/// One answer of a batch (or of `--features`): the hits and, with
/// `--features`, every listed file's signals.
#[derive(serde::Serialize)]
struct Answer {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    hits: Vec<search::Hit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<Vec<search::FileRow>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entities: Option<Vec<search::EntityRow>>,
}

fn answer(
    store: &Store,
    graph_name: &str,
    query: &str,
    opts: &Options,
    features: bool,
) -> Result<Answer> {
    let (hits, seen) = match search::search_with_features(store, graph_name, query, opts) {
        Ok(found) => found,
        Err(SearchError::NoWords) => {
            return Ok(Answer {
                id: None,
                error: Some("the query has no words to search for".into()),
                hits: Vec::new(),
                files: None,
                entities: None,
            })
        }
        Err(SearchError::Store(e)) => return Err(e.into()),
    };
    Ok(Answer {
        id: None,
        error: None,
        hits,
        files: features.then_some(seen.files),
        entities: features.then_some(seen.entities),
    })
}

/// `--batch FILE`: every query of FILE answered with the index opened once,
/// one JSON line each, in the order of FILE.
pub fn run_batch(
    store: &Store,
    graph_name: &str,
    batch: &std::path::Path,
    opts: &Options,
    features: bool,
) -> Result<Outcome> {
    check(opts)?;
    let text = std::fs::read_to_string(batch)
        .with_context(|| format!("cannot read the batch file {}", batch.display()))?;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: BatchQuery = serde_json::from_str(line).with_context(|| {
            format!(
                "{}:{}: expected a JSON object with \"id\" and \"text\"",
                batch.display(),
                i + 1
            )
        })?;
        let mut a = answer(store, graph_name, &q.text, opts, features)?;
        a.id = Some(q.id);
        outln!("{}", serde_json::to_string(&a)?);
    }
    Ok(Outcome::Done)
}

fn check(opts: &Options) -> Result<()> {
    if let Some(k) = &opts.kind {
        if EntityKind::parse(k).is_none() {
            let known: Vec<&str> = EntityKind::ALL.iter().map(|k| k.as_str()).collect();
            bail!(
                "unknown entity kind '{k}'; expected one of {}",
                known.join(", ")
            );
        }
    }
    if opts.limit == 0 {
        bail!("--limit must be a positive number");
    }
    Ok(())
}

fn print_hits(hits: &[search::Hit]) -> Result<()> {
    {
        let table: Vec<Vec<String>> = hits
            .iter()
            .map(|h| {
                let mut why = h.why.line();
                let fitted = &h.why.file_signals;
                if let (Some(s), false) = (&h.why.signals, fitted.is_empty()) {
                    let file: Vec<String> = fitted
                        .iter()
                        .map(|c| format!("{} {:.2}", c.signal, c.part))
                        .collect();
                    why = format!(
                        "{why} [words {:.2} graph {:.2}; file {}]",
                        s.words,
                        s.graph,
                        file.join(", ")
                    );
                } else if let Some(s) = &h.why.signals {
                    why = format!(
                        "{why} [words {:.2} graph {:.2} file {:.2} text {:.2} history {:.2} \
                         location {:.2} test {:.1}]",
                        s.words,
                        s.graph,
                        s.file_entities,
                        s.file_text,
                        s.history,
                        s.location,
                        s.test_prior
                    );
                }
                vec![
                    format!("{:.3}", h.score),
                    h.kind.clone(),
                    format!("{}:{}-{}", h.file, h.start_line, h.end_line),
                    h.key.clone(),
                    h.signature.clone(),
                    why,
                ]
            })
            .collect();
        print_table(
            &["SCORE", "KIND", "LOCATION", "KEY", "SIGNATURE", "WHY"],
            &table,
        )?;
    }
    Ok(())
}
