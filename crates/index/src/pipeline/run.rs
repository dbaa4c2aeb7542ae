//! The state of one index run, and its first stages: the walk, what the
//! stored rows say of it, and the outcomes of the parse sorted into what
//! the rest of the run writes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::cache::{InterfaceCache, ResidentFiles};
use super::examine::{layout_key, parse_status, Outcome};
use super::phases::Phases;
use super::scope::{HeldNames, Scope};
use super::{FileNote, IndexError, IndexOptions, IndexSummary};
use crate::model::{FileContext, FileExtract};
use crate::names;
use crate::polyglot::Tables;
use crate::replay::StoredLinks;
use crate::state::{load_file_rows, CodeCounts, FileStat, StoredFile};
use crate::store::{Batch, Store};
use crate::text::{self, FileWords};
use crate::usage;
use crate::walk::{self, SourceFile};
use crate::write::put_extract;

/// The files a run covers, as its first stage found them: a server's kept
/// walk checked again, or a new walk. Held apart from the run's state,
/// which borrows it, so that the walk can be kept once the run is done.
pub(super) struct Tree {
    walk: Walked,
    /// Whether the kept walk still held (see `IndexSummary::walk_kept`).
    pub(super) kept: bool,
    /// Whether a file watch told what changed since the kept walk.
    pub(super) watched: bool,
    /// The walked files among the paths that watch saw change: examined
    /// whatever the stat rows say.
    pub(super) looked_at: BTreeSet<String>,
}

/// A walk a server keeps (see [`walk::WalkSnapshot`]), or one made for
/// this run only.
enum Walked {
    Snapshot(walk::WalkSnapshot),
    Once(walk::WalkResult),
}

impl Tree {
    /// Stage: walk. A kept walk is checked by `stat`, or at the paths a
    /// watch saw change; a command-line run checks the walk recorded at
    /// `record` the same way; without either, the tree is walked.
    pub(super) fn walk(root: &Path, cache: &mut InterfaceCache, record: Option<&Path>) -> Tree {
        let mut walk_kept = false;
        let watched = cache.watched.take();
        let mut looked_at: BTreeSet<String> = BTreeSet::new();
        let snapshot = cache.keep_table.then(|| {
            let kept = cache.walk.take().and_then(|s| match &watched {
                Some(changes) => s.recheck_changed(root, changes),
                None => s.recheck(root),
            });
            match kept {
                Some(s) => {
                    walk_kept = true;
                    if let Some(changes) = &watched {
                        looked_at = s.files_among(changes);
                    }
                    s
                }
                None => walk::WalkSnapshot::take(root),
            }
        });
        let walk = match (snapshot, record) {
            (Some(s), _) => Walked::Snapshot(s),
            (None, Some(record)) => {
                let kept = walk::WalkSnapshot::checked_record(record, root);
                walk_kept = kept.is_some();
                Walked::Snapshot(kept.unwrap_or_else(|| walk::WalkSnapshot::take(root)))
            }
            (None, None) => Walked::Once(walk::walk(root)),
        };
        Tree {
            walk,
            kept: walk_kept,
            watched: watched.is_some(),
            looked_at,
        }
    }

    /// The walked files, sorted by path, and what the walk could not read.
    pub(super) fn walked(&self) -> &walk::WalkResult {
        match &self.walk {
            Walked::Snapshot(s) => &s.result,
            Walked::Once(w) => w,
        }
    }

    /// Record the walk at `record` for the next process, when it moved
    /// (see [`walk::WalkSnapshot::write_record`]).
    pub(super) fn write_record(&mut self, record: &Path) {
        if let Walked::Snapshot(s) = &mut self.walk {
            s.write_record(record);
        }
    }

    /// The walk for a server to keep, when it is one.
    pub(super) fn into_snapshot(self) -> Option<walk::WalkSnapshot> {
        match self.walk {
            Walked::Snapshot(s) => Some(s),
            Walked::Once(_) => None,
        }
    }
}

