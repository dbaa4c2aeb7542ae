//! The parse: every walked file examined, or vouched for by its stat
//! rows or a file watch; a first index parses in module order.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;

use super::cache::InterfaceCache;
use super::examine::{examine, Outcome};
use super::run::Run;
use super::IndexError;
use crate::model::FileContext;
use crate::polyglot::Extractors;
use crate::state::stat_vouches;
use crate::text;
use crate::walk::{self, SourceFile};

impl Run<'_> {
    /// Stage: parse. Every file is examined — in the context settled for
    /// it, against its stored hash — unless its stat rows or a watch
    /// vouch for it; the outcomes are in the walk's order.
    pub(super) fn parse(&mut self, cache: &InterfaceCache) -> Result<Vec<Outcome>, IndexError> {
        let (store, graph, opts) = (self.store, self.graph, self.opts);
        let walked = self.walked;
        let (stored, stats) = (&self.stored, &self.stats);
        let layout_digest = &self.layout_digest;
        let looked_at = &self.tree.looked_at;
        // The contexts the last run in this process settled (a hint: a wrong
        // one is corrected by `settle_contexts`, as a guessed one is).
        let held_contexts = &cache.interfaces;
        // The syntax trees a server holds: files open in an editor parse
        // incrementally.
        let trees = cache.trees.as_deref();
        // The same files as the stored rows describe, as this process's last
        // run left them, and a watch that reported every change since: a file
        // it did not report is as that run found it (skipped ones are tried
        // again, as always).
        let watch_vouches = self.tree.watched && self.tree.kept && self.files_cached;
        let retried: BTreeSet<&str> = match watch_vouches {
            true => stored
                .iter()
                .filter(|(_, s)| s.status == "skipped")
                .map(|(p, _)| p.as_str())
                .collect(),
            false => BTreeSet::new(),
        };
        // The text index reads entities' words from parses (their literals
        // and comments are not stored, see `FileExtract::texts`): text rows
        // of another version, or none, are written anew from every file
        // parsed again, whatever the stored hashes say.
        let reparse_all =
            opts.text_index && !store.is_building() && !text::is_current(store, graph)?;
        let bar = self.phases.counted("parse", walked.files.len() as u64);
        // One file: as the stat rows or a watch vouch for it, or examined in
        // the context settled for it (by this run's module order, or where
        // the last run in this process settled it: its keys hold the module
        // path, and when no `mod` declaration moved that is where it is).
        let parse_one = |extractors: &mut Extractors,
                         file: &SourceFile,
                         settled: Option<&FileContext>|
         -> (Outcome, bool) {
            let path = file.ctx.path.as_str();
            let vouched = !reparse_all
                && !looked_at.contains(path)
                && match watch_vouches {
                    true => !retried.contains(path),
                    false => stat_vouches(file, stored.get(path), stats.get(path), layout_digest),
                };
            let o = if vouched {
                (Outcome::Unchanged, true)
            } else {
                let settled = settled.or_else(|| held_contexts.get(&file.ctx.path).map(|(c, _)| c));
                let moved;
                let file = match settled {
                    Some(ctx) if *ctx != file.ctx => {
                        moved = SourceFile {
                            ctx: ctx.clone(),
                            ..file.clone()
                        };
                        &moved
                    }
                    _ => file,
                };
                let o = examine(
                    extractors,
                    file,
                    stored.get(path).filter(|_| !reparse_all),
                    opts.max_file_bytes,
                    layout_digest,
                    opts.text_index,
                    trees,
                );
                (o, false)
            };
            bar.inc(1);
            o
        };
        let ((outcomes, vouched), parsed_again): ((Vec<Outcome>, Vec<bool>), usize) =
            if stored.is_empty() && held_contexts.is_empty() {
                parse_in_module_order(walked, &parse_one)
            } else {
                let parsed = walked
                    .files
                    .par_iter()
                    .map_init(Extractors::default, |x, file| parse_one(x, file, None))
                    .unzip();
                (parsed, 0)
            };
        // The files the stat rows vouched for keep rows that are right.
        self.examined = walked
            .files
            .iter()
            .zip(&vouched)
            .filter(|(_, v)| !**v)
            .map(|(f, _)| f)
            .collect();
        self.summary.files_reparsed = parsed_again;
        self.phases.lap("parse");
        Ok(outcomes)
    }
}

