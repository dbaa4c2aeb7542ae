//! JSON Canvas conversations (seed 002): the walk on the seed's example,
//! roles, cycles, groups and links, answers written back, preservation of
//! what graphctx does not understand, atomic writes, the CLI, and a canvas
//! imported as a graph.

use crate::common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use common::{assert_golden, copy_dir, fixture, graphctx, stderr, stdout};
use graphctx::canvas::model::write_atomic;
use graphctx::canvas::walk::ExcludeReason;
use graphctx::canvas::{
    self, add_response, import_canvas, Canvas, CanvasError, ImportOptions, Placement, Role,
};
use graphctx::store::{Batch, GraphChange, Store};

const SEED_CANVAS: &str = "conversations/ml.canvas";

fn seed_vault() -> PathBuf {
    fixture("canvas/seed")
}

/// A copy of the seed vault to write into.
fn seed_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&seed_vault(), dir.path());
    dir
}

fn seed_canvas() -> Canvas {
    Canvas::load(&seed_vault().join(SEED_CANVAS)).unwrap()
}

/// A text node as JSON.
fn text(id: &str, body: &str, x: i64, y: i64) -> Value {
    json!({"id": id, "type": "text", "text": body, "x": x, "y": y, "width": 400, "height": 120})
}

/// A thread edge (bottom → top).
fn down(id: &str, from: &str, to: &str) -> Value {
    json!({"id": id, "fromNode": from, "fromSide": "bottom", "toNode": to, "toSide": "top"})
}

/// A side edge (right → left).
fn side(id: &str, from: &str, to: &str) -> Value {
    json!({"id": id, "fromNode": from, "fromSide": "right", "toNode": to, "toSide": "left"})
}

fn canvas_of(nodes: Vec<Value>, edges: Vec<Value>) -> Canvas {
    Canvas::parse(&json!({"nodes": nodes, "edges": edges}).to_string()).unwrap()
}

fn ids(walk: &canvas::Walk) -> Vec<&str> {
    walk.included.iter().map(|i| i.node.as_str()).collect()
}

/// Every node of the canvas is in exactly one of: included, a member of
/// an included group, excluded.
fn assert_partition(canvas: &Canvas, walk: &canvas::Walk) {
    let mut seen = Vec::new();
    for i in &walk.included {
        seen.push(i.node.clone());
        seen.extend(i.members.iter().cloned());
    }
    seen.extend(walk.excluded.iter().map(|e| e.node.clone()));
    let unique: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a node is listed twice: {seen:?}");
    let all: BTreeSet<String> = canvas.nodes().iter().map(|n| n.id().to_string()).collect();
    assert_eq!(unique.into_iter().cloned().collect::<BTreeSet<_>>(), all);
}

// ---------------------------------------------------------------- the walk

#[test]
fn seed_example_walk_is_the_golden_one() {
    let canvas = seed_canvas();
    let walk = canvas::walk(&canvas, "h-deep-learning", Some(&seed_vault())).unwrap();
    assert_golden(
        "canvas/seed_walk_h.json",
        &format!("{}\n", serde_json::to_string_pretty(&walk).unwrap()),
    );

    // The seed's reading of its own example, independent of the golden:
    // System → (ML basics) → What is ML? → (Wikipedia) → ML is... →
    // (Deep learning guide) → What about deep learning?
    assert_eq!(
        ids(&walk),
        [
            "a-system",
            "c-ml-basics",
            "b-what-is-ml",
            "d-wikipedia",
            "e-ml-is",
            "f-dl-guide",
            "h-deep-learning"
        ]
    );
    let roles: Vec<Role> = walk.messages.iter().map(|m| m.role).collect();
    use Role::*;
    assert_eq!(
        roles,
        [System, User, User, User, Assistant, User, User],
        "roles from frontmatter (text nodes and vault files), user by default"
    );
    for (m, i) in walk.messages.iter().zip(&walk.included) {
        let wrapped = m.content.starts_with("<additional-document>\n")
            && m.content.ends_with("\n</additional-document>");
        assert_eq!(wrapped, i.placement == Placement::Context, "{}", i.node);
        assert!(
            !m.content.contains("role:"),
            "frontmatter stripped: {}",
            m.content
        );
    }
    assert_eq!(walk.messages[0].content, "You are helpful.");
    assert_eq!(
        walk.messages.last().unwrap().content,
        "What about deep learning?"
    );
    let excluded: Vec<(&str, ExcludeReason)> = walk
        .excluded
        .iter()
        .map(|e| (e.node.as_str(), e.reason))
        .collect();
    assert_eq!(
        excluded,
        [
            ("g-supervised", ExcludeReason::SiblingBranch),
            ("i-supervised-answer", ExcludeReason::SiblingBranch)
        ]
    );
    assert!(walk.warnings.is_empty(), "{:?}", walk.warnings);
    assert_eq!(
        walk.messages_json()["messages"][0],
        json!({"role": "system", "content": "You are helpful."})
    );
}

