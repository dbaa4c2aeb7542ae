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
