//! The directory a database's files live in, made on first use.
//!
//! Every file graphctx writes beside a database (the database, its logs,
//! lock files, a build in progress) goes through [`make_dir_of`]. When that
//! directory is a repository's [`STORE_DIR`], it also gets a `.gitignore`
//! holding `*`, as pytest and ruff do for their caches: `graphctx index` in
//! a git repository then leaves `git status` as it was. A `.graphctx/` made
//! by an older graphctx gets one the next time it is used; a `.gitignore`
//! already there (the user's own) is never touched. A database kept
//! anywhere else (`--db PATH`) writes nothing beside it but its own files.

use std::io::Write as _;
use std::path::Path;

use super::{StoreError, STORE_DIR};

/// The ignore file written into a repository's [`STORE_DIR`].
pub const GITIGNORE: &str = ".gitignore";

/// What [`GITIGNORE`] holds: everything in the directory is ignored,
/// itself included.
const IGNORE_EVERYTHING: &str =
    "# Written by graphctx: the index is not part of the repository.\n*\n";

/// Make the directory `path` is in (nothing for a bare file name), with
/// the `.gitignore` of a [`STORE_DIR`] (see the module docs).
pub(crate) fn make_dir_of(path: &Path) -> Result<(), StoreError> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| super::health::access_io(&dir.display().to_string(), e))?;
    if dir.file_name().is_some_and(|n| n == STORE_DIR) {
        write_gitignore(dir);
    }
    Ok(())
}

/// Write `dir/.gitignore` unless a file of that name exists. Best effort:
/// a directory that refuses it (read-only, a full disk) still holds an
/// index, and git showing it is no reason to fail a command.
fn write_gitignore(dir: &Path) {
    let path = dir.join(GITIGNORE);
    // `create_new`: one failing open when the file exists, and never a
    // truncation of a file another process (or the user) just wrote.
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        let _ = file.write_all(IGNORE_EVERYTHING.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_store_directory_gets_an_ignore_file_and_a_user_s_own_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let store_db = dir.path().join(STORE_DIR).join("graph.db");
        make_dir_of(&store_db).unwrap();
        let ignore = dir.path().join(STORE_DIR).join(GITIGNORE);
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), IGNORE_EVERYTHING);

        std::fs::write(&ignore, "graph.db\n").unwrap();
        make_dir_of(&store_db).unwrap();
        assert_eq!(std::fs::read_to_string(&ignore).unwrap(), "graph.db\n");

        let elsewhere = dir.path().join("dbs").join("graph.db");
        make_dir_of(&elsewhere).unwrap();
        assert!(elsewhere.parent().unwrap().is_dir());
        assert!(!elsewhere.parent().unwrap().join(GITIGNORE).exists());
        make_dir_of(Path::new("graph.db")).unwrap();
    }
}
