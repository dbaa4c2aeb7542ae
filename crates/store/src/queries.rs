//! The Datalog queries of the engine, one file each in `queries/`.
//!
//! They are compiled into the binary so a deployed graphctx never reads
//! scripts from disk, and they take all inputs as `$parameters`.

macro_rules! queries {
    ($($name:ident => $file:literal),* $(,)?) => {
        $(
            #[doc = concat!("`queries/", $file, "`")]
            pub const $name: &str = include_str!(concat!("../../../queries/", $file));
        )*
        /// Every query with its file name, for tests that check they parse.
        pub const ALL: &[(&str, &str)] = &[$(($file, $name)),*];
    };
}

queries! {
    EXTRACTS => "extracts.cozo",
    INTERFACES => "interfaces.cozo",
    INTERFACES_OF => "interfaces_of.cozo",
    NAMES_ALL => "names_all.cozo",
    NAMES_PATHS => "names_paths.cozo",
    EDGES_TOUCHING => "edges_touching.cozo",
    EDGES_INTO_BY_REL => "edges_into_by_rel.cozo",
    ENTITY_ROWS_IN_FILES => "entity_rows_in_files.cozo",
    FILE_EDGES_OF => "file_edges_of.cozo",
    EDGES_OF_ORIGINS_SCAN => "edges_of_origins_scan.cozo",
    UNRESOLVED_FROM_ORIGINS => "unresolved_from_origins.cozo",
    GRAPH_SEQ => "graph_seq.cozo",
    CODE_COUNTS => "code_counts.cozo",
    STATUS_COUNTS => "status_counts.cozo",
    STATUS_FILE_ENTITIES => "status_file_entities.cozo",
    EXPORT_FILES => "export_files.cozo",
    EXPORT_ENTITIES => "export_entities.cozo",
    AMBIGUOUS_COUNT => "ambiguous_count.cozo",
    ENTITIES_LIST => "entities_list.cozo",
    EDGES_OUT => "edges_out.cozo",
    EDGES_IN => "edges_in.cozo",
    UNRESOLVED_OF => "unresolved_of.cozo",
    ENTITY_EXISTS => "entity_exists.cozo",
    BLAST_RADIUS => "blast_radius.cozo",
    CONTEXT_LAYER => "context_layer.cozo",
    CALLERS => "callers.cozo",
    CALLEES => "callees.cozo",
    CYCLE_EDGES => "cycle_edges.cozo",
    SELF_LOOPS => "self_loops.cozo",
    ENTITY_DETAILS => "entity_details.cozo",
    EDGES_FROM => "edges_from.cozo",
    HISTORY_HEAD => "history_head.cozo",
    COCHANGE_ALL => "cochange_all.cozo",
    HISTORY_WORDS_ALL => "history_words_all.cozo",
    SEARCH_HISTORY_WORDS => "search_history_words.cozo",
    SEARCH_POSTINGS => "search_postings.cozo",
    SEARCH_ENTITIES => "search_entities.cozo",
    SEARCH_NEIGHBOURS => "search_neighbours.cozo",
    SEARCH_COCHANGE => "search_cochange.cozo",
    SEARCH_SIZE => "search_size.cozo",
    SEARCH_FILE_POSTINGS => "search_file_postings.cozo",
    SEARCH_FILE_MODULES => "search_file_modules.cozo",
    SEARCH_PATHS => "search_paths.cozo",
    SEARCH_FILE_SIZES => "search_file_sizes.cozo",
    SEARCH_FILE_ENTITIES => "search_file_entities.cozo",
    SEARCH_FILE_SPANS => "search_file_spans.cozo",
    FILE_TEXT_OF => "file_text_of.cozo",
    FILE_TEXT_KEYS => "file_text_keys.cozo",
    FILE_WORD_KEYS => "file_word_keys.cozo",
    ENTITY_TEXTS_OF => "entity_texts_of.cozo",
    TEXT_VERSION => "text_version.cozo",
    ENTITY_TEXTS_KEYS => "entity_texts_keys.cozo",
    WORD_KEYS => "word_keys.cozo",
    WORD_BLOCK_POSTINGS => "word_block_postings.cozo",
    FILE_WORD_BLOCK_POSTINGS => "file_word_block_postings.cozo",
    COCHANGE_OF => "cochange_of.cozo",
    ENTITY_BRIEF => "entity_brief.cozo",
    CONTEXT_ENTITIES => "context_entities.cozo",
    USAGE_OF => "usage_of.cozo",
    USAGE_VERSION => "usage_version.cozo",
    ENTITIES_IN_FILE => "entities_in_file.cozo",
    ENTITIES_NAMED => "entities_named.cozo",
    TOP_ENTITIES_OF_FILES => "top_entities_of_files.cozo",
    SIMILAR_KEYS => "similar_keys.cozo",
    CONTEXT_CACHE_GET => "context_cache_get.cozo",
    MODULE_CYCLE_EDGES => "module_cycle_edges.cozo",
    FLOW_NODES => "flow_nodes.cozo",
    FLOW_EDGES => "flow_edges.cozo",
    FLOW_VISUALS => "flow_visuals.cozo",
    FLOW_UNDO => "flow_undo.cozo",
    FLOW_SNAPSHOT => "flow_snapshot.cozo",
    FLOW_MESSAGES_LAST => "flow_messages_last.cozo",
    FLOW_MESSAGE_IDS => "flow_message_ids.cozo",
    CANVAS_GRAPH_ROWS => "canvas_graph_rows.cozo",
    SERVE_ENTITIES_IN_FILE => "serve_entities_in_file.cozo",
    SERVE_ENTITIES_BY_KEYS => "serve_entities_by_keys.cozo",
    SERVE_ALL_SYMBOLS => "serve_all_symbols.cozo",
    SERVE_DEPENDENTS => "serve_dependents.cozo",
    SERVE_ENTITIES_IN_FILES => "serve_entities_in_files.cozo",
    ONTO_NODES => "onto_nodes.cozo",
    ONTO_EDGES => "onto_edges.cozo",
    ONTO_SEMANTIC_IDS => "onto_semantic_ids.cozo",
    ONTO_COUNTERS => "onto_counters.cozo",
    ONTO_TOMBSTONES => "onto_tombstones.cozo",
    CAPTURE_SESSION_GET => "capture_session_get.cozo",
    CAPTURE_LOOKUP => "capture_lookup.cozo",
    ONTO_COUNTS => "onto_counts.cozo",
    ONTO_NODE_NAMES => "onto_node_names.cozo",
    CAPTURE_STATS_GET => "capture_stats_get.cozo",
    OPS_LOG_UNDO_HEAD => "ops_log_undo_head.cozo",
    OPS_LOG_REDO_HEAD => "ops_log_redo_head.cozo",
    OPS_LOG_UNDONE => "ops_log_undone.cozo",
    OPS_LOG_CHANGES => "ops_log_changes.cozo",
    OPS_LOG_STATS => "ops_log_stats.cozo",
    ONTO_MESSAGES_LAST => "onto_messages_last.cozo",
    ONTO_MESSAGE_IDS => "onto_message_ids.cozo",
}

/// `queries/capture_record.cozo`: a script that writes, so not in [`ALL`]
/// (which tests run read-only).
pub const CAPTURE_RECORD: &str = include_str!("../../../queries/capture_record.cozo");

/// `queries/capture_store.cozo`: a script that writes (a cache miss).
pub const CAPTURE_STORE: &str = include_str!("../../../queries/capture_store.cozo");
