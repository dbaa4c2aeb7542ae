//! `graphctx index --rebuild`: the code graph made anew in a new database
//! file, everything else the old one holds kept (see
//! `graphctx::store::rebuild`), and a report of what was kept, saved and
//! lost.
//!
//! Refused while a server watches the database (its connection would go
//! on reading the replaced file), and for a database of a newer schema
//! unless `--allow-downgrade` confirms it.

use std::path::Path;

use anyhow::{bail, Result};

use graphctx::index::{self, IndexOptions, IndexSummary};
use graphctx::serve::presence;
use graphctx::store::rebuild::{self, Condition, Options, Rebuilt};
use graphctx::store::Location;

use super::{output, Outcome};

/// Rebuild the database at `location` from `root` (the caller holds its
/// write lock). Exit 1 when something the old database held could not be
/// kept in the new one.
pub fn run(
    location: &Location,
    root: &Path,
    opts: &IndexOptions,
    allow_downgrade: bool,
    json: bool,
) -> Result<Outcome> {
    let Location::Sqlite(path) = location else {
        bail!("--rebuild needs a database file; an in-memory database is new on every run");
    };
    let watchers = presence::watchers(path);
    if !watchers.is_empty() {
        let pids: Vec<String> = watchers.iter().map(|w| w.pid.to_string()).collect();
        bail!(
            "refusing to rebuild {}: graphctx servers are watching it (pid {}); stop them \
             (`graphctx status` lists them) and run the rebuild again",
            path.display(),
            pids.join(", ")
        );
    }
    let rebuilt = rebuild::rebuild(
        path,
        &Options {
            graph: opts.graph.clone(),
            allow_downgrade,
        },
        |new| index::index_location(new, root, opts),
    )?;
    output::print_index_summary(&rebuilt.summary, json)?;
    report(path, &rebuilt);
    let lost = !rebuilt.not_kept.is_empty() || !rebuilt.unreadable.is_empty();
    Ok(if lost {
        Outcome::NotAllKept
    } else if rebuilt.summary.files_skipped > 0 {
        Outcome::FilesSkipped
    } else {
        Outcome::Done
    })
}

/// What the rebuild found, kept, saved and could not save, on stderr
/// (stdout holds the index summary, JSON with `--json`).
fn report(path: &Path, r: &Rebuilt<IndexSummary>) {
    let db = path.display();
    match &r.condition {
        Condition::Missing => {
            eprintln!("graphctx: {db} did not exist; it was indexed anew");
            return;
        }
        Condition::Sound => eprintln!("graphctx: rebuilt the code graph of {db}"),
        Condition::Damaged(what) => eprintln!("graphctx: {db} was damaged ({what}); rebuilt it"),
        Condition::Newer(v) => eprintln!(
            "graphctx: {db} had schema version {v} of a newer graphctx; rebuilt it for this one"
        ),
    }
    let rows: usize = r.kept.iter().map(|(_, n)| n).sum();
    if r.kept.is_empty() {
        eprintln!("graphctx: nothing besides the code graph was kept (there was nothing else to keep, or nothing could be read)");
    } else {
        let names: Vec<&str> = r.kept.iter().map(|(n, _)| n.as_str()).collect();
        eprintln!(
            "graphctx: kept {rows} rows of ontology graphs, canvas sessions, flows and conversations ({})",
            names.join(", ")
        );
    }
    if let Some(salvage) = &r.salvage {
        eprintln!(
            "graphctx: what could be read was saved first to {}",
            salvage.display()
        );
    }
    if let Some(aside) = &r.set_aside {
        eprintln!("graphctx: the old file is kept as {}", aside.display());
    }
    for (name, why) in &r.not_kept {
        eprintln!(
            "graphctx: not kept in the new database: {name} ({why}); its rows are in the salvage file"
        );
    }
    for (name, why) in &r.unreadable {
        let what = if name == "*" {
            "could not be saved: nothing could be read from the old file".to_string()
        } else {
            format!("could not be saved: relation {name} could not be read")
        };
        eprintln!("graphctx: {what} ({why})");
    }
}
