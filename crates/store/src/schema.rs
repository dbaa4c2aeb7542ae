//! Schema migrations: the scripts in `schema/`, applied in order.
//!
//! Each script is applied in one transaction together with the row that
//! records its version in `schema_version`, so a database is always at a
//! version it can name. A database whose version is newer than the last
//! script here is refused rather than misread.

use super::{Params, Result, Store, StoreError};

/// `(version, name, script)`, in order. Append only: never edit a script
/// that has shipped; add the next version instead.
pub const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "core", include_str!("../../../schema/001_core.cozo")),
    (
        2,
        "node_by_name",
        include_str!("../../../schema/002_node_by_name.cozo"),
    ),
    (
        3,
        "ontology",
        include_str!("../../../schema/003_ontology.cozo"),
    ),
    (
        4,
        "operations",
        include_str!("../../../schema/004_operations.cozo"),
    ),
    (
        5,
        "capture",
        include_str!("../../../schema/005_capture.cozo"),
    ),
    (6, "canvas", include_str!("../../../schema/006_canvas.cozo")),
    (7, "flow", include_str!("../../../schema/007_flow.cozo")),
    (8, "usage", include_str!("../../../schema/008_usage.cozo")),
    (
        10,
        "ontology_conversation",
        include_str!("../../../schema/010_ontology_conversation.cozo"),
    ),
    (
        11,
        "index_state",
        include_str!("../../../schema/011_index_state.cozo"),
    ),
    (
        12,
        "search",
        include_str!("../../../schema/012_search.cozo"),
    ),
    (
        13,
        "interface",
        include_str!("../../../schema/013_interface.cozo"),
    ),
    (
        14,
        "postings",
        include_str!("../../../schema/014_postings.cozo"),
    ),
    (15, "names", include_str!("../../../schema/015_names.cozo")),
    (
        16,
        "file_words",
        include_str!("../../../schema/016_file_words.cozo"),
    ),
    (
        17,
        "posting_blocks",
        include_str!("../../../schema/017_posting_blocks.cozo"),
    ),
    (
        18,
        "file_edges",
        include_str!("../../../schema/018_file_edges.cozo"),
    ),
    (
        19,
        "packed_text",
        include_str!("../../../schema/019_packed_text.cozo"),
    ),
    (
        20,
        "entity_texts",
        include_str!("../../../schema/020_entity_texts.cozo"),
    ),
    (
        21,
        "file_entities",
        include_str!("../../../schema/021_file_entities.cozo"),
    ),
    (
        22,
        "file_entity_lists",
        include_str!("../../../schema/022_file_entity_lists.cozo"),
    ),
    (
        23,
        "package",
        include_str!("../../../schema/023_package.cozo"),
    ),
    (
        24,
        "history_text",
        include_str!("../../../schema/024_history_text.cozo"),
    ),
];

/// The version a fully migrated database has.
pub fn latest_version() -> i64 {
    MIGRATIONS.last().map(|m| m.0).unwrap_or(0)
}

/// The schema version recorded in the database (0 for an empty database).
pub fn current_version(store: &Store) -> Result<i64> {
    if !store.relations()?.iter().any(|r| r == "schema_version") {
        return Ok(0);
    }
    let rows = store.read(
        "?[version, name] := *schema_version{version, name}\n:order -version\n:limit 1",
        Params::new(),
    )?;
    Ok(super::rows::decode_first::<super::rows::SchemaVersionRow>(&rows)?.map_or(0, |r| r.version))
}

/// Bring the database to [`latest_version`].
pub fn migrate(store: &Store) -> Result<()> {
    migrate_to(store, latest_version())
}

/// Apply the migrations up to and including `target` (tests use this to
/// build databases as older versions of graphctx left them).
pub fn migrate_to(store: &Store, target: i64) -> Result<()> {
    let current = current_version(store)?;
    if current > latest_version() {
        return Err(StoreError::NewerSchema {
            path: store.location().display(),
            found: current,
            supported: latest_version(),
        });
    }
    for &(version, name, script) in MIGRATIONS.iter().filter(|m| m.0 > current && m.0 <= target) {
        let record =
            "{?[version, name] <- [[$version, $name]] :put schema_version {version => name}}";
        let full = format!("{script}\n{record}");
        store
            .write(
                &full,
                Params::new().with("version", version).with("name", name),
            )
            .map_err(|e| match e {
                // About the file, not the script: said as it is.
                StoreError::Damaged { .. } | StoreError::Access { .. } | StoreError::Busy(_) => e,
                e => StoreError::Query(format!("migration {version} ({name}) failed: {e}")),
            })?;
    }
    Ok(())
}
