//! Prepared statements kept for reuse (a graphctx patch to this crate).
//!
//! CozoDB prepares a new statement for every range scan of its SQLite
//! storage: a query that looks up a thousand keys parses and plans the same
//! SQL a thousand times, about a third of such a query's time. Here a
//! statement, when dropped, is reset and kept by its connection instead of
//! finalised, and the next `prepare` of the same SQL takes it back. A
//! statement reset and with its bindings cleared behaves as a freshly
//! prepared one (SQLite re-prepares it by itself if the schema changed).
//!
//! Several statements of one SQL text may be alive at once (nested scans):
//! each gets its own, and up to [`IDLE_PER_SQL`] of them are kept idle.

use std::collections::HashMap;
use std::sync::Mutex;

/// Idle statements kept per SQL text.
const IDLE_PER_SQL: usize = 8;
/// Distinct SQL texts kept; statements of others are finalised as before.
const MAX_SQL_TEXTS: usize = 64;

/// A prepared statement not in use. Only its connection's cache holds it.
struct Idle(*mut ffi::sqlite3_stmt);

// The statements of a connection opened without `SQLITE_OPEN_NOMUTEX`
// may be used from any thread (SQLite serialises them); a connection that
// is not thread-safe never leaves its thread, nor do its statements.
unsafe impl Send for Idle {}

/// The idle statements of one connection, by SQL text.
#[derive(Default)]
pub(crate) struct StatementCache {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    idle: HashMap<String, Vec<Idle>>,
    /// Set when the connection closes: statements dropped later (which
    /// only unsafe code can arrange) are finalised, not kept.
    closed: bool,
}

impl StatementCache {
    /// An idle statement prepared from `sql`, if one is kept.
    pub(crate) fn take(&self, sql: &str) -> Option<*mut ffi::sqlite3_stmt> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.idle.get_mut(sql)?.pop().map(|idle| idle.0)
    }

    /// Keep `raw`, no longer used, for the next `prepare` of its SQL; it
    /// is finalised when there is no room.
    ///
    /// # Safety
    /// `raw` is a live statement of this cache's connection, and nothing
    /// else uses it afterwards.
    pub(crate) unsafe fn put(&self, raw: *mut ffi::sqlite3_stmt) {
        ffi::sqlite3_reset(raw);
        ffi::sqlite3_clear_bindings(raw);
        let sql = ffi::sqlite3_sql(raw);
        let sql = match sql.is_null() {
            true => None,
            false => std::ffi::CStr::from_ptr(sql).to_str().ok(),
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let kept = match sql {
            Some(sql) if !state.closed => {
                let room = state.idle.contains_key(sql) || state.idle.len() < MAX_SQL_TEXTS;
                match state.idle.get_mut(sql) {
                    Some(list) if list.len() < IDLE_PER_SQL => {
                        list.push(Idle(raw));
                        true
                    }
                    None if room => {
                        state.idle.insert(sql.to_string(), vec![Idle(raw)]);
                        true
                    }
                    _ => false,
                }
            }
            _ => false,
        };
        drop(state);
        if !kept {
            ffi::sqlite3_finalize(raw);
        }
    }

    /// Finalise every idle statement: the connection is closing (SQLite
    /// does not close a connection that has unfinalised statements).
    pub(crate) fn close(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.closed = true;
        for (_, list) in state.idle.drain() {
            for idle in list {
                unsafe { ffi::sqlite3_finalize(idle.0) };
            }
        }
    }
}
