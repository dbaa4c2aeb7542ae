//! A database file that cannot be read: telling it apart, saying so
//! plainly, and never panicking on it.
//!
//! SQLite reports damage as terse codes ("database disk image is
//! malformed (code 11)"), and CozoDB's SQLite backend unwraps many of its
//! calls, so a damaged page met half-way through a query panics instead
//! of returning an error. A user seeing either has no idea which file is
//! meant or what to do. Three things here turn that into one clear error
//! that names the file, says what is wrong and names the command that
//! fixes it:
//!
//! - [`probe`], before a file is handed to CozoDB: SQLite's header (a
//!   file that is not a database, or shorter than its header says, is
//!   known without reading further) and its schema page;
//! - [`classify`], for every SQLite error a store call returns: damage,
//!   permissions, a full disk and locks each become their own error;
//! - [`guard`], around every call into CozoDB: a panic becomes an error
//!   (classified like any other), and the panic's own message is not
//!   printed (see [`quiet_engine_panics`]).
//!
//! Damage in a page no query reads goes unnoticed until one does; a full
//! check (`PRAGMA integrity_check`, [`check_integrity`]) reads every page
//! and is run by `index --rebuild` only.

use std::io::Read as _;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{StoreError, DB_FILE, STORE_DIR};

/// SQLite's file header starts with these 16 bytes.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// The command that rebuilds the database at `path`, to quote in errors:
/// with the repository's root for a database at its default place
/// (`ROOT/.graphctx/graph.db`), with `--db` anywhere else.
pub fn rebuild_command(path: &str) -> String {
    let p = Path::new(path);
    let root = p
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == STORE_DIR) && p.ends_with(DB_FILE))
        .and_then(Path::parent);
    match root {
        Some(root) if !root.as_os_str().is_empty() => {
            format!(
                "graphctx index --rebuild {}",
                quoted(&root.display().to_string())
            )
        }
        Some(_) => "graphctx index --rebuild".to_string(),
        None => format!("graphctx --db {} index --rebuild REPOSITORY", quoted(path)),
    }
}

