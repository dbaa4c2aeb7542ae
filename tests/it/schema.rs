//! Schema versions: an older database is migrated with its data intact; a
//! newer one is refused (see also tests/it/cli.rs).

use graphctx::store::{schema, Location, Params, Store, StoreError};

#[test]
fn a_version_one_database_is_migrated_and_keeps_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::Sqlite(dir.path().join("graph.db"));
    {
        let old = Store::open_unmigrated(&location).unwrap();
        schema::migrate_to(&old, 1).unwrap();
        assert_eq!(schema::current_version(&old).unwrap(), 1);
        old.write(
            "?[graph, id, kind, name, doc] <- [['code', 'k1', 'function', 'run', '']] :put node {graph, id => kind, name, doc}",
            Params::new(),
        )
        .unwrap();
    }
    let store = crate::common::open_migrated(&location);
    // The row survived, and the index of version 2 answers for it.
    let rows = store
        .read(
            "?[id] := *node:by_name{graph: 'code', name: 'run', id}",
            Params::new(),
        )
        .unwrap();
    assert_eq!(rows.rows.len(), 1);
    // Versions are recorded, one row each.
    let versions = store
        .read(
            "?[v, n] := *schema_version{version: v, name: n}",
            Params::new(),
        )
        .unwrap();
    assert_eq!(versions.rows.len(), schema::MIGRATIONS.len());
}

#[test]
fn totals_written_before_the_ambiguous_count_keep_their_figures() {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::Sqlite(dir.path().join("graph.db"));
    {
        let old = Store::open_unmigrated(&location).unwrap();
        schema::migrate_to(&old, 10).unwrap();
        old.write(
            "?[graph, files, entities, edges, unresolved] <- [['code', 3, 20, 40, 7]] \
             :put code_stats {graph => files, entities, edges, unresolved}",
            Params::new(),
        )
        .unwrap();
    }
    let store = Store::open(&location).unwrap();
    let rows = store
        .read(
            "?[f, e, d, u, a] := *code_stats{graph: 'code', files: f, entities: e, \
             edges: d, unresolved: u, ambiguous: a}",
            Params::new(),
        )
        .unwrap();
    // -1: not counted yet; the next index run counts by a scan.
    assert_eq!(
        graphctx::store::value::display(&rows.rows[0][4]),
        "-1".to_string()
    );
    assert_eq!(
        rows.rows[0][..4]
            .iter()
            .map(graphctx::store::value::display)
            .collect::<Vec<_>>(),
        ["3", "20", "40", "7"]
    );
}

/// What schema 23 changed, undone: the package columns of `code_entity`
/// and `code_file` named `crate_name` again. Every older shape starts
/// here.
pub(crate) const BEFORE_23: [&str; 6] = [
    "?[graph, id, file, crate_name, module_path, visibility, start_line, end_line, signature, \
     is_test, owner, trait_name, parent] := *code_entity{graph, id, file, package: crate_name, \
     module_path, visibility, start_line, end_line, signature, is_test, owner, trait_name, parent} \
     :create code_entity_before { graph: String, id: String => file: String, crate_name: String, \
     module_path: [String], visibility: String, start_line: Int, end_line: Int, signature: Json, \
     is_test: Bool, owner: String?, trait_name: String?, parent: String? }",
    "::remove code_entity",
    "::rename code_entity_before -> code_entity",
    "?[graph, path, hash, bytes, status, reason, crate_name, entities, edge_digest] := \
     *code_file{graph, path, hash, bytes, status, reason, package: crate_name, entities, \
     edge_digest} \
     :create code_file_before { graph: String, path: String => hash: String, bytes: Int, \
     status: String, reason: String, crate_name: String, entities: Int, edge_digest: String }",
    "::remove code_file",
    "::rename code_file_before -> code_file",
];

/// What schema 24 added, undone: the history text.
pub(crate) const BEFORE_24: [&str; 1] = ["::remove code_history_word"];

/// The shapes fixture indexed into a database file, then taken back to
/// what an older graphctx left by `scripts` (after [`BEFORE_24`] and
/// [`BEFORE_23`]), and opened (migrated) again.
fn older_index(scripts: &[&str]) -> (tempfile::TempDir, std::path::PathBuf, Store) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    crate::common::copy_dir(&crate::common::fixture("shapes"), &root);
    let location = Location::Sqlite(dir.path().join("graph.db"));
    {
        let store = Store::open(&location).unwrap();
        crate::common::index(&store, &root);
        for script in BEFORE_24.iter().chain(&BEFORE_23).chain(scripts) {
            store.write(script, Params::new()).unwrap();
        }
    }
    let store = crate::common::open_migrated(&location);
    (dir, root, store)
}

