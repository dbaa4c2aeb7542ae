//! How far a run's resolution reaches: only the edited files, those and
//! the files that mention a name the edit touched, or every file; and
//! the names held to find the second.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use super::run::Run;
use super::IndexError;
use crate::model::{FileContext, FileExtract};
use crate::names;
use crate::polyglot::lang_of;
use crate::state::{load_names, read_counts};
use crate::store::{Store, StoreError};

/// The files a run resolves.
pub(super) enum Scope {
    /// The files parsed now: none of them changed what other files can
    /// see (a narrow run).
    Narrow,
    /// Those and the files that mention a name their change touched
    /// ([`scope_of_change`]).
    Scoped(BTreeSet<String>),
    /// Every file.
    All,
}

impl Scope {
    /// Whether the file at `path` is resolved now; `replaced` are the
    /// files parsed now (or skipped, or gone).
    pub(super) fn resolves(&self, path: &str, replaced: &BTreeSet<String>) -> bool {
        match self {
            Scope::Scoped(scope) => scope.contains(path),
            Scope::Narrow => replaced.contains(path),
            Scope::All => true,
        }
    }
}

impl Run<'_> {
    /// Stage: decide the scope of resolution ([`Scope`]). Either narrower
    /// scope needs usage rows of this version and the stored totals (the
    /// run moves them by its differences), and no file gone, parsed again
    /// or moved to another context.
    pub(super) fn decide_scope(&mut self) -> Result<(), IndexError> {
        let (store, graph) = (self.store, self.graph);
        self.stored_counts = match self.building {
            true => None,
            false => read_counts(store, graph)?,
        };
        let bounded = self.usage_current
            && !self.reparsed_any
            && self.deleted.is_empty()
            && self.replaced.len() == self.replaced_before
            && self
                .stored_counts
                .as_ref()
                .is_some_and(|c| c.ambiguous >= 0);
        // Only the files parsed now need resolving when none of them
        // changed what other files can see (see `Language::same_interface`).
        let narrow = bounded
            && self.replaced.iter().all(|p| {
                let now = self.extracts.get(p).map(|(_, e)| e);
                let before = self.old_interfaces.get(p);
                matches!((now, before), (Some(n), Some(b)) if lang_of(n).same_interface(n, b))
            });
        // Some interface changed, within what names can bound: the files
        // that mention a touched name are resolved with the edited ones.
        let scoped = if !narrow && bounded {
            scope_of_change(
                store,
                graph,
                &self.replaced,
                &self.old_interfaces,
                &self.extracts,
                &mut self.held_names,
            )?
        } else {
            None
        };
        self.scope = match (narrow, scoped) {
            (true, _) => Scope::Narrow,
            (false, Some(scope)) => Scope::Scoped(scope),
            (false, None) => Scope::All,
        };
        Ok(())
    }
}

/// Per file, the names it mentions (its `code_names` row) and what its
/// interface tells the spreading of touched names
/// ([`names::SpreadFacts`]): what finding the scope of an interface edit
/// reads of every file.
/// Both are also held turned around ([`names::NameReach`]), so that the
/// scope of an edit reads the entries of the names it touches only.
#[derive(Default)]
pub(super) struct HeldNames {
    mentioned: BTreeMap<String, Vec<names::Name>>,
    facts: BTreeMap<String, names::SpreadFacts>,
    reach: names::NameReach,
}

impl HeldNames {
    /// The stored names of every file, and the spread facts of these
    /// interfaces (every file's).
    pub(super) fn load(
        store: &Store,
        graph: &str,
        interfaces: &BTreeMap<String, (FileContext, FileExtract)>,
    ) -> Result<HeldNames, StoreError> {
        let mut held = HeldNames {
            mentioned: load_names(store, graph)?,
            facts: interfaces
                .par_iter()
                .map(|(path, (_, ex))| (path.clone(), lang_of(ex).spread_facts(ex)))
                .collect(),
            reach: names::NameReach::default(),
        };
        held.turn();
        Ok(held)
    }

    /// Make the turned-around index anew from what is held.
    fn turn(&mut self) {
        let mut reach = names::NameReach::default();
        for (path, facts) in &self.facts {
            reach.set_facts(path, facts);
        }
        for (path, mentioned) in &self.mentioned {
            reach.set_mentioned(path, mentioned);
        }
        self.reach = reach;
    }

    /// The file at `path` mentions `mentioned` and has `facts` now.
    pub(super) fn set(
        &mut self,
        path: &str,
        mentioned: Vec<names::Name>,
        facts: names::SpreadFacts,
    ) {
        self.reach.set_mentioned(path, &mentioned);
        self.reach.set_facts(path, &facts);
        self.mentioned.insert(path.to_string(), mentioned);
        self.facts.insert(path.to_string(), facts);
    }

    /// The file at `path` is gone.
    pub(super) fn remove(&mut self, path: &str) {
        self.reach.remove(path);
        self.mentioned.remove(path);
        self.facts.remove(path);
    }

    /// After a run's changes: the index made anew once stale entries
    /// outnumber live ones.
    pub(super) fn settle(&mut self) {
        if self.reach.is_worn() {
            self.turn();
        }
    }
}

/// The files to resolve after an edit that changed interfaces: the edited
/// files and every file that mentions a name the change touches (see
/// [`names`]). `None` when the change is not bounded by names
/// or a file's names are not stored.
fn scope_of_change(
    store: &Store,
    graph: &str,
    replaced: &BTreeSet<String>,
    old_interfaces: &BTreeMap<String, FileExtract>,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    held: &mut Option<HeldNames>,
) -> Result<Option<BTreeSet<String>>, StoreError> {
    let mut touched = rustc_hash::FxHashSet::default();
    for path in replaced {
        let (Some(before), Some((_, now))) = (old_interfaces.get(path), extracts.get(path)) else {
            return Ok(None);
        };
        match lang_of(now).changed_names(before, now) {
            Some(t) => touched.extend(t),
            None => return Ok(None),
        }
    }
    let held = match held {
        Some(names) => names,
        None => held.insert(HeldNames::load(store, graph, extracts)?),
    };
    // Every other file's names are held, or the scope is not bounded.
    let mut held_paths = held.mentioned.keys().peekable();
    for path in extracts.keys().filter(|p| !replaced.contains(*p)) {
        while held_paths.next_if(|held| *held < path).is_some() {}
        if held_paths.next_if(|held| *held == path).is_none() {
            return Ok(None);
        }
    }
    // The held facts are the last run's: the edited files' are taken now.
    let edited: Vec<names::SpreadFacts> = replaced
        .iter()
        .filter_map(|p| extracts.get(p))
        .map(|(_, ex)| lang_of(ex).spread_facts(ex))
        .collect();
    let replaced_paths: Vec<&str> = replaced.iter().map(String::as_str).collect();
    held.reach.spread(&mut touched, &replaced_paths, &edited);
    let mut scope = replaced.clone();
    scope.extend(
        held.reach
            .mentioning(&touched)
            .into_iter()
            .filter(|p| extracts.contains_key(*p))
            .map(str::to_string),
    );
    Ok(Some(scope))
}
