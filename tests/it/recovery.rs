//! A database that cannot be read (truncated, garbage, a damaged page, a
//! newer schema) and `index --rebuild`: every command says which file,
//! what is wrong and the command that fixes it, never panics; the rebuild
//! keeps ontology graphs, canvas sessions and conversations, and saves
//! what a damaged file still holds before anything is replaced. And a
//! migration killed half-way leaves the old schema or the new one, with
//! the data intact.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{copy_dir, fixture, graphctx, stderr, stdout};
use graphctx::store::{schema, Batch, Location, Params, Store};

/// The shapes fixture in a new directory, indexed into its default
/// database; the directory and the database's path.
fn indexed_repo() -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir().unwrap();
    copy_dir(&fixture("shapes"), repo.path());
    let out = graphctx(repo.path(), &["index", "--no-history"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let db = repo
        .path()
        .canonicalize()
        .unwrap()
        .join(".graphctx/graph.db");
    assert!(db.is_file());
    (repo, db)
}

/// Commands that open the database, each a different way in.
const OPENING_COMMANDS: &[&[&str]] = &[
    &["entities"],
    &["search", "scale a rectangle"],
    &["status"],
    &["export", "--jsonl"],
    &["cycles"],
    &["index", "--no-history"],
    &["--graph", "cargo", "graph", "export", "--format", "e"],
    &["--graph", "cargo", "session", "show", "--session", "s1"],
    &["--graph", "talk", "history", "show"],
];

/// The failure a user sees for a database that cannot be read: exit 2,
/// the file named, what is wrong, and a command to fix it, which is
/// returned. Never a panic or SQLite's bare words.
fn assert_clear_failure(out: &Output, db: &Path, what: &str) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains(&db.display().to_string()),
        "names the file: {err}"
    );
    assert!(err.contains(what), "says {what:?}: {err}");
    fix_command(&err)
}

/// The command quoted in backticks in an error, whose arguments after
/// `graphctx` have no spaces here.
fn fix_command(err: &str) -> String {
    let start = err
        .find("`graphctx ")
        .unwrap_or_else(|| panic!("no fix command: {err}"));
    let rest = &err[start + 1..];
    rest[..rest.find('`').unwrap()].to_string()
}

/// Run a command as the error quoted it (`graphctx ARGS`), in `dir`.
fn run_quoted(dir: &Path, command: &str) -> Output {
    let args: Vec<&str> = command.split_whitespace().skip(1).collect();
    graphctx(dir, &args, None)
}

fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = graphctx(dir, args, None);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// What a fresh index of the repository lists, to compare a rebuilt code
/// graph with.
fn fresh_entities(repo: &Path) -> String {
    let fresh = tempfile::tempdir().unwrap();
    let db = fresh.path().join("fresh.db");
    let db = db.to_str().unwrap();
    run_ok(repo, &["--db", db, "index", "--no-history"]);
    run_ok(repo, &["--db", db, "entities", "--json"])
}

