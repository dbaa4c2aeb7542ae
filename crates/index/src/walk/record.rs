//! A walk snapshot kept on disk between command-line runs.
//!
//! A server keeps its walk in memory and checks it by `stat`
//! ([`WalkSnapshot::recheck`]); a command-line run had to walk the tree
//! anew, and on a large tree the walk is most of a run after an edit
//! (the directories read, the ignore rules applied, every manifest
//! parsed). The snapshot is written beside the database instead, and the
//! next process reads it back and checks it the way a server does: a
//! directory whose time moved is listed again, a control file (manifest,
//! ignore file) that changed means a walk, every file is stat-ed. What
//! the check accepts is what a walk would give; anything else — no
//! record, another version's, another root's, a damaged one — is a walk.
//!
//! The record describes the tree, not the database: it holds no rows and
//! is never trusted over the file system. It is written whole to a
//! temporary file renamed into place, so a reader finds the old record or
//! the new one, and only when a walk made the snapshot anew or a check
//! listed many directories again ([`RELISTED`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use rustc_hash::FxHashMap;

use super::{
    assemble, check_tree, languages, stat_now, unix_nanos, DirStamp, LanguageId, Manifests, Source,
    Stamp, WalkResult, WalkSnapshot,
};
use crate::support::packed::{pack, unpack};

/// The record's format; a record of another (or of another graphctx
/// version, which may walk or lay out differently) is not read.
const FORMAT: &str = concat!("graphctx walk record 2, ", env!("CARGO_PKG_VERSION"));

/// How many directories a check may list again (their time moved: an
/// editor that saves by renaming moves its directory's) before the
/// record is written anew with their times. A file's size and time are
/// taken by every check and decide nothing here, so an edit alone does
/// not rewrite the record; the directories an edit touched cost a
/// listing each until this many did.
const RELISTED: usize = 32;

#[derive(Serialize, Deserialize)]
struct Record {
    format: String,
    root: String,
    checked_ns: i64,
    /// Each directory entered: path, time, names.
    dirs: Vec<(String, i64, Vec<String>)>,
    /// Each control file: path, and its size and time when it existed.
    controls: Vec<(String, Option<(u64, i64)>)>,
    /// Each source file: repository-relative path, size, time, language.
    files: Vec<(String, u64, i64, u8)>,
    /// Per language: each manifest's repository-relative path and text.
    manifests: Vec<Vec<(String, String)>>,
}

impl WalkSnapshot {
    /// The snapshot recorded at `path` for `root`, checked as
    /// [`WalkSnapshot::recheck`] checks a kept one: `None` when there is
    /// no record this version can read for that root, or the tree is not
    /// as it says (the caller walks). The layout is made from the
    /// recorded manifests while the tree is checked.
    pub fn checked_record(path: &Path, root: &Path) -> Option<WalkSnapshot> {
        use rayon::prelude::*;
        let now = unix_nanos(std::time::SystemTime::now());
        let bytes = std::fs::read(path).ok()?;
        let record: Record = rmp_serde::from_slice(&unpack(&bytes)?).ok()?;
        let langs = languages::all().len();
        if record.format != FORMAT
            || Path::new(&record.root) != root
            || record.manifests.len() != langs
            || record.files.iter().any(|f| usize::from(f.3) >= langs)
        {
            return None;
        }
        let mut dirs: Vec<DirStamp> = record
            .dirs
            .into_iter()
            .map(|(path, mtime_ns, names)| DirStamp {
                path: PathBuf::from(path),
                mtime_ns,
                names: names.into_iter().map(Into::into).collect(),
            })
            .collect();
        if dirs.is_empty() {
            return None;
        }
        let controls: Vec<Stamp> = record
            .controls
            .into_iter()
            .map(|(path, seen)| Stamp {
                path: PathBuf::from(path),
                seen,
            })
            .collect();
        let sources: Vec<Source> = record
            .files
            .into_iter()
            .map(|(rel, bytes, mtime_ns, lang)| {
                let abs = root.join(&rel);
                (rel, abs, bytes, mtime_ns, LanguageId(lang))
            })
            .collect();
        let manifests: Manifests = record
            .manifests
            .into_iter()
            .map(|m| m.into_iter().collect::<BTreeMap<_, _>>())
            .collect();
        let checked_ns = record.checked_ns;
        let (result, checked) = rayon::join(
            || assemble(sources.clone(), &manifests, Vec::new()),
            || {
                let relisted = check_tree(&mut dirs, &controls, checked_ns)?;
                let stats = sources
                    .par_iter()
                    .map(|(rel, abs, ..)| Some((rel.as_str(), stat_now(abs)?)))
                    .collect::<Option<FxHashMap<&str, (u64, i64)>>>()?;
                Some((relisted, stats))
            },
        );
        let (relisted, stats) = checked?;
        let mut result: WalkResult = result;
        for f in &mut result.files {
            let &(bytes, mtime_ns) = stats.get(f.ctx.path.as_str())?;
            f.bytes = bytes;
            f.mtime_ns = mtime_ns;
        }
        let mut snapshot = WalkSnapshot::of(root, result, dirs, controls, now, manifests);
        snapshot.moved = false;
        snapshot.note_relisted(relisted);
        Some(snapshot)
    }

    /// Note that a check listed `relisted` directories again: past
    /// [`RELISTED`], the snapshot is worth recording anew.
    pub(super) fn note_relisted(&mut self, relisted: usize) {
        self.moved |= relisted > RELISTED;
    }

