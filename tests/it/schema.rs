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
    let store = Store::open(&location).unwrap();
    assert_eq!(
        schema::current_version(&store).unwrap(),
        schema::latest_version()
    );
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
            .with("entry", 1)
            .with("idx", 0)
            .with("n", 1)
            .with("keys", graphctx::store::value::str_list(["k"]))
            .with("bases", graphctx::store::value::str_list(["k"]))
            .with("files", graphctx::store::value::str_list(["f"]))
            .with("paths", graphctx::store::value::str_list(["f"]))
            .with("origins", graphctx::store::value::str_list(["f"]))
            .with("rels", graphctx::store::value::str_list(["calls"]));
        store
            .read(script, params)
            .unwrap_or_else(|e| panic!("queries/{file}: {e}"));
    }
}
