//! What a run that changes the index loads and settles before it
//! resolves: every file's interface, the files whose stored forms cannot
//! be read parsed again, every file's context, and the other references
//! of the files resolved now.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::cache::InterfaceCache;
use super::examine::{examine, parse_status, Outcome};
use super::run::Run;
use super::scope::Scope;
use super::IndexError;
use crate::model::{FileContext, FileExtract};
use crate::polyglot::{lang_of, Extractors, Tables};
use crate::state::{load_bodies, load_interfaces, load_named_paths};
use crate::walk::SourceFile;
use crate::write::{put_extract, put_names};

/// Files [`Run::place_files`] parses again at once.
const SETTLE_CHUNK: usize = 64;

impl<'a> Run<'a> {
    /// Stages: load what resolution reads — every file's interface, every
    /// file's settled context, the scope of resolution and the other
    /// references of the files in it — timed as `load`; or nothing of the
    /// other files, when the edited ones' links are replayed.
    pub(super) fn load(&mut self, cache: &mut InterfaceCache) -> Result<(), IndexError> {
        if self.replay_links(cache)? {
            self.phases.lap("load");
            self.land("load")?;
            return Ok(());
        }
        let reparse = self.load_interfaces(cache)?;
        // A missing or unreadable stored interface: parse the file again.
        self.reparsed_any = self.parse_again(&reparse);
        self.settle_contexts();
        self.decide_scope()?;
        self.join_bodies()?;
        self.phases.lap("load");
        // A database being built lands each stage's rows as it goes (no
        // stage below reads what an earlier one wrote).
        self.land("load")?;
        Ok(())
    }