/// `text` as one shell word: as it is when that is safe, else in single
/// quotes.
fn quoted(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The error for a database that cannot be read as one.
pub fn damaged(path: &str, what: impl Into<String>) -> StoreError {
    StoreError::Damaged {
        path: path.to_string(),
        what: what.into(),
    }
}

/// Check, without CozoDB, that the file at `path` (which exists and is
/// not empty) is a SQLite database whose schema can be read: SQLite's
/// header, the size the header records (unless a write-ahead log beside
/// the file holds pages not yet copied into it), and the schema page.
pub fn probe(path: &Path) -> Result<(), StoreError> {
    let shown = path.display().to_string();
    let io = |e: std::io::Error| access_io(&shown, e);
    let mut header = Vec::with_capacity(100);
    std::fs::File::open(path)
        .map_err(io)?
        .take(100)
        .read_to_end(&mut header)
        .map_err(io)?;
    if header.len() < SQLITE_MAGIC.len() || &header[..16] != SQLITE_MAGIC {
        return Err(damaged(
            &shown,
            "it is not a SQLite database (its first bytes are not SQLite's header)",
        ));
    }
    if header.len() < 100 {
        return Err(damaged(
            &shown,
            format!(
                "it is truncated ({} bytes, shorter than SQLite's header)",
                header.len()
            ),
        ));
    }
    let len = std::fs::metadata(path).map_err(io)?.len();
    if let Some(expected) = recorded_size(&header) {
        let log = super::sidecar(path, "-wal");
        let log_holds_pages = std::fs::metadata(&log).is_ok_and(|m| m.len() > 0);
        if len < expected && !log_holds_pages {
            return Err(damaged(
                &shown,
                format!("it is truncated ({len} bytes of the {expected} its header records)"),
            ));
        }
    }
    let conn = sqlite::Connection::open(path).map_err(|e| classify(&shown, &e.to_string()))?;
    let mut tables = Vec::new();
    conn.iterate(
        "SELECT name FROM sqlite_master WHERE type = 'table'",
        |row| {
            tables.extend(row.first().and_then(|(_, v)| v.map(str::to_string)));
            true
        },
    )
    .map_err(|e| classify(&shown, &e.to_string()))?;
    if !tables.is_empty() && !tables.iter().any(|t| t == "cozo") {
        return Err(damaged(
            &shown,
            format!(
                "it is a SQLite database but not graphctx's (it has no `cozo` table; tables: {})",
                tables.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The file size SQLite's header records (page size times page count),
/// when the header says the count is current.
fn recorded_size(header: &[u8]) -> Option<u64> {
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536,
        n => u64::from(n),
    };
    let pages = u64::from(be32(28));
    // The count is valid only when written by the version that last
    // changed the file (header offsets 24 and 92 agree).
    (pages > 0 && be32(24) == be32(92)).then_some(page_size * pages)
}

/// SQLite's full check of every page of the database at `path`: `None`
/// when it is sound, else what is wrong (the first problems SQLite lists).
pub fn check_integrity(path: &Path) -> Option<String> {
    if let Err(e) = probe(path) {
        return Some(match e {
            StoreError::Damaged { what, .. } => what,
            other => other.to_string(),
        });
    }
    let conn = match sqlite::Connection::open(path) {
        Ok(c) => c,
        Err(e) => return Some(e.to_string()),
    };
    let mut problems = Vec::new();
    let checked = conn.iterate("PRAGMA integrity_check(5)", |row| {
        problems.extend(row.first().and_then(|(_, v)| v.map(str::to_string)));
        true
    });
    match checked {
        Err(e) => Some(format!("SQLite's check failed: {e}")),
        Ok(()) if problems.iter().all(|p| p == "ok") => None,
        Ok(()) => Some(format!("SQLite's check found: {}", problems.join("; "))),
    }
}

/// The SQLite result code in an error's text: `(code 11)` as the sqlite
/// crate displays it, `code: Some(11)` as it debug-prints it (a panic's
/// message).
fn sqlite_code(text: &str) -> Option<i64> {
    for marker in ["(code ", "code: Some("] {
        if let Some(i) = text.find(marker) {
            let digits: String = text[i + marker.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(code) = digits.parse() {
                return Some(code);
            }
        }
    }
    None
}

/// The error a SQLite failure on the database at `path` is, when it is
/// about the file rather than the query: damage, access, a full disk, a
/// lock. Anything else stays a query error with `text`.
pub fn classify(path: &str, text: &str) -> StoreError {
    known_failure(path, text).unwrap_or_else(|| StoreError::Query(text.to_string()))
}

/// [`classify`], `None` for a failure that is not about the file.
pub fn known_failure(path: &str, text: &str) -> Option<StoreError> {
    let lower = text.to_ascii_lowercase();
    let code = sqlite_code(text);
    // Extended codes carry the primary one in their low byte.
    let primary = code.map(|c| c & 0xff);
    let has = |s: &str| lower.contains(s);
    let access = |what: &str, fix: String| StoreError::Access {
        path: path.to_string(),
        what: what.to_string(),
        fix,
    };
    let dir = Path::new(path)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| ".".to_string(), |d| d.display().to_string());
    let chmod = format!(
        "`chmod u+rw {} && chmod u+rwx {}`",
        quoted(path),
        quoted(&dir)
    );
    if primary == Some(11) || (primary.is_none() && has("malformed")) {
        return Some(damaged(
            path,
            "it is damaged (SQLite: database disk image is malformed)",
        ));
    }
    if primary == Some(26) || (primary.is_none() && has("not a database")) {
        return Some(damaged(
            path,
            "it is not a SQLite database (SQLite: file is not a database)",
        ));
    }
    Some(match primary? {
        8 => access(
            "it is read-only (SQLite could not write it)",
            format!("let this user write it and its directory: {chmod}"),
        ),
        3 | 23 => access(
            "permission denied",
            format!("let this user read and write it: {chmod}"),
        ),
        14 => access(
            "it cannot be opened (a missing directory, or no permission)",
            format!(
                "check the directory and its permissions: `ls -ld {}`",
                quoted(&dir)
            ),
        ),
        13 => access(
            "the disk is full",
            "free space on its disk and run the command again".into(),
        ),
        10 => access(
            "reading or writing it failed (SQLite disk I/O error)",
            format!(
                "check the disk and the file's permissions: `ls -l {}`",
                quoted(path)
            ),
        ),
        5 | 6 => StoreError::Busy(format!(
            "database {path} is locked by another process; wait for it to finish \
             (`graphctx status` lists servers watching it) and run the command again"
        )),
        _ => return None,
    })
}

/// An I/O error on a file of the database at `path` (the file itself, a
/// lock file): permission problems name their fix, others keep their text.
pub fn access_io(path: &str, e: std::io::Error) -> StoreError {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
            known_failure(path, "(code 3)").unwrap_or(StoreError::Io {
                path: path.to_string(),
                source: e,
            })
        }
        _ => StoreError::Io {
            path: path.to_string(),
            source: e,
        },
    }
}

/// Guarded calls into CozoDB running now, in any thread (see
/// [`quiet_engine_panics`]).
static GUARDED: AtomicUsize = AtomicUsize::new(0);

/// Run `call` (a call into CozoDB on the database at `path`), turning a
/// panic into an error: one whose message names a SQLite failure is
/// classified like any; one that does not is damage when SQLite's own
/// check of the file finds some, else a query error with the message.
pub fn guard<T>(path: &Path, call: impl FnOnce() -> T) -> Result<T, StoreError> {
    quiet_engine_panics();
    GUARDED.fetch_add(1, Ordering::SeqCst);
    let result = std::panic::catch_unwind(AssertUnwindSafe(call));
    GUARDED.fetch_sub(1, Ordering::SeqCst);
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".to_string());
        panicked(path, &message)
    })
}

/// The error for a panic of the storage engine with `message`.
fn panicked(path: &Path, message: &str) -> StoreError {
    let shown = path.display().to_string();
    if let Some(known) = known_failure(&shown, message) {
        return known;
    }
    if path.is_file() {
        if let Some(what) = check_integrity(path) {
            return damaged(&shown, format!("it is damaged ({what})"));
        }
    }
    StoreError::Query(format!("the storage engine failed on {shown}: {message}"))
}

/// Install, once, a panic hook that keeps quiet about panics raised in
/// CozoDB's code while a [`guard`]ed call runs (they become errors with a
/// clear message); every other panic is reported as before.
fn quiet_engine_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_engine = info.location().is_some_and(|l| l.file().contains("cozo"));
            if !(in_engine && GUARDED.load(Ordering::SeqCst) > 0) {
                previous(info);
            }
        }));
    });
}

