//! Stored blobs compressed with zstd: a file's interface, its other
//! references, its edge list. Their names repeat from entry to entry, so
//! a blob shrinks about tenfold, and decompressing costs less than
//! decoding what it holds.

/// zstd's fastest level: compressing runs on the indexing threads, for
/// every file an index run writes.
const LEVEL: i32 = 1;

/// `bytes` compressed, by this thread's compressor: one context per
/// thread, not one allocated for every blob.
pub fn pack(bytes: Vec<u8>) -> Vec<u8> {
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Compressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    COMPRESSOR.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = zstd::bulk::Compressor::new(LEVEL).ok();
        }
        let mut packed = slot
            .as_mut()
            .and_then(|c| c.compress(&bytes).ok())
            .or_else(|| zstd::bulk::compress(&bytes, LEVEL).ok())
            .unwrap_or_default();
        // The buffer was sized for the worst case (the input's size and
        // more); a blob may be held until its batch lands.
        packed.shrink_to_fit();
        packed
    })
}

/// What [`pack`] compressed; `None` when `bytes` is not a zstd frame (a
/// blob from before they were compressed, or damaged).
pub fn unpack(bytes: &[u8]) -> Option<Vec<u8>> {
    zstd::stream::decode_all(bytes).ok()
}
