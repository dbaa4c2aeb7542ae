//! Held syntax trees (`graphctx_index::held_trees`) over Rust sources: a
//! save parsed from the last tree extracts as a fresh parse does.

use graphctx_base::model::FileContext;
use graphctx_index::held_trees::*;
use graphctx_index::lang::{Extractor, Language};
use tree_sitter::Point;

fn rust_extractor() -> Box<dyn Extractor> {
    graphctx_rust::Rust.extractor()
}

fn ctx(path: &str) -> FileContext {
    FileContext {
        path: path.into(),
        package: "graphctx".into(),
        unit: "graphctx".into(),
        module_path: Vec::new(),
        is_test_file: false,
        path_aliases: Vec::new(),
    }
}

/// Real sources, edited the ways an editor does: the extract parsed
/// from the held tree is the fresh parse's, edit after edit.
#[test]
fn incremental_extracts_equal_fresh_ones_through_a_run_of_edits() {
    let files = [
        "crates/index/src/pipeline/mod.rs",
        "crates/rust/src/extract/mod.rs",
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
    // The workspace's root, two levels above this crate.
    let root = &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
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
