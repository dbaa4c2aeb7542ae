//! `graphctx export --jsonl`, the contract for scripts: its shapes, its
//! stability (a golden file), and that it holds exactly what the index
//! holds.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::cli::{graphctx, shapes_copy, stderr, stdout};
use crate::common::assert_golden;

/// The keys of each record shape, in order, as docs/commands.md gives them.
const SHAPES: &[(&str, &[&str])] = &[
    (
        "entity",
        &[
            "type",
            "key",
            "kind",
            "name",
            "file",
            "start_line",
            "end_line",
            "owner",
            "trait",
            "parent",
            "is_test",
        ],
    ),
    ("edge", &["type", "src", "rel", "dst", "origin"]),
    ("unresolved", &["type", "src", "refs"]),
];

fn rows_of(root: &std::path::Path, script: &str) -> BTreeSet<String> {
    let out = graphctx(root, &["query", script, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.to_string())
        .collect()
}

#[test]
fn the_export_holds_what_the_index_holds_in_its_documented_shapes() {
    let repo = shapes_copy();
    let root = repo.path();
    let out = graphctx(root, &["index", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary: Value = serde_json::from_str(&stdout(&out)).unwrap();

    let out = graphctx(root, &["export", "--jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert_golden("shapes_export.jsonl", &text);
    let again = graphctx(root, &["export", "--jsonl", "--graph", "code"]);
    assert_eq!(stdout(&again), text, "a second export differs");

    let (mut entities, mut edges, mut unresolved) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let mut refs = 0;
    for line in text.lines() {
        let record: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
        let kind = record["type"].as_str().unwrap();
        let (_, keys) = SHAPES
            .iter()
            .find(|(t, _)| *t == kind)
            .unwrap_or_else(|| panic!("unknown record type in {line}"));
        let got: Vec<&str> = record.keys().map(String::as_str).collect();
        assert_eq!(&got, keys, "{line}");
        let row = |fields: &[&str]| -> String {
            Value::Array(fields.iter().map(|f| record[*f].clone()).collect()).to_string()
        };
        match kind {
            "entity" => {
                let fresh = entities.insert(row(&[
                    "key",
                    "kind",
                    "name",
                    "file",
                    "start_line",
                    "end_line",
                    "owner",
                    "trait",
                    "parent",
                    "is_test",
                ]));
                assert!(fresh, "entity twice: {line}");
            }
            "edge" => assert!(
                edges.insert(row(&["src", "rel", "dst", "origin"])),
                "{line}"
            ),
            _ => {
                refs += record["refs"].as_array().unwrap().len();
                assert!(unresolved.insert(row(&["src", "refs"])), "{line}");
            }
        }
    }
    assert_eq!(entities.len() as i64, summary["entities"].as_i64().unwrap());
    assert_eq!(edges.len() as i64, summary["edges"].as_i64().unwrap());
    assert_eq!(refs as i64, summary["unresolved"].as_i64().unwrap());
    let out = graphctx(root, &["status", "--json"]);
    let status: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(status["languages"]["rust"]["entities"], entities.len());
    assert_eq!(status["languages"]["rust"]["edges"], edges.len());

    // The same rows as the stored relations, read with `graphctx query`.
    assert_eq!(
        entities,
        rows_of(
            root,
            "?[id, kind, name, file, s, e, owner, trait, parent, t] := \
             *node{graph: 'code', id, kind, name}, *code_entity{graph: 'code', id, file, \
             start_line: s, end_line: e, owner, trait_name: trait, parent, is_test: t}"
        )
    );
    assert_eq!(
        edges,
        rows_of(
            root,
            "?[src, rel, dst, origin] := *edge{graph: 'code', src, rel, dst, origin}"
        )
    );
    assert_eq!(
        unresolved,
        rows_of(
            root,
            "?[src, refs] := *code_unresolved{graph: 'code', src, refs}"
        )
    );
}

#[test]
fn export_wants_its_format_and_an_index() {
    let repo = shapes_copy();
    let out = graphctx(repo.path(), &["export", "--jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no index found"), "{}", stderr(&out));
    let out = graphctx(repo.path(), &["export"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--jsonl"), "{}", stderr(&out));
}
