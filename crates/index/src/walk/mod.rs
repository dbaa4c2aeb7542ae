//! Finding the files to index and where each sits in its package.
//!
//! The walk honours `.gitignore`, `.ignore` and git's exclude files (also
//! outside a git checkout), skips hidden directories and graphctx's own
//! store, and follows symlinks so that a loop is reported instead of
//! silently ignored. A file is indexed when a language claims its name
//! ([`languages::of_file`]); the manifests each language reads, found on
//! the way, give the [`Layouts`] — a manifest by its usual name
//! (`package.json`, `Cargo.toml`) in a directory the walk reads counts
//! even when an ignore rule matches it, as build tools ignore the copies
//! they generate (`**/package.json`) while git tracks the package's own;
//! each file starts with the context its
//! path suggests ([`Layouts::guess`]), which the pipeline corrects once
//! the declarations of every file (Rust's `mod`) are known.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rustc_hash::FxHashMap as HashMap;

use super::languages;
use super::polyglot::Layouts;
use crate::model::{FileContext, LanguageId};
use crate::store::STORE_DIR;

/// A source file found by the walk.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub abs_path: PathBuf,
    pub ctx: FileContext,
    /// The language that claims it.
    pub lang: LanguageId,
    /// Size in bytes from the directory entry's metadata.
    pub bytes: u64,
    /// Modification time (nanoseconds since the Unix epoch; 0 when the
    /// file system does not say), for the stat shortcut of the index.
    pub mtime_ns: i64,
}

/// Something the walk could not look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkIssue {
    /// Repository-relative path, or the root when no path is known.
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct WalkResult {
    /// Sorted by path.
    pub files: Vec<SourceFile>,
    pub issues: Vec<WalkIssue>,
    /// The manifests a layout could not read, and why (the layout goes on
    /// without them; a walk with these is kept as any other).
    pub unread: Vec<WalkIssue>,
    /// The packages and their targets, per language.
    pub layout: Layouts,
}

/// Walk `root` for the files a language claims.
pub fn walk(root: &Path) -> WalkResult {
    walk_noting(root, |_| {}).0
}

/// What the walk found at one entry.
enum Found {
    Source(String, PathBuf, u64, i64, LanguageId),
    /// A manifest: its directory, text and the languages that read it.
    Manifest(String, String, Vec<usize>),
    Issue(WalkIssue),
}

