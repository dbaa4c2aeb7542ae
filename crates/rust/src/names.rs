//! Who can be affected by an interface change: the names a file mentions,
//! the names an interface change touches, and the files in between.
//!
//! Resolution (see [`super::resolve`]) is a pure function of one symbol
//! table (every file's interface) and the file being resolved. A file's
//! links can only change when a lookup it makes reaches a part of the
//! table that changed. Every lookup starts from a name the file's own
//! extract spells — a path segment, a method or field name, a type as
//! written, an owner, a module — and goes on only through other entities'
//! declared types (a call's return type, a field's type, an alias), `use`
//! bindings and impl blocks, all found by name again.
//!
//! So when interfaces change, the index collects the names they touch
//! ([`changed`]: items added, removed or changed, an impl block by its
//! owner and trait; impl blocks placed or removed; names bound by `use`),
//! spreads
//! them through the table ([`spread`]: an entity whose declared types
//! mention a touched name is touched too, as is a name a `use` binds to
//! one), and re-resolves the edited files plus every file that mentions a
//! touched name ([`mentioned`], stored per file). Changes this cannot
//! bound — `mod` declarations, a file's crate or module, glob or re-export
//! `use`s whose reach is a whole module — return `None`, and every file is
//! resolved.
//!
//! Names are kept as 32-bit hashes of identifiers: a collision only adds a
//! file to re-resolve, never leaves one out.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;
use rustc_hash::FxHashSet as HashSet;

use crate::model::{Entity, EntityKind, FileExtract, RawRef, Signature, UseDecl};

use super::interface::{is_interface_ref, same_entity_facts};

use crate::index::names::{
    add_idents, add_recv_idents, hash, spread_facts_of, spread_through, Name, SpreadFacts,
};

/// The names a declaration's types mention (not its field or parameter
/// names: a struct with a field called `options` does not depend on a
/// function called `options`).
fn type_idents(out: &mut HashSet<Name>, s: &Signature) {
    for f in &s.fields {
        add_idents(out, &f.ty);
    }
    for p in &s.parameters {
        add_idents(out, &p.ty);
    }
    let lists = s
        .generics
        .iter()
        .chain(&s.where_clause)
        .chain(&s.traits)
        .chain(&s.supertraits)
        .map(String::as_str);
    let one = [&s.return_type, &s.ty, &s.self_type, &s.trait_ref];
    for t in lists.chain(one.into_iter().flatten().map(|t| &**t)) {
        add_idents(out, t);
    }
}

fn ref_idents(out: &mut HashSet<Name>, r: &RawRef) {
    out.extend(r.path.iter().chain(r.scope.iter()).map(|s| hash(s)));
    if let Some(t) = &r.self_type {
        add_idents(out, t);
    }
    if let Some(recv) = &r.receiver {
        add_recv_idents(out, recv);
    }
}

/// The names a whole extract mentions (sorted): what its resolution can
/// look up, directly or as the start of a chain.
pub fn mentioned(extract: &FileExtract) -> Vec<Name> {
    mentioned_with(extract, &[])
}

/// [`mentioned`] of an extract whose other references are held apart
/// (see [`super::resolve::RefsApart`]).
pub fn mentioned_with(extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
    let mut out = HashSet::default();
    for e in &extract.entities {
        add_idents(&mut out, &e.name);
        out.extend(e.module_path.iter().map(|s| hash(s)));
        for t in e.owner.iter().chain(&e.trait_name) {
            add_idents(&mut out, t);
        }
        type_idents(&mut out, &e.signature);
        for f in &e.signature.fields {
            add_idents(&mut out, &f.name);
        }
    }
    for r in extract.refs.iter().chain(apart) {
        ref_idents(&mut out, r);
    }
    for u in &extract.uses {
        out.extend(u.path.iter().chain(&u.scope).map(|s| hash(s)));
        if let Some(a) = &u.alias {
            out.insert(hash(a));
        }
    }
    let mut v: Vec<Name> = out.into_iter().collect();
    v.sort_unstable();
    v
}

/// Whether a file that mentions `names` (sorted) can see a touched name.
#[cfg(test)]
pub fn mentions_any(names: &[Name], touched: &HashSet<Name>) -> bool {
    names.iter().any(|n| touched.contains(n))
}

/// What a `use` makes visible under its own name (`use a::b as c` → `c`).
fn bound_name(u: &UseDecl) -> Option<&str> {
    u.alias
        .as_deref()
        .or_else(|| u.path.last().map(String::as_str))
}

/// A `use` as the table sees it.
fn use_key(u: &UseDecl) -> (&str, &[String], &[String], Option<&str>, bool, bool) {
    (
        &u.from,
        &u.scope,
        &u.path,
        u.alias.as_deref(),
        u.glob,
        u.is_pub,
    )
}

