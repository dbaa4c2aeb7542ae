//! Syntax trees a server keeps for the files open in the editor, so the
//! next parse of such a file is incremental.
//!
//! tree-sitter parses about 10 MB of Rust a second: a 200 KiB generated
//! file takes 20 ms, most of what saving it costs. Given the tree of the
//! text before and where the text changed, it reuses every subtree outside
//! the change: a line added at the top parses in about 1 ms. A server
//! holds the tree (and its text) of each file the editor opened, parsed
//! when it was opened and replaced whenever the index parses the file
//! again; what changed is found by comparing the held text with the new
//! one (their common start and end), so any change, made in the editor
//! or not, parses to the same tree a fresh parse would give.
//!
//! Only wanted files are held, and at most [`MAX_BYTES`] of their text:
//! the least recently parsed go first.

use std::collections::HashMap;
use std::sync::Mutex;

use tree_sitter::{InputEdit, Point, Tree};

use super::lang::Extractor;
use crate::model::{FileContext, FileExtract};

/// Most text held, over all files (the trees take several times more).
pub const MAX_BYTES: usize = 4 << 20;

/// The trees of the files a server was asked to hold.
#[derive(Default)]
pub struct HeldTrees {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Wanted paths; `None` until first parsed (or after being dropped
    /// for room).
    files: HashMap<String, Option<Held>>,
    bytes: usize,
    clock: u64,
}

struct Held {
    text: String,
    tree: Tree,
    used: u64,
}

impl HeldTrees {
    /// Hold the tree of the file at `path` (repository-relative) from its
    /// next parse on.
    pub fn want(&self, path: &str) {
        self.lock().files.entry(path.to_string()).or_insert(None);
    }

    /// Hold no tree of the file at `path` any more.
    pub fn release(&self, path: &str) {
        let mut inner = self.lock();
        if let Some(Some(held)) = inner.files.remove(path) {
            inner.bytes -= held.text.len();
        }
    }

    /// Whether the tree of `path` is wanted.
    pub fn wants(&self, path: &str) -> bool {
        self.lock().files.contains_key(path)
    }

    /// Whether a tree of `path` is held now.
    pub fn holds(&self, path: &str) -> bool {
        matches!(self.lock().files.get(path), Some(Some(_)))
    }

    /// Text held, over all files.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Extract `text`, the file at `ctx.path`: incrementally from its held
    /// tree when there is one, and holding the new tree when the file is
    /// wanted. The same extract as [`Extractor::extract`] either way.
    pub fn extract(
        &self,
        extractor: &mut dyn Extractor,
        ctx: &FileContext,
        text: &str,
    ) -> FileExtract {
        let path = ctx.path.as_str();
        let before = {
            let mut inner = self.lock();
            match inner.files.get_mut(path) {
                None => return extractor.extract(ctx, text),
                Some(slot) => {
                    let before = slot.take();
                    if let Some(b) = &before {
                        inner.bytes -= b.text.len();
                    }
                    before
                }
            }
        };
        let old = before.map(|mut b| {
            b.tree.edit(&edit_between(&b.text, text));
            b.tree
        });
        let incremental = old.is_some();
        let Some(mut tree) = extractor.parse(text, old.as_ref()) else {
            return extractor.extract(ctx, text);
        };
        // Where the text does not parse, tree-sitter's error recovery may
        // end differently when it starts from an old tree (the extract of
        // a random splice into a real source differed): such text is
        // parsed afresh, so the extract is the fresh parse's.
        if incremental && tree.root_node().has_error() {
            match extractor.parse(text, None) {
                Some(fresh) => tree = fresh,
                None => return extractor.extract(ctx, text),
            }
        }
        let extract = extractor.extract_tree(ctx, text, &tree);
        self.keep(path, text, tree);
        extract
    }

    /// Parse the file at `path` holding `text` now, if it is wanted and no
    /// tree of it is held.
    pub fn parse_now(&self, extractor: &mut dyn Extractor, path: &str, text: &str) {
        if !matches!(self.lock().files.get(path), Some(None)) {
            return;
        }
        if let Some(tree) = extractor.parse(text, None) {
            self.keep(path, text, tree);
        }
    }