#[test]
fn walking_the_other_branch_excludes_the_first() {
    let canvas = seed_canvas();
    let walk = canvas::walk(&canvas, "i-supervised-answer", Some(&seed_vault())).unwrap();
    assert_eq!(
        ids(&walk),
        [
            "a-system",
            "c-ml-basics",
            "b-what-is-ml",
            "d-wikipedia",
            "e-ml-is",
            "f-dl-guide",
            "g-supervised",
            "i-supervised-answer"
        ]
    );
    assert_eq!(walk.messages.last().unwrap().role, Role::Assistant);
    assert_eq!(
        walk.excluded,
        [canvas::Excluded {
            node: "h-deep-learning".into(),
            reason: ExcludeReason::SiblingBranch
        }]
    );
    // From the middle of the thread, what hangs below is below the target.
    let walk = canvas::walk(&canvas, "e-ml-is", Some(&seed_vault())).unwrap();
    assert_eq!(ids(&walk).last(), Some(&"e-ml-is"));
    assert!(walk
        .excluded
        .iter()
        .all(|e| e.reason == ExcludeReason::BelowTarget));
    assert_eq!(walk.excluded.len(), 3);
}

#[test]
fn every_node_is_either_included_or_excluded() {
    let canvas = seed_canvas();
    for node in canvas.nodes() {
        let walk = canvas::walk(&canvas, node.id(), Some(&seed_vault())).unwrap();
        assert_eq!(walk.included.last().unwrap().node, node.id(), "target last");
        assert_eq!(walk.included.len(), walk.messages.len());
        assert_partition(&canvas, &walk);
    }
}

#[test]
fn unknown_target_is_an_error_naming_it() {
    let err = canvas::walk(&seed_canvas(), "nope", None).unwrap_err();
    assert!(matches!(err, CanvasError::NoSuchNode { .. }));
    assert!(err.to_string().contains("'nope'"), "{err}");
}

#[test]
fn cycles_in_the_parent_chain_end_with_a_warning() {
    // a → b → c → a, and c asks.
    let canvas = canvas_of(
        vec![
            text("a", "first", 0, 0),
            text("b", "second", 0, 200),
            text("c", "third", 0, 400),
            text("x", "elsewhere", 900, 0),
        ],
        vec![
            down("ab", "a", "b"),
            down("bc", "b", "c"),
            down("ca", "c", "a"),
            down("loop", "b", "b"),
        ],
    );
    let walk = canvas::walk(&canvas, "c", None).unwrap();
    assert_eq!(ids(&walk), ["a", "b", "c"]);
    assert_eq!(walk.warnings.len(), 1, "{:?}", walk.warnings);
    assert!(walk.warnings[0].contains("cycle") && walk.warnings[0].contains("'ca'"));
    assert_eq!(
        walk.excluded,
        [canvas::Excluded {
            node: "x".into(),
            reason: ExcludeReason::NotInThread
        }]
    );
    // Each node of the cycle can be the target; the walk always ends.
    for t in ["a", "b"] {
        let walk = canvas::walk(&canvas, t, None).unwrap();
        assert_eq!(walk.included.len(), 3);
        assert_eq!(ids(&walk).last(), Some(&t));
    }
}

#[test]
fn two_parents_bring_both_threads_once() {
    // r → p1 → t, r → p2 → t (a merge), p2 has context d.
    let canvas = canvas_of(
        vec![
            text("r", "root", 0, 0),
            text("p1", "left", -300, 200),
            text("p2", "right", 300, 200),
            text("t", "merge", 0, 400),
            text("d", "doc", 800, 200),
        ],
        vec![
            down("e1", "r", "p1"),
            down("e2", "r", "p2"),
            down("e3", "p1", "t"),
            down("e4", "p2", "t"),
            side("e5", "p2", "d"),
        ],
    );
    let walk = canvas::walk(&canvas, "t", None).unwrap();
    assert_eq!(ids(&walk), ["r", "p1", "p2", "d", "t"]);
    assert_eq!(walk.included[3].attached_to.as_deref(), Some("p2"));
}

