//! The rows a run that changes the index writes, in order: entities and
//! their words, then the references resolved, the links that differ,
//! usage around them and the file rows, all landing in one transaction.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::cache::InterfaceCache;
use super::phases::land_early;
use super::run::Run;
use super::scope::Scope;
use super::{IndexError, ListsRewritten};
use crate::languages;
use crate::links::{FileLinks, HeldRefs, RefsApart};
use crate::model::{FileContext, FileExtract};
use crate::polyglot::{self, lang_of, Tables};
use crate::replay::StoredLinks;
use crate::state::{CodeCounts, StoredFile};
use crate::store::rows::CodeStatsRow;
use crate::store::StoreError;
use crate::text;
use crate::walk::SourceFile;
use crate::write::{
    self, EntitiesWritten, ExtractsNowAndBefore, LinksWritten, UsageScope, UsageTouched,
};

/// Every file's extract as the run leaves it, and the symbol table a
/// server keeps of their interfaces. The links borrow them, so from
/// resolution on they are held beside the run's state, which the stages
/// that write the links go on changing; the cache keeps them at the end.
pub(super) struct Resolvable {
    pub(super) extracts: BTreeMap<String, (FileContext, FileExtract)>,
    pub(super) table: Option<Tables>,
    /// Links replayed instead of resolved (see [`Run::replay_links`]).
    pub(super) replayed: BTreeMap<String, StoredLinks>,
}

/// What resolution found: the links of the files resolved now, and each
/// one's digest (what its stored file row is compared by).
pub(super) struct Resolved<'r> {
    links: BTreeMap<String, FileLinks<'r>>,
    pub(super) digests: BTreeMap<String, String>,
}

/// The entities whose usage rows the run's changes reach (see
/// [`UsageTouched`]).
pub(super) struct Touched {
    keys: BTreeSet<String>,
    tested: BTreeSet<String>,
    incoming: BTreeSet<String>,
}

