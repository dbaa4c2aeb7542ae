//! What a long-lived process keeps between runs: the interfaces of
//! every file, and for servers the symbol table, the file and stat rows
//! and the walk.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::scope::HeldNames;
use super::IndexError;
use crate::held_trees::HeldTrees;
use crate::model::{Entity, FileContext, FileExtract};
use crate::polyglot::Tables;
use crate::state::{load_interfaces, FileStat, StoredFile};
use crate::store::Store;
use crate::walk;

/// The interfaces of every indexed file as the last run left them, kept
/// by a long-lived process (the servers) so the next run after an edit
/// does not read them all from the store again. Valid only for the graph
/// and `seq` it was taken at: a run by another process moves `seq`, and
/// the next run then reads the store as usual.
#[derive(Default)]
pub struct InterfaceCache {
    pub(super) graph: String,
    pub(super) seq: i64,
    /// By path, each with its settled context.
    pub(super) interfaces: BTreeMap<String, (FileContext, FileExtract)>,
    /// Whether to keep the symbol table between runs too (see
    /// [`InterfaceCache::with_symbol_table`]).
    pub(super) keep_table: bool,
    /// Built from the interfaces as they were at `seq` or before: every
    /// run since then changed no interface (see [`Tables`]).
    pub(super) table: Option<Tables>,
    /// The stored file rows and stat rows (kept with the symbol table):
    /// a run reads neither from the store.
    pub(super) files: Option<ResidentFiles>,
    /// The last walk (kept with the symbol table): the next run checks it
    /// by `stat` instead of walking (see [`walk::WalkSnapshot`]).
    pub(super) walk: Option<walk::WalkSnapshot>,
    /// What a file watch saw since `walk` was checked, handed in by a
    /// server for the next run only ([`InterfaceCache::watched`]).
    pub(super) watched: Option<walk::WatchedChanges>,
    /// The syntax trees of the files open in a server's editor, shared
    /// with the server ([`InterfaceCache::with_trees`]).
    pub(super) trees: Option<Arc<HeldTrees>>,
}

/// What warming a server's cache reads from the store: every interface,
/// the symbol table built from them with its indexes for edits, and every
/// file's names ([`InterfaceCache::warm`]).
pub struct Warmed {
    graph: String,
    seq: i64,
    interfaces: BTreeMap<String, (FileContext, FileExtract)>,
    table: Tables,
    names: HeldNames,
}

impl Warmed {
    /// Read them for `graph` at `seq`: `None` when a change landed
    /// meanwhile.
    pub fn read(store: &Store, graph: &str, seq: i64) -> Result<Option<Warmed>, IndexError> {
        // Stored interfaces carry the contexts they were parsed in, which
        // a run settles before it stores them.
        let interfaces: BTreeMap<String, (FileContext, FileExtract)> =
            load_interfaces(store, graph)?
                .into_iter()
                .map(|(path, ex)| (path, (ex.context.clone(), ex)))
                .collect();
        let mut table = Tables::build(interfaces.values().cloned().collect());
        table.prepare_edits();
        // And what the first interface edit reads to find who sees it.
        let names = HeldNames::load(store, graph, &interfaces)?;
        if store.graph_seq(graph)? != seq {
            return Ok(None);
        }
        Ok(Some(Warmed {
            graph: graph.to_string(),
            seq,
            interfaces,
            table,
            names,
        }))
    }
}

/// Valid for the graph and `seq` they were taken at, like the interfaces,
/// but kept by runs that changed nothing too.
pub(super) struct ResidentFiles {
    pub(super) graph: String,
    pub(super) seq: i64,
    pub(super) states: BTreeMap<String, StoredFile>,
    pub(super) stats: BTreeMap<String, FileStat>,
    /// Every file's names, once an interface edit needed them: the next
    /// one finds who sees its change without reading them all again.
    pub(super) names: Option<HeldNames>,
}

impl InterfaceCache {
    /// A cache that also keeps the symbol table of every file between
    /// runs, so a run that changes no interface resolves the edited files
    /// against it instead of building the table of the whole repository.
    /// It holds a second copy of the interfaces and takes a table build
    /// after each run that changed one: for servers, which answer after
    /// every save.
    pub fn with_symbol_table() -> InterfaceCache {
        InterfaceCache {
            keep_table: true,
            ..InterfaceCache::default()
        }
    }

