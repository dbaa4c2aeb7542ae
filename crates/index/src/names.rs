//! Names: how an interface edit finds the files it can reach, whatever
//! the language.
//!
//! A file's links can change only when a lookup it makes reaches a part
//! of the symbol table that changed, and every lookup starts from a name
//! the file spells. So each file's mentioned names are stored (as hashes,
//! [`encode`]); an interface edit collects the names it touches (the
//! language's [`super::lang::Language::changed_names`]), spreads them
//! through every file's [`SpreadFacts`] ([`NameReach`]), and re-resolves
//! the files that mention one. A hash collision only adds a file to
//! re-resolve, never leaves one out.

mod reach;
pub use reach::NameReach;

use rustc_hash::FxHashSet as HashSet;

use crate::model::Recv;

/// A hashed identifier.
pub type Name = u32;

/// FNV-1a: stable across processes and versions (the hashes are stored).
pub fn hash(ident: &str) -> Name {
    let mut h: u32 = 0x811c_9dc5;
    for b in ident.as_bytes() {
        h ^= u32::from(*b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Every identifier in `text`, hashed, into `out` (`Vec<Option<T>>`
/// gives `Vec`, `Option`, `T`; `Optional["a.Foo"]` gives `Optional`, `a`,
/// `Foo`).
pub fn add_idents(out: &mut HashSet<Name>, text: &str) {
    out.extend(
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|s| !s.is_empty())
            .map(hash),
    );
}

/// The names a receiver's chain spells: its types' identifiers, its
/// calls' paths, its methods and fields.
pub fn add_recv_idents(out: &mut HashSet<Name>, r: &Recv) {
    match r {
        Recv::Type(t) => add_idents(out, t),
        Recv::Call(path) => out.extend(path.iter().map(|s| hash(s))),
        Recv::Method(inner, name) | Recv::Field(inner, name) => {
            out.insert(hash(name));
            add_recv_idents(out, inner);
        }
        Recv::Try(inner) | Recv::Element(inner) | Recv::Arg(inner, _) | Recv::Param(inner, _) => {
            add_recv_idents(out, inner)
        }
        Recv::Value(path) => out.extend(path.iter().map(|s| hash(s))),
    }
}

/// Spread `touched` through these files' facts until nothing more is
/// touched (one pass of a [`NameReach`] made for it; a process that
/// spreads edit after edit keeps one instead).
pub fn spread_through(touched: &mut HashSet<Name>, facts: impl Iterator<Item = SpreadFacts>) {
    let mut reach = NameReach::default();
    for (i, f) in facts.enumerate() {
        reach.set_facts(&i.to_string(), &f);
    }
    reach.spread(touched, &[], &[]);
}

/// A file's mentioned names as stored: little-endian `u32`s.
pub fn encode(names: &[Name]) -> Vec<u8> {
    names.iter().flat_map(|n| n.to_le_bytes()).collect()
}

/// The stored form read back; `None` for bytes of another shape.
pub fn decode(bytes: &[u8]) -> Option<Vec<Name>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// What one file's interface tells a language's spreading of touched names: each entity's name with
/// the names its declared types mention, and each `use` that binds a name
/// other than the one it imports. A server keeps these per file, so that
/// spreading an edit's names does not read every signature again.
#[derive(Debug, Clone, Default)]
pub struct SpreadFacts {
    /// An entity's name and the names its declared types mention.
    pub typed: Vec<(Name, Vec<Name>)>,
    /// A name a declaration binds and the name it imports.
    pub bindings: Vec<(Name, Name)>,
}

impl SpreadFacts {
    /// The spread's edges: a type's mention to the entity declared with
    /// it, an imported name to the name a declaration binds.
    pub fn edges(&self) -> impl Iterator<Item = (Name, Name)> + '_ {
        let typed = self
            .typed
            .iter()
            .flat_map(|(name, mentions)| mentions.iter().map(move |m| (*m, *name)));
        let bound = self
            .bindings
            .iter()
            .map(|&(bound, imported)| (imported, bound));
        typed.chain(bound)
    }
}