#[test]
fn system_messages_come_first_and_the_target_last() {
    // A system prompt hanging on the side of a later node still leads;
    // context of the target comes right before it.
    let canvas = canvas_of(
        vec![
            text("q", "question", 0, 0),
            text("sys", "---\nrole: system\n---\nBe brief.", 600, 0),
            text("t", "follow-up", 0, 200),
            text("note", "a note", 600, 200),
        ],
        vec![
            side("s1", "q", "sys"),
            down("d1", "q", "t"),
            side("s2", "t", "note"),
        ],
    );
    let walk = canvas::walk(&canvas, "t", None).unwrap();
    assert_eq!(ids(&walk), ["sys", "q", "note", "t"]);
    assert_eq!(
        walk.messages[0].content,
        "<additional-document>\nBe brief.\n</additional-document>"
    );
    assert_eq!(walk.messages[0].role, Role::System);
    assert_eq!(walk.messages[3].content, "follow-up");
}

#[test]
fn invalid_roles_become_user_with_a_warning() {
    let canvas = canvas_of(
        vec![
            text("a", "---\nrole: wizard\n---\nCast a spell.", 0, 0),
            text("b", "---\nrole: [unclosed\n---\nStill here.", 0, 200),
        ],
        vec![down("ab", "a", "b")],
    );
    let walk = canvas::walk(&canvas, "b", None).unwrap();
    assert_eq!(
        walk.messages,
        [
            canvas::Message {
                role: Role::User,
                content: "Cast a spell.".into()
            },
            canvas::Message {
                role: Role::User,
                content: "Still here.".into()
            }
        ]
    );
    assert_eq!(walk.warnings.len(), 2, "{:?}", walk.warnings);
    assert!(walk.warnings[0].contains("node 'a'") && walk.warnings[0].contains("wizard"));
    assert!(walk.warnings[1].contains("node 'b'") && walk.warnings[1].contains("YAML"));
}

#[test]
fn file_nodes_read_the_vault_with_frontmatter_and_subpaths() {
    let vault = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(vault.path().join("notes")).unwrap();
    std::fs::write(
        vault.path().join("notes/prompt.md"),
        "---\nrole: system\ntags: context\n---\nYou answer in German.\n",
    )
    .unwrap();
    std::fs::write(
        vault.path().join("notes/guide.md"),
        "# Guide\nintro\n## Setup\nrun it\n## Usage\nuse it\n",
    )
    .unwrap();
    std::fs::write(vault.path().join("notes/data.csv"), "a,b\n1,2\n").unwrap();
    std::fs::write(vault.path().join("notes/pic.png"), b"\x89PNG\0\0").unwrap();
    let file = |id: &str, path: &str, sub: Option<&str>, y: i64| {
        let mut v = json!({"id": id, "type": "file", "file": path,
                           "x": 0, "y": y, "width": 400, "height": 100});
        if let Some(s) = sub {
            v["subpath"] = s.into();
        }
        v
    };
    let canvas = canvas_of(
        vec![
            file("p", "notes/prompt.md", None, 0),
            file("g", "notes/guide.md", Some("#Setup"), 200),
            file("csv", "notes/data.csv", None, 400),
            file("png", "notes/pic.png", None, 600),
            file("gone", "notes/missing.md", None, 800),
            file("out", "../secret.md", None, 1000),
            text("t", "go", 0, 1200),
        ],
        vec![
            down("1", "p", "g"),
            down("2", "g", "csv"),
            down("3", "csv", "png"),
            down("4", "png", "gone"),
            down("5", "gone", "out"),
            down("6", "out", "t"),
        ],
    );
    let walk = canvas::walk(&canvas, "t", Some(vault.path())).unwrap();
    assert_eq!(ids(&walk), ["p", "g", "csv", "t"]);
    assert_eq!(walk.messages[0].role, Role::System);
    assert_eq!(walk.messages[0].content, "You answer in German.");
    assert_eq!(walk.included[0].tags, ["context"]);
    assert_eq!(walk.messages[1].content, "## Setup\nrun it");
    assert_eq!(walk.messages[2].content, "a,b\n1,2");
    let unreadable: Vec<&str> = walk
        .excluded
        .iter()
        .filter(|e| e.reason == ExcludeReason::Unreadable)
        .map(|e| e.node.as_str())
        .collect();
    assert_eq!(unreadable, ["png", "gone", "out"]);
    let warnings = walk.warnings.join("\n");
    assert!(warnings.contains("binary"), "{warnings}");
    assert!(warnings.contains("leaves the vault"), "{warnings}");
    assert!(warnings.contains("missing.md"), "{warnings}");

    // Without a vault, file nodes are left out with a warning.
    let walk = canvas::walk(&canvas, "t", None).unwrap();
    assert_eq!(ids(&walk), ["t"]);
    assert_eq!(walk.warnings.len(), 6);
}