/// An ontology graph (`cargo`) with a canvas session (`s1`), a canvas
/// conversation graph (`talk`) with a flow conversation: what a rebuild
/// must keep. Returns what each reads back as.
fn add_other_graphs(repo: &Path, db: &Path) -> Vec<String> {
    let cargo = std::fs::read_to_string(fixture("ontology/cargo.e")).unwrap();
    let out = graphctx(
        repo,
        &["--graph", "cargo", "graph", "import", "--format", "e"],
        Some(&cargo),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    run_ok(
        repo,
        &[
            "--graph",
            "cargo",
            "session",
            "set",
            "--session",
            "s1",
            "--zoom",
            "0.8",
            "--select",
            "ManageFleet.UC.001",
        ],
    );
    let canvas = fixture("canvas/seed/conversations/ml.canvas");
    run_ok(
        repo,
        &[
            "canvas",
            "import",
            canvas.to_str().unwrap(),
            "--graph",
            "talk",
        ],
    );
    {
        let store = Store::open(&Location::Sqlite(db.to_path_buf())).unwrap();
        let mut batch = Batch::new();
        let messages = [
            (
                "user".to_string(),
                "add a cache in front of the API".to_string(),
            ),
            ("assistant".to_string(), "added node Cache".to_string()),
        ];
        graphctx::flow::history::queue(&mut batch, "talk", 0, &messages);
        store.apply(batch).unwrap();
    }
    other_graphs(repo)
}

fn other_graphs(repo: &Path) -> Vec<String> {
    [
        &["--graph", "cargo", "graph", "export", "--format", "e"][..],
        &["--graph", "cargo", "session", "show", "--session", "s1"],
        &[
            "query",
            "--json",
            "?[id, kind, name] := *node{graph: 'talk', id, kind, name}",
        ],
        &[
            "query",
            "--json",
            "?[src, rel, dst] := *edge{graph: 'talk', src, rel, dst}",
        ],
        &["--graph", "talk", "history", "show", "--json"],
    ]
    .iter()
    .map(|args| run_ok(repo, args))
    .collect()
}

/// Files beside the database whose names contain `infix`.
fn beside(db: &Path, infix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(db.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(infix))
        .collect();
    found.sort();
    found
}

#[test]
fn a_truncated_database_names_itself_and_the_rebuild_that_fixes_it() {
    let (repo, db) = indexed_repo();
    add_other_graphs(repo.path(), &db);
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let mut fix = String::new();
    for args in OPENING_COMMANDS {
        let out = graphctx(repo.path(), args, None);
        fix = assert_clear_failure(&out, &db, "truncated");
        assert!(fix.contains("index --rebuild"), "{args:?}: {fix}");
    }
    // The command the error names fixes it.
    let out = run_quoted(repo.path(), &fix);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    assert!(!beside(&db, ".salvage-").is_empty(), "{}", stderr(&out));
    assert_eq!(
        run_ok(repo.path(), &["entities", "--json"]),
        fresh_entities(repo.path())
    );
}

#[test]
fn a_garbage_file_is_refused_clearly_and_the_rebuild_says_nothing_could_be_saved() {
    let (repo, db) = indexed_repo();
    let garbage: Vec<u8> = (0..200_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(&db, garbage).unwrap();
    let mut fix = String::new();
    for args in OPENING_COMMANDS {
        let out = graphctx(repo.path(), args, None);
        fix = assert_clear_failure(&out, &db, "not a SQLite database");
    }
    let out = run_quoted(repo.path(), &fix);
    let err = stderr(&out);
    // Done, with something to look at: the old file's contents are lost.
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("could not be saved"), "{err}");
    let salvage = beside(&db, ".salvage-");
    assert_eq!(salvage.len(), 1, "{err}");
    assert!(err.contains(&salvage[0].display().to_string()), "{err}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&salvage[0]).unwrap()).unwrap();
    assert!(saved["unreadable"]["*"].is_string(), "{saved}");
    // The damaged file is kept aside, byte for byte, and the new one works.
    assert_eq!(beside(&db, ".damaged-").len(), 1);
    assert_eq!(
        run_ok(repo.path(), &["entities", "--json"]),
        fresh_entities(repo.path())
    );
}

/// SQLite's page size and the page numbers of the last leaf of CozoDB's
/// table, reached by the right-most child of each interior page: the
/// rows with the greatest keys, those of the relation made last (a code
/// relation: every relation made after schema 10 is one).
fn last_leaf_page(db: &Path) -> (u64, u64) {
    let conn = sqlite::Connection::open(db).unwrap();
    let mut root = 0u64;
    conn.iterate(
        "SELECT rootpage FROM sqlite_master WHERE name = 'cozo'",
        |row| {
            root = row[0].1.unwrap().parse().unwrap();
            true
        },
    )
    .unwrap();
    drop(conn);
    let bytes = std::fs::read(db).unwrap();
    let page_size = u64::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    let mut page = root;
    loop {
        let start = ((page - 1) * page_size) as usize + if page == 1 { 100 } else { 0 };
        match bytes[start] {
            0x02 => {
                let at = start + 8;
                page = u64::from(u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()));
            }
            0x0a => return (page_size, page),
            other => panic!("page {page} is of type {other:#x}"),
        }
    }
}

#[test]
fn a_damaged_page_is_never_a_panic_and_the_rebuild_saves_what_survived() {
    let (repo, db) = indexed_repo();
    let before = add_other_graphs(repo.path(), &db);
    let (page_size, pages) = {
        let bytes = std::fs::read(&db).unwrap();
        let size = u64::from(u16::from_be_bytes([bytes[16], bytes[17]]));
        (size, bytes.len() as u64 / size)
    };
    // Every page damaged in turn: each command answers or fails clearly.
    for page in 2..=pages {
        let copy = repo.path().join("damaged.db");
        std::fs::copy(&db, &copy).unwrap();
        overwrite_page(&copy, page_size, page);
        for args in [
            &["entities"][..],
            &["search", "scale"],
            &["export", "--jsonl"],
        ] {
            let mut all = vec!["--db", copy.to_str().unwrap()];
            all.extend_from_slice(args);
            let out = graphctx(repo.path(), &all, None);
            if out.status.code() != Some(0) {
                let err = assert_clear_failure(&out, &copy, "cannot be read");
                assert!(err.contains("index --rebuild"), "page {page} {args:?}");
            }
        }
    }
    // A damaged page holding code rows only: the rebuild saves the rest
    // to the salvage file first, and keeps it.
    let (page_size, last) = last_leaf_page(&db);
    overwrite_page(&db, page_size, last);
    let out = graphctx(repo.path(), &["index", "--rebuild", "--no-history"], None);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("was damaged"), "{err}");
    let salvage = beside(&db, ".salvage-");
    assert_eq!(salvage.len(), 1, "{err}");
    assert!(err.contains(&salvage[0].display().to_string()), "{err}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&salvage[0]).unwrap()).unwrap();
    let relations = &saved["relations"];
    let onto = relations["onto_node"]["rows"].as_array().unwrap();
    assert!(
        onto.iter().any(|r| r.to_string().contains("ManageFleet")),
        "{}",
        relations["onto_node"]
    );
    assert!(relations["flow_message"]
        .to_string()
        .contains("add a cache"));
    assert!(
        relations.get("code_entity").is_none(),
        "the code graph is not saved"
    );
    assert_eq!(other_graphs(repo.path()), before);
    assert_eq!(
        run_ok(repo.path(), &["entities", "--json"]),
        fresh_entities(repo.path())
    );
}

/// Fill page `page` (1-based) of the file at `db` with bytes that are no
/// SQLite page.
fn overwrite_page(db: &Path, page_size: u64, page: u64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(db).unwrap();
    f.seek(SeekFrom::Start((page - 1) * page_size)).unwrap();
    let noise: Vec<u8> = (0..page_size)
        .map(|i| (i * 31 % 253) as u8 ^ 0x5a)
        .collect();
    f.write_all(&noise).unwrap();
}

#[test]
fn rebuild_makes_the_code_graph_anew_and_keeps_every_other_graph() {
    let (repo, db) = indexed_repo();
    let before = add_other_graphs(repo.path(), &db);
    // A code graph gone wrong: an entity no source declares.
    run_ok(
        repo.path(),
        &[
            "query",
            "--write",
            "?[graph, id, kind, name, doc] <- [['code', 'bogus', 'function', 'bogus', '']] \
             :put node {graph, id => kind, name, doc}",
        ],
    );
    let out = graphctx(repo.path(), &["index", "--rebuild", "--no-history"], None);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("kept"), "{err}");
    assert!(stdout(&out).contains("entities"), "the index summary");
    assert_eq!(other_graphs(repo.path()), before);
    let entities = run_ok(repo.path(), &["entities", "--json"]);
    assert!(!entities.contains("bogus"));
    assert_eq!(entities, fresh_entities(repo.path()));
    // A sound database needs no salvage; nothing is left beside it.
    assert!(beside(&db, ".salvage-").is_empty());
    assert!(beside(&db, ".rebuild").is_empty());
    assert!(beside(&db, ".damaged-").is_empty());
}