/// [`walk`] that shows `seen_dir` every directory it enters, before it
/// reads the directory.
///
/// Directories are read on every core (`ignore`'s parallel walk): on a
/// large tree a walk is most of a command-line run that finds nothing
/// changed, and it is system calls (directory reads, a `stat` per file,
/// ignore files looked for) that wait on the kernel one at a time.
/// What each thread finds is gathered and sorted, so the result does
/// not depend on the order the threads met the entries in.
fn walk_noting(root: &Path, seen_dir: impl Fn(&Path) + Sync) -> (WalkResult, Manifests) {
    let langs = languages::all();
    let found: std::sync::Mutex<Vec<Found>> = std::sync::Mutex::new(Vec::new());
    // Manifests by their usual names: read from each directory the walk
    // enters, ignored or not.
    let named: Vec<&str> = {
        let mut v: Vec<&str> = langs
            .iter()
            .flat_map(|l| l.manifests().iter().copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    // A manifest read for the languages that claim its name (none: not
    // a manifest).
    let manifest = |abs: &Path, name: &str| -> Option<Found> {
        let readers: Vec<usize> = (0..langs.len())
            .filter(|&i| langs[i].is_manifest(name))
            .collect();
        if readers.is_empty() {
            return None;
        }
        let rel = relative(root, abs)?;
        let text = std::fs::read_to_string(abs).ok()?;
        Some(Found::Manifest(rel, text, readers))
    };
    let manifest_in = |dir: &Path, name: &str| -> Option<Found> {
        let abs = dir.join(name);
        std::fs::metadata(&abs)
            .is_ok_and(|m| m.is_file())
            .then(|| manifest(&abs, name))
            .flatten()
    };
    let visit = |entry: Result<ignore::DirEntry, ignore::Error>| -> Option<Found> {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                return Some(Found::Issue(WalkIssue {
                    path: error_path(&err, root),
                    reason: describe_walk_error(&err),
                }))
            }
        };
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            seen_dir(entry.path());
            let in_dir: Vec<Found> = named
                .iter()
                .filter_map(|name| manifest_in(entry.path(), name))
                .collect();
            if !in_dir.is_empty() {
                found
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(in_dir);
            }
            return None;
        }
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        let abs = entry.path();
        let name = entry.file_name().to_string_lossy();
        if named.contains(&name.as_ref()) {
            // Read with its directory.
            return None;
        }
        if languages::all()
            .iter()
            .any(|l| l.is_manifest(name.as_ref()))
        {
            manifest(abs, name.as_ref())
        } else {
            let rel = relative(root, abs)?;
            let lang = languages::of_file(&name)?;
            let meta = entry.metadata().ok();
            let bytes = meta.as_ref().map_or(0, |m| m.len());
            let mtime_ns = meta.and_then(|m| m.modified().ok()).map_or(0, unix_nanos);
            Some(Found::Source(
                rel,
                abs.to_path_buf(),
                bytes,
                mtime_ns,
                lang.id(),
            ))
        }
    };
    walker(root).build_parallel().run(|| {
        let (visit, found) = (&visit, &found);
        Box::new(move |entry| {
            if let Some(f) = visit(entry) {
                found.lock().unwrap_or_else(|e| e.into_inner()).push(f);
            }
            ignore::WalkState::Continue
        })
    });

    let mut sources: Vec<Source> = Vec::new();
    let mut manifests: Manifests = vec![BTreeMap::new(); langs.len()];
    let mut issues = Vec::new();
    for f in found.into_inner().unwrap_or_else(|e| e.into_inner()) {
        match f {
            Found::Source(rel, abs, bytes, mtime_ns, lang) => {
                sources.push((rel, abs, bytes, mtime_ns, lang))
            }
            Found::Manifest(path, text, readers) => {
                for i in readers {
                    manifests[i].insert(path.clone(), text.clone());
                }
            }
            Found::Issue(issue) => issues.push(issue),
        }
    }
    issues.sort_by(|a, b| a.path.cmp(&b.path));
    let result = assemble(sources, &manifests, issues);
    (result, manifests)
}

/// A source file as a walk found it: its repository-relative path, its
/// path on disk, size, modification time and language.
type Source = (String, PathBuf, u64, i64, LanguageId);

/// Per language: each manifest's repository-relative path and text.
type Manifests = Vec<BTreeMap<String, String>>;

/// The walk's result from the source files and manifests it found: the
/// layout the manifests describe, and each file's context in it.
fn assemble(sources: Vec<Source>, manifests: &Manifests, issues: Vec<WalkIssue>) -> WalkResult {
    let mut paths: Vec<BTreeSet<String>> = vec![BTreeSet::new(); manifests.len()];
    for (rel, .., lang) in &sources {
        paths[usize::from(lang.0)].insert(rel.clone());
    }
    let layout = Layouts::new(manifests, &paths);
    let mut files: Vec<SourceFile> = sources
        .into_iter()
        .map(|(rel, abs_path, bytes, mtime_ns, lang)| SourceFile {
            ctx: layout.guess(lang, &rel),
            lang,
            abs_path,
            bytes,
            mtime_ns,
        })
        .collect();
    files.sort_by(|a, b| a.ctx.path.cmp(&b.ctx.path));
    let unread = layout
        .unread()
        .into_iter()
        .map(|(path, reason)| WalkIssue { path, reason })
        .collect();
    WalkResult {
        files,
        issues,
        unread,
        layout,
    }
}

/// A modification this recent may share its timestamp with the next one
/// (file systems stamp times with a coarse clock): a directory or control
/// file stamped within this window of a check is looked at again by the
/// next one.
const SETTLE_NS: i64 = 2_000_000_000;

