//! The end of a run: the cache refreshed from what it wrote, co-change
//! history, the stat rows, and the summary's totals.

use std::time::Instant;

use super::cache::{InterfaceCache, ResidentFiles};
use super::land::Resolvable;
use super::phases::Phases;
use super::run::{Run, Tree};
use super::{IndexError, IndexSummary};
use crate::fresh::note_run;
use crate::history;
use crate::polyglot::{lang_of, Tables};
use crate::state::{read_counts, record_stats, StatFiles, StoredFile};
use crate::store::rows::{decode_first, query_rows};
use crate::store::{queries, Params, Store, StoreError};
use crate::walk::SourceFile;

query_rows! {
    /// `queries/ambiguous_count.cozo`.
    AmbiguousCount = "ambiguous_count" {
        key { ambiguous: i64 }
    }
}

impl Run<'_> {
    /// Stage: refresh the cache from what the run wrote: the stored file
    /// rows, the names held, the interfaces and a server's table.
    pub(super) fn refresh_cache(
        &mut self,
        cache: &mut InterfaceCache,
        now: Resolvable,
        file_rows: Vec<(String, Option<StoredFile>)>,
    ) {
        let Resolvable {
            mut extracts,
            table: resident,
            replayed,
        } = now;
        // The stored file rows as this run left them.
        for (path, row) in file_rows {
            match row {
                Some(row) => self.stored.insert(path, row),
                None => self.stored.remove(&path),
            };
        }
        // The names rows this run wrote: those of the files parsed now
        // (whole extracts still), none of the files gone. A run that
        // parsed files again for another reason drops the held names.
        match (
            &mut self.held_names,
            self.reparsed_any || !self.legacy_names.is_empty(),
        ) {
            (Some(held), false) => {
                for path in self.replaced.iter().chain(&self.deleted) {
                    match extracts.get(path) {
                        Some((_, ex)) => {
                            let mentioned = self.mentioned_now.remove(path).unwrap_or_default();
                            held.set(path, mentioned, lang_of(ex).spread_facts(ex));
                        }
                        None => held.remove(path),
                    }
                }
                held.settle();
            }
            _ => self.held_names = None,
        }
        cache.graph = self.graph.to_string();
        if !replayed.is_empty() {
            // The edited files' alone: no cache of every interface.
            return;
        }
        for (_, ex) in extracts.values_mut() {
            lang_of(ex).keep_interface(ex);
        }
        if cache.keep_table {
            cache.table = resident.or_else(|| {
                let copies = extracts.values().cloned().collect();
                Some(Tables::build(copies))
            });
        }
        cache.interfaces = extracts;
    }

    /// Stage: finish. Co-change history, the cache's `seq`, and the stat
    /// rows of the files examined (of every file, when the walk was not
    /// the last run's); the run's state ends here, but for what the cache
    /// and the summary take ([`Ended`]).
    pub(super) fn finish(
        mut self,
        cache: &mut InterfaceCache,
        run_started_ns: i64,
    ) -> Result<Ended, IndexError> {
        let (store, graph) = (self.store, self.graph);
        if self.opts.history {
            self.phases.show("history");
        }
        if self.opts.history && history::refresh(store, graph, self.root)? {
            self.phases.lap("history");
        }
        if self.changed && self.summary.files_replayed == 0 {
            // The caller holds the write lock: no other writer came between.
            cache.seq = store.graph_seq(graph)?;
        }

        let all_files: Vec<&SourceFile> = if self.same_files {
            Vec::new()
        } else {
            self.walked.files.iter().collect()
        };
        record_stats(
            store,
            graph,
            if self.same_files {
                StatFiles::Some(&self.examined)
            } else {
                StatFiles::Every(&all_files)
            },
            &self.stored,
            &self.layout_digest,
            &mut self.stats,
            run_started_ns,
        )?;
        let seq_after = store.graph_seq(graph)?;
        let files = cache.keep_table.then(|| ResidentFiles {
            graph: graph.to_string(),
            seq: seq_after,
            states: self.stored,
            stats: self.stats,
            names: self.held_names,
        });
        Ok(Ended {
            summary: self.summary,
            phases: self.phases,
            seq_before: self.seq_before,
            seq_after,
            files,
        })
    }
}

/// What is left of a run once its rows and stat rows are written: the
/// summary to complete, and what a server's cache keeps.
pub(super) struct Ended {
    summary: IndexSummary,
    phases: Phases,
    seq_before: i64,
    seq_after: i64,
    /// The file and stat rows as the run left them, for a cache that keeps
    /// the symbol table.
    files: Option<ResidentFiles>,
}

impl Ended {
    /// Stage: keep the file rows and the walk in a server's cache.
    pub(super) fn keep(mut self, cache: &mut InterfaceCache, tree: Tree) -> Ended {
        if let Some(files) = self.files.take() {
            cache.files = Some(files);
            cache.walk = tree.into_snapshot();
        }
        self
    }

    /// Stage: report. The graph's totals after the run, its `seq` and the
    /// times, noted as the index's last run.
    pub(super) fn report(
        self,
        store: &Store,
        graph: &str,
        started: Instant,
    ) -> Result<IndexSummary, IndexError> {
        let Ended {
            mut summary,
            mut phases,
            seq_before,
            seq_after,
            ..
        } = self;
        if let Some(c) = read_counts(store, graph)? {
            summary.entities = c.entities;
            summary.edges = c.edges;
            summary.unresolved = c.unresolved;
            summary.ambiguous = c.ambiguous;
        }
        if summary.ambiguous < 0 {
            // Last written before the count was kept: count once by a scan.
            let ambiguous =
                store.read(queries::AMBIGUOUS_COUNT, Params::new().with("graph", graph))?;
            summary.ambiguous = decode_first::<AmbiguousCount>(&ambiguous)
                .map_err(StoreError::from)?
                .map_or(0, |r| r.ambiguous);
        }
        summary.seq = seq_after;
        summary.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        summary.phases_ms = std::mem::take(&mut phases.done);
        note_run(store, &summary, graph, seq_after != seq_before);
        Ok(summary)
    }
}