/// Parse every file of a first index in module order: the crate roots,
/// then each file as soon as the file that declares it is parsed, in the
/// context its declaration gives it; the files no declaration reaches
/// last, in their guessed contexts. A file's context (its module path,
/// hence its keys) is known from its parent's declarations only, so
/// parsing in path order first parses every file whose guess was wrong
/// twice (`settle_contexts`) — a `#[path]` module, a test target's module
/// directory: a sixth of the bytes of the registry tree.
///
/// No level waits for its slowest file: a crate of a few dozen files has
/// few levels, and one large file held the other core idle at each. A
/// file declared by two parents is parsed in the context of whichever
/// declaration is seen first, which need not be the one
/// [`Layout::reached_contexts`] chooses; so once every file is parsed,
/// the contexts are settled by that walk over the declarations found, and
/// a file parsed in any other context is parsed again in its own (its
/// declarations do not depend on its context, so the walk stays the
/// same). The result is the same whatever order the threads ran in;
/// how many files were parsed again is returned with it.
///
/// [`Layout::reached_contexts`]: crate::lang::Layout::reached_contexts
fn parse_in_module_order(
    walked: &walk::WalkResult,
    parse_one: &ParseOne<'_>,
) -> ((Vec<Outcome>, Vec<bool>), usize) {
    let paths: BTreeSet<String> = walked.files.iter().map(|f| f.ctx.path.clone()).collect();
    let index_of: std::collections::HashMap<&str, usize> = walked
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.ctx.path.as_str(), i))
        .collect();
    let tree = ModuleTreeParse {
        walked,
        parse_one,
        paths: &paths,
        index_of: &index_of,
        claimed: walked
            .files
            .iter()
            .map(|_| AtomicBool::new(false))
            .collect(),
        done: walked.files.iter().map(|_| OnceLock::new()).collect(),
        extractors: Mutex::new(Vec::new()),
    };
    rayon::scope(|scope| {
        for (root, ctx) in walked.layout.root_contexts(&paths) {
            if let Some(&i) = index_of.get(root.as_str()) {
                tree.claimed[i].store(true, Ordering::Relaxed);
                let tree = &tree;
                scope.spawn(move |scope| tree.parse(scope, i, ctx, true));
            }
        }
    });
    let (parsed_in, mut done): (Vec<_>, Vec<_>) = tree
        .done
        .into_iter()
        .map(|slot| match slot.into_inner() {
            Some((ctx, outcome)) => (Some(ctx), Some(outcome)),
            None => (None, None),
        })
        .unzip();
    // The contexts the declarations give, walked in their order; every
    // file not parsed in its own is parsed again (or, never reached, in
    // its guessed context).
    let settled = walked.layout.reached_contexts(&paths, &|p| match index_of
        .get(p)
        .and_then(|&i| done[i].as_ref())
    {
        Some((Outcome::Parsed { extract, .. }, _)) => Some(&extract.children[..]),
        _ => None,
    });
    let again: Vec<(usize, Option<FileContext>)> = walked
        .files
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let own = settled.get(&f.ctx.path);
            let right = done[i].is_some() && parsed_in[i].as_ref() == own;
            (!right).then(|| (i, own.cloned()))
        })
        .collect();
    let parsed_again = again.iter().filter(|(i, _)| done[*i].is_some()).count();
    parse_level(walked, parse_one, &again, &mut done);
    (done.into_iter().flatten().unzip(), parsed_again)
}

/// A file's parse (its outcome and whether the stat rows vouched for it)
/// and the context it was parsed in.
type ParsedIn = (FileContext, (Outcome, bool));

/// The shared state of [`parse_in_module_order`]'s walk down the module
/// tree: which files a declaration has claimed, what each parse gave and
/// in which context, and the extractors not in use (a thread waiting in a
/// parse may start another, so each parse takes one of its own).
struct ModuleTreeParse<'w> {
    walked: &'w walk::WalkResult,
    parse_one: &'w ParseOne<'w>,
    paths: &'w BTreeSet<String>,
    index_of: &'w std::collections::HashMap<&'w str, usize>,
    claimed: Vec<AtomicBool>,
    /// Set once, by the parse that claimed the file.
    done: Vec<OnceLock<ParsedIn>>,
    extractors: Mutex<Vec<Extractors>>,
}

impl<'w> ModuleTreeParse<'w> {
    /// Parse file `i` in `ctx`, then the files its declarations reach
    /// that no other declaration claimed, each as a task of its own.
    fn parse<'s>(
        &'s self,
        scope: &rayon::Scope<'s>,
        i: usize,
        ctx: FileContext,
        children_beside: bool,
    ) {
        let taken = self
            .extractors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop();
        let mut extractor = taken.unwrap_or_default();
        let outcome = (self.parse_one)(&mut extractor, &self.walked.files[i], Some(&ctx));
        self.extractors
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(extractor);
        if let (Outcome::Parsed { extract, .. }, _) = &outcome {
            let file = &self.walked.files[i];
            let children = self.walked.layout.child_contexts(
                file.lang,
                &file.ctx.path,
                children_beside,
                &ctx,
                &extract.children,
                self.paths,
            );
            for (child, child_beside, child_ctx) in children {
                let Some(&j) = self.index_of.get(child.as_str()) else {
                    continue;
                };
                if !self.claimed[j].swap(true, Ordering::AcqRel) {
                    scope.spawn(move |scope| self.parse(scope, j, child_ctx, child_beside));
                }
            }
        }
        // Only the claim's parse sets it: a second `set` cannot happen.
        let _ = self.done[i].set((ctx, outcome));
    }
}

/// Parse the files at `level` (indexes into the walk, each with the
/// context settled for it, if any) in parallel into `done`.
fn parse_level(
    walked: &walk::WalkResult,
    parse_one: &ParseOne<'_>,
    level: &[(usize, Option<FileContext>)],
    done: &mut [Option<(Outcome, bool)>],
) {
    let parsed: Vec<(usize, (Outcome, bool))> = level
        .par_iter()
        .map_init(Extractors::default, |x, (i, ctx)| {
            (*i, parse_one(x, &walked.files[*i], ctx.as_ref()))
        })
        .collect();
    for (i, outcome) in parsed {
        done[i] = Some(outcome);
    }
}

/// How [`Run::parse`] parses one file, in the context given
/// when one is settled for it.
type ParseOne<'a> =
    dyn Fn(&mut Extractors, &SourceFile, Option<&FileContext>) -> (Outcome, bool) + Sync + 'a;