/// The next index run makes the graph a fresh index makes, and a search
/// reads its text index back.
fn next_run_equals_a_fresh_index_and_searches(store: &Store, root: &std::path::Path) {
    crate::common::index(store, root);
    let (fresh, _) = crate::common::index_fresh(root);
    assert_eq!(crate::common::dump(store), crate::common::dump(&fresh));
    let hits = graphctx::search::search(
        store,
        "code",
        "scale a rectangle by a factor",
        &graphctx::search::Options::default(),
    )
    .unwrap();
    assert_eq!(hits[0].key, "src/geometry/mod.rs-geometry-Rect::scale");
}

/// Before schema 18 an index of every edge by its origin file told an
/// index run which edges a file had produced; now each file's list does.
/// The migration drops the code files' edges, and the next index run
/// writes them anew: the graph is then what a fresh index makes.
#[test]
fn an_index_from_before_schema_18_gets_its_edges_back_on_the_next_run() {
    let edges = |store: &Store| store.dump("edge").unwrap().len();
    // Back to what graphctx before schema 18 left.
    let (_dir, root, store) = older_index(&[
        "::remove code_file_edges",
        "::index create edge:by_origin { graph, origin, src, rel, dst, weight }",
        BEFORE_22[0],
        BEFORE_22[1],
        BEFORE_22[2],
        BEFORE_20[0],
        BEFORE_20[1],
        BEFORE_21[0],
        BEFORE_21[1],
        "?[version] := *schema_version{version}, version >= 18 \
         :rm schema_version {version}",
    ]);
    assert_eq!(edges(&store), 0);
    // A body edit: the run must still resolve every file.
    let lib = root.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("// edited\n{text}")).unwrap();
    crate::common::index(&store, &root);
    let (fresh, _) = crate::common::index_fresh(&root);
    assert_eq!(crate::common::dump(&store), crate::common::dump(&fresh));
}

/// Before schema 19 an entity's outgoing edges and the posting lists were
/// stored as text. The migration drops those rows; the next index run
/// writes them compressed, and the graph is then what a fresh index makes
/// (contexts and searches read it back).
#[test]
fn an_index_from_before_schema_19_gets_its_usage_and_postings_back_on_the_next_run() {
    // Back to what graphctx before schema 19 left: the same relations with
    // text columns, each holding a row.
    let (_dir, root, store) = older_index(&[
        "?[graph, id, kind, file, is_test, fan_in, references, call_sites, tests, \
          tested_members, out] <- [['code', 'x', 'fn', 'src/lib.rs', false, 0, 0, [], 0, 0, '[]']] \
         :replace code_usage { graph: String, id: String => kind: String, file: String, \
          is_test: Bool, fan_in: Int, references: Int, call_sites: [String], tests: Int, \
          tested_members: Int, out: String }",
        "?[graph, word, block, postings] <- [['code', 'scale', 0, '1 3 1 x\n']] \
         :replace code_word { graph: String, word: String, block: Int => postings: String }",
        "?[graph, word, block, postings] <- [['code', 'scale', 0, '1 0 1 x\n']] \
         :replace code_file_word { graph: String, word: String, block: Int => postings: String }",
        BEFORE_22[0],
        BEFORE_22[1],
        BEFORE_22[2],
        BEFORE_20[0],
        BEFORE_20[1],
        BEFORE_21[0],
        BEFORE_21[1],
        "?[version] := *schema_version{version}, version >= 19 \
         :rm schema_version {version}",
    ]);
    for relation in ["code_usage", "code_word", "code_file_word"] {
        assert!(store.dump(relation).unwrap().is_empty(), "{relation}");
    }
    next_run_equals_a_fresh_index_and_searches(&store, &root);
}

/// What schema 20 changed, undone: each entity's word list in a row of
/// its own (`code_text`) instead of its file's row.
const BEFORE_20: [&str; 2] = [
    "::remove code_entity_texts",
    ":create code_text { graph: String, id: String => text: String }",
];

/// Before schema 20 each entity's word list was a row of its own. The
/// migration removes them; the next index run writes them a file at a
/// time, and the graph is then what a fresh index makes (searches read
/// it back).
#[test]
fn an_index_from_before_schema_20_gets_its_word_lists_back_on_the_next_run() {
    let (_dir, root, store) = older_index(&[
        BEFORE_22[0],
        BEFORE_22[1],
        BEFORE_22[2],
        BEFORE_20[0],
        BEFORE_20[1],
        BEFORE_21[0],
        BEFORE_21[1],
        "?[graph, id, text] <- [['code', 'src/lib.rs-crate-x', 'x']] \
         :put code_text { graph, id => text }",
        "?[version] := *schema_version{version}, version >= 20 \
         :rm schema_version {version}",
    ]);
    assert!(!store.relations().unwrap().iter().any(|r| r == "code_text"));
    assert!(store.dump("code_entity_texts").unwrap().is_empty());
    // A body edit: the run must still write every file's word lists.
    let lib = root.join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, format!("// edited\n{text}")).unwrap();
    next_run_equals_a_fresh_index_and_searches(&store, &root);
}