    /// Hold `tree` of `text` for `path`, if `path` is still wanted, making
    /// room by dropping the trees parsed longest ago.
    fn keep(&self, path: &str, text: &str, tree: Tree) {
        if text.len() > MAX_BYTES {
            return;
        }
        let mut inner = self.lock();
        inner.clock += 1;
        let used = inner.clock;
        let Some(slot) = inner.files.get_mut(path) else {
            return;
        };
        let old = slot.replace(Held {
            text: text.to_string(),
            tree,
            used,
        });
        let freed = old.map_or(0, |o| o.text.len());
        inner.bytes = inner.bytes + text.len() - freed;
        while inner.bytes > MAX_BYTES {
            let Some(oldest) = inner
                .files
                .iter()
                .filter_map(|(p, h)| h.as_ref().map(|h| (h.used, p.clone())))
                .min()
                .map(|(_, p)| p)
            else {
                break;
            };
            if let Some(held) = inner.files.get_mut(&oldest).and_then(Option::take) {
                inner.bytes -= held.text.len();
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The one edit that turns `old` into `new`: everything between their
/// common start and their common end (in bytes; tree-sitter's columns are
/// bytes too).
pub fn edit_between(old: &str, new: &str) -> InputEdit {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - start;
    let end = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    InputEdit {
        start_byte: start,
        old_end_byte: a.len() - end,
        new_end_byte: b.len() - end,
        start_position: point_at(a, start),
        old_end_position: point_at(a, a.len() - end),
        new_end_position: point_at(b, b.len() - end),
    }
}

/// Row and byte column of `offset` in `text`.
fn point_at(text: &[u8], offset: usize) -> Point {
    let before = &text[..offset];
    let row = before.iter().filter(|&&c| c == b'\n').count();
    let column = match before.iter().rposition(|&c| c == b'\n') {
        Some(nl) => offset - nl - 1,
        None => offset,
    };
    Point { row, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// These tests edit Rust sources.
    fn rust_extractor() -> Box<dyn Extractor> {
        crate::index::languages::of_file("a.rs")
            .expect("a language claims .rs")
            .extractor()
    }

    fn ctx(path: &str) -> FileContext {
        FileContext {
            path: path.into(),
            crate_name: "graphctx".into(),
            crate_id: "graphctx".into(),
            module_path: Vec::new(),
            is_test_file: false,
        }
    }

    /// Real sources, edited the ways an editor does: the extract parsed
    /// from the held tree is the fresh parse's, edit after edit.
    #[test]
    fn incremental_extracts_equal_fresh_ones_through_a_run_of_edits() {
        let files = [
            "src/index/pipeline/mod.rs",
            "src/index/rust/extract/mod.rs",
            "tests/fixtures/shapes/src/geometry/point.rs",
        ];
        let mut x = rust_extractor();
        let mut fresh = rust_extractor();
        // Fixed sequences of pseudo-random splices (the sources they splice
        // change with the project, so several sequences each run).
        for run in 0..6u64 {
            splices_extract_as_fresh(&files, run, &mut *x, &mut *fresh);
        }
    }

    /// Twelve splices into each of `files`, from the sequence of `run`: the
    /// held tree's extract is the fresh parse's after each.
    fn splices_extract_as_fresh(
        files: &[&str],
        run: u64,
        x: &mut dyn Extractor,
        fresh: &mut dyn Extractor,
    ) {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let held = HeldTrees::default();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15 ^ run.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        let inserts = [
            "// a comment\n",
            "pub fn added(x: u32) -> u32 { x + 1 }\n",
            "}\n",
            "{",
            "struct S { a: Vec<String> }\n",
            "\"",
            "é",
            "",
        ];
        for file in files {
            let Ok(mut text) = std::fs::read_to_string(root.join(file)) else {
                continue;
            };
            let c = ctx(file);
            held.want(file);
            held.parse_now(x, file, &text);
            assert!(held.holds(file));
            for _ in 0..12 {
                let mut at = next(text.len());
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let mut cut = (at + next(40)).min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                let insert = inserts[next(inserts.len())];
                text.replace_range(at..cut, insert);
                let incremental = held.extract(x, &c, &text);
                assert_eq!(
                    incremental,
                    fresh.extract(&c, &text),
                    "{file} at {at}, run {run}"
                );
            }
        }
        assert!(held.bytes() > 0);
    }

    #[test]
    fn only_wanted_files_are_held_and_within_the_byte_limit() {
        let mut x = rust_extractor();
        let x = &mut *x;
        let held = HeldTrees::default();
        let small = "fn a() {}\n".to_string();
        held.extract(x, &ctx("a.rs"), &small);
        assert!(!held.holds("a.rs"));
        held.want("a.rs");
        held.extract(x, &ctx("a.rs"), &small);
        assert!(held.holds("a.rs"));
        assert_eq!(held.bytes(), small.len());
        // Two large files do not fit together: the older goes.
        let large = "fn b() {}\n".repeat(MAX_BYTES / 10 / 2 + 1);
        held.want("b.rs");
        held.want("c.rs");
        held.extract(x, &ctx("b.rs"), &large);
        held.extract(x, &ctx("c.rs"), &large);
        assert!(held.holds("c.rs") && !held.holds("b.rs"));
        assert!(held.bytes() <= MAX_BYTES);
        assert!(held.wants("b.rs"));
        held.release("c.rs");
        assert!(!held.wants("c.rs"));
        assert_eq!(held.bytes(), small.len() * usize::from(held.holds("a.rs")));
    }

    #[test]
    fn the_edit_between_two_texts_spans_what_differs() {
        let e = edit_between("ab\ncd\nef", "ab\ncXYd\nef");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 4, 6));
        assert_eq!(e.start_position, Point { row: 1, column: 1 });
        assert_eq!(e.new_end_position, Point { row: 1, column: 3 });
        let e = edit_between("aaa", "aa");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (2, 3, 2));
        let e = edit_between("same", "same");
        assert_eq!((e.start_byte, e.old_end_byte, e.new_end_byte), (4, 4, 4));
    }
}