#[test]
fn a_newer_schema_is_never_silently_downgraded() {
    let (repo, db) = indexed_repo();
    let before = add_other_graphs(repo.path(), &db);
    let bump = "?[version, name] <- [[999, 'future']] :put schema_version {version => name}";
    run_ok(repo.path(), &["query", "--write", bump]);
    for args in OPENING_COMMANDS {
        let out = graphctx(repo.path(), args, None);
        let fix = assert_clear_failure(&out, &db, "schema version 999");
        assert!(fix.ends_with("--allow-downgrade"), "{fix}");
    }
    // Without the confirmation, the rebuild is refused and writes nothing.
    let bytes = std::fs::read(&db).unwrap();
    let out = graphctx(repo.path(), &["index", "--rebuild"], None);
    let fix = assert_clear_failure(&out, &db, "refusing to rebuild");
    assert!(fix.ends_with("--allow-downgrade"), "{fix}");
    assert_eq!(std::fs::read(&db).unwrap(), bytes);
    assert!(beside(&db, ".salvage-").is_empty());
    // Confirmed: saved, set aside, rebuilt, the other graphs kept.
    let out = run_quoted(repo.path(), &fix);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("schema version 999"), "{err}");
    assert_eq!(beside(&db, ".salvage-").len(), 1);
    assert_eq!(beside(&db, ".newer-").len(), 1);
    assert_eq!(other_graphs(repo.path()), before);
    let status: serde_json::Value =
        serde_json::from_str(&run_ok(repo.path(), &["status", "--json"])).unwrap();
    assert_eq!(status["schema_version"], schema::latest_version());
}