#[test]
fn groups_and_links_as_context() {
    // A group with a label and two notes inside, hung on the side of the
    // question; a link node in the thread.
    let canvas = canvas_of(
        vec![
            json!({"id": "grp", "type": "group", "label": "Sources",
                   "x": 500, "y": -50, "width": 500, "height": 500}),
            text("second", "second note", 550, 250),
            text("first", "first note", 550, 0),
            json!({"id": "url", "type": "link", "url": "https://example.org/paper",
                   "x": 0, "y": -300, "width": 400, "height": 100}),
            text("q", "Summarise.", 0, 0),
            json!({"id": "mystery", "type": "widget", "x": 0, "y": 900,
                   "width": 10, "height": 10}),
        ],
        vec![down("l", "url", "q"), side("s", "q", "grp")],
    );
    let walk = canvas::walk(&canvas, "q", None).unwrap();
    assert_eq!(ids(&walk), ["url", "grp", "q"]);
    assert_eq!(walk.messages[0].content, "https://example.org/paper");
    assert_eq!(
        walk.messages[1].content,
        "<additional-document>\nSources\n\nfirst note\n\nsecond note\n</additional-document>"
    );
    assert_eq!(walk.included[1].members, ["first", "second"]);
    assert_eq!(walk.included[1].node_type, "group");
    assert_partition(&canvas, &walk);
    assert_eq!(
        walk.excluded,
        [canvas::Excluded {
            node: "mystery".into(),
            reason: ExcludeReason::NotInThread
        }]
    );
}

#[test]
fn missing_sides_are_read_from_the_drawing() {
    // No sides given: b sits below a (thread), d sits beside a (context).
    let canvas = canvas_of(
        vec![
            text("a", "top", 0, 0),
            text("b", "below", 0, 300),
            text("d", "beside", 600, 20),
        ],
        vec![
            json!({"id": "ab", "fromNode": "a", "toNode": "b"}),
            json!({"id": "da", "fromNode": "d", "toNode": "a"}),
            json!({"id": "dangling", "fromNode": "a", "toNode": "ghost"}),
        ],
    );
    let walk = canvas::walk(&canvas, "b", None).unwrap();
    assert_eq!(ids(&walk), ["a", "d", "b"]);
    assert_eq!(walk.included[1].placement, Placement::Context);
    assert_eq!(walk.warnings.len(), 1);
    assert!(walk.warnings[0].contains("'dangling'"));
}

// ------------------------------------------------------------- preservation

#[test]
fn a_round_trip_keeps_the_file() {
    // The fixture is in Obsidian's layout: byte for byte.
    let path = seed_vault().join(SEED_CANVAS);
    let original = std::fs::read_to_string(&path).unwrap();
    let canvas = Canvas::parse(&original).unwrap();
    assert_eq!(canvas.to_json_string(), original);

    // Any other layout: the same JSON, keys and order included.
    let odd = r##"{
  "edges": [
    {"toNode": "b", "label": "then", "fromNode": "a", "id": "e", "x-plugin": [1, 2.5, null]}
  ],
  "title": "Ünïcode ✓",
  "nodes": [
    {"type": "text", "id": "a", "text": "Hi \"there\"\n\ttab", "x": -10.5, "y": 0, "width": 250, "height": 60, "color": "#ff0000", "extra": {"nested": [true]}},
    {"id": "b", "type": "shape", "x": 1e2, "y": 0, "width": 1, "height": 1, "sides": 6},
    {"height": 80, "width": 300, "y": 200, "x": 0, "type": "group", "id": "g", "background": "img.png", "backgroundStyle": "cover"}
  ],
  "version": 2
}"##;
    let canvas = Canvas::parse(odd).unwrap();
    let written = canvas.to_json_string();
    let a: Value = serde_json::from_str(odd).unwrap();
    let b: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap(),
        "key order kept"
    );
    // And writing what was written changes nothing.
    assert_eq!(Canvas::parse(&written).unwrap().to_json_string(), written);
}

