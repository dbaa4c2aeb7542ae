//! The Datalog queries of the engine, one file each in `queries/`.
//!
//! They are compiled into the binary so a deployed graphctx never reads
//! scripts from disk, and they take all inputs as `$parameters`.

macro_rules! queries {
    ($($name:ident => $file:literal),* $(,)?) => {
        $(
            #[doc = concat!("`queries/", $file, "`")]
            pub const $name: &str = include_str!(concat!("../../queries/", $file));
        )*
        /// Every query with its file name, for tests that check they parse.
        pub const ALL: &[(&str, &str)] = &[$(($file, $name)),*];
    };
}

queries! {
    FILE_STATES => "file_states.cozo",
    EXTRACTS => "extracts.cozo",
    ENTITY_KEYS_IN_FILES => "entity_keys_in_files.cozo",
    EDGES_FROM_ORIGINS => "edges_from_origins.cozo",
    UNRESOLVED_FROM_ORIGINS => "unresolved_from_origins.cozo",
    GRAPH_SEQ => "graph_seq.cozo",
    CODE_COUNTS => "code_counts.cozo",
    ENTITIES_LIST => "entities_list.cozo",
    EDGES_OUT => "edges_out.cozo",
    EDGES_IN => "edges_in.cozo",
    UNRESOLVED_OF => "unresolved_of.cozo",
    ENTITY_EXISTS => "entity_exists.cozo",
}