    /// Stage: load interfaces. Interfaces of every file (the symbol table
    /// needs them all), and the stored ones of the files parsed now, to
    /// see what changed. The unchanged files whose interface is missing
    /// are returned, to be parsed again.
    fn load_interfaces(
        &mut self,
        cache: &mut InterfaceCache,
    ) -> Result<Vec<&'a SourceFile>, IndexError> {
        // Taken either way: a run that fails leaves no cache behind.
        let held = std::mem::take(&mut cache.interfaces);
        let held_table = cache.table.take();
        cache.seq = 0;
        if self.cached {
            Ok(self.pool_held(held, held_table))
        } else {
            drop(held);
            self.load_stored()
        }
    }

    /// The held interfaces become the extracts as they are: only what
    /// changed is taken out or put in.
    fn pool_held(
        &mut self,
        held: BTreeMap<String, (FileContext, FileExtract)>,
        held_table: Option<Tables>,
    ) -> Vec<&'a SourceFile> {
        let mut reparse: Vec<&'a SourceFile> = Vec::new();
        self.resident = held_table;
        let mut pool = held;
        for path in &self.replaced {
            if let Some((_, ex)) = pool.remove(path) {
                self.old_interfaces.insert(path.clone(), ex);
            }
        }
        for path in &self.deleted {
            pool.remove(path);
        }
        // The pool holds only unchanged files (the others were
        // parsed now, skipped or are gone): as many means all.
        if pool.len() != self.unchanged.len() {
            for file in &self.unchanged {
                if !pool.contains_key(&file.ctx.path) {
                    reparse.push(*file);
                }
            }
        }
        if pool.len() + reparse.len() != self.unchanged.len() {
            let keep: BTreeSet<&str> = self.unchanged.iter().map(|f| f.ctx.path.as_str()).collect();
            pool.retain(|p, _| keep.contains(p.as_str()));
        }
        // (`append` would rebuild the whole map.)
        pool.extend(std::mem::take(&mut self.extracts));
        self.extracts = pool;
        reparse
    }

    /// The stored interfaces, read.
    fn load_stored(&mut self) -> Result<Vec<&'a SourceFile>, IndexError> {
        let mut reparse: Vec<&'a SourceFile> = Vec::new();
        // A database being built holds only this run's rows (the
        // early-landed interfaces of the files parsed now), not
        // older ones to compare with; reading them back would
        // decode and hold them for the rest of the run.
        let mut loaded = match self.building {
            true => BTreeMap::new(),
            false => load_interfaces(self.store, self.graph)?,
        };
        for file in &self.unchanged {
            match loaded.remove(&file.ctx.path) {
                Some(ex) => {
                    self.extracts
                        .insert(file.ctx.path.clone(), (file.ctx.clone(), ex));
                }
                None => reparse.push(*file),
            }
        }
        for path in &self.replaced {
            if let Some(ex) = loaded.remove(path) {
                self.old_interfaces.insert(path.clone(), ex);
            }
        }
        Ok(reparse)
    }

    /// Parse files whose stored extract could not be read, and store the new
    /// extracts. Their stored hash stays: the content is the one it names.
    /// Each comes with its other references in their stored form (see
    /// `Outcome::Parsed`). Whether any was parsed.
    fn parse_again(&mut self, files: &[&'a SourceFile]) -> bool {
        let mut any = false;
        let mut extractors = Extractors::default();
        for &file in files {
            if let Outcome::Parsed {
                extract,
                stored,
                names,
                ..
            } = examine(
                &mut extractors,
                file,
                None,
                self.opts.max_file_bytes,
                &self.layout_digest,
                false,
                None,
            ) {
                let body = stored.body.clone();
                put_extract(&mut self.batch, self.graph, &file.ctx.path, stored, names);
                self.bodies.insert(file.ctx.path.clone(), body);
                self.extracts
                    .insert(file.ctx.path.clone(), (file.ctx.clone(), *extract));
                any = true;
            }
        }
        any
    }

    /// Stage: settle contexts. A file's context (its crate and module
    /// path, hence its keys) follows from every file's `mod`
    /// declarations, which are known only now.
    fn settle_contexts(&mut self) {
        self.replaced_before = self.replaced.len();
        // The same files as the last run in this process, whose contexts
        // the held interfaces carry settled, and no `mod` declaration
        // changed: the contexts are those (see `Layout::contexts`).
        self.contexts_known = self.cached
            && self.tree.kept
            && self.deleted.is_empty()
            && !self.reparsed_any
            && self.replaced.iter().all(|p| {
                match (self.extracts.get(p), self.old_interfaces.get(p)) {
                    (Some((_, now)), Some(before)) => {
                        now.children == before.children && now.context == before.context
                    }
                    _ => false,
                }
            });
        if self.contexts_known {
            // The held interfaces carry their settled contexts already.
            for path in &self.replaced {
                if let Some((ctx, extract)) = self.extracts.get_mut(path) {
                    if *ctx != extract.context {
                        *ctx = extract.context.clone();
                    }
                }
            }
        } else {
            self.summary.files_reparsed += self.place_files();
        }
    }

    /// Places every file in its crate and module now that the `mod`
    /// declarations of all files are known, and extracts again the files whose
    /// extract was made for another place (keys contain the module path). The
    /// contexts are a function of the targets and every file's declarations,
    /// so a full and an incremental run settle on the same ones.
    fn place_files(&mut self) -> usize {
        let walked = self.walked;
        let paths: BTreeSet<String> = self.extracts.keys().cloned().collect();
        let contexts = walked.layout.contexts(&paths, &|p| {
            self.extracts.get(p).map(|(_, e)| &e.children[..])
        });
        let by_path: BTreeMap<&str, &SourceFile> = walked
            .files
            .iter()
            .map(|f| (f.ctx.path.as_str(), f))
            .collect();
        let mut moved: Vec<SourceFile> = Vec::new();
        for (path, ctx) in contexts {
            let Some((held, extract)) = self.extracts.get_mut(&path) else {
                continue;
            };
            if extract.context == ctx {
                *held = ctx;
            } else if let Some(file) = by_path.get(path.as_str()) {
                let mut file = (*file).clone();
                file.ctx = ctx;
                moved.push(file);
            }
        }
        if moved.is_empty() {
            return 0;
        }
        // A chunk at a time: each new extract replaces its file's old one
        // before the next chunk is parsed, so the run never holds both of
        // every moved file (a tenth of a large tree's files can move).
        let mut reparsed: BTreeSet<String> = BTreeSet::new();
        for chunk in moved.chunks(SETTLE_CHUNK) {
            let (max_bytes, layout_digest) = (self.opts.max_file_bytes, &self.layout_digest);
            let outcomes: Vec<Outcome> = chunk
                .par_iter()
                .map_init(Extractors::default, |x, f| {
                    examine(x, f, None, max_bytes, layout_digest, false, None)
                })
                .collect();
            for (file, outcome) in chunk.iter().zip(outcomes) {
                let Outcome::Parsed {
                    hash,
                    extract,
                    stored,
                    names,
                    note,
                    ..
                } = outcome
                else {
                    continue;
                };
                let path = file.ctx.path.clone();
                let (status, reason) = parse_status(&extract, note.as_deref());
                self.bodies.insert(path.clone(), stored.body.clone());
                put_extract(&mut self.batch, self.graph, &path, stored, names);
                self.new_files
                    .insert(path.clone(), (hash, file.bytes, status.to_string(), reason));
                self.replaced.insert(path.clone());
                reparsed.insert(path.clone());
                self.extracts.insert(path, (file.ctx.clone(), *extract));
            }
        }
        self.unchanged.retain(|f| !reparsed.contains(&f.ctx.path));
        reparsed.len()
    }

    /// Stage: join bodies. The files held as interfaces that are resolved
    /// now (every file, or those in scope) get their other references
    /// back; a narrow run resolves only files parsed now, whose
    /// references are at hand.
    fn join_bodies(&mut self) -> Result<(), IndexError> {
        if matches!(self.scope, Scope::Narrow) {
            return Ok(());
        }
        let (store, graph) = (self.store, self.graph);
        // Join the other references of the files held as interfaces
        // that are resolved now: every file, or those in scope.
        let scope = &self.scope;
        let in_scope = |p: &str| match scope {
            Scope::Scoped(s) => s.contains(p),
            _ => true,
        };
        let held: Vec<&str> = self
            .unchanged
            .iter()
            .map(|f| f.ctx.path.as_str())
            .filter(|p| in_scope(p))
            .collect();
        // A database being built has no names rows from before they
        // were kept (and those of this run are staged with the extracts).
        let named = match scope {
            Scope::Scoped(_) => None,
            _ if self.building => None,
            _ => Some(load_named_paths(store, graph)?),
        };
        let mut loaded_bodies = load_bodies(store, graph, &held)?;
        let mut missing: Vec<&'a SourceFile> = Vec::new();
        for file in self.unchanged.iter().filter(|f| in_scope(&f.ctx.path)) {
            let path = &file.ctx.path;
            match (loaded_bodies.remove(path), self.extracts.remove(path)) {
                (Some(body), Some((ctx, iface))) => {
                    let whole = lang_of(&iface).join(iface, body);
                    self.extracts.insert(path.clone(), (ctx, whole));
                }
                (None, Some(_)) => missing.push(*file),
                _ => {}
            }
            // Indexes from before names were stored get them now.
            if let (Some(named), Some((_, ex))) = (&named, self.extracts.get(path)) {
                if !named.contains(path) {
                    self.legacy_names.push(path.clone());
                    put_names(&mut self.batch, graph, path, ex);
                }
            }
        }
        self.parse_again(&missing);
        Ok(())
    }
}