/// What schema 21 changed, undone: which entities a file declares was an
/// index of `code_entity`.
const BEFORE_21: [&str; 2] = [
    "::remove code_file_entity",
    "::index create code_entity:by_file { graph, file, id }",
];

/// Before schema 21 a file's entities were found through an index of
/// `code_entity`. The migration fills `code_file_entity` from the entity
/// rows: the index is then what a fresh index makes without a run, and
/// stays so through the next.
#[test]
fn an_index_from_before_schema_21_gets_its_file_entities_from_the_migration() {
    let (_dir, root, store) = older_index(&[
        BEFORE_22[0],
        BEFORE_22[1],
        BEFORE_22[2],
        BEFORE_21[0],
        BEFORE_21[1],
        "?[version] := *schema_version{version}, version >= 21 \
         :rm schema_version {version}",
    ]);
    file_entities_match_a_fresh_index_before_and_after_a_rename(&store, &root);
}

/// What schema 22 changed, undone: one `code_file_entity` pair per
/// entity instead of one `code_file_entities` row per file.
const BEFORE_22: [&str; 3] = [
    ":create code_file_entity { graph: String, file: String, id: String }",
    "?[graph, file, id] := *code_file_entities{graph, file, tails}, tail in tails, \
     id = concat(file, '-', tail) \
     :put code_file_entity { graph, file, id }",
    "::remove code_file_entities",
];

/// Before schema 22 a file's entities were one pair per entity. The
/// migration folds them into one row per file, the row a fresh index
/// writes, and keeps it so through the next run.
#[test]
fn an_index_from_before_schema_22_gets_its_file_entity_lists_from_the_migration() {
    let (_dir, root, store) = older_index(&[
        BEFORE_22[0],
        BEFORE_22[1],
        BEFORE_22[2],
        "?[version] := *schema_version{version}, version >= 22 \
         :rm schema_version {version}",
    ]);
    file_entities_match_a_fresh_index_before_and_after_a_rename(&store, &root);
}