/// Whether a file of this name decides what a walk finds in its
/// directory or below: an ignore file, or any language's manifest.
pub fn is_control_file(name: &str) -> bool {
    matches!(name, ".gitignore" | ".ignore") || languages::all().iter().any(|l| l.is_manifest(name))
}

/// A walk kept by a long-lived process (a server) so that the next run
/// learns what changed on disk from `stat` calls instead of walking the
/// tree again: the files, every directory the walk entered with the
/// names it held, and the files that decide the walk and the layout
/// (manifests, ignore files).
///
/// [`WalkSnapshot::recheck`] gives the walk a new [`walk`] would give, or
/// nothing when it cannot be sure (the caller then walks):
///
/// - a directory whose modification time moved (or is too recent to
///   trust) is listed again, and any name that came or went means a
///   walk — new and deleted files, renamed directories;
/// - a manifest or ignore file that changed, appeared or went means a
///   walk — the layout or the ignore rules may differ;
/// - every file known is stat-ed again, so its size and time are current
///   (the index run decides from them, as after a walk, what to read);
/// - a walk that reported problems (unreadable directories, symlink
///   loops) is never trusted: those may have healed.
///
/// Not covered: ignore rules outside the tree's own files (a global git
/// excludes file), which a walk reads and a recheck does not look at.
pub struct WalkSnapshot {
    root: PathBuf,
    pub result: WalkResult,
    dirs: Vec<DirStamp>,
    controls: Vec<Stamp>,
    /// When the last check began (nanoseconds since the Unix epoch).
    checked_ns: i64,
    /// The manifests' texts, from which the layout is made again when
    /// the snapshot is read back from its record ([`record`]).
    manifests: Manifests,
    /// Whether the snapshot is worth recording again ([`record`]): it was
    /// taken by a walk, or a check listed many directories again.
    moved: bool,
    /// Where each file and directory is in `result.files` and `dirs`: a
    /// check told by a watch looks up the paths it reported instead of
    /// going over every file and directory of the tree.
    file_at: HashMap<PathBuf, usize>,
    dir_at: HashMap<PathBuf, usize>,
}

struct DirStamp {
    path: PathBuf,
    mtime_ns: i64,
    /// Every name in the directory (sorted), ignored ones included.
    names: Vec<std::ffi::OsString>,
}

/// A control file as last seen: `None` when it did not exist.
#[derive(PartialEq)]
struct Stamp {
    path: PathBuf,
    seen: Option<(u64, i64)>,
}

mod record;

fn mtime_of(meta: &std::fs::Metadata) -> i64 {
    meta.modified().ok().map_or(0, unix_nanos)
}

fn stamp(path: PathBuf) -> Stamp {
    let seen = std::fs::metadata(&path)
        .ok()
        .map(|m| (m.len(), mtime_of(&m)));
    Stamp { path, seen }
}

/// Whether the directories and control files of a walk last checked at
/// `checked_ns` are as they were: every control file unchanged (and not
/// changed too recently to tell), every directory's names the same (a
/// directory whose time moved, or is too recent to trust, is listed
/// again, and its new time taken). How many were listed again, or `None`
/// when only a new walk can tell.
fn check_tree(dirs: &mut [DirStamp], controls: &[Stamp], checked_ns: i64) -> Option<usize> {
    use rayon::prelude::*;
    let recent = checked_ns - SETTLE_NS;
    let controls_same = controls.par_iter().all(|c| {
        let now = stamp(c.path.clone());
        now == *c && c.seen.is_none_or(|(_, mtime)| mtime < recent)
    });
    if !controls_same {
        return None;
    }
    let relisted = AtomicUsize::new(0);
    let dirs_same = dirs.par_iter_mut().all(|d| {
        let Ok(meta) = std::fs::metadata(&d.path) else {
            return false;
        };
        let mtime_ns = mtime_of(&meta);
        if mtime_ns == d.mtime_ns && mtime_ns < recent {
            return true;
        }
        d.mtime_ns = mtime_ns;
        relisted.fetch_add(1, Ordering::Relaxed);
        list_dir(&d.path).is_some_and(|names| names == d.names)
    });
    dirs_same.then(|| relisted.into_inner())
}

