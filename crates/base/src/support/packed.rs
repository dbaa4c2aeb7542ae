//! Stored blobs compressed with zstd: a file's interface, its other
//! references, its edge list. Their names repeat from entry to entry, so
//! a blob shrinks about tenfold, and decompressing costs less than
//! decoding what it holds.

/// zstd's fastest level: compressing runs on the indexing threads, for
/// every file an index run writes.
const LEVEL: i32 = 1;

/// `bytes` compressed, by this thread's compressor: one context per
/// thread, not one allocated for every blob.
pub fn pack(bytes: &[u8]) -> Vec<u8> {
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
            .and_then(|c| c.compress(bytes).ok())
            .or_else(|| zstd::bulk::compress(bytes, LEVEL).ok())
            .unwrap_or_default();
        // The buffer was sized for the worst case (the input's size and
        // more); a blob may be held until its batch lands.
        packed.shrink_to_fit();
        packed
    })
}

/// What [`pack`] compressed; `None` when `bytes` is not a zstd frame (a
/// blob from before they were compressed, or damaged).
///
/// Decompressed by this thread's decompressor: a new one allocates and
/// clears its window (about 130 KB) for every blob, and a run that loads
/// every file's interface decompresses thousands. [`pack`]'s frames say
/// how large they decompress to; a frame that does not (or claims more
/// than any blob is) is streamed.
pub fn unpack(bytes: &[u8]) -> Option<Vec<u8>> {
    /// No stored blob comes near this: a larger claim is damage.
    const LARGEST: u64 = 1 << 30;
    thread_local! {
        static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let size = match zstd::zstd_safe::get_frame_content_size(bytes) {
        Ok(Some(size)) if size <= LARGEST => size as usize,
        _ => return zstd::stream::decode_all(bytes).ok(),
    };
    let bulk = DECOMPRESSOR.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = zstd::bulk::Decompressor::new().ok();
        }
        let out = slot.as_mut()?.decompress(bytes, size).ok()?;
        (out.len() == size).then_some(out)
    });
    // Anything the one-shot path refuses (several frames, damage) gets
    // the streaming decoder's answer.
    bulk.or_else(|| zstd::stream::decode_all(bytes).ok())
}

/// Text below this many bytes is stored as it is: a zstd frame's own
/// header and block headers would eat what compressing it saves.
const SMALL_TEXT: usize = 96;

/// The stored form of a text column that is mostly repeated names (an
/// entity's outgoing edges, a word's posting list): compressed when that
/// makes it smaller, else its UTF-8 bytes. The two cannot be confused: a
/// zstd frame starts with `28 B5 2F FD`, and `B5` cannot follow `(` in
/// UTF-8.
pub fn pack_text(text: String) -> Vec<u8> {
    if text.len() < SMALL_TEXT {
        return text.into_bytes();
    }
    let packed = pack(text.as_bytes());
    if packed.is_empty() || packed.len() >= text.len() {
        return text.into_bytes();
    }
    packed
}

/// What [`pack_text`] stored; `None` when it is neither a zstd frame of
/// UTF-8 text nor UTF-8 text (damaged).
pub fn unpack_text(bytes: &[u8]) -> Option<std::borrow::Cow<'_, str>> {
    const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
    if bytes.starts_with(&ZSTD_MAGIC) {
        let raw = unpack(bytes)?;
        return String::from_utf8(raw).ok().map(std::borrow::Cow::Owned);
    }
    std::str::from_utf8(bytes)
        .ok()
        .map(std::borrow::Cow::Borrowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_small_and_large_and_damage_is_none() {
        let small = "[]".to_string();
        assert_eq!(pack_text(small.clone()), small.as_bytes());
        assert_eq!(unpack_text(&pack_text(small.clone())).unwrap(), small);
        let large = "1 4 20 serde/src/de/mod.rs-Visitor\n".repeat(50);
        let packed = pack_text(large.clone());
        assert!(packed.len() < large.len() / 4, "{} bytes", packed.len());
        assert_eq!(unpack_text(&packed).unwrap(), large);
        let mut damaged = packed.clone();
        damaged.truncate(packed.len() / 2);
        assert!(unpack_text(&damaged).is_none());
        assert!(unpack_text(&[0xff, 0xfe]).is_none());
    }

    #[test]
    fn blobs_round_trip_through_one_thread_s_decompressor() {
        let blobs: Vec<Vec<u8>> = (0..20)
            .map(|i| {
                format!("entity {i} of src/lib.rs ")
                    .repeat(i * 40)
                    .into_bytes()
            })
            .collect();
        for blob in &blobs {
            assert_eq!(unpack(&pack(blob)).as_deref(), Some(blob.as_slice()));
        }
        // Two frames back to back, and a frame without its size (as a
        // streaming encoder writes it), still decompress whole.
        let (a, b) = (pack(&blobs[3]), pack(&blobs[5]));
        let both: Vec<u8> = a.iter().chain(&b).copied().collect();
        let whole: Vec<u8> = blobs[3].iter().chain(&blobs[5]).copied().collect();
        assert_eq!(unpack(&both), Some(whole));
        let streamed = zstd::stream::encode_all(&blobs[7][..], 1).unwrap();
        assert_eq!(unpack(&streamed).as_deref(), Some(blobs[7].as_slice()));
        let mut cut = pack(&blobs[9]);
        cut.truncate(cut.len() - 3);
        assert_eq!(unpack(&cut), None);
    }
}