/// The migrated graph is what a fresh index makes, `code_file_entities`
/// included, and stays so when a function is renamed (its file's list
/// changes).
fn file_entities_match_a_fresh_index_before_and_after_a_rename(
    store: &Store,
    root: &std::path::Path,
) {
    assert!(!store
        .relations()
        .unwrap()
        .iter()
        .any(|r| r == "code_file_entity"));
    let (fresh, _) = crate::common::index_fresh(root);
    assert!(!store.dump("code_file_entities").unwrap().is_empty());
    assert_eq!(crate::common::dump(store), crate::common::dump(&fresh));
    let lib = root.join("src/geometry/mod.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, text.replace("fn scale(", "fn scaled(")).unwrap();
    crate::common::index(store, root);
    let (fresh, _) = crate::common::index_fresh(root);
    assert_eq!(crate::common::dump(store), crate::common::dump(&fresh));
}

#[test]
fn a_newer_database_is_a_clear_error() {
    let store = Store::memory().unwrap();
    store
        .write(
            "?[version, name] <- [[99, 'future']] :put schema_version {version => name}",
            Params::new(),
        )
        .unwrap();
    match schema::migrate(&store) {
        Err(StoreError::NewerSchema {
            found, supported, ..
        }) => {
            assert_eq!(found, 99);
            assert_eq!(supported, schema::latest_version());
        }
        other => panic!("expected NewerSchema, got {:?}", other.err()),
    }
}

#[test]
fn every_query_file_parses() {
    // Run each query against an empty, migrated store with plausible
    // parameters: a syntax error or a reference to a missing relation fails.
    let store = Store::memory().unwrap();
    for (file, script) in graphctx::store::queries::ALL {
        let params = Params::new()
            .with("graph", "code")
            .with("key", "k")
            .with("file", "f")
            .with("name", "n")
            .with("kind", "")
            .with("session", "s")
            .with("slot", "full")
            .with("hops", 2)
            .with("hub", 256)
            .with("entry", 1)
            .with("idx", 0)
            .with("n", 1)
            .with("keys", graphctx::store::value::str_list(["k"]))
            .with("bases", graphctx::store::value::str_list(["k"]))
            .with("layer", graphctx::store::value::str_list(["k"]))
            .with("from_base", true)
            .with("files", graphctx::store::value::str_list(["f"]))
            .with("paths", graphctx::store::value::str_list(["f"]))
            .with("origins", graphctx::store::value::str_list(["f"]))
            .with("rels", graphctx::store::value::str_list(["calls"]))
            .with("rel", "tests")
            .with("words", graphctx::store::value::str_list(["w"]))
            .with(
                "lists",
                cozo::DataValue::List(vec![cozo::DataValue::List(vec![
                    "w".into(),
                    cozo::DataValue::from(0i64),
                ])]),
            );
        store
            .read(script, params)
            .unwrap_or_else(|e| panic!("queries/{file}: {e}"));
    }
}

/// A graph's `seq` is written only by the store's apply for a graph: every
/// writer path moves it by exactly one per landed change, and not at all
/// when nothing changed.
mod graph_seq {
    use graphctx::canvas::{import_canvas, ImportOptions};
    use graphctx::flow::executor::{FlowSession, ToolCall};
    use graphctx::index::{index_repository, IndexOptions};
    use graphctx::operations::{apply_json, changelog, ApplyOptions};
    use graphctx::store::{Batch, GraphChange, Params, Store, StoreError};

    fn seq(store: &Store, graph: &str) -> i64 {
        store.graph_seq(graph).unwrap()
    }

    use crate::common::git;

    #[test]
    fn index_runs_and_history_refreshes_move_seq_by_one_each() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("Cargo.toml"),
            "[package]\nname = \"s\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        std::fs::write(root.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        git(root, &["init", "-q"]);
        git(root, &["add", "."]);
        git(root, &["commit", "-qm", "one"]);
        let store = Store::memory().unwrap();
        let opts = IndexOptions::default();
        let g = opts.graph.clone();
        // First run: the files land (1), then the history of HEAD (2).
        let s = index_repository(&store, root, &opts).unwrap();
        assert_eq!((s.seq, seq(&store, &g)), (2, 2));
        // Nothing changed: nothing lands.
        let s = index_repository(&store, root, &opts).unwrap();
        assert_eq!((s.seq, seq(&store, &g)), (2, 2));
        // A changed file without history: one change.
        std::fs::write(root.join("src/lib.rs"), "pub fn a() {}\npub fn b() {}\n").unwrap();
        let no_history = IndexOptions {
            history: false,
            ..IndexOptions::default()
        };
        index_repository(&store, root, &no_history).unwrap();
        assert_eq!(seq(&store, &g), 3);
        // HEAD moved, files as indexed: only the history refresh lands.
        git(root, &["commit", "-qam", "two"]);
        index_repository(&store, root, &opts).unwrap();
        assert_eq!(seq(&store, &g), 4);
        let source = store
            .read(
                "?[s] := *graph{graph: $g, source: s}",
                Params::new().with("g", g.as_str()),
            )
            .unwrap();
        assert_eq!(
            source.rows[0][0].get_str(),
            Some(root.display().to_string().as_str())
        );
    }

    #[test]
    fn flow_commits_move_seq_only_when_the_flow_changed() {
        let store = Store::memory().unwrap();
        let commit = |calls: &[ToolCall]| {
            let mut s = FlowSession::open(&store, "f").unwrap();
            s.execute(calls).unwrap();
            s.commit().unwrap().seq
        };
        // A new graph lands even when empty.
        assert_eq!(commit(&[]), 1);
        let add = ToolCall::new("addNode", serde_json::json!({"label": "Home"}));
        assert_eq!(commit(&[add]), 2);
        assert_eq!(commit(&[]), 2);
        assert_eq!(seq(&store, "f"), 2);
    }

    #[test]
    fn ontology_applies_and_undo_redo_move_seq_by_one_each() {
        let store = Store::memory().unwrap();
        let opts = ApplyOptions::default();
        let apply = |json: &str| apply_json(&store, "m", json, &opts, &mut |_| {}).unwrap();
        apply(r#"{"operations":[{"id":"a","type":"create","nodeType":"UC","data":{"Name":"A"}}]}"#);
        assert_eq!(seq(&store, "m"), 1);
        apply(r#"{"operations":[]}"#);
        assert_eq!(seq(&store, "m"), 1, "an empty response changes nothing");
        assert_eq!(changelog::undo(&store, "m").unwrap().seq, 2);
        assert_eq!(changelog::redo(&store, "m").unwrap().seq, 3);
        assert_eq!(seq(&store, "m"), 3);
    }

    #[test]
    fn canvas_imports_move_seq_by_one_each() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.canvas");
        std::fs::write(
            &path,
            r#"{"nodes":[{"id":"n","type":"text","text":"hi","x":0,"y":0,"width":10,"height":10}],"edges":[]}"#,
        )
        .unwrap();
        let store = Store::memory().unwrap();
        let opts = ImportOptions::default();
        assert_eq!(import_canvas(&store, "c", &path, &opts).unwrap().seq, 1);
        assert_eq!(import_canvas(&store, "c", &path, &opts).unwrap().seq, 2);
        assert_eq!(seq(&store, "c"), 2);
    }

    #[test]
    fn only_the_store_writes_the_graph_row_and_a_moved_seq_is_a_conflict() {
        let store = Store::memory().unwrap();
        let mut batch = Batch::new();
        batch.put(
            "graph",
            &["graph", "source", "seq"],
            vec!["g".into(), "x".into(), 7.into()],
        );
        assert!(store.apply(batch).is_err());
        assert_eq!(seq(&store, "g"), 0);

        let stale = store.begin_graph_change("g").unwrap();
        let fresh = store.begin_graph_change("g").unwrap();
        assert_eq!(store.apply_to_graph(&fresh, Batch::new()).unwrap(), 1);
        match store.apply_to_graph(&stale, Batch::new()) {
            Err(StoreError::Conflict {
                expected, found, ..
            }) => assert_eq!((expected, found), (0, 1)),
            other => panic!("expected a conflict, got {other:?}"),
        }
        assert_eq!(seq(&store, "g"), 1);
        let again = GraphChange::at("g", 1).with_source("s");
        assert_eq!(store.apply_to_graph(&again, Batch::new()).unwrap(), 2);
    }
}

/// The SQL that declares CozoDB's table in the SQLite file at `path`.
fn key_value_table_sql(path: &std::path::Path) -> String {
    let conn = sqlite::Connection::open(path).unwrap();
    let mut sql = String::new();
    conn.iterate(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'cozo'",
        |pairs| {
            sql = pairs[0].1.unwrap_or_default().to_string();
            true
        },
    )
    .unwrap();
    sql
}

#[test]
fn new_databases_keep_their_rows_in_one_b_tree_by_key() {
    // Opened new, or built aside by a first index: either way the table
    // is WITHOUT ROWID (each key stored once, rows in key order).
    let dir = tempfile::tempdir().unwrap();
    let opened = dir.path().join("opened.db");
    drop(Store::open(&Location::Sqlite(opened.clone())).unwrap());
    assert!(
        key_value_table_sql(&opened).contains("WITHOUT ROWID"),
        "{}",
        key_value_table_sql(&opened)
    );
    let built = dir.path().join("built.db");
    Store::create_building(&built)
        .unwrap()
        .finish_building(&built)
        .unwrap();
    assert!(key_value_table_sql(&built).contains("WITHOUT ROWID"));
}

#[test]
fn a_database_with_cozodbs_own_table_still_opens_and_writes() {
    // Databases made before keep the rowid table CozoDB creates itself.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.db");
    sqlite::Connection::open(&path)
        .unwrap()
        .execute("CREATE TABLE cozo (k BLOB PRIMARY KEY, v BLOB)")
        .unwrap();
    let store = Store::open(&Location::Sqlite(path.clone())).unwrap();
    store
        .write(
            "?[graph, id, kind, name, doc] <- [['code', 'k1', 'function', 'run', '']] :put node {graph, id => kind, name, doc}",
            Params::new(),
        )
        .unwrap();
    let rows = store
        .read("?[id] := *node{graph: 'code', id}", Params::new())
        .unwrap();
    assert_eq!(rows.rows.len(), 1);
    assert!(!key_value_table_sql(&path).contains("WITHOUT ROWID"));
}

/// Before schema 23 the package columns were `crate_name`. The migration
/// renames them, every row kept: the index is what a fresh index makes,
/// and the next run parses nothing.
#[test]
fn an_index_from_before_schema_23_keeps_every_row_under_the_new_names() {
    let (_dir, root, store) = older_index(&[
        "?[version] := *schema_version{version}, version >= 23 :rm schema_version {version}",
    ]);
    let (fresh, _) = crate::common::index_fresh(&root);
    assert_eq!(crate::common::dump(&store), crate::common::dump(&fresh));
    let packages = store
        .read(
            "?[p] := *code_entity{graph: 'code', package: p}",
            Params::new(),
        )
        .unwrap();
    assert!(!packages.rows.is_empty());
    let again = crate::common::index(&store, &root);
    assert_eq!(again.files_parsed, 0);
}