/// A file's size and time as they are now; `None` when it is gone or no
/// longer a file.
fn stat_now(path: &Path) -> Option<(u64, i64)> {
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| (meta.len(), mtime_of(&meta)))
}

/// Take `file`'s size and time as they are now; false when it is gone or
/// no longer a file.
fn restat(file: &mut SourceFile) -> bool {
    let Ok(meta) = std::fs::metadata(&file.abs_path) else {
        return false;
    };
    file.bytes = meta.len();
    file.mtime_ns = mtime_of(&meta);
    meta.is_file()
}

fn list_dir(dir: &Path) -> Option<Vec<std::ffi::OsString>> {
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
        .ok()?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .ok()?;
    names.sort();
    Some(names)
}

impl WalkSnapshot {
    /// Walk `root` and keep what a later [`WalkSnapshot::recheck`] needs.
    pub fn take(root: &Path) -> WalkSnapshot {
        let checked_ns = unix_nanos(std::time::SystemTime::now());
        let listed: std::sync::Mutex<Option<Vec<DirStamp>>> =
            std::sync::Mutex::new(Some(Vec::new()));
        // Each directory is stamped and listed before the walk reads it:
        // a name that arrives in between is in the walk and not in the
        // list, and the next check walks again.
        let (result, manifests) = walk_noting(root, |dir| {
            let mtime_ns = std::fs::metadata(dir).map_or(0, |m| mtime_of(&m));
            let names = list_dir(dir);
            let mut listed = listed.lock().unwrap_or_else(|e| e.into_inner());
            match (names, listed.as_mut()) {
                (Some(names), Some(dirs)) => dirs.push(DirStamp {
                    path: dir.to_path_buf(),
                    mtime_ns,
                    names,
                }),
                // One directory that could not be listed: none is trusted.
                _ => *listed = None,
            }
        });
        let listed = listed.into_inner().unwrap_or_else(|e| e.into_inner());
        let unlisted = listed.is_none();
        let mut dirs = listed.unwrap_or_default();
        dirs.sort_by(|a, b| a.path.cmp(&b.path));
        let mut controls: Vec<Stamp> = Vec::new();
        for d in &dirs {
            // One that appears later changes the directory's names.
            for name in d
                .names
                .iter()
                .filter(|n| n.to_str().is_some_and(is_control_file))
            {
                controls.push(stamp(d.path.join(name)));
            }
            if d.names.iter().any(|n| n == ".git") {
                controls.push(stamp(d.path.join(".git/info/exclude")));
            }
        }
        // Ignore files above the root apply too.
        for dir in root.ancestors().skip(1) {
            for name in [".gitignore", ".ignore"] {
                controls.push(stamp(dir.join(name)));
            }
        }
        if unlisted {
            // Never trusted (see `recheck`).
            dirs.clear();
        }
        WalkSnapshot::of(root, result, dirs, controls, checked_ns, manifests)
    }

