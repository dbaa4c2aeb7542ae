//! When the heap hands freed pages back to the system.
//!
//! The binary allocates with mimalloc, which gives a page it no longer
//! uses back to the system some time after it was freed (`purge_delay`).
//! A page used again is then faulted in and zeroed by the kernel anew. A
//! cold index frees and reuses hundreds of megabytes stage after stage: on
//! a 3,600-file tree, purging 10 ms after a free (mimalloc v2's default)
//! made the kernel's page zeroing 7 % of the run's time. Never purging
//! removed that cost, but a cold index of a 9,400-file tree then ended
//! with every page it had ever used still mapped: 90 MB more peak memory
//! than purging a second after the free, for no time measurably gained.
//! So every command purges after a second (mimalloc v3's default, set
//! here whichever version is linked): pages a stage frees and the next
//! reuses stay mapped, pages nothing reuses go back, and a server's
//! pages go back between saves.
//!
//! mimalloc is built without transparent huge pages (its `no_thp`
//! feature, see Cargo.toml): with them it maps memory in 2 MiB pages and
//! purges only whole ones, so a page of long-lived rows with one freed
//! neighbour stays resident. A first index of the registry tree peaked
//! 25–60 MB higher with them, in no less time.

use std::ffi::{c_int, c_long};

extern "C" {
    /// mimalloc's option setter (the library the binary links for its
    /// allocator and the parsers', see `index::parser_memory`).
    fn mi_option_set(option: c_int, value: c_long);
}

/// `mi_option_purge_delay` in mimalloc's `mi_option_t` (both its v2 and v3
/// headers keep the enum's values, deprecated entries included).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// The delay, in milliseconds.
const PURGE_DELAY_MS: c_long = 1000;

/// Give freed pages back a second after they were freed (see the module
/// docs). Harmless when the process allocates with another allocator (the
/// option is then never read).
pub fn purge_freed_pages_lazily() {
    // SAFETY: `mi_option_set` only stores the value in mimalloc's option
    // table; any thread may call it at any time, and any non-negative
    // delay is valid.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
}
