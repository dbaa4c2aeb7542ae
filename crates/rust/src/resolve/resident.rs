//! A symbol table kept by a long-lived process between index runs.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{resolve_against, FileLinks, HashMap, RefsApart, SymbolTable};
use crate::index::lang::unbound;
use crate::model::{FileContext, FileExtract};

type Interface = (FileContext, FileExtract);

/// A symbol table kept by a long-lived process between index runs, with
/// the interfaces it was built from.
///
/// The table reads nothing of a file but its interface, so it stays right
/// for as long as every file's interface fingerprint stays what it was
/// (line numbers and doc comments may move: the table does not read
/// them). A run that only edits bodies then resolves the edited files
/// against it without building the table of the whole repository again.
/// A run that changes some files' interfaces gives it their new ones
/// ([`ResidentTable::update`]), which it puts in place of the old where
/// it can and builds itself again where it cannot.
pub struct ResidentTable {
    // Declared before the interfaces it borrows, so dropped first.
    table: SymbolTable<'static>,
    /// Every file's interface, in the table's file order. Behind a
    /// pointer: the table refers into them, and they stay where they are
    /// when the vector moves or an entry is swapped for another.
    files: Vec<Arc<Interface>>,
    /// Interfaces swapped out by updates: parts of the table may still
    /// borrow their strings (a map's key is the first of its equals put
    /// in), so they live as long as the table.
    retired: Vec<Arc<Interface>>,
    /// Index in `files` by path.
    slot_of: HashMap<String, usize>,
}

impl ResidentTable {
    /// Build the table of these interfaces (whole extracts are fine too:
    /// the table reads their interface part).
    pub fn build(files: Vec<Interface>) -> ResidentTable {
        ResidentTable::from_files(files.into_iter().map(Arc::new).collect())
    }

    fn from_files(files: Vec<Arc<Interface>>) -> ResidentTable {
        // SAFETY: the pointers move into the returned value with the table,
        // which is dropped before them (see `unbound`).
        let refs: Vec<(&'static FileContext, &'static FileExtract)> =
            files.iter().map(|f| unsafe { unbound(f) }).collect();
        let table = SymbolTable::build(&refs);
        let slot_of = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.1.path.clone(), i))
            .collect();
        ResidentTable {
            table,
            files,
            retired: Vec::new(),
            slot_of,
        }
    }

    /// The table, borrowed no longer than `self`.
    fn table(&self) -> &SymbolTable<'_> {
        &self.table
    }

    /// Resolve `files` (whole extracts of files whose interfaces the
    /// table holds, or interfaces whose other references `apart` holds)
    /// against the table: what [`super::resolve_files`] would give them
    /// with the table built from every file now.
    pub fn resolve_files<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        resolve_against(self.table(), files, apart)
    }

    /// The table of the same interfaces with some files' taken out or
    /// replaced: the entries whose path `changed` names are dropped, and
    /// `now` (the interfaces of the changed files that still exist) put
    /// in. Only right while every other file keeps its interface and its
    /// context.
    ///
    /// When the same files remain, each changed one's interface is
    /// replaced in place ([`SymbolTable::replace_file`]) and only the
    /// impl-block pass runs over every file: what a build gives, without
    /// building. When files come or go, or a replacement would change
    /// the module tree or a key another file shares, or enough replaced
    /// interfaces have piled up, the table is built again.
    pub fn update(self, changed: impl Fn(&str) -> bool, now: Vec<Interface>) -> ResidentTable {
        let same_files = now
            .iter()
            .all(|(_, ex)| self.slot_of.contains_key(&ex.path))
            && self.files.iter().filter(|f| changed(&f.1.path)).count() == now.len();
        let room = self.retired.len() + now.len() <= retired_limit(self.files.len());
        if same_files && room {
            return match self.replace(now) {
                Ok(table) => table,
                Err(files) => ResidentTable::from_files(files),
            };
        }
        let ResidentTable {
            table,
            mut files,
            retired,
            ..
        } = self;
        drop(table);
        drop(retired);
        files.retain(|f| !changed(&f.1.path));
        files.extend(now.into_iter().map(Arc::new));
        // In path order, as the extracts a table is built from otherwise
        // come: the same interfaces give the same table.
        files.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        ResidentTable::from_files(files)
    }

    /// Replace the interfaces of files the table has. `Err` gives back
    /// every file's interface now, the table dropped, to build again.
    fn replace(mut self, now: Vec<Interface>) -> Result<ResidentTable, Vec<Arc<Interface>>> {
        let mut replaced = true;
        let mut pairs = Vec::with_capacity(now.len());
        for file in now {
            let slot = self.slot_of[&file.1.path];
            let new = Arc::new(file);
            if replaced {
                // SAFETY: both pointers stay in `files` or `retired` for as
                // long as the table lives.
                let (old_ref, new_ref) = unsafe { (unbound(&self.files[slot]), unbound(&new)) };
                replaced = self.table.replace_file(slot, old_ref, new_ref).is_ok();
                pairs.push((old_ref, new_ref));
            }
            let old = std::mem::replace(&mut self.files[slot], new);
            self.retired.push(old);
        }
        if replaced {
            let touched = self.table.touched_names(&pairs);
            self.table.derive_impls(touched.as_ref());
            return Ok(self);
        }
        let ResidentTable {
            table,
            files,
            retired,
            ..
        } = self;
        drop(table);
        drop(retired);
        Err(files)
    }

    /// Make now what the first edit of an interface would otherwise make
    /// on the save's path: the indexes that find which `use`s and impl
    /// references a changed name reaches. A server does it ahead of the
    /// first save; it changes no answer.
    pub fn prepare_edits(&mut self) {
        self.table.index_use_words_now();
        self.table.index_ref_words_now();
    }

    /// Files the table was built from.
    pub fn files(&self) -> usize {
        self.files.len()
    }
}

