//! `search`: entities ranked for a free-text query.

use anyhow::{bail, Result};

use graphctx::analyse::search::{self, Options, SearchError};
use graphctx::model::EntityKind;
use graphctx::store::Store;

use super::output::{print_json, print_table};
use super::Outcome;

/// Default number of hits.
pub const DEFAULT_LIMIT: usize = 20;

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
                let why = match (&h.why.path, h.why.terms.is_empty()) {
                    (Some([from, rel, _]), true) => format!("{rel} {from}"),
                    _ => h.why.terms.join(" "),
                };
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
