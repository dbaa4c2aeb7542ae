//! Where tree-sitter's parsers get their memory.
//!
//! tree-sitter is C and allocates with `malloc` unless told otherwise. A
//! cold index parses every file on every core, allocating and freeing
//! millions of tree nodes: with glibc's `malloc` that was about 4 % of a
//! large tree's cold run spent in its free lists (`_int_malloc`,
//! `malloc_consolidate`), and per-thread arenas holding freed memory. The
//! binary already gives Rust's allocations to mimalloc; this gives it the
//! parsers' too.

use std::ffi::c_void;

use libmimalloc_sys::{mi_free, mi_malloc, mi_realloc, mi_zalloc};

unsafe extern "C" fn parser_calloc(count: usize, size: usize) -> *mut c_void {
    match count.checked_mul(size) {
        // SAFETY: mimalloc's allocation functions may be called from any
        // thread with any size.
        Some(bytes) => unsafe { mi_zalloc(bytes) },
        None => std::ptr::null_mut(),
    }
}

/// Make tree-sitter allocate with mimalloc. Must run before the process
/// creates its first parser or tree (memory allocated before would be
/// freed by the wrong allocator), so a binary calls it first thing in
/// `main`; later calls do nothing.
pub fn parsers_use_mimalloc() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: called once, before any tree-sitter object exists (the
        // caller's contract); the four functions are mimalloc's malloc,
        // calloc, realloc and free, which pair with each other.
        unsafe {
            tree_sitter::set_allocator(
                Some(mi_malloc),
                Some(parser_calloc),
                Some(mi_realloc),
                Some(mi_free),
            );
        }
    });
}