#[test]
fn bad_canvases_are_clear_errors() {
    for (text, needle) in [
        ("{nope", "not valid JSON"),
        ("[]", "top level must be an object"),
        (r#"{"nodes": {}}"#, "'nodes' must be a list"),
        (
            r#"{"nodes": [{"id": "a", "type": "text", "x": 0, "y": 0, "width": 1, "height": 1}]}"#,
            "missing 'text'",
        ),
        (
            r#"{"nodes": [{"id": "a", "type": "link", "url": "u", "x": "0", "y": 0, "width": 1, "height": 1}]}"#,
            "'x' must be a number",
        ),
        (
            r#"{"nodes": [{"id": "a", "type": "group", "x": 0, "y": 0, "width": 1, "height": 1},
                          {"id": "a", "type": "group", "x": 0, "y": 0, "width": 1, "height": 1}]}"#,
            "two nodes have the id 'a'",
        ),
        (
            r#"{"edges": [{"id": "e", "fromNode": "a"}]}"#,
            "missing 'toNode'",
        ),
    ] {
        let err = Canvas::parse(text).unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
    assert_eq!(Canvas::parse("").unwrap().nodes().len(), 0);
}

// ---------------------------------------------------------------- respond

#[test]
fn respond_adds_an_assistant_node_below_the_source() {
    let mut canvas = seed_canvas();
    let before = canvas.to_json_string();
    let added = add_response(
        &mut canvas,
        "h-deep-learning",
        "Deep learning uses neural networks with many layers.\n",
        "2025-01-01T00:00:00Z",
    )
    .unwrap();
    let after = canvas.to_json_string();
    assert_golden(
        "canvas/seed_respond_h.canvas",
        &after
            .replace(&added.node, "NEW-NODE")
            .replace(&added.edge, "NEW-EDGE"),
    );
    assert!(
        after.starts_with(&before[..before.find("\n\t],\n\t\"edges\"").unwrap()]),
        "the nodes before are untouched"
    );
    assert_eq!(added.node.len(), 16);

    let node = canvas.node(&added.node).unwrap();
    let source = canvas.node("h-deep-learning").unwrap().rect();
    assert_eq!(node.color(), Some("3"));
    assert_eq!(node.rect().x, source.x);
    assert!(node.rect().y > source.bottom());
    let edge = canvas.edges().last().unwrap();
    assert_eq!(
        (edge.from_node(), edge.to_node()),
        ("h-deep-learning", added.node.as_str())
    );
    assert_eq!(
        (edge.from_side(), edge.to_side()),
        (Some(canvas::Side::Bottom), Some(canvas::Side::Top))
    );

    // The answer is the next step of the thread, an assistant message.
    let walk = canvas::walk(&canvas, &added.node, Some(&seed_vault())).unwrap();
    let last = walk.messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(
        last.content,
        "Deep learning uses neural networks with many layers."
    );
    assert_eq!(
        walk.messages[walk.messages.len() - 2].content,
        "What about deep learning?"
    );
}

#[test]
fn answers_never_overlap_other_nodes() {
    let mut canvas = seed_canvas();
    let long = "word ".repeat(400);
    for (source, answer) in [
        ("h-deep-learning", "one"),
        ("h-deep-learning", "two"),
        ("g-supervised", long.as_str()),
        ("e-ml-is", "three"),
        ("a-system", "four"),
    ] {
        let added = add_response(&mut canvas, source, answer, "2025-01-01T00:00:00Z").unwrap();
        let new = canvas.node(&added.node).unwrap().rect();
        assert!(new.y >= canvas.node(source).unwrap().rect().bottom());
        for other in canvas.nodes() {
            if other.id() != added.node && !other.is_group() {
                assert!(
                    !new.overlaps(&other.rect(), 0.0),
                    "answer to {source} overlaps {}",
                    other.id()
                );
            }
        }
    }
    assert!(matches!(
        add_response(&mut canvas, "a-system", " \n ", "t"),
        Err(CanvasError::EmptyAnswer)
    ));
    assert!(matches!(
        add_response(&mut canvas, "nope", "x", "t"),
        Err(CanvasError::NoSuchNode { .. })
    ));
}