    /// Parse the files `trees` wants from the trees it holds of them
    /// (see [`HeldTrees`]), and hold their new trees there.
    pub fn with_trees(mut self, trees: Arc<HeldTrees>) -> InterfaceCache {
        self.trees = Some(trees);
        self
    }

    /// Fill a server's cache from the store after a run that changed
    /// nothing (a server's first run over an index that was current),
    /// which leaves no interfaces held: the first save would otherwise
    /// read every interface and build the symbol table itself (and the
    /// first interface edit every file's names, and the table's indexes
    /// of words). After a first run that did change the index, the
    /// interfaces and table are held: only those indexes are made. Does
    /// nothing unless the file rows this cache holds are of the graph's
    /// `seq` now (the last run was this cache's), or when the interfaces
    /// are held already. A change landing meanwhile leaves the cache as
    /// it was. (A server reads without holding its cache: see
    /// [`InterfaceCache::wants_warming`].)
    pub fn warm(&mut self, store: &Store, graph: &str) -> Result<(), IndexError> {
        if let Some(seq) = self.wants_warming(store, graph)? {
            if let Some(warmed) = Warmed::read(store, graph, seq)? {
                self.take_warmed(store, warmed)?;
            }
        }
        Ok(())
    }

    /// The first step of [`InterfaceCache::warm`]: the graph's `seq` when
    /// the cache is to be filled ([`Warmed::read`], which needs no cache,
    /// then [`InterfaceCache::take_warmed`]), after making a held table's
    /// indexes for edits. A server reads between the two without holding
    /// its cache, so runs and answers go on meanwhile.
    pub fn wants_warming(&mut self, store: &Store, graph: &str) -> Result<Option<i64>, IndexError> {
        let seq = store.graph_seq(graph)?;
        let held = self.holds_interfaces(graph, seq);
        if held {
            if let Some(table) = &mut self.table {
                table.prepare_edits();
            }
        }
        let wanted = self.keep_table && seq != 0 && !held && self.files_current(graph, seq);
        Ok(wanted.then_some(seq))
    }

    /// Put in what [`Warmed::read`] read, if it is still what the cache
    /// lacks: no interfaces held of the `seq` it was read at, and the
    /// cache's file rows and the graph still of that `seq`. Whether it
    /// was put in.
    pub fn take_warmed(&mut self, store: &Store, warmed: Warmed) -> Result<bool, IndexError> {
        let Warmed {
            graph,
            seq,
            interfaces,
            table,
            names,
        } = warmed;
        if self.holds_interfaces(&graph, seq)
            || !self.files_current(&graph, seq)
            || store.graph_seq(&graph)? != seq
        {
            return Ok(false);
        }
        self.graph = graph;
        self.seq = seq;
        self.interfaces = interfaces;
        self.table = Some(table);
        if let Some(files) = &mut self.files {
            files.names = Some(names);
        }
        Ok(true)
    }

    /// Whether this cache holds the interfaces of `graph` at `seq`.
    fn holds_interfaces(&self, graph: &str, seq: i64) -> bool {
        self.graph == graph && self.seq == seq && !self.interfaces.is_empty()
    }

    /// Whether the file rows this cache holds are of `graph` at `seq`.
    fn files_current(&self, graph: &str, seq: i64) -> bool {
        self.files
            .as_ref()
            .is_some_and(|f| f.graph == graph && f.seq == seq)
    }

    /// The entities of the file at `path` as the store holds them (its
    /// rows are written from the same extract as its interface), when the
    /// interfaces held are of `graph` at `seq` and hold that file. A
    /// server answers from them instead of joining rows per entity.
    pub fn entities_of(&self, graph: &str, seq: i64, path: &str) -> Option<&[Entity]> {
        if self.graph != graph || self.seq != seq || seq == 0 {
            return None;
        }
        self.interfaces
            .get(path)
            .map(|(_, ex)| ex.entities.as_slice())
    }

    /// Tell the next run what a file watch saw change since the last run
    /// checked its walk: it looks at those paths instead of `stat`-ing
    /// every file and directory. Only for a watch that lost nothing since
    /// then; the run after drops it.
    pub fn watched(&mut self, changes: walk::WatchedChanges) {
        self.watched = Some(changes);
    }

    /// Forget the kept walk: the next run walks the tree again (after a
    /// failed run, whose changes a watch will not report again).
    pub fn forget_walk(&mut self) {
        self.walk = None;
        self.watched = None;
    }

    pub fn len(&self) -> usize {
        self.interfaces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.interfaces.is_empty()
    }
}