/// How many swapped-out interfaces a table keeps before it is built
/// again: each is one file's interface, small beside the table.
fn retired_limit(files: usize) -> usize {
    (files / 16).max(64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::walk;
    use crate::RustExtractor;

    /// This project's own sources, extracted: real code, a few hundred
    /// files.
    fn project() -> Vec<(FileContext, FileExtract, String)> {
        crate::index::languages::install(vec![&crate::Rust]);
        // The workspace's root, two levels above this crate.
        let root = &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut extractor = RustExtractor::new();
        let mut files: Vec<_> = walk::walk(root)
            .files
            .into_iter()
            .filter(|f| {
                ["src/", "crates/", "tests/"]
                    .iter()
                    .any(|d| f.ctx.path.starts_with(d))
            })
            .filter(|f| f.ctx.path.ends_with(".rs"))
            .map(|f| {
                let text = std::fs::read_to_string(&f.abs_path).unwrap();
                let ex = extractor.extract(&f.ctx, &text);
                (f.ctx, ex, text)
            })
            .collect();
        files.sort_by(|a, b| a.0.path.cmp(&b.0.path));
        files
    }

    /// Every file resolved against `table` equals every file resolved
    /// against a table built from the same interfaces.
    fn assert_same_as_built(table: &ResidentTable, files: &[(FileContext, FileExtract, String)]) {
        let inputs: Vec<(&FileContext, &FileExtract)> =
            files.iter().map(|(c, e, _)| (c, e)).collect();
        let built = ResidentTable::build(
            files
                .iter()
                .map(|(c, e, _)| (c.clone(), e.clone()))
                .collect(),
        );
        let kept = table.resolve_files(&inputs, RefsApart::new());
        let fresh = built.resolve_files(&inputs, RefsApart::new());
        for (path, links) in &fresh {
            assert_eq!(kept.get(path), Some(links), "links of {path} differ");
        }
        assert_eq!(kept.len(), fresh.len());
        assert_eq!(
            table.table.impl_maps_by_key(),
            built.table.impl_maps_by_key(),
            "the impl-block maps differ"
        );
    }

    /// A number of a path, the same on every run and machine.
    fn path_bucket(path: &str) -> u32 {
        path.bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
    }

    /// The first `pub fn` / `pub struct` name after `marker` in `text`.
    fn first_name<'t>(text: &'t str, marker: &str) -> Option<&'t str> {
        let rest = &text[text.find(marker)? + marker.len()..];
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
        (end > 0).then(|| &rest[..end])
    }

    #[test]
    fn links_depend_neither_on_file_order_nor_on_thread_count() {
        // This project's sources and a crate with a glob import cycle
        // (`base` re-exports `matrix::*` and `unit::*`, `matrix` imports
        // `base::Unit`; `user` asks `base` first when it comes first).
        // Each thread keeps its own lookup memo, and the order questions
        // are asked in follows the file order and how the threads split
        // the files: built and resolved in file order, in reverse and on
        // four threads, the links must be the same. (This project's
        // library and binary share the name `graphctx`: they are two
        // crates, whichever comes first.)
        let mut files: Vec<(FileContext, FileExtract)> =
            project().into_iter().map(|(c, e, _)| (c, e)).collect();
        let cycle = [
            (
                "cycle/src/lib.rs",
                vec![],
                "pub mod base {\n    pub use self::matrix::*;\n    pub use self::unit::*;\n    \
                 pub mod matrix { use crate::base::Unit; pub fn norm(u: Unit) -> Unit { u } }\n    \
                 pub mod unit { pub struct Unit; }\n}\npub mod user;\n",
            ),
            (
                "cycle/src/user.rs",
                vec!["user".to_string()],
                "use crate::base::*;\npub fn first(u: Unit) -> Unit { norm(u) }\n",
            ),
        ];
        let mut extractor = RustExtractor::new();
        for (path, module_path, text) in cycle {
            let ctx = FileContext {
                path: path.to_string(),
                package: "cycle".to_string(),
                unit: "cycle".to_string(),
                module_path,
                is_test_file: false,
                path_aliases: Vec::new(),
            };
            let ex = extractor.extract(&ctx, text);
            files.push((ctx, ex));
        }
        let forward: Vec<(&FileContext, &FileExtract)> =
            files.iter().map(|(c, e)| (c, e)).collect();
        let backward: Vec<(&FileContext, &FileExtract)> = forward.iter().rev().copied().collect();
        let reversed: Vec<(FileContext, FileExtract)> = files.iter().rev().cloned().collect();
        // A table built from `files` and used on a pool of `threads`, its
        // files resolved in the order of `inputs`.
        let on = |threads: usize,
                  files: &[(FileContext, FileExtract)],
                  inputs: &[(&FileContext, &FileExtract)]| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let table = ResidentTable::build(files.to_vec());
                table
                    .resolve_files(inputs, RefsApart::new())
                    .into_iter()
                    .map(|(path, links)| (path, format!("{links:?}")))
                    .collect::<BTreeMap<String, String>>()
            })
        };
        let first = on(1, &files, &forward);
        assert!(first.len() > 50, "the project's sources are found");
        assert!(
            first["cycle/src/lib.rs"]
                .contains(r#""uses_type", "cycle/src/lib.rs-base::unit-Unit""#),
            "matrix::norm finds base::Unit: {}",
            first["cycle/src/lib.rs"]
        );
        for (label, other) in [
            ("backward", on(1, &reversed, &backward)),
            ("four threads", on(4, &files, &forward)),
        ] {
            for (path, links) in &first {
                assert_eq!(
                    other.get(path),
                    Some(links),
                    "{label}: links of {path} differ"
                );
            }
            assert_eq!(other.len(), first.len());
        }
    }

    #[test]
    fn interfaces_replaced_in_place_resolve_as_a_built_table_does() {
        replaced_in_place_as_built(false);
    }

    /// The same with the indexes for edits made ahead, as a server makes
    /// them before the first save.
    #[test]
    fn a_table_prepared_for_edits_resolves_them_as_a_built_table_does() {
        replaced_in_place_as_built(true);
    }

    fn replaced_in_place_as_built(prepared: bool) {
        let mut files = project();
        assert!(files.len() > 50, "the project's sources are found");
        let mut table = ResidentTable::build(
            files
                .iter()
                .map(|(c, e, _)| (c.clone(), e.clone()))
                .collect(),
        );
        if prepared {
            table.prepare_edits();
        }
        let mut extractor = RustExtractor::new();
        let mut replaced_in_place = 0;
        let mut edit = |table: ResidentTable,
                        files: &mut Vec<(FileContext, FileExtract, String)>,
                        i: usize,
                        edited: String|
         -> ResidentTable {
            let ctx = files[i].0.clone();
            let ex = extractor.extract(&ctx, &edited);
            files[i] = (ctx.clone(), ex.clone(), edited);
            let before = table.retired.len();
            let path = ctx.path.clone();
            let table = table.update(|p| p == path, vec![(ctx, ex)]);
            if table.retired.len() == before + 1 {
                replaced_in_place += 1;
            }
            assert_same_as_built(&table, files);
            table
        };
        // A type whose impl blocks are in other files, which import it:
        // renamed, then back.
        let resolve_rs = files
            .iter()
            .position(|f| f.0.path == "crates/rust/src/resolve.rs")
            .unwrap();
        let text = files[resolve_rs].2.clone();
        let renamed = text.replacen("struct SymbolTable<", "struct SymbolTableRenamed<", 1);
        assert_ne!(renamed, text);
        table = edit(table, &mut files, resolve_rs, renamed);
        table = edit(table, &mut files, resolve_rs, text);
        // Renamed functions, types and enums (their callers and impl
        // blocks keep the old name), new functions and re-exports, a
        // removed `use`: interface edits, in files across the project.
        // About one file in 18, chosen by its path: a file added elsewhere
        // does not change which files are edited.
        let sampled: Vec<usize> = (0..files.len())
            .filter(|&i| path_bucket(&files[i].0.path).is_multiple_of(18))
            .collect();
        for (round, i) in sampled.into_iter().enumerate() {
            let text = files[i].2.clone();
            let rename = |marker: &str, suffix: &str| {
                first_name(&text, marker).map(|n| {
                    let kind = marker.trim_start_matches("pub ");
                    text.replacen(&format!("{kind}{n}"), &format!("{kind}{n}{suffix}"), 1)
                })
            };
            let edited = match round % 6 {
                0 => rename("pub fn ", "_renamed"),
                1 => rename("pub struct ", "Renamed"),
                2 => Some(format!(
                    "{text}\npub fn added_in_round_{round}() -> u8 {{ 0 }}\n"
                )),
                3 => text.lines().position(|l| l.starts_with("use ")).map(|at| {
                    let mut lines: Vec<&str> = text.lines().collect();
                    lines.remove(at);
                    lines.join("\n")
                }),
                4 => Some(format!(
                    "{text}\npub use crate::model::Entity as Reexported{round};\n"
                )),
                _ => rename("pub enum ", "Renamed"),
            };
            if let Some(edited) = edited.filter(|e| *e != text) {
                table = edit(table, &mut files, i, edited);
            }
        }
        assert!(
            replaced_in_place >= 8,
            "{replaced_in_place} replaced in place"
        );
    }

    /// An edit whose touched names cannot be bounded derives the impl
    /// maps anew from every slot; the file it replaced must not count as
    /// replaced at the next edit, whose derivation would put its trait
    /// impls in a second time (a `use` removed from the file of four trait
    /// impls, then a re-export added to another crate's root).
    #[test]
    fn a_removed_use_then_a_reexport_elsewhere_keep_each_impl_once() {
        let mut files = project();
        let mut table = ResidentTable::build(
            files
                .iter()
                .map(|(c, e, _)| (c.clone(), e.clone()))
                .collect(),
        );
        let mut extractor = RustExtractor::new();
        let mut edit = |table: ResidentTable, path: &str, edit: &dyn Fn(&str) -> String| {
            let i = files.iter().position(|f| f.0.path == path).unwrap();
            let edited = edit(&files[i].2);
            let ctx = files[i].0.clone();
            let ex = extractor.extract(&ctx, &edited);
            files[i] = (ctx.clone(), ex.clone(), edited);
            let table = table.update(|p| p == path, vec![(ctx, ex)]);
            assert_same_as_built(&table, &files);
            table
        };
        table = edit(table, "crates/rust/src/lib.rs", &|text| {
            let mut lines: Vec<&str> = text.lines().collect();
            let at = lines.iter().position(|l| l.starts_with("use ")).unwrap();
            lines.remove(at);
            lines.join("\n")
        });
        edit(table, "crates/search/src/lib.rs", &|text| {
            format!("{text}\npub use crate::model::Entity as Reexported;\n")
        });
    }

    #[test]
    fn a_new_module_builds_the_table_again() {
        let mut files = project();
        let mut table = ResidentTable::build(
            files
                .iter()
                .map(|(c, e, _)| (c.clone(), e.clone()))
                .collect(),
        );
        let i = files.iter().position(|f| f.0.path == "src/lib.rs").unwrap();
        let edited = format!("{}\npub mod added {{ pub fn inner() {{}} }}\n", files[i].2);
        let ctx = files[i].0.clone();
        let ex = RustExtractor::new().extract(&ctx, &edited);
        files[i] = (ctx.clone(), ex.clone(), edited);
        table = table.update(|p| p == "src/lib.rs", vec![(ctx, ex)]);
        assert!(table.retired.is_empty(), "built again");
        assert_same_as_built(&table, &files);
    }
}
