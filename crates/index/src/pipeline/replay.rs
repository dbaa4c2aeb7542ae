//! Stage of a command-line run after an edit that moved lines only: the
//! edited files' links taken from the ones they stored (see
//! [`crate::replay`]), so the run reads no other file's interface
//! and builds no symbol table.
//!
//! A server holds every interface and its table already and resolves an
//! edited file in milliseconds; a command-line run would load and decode
//! every file's interface and build the table of the whole tree first.
//! It takes this path only when nothing resolution reads changed: no file
//! gone or new, no interface changed, every edited file's extract the
//! stored one but for lines and doc comments, and every stored link read
//! back to its digest. Anything else goes the way of every run.

use std::collections::BTreeMap;

use super::cache::InterfaceCache;
use super::run::Run;
use super::scope::Scope;
use super::IndexError;
use crate::model::FileExtract;
use crate::polyglot::lang_of;
use crate::replay::{lines_moved, StoredLinks};
use crate::state::{load_bodies, load_interfaces_of, read_counts};
use crate::write::{read_stored_links, OldEdges, OldUnresolved};

impl Run<'_> {
    /// Stage: replay links. Whether the edited files' links were taken
    /// from the stored ones; if so the run's extracts are the edited
    /// files' alone, and its scope is those files.
    pub(super) fn replay_links(&mut self, cache: &mut InterfaceCache) -> Result<bool, IndexError> {
        // A server keeps the run's extracts and builds its table from
        // them: it needs them all (and holds them already when current).
        let eligible = !self.cached
            && !cache.keep_table
            && !self.building
            && self.usage_current
            && (self.text_current || !self.opts.text_index)
            && self.deleted.is_empty()
            && !self.replaced.is_empty()
            && self
                .replaced
                .iter()
                .all(|p| self.extracts.contains_key(p) && self.bodies.contains_key(p));
        if !eligible {
            return Ok(false);
        }
        let (store, graph) = (self.store, self.graph);
        let paths: Vec<&str> = self.replaced.iter().map(String::as_str).collect();
        let before = load_interfaces_of(store, graph, &paths)?;
        let same_interfaces =
            self.replaced
                .iter()
                .all(|p| match (self.extracts.get(p), before.get(p)) {
                    (Some((_, now)), Some(b)) => lang_of(now).same_interface(now, b),
                    _ => false,
                });
        let counts = read_counts(store, graph)?.filter(|c| c.ambiguous >= 0);
        if !same_interfaces || counts.is_none() {
            return Ok(false);
        }
        let mut bodies = load_bodies(store, graph, &paths)?;
        let (mut edges, unresolved) = read_stored_links(store, graph, &paths)?;
        let mut replayed = BTreeMap::new();
        for path in &self.replaced {
            match self.replay_one(path, &before, &mut bodies, &mut edges, &unresolved) {
                Some(links) => replayed.insert(path.clone(), links),
                None => return Ok(false),
            };
        }
        // Taken as a run that loads interfaces takes them: a run that
        // fails leaves no cache behind.
        drop(std::mem::take(&mut cache.interfaces));
        cache.table = None;
        cache.seq = 0;
        self.summary.files_replayed = replayed.len();
        self.replayed = replayed;
        self.old_interfaces = before;
        self.stored_counts = counts;
        self.replaced_before = self.replaced.len();
        self.scope = Scope::Narrow;
        Ok(true)
    }

    /// The links of the file at `path`, parsed now, from its stored ones,
    /// when its extract differs from the stored one in lines alone and
    /// the stored links read back whole.
    fn replay_one(
        &self,
        path: &str,
        before: &BTreeMap<String, FileExtract>,
        bodies: &mut BTreeMap<String, Vec<crate::model::RawRef>>,
        edges: &mut OldEdges,
        unresolved: &OldUnresolved,
    ) -> Option<StoredLinks> {
        let (_, now) = self.extracts.get(path)?;
        let lang = lang_of(now);
        let now = lang.join(now.clone(), lang.decode_body(self.bodies.get(path)?)?);
        let then = lang.join(before.get(path)?.clone(), bodies.remove(path)?);
        let moved = lines_moved(&then, &now)?;
        let rows = unresolved
            .range((path.to_string(), String::new())..)
            .take_while(|((origin, _), _)| origin == path)
            .map(|((_, src), refs)| (src.as_str(), refs));
        let stored = StoredLinks::from_rows(&edges.remove(path).unwrap_or_default(), rows)?;
        // Read back as written, or not at all.
        let digest = &self.stored.get(path)?.edge_digest;
        (stored.links().digest() == *digest).then_some(())?;
        stored.relined(&moved)
    }
}