    /// Write the snapshot to `path` when a walk took it or a check listed
    /// many directories again. Best effort: a record that cannot be written costs the
    /// next process a walk, never a run. Not written for a walk that
    /// reported problems or a path that is not UTF-8 (the next process
    /// walks).
    pub fn write_record(&mut self, path: &Path) {
        if !self.moved || !self.result.issues.is_empty() || self.dirs.is_empty() {
            return;
        }
        let Some(record) = self.record() else {
            return;
        };
        let Ok(bytes) = rmp_serde::to_vec(&record) else {
            return;
        };
        let Some(name) = path.file_name() else {
            return;
        };
        let mut temp = name.to_os_string();
        temp.push(format!(".{}.tmp", std::process::id()));
        let temp = path.with_file_name(temp);
        let written =
            std::fs::write(&temp, pack(&bytes)).and_then(|()| std::fs::rename(&temp, path));
        if written.is_ok() {
            self.moved = false;
        } else {
            let _ = std::fs::remove_file(&temp);
        }
    }

    fn record(&self) -> Option<Record> {
        let text = |p: &Path| p.to_str().map(str::to_string);
        let dirs = self
            .dirs
            .iter()
            .map(|d| {
                let names = d
                    .names
                    .iter()
                    .map(|n| n.to_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()?;
                Some((text(&d.path)?, d.mtime_ns, names))
            })
            .collect::<Option<Vec<_>>>()?;
        let controls = self
            .controls
            .iter()
            .map(|c| Some((text(&c.path)?, c.seen)))
            .collect::<Option<Vec<_>>>()?;
        let files = self
            .result
            .files
            .iter()
            .map(|f| (f.ctx.path.clone(), f.bytes, f.mtime_ns, f.lang.0))
            .collect();
        let manifests = self
            .manifests
            .iter()
            .map(|m| m.iter().map(|(d, t)| (d.clone(), t.clone())).collect())
            .collect();
        Some(Record {
            format: FORMAT.to_string(),
            root: text(&self.root)?,
            checked_ns: self.checked_ns,
            dirs,
            controls,
            files,
            manifests,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{settled_tree, tree_changes};
    use super::super::walk;
    use super::*;

    #[test]
    fn a_recorded_walk_read_back_is_what_a_walk_gives_after_file_edits() {
        let tree = settled_tree();
        let root = tree.path();
        let beside = tempfile::tempdir().unwrap();
        let record = beside.path().join("graph.db.walk");
        WalkSnapshot::take(root).write_record(&record);
        // Written in place and through a rename (as editors save).
        std::fs::write(root.join("src/lib.toy"), "mod a;\npub fn g() {}\n").unwrap();
        let tmp = root.join("src/a/.mod.toy.swp");
        std::fs::write(&tmp, "pub fn f() { let _ = 1; }\n").unwrap();
        std::fs::rename(&tmp, root.join("src/a/mod.toy")).unwrap();
        let back = WalkSnapshot::checked_record(&record, root).expect("same names");
        let walked = walk(root);
        assert_eq!(back.result.files.len(), walked.files.len());
        for (kept, fresh) in back.result.files.iter().zip(&walked.files) {
            assert_eq!(kept.ctx, fresh.ctx);
            assert_eq!(kept.abs_path, fresh.abs_path);
            assert_eq!(kept.lang, fresh.lang);
            assert_eq!((kept.bytes, kept.mtime_ns), (fresh.bytes, fresh.mtime_ns));
        }
        assert_eq!(
            format!("{:?}", back.result.layout),
            format!("{:?}", walked.layout)
        );
        // Another root's record, or a damaged one, is a walk.
        let other = settled_tree();
        assert!(WalkSnapshot::checked_record(&record, other.path()).is_none());
        std::fs::write(&record, b"not a record").unwrap();
        assert!(WalkSnapshot::checked_record(&record, root).is_none());
        assert!(WalkSnapshot::checked_record(&beside.path().join("none"), root).is_none());
    }

    #[test]
    fn a_recorded_walk_gives_way_when_names_manifests_or_ignore_rules_change() {
        for (what, change) in tree_changes() {
            let tree = settled_tree();
            let root = tree.path();
            let beside = tempfile::tempdir().unwrap();
            let record = beside.path().join("graph.db.walk");
            WalkSnapshot::take(root).write_record(&record);
            assert!(
                WalkSnapshot::checked_record(&record, root).is_some(),
                "{what}: before the change"
            );
            change(root);
            assert!(
                WalkSnapshot::checked_record(&record, root).is_none(),
                "{what}"
            );
        }
    }

    #[test]
    fn a_record_is_written_again_only_when_a_walk_took_it_or_many_directories_moved() {
        let tree = settled_tree();
        let root = tree.path();
        let beside = tempfile::tempdir().unwrap();
        let record = beside.path().join("graph.db.walk");
        let mut taken = WalkSnapshot::take(root);
        assert!(taken.moved);
        taken.write_record(&record);
        assert!(!taken.moved);
        // A file edit, even through a rename, leaves the record as it is.
        let tmp = root.join("src/a/.mod.toy.swp");
        std::fs::write(&tmp, "pub fn f() { let _ = 2; }\n").unwrap();
        std::fs::rename(&tmp, root.join("src/a/mod.toy")).unwrap();
        let back = WalkSnapshot::checked_record(&record, root).unwrap();
        assert!(!back.moved);
    }
}
