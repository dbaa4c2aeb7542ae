//! The stat shortcut: settled files are trusted by size, modification time
//! and layout; anything that moves one of them is read again.

use std::fs::{File, FileTimes};
use std::path::Path;
use std::time::{Duration, SystemTime};

use graphctx::index::pipeline::stale_files;
use graphctx::index::{index_repository, IndexOptions};
use graphctx::store::Store;

fn write(root: &Path, rel: &str, text: &str, age: Duration) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    set_age(root, rel, age);
}

fn set_age(root: &Path, rel: &str, age: Duration) {
    let when = SystemTime::now() - age;
    File::options()
        .write(true)
        .open(root.join(rel))
        .unwrap()
        .set_times(FileTimes::new().set_modified(when))
        .unwrap();
}

fn names(store: &Store) -> Vec<String> {
    let mut names: Vec<String> = store
        .dump("node")
        .unwrap()
        .iter()
        .map(|r| r[3].get_str().unwrap_or("").to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn settled_files_are_trusted_by_size_time_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let hour = Duration::from_secs(3600);
    write(root, "Cargo.toml", "[package]\nname = \"demo\"\n", hour);
    write(
        root,
        "src/lib.rs",
        "pub fn a() {}\npub fn b() { a(); }\n",
        hour,
    );
    write(root, "src/main.rs", "fn main() {}\n", hour);
    let store = Store::memory().unwrap();
    let opts = IndexOptions {
        history: false,
        ..IndexOptions::default()
    };

    let first = index_repository(&store, root, &opts).unwrap();
    assert_eq!(first.files_parsed, 2);
    assert_eq!(store.dump("code_file_stat").unwrap().len(), 2);
    let again = index_repository(&store, root, &opts).unwrap();
    assert_eq!(again.files_parsed, 0);

    // Same size, same time (as a copy that keeps times could leave it):
    // trusted without reading, so the change is not seen.
    let lib = root.join("src/lib.rs");
    let kept = std::fs::metadata(&lib).unwrap().modified().unwrap();
    std::fs::write(&lib, "pub fn z() {}\npub fn b() { z(); }\n").unwrap();
    File::options()
        .write(true)
        .open(&lib)
        .unwrap()
        .set_times(FileTimes::new().set_modified(kept))
        .unwrap();
    let trusted = index_repository(&store, root, &opts).unwrap();
    assert_eq!(trusted.files_parsed, 0);
    assert!(stale_files(&store, root, "code").unwrap().is_empty());
    assert!(names(&store).contains(&"a".to_string()));

    // An edit gives the file a new time: read, parsed, and (still
    // settling) not vouched for until it is older.
    set_age(root, "src/lib.rs", Duration::ZERO);
    assert_eq!(stale_files(&store, root, "code").unwrap(), ["src/lib.rs"]);
    let edited = index_repository(&store, root, &opts).unwrap();
    assert_eq!(edited.files_parsed, 1);
    assert!(names(&store).contains(&"z".to_string()));
    assert_eq!(store.dump("code_file_stat").unwrap().len(), 1);
    set_age(root, "src/lib.rs", hour);
    index_repository(&store, root, &opts).unwrap();
    assert_eq!(store.dump("code_file_stat").unwrap().len(), 2);

    // A new target changes the layout every hash covers: every file is
    // read again although none of them changed.
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"demo\"\n\n[[bin]]\nname = \"other\"\npath = \"src/main.rs\"\n",
        hour,
    );
    let relaid = index_repository(&store, root, &opts).unwrap();
    assert_eq!(relaid.files_parsed, 2);

    // A deleted file leaves no stat row behind.
    std::fs::remove_file(root.join("src/main.rs")).unwrap();
    index_repository(&store, root, &opts).unwrap();
    let stats = store.dump("code_file_stat").unwrap();
    assert_eq!(stats.len(), 1);
    assert_eq!(stats[0][1].get_str(), Some("src/lib.rs"));
}
