//! `search`: entities ranked for a free-text query.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use graphctx::model::EntityKind;
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

pub fn run(
    store: &Store,
    graph_name: &str,
    query: &str,
    opts: Options,
    json: bool,
) -> Result<Outcome> {
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
    let hits = match search::search(store, graph_name, query, &opts) {
        Ok(h) => h,
        Err(SearchError::NoWords) => bail!("the query has no words to search for"),
        Err(SearchError::Store(e)) => return Err(e.into()),
    };
    if json {
        print_json(&hits)?;
    } else {
        let table: Vec<Vec<String>> = hits
            .iter()
            .map(|h| {
                let mut why = h.why.line();
                if let Some(s) = &h.why.signals {
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
    Ok(Outcome::Done)
}