// ------------------------------------------------------------ atomic writes

#[test]
fn a_failed_write_leaves_the_original_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talk.canvas");
    std::fs::write(&path, "ORIGINAL").unwrap();
    let listing = |d: &Path| -> BTreeSet<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let mut seen_during = BTreeSet::new();
    let err = write_atomic(&path, |f| {
        f.write_all(b"{\"nodes\":[")?; // half a canvas, then the disk "fails"
        seen_during = listing(dir.path());
        Err(std::io::Error::other("disk full"))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "disk full");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "ORIGINAL");
    assert_eq!(listing(dir.path()), ["talk.canvas".to_string()].into());
    // The temporary file was written next to the target (same file
    // system, so the rename is atomic).
    let temps: Vec<&String> = seen_during.iter().filter(|n| *n != "talk.canvas").collect();
    assert_eq!(temps.len(), 1, "{seen_during:?}");
    assert!(temps[0].starts_with(".talk.canvas.") && temps[0].ends_with(".tmp"));

    // A rename that fails (the target is a directory) leaves no temp file.
    let target = dir.path().join("sub.canvas");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), "x").unwrap();
    assert!(write_atomic(&target, |f| f.write_all(b"{}")).is_err());
    assert!(target.join("keep").is_file());
    assert_eq!(listing(dir.path()).len(), 2);

    // Success replaces the content.
    write_atomic(&path, |f| f.write_all(b"NEW")).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "NEW");
    assert_eq!(listing(dir.path()).len(), 2);

    // Through a symlink, the file it points to is replaced; the link stays.
    #[cfg(unix)]
    {
        let link = dir.path().join("link.canvas");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        write_atomic(&link, |f| f.write_all(b"VIA LINK")).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "VIA LINK");
    }
}

#[test]
fn respond_on_a_bad_canvas_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.canvas");
    let bad = r#"{"nodes": [{"id": "a", "type": "text"}]}"#;
    std::fs::write(&path, bad).unwrap();
    assert!(canvas::respond_file(&path, "a", "hello").is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), bad);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

// ---------------------------------------------------------------------- CLI