    /// A snapshot of these parts, with its lookup maps.
    fn of(
        root: &Path,
        result: WalkResult,
        dirs: Vec<DirStamp>,
        controls: Vec<Stamp>,
        checked_ns: i64,
        manifests: Manifests,
    ) -> WalkSnapshot {
        let file_at = result
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.abs_path.clone(), i))
            .collect();
        let dir_at = dirs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.path.clone(), i))
            .collect();
        WalkSnapshot {
            root: root.to_path_buf(),
            result,
            dirs,
            controls,
            checked_ns,
            manifests,
            moved: true,
            file_at,
            dir_at,
        }
    }

    /// The walk as it is now, by `stat` (see [`WalkSnapshot`]); `None`
    /// when only a new walk can tell.
    pub fn recheck(mut self, root: &Path) -> Option<WalkSnapshot> {
        use rayon::prelude::*;
        if self.root != root || !self.result.issues.is_empty() || self.dirs.is_empty() {
            return None;
        }
        let now = unix_nanos(std::time::SystemTime::now());
        let relisted = check_tree(&mut self.dirs, &self.controls, self.checked_ns)?;
        let files_there = self.result.files.par_iter_mut().all(restat);
        if !files_there {
            return None;
        }
        self.note_relisted(relisted);
        self.checked_ns = now;
        Some(self)
    }

    /// The walk as it is now, told by a file watch instead of by `stat`:
    /// `changed` holds every path the watch reported since this snapshot
    /// was last checked (see [`WatchedChanges`]). Only those are looked
    /// at: a reported file is stat'ed again, a reported directory and the
    /// directory of every reported path listed again, a reported control
    /// file stamped again. `None` when only a new walk can tell (a listing
    /// or a control file changed, a file became something else).
    pub fn recheck_changed(
        mut self,
        root: &Path,
        changed: &WatchedChanges,
    ) -> Option<WalkSnapshot> {
        if self.root != root || !self.result.issues.is_empty() || self.dirs.is_empty() {
            return None;
        }
        let now = unix_nanos(std::time::SystemTime::now());
        let paths = &changed.paths;
        // Ignore files above the root and git's exclude file lie outside
        // what a watch covers: those few are stamped again every time.
        let unwatched =
            |p: &Path| !p.starts_with(root) || p.components().any(|c| c.as_os_str() == ".git");
        let controls_same = self
            .controls
            .iter()
            .filter(|c| paths.contains(&c.path) || unwatched(&c.path))
            .all(|c| stamp(c.path.clone()) == *c);
        if !controls_same {
            return None;
        }
        let listed: BTreeSet<usize> = paths
            .iter()
            .flat_map(|p| [Some(p.as_path()), p.parent()])
            .flatten()
            .filter_map(|p| self.dir_at.get(p).copied())
            .collect();
        let dirs_same = listed.into_iter().all(|i| {
            let d = &mut self.dirs[i];
            d.mtime_ns = std::fs::metadata(&d.path).map_or(0, |m| mtime_of(&m));
            list_dir(&d.path).is_some_and(|names| names == d.names)
        });
        if !dirs_same {
            return None;
        }
        let reported: BTreeSet<usize> = paths
            .iter()
            .filter_map(|p| self.file_at.get(p).copied())
            .collect();
        let files_there = reported
            .into_iter()
            .all(|i| restat(&mut self.result.files[i]));
        if !files_there {
            return None;
        }
        self.checked_ns = now;
        Some(self)
    }

    /// The repository-relative paths of the snapshot's files among
    /// `changed`: a run looks at their contents whatever their `stat`
    /// says (a watch sees a write that left size and time as they were).
    pub fn files_among(&self, changed: &WatchedChanges) -> BTreeSet<String> {
        changed
            .paths
            .iter()
            .filter_map(|p| self.file_at.get(p))
            .map(|&i| self.result.files[i].ctx.path.clone())
            .collect()
    }
}

/// What a file watch reported since a kept walk was last checked: every
/// path under the root it saw created, written, renamed or removed, with
/// nothing lost in between (the watch covered every directory the walk
/// entered, delivered every event up to the moment the run began, and
/// no event asked for a rescan). Lets a server's run look at those paths
/// instead of `stat`-ing the whole tree ([`WalkSnapshot::recheck_changed`]).
#[derive(Debug, Default, Clone)]
pub struct WatchedChanges {
    pub paths: BTreeSet<PathBuf>,
}

/// The walk's directory traversal from `start`: gitignore-aware (in a git
/// repository or not), no hidden entries, links followed, the store's
/// directory left out. A server's file watch covers what it visits.
pub fn walker(start: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(start);
    builder
        .hidden(true)
        .follow_links(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != STORE_DIR);
    builder
}

