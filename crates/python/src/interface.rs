//! A Python file's interface: what other files' resolution reads of it,
//! and the stored forms of its extract.
//!
//! The table ([`super::table`]) reads a file's entities (names, kinds,
//! parents, signatures: hints, return annotations, bases, decorators,
//! `__all__`), its imports and its context; never its references, lines
//! or docstrings. So every reference is the body's, and an edit that
//! leaves entities and imports as they were re-resolves that file alone.

pub use crate::index::refless::{
    decode_body, encode, interface_copy, join, same_entity_facts, same_interface, take_apart,
};
use crate::model::FileExtract;

/// The interface stored by [`encode`], its entities this language's.
pub fn decode_interface(bytes: &[u8]) -> Option<FileExtract> {
    crate::index::refless::decode_interface(bytes, super::ID)
}