/// Everything one run knows, from the walk to its last write: what it was
/// asked, what the stored rows and the cache gave it, the extracts and the
/// sets of files each stage reads and fills. The stages are its methods,
/// in the order [`super::index_repository_cached`] calls them.
pub(super) struct Run<'a> {
    pub(super) store: &'a Store,
    pub(super) root: &'a Path,
    pub(super) opts: &'a IndexOptions,
    pub(super) graph: &'a str,
    pub(super) tree: &'a Tree,
    /// The files the walk found (`tree`'s).
    pub(super) walked: &'a walk::WalkResult,
    /// What the stored hashes and stat rows were computed under
    /// ([`layout_key`]).
    pub(super) layout_digest: String,
    pub(super) seq_before: i64,
    /// The interfaces the cache holds are the stored ones.
    pub(super) cached: bool,
    /// The stored file and stat rows are the cache's.
    pub(super) files_cached: bool,
    pub(super) phases: Phases,
    pub(super) summary: IndexSummary,
    /// The run's one batch of rows.
    pub(super) batch: Batch,
    /// The stored file rows, brought up to date once the run's rows land.
    pub(super) stored: BTreeMap<String, StoredFile>,
    pub(super) stats: BTreeMap<String, FileStat>,
    /// Every file's names, when the cache held them or an interface edit
    /// read them (see [`HeldNames`]).
    pub(super) held_names: Option<HeldNames>,
    /// The files the stat rows (or a watch) did not vouch for.
    pub(super) examined: Vec<&'a SourceFile>,
    /// Every file's extract, by path, with the context it is settled in:
    /// those parsed now, and the others' interfaces (whole extracts once
    /// joined with their other references).
    pub(super) extracts: BTreeMap<String, (FileContext, FileExtract)>,
    pub(super) unchanged: Vec<&'a SourceFile>,
    /// Files whose entities must be replaced: re-parsed, skipped now, or gone.
    pub(super) replaced: BTreeSet<String>,
    /// The file rows of the files parsed or skipped now: hash, bytes,
    /// status and its reason.
    pub(super) new_files: BTreeMap<String, (String, u64, String, String)>,
    /// The words of the files parsed now (file-level text index).
    pub(super) words_now: BTreeMap<String, FileWords>,
    /// The other references of the files parsed now, in their stored form
    /// (see `Outcome::Parsed`), until the files are resolved.
    pub(super) bodies: BTreeMap<String, Vec<u8>>,
    pub(super) deleted: Vec<String>,
    /// A kept walk that still holds is the same files the stored rows
    /// (as the last run left them) describe: none went.
    pub(super) same_files: bool,
    /// A database being built (see [`Run::anything_changed`]).
    pub(super) building: bool,
    pub(super) usage_current: bool,
    pub(super) text_current: bool,
    /// Whether the run writes anything but stat rows and history.
    pub(super) changed: bool,
    /// The stored interfaces of the files parsed now, to see what changed.
    pub(super) old_interfaces: BTreeMap<String, FileExtract>,
    /// The symbol table a server keeps, until it goes back to the cache.
    pub(super) resident: Option<Tables>,
    /// Files parsed again because their stored interface or references
    /// could not be read.
    pub(super) reparsed_any: bool,
    /// How many files were replaced before the contexts were settled.
    pub(super) replaced_before: usize,
    /// The contexts the held interfaces carry are the settled ones.
    pub(super) contexts_known: bool,
    pub(super) stored_counts: Option<CodeCounts>,
    /// Files given names rows only now (indexed before they were kept).
    pub(super) legacy_names: Vec<String>,
    /// The files resolved now.
    pub(super) scope: Scope,
    /// What the names rows kept by a server say of the files parsed now.
    pub(super) mentioned_now: BTreeMap<String, Vec<names::Name>>,
    /// The edited files' links taken from the stored ones (see
    /// [`Run::replay_links`]); when there are any, the extracts are the
    /// edited files' alone.
    pub(super) replayed: BTreeMap<String, StoredLinks>,
}

/// The stored file and stat rows a run starts from: the cache's, when it
/// holds those of the graph's `seq`, or read.
pub(super) struct StoredFiles {
    stored: BTreeMap<String, StoredFile>,
    stats: BTreeMap<String, FileStat>,
    held_names: Option<HeldNames>,
    /// Whether they are the cache's.
    cached: bool,
    /// The graph's change sequence number they are of.
    seq: i64,
}

impl StoredFiles {
    /// The rows `held` keeps (a server's, of this `seq`), or those stored.
    pub(super) fn read(
        store: &Store,
        graph: &str,
        seq: i64,
        held: Option<ResidentFiles>,
    ) -> Result<StoredFiles, IndexError> {
        Ok(match held {
            Some(f) => StoredFiles {
                stored: f.states,
                stats: f.stats,
                held_names: f.names,
                cached: true,
                seq,
            },
            None => {
                let rows = load_file_rows(store, graph)?;
                StoredFiles {
                    stored: rows.states,
                    stats: rows.stats,
                    held_names: None,
                    cached: false,
                    seq,
                }
            }
        })
    }
}