/// The names an edit of one file's interface touches, from its interface
/// `before` and its extract `after`; `None` when the change reaches
/// further than names can bound (see the module doc).
pub fn changed(before: &FileExtract, after: &FileExtract) -> Option<HashSet<Name>> {
    if before.context != after.context || before.children != after.children {
        return None;
    }
    let mut touched = HashSet::default();
    let old: FxHashMap<&str, &Entity> = before
        .entities
        .iter()
        .map(|e| (e.key.as_ref(), e))
        .collect();
    let new: FxHashMap<&str, &Entity> =
        after.entities.iter().map(|e| (e.key.as_ref(), e)).collect();
    // An item by its name; an impl block (named `impl Trait for Owner`)
    // by its owner and trait, which is what lookups through it start
    // from (a changed method is found by its own name).
    let mut touch = |e: &Entity| {
        if e.kind == EntityKind::Impl {
            for t in e.owner.iter().chain(&e.trait_name) {
                add_idents(&mut touched, t);
            }
        } else {
            add_idents(&mut touched, &e.name);
        }
    };
    for (key, e) in &old {
        match new.get(key) {
            // As the symbol table sees it: lines and docs aside.
            Some(n) if same_entity_facts(n, e) && n.file == e.file => {}
            Some(n) => {
                touch(e);
                touch(n);
            }
            None => touch(e),
        }
    }
    for (key, e) in &new {
        if !old.contains_key(key) {
            touch(e);
        }
    }
    // Impl blocks placed (`impl Trait for Owner`): owners and traits.
    let placed = |x: &FileExtract| -> BTreeSet<(String, crate::model::RefKind, Vec<String>)> {
        x.refs
            .iter()
            .filter(|r| is_interface_ref(r.kind))
            .map(|r| (r.from.to_string(), r.kind, r.path.clone()))
            .collect()
    };
    let (placed_before, placed_after) = (placed(before), placed(after));
    for (_, _, path) in placed_before.symmetric_difference(&placed_after) {
        touched.extend(path.iter().map(|s| hash(s)));
    }
    let uses_before: BTreeSet<_> = before.uses.iter().map(use_key).collect();
    let uses_after: BTreeSet<_> = after.uses.iter().map(use_key).collect();
    for u in before.uses.iter().chain(&after.uses) {
        let k = use_key(u);
        if uses_before.contains(&k) && uses_after.contains(&k) {
            continue;
        }
        // A glob brings in a whole module's names, a re-export hands its
        // name on to whoever imports this module: unbounded by names.
        if u.glob || u.is_pub {
            return None;
        }
        if let Some(name) = bound_name(u) {
            touched.insert(hash(name));
        }
    }
    Some(touched)
}

/// The [`SpreadFacts`] of a file's interface.
pub fn spread_facts(x: &FileExtract) -> SpreadFacts {
    spread_facts_of(x, |out, e| type_idents(out, &e.signature), bound_name)
}