/// Where the file at `path` goes aside, tagged `tag` and the time (UTC,
/// to the second), e.g. `graph.db.damaged-20240102T030405Z`.
pub fn aside(path: &Path, tag: &str) -> PathBuf {
    let stamp = crate::support::time::now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>();
    super::sidecar(path, &format!(".{tag}-{stamp}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_read_from_displayed_and_debug_printed_errors() {
        assert_eq!(
            sqlite_code("database disk image is malformed (code 11)"),
            Some(11)
        );
        assert_eq!(
            sqlite_code("called `Result::unwrap()` on an `Err` value: Error { code: Some(26), message: None }"),
            Some(26)
        );
        assert_eq!(sqlite_code("no code here"), None);
    }

    #[test]
    fn failures_about_the_file_name_it_and_the_fix() {
        let e = classify(
            "/r/.graphctx/graph.db",
            "database disk image is malformed (code 11)",
        );
        let text = e.to_string();
        assert!(matches!(e, StoreError::Damaged { .. }), "{text}");
        assert!(text.contains("/r/.graphctx/graph.db"), "{text}");
        assert!(text.contains("graphctx index --rebuild /r"), "{text}");
        let e = classify("/x/g.db", "attempt to write a readonly database (code 8)");
        assert!(matches!(e, StoreError::Access { .. }));
        assert!(e.to_string().contains("chmod u+rw /x/g.db"), "{e}");
        let e = access_io(
            "/x/g.db.lock",
            std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        );
        assert!(e.to_string().contains("permission denied"), "{e}");
        assert!(matches!(
            classify("/x/g.db", "unknown relation `foo`"),
            StoreError::Query(_)
        ));
    }

    #[test]
    fn the_rebuild_command_names_the_repository_or_the_database() {
        assert_eq!(
            rebuild_command("/home/me/repo/.graphctx/graph.db"),
            "graphctx index --rebuild /home/me/repo"
        );
        assert_eq!(
            rebuild_command("/tmp/my dbs/g.db"),
            "graphctx --db '/tmp/my dbs/g.db' index --rebuild REPOSITORY"
        );
    }
}