impl<'a> Run<'a> {
    /// The run's state after the walk: the stored file and stat rows (the
    /// cache's, when it holds those of this `seq`), against which the
    /// parse decides what to read.
    pub(super) fn start(
        store: &'a Store,
        root: &'a Path,
        opts: &'a IndexOptions,
        tree: &'a Tree,
        mut phases: Phases,
        cache: &mut InterfaceCache,
        files: StoredFiles,
    ) -> Result<Run<'a>, IndexError> {
        let graph = opts.graph.as_str();
        let walked = tree.walked();
        let layout_digest = layout_key(walked);
        let StoredFiles {
            stored,
            stats,
            held_names,
            cached: files_cached,
            seq: seq_before,
        } = files;
        let cached = cache.graph == graph && cache.seq > 0 && cache.seq == seq_before;
        phases.lap("walk");
        Ok(Run {
            store,
            root,
            opts,
            graph,
            tree,
            walked,
            layout_digest,
            seq_before,
            cached,
            files_cached,
            phases,
            summary: IndexSummary::default(),
            batch: Batch::new(),
            stored,
            stats,
            held_names,
            examined: Vec::new(),
            extracts: BTreeMap::new(),
            unchanged: Vec::new(),
            replaced: BTreeSet::new(),
            new_files: BTreeMap::new(),
            words_now: BTreeMap::new(),
            bodies: BTreeMap::new(),
            deleted: Vec::new(),
            same_files: false,
            building: false,
            usage_current: false,
            text_current: false,
            changed: false,
            old_interfaces: BTreeMap::new(),
            resident: None,
            reparsed_any: false,
            replaced_before: 0,
            contexts_known: false,
            stored_counts: None,
            legacy_names: Vec::new(),
            scope: Scope::All,
            mentioned_now: BTreeMap::new(),
            replayed: BTreeMap::new(),
        })
    }

    /// Stage: collect the parse's outcomes. Each file is unchanged, parsed
    /// (its stored forms staged at once) or skipped; the files the stored
    /// rows name and the walk did not find are gone.
    pub(super) fn collect(&mut self, outcomes: Vec<Outcome>) -> Result<(), IndexError> {
        let walked = self.walked;
        self.summary.root = self.root.display().to_string();
        self.summary.files_seen = walked.files.len() + walked.issues.len();
        self.summary.walk_kept = self.tree.kept;
        for (file, outcome) in walked.files.iter().zip(outcomes) {
            self.collect_one(file, outcome)?;
        }
        for issue in walked.issues.iter().chain(&walked.unread) {
            self.summary.skipped.push(FileNote {
                path: issue.path.clone(),
                reason: issue.reason.clone(),
            });
        }
        // A kept walk that still holds is the same files the stored rows
        // (as the last run left them) describe: none went.
        self.same_files = self.files_cached && self.tree.kept;
        self.deleted = if self.same_files {
            Vec::new()
        } else {
            let current: BTreeSet<&str> =
                walked.files.iter().map(|f| f.ctx.path.as_str()).collect();
            self.stored
                .keys()
                .filter(|p| !current.contains(p.as_str()))
                .cloned()
                .collect()
        };
        let summary = &mut self.summary;
        summary.files_deleted = self.deleted.len();
        summary.files_skipped = summary.skipped.len();
        summary.files_partial = summary.partial.len();
        summary.files_unchanged = self.unchanged.len();
        Ok(())
    }

    /// One file's outcome, into the sets it belongs to.
    fn collect_one(&mut self, file: &'a SourceFile, outcome: Outcome) -> Result<(), IndexError> {
        let path = file.ctx.path.clone();
        match outcome {
            Outcome::Unchanged => self.unchanged.push(file),
            Outcome::Parsed {
                hash,
                extract,
                stored,
                names,
                note,
                words,
            } => {
                self.summary.files_parsed += 1;
                if let Some(words) = words {
                    self.words_now.insert(path.clone(), words);
                }
                let (status, reason) = parse_status(&extract, note.as_deref());
                if status == "partial" {
                    self.summary.partial.push(FileNote {
                        path: path.clone(),
                        reason: reason.clone(),
                    });
                }
                self.bodies.insert(path.clone(), stored.body.clone());
                put_extract(&mut self.batch, self.graph, &path, stored, names);
                self.store.land_when_full(&mut self.batch)?;
                self.new_files
                    .insert(path.clone(), (hash, file.bytes, status.to_string(), reason));
                self.replaced.insert(path.clone());
                self.extracts.insert(path, (file.ctx.clone(), *extract));
            }
            Outcome::Skipped(reason) => {
                self.summary.skipped.push(FileNote {
                    path: path.clone(),
                    reason: reason.clone(),
                });
                self.new_files.insert(
                    path.clone(),
                    (String::new(), file.bytes, "skipped".into(), reason),
                );
                self.replaced.insert(path);
            }
        }
        Ok(())
    }

    /// Stage: whether anything but the stat rows and history is to be
    /// written. A run that parsed nothing, found nothing gone and no
    /// file's status moved, over text and usage rows of this version,
    /// goes to [`Run::finish`] from here.
    pub(super) fn anything_changed(&mut self) -> Result<bool, IndexError> {
        let (store, graph) = (self.store, self.graph);
        // A database being built holds nothing from before this run, and any
        // read of it waits until every row handed to it has landed: such a
        // store is not asked what it held (here and below).
        self.building = store.is_building();
        self.usage_current = !self.building && usage::is_current(store, graph)?;
        self.text_current = !self.building && text::is_current(store, graph)?;
        let nothing_changed = self.usage_current
            && self.text_current
            && self.summary.files_parsed == 0
            && self.deleted.is_empty()
            && self.new_files.iter().all(|(p, (_, _, status, _))| {
                self.stored.get(p).is_some_and(|s| &s.status == status)
            });
        self.changed = !nothing_changed;
        Ok(self.changed)
    }
}
