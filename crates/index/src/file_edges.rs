//! A file's edges as one stored row (`code_file_edges`).
//!
//! An index run that resolves a file again diffs its new links against
//! the edges the file produced before, to write only what changed. An
//! index of every edge by its origin file would answer that, but it
//! repeats each edge's whole key a third time: on a large tree a third of
//! the edges' bytes and writes, for a read only index runs make. A file's
//! edges are instead kept as one list in one row, written whenever the
//! file's edges change: `(src, rel, dst, weight)` in key order, as
//! MessagePack, compressed ([`crate::support::packed`]; the keys share
//! long prefixes, so a list shrinks about tenfold).

use crate::support::packed::{pack, unpack};

/// One stored edge of a file: `(src, rel, dst, weight)`.
pub type Edge = (String, String, String, f64);

/// The stored form of a file's edges (given in key order).
pub fn encode<'e>(edges: impl Iterator<Item = (&'e str, &'e str, &'e str, f64)>) -> Vec<u8> {
    let list: Vec<(&str, &str, &str, f64)> = edges.collect();
    pack(&rmp_serde::to_vec(&list).unwrap_or_default())
}

/// A stored list; `None` when it cannot be read (damaged, or of a format
/// this version does not know): the caller then finds the file's edges
/// the slow way.
pub fn decode(bytes: &[u8]) -> Option<Vec<Edge>> {
    rmp_serde::from_slice(&unpack(bytes)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_back_as_written() {
        let edges = [
            ("c::a", "calls", "c::b", 2.0),
            ("c::a", "contains", "c::a::x", 1.0),
            ("c::b", "references", "c::T", 1.0),
        ];
        let bytes = encode(edges.iter().copied());
        let back = decode(&bytes).expect("readable");
        let back: Vec<(&str, &str, &str, f64)> = back
            .iter()
            .map(|(s, r, d, w)| (s.as_str(), r.as_str(), d.as_str(), *w))
            .collect();
        assert_eq!(back, edges);
        assert_eq!(decode(&encode(std::iter::empty())), Some(vec![]));
    }

    #[test]
    fn a_damaged_list_is_not_read() {
        let mut bytes = encode([("a", "calls", "b", 1.0)].into_iter());
        assert_eq!(decode(&bytes[..bytes.len() / 2]), None);
        bytes.truncate(0);
        assert_eq!(decode(&bytes), None);
        assert_eq!(decode(b"not a list"), None);
    }
}
