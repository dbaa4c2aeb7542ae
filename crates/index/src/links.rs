//! What resolution gives the writer, whatever the language: a file's
//! links (edges and unresolved references, each counted), how an
//! ambiguous reference is marked, and the references held apart from
//! their extracts until their file is resolved.

use std::collections::BTreeMap;

use crate::model::RawRef;

/// Starts the note on an ambiguous unresolved reference's text:
/// `.fmt() (ambiguous: 2 candidates)`.
pub const AMBIGUOUS_MARK: &str = "(ambiguous: ";

/// Edges and unresolved references produced by the references of one file,
/// each sorted by key. Keys are borrowed from the extracts, which outlive
/// the links: resolving a large repository makes hundreds of thousands of
/// these, held until every row they make is written. Built by a
/// [`LinksBuilder`] and sealed into slices: the registry tree's 1.4 M edges
/// and 0.6 M unresolved references took about 45 MB more as search trees.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FileLinks<'a> {
    /// `(src, rel, dst)` and the number of references that produced it.
    pub edges: Box<[EdgeLink<'a>]>,
    /// `(src, rel, text)` and (first line, count, candidates): candidates
    /// is 0 when nothing matched and the number of equally good matches
    /// when the scope rules could not pick one.
    pub unresolved: Box<[UnresolvedLink<'a>]>,
}

/// An edge of [`FileLinks`]: `(src, rel, dst)` and its weight.
pub type EdgeLink<'a> = ((&'a str, &'static str, &'a str), u32);

/// An unresolved reference of [`FileLinks`]: `(src, rel, text)` and
/// (first line, count, candidates).
pub type UnresolvedLink<'a> = ((&'a str, &'static str, String), (u32, u32, u32));

/// The links of one file while its references are resolved: the same
/// edge or text met again adds to its count.
#[derive(Default)]
pub struct LinksBuilder<'a> {
    edges: BTreeMap<(&'a str, &'static str, &'a str), u32>,
    unresolved: BTreeMap<(&'a str, &'static str, String), (u32, u32, u32)>,
}

impl<'a> LinksBuilder<'a> {
    pub fn edge(&mut self, src: &'a str, rel: &'static str, dst: &'a str) {
        *self.edges.entry((src, rel, dst)).or_insert(0) += 1;
    }

    pub fn unresolved(&mut self, src: &'a str, rel: &'static str, text: String, line: u32) {
        self.ambiguous(src, rel, text, line, 0);
    }

    pub fn ambiguous(&mut self, src: &'a str, rel: &'static str, text: String, line: u32, n: u32) {
        let e = self
            .unresolved
            .entry((src, rel, text))
            .or_insert((line, 0, n));
        e.0 = e.0.min(line);
        e.1 += 1;
        e.2 = e.2.max(n);
    }

    /// The links, in key order.
    pub fn seal(self) -> FileLinks<'a> {
        FileLinks {
            edges: self.edges.into_iter().collect(),
            unresolved: self.unresolved.into_iter().collect(),
        }
    }
}

impl<'a> FileLinks<'a> {
    /// The edges' `(src, rel, dst)`, in order.
    pub fn edge_keys(&self) -> impl Iterator<Item = &(&'a str, &'static str, &'a str)> {
        self.edges.iter().map(|(k, _)| k)
    }

    /// The unresolved references' `(src, rel, text)`, in order.
    pub fn unresolved_keys(&self) -> impl Iterator<Item = &(&'a str, &'static str, String)> {
        self.unresolved.iter().map(|(k, _)| k)
    }

    /// How many unresolved references had more than one candidate.
    pub fn ambiguous_count(&self) -> usize {
        self.unresolved.iter().filter(|(_, u)| u.2 > 1).count()
    }

    /// A fingerprint of the links, to skip rewriting unchanged ones.
    pub fn digest(&self) -> String {
        let mut h = blake3::Hasher::new();
        for ((s, r, d), w) in &self.edges {
            for part in [*s, r, *d, &w.to_string()] {
                h.update(part.as_bytes());
                h.update(&[0]);
            }
            h.update(&[1]);
        }
        h.update(&[2]);
        for ((s, r, t), (l, c, n)) in &self.unresolved {
            for part in [
                *s,
                r,
                t.as_str(),
                &l.to_string(),
                &c.to_string(),
                &n.to_string(),
            ] {
                h.update(part.as_bytes());
                h.update(&[0]);
            }
            h.update(&[1]);
        }
        h.finalize().to_hex()[..32].to_string()
    }
}

/// References held apart from their extracts, by file path: those the
/// symbol table does not read (the language's interface split them off). The links
/// resolved from them borrow nothing of them, so resolution takes them and
/// drops each file's as soon as that file is resolved — on a large tree
/// they are a quarter of what the extracts hold, and held to the end of
/// resolution they were its peak of memory — while the links live on to
/// be written.
pub type RefsApart = BTreeMap<String, HeldRefs>;

/// A file's references held apart: as read, or in their stored form
/// ([`super::lang::Stored::body`]), which a first index keeps from
/// the parse instead of the references themselves (on a large tree a
/// tenth of their size in memory) and decodes when the file is resolved.
#[derive(Debug, Clone)]
pub enum HeldRefs {
    Refs(Vec<RawRef>),
    Packed(Vec<u8>),
}

impl HeldRefs {
    /// The references, decoded when packed (`decode_body` is the
    /// language's, see [`super::lang::Language::decode_body`]).
    pub fn into_refs(self, decode_body: impl Fn(&[u8]) -> Option<Vec<RawRef>>) -> Vec<RawRef> {
        match self {
            HeldRefs::Refs(refs) => refs,
            HeldRefs::Packed(bytes) => Self::unpacked(&bytes, decode_body),
        }
    }

    /// The references, copied or decoded.
    pub fn to_refs(&self, decode_body: impl Fn(&[u8]) -> Option<Vec<RawRef>>) -> Vec<RawRef> {
        match self {
            HeldRefs::Refs(refs) => refs.clone(),
            HeldRefs::Packed(bytes) => Self::unpacked(bytes, decode_body),
        }
    }

    /// The packed form is made by this process from references it holds,
    /// so it reads back.
    fn unpacked(bytes: &[u8], decode_body: impl Fn(&[u8]) -> Option<Vec<RawRef>>) -> Vec<RawRef> {
        let refs = decode_body(bytes);
        debug_assert!(refs.is_some(), "a packed body this process made reads back");
        refs.unwrap_or_default()
    }
}