#[test]
fn cli_walk_and_respond() {
    let vault = seed_copy();
    let dir = vault.path();
    let out = graphctx(
        dir,
        &["canvas", "walk", SEED_CANVAS, "--node", "h-deep-learning"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let messages: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let list = messages["messages"].as_array().unwrap();
    assert_eq!(list.len(), 7);
    assert_eq!(
        list[0],
        json!({"role": "system", "content": "You are helpful."})
    );
    assert_eq!(messages.as_object().unwrap().len(), 1, "only messages");

    let out = graphctx(
        dir,
        &[
            "canvas",
            "walk",
            SEED_CANVAS,
            "--node",
            "h-deep-learning",
            "--json",
        ],
        None,
    );
    let full: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        full["excluded"],
        json!([{"node": "g-supervised", "reason": "sibling_branch"},
               {"node": "i-supervised-answer", "reason": "sibling_branch"}])
    );

    // Answer from stdin: the id is printed, the file gains one node and one
    // edge, the rest is as it was.
    let before: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(SEED_CANVAS)).unwrap()).unwrap();
    let out = graphctx(
        dir,
        &[
            "canvas",
            "respond",
            SEED_CANVAS,
            "--node",
            "h-deep-learning",
        ],
        Some("Layers upon layers.\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = stdout(&out).trim().to_string();
    let after: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(SEED_CANVAS)).unwrap()).unwrap();
    let nodes = after["nodes"].as_array().unwrap();
    assert_eq!(
        &nodes[..nodes.len() - 1],
        before["nodes"].as_array().unwrap()
    );
    assert_eq!(after["metadata"], before["metadata"]);
    let new = nodes.last().unwrap();
    assert_eq!(new["id"], id.as_str());
    let text = new["text"].as_str().unwrap();
    let stamp = text
        .lines()
        .find_map(|l| l.strip_prefix("timestamp: "))
        .expect("a timestamp");
    assert!(
        stamp.len() == 20 && stamp.ends_with('Z') && stamp.as_bytes()[10] == b'T',
        "{stamp}"
    );
    assert_eq!(
        text.replace(stamp, "T"),
        "---\nrole: assistant\ntimestamp: T\n---\n\nLayers upon layers."
    );

    // --text, and the walk from the answer now ends with it.
    let out = graphctx(
        dir,
        &[
            "canvas",
            "respond",
            SEED_CANVAS,
            "--node",
            &id,
            "--text",
            "More?",
            "--json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let added: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(added["node"].is_string() && added["edge"].is_string() && added["y"].is_number());
    let out = graphctx(
        dir,
        &[
            "canvas",
            "walk",
            SEED_CANVAS,
            "--node",
            added["node"].as_str().unwrap(),
        ],
        None,
    );
    let m: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let list = m["messages"].as_array().unwrap();
    assert_eq!(list.len(), 9);
    assert_eq!(list[7]["content"], "Layers upon layers.");
    assert_eq!(list[8], json!({"role": "assistant", "content": "More?"}));
}

#[test]
fn cli_errors_and_warnings() {
    let vault = seed_copy();
    let dir = vault.path();
    let out = graphctx(dir, &["canvas", "walk", SEED_CANVAS, "--node", "zzz"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no node with id 'zzz'"),
        "{}",
        stderr(&out)
    );

    let original = std::fs::read(dir.join(SEED_CANVAS)).unwrap();
    let out = graphctx(
        dir,
        &[
            "canvas",
            "respond",
            SEED_CANVAS,
            "--node",
            "zzz",
            "--text",
            "x",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let out = graphctx(
        dir,
        &["canvas", "respond", SEED_CANVAS, "--node", "a-system"],
        Some("  \n"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.join(SEED_CANVAS)).unwrap(), original);

    std::fs::write(dir.join("broken.canvas"), "{\"nodes\": [").unwrap();
    let out = graphctx(
        dir,
        &["canvas", "walk", "broken.canvas", "--node", "a"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("broken.canvas is not valid JSON"),
        "{}",
        stderr(&out)
    );

    // Warnings go to stderr; the messages stay valid JSON on stdout.
    std::fs::write(
        dir.join("role.canvas"),
        json!({"nodes": [text("a", "---\nrole: boss\n---\nHi", 0, 0)]}).to_string(),
    )
    .unwrap();
    let out = graphctx(dir, &["canvas", "walk", "role.canvas", "--node", "a"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("warning: node 'a': invalid role 'boss'"),
        "{}",
        stderr(&out)
    );
    let m: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(m["messages"][0], json!({"role": "user", "content": "Hi"}));
}

// ------------------------------------------------------------------- import

#[test]
fn cli_import_then_blast_and_cycles() {
    let vault = seed_copy();
    let dir = vault.path();
    std::fs::write(
        dir.join("loop.canvas"),
        json!({"nodes": [text("a", "# Alpha\nmore", 0, 0), text("b", "beta", 0, 200),
                         text("c", "gamma", 0, 400), text("d", "side", 600, 200)],
               "edges": [down("ab", "a", "b"), down("bc", "b", "c"), down("ca", "c", "a"),
                         side("bd", "b", "d")]})
        .to_string(),
    )
    .unwrap();
    let db = dir.join("g.db");
    let db = db.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut all = vec!["--db", db];
        all.extend_from_slice(args);
        let out = graphctx(dir, &all, None);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let summary: Value = serde_json::from_str(&run(&[
        "canvas",
        "import",
        SEED_CANVAS,
        "--graph",
        "talk",
        "--json",
    ]))
    .unwrap();
    assert_eq!(
        (summary["nodes"].as_u64(), summary["edges"].as_u64()),
        (Some(9), Some(8))
    );
    assert_eq!(summary["seq"], 1);

    // One hop from the assistant answer: its question, its guide, both follow-ups.
    let blast: Value = serde_json::from_str(&run(&[
        "blast", "e-ml-is", "--hops", "1", "--graph", "talk", "--json",
    ]))
    .unwrap();
    let reached: BTreeSet<&str> = blast
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        reached,
        [
            "b-what-is-ml",
            "e-ml-is",
            "f-dl-guide",
            "g-supervised",
            "h-deep-learning"
        ]
        .into()
    );
    let cycles: Value =
        serde_json::from_str(&run(&["cycles", "--graph", "talk", "--json"])).unwrap();
    assert_eq!(cycles, json!([]));

    run(&["canvas", "import", "loop.canvas", "--graph", "loop"]);
    let cycles: Value =
        serde_json::from_str(&run(&["cycles", "--graph", "loop", "--json"])).unwrap();
    assert_eq!(cycles.as_array().unwrap().len(), 1, "{cycles}");
    assert_eq!(cycles[0]["members"], json!(["a", "b", "c"]));
    assert_eq!(cycles[0]["rels"], json!(["thread", "thread", "thread"]));

    // The default graph is the code graph: refused.
    let out = graphctx(dir, &["--db", db, "canvas", "import", "loop.canvas"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--graph"), "{}", stderr(&out));
}

#[test]
fn import_stores_nodes_edges_and_geometry_and_replaces_on_reimport() {
    let dir = seed_copy();
    let path = dir.path().join(SEED_CANVAS);
    let store = Store::memory().unwrap();
    let s = import_canvas(&store, "talk", &path, &ImportOptions::default()).unwrap();
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let rows = |q: &str| -> Vec<Vec<String>> {
        store
            .read(q, graphctx::store::Params::new())
            .unwrap()
            .rows
            .iter()
            .map(|r| r.iter().map(graphctx::store::value::display).collect())
            .collect()
    };
    let nodes = rows("?[id, kind, name] := *node{graph: 'talk', id, kind, name} :order id");
    assert_eq!(
        nodes[..4],
        [
            vec!["a-system", "text", "You are helpful."],
            vec!["b-what-is-ml", "text", "What is ML?"],
            vec!["c-ml-basics", "file", "ml-basics"],
            vec![
                "d-wikipedia",
                "link",
                "https://en.wikipedia.org/wiki/Machine_learning"
            ],
        ]
        .map(|r| r.into_iter().map(String::from).collect::<Vec<_>>())
    );
    let doc = rows("?[doc] := *node{graph: 'talk', id: 'c-ml-basics', doc}");
    assert!(
        doc[0][0].contains("Machine learning fits models to data.") && !doc[0][0].contains("role:")
    );
    let edges = rows("?[rel, count(o)] := *edge{graph: 'talk', rel, origin: o}");
    assert_eq!(edges, [["context", "3"], ["thread", "5"]]);
    let geo = rows(
        "?[x, y, color, role, tags, position] := *canvas_node{graph: 'talk', id: 'e-ml-is', x, y, color, role, tags, position}",
    );
    assert_eq!(geo, [["0", "440", "3", "assistant", "[answer]", "4"]]);
    let raw = rows("?[data] := *canvas_node{graph: 'talk', id: 'b-what-is-ml', data}");
    assert!(raw[0][0].contains("styleAttributes"), "{raw:?}");

    // Re-import of an edited canvas: the removed node and its edges are gone,
    // seq moved on.
    let mut canvas = Canvas::load(&path).unwrap();
    add_response(
        &mut canvas,
        "h-deep-learning",
        "Yes.",
        "2025-01-01T00:00:00Z",
    )
    .unwrap();
    let text = canvas
        .to_json_string()
        .replace(r#"{"id":"i-supervised-answer""#, r#"{"id":"i-renamed""#)
        .replace(
            r#""toNode":"i-supervised-answer""#,
            r#""toNode":"i-renamed""#,
        );
    std::fs::write(&path, text).unwrap();
    let s2 = import_canvas(&store, "talk", &path, &ImportOptions::default()).unwrap();
    assert_eq!((s2.nodes, s2.edges, s2.seq), (10, 9, 2));
    assert!(s2.replaced_rows > 0);
    let ids: Vec<String> = rows("?[id] := *node{graph: 'talk', id}")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert!(
        ids.contains(&"i-renamed".to_string()) && !ids.contains(&"i-supervised-answer".to_string())
    );
    assert_eq!(
        rows("?[count(id)] := *canvas_node{graph: 'talk', id}"),
        [["10"]]
    );
    assert_eq!(
        rows("?[count(o)] := *edge{graph: 'talk', origin: o}"),
        [["9"]]
    );

    // A graph that holds something else is refused, and left as it was.
    let mut batch = Batch::new();
    batch.put(
        "node",
        &["graph", "id", "kind", "name", "doc"],
        vec![
            "code".into(),
            "k".into(),
            "fn".into(),
            "k".into(),
            "".into(),
        ],
    );
    let code = GraphChange::at("code", 0).with_source("/some/repo");
    store.apply_to_graph(&code, batch).unwrap();
    let err = import_canvas(&store, "code", &path, &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, CanvasError::GraphInUse { .. }), "{err}");
    assert_eq!(rows("?[count(id)] := *node{graph: 'code', id}"), [["1"]]);
}