/// What schema 22 changed, undone (as tests/it/schema.rs undoes it): one
/// `code_file_entity` pair per entity instead of a row per file.
const BEFORE_22: [&str; 4] = [
    ":create code_file_entity { graph: String, file: String, id: String }",
    "?[graph, file, id] := *code_file_entities{graph, file, tails}, tail in tails, \
     id = concat(file, '-', tail) \
     :put code_file_entity { graph, file, id }",
    "::remove code_file_entities",
    "?[version] := *schema_version{version}, version >= 22 :rm schema_version {version}",
];

#[test]
fn killing_a_migration_leaves_the_old_schema_or_the_new_one_and_the_data_intact() {
    // A tree large enough that the migration takes a while.
    let repo = tempfile::tempdir().unwrap();
    copy_dir(&fixture("shapes"), repo.path());
    for i in 0..6 {
        crate::common::copy_own_sources(&repo.path().join(format!("src/copy{i}")));
    }
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.db");
    let pairs = {
        let store = Store::open(&Location::Sqlite(old.clone())).unwrap();
        crate::common::index(&store, repo.path());
        for script in crate::schema::BEFORE_24
            .iter()
            .chain(&crate::schema::BEFORE_23)
            .chain(&BEFORE_22)
        {
            store.write(script, Params::new()).unwrap();
        }
        assert_eq!(schema::current_version(&store).unwrap(), 21);
        store.dump("code_file_entity").unwrap()
    };
    // Everything in the main file, so that a copy of it is the database.
    let conn = sqlite::Connection::open(&old).unwrap();
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(conn);
    // What the migration makes when it is not interrupted.
    let copy_old = |to: &Path| {
        std::fs::copy(&old, to).unwrap();
        let _ = std::fs::remove_file(sidecar(to, "-wal"));
    };
    let reference = dir.path().join("reference.db");
    copy_old(&reference);
    let started = std::time::Instant::now();
    let out = graphctx(
        repo.path(),
        &[
            "--db",
            reference.to_str().unwrap(),
            "query",
            "?[x] := x = 1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let whole = started.elapsed();
    let migrated = crate::common::dump(&Store::open(&Location::Sqlite(reference)).unwrap());

    let (mut old_seen, mut new_seen) = (0, 0);
    for share in [0.1, 0.3, 0.5, 0.7, 0.9] {
        let db = dir.path().join(format!("killed-{share}.db"));
        copy_old(&db);
        let mut child = Command::new(env!("CARGO_BIN_EXE_graphctx"))
            .args(["--db", db.to_str().unwrap(), "query", "?[x] := x = 1"])
            .current_dir(repo.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(whole.mul_f64(share));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        {
            let store = Store::open_unmigrated(&Location::Sqlite(db.clone())).unwrap();
            let relations = store.relations().unwrap();
            let has = |r: &str| relations.iter().any(|n| n == r);
            match schema::current_version(&store).unwrap() {
                21 => {
                    old_seen += 1;
                    assert!(!has("code_file_entities"), "at {share}: a mix");
                    assert_eq!(store.dump("code_file_entity").unwrap(), pairs);
                }
                // Each migration is its own transaction: a kill between
                // two of 22, 23 and 24 leaves the earlier done.
                22..=24 => {
                    new_seen += 1;
                    assert!(!has("code_file_entity"), "at {share}: a mix");
                    assert!(has("code_file_entities"), "at {share}: a mix");
                }
                v => panic!("at {share}: schema version {v}"),
            }
        }
        // Opened again: migrated, and what an uninterrupted migration makes.
        let store = Store::open(&Location::Sqlite(db)).unwrap();
        assert_eq!(
            crate::common::dump(&store),
            migrated,
            "after a kill at {share}"
        );
    }
    eprintln!("kills that found the old schema: {old_seen}, the new one: {new_seen}");
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}