/// `abs` relative to `root`, with `/` separators; `None` for the root.
fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    // (A walk's paths are joined a name at a time: no `.` or doubled
    // separators to normalise, so the text is the components joined.)
    if rel.as_os_str().is_empty() {
        return None;
    }
    let text = rel.to_string_lossy();
    Some(match std::path::MAIN_SEPARATOR {
        '/' => text.into_owned(),
        sep => text.replace(sep, "/"),
    })
}

fn error_path(err: &ignore::Error, root: &Path) -> String {
    fn find(err: &ignore::Error) -> Option<&Path> {
        match err {
            ignore::Error::WithPath { path, .. } => Some(path),
            ignore::Error::Loop { child, .. } => Some(child),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                find(err)
            }
            _ => None,
        }
    }
    find(err)
        .and_then(|p| relative(root, p))
        .unwrap_or_else(|| root.display().to_string())
}

fn describe_walk_error(err: &ignore::Error) -> String {
    match err {
        ignore::Error::Loop { ancestor, .. } => {
            format!("symlink loop back to {}", ancestor.display())
        }
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => describe_walk_error(err),
        ignore::Error::Io(e) => format!("unreadable: {e}"),
        other => other.to_string(),
    }
}

/// A time as nanoseconds since the Unix epoch (0 before it or past i64).
pub fn unix_nanos(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree whose files and directories were last changed long ago, as
    /// a server's tree is between saves.
    pub(super) fn settled_tree() -> tempfile::TempDir {
        crate::toy::install();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/a")).unwrap();
        std::fs::write(root.join("Toy.toml"), "[package]\nname = \"t\"\n").unwrap();
        std::fs::write(root.join("src/lib.toy"), "mod a;\n").unwrap();
        std::fs::write(root.join("src/a/mod.toy"), "pub fn f() {}\n").unwrap();
        std::fs::write(root.join(".gitignore"), "/target\n").unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for p in [
            "",
            "src",
            "src/a",
            "Toy.toml",
            "src/lib.toy",
            "src/a/mod.toy",
            ".gitignore",
        ] {
            let f = std::fs::File::open(root.join(p)).unwrap();
            f.set_modified(old).unwrap();
        }
        dir
    }

    /// A change to `settled_tree` after which only a walk can tell what
    /// the tree holds: a name that came or went, a manifest or ignore
    /// rules that changed.
    pub(super) type TreeChange = (&'static str, fn(&Path));

    pub(super) fn tree_changes() -> [TreeChange; 6] {
        [
            ("new file", |r| {
                std::fs::write(r.join("src/a/b.toy"), "").unwrap()
            }),
            ("deleted file", |r| {
                std::fs::remove_file(r.join("src/a/mod.toy")).unwrap()
            }),
            ("new directory", |r| {
                std::fs::create_dir(r.join("src/c")).unwrap()
            }),
            ("manifest edited", |r| {
                std::fs::write(r.join("Toy.toml"), "[package]\nname = \"u\"\n").unwrap()
            }),
            ("ignore rules edited", |r| {
                std::fs::write(r.join(".gitignore"), "/target\nsrc/a\n").unwrap()
            }),
            ("ignore file added", |r| {
                std::fs::write(r.join("src/.ignore"), "a/\n").unwrap()
            }),
        ]
    }

    fn paths(w: &WalkResult) -> Vec<String> {
        w.files.iter().map(|f| f.ctx.path.clone()).collect()
    }

    #[test]
    fn a_kept_walk_holds_while_only_file_contents_change() {
        let tree = settled_tree();
        let root = tree.path();
        let snap = WalkSnapshot::take(root);
        assert_eq!(paths(&snap.result), ["src/a/mod.toy", "src/lib.toy"]);
        let snap = snap.recheck(root).expect("nothing changed");
        // Written in place and through a rename (as editors save): the
        // names stay, the size and time are the file's now.
        std::fs::write(root.join("src/lib.toy"), "mod a;\npub fn g() {}\n").unwrap();
        let tmp = root.join("src/a/.mod.toy.swp");
        std::fs::write(&tmp, "pub fn f() { let _ = 1; }\n").unwrap();
        std::fs::rename(&tmp, root.join("src/a/mod.toy")).unwrap();
        let snap = snap.recheck(root).expect("same names");
        let walked = walk(root);
        assert_eq!(paths(&snap.result), paths(&walked));
        for (kept, fresh) in snap.result.files.iter().zip(&walked.files) {
            assert_eq!((kept.bytes, kept.mtime_ns), (fresh.bytes, fresh.mtime_ns));
            assert_eq!(kept.ctx, fresh.ctx);
        }
    }

    fn reported(root: &Path, rel: &[&str]) -> WatchedChanges {
        WatchedChanges {
            paths: rel.iter().map(|r| root.join(r)).collect(),
        }
    }

    #[test]
    fn a_kept_walk_told_by_a_watch_looks_at_the_reported_files() {
        let tree = settled_tree();
        let root = tree.path();
        let snap = WalkSnapshot::take(root);
        let snap = snap
            .recheck_changed(root, &WatchedChanges::default())
            .expect("nothing reported");
        std::fs::write(root.join("src/lib.toy"), "mod a;\npub fn g() {}\n").unwrap();
        let tmp = root.join("src/a/.mod.toy.swp");
        std::fs::write(&tmp, "pub fn f() { let _ = 1; }\n").unwrap();
        std::fs::rename(&tmp, root.join("src/a/mod.toy")).unwrap();
        let changes = reported(
            root,
            &["src/lib.toy", "src/a/.mod.toy.swp", "src/a/mod.toy"],
        );
        let snap = snap.recheck_changed(root, &changes).expect("same names");
        let walked = walk(root);
        assert_eq!(paths(&snap.result), paths(&walked));
        for (kept, fresh) in snap.result.files.iter().zip(&walked.files) {
            assert_eq!((kept.bytes, kept.mtime_ns), (fresh.bytes, fresh.mtime_ns));
        }
        // The reported files are read whatever their stat says.
        let among: Vec<String> = snap.files_among(&changes).into_iter().collect();
        assert_eq!(among, ["src/a/mod.toy", "src/lib.toy"]);
    }

    #[test]
    fn a_kept_walk_told_by_a_watch_gives_way_when_names_manifests_or_ignore_rules_change() {
        type Change = fn(&Path);
        let changes: [(&str, &str, Change); 6] = [
            ("new file", "src/a/b.toy", |r| {
                std::fs::write(r.join("src/a/b.toy"), "").unwrap()
            }),
            ("deleted file", "src/a/mod.toy", |r| {
                std::fs::remove_file(r.join("src/a/mod.toy")).unwrap()
            }),
            ("new directory", "src/c", |r| {
                std::fs::create_dir(r.join("src/c")).unwrap()
            }),
            ("manifest edited", "Toy.toml", |r| {
                std::fs::write(r.join("Toy.toml"), "[package]\nname = \"u\"\n").unwrap()
            }),
            ("ignore rules edited", ".gitignore", |r| {
                std::fs::write(r.join(".gitignore"), "/target\nsrc/a\n").unwrap()
            }),
            ("ignore file added", "src/.ignore", |r| {
                std::fs::write(r.join("src/.ignore"), "a/\n").unwrap()
            }),
        ];
        for (what, path, change) in changes {
            let tree = settled_tree();
            let root = tree.path();
            let snap = WalkSnapshot::take(root);
            change(root);
            let told = snap.recheck_changed(root, &reported(root, &[path]));
            assert!(told.is_none(), "{what}");
        }
    }

    #[test]
    fn a_kept_walk_gives_way_when_names_manifests_or_ignore_rules_change() {
        for (what, change) in tree_changes() {
            let tree = settled_tree();
            let snap = WalkSnapshot::take(tree.path());
            change(tree.path());
            assert!(snap.recheck(tree.path()).is_none(), "{what}");
        }
    }
}
