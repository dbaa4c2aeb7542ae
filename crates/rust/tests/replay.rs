//! Replaying a file's stored links (`graphctx_index::replay`): which
//! edits of a Rust file move its lines and nothing else.

use graphctx_base::model::{FileContext, FileExtract};
use graphctx_index::lang::Language;
use graphctx_index::replay::lines_moved;

/// A Rust file's extract.
fn extract(text: &str) -> FileExtract {
    let ctx = FileContext {
        path: "src/lib.rs".into(),
        package: "demo".into(),
        unit: "demo".into(),
        module_path: Vec::new(),
        is_test_file: false,
        path_aliases: Vec::new(),
    };
    graphctx_rust::Rust.extractor().extract(&ctx, text)
}

const BEFORE: &str = "use std::fmt;\nfn a() { b(); c(); }\nfn b() {}\nfn c() {}\n";

#[test]
fn an_edit_that_moves_lines_maps_each_reference_line() {
    let before = extract(BEFORE);
    // A comment above, a blank line between, a doc comment, and a
    // call made twice: lines only.
    let now = extract(
        "// moved\nuse std::fmt;\n\n/// Now documented.\nfn a() { b(); b(); c(); }\nfn b() {}\nfn c() {}\n",
    );
    let map = lines_moved(&before, &now).expect("lines alone moved");
    assert_eq!(map.get(1), Some(2), "the `use`");
    assert_eq!(map.get(2), Some(5), "the calls in `a`");
}

#[test]
fn an_edit_that_changes_what_resolution_reads_is_not_lines_alone() {
    let before = extract(BEFORE);
    for now in [
        // A call to something `a` did not call.
        "use std::fmt;\nfn a() { b(); c(); d(); }\nfn b() {}\nfn c() {}\n",
        // A call gone.
        "use std::fmt;\nfn a() { b(); }\nfn b() {}\nfn c() {}\n",
        // Another import.
        "use std::io;\nfn a() { b(); c(); }\nfn b() {}\nfn c() {}\n",
    ] {
        assert_eq!(lines_moved(&before, &extract(now)), None, "{now}");
    }
    // The same entities and references in another order.
    let swapped = extract("use std::fmt;\nfn b() {}\nfn a() { b(); c(); }\nfn c() {}\n");
    assert_eq!(lines_moved(&before, &swapped), None, "`a` below `b`");
    // The references of one line now on two: the first line of a
    // group of references could be another one's.
    let split = extract("use std::fmt;\nfn a() { b();\n c(); }\nfn b() {}\nfn c() {}\n");
    assert_eq!(
        lines_moved(&before, &split),
        None,
        "one old line, two new ones"
    );
}