impl Run<'_> {
    /// [`land_early`] of the run's batch, while `running` runs.
    pub(super) fn land(&mut self, running: &'static str) -> Result<(), StoreError> {
        land_early(self.store, &mut self.batch, &mut self.phases, running)
    }

    /// Stage: write entities. Entities and their words first: they follow
    /// from the extracts alone, and a database being built lands them
    /// while the references are resolved, instead of after.
    pub(super) fn write_entities(&mut self) -> Result<EntitiesWritten, IndexError> {
        self.phases.show("diff");
        // The changed sets are wanted only where text or usage rows are
        // updated, not rewritten whole.
        let written = write::write_entities(
            self.store,
            self.graph,
            &mut self.batch,
            &self.replaced,
            &self.deleted,
            ExtractsNowAndBefore {
                now: &self.extracts,
                before: &self.old_interfaces,
            },
            self.text_current || self.usage_current,
        )?;
        self.land("diff")?;
        Ok(written)
    }

    /// Stage: write text. The text index's rows of the entities touched
    /// (of every entity when they are written anew) and of the files
    /// parsed now or gone; a run without the text index marks it stale.
    pub(super) fn write_text(&mut self) -> Result<(), IndexError> {
        let (store, graph) = (self.store, self.graph);
        if self.opts.text_index {
            // The files that held or hold the touched entities.
            let text_files: BTreeSet<String> = match self.text_current {
                true => self.replaced.iter().chain(&self.deleted).cloned().collect(),
                false => BTreeSet::new(),
            };
            let entity_words = text::write(
                store,
                graph,
                &mut self.batch,
                &self.extracts,
                self.text_current.then_some(&text_files),
            )?;
            self.land("diff")?;
            // Files: the words of those parsed now (of every file when the
            // text rows are written anew), and the files gone.
            if !self.text_current {
                self.read_words();
            }
            let extracts = &self.extracts;
            self.words_now.retain(|p, _| extracts.contains_key(p));
            let gone: BTreeSet<String> = self
                .replaced
                .iter()
                .chain(&self.deleted)
                .filter(|p| !extracts.contains_key(*p))
                .cloned()
                .collect();
            let anew = !self.text_current;
            let file_words =
                text::write_files(store, graph, &mut self.batch, &self.words_now, &gone, anew)?;
            self.summary.lists_rewritten = ListsRewritten {
                entity_words,
                file_words,
            };
        } else {
            text::invalidate(graph, &mut self.batch);
        }
        // Every file's words, on a first index: not held through the
        // stages that follow.
        drop(std::mem::take(&mut self.words_now));
        self.land("diff")?;
        self.phases.lap("diff");
        Ok(())
    }

    /// The words of every file not parsed now, read from the tree.
    fn read_words(&mut self) {
        let by_path: BTreeMap<&str, &SourceFile> = self
            .walked
            .files
            .iter()
            .map(|f| (f.ctx.path.as_str(), f))
            .collect();
        let missing: Vec<(String, text::FileWords)> = self
            .extracts
            .keys()
            .filter(|p| !self.words_now.contains_key(*p))
            .filter_map(|p| by_path.get(p.as_str()).map(|f| (p, *f)))
            .collect::<Vec<_>>()
            .par_iter()
            .filter_map(|(p, f)| {
                let bytes = std::fs::read(&f.abs_path).ok()?;
                let (text, _) = languages::get(f.lang).decode(bytes);
                Some(((*p).clone(), text::FileWords::of(p, &text)))
            })
            .collect();
        self.words_now.extend(missing);
    }

    /// Stage: prepare resolution. The references of the files resolved
    /// now held apart from their extracts, a server's symbol table brought
    /// up to date, and what the names rows it keeps say of the files
    /// parsed now; then the extracts and the table leave the run's state
    /// for the links to borrow ([`Resolvable`]).
    pub(super) fn prepare_resolution(&mut self, cache: &InterfaceCache) -> (Resolvable, RefsApart) {
        self.phases.show("resolve");
        let apart = self.take_refs_apart();
        if !matches!(self.scope, Scope::Narrow) {
            self.refresh_table(cache.keep_table);
        }
        self.note_mentioned(&apart);
        let now = Resolvable {
            extracts: std::mem::take(&mut self.extracts),
            table: self.resident.take(),
            replayed: std::mem::take(&mut self.replayed),
        };
        (now, apart)
    }

    /// The references of the files resolved now that the table does not
    /// read are held apart, and dropped once resolved: the links borrow
    /// only the extracts, which later stages still read.
    fn take_refs_apart(&mut self) -> RefsApart {
        let (scope, replaced, bodies) = (&self.scope, &self.replaced, &self.bodies);
        let resolving = |p: &str| scope.resolves(p, replaced);
        // Those of the files parsed now are held packed since the parse.
        let mut apart: RefsApart = self
            .extracts
            .par_iter_mut()
            .filter(|(p, _)| resolving(p) && !bodies.contains_key(*p))
            .filter_map(|(p, (_, ex))| {
                let body = lang_of(ex).take_apart(ex);
                (!body.is_empty()).then(|| (p.clone(), HeldRefs::Refs(body)))
            })
            .collect();
        for (p, body) in std::mem::take(&mut self.bodies) {
            if resolving(&p) && self.extracts.contains_key(&p) {
                apart.insert(p, HeldRefs::Packed(body));
            }
        }
        apart
    }

    /// Some interface changed (or might have): the table is stale.
    /// A server keeps the table of this run's interfaces: built
    /// once, here, and the run resolves against it.
    /// When no other file's context moved, the last table's
    /// interfaces are reused and only the edited files' copied.
    fn refresh_table(&mut self, keep_table: bool) {
        let (extracts, replaced) = (&self.extracts, &self.replaced);
        let resident = &mut self.resident;
        let contexts_known = self.contexts_known;
        *resident = keep_table.then(|| match resident.take() {
            Some(last) if contexts_known => {
                let now = replaced
                    .iter()
                    .filter_map(|p| extracts.get(p))
                    .map(|(ctx, ex)| (ctx.clone(), lang_of(ex).interface_copy(ex)))
                    .collect();
                last.update(&|p| replaced.contains(p), now)
            }
            _ => {
                let copies = extracts
                    .values()
                    .map(|(ctx, ex)| (ctx.clone(), lang_of(ex).interface_copy(ex)))
                    .collect();
                Tables::build(copies)
            }
        });
    }

    /// What the names rows kept by a server say of the files parsed now
    /// reads their references: taken before those are dropped.
    fn note_mentioned(&mut self, apart: &RefsApart) {
        self.mentioned_now = match &self.held_names {
            Some(_) => self
                .replaced
                .iter()
                .filter_map(|p| {
                    let (_, ex) = self.extracts.get(p)?;
                    let lang = lang_of(ex);
                    let apart = apart.get(p).map(|h| h.to_refs(|b| lang.decode_body(b)));
                    Some((
                        p.clone(),
                        lang.mentioned_with(ex, apart.as_deref().unwrap_or(&[])),
                    ))
                })
                .collect(),
            None => BTreeMap::new(),
        };
    }

    /// Stage: resolve the references of the files in scope, against the
    /// server's table when there is one (it holds every file's interface),
    /// or a table of every extract built for this run.
    pub(super) fn resolve<'r>(&mut self, now: &'r Resolvable, apart: RefsApart) -> Resolved<'r> {
        let (scope, replaced) = (&self.scope, &self.replaced);
        let resolving = |p: &str| scope.resolves(p, replaced);
        let inputs: Vec<(&FileContext, &FileExtract)> =
            now.extracts.values().map(|(c, e)| (c, e)).collect();
        let picked = |keep: &dyn Fn(&str) -> bool| -> Vec<(&FileContext, &FileExtract)> {
            inputs
                .iter()
                .filter(|(_, e)| keep(&e.path))
                .copied()
                .collect()
        };
        let links = match (&now.table, scope) {
            _ if !now.replayed.is_empty() => now
                .replayed
                .iter()
                .map(|(p, l)| (p.clone(), l.links()))
                .collect(),
            (Some(table), Scope::Narrow | Scope::Scoped(_)) => {
                table.resolve_files(&picked(&resolving), apart)
            }
            (Some(table), Scope::All) => table.resolve_files(&inputs, apart),
            (None, _) => polyglot::resolve_files(&inputs, &resolving, apart),
        };
        let digests: BTreeMap<String, String> = links
            .par_iter()
            .map(|(p, l)| (p.clone(), l.digest()))
            .collect();
        self.phases.lap("resolve");
        Resolved { links, digests }
    }

    /// Stage: write links. The edges and unresolved references of the
    /// files whose links changed; with them, the entities whose usage rows
    /// the change reaches and the graph's totals after the run.
    pub(super) fn write_links(
        &mut self,
        now: &Resolvable,
        resolved: &mut Resolved<'_>,
        written: EntitiesWritten,
    ) -> Result<(Touched, CodeCounts), IndexError> {
        self.phases.show("diff");
        let linked = write::write_links(
            self.store,
            self.graph,
            &mut self.batch,
            &resolved.links,
            &resolved.digests,
            &self.stored,
            &self.deleted,
            self.usage_current,
        )?;
        self.land("diff")?;
        let counts = self.count_totals(now, resolved, written.entities_delta, &linked);
        let touched = self.touched(written.facts_changed, linked);
        // Usage reads the edges alone: the unresolved references, written
        // and counted now, are not held through it.
        for l in resolved.links.values_mut() {
            l.unresolved = Box::default();
        }
        self.phases.lap("diff");
        Ok((touched, counts))
    }

    /// Usage rows follow the entities whose facts changed and the
    /// endpoints of changed edges, not every entity whose lines moved.
    fn touched(&self, facts_changed: BTreeSet<String>, linked: LinksWritten) -> Touched {
        let mut usage_touched = facts_changed;
        // The entities whose edges in changed, or that are new or changed
        // themselves; of the others, usage reads only the edges out.
        let mut usage_incoming = match self.usage_current {
            true => usage_touched.clone(),
            false => BTreeSet::new(),
        };
        usage_incoming.extend(linked.targets);
        usage_touched.extend(linked.endpoints);
        Touched {
            keys: usage_touched,
            tested: linked.tested,
            incoming: usage_incoming,
        }
    }

    /// The graph's totals after the run: the stored ones moved by the
    /// run's differences when it resolved only some files, else counted.
    fn count_totals(
        &mut self,
        now: &Resolvable,
        resolved: &Resolved<'_>,
        entities_delta: i64,
        linked: &LinksWritten,
    ) -> CodeCounts {
        let part = !matches!(self.scope, Scope::All);
        match self.stored_counts.take().filter(|_| part) {
            Some(old) => CodeCounts {
                entities: old.entities + entities_delta,
                edges: old.edges + linked.delta.edges,
                unresolved: old.unresolved + linked.delta.unresolved,
                ambiguous: old.ambiguous + linked.delta.ambiguous,
            },
            None => {
                let count = |f: fn(&FileLinks) -> usize| {
                    resolved.links.values().map(f).sum::<usize>() as i64
                };
                CodeCounts {
                    entities: now
                        .extracts
                        .values()
                        .map(|(_, e)| e.entities.len())
                        .sum::<usize>() as i64,
                    edges: count(|l| l.edges.len()),
                    unresolved: count(|l| l.unresolved.len()),
                    ambiguous: count(|l| l.ambiguous_count()),
                }
            }
        }
    }

    /// Stage: write usage. The usage rows around what changed (every
    /// entity's when the rows are of another version).
    pub(super) fn write_usage(
        &mut self,
        now: &Resolvable,
        resolved: &Resolved<'_>,
        touched: Touched,
    ) -> Result<(), IndexError> {
        let usage_scope = match &self.scope {
            Scope::Scoped(scope) => UsageScope::Around(scope),
            Scope::Narrow => UsageScope::Around(&self.replaced),
            Scope::All => UsageScope::AllLinks,
        };
        write::write_usage(
            self.store,
            self.graph,
            &mut self.batch,
            &resolved.links,
            &now.extracts,
            self.usage_current.then_some(UsageTouched {
                keys: &touched.keys,
                tested: &touched.tested,
                incoming: &touched.incoming,
            }),
            usage_scope,
        )?;
        self.land("usage")?;
        self.phases.lap("usage");
        Ok(())
    }

    /// Stage: write files, and apply. The file rows and the totals join
    /// the batch, which lands as one change of the graph. Each file row
    /// is returned as written (`None`: deleted).
    pub(super) fn write_files(
        &mut self,
        now: &Resolvable,
        resolved: Resolved<'_>,
        counts: CodeCounts,
    ) -> Result<Vec<(String, Option<StoredFile>)>, IndexError> {
        self.phases.show("diff");
        let file_rows = write::write_files(
            self.graph,
            &mut self.batch,
            &self.new_files,
            &resolved.digests,
            &self.stored,
            &now.extracts,
            &self.deleted,
            &self.walked.files,
        );
        self.batch.put_row(CodeStatsRow {
            graph: self.graph.into(),
            files: self.walked.files.len() as i64,
            entities: counts.entities,
            edges: counts.edges,
            unresolved: counts.unresolved,
            ambiguous: counts.ambiguous,
        });
        let change = self
            .store
            .begin_graph_change(self.graph)?
            .with_source(self.root.display().to_string());
        self.batch.lands_as(change);
        self.summary.rows_written = self.batch.landed_early().rows + self.batch.len();
        self.summary.files_resolved = resolved.links.len() - self.summary.files_replayed;
        // Nothing below reads the links: not held while the last rows land.
        drop(resolved);
        self.phases.lap("diff");
        self.phases.show("write");
        self.store.apply(std::mem::take(&mut self.batch))?;
        self.phases.lap("write");
        Ok(file_rows)
    }
}
