//! Whether the heap hands freed pages back to the system.
//!
//! The binary allocates with mimalloc, which gives pages it no longer uses
//! back to the system 10 ms after they were freed (`purge_delay`). A page
//! used again is then faulted in and zeroed by the kernel anew. A cold
//! index frees and reuses hundreds of megabytes stage after stage: on a
//! 3,600-file tree the kernel's page zeroing was 7 % of the run's time,
//! and keeping the freed pages made the run about 5 % faster for 1–2 %
//! more peak memory. A command that ends when its work is done keeps them
//! ([`keep_freed_pages`]); a server does not, so that what a run freed
//! goes back to the system between saves ([`return_freed_pages`], the
//! default, for a process that measures both).

use std::ffi::{c_int, c_long};

extern "C" {
    /// mimalloc's option setter (the library the binary links for its
    /// allocator and the parsers', see `index::rust::parser_memory`).
    fn mi_option_set(option: c_int, value: c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (both its v2 and v3
/// headers keep the enum's values, deprecated entries included).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// mimalloc's default `purge_delay`, in milliseconds.
const DEFAULT_PURGE_DELAY_MS: c_long = 10;

/// Never give freed pages back to the system: for a process that exits
/// when its one command is done. Harmless when the process allocates with
/// another allocator (the option is then never read).
pub fn keep_freed_pages() {
    // SAFETY: `mi_option_set` only stores the value in mimalloc's option
    // table; any thread may call it at any time, and -1 is a documented
    // value of `purge_delay` ("no purging at all").
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// Give freed pages back to the system after mimalloc's default delay,
/// as a server does (the setting of a process that never called
/// [`keep_freed_pages`]).
pub fn return_freed_pages() {
    // SAFETY: as in `keep_freed_pages`; 10 is the option's default.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, DEFAULT_PURGE_DELAY_MS) }
}