/// Spread touched names through every file's interface until nothing
/// more is touched: an entity whose declared types mention a touched name
/// (a function returning a changed type, a struct with a field of one, an
/// alias of one) is touched, and so is the name a `use` of a touched name
/// binds. A process that spreads edit after edit keeps a [`NameReach`].
pub fn spread<'a>(touched: &mut HashSet<Name>, interfaces: impl Iterator<Item = &'a FileExtract>) {
    spread_through(touched, interfaces.map(spread_facts));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FileContext;
    use crate::RustExtractor;

    fn extract(path: &str, module: &[&str], src: &str) -> FileExtract {
        let ctx = FileContext {
            path: path.into(),
            package: "demo".into(),
            unit: "demo".into(),
            module_path: module.iter().map(|s| s.to_string()).collect(),
            is_test_file: false,
            path_aliases: Vec::new(),
        };
        RustExtractor::new().extract(&ctx, src)
    }

    fn names(list: &[&str]) -> HashSet<Name> {
        list.iter().map(|s| hash(s)).collect()
    }

    #[test]
    fn a_renamed_function_touches_both_names_and_nothing_else() {
        let a = extract(
            "src/a.rs",
            &["a"],
            "pub fn old_name() -> u8 { 1 }\npub fn kept() {}\n",
        );
        let b = extract(
            "src/a.rs",
            &["a"],
            "pub fn new_name() -> u8 { 1 }\npub fn kept() {}\n",
        );
        let t = changed(&a, &b).unwrap();
        assert!(t.contains(&hash("old_name")) && t.contains(&hash("new_name")));
        assert!(!t.contains(&hash("kept")));
    }

    #[test]
    fn a_changed_alias_reaches_callers_through_return_types() {
        let a = extract(
            "src/a.rs",
            &["a"],
            "pub struct V;\npub struct W;\npub type U = V;\n",
        );
        let b = extract(
            "src/a.rs",
            &["a"],
            "pub struct V;\npub struct W;\npub type U = W;\n",
        );
        let other = extract(
            "src/b.rs",
            &["b"],
            "pub fn make() -> crate::a::U { todo!() }\npub fn unrelated() -> u8 { 0 }\n",
        );
        let mut t = changed(&a, &b).unwrap();
        assert_eq!(t, names(&["U"]));
        spread(&mut t, [&b, &other].into_iter());
        assert!(t.contains(&hash("make")));
        assert!(!t.contains(&hash("unrelated")));
        // A caller of `make` mentions it.
        let caller = extract("src/c.rs", &["c"], "fn f() { crate::b::make().poke(); }\n");
        assert!(mentions_any(&mentioned(&caller), &t));
        let bystander = extract("src/d.rs", &["d"], "fn g() { crate::b::unrelated(); }\n");
        assert!(!mentions_any(&mentioned(&bystander), &t));
    }

    #[test]
    fn field_names_and_impl_blocks_do_not_spread_a_change_wide() {
        // Renaming the method `options` touches `options` (and the new
        // name), not the struct that has a field called `options`, nor
        // every file with an impl block.
        let a = extract(
            "src/a.rs",
            &["a"],
            "pub struct Fs;\nimpl Fs { pub fn options() -> u8 { 1 } }\n",
        );
        let b = extract(
            "src/a.rs",
            &["a"],
            "pub struct Fs;\nimpl Fs { pub fn opts() -> u8 { 1 } }\n",
        );
        let holder = extract(
            "src/b.rs",
            &["b"],
            "pub struct Holder { pub options: u8 }\npub fn get() -> Holder { todo!() }\n",
        );
        let mut t = changed(&a, &b).unwrap();
        assert_eq!(t, names(&["options", "opts"]));
        spread(&mut t, [&b, &holder].into_iter());
        assert_eq!(t, names(&["options", "opts"]));
        let other_impl = extract("src/c.rs", &["c"], "struct Q;\nimpl Q { fn q(&self) {} }\n");
        assert!(!mentions_any(&mentioned(&other_impl), &t));
        // A new impl block touches its owner and trait.
        let c = extract("src/a.rs", &["a"], "pub struct Fs;\nimpl Fs { pub fn opts() -> u8 { 1 } }\nimpl Clone for Fs { fn clone(&self) -> Fs { Fs } }\n");
        let t = changed(&b, &c).unwrap();
        assert!(t.contains(&hash("Fs")) && t.contains(&hash("Clone")));
        assert!(!t.contains(&hash("impl")));
    }

    #[test]
    fn a_use_rename_binds_the_touched_name_on() {
        let a = extract("src/a.rs", &["a"], "pub fn f() -> u8 { 1 }\n");
        let b = extract("src/a.rs", &["a"], "pub fn f() -> u16 { 1 }\n");
        let reexport = extract("src/b.rs", &["b"], "use crate::a::f as g;\n");
        let mut t = changed(&a, &b).unwrap();
        spread(&mut t, [&b, &reexport].into_iter());
        assert!(t.contains(&hash("g")));
    }

    #[test]
    fn module_glob_and_reexport_changes_are_not_bounded() {
        let a = extract("src/a.rs", &["a"], "pub fn f() {}\n");
        let with = |src: &str| extract("src/a.rs", &["a"], src);
        assert!(changed(&a, &with("pub fn f() {}\nmod m;\n")).is_none());
        assert!(changed(&a, &with("pub fn f() {}\nuse crate::b::*;\n")).is_none());
        assert!(changed(&a, &with("pub fn f() {}\npub use crate::b::x;\n")).is_none());
        let private = changed(&a, &with("pub fn f() {}\nuse crate::b::x as y;\n")).unwrap();
        assert_eq!(private, names(&["y"]));
    }

    #[test]
    fn a_body_edit_touches_nothing() {
        let a = extract("src/a.rs", &["a"], "pub fn f() -> u8 { 1 }\n");
        let b = extract("src/a.rs", &["a"], "\n\npub fn f() -> u8 { g(); 2 }\n");
        assert!(changed(&a, &b).unwrap().is_empty());
    }

    #[test]
    fn stored_names_read_back() {
        let x = extract("src/a.rs", &["a"], "pub fn f(v: Vec<Thing>) { v.len(); }\n");
        let m = mentioned(&x);
        assert!(m.contains(&hash("Thing")) && m.contains(&hash("len")));
        assert_eq!(
            crate::index::names::decode(&crate::index::names::encode(&m)).unwrap(),
            m
        );
        assert!(crate::index::names::decode(&[1, 2, 3]).is_none());
    }
}
