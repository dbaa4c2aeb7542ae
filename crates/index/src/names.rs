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

use std::hash::Hash;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::model::{Entity, FileExtract, Recv, UseDecl};

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
        Recv::Literal(inner, keys) => {
            out.extend(keys.iter().map(|s| hash(s)));
            add_recv_idents(out, inner);
        }
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

/// The names an edit touches through its entities: those whose entities
/// (the ones `counted` keeps: what lookups can find) differ in number,
/// order or facts (`same`) between two extracts of one file, and those
/// only the later has.
pub fn touched_entities(
    before: &FileExtract,
    after: &FileExtract,
    same: impl Fn(&Entity, &Entity) -> bool,
    counted: impl Fn(&Entity) -> bool,
) -> HashSet<Name> {
    let (old, new) = (by_name(before, &counted), by_name(after, &counted));
    let mut touched = HashSet::default();
    for (name, olds) in &old {
        let kept = new.get(name).is_some_and(|news| {
            news.len() == olds.len()
                && olds
                    .iter()
                    .zip(news)
                    .all(|(&a, &b)| same(&before.entities[a], &after.entities[b]))
        });
        if !kept {
            touched.insert(hash(name));
        }
    }
    for name in new.keys().filter(|n| !old.contains_key(*n)) {
        touched.insert(hash(name));
    }
    touched
}

/// The indexes of a file's entities `counted` keeps, by name, in order.
fn by_name<'x>(
    x: &'x FileExtract,
    counted: &impl Fn(&Entity) -> bool,
) -> HashMap<&'x str, Vec<usize>> {
    let mut m: HashMap<&str, Vec<usize>> = HashMap::default();
    for (i, e) in x.entities.iter().enumerate().filter(|(_, e)| counted(e)) {
        m.entry(e.name.as_str()).or_default().push(i);
    }
    m
}

/// The imports and exports an edit changed, as `key` tells them apart:
/// those only one side has — every one when the order of those both keep
/// differs, as a later binding of a name wins over an earlier one.
/// `None` when a glob is among them: what it binds no list bounds.
pub fn changed_uses<'u, K: Eq + Hash + Copy>(
    before: &'u [UseDecl],
    after: &'u [UseDecl],
    key: impl Fn(&'u UseDecl) -> K,
) -> Option<Vec<&'u UseDecl>> {
    let keys_before: Vec<K> = before.iter().map(&key).collect();
    let keys_after: Vec<K> = after.iter().map(&key).collect();
    if keys_before == keys_after {
        return Some(Vec::new());
    }
    let set_before: HashSet<K> = keys_before.iter().copied().collect();
    let set_after: HashSet<K> = keys_after.iter().copied().collect();
    let kept = |keys: &[K], other: &HashSet<K>| -> Vec<K> {
        keys.iter().filter(|k| other.contains(k)).copied().collect()
    };
    let reordered = kept(&keys_before, &set_after) != kept(&keys_after, &set_before);
    let mut out = Vec::new();
    for u in before.iter().chain(after) {
        let k = key(u);
        if !reordered && set_before.contains(&k) && set_after.contains(&k) {
            continue;
        }
        if u.glob {
            return None;
        }
        out.push(u);
    }
    Some(out)
}

/// What a file's interface tells the spreading of touched names: each
/// entity's name with the names `declared` finds in its declared types;
/// each import or export that binds (`bound`) a name other than the one
/// it brings.
pub fn spread_facts_of(
    x: &FileExtract,
    declared: impl Fn(&mut HashSet<Name>, &Entity),
    bound: impl Fn(&UseDecl) -> Option<&str>,
) -> SpreadFacts {
    let mut facts = SpreadFacts::default();
    let mut mentions = HashSet::default();
    for e in &x.entities {
        declared(&mut mentions, e);
        if !mentions.is_empty() {
            facts
                .typed
                .push((hash(&e.name), mentions.drain().collect()));
        }
    }
    for u in &x.uses {
        if let (Some(b), Some(brought)) = (bound(u), u.path.last()) {
            if b != brought {
                facts.bindings.push((hash(b), hash(brought)));
            }
        }
    }
    facts
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
