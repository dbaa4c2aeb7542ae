//! Bad input never aborts an index run: each file is indexed, indexed in
//! part, or skipped with a reason in the summary.

use crate::common;

use std::path::Path;

use common::{index, index_fresh};
use graphctx::graph::{self, EntityFilter};
use graphctx::index::{index_repository, IndexOptions};
use graphctx::store::Store;

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn reason_of<'a>(notes: &'a [graphctx::index::pipeline::FileNote], path: &str) -> Option<&'a str> {
    notes
        .iter()
        .find(|n| n.path == path)
        .map(|n| n.reason.as_str())
}

#[test]
fn syntax_errors_keep_what_parsed() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "src/lib.rs",
        b"pub fn good() -> u32 { 1 }\nfn broken( { let x = ;\npub struct AlsoGood { pub a: u8 }\n",
    );
    let (store, s) = index_fresh(dir.path());
    assert_eq!(s.files_partial, 1);
    assert_eq!(s.files_skipped, 0);
    assert!(reason_of(&s.partial, "src/lib.rs")
        .unwrap()
        .contains("syntax error"));
    let names: Vec<String> = graph::list_entities(&store, "code", &EntityFilter::default())
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert!(names.contains(&"good".to_string()), "{names:?}");
}

#[test]
fn invalid_utf8_is_indexed_with_replacement() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = b"/// caf".to_vec();
    bytes.extend([0xE9, 0xFF]);
    bytes.extend(b"\npub fn latin1() {}\n");
    write(dir.path(), "src/lib.rs", &bytes);
    let (store, s) = index_fresh(dir.path());
    assert_eq!(s.files_partial, 1);
    assert!(reason_of(&s.partial, "src/lib.rs")
        .unwrap()
        .contains("UTF-8"));
    let fns = graph::list_entities(
        &store,
        "code",
        &EntityFilter {
            name: Some("latin1".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(fns.len(), 1);
}

#[test]
fn binary_and_oversized_files_are_skipped_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/lib.rs", b"pub fn ok() {}\n");
    write(dir.path(), "src/blob.rs", b"\x00\x01\x02ELF\x00garbage");
    write(dir.path(), "src/huge.rs", &vec![b'/'; 5000]);
    let store = Store::memory().unwrap();
    let opts = IndexOptions {
        max_file_bytes: 4096,
        ..IndexOptions::default()
    };
    let s = index_repository(&store, dir.path(), &opts).unwrap();
    assert_eq!(s.files_skipped, 2);
    assert!(reason_of(&s.skipped, "src/blob.rs")
        .unwrap()
        .contains("binary"));
    assert!(reason_of(&s.skipped, "src/huge.rs")
        .unwrap()
        .contains("limit"));
    assert_eq!(s.files_parsed, 1);
}

#[cfg(unix)]
#[test]
fn symlink_loops_and_dangling_links_are_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/lib.rs", b"pub fn ok() {}\n");
    std::os::unix::fs::symlink(dir.path().join("src"), dir.path().join("src/loop")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("nowhere.rs"),
        dir.path().join("src/dangling.rs"),
    )
    .unwrap();
    let (_, s) = index_fresh(dir.path());
    assert_eq!(s.files_parsed, 1);
    let reasons: Vec<&str> = s.skipped.iter().map(|n| n.reason.as_str()).collect();
    assert!(
        reasons.iter().any(|r| r.contains("symlink loop")),
        "{reasons:?}"
    );
    assert!(s.files_skipped >= 1);
}

#[test]
fn a_file_that_turns_bad_loses_its_entities_and_comes_back_when_fixed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/lib.rs", b"pub fn a() {}\n");
    write(dir.path(), "src/b.rs", b"pub fn b() { crate::a() }\n");
    let store = Store::memory().unwrap();
    let s = index(&store, dir.path());
    assert_eq!(s.entities, 4);
    write(dir.path(), "src/b.rs", b"\x00binary now");
    let s = index(&store, dir.path());
    assert_eq!(s.files_skipped, 1);
    assert_eq!(s.entities, 2);
    write(dir.path(), "src/b.rs", b"pub fn b() { crate::a() }\n");
    let s = index(&store, dir.path());
    assert_eq!(s.files_skipped, 0);
    assert_eq!(s.entities, 4);
    assert_eq!(s.edges, index_fresh(dir.path()).1.edges);
}

#[test]
fn an_empty_directory_indexes_to_an_empty_graph() {
    let dir = tempfile::tempdir().unwrap();
    let (_, s) = index_fresh(dir.path());
    assert_eq!((s.files_seen, s.entities, s.edges), (0, 0, 0));
}

#[test]
fn a_missing_root_is_an_error() {
    let store = Store::memory().unwrap();
    let err = index_repository(
        &store,
        Path::new("/definitely/not/here"),
        &IndexOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("not a directory"));
}
