//! Who an edit of a Python interface can affect: the names a file
//! mentions, the names an interface edit touches, and what spreads them.
//!
//! Every lookup the table ([`super::table`]) makes for a file starts from
//! a name that file spells: a reference's path, a receiver's chain of
//! calls, fields and hints, an import's path or alias, its own classes'
//! bases and its own hints. From there a lookup goes on by name only —
//! a module's members and imports (a star import hands a name on under
//! the same name), a class's members through its bases, a variable's
//! hint, a function's return annotation — or through the file layout,
//! which an interface edit does not change (a file added, removed or
//! moved resolves every file).
//!
//! So an edit touches the names of the entities it adds, removes or
//! changes (as the table sees them: lines and docstrings aside), the
//! names its changed imports bind, and the names an `__all__` change lets
//! in or out; spreading adds the entities whose bases, hints or return
//! annotations mention a touched name, and the names an import binds to
//! a touched one under another name. The files that mention a touched
//! name are resolved again. Changes names cannot bound return `None`:
//! the file's module moved, a star import added or removed, `__all__`
//! set where there was none or dropped (every public name's visibility
//! changes at once).
//!
//! Names are 32-bit hashes (see [`crate::index::names`]): a collision
//! only adds a file to resolve.

use rustc_hash::FxHashSet as HashSet;

use super::interface::same_entity_facts;
use crate::index::names::{
    add_idents, add_recv_idents, changed_uses, hash, spread_facts_of, touched_entities, Name,
    SpreadFacts,
};
use crate::model::{Entity, FileExtract, RawRef, UseDecl};

/// The names a declaration's lookups go through: its bases, its hint,
/// its return annotation.
fn declared_idents(out: &mut HashSet<Name>, e: &Entity) {
    let s = &e.signature;
    for b in s.bases.iter() {
        add_idents(out, b);
    }
    for t in [&s.ty, &s.return_type].into_iter().flatten() {
        add_idents(out, t);
    }
}

/// The names a whole extract mentions (sorted): every name its
/// resolution can look up, directly or as the start of a chain.
pub fn mentioned(extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
    let mut out = HashSet::default();
    out.extend(extract.context.module_path.iter().map(|s| hash(s)));
    for e in &extract.entities {
        out.insert(hash(&e.name));
        declared_idents(&mut out, e);
        for d in e.signature.decorators.iter() {
            add_idents(&mut out, d);
        }
    }
    for r in extract.refs.iter().chain(apart) {
        out.extend(r.path.iter().map(|s| hash(s)));
        if let Some(recv) = &r.receiver {
            add_recv_idents(&mut out, recv);
        }
    }
    for u in &extract.uses {
        out.extend(u.path.iter().map(|s| hash(s)));
        if let Some(a) = &u.alias {
            out.insert(hash(a));
        }
    }
    let mut v: Vec<Name> = out.into_iter().collect();
    v.sort_unstable();
    v
}

/// Whether an import is the from-form (`from . import x`, `from a import
/// x`): its path starts with the dots, empty for none.
fn from_form(u: &UseDecl) -> bool {
    u.path
        .first()
        .is_some_and(|p| p.is_empty() || p.starts_with('.'))
}

/// The name an import binds in its scope, as the table reads it.
fn bound_name(u: &UseDecl) -> Option<&str> {
    match (&u.alias, from_form(u)) {
        (Some(a), _) => Some(a.as_str()),
        (None, true) => u.path.last().map(String::as_str),
        (None, false) => u.path.first().map(String::as_str),
    }
}

/// An import as the table sees it (not its line).
type UseKey<'u> = (&'u str, &'u [String], Option<&'u str>, bool);

fn use_key(u: &UseDecl) -> UseKey<'_> {
    (&u.from, &u.path, u.alias.as_deref(), u.glob)
}

/// The names an edit of one file's interface touches, from its interface
/// `before` and its extract `after`; `None` when names cannot bound it
/// (see the module doc).
pub fn changed(before: &FileExtract, after: &FileExtract) -> Option<HashSet<Name>> {
    if before.context != after.context || before.path != after.path {
        return None;
    }
    // A name is touched when the entities that carry it differ in
    // number, order or facts (the first that is not an overload stub is
    // the one a lookup means).
    let mut touched = touched_entities(before, after, same_entity_facts, |_| true);
    // `__all__`: what a star import of this module lets in.
    let exports = |x: &'_ FileExtract| -> Vec<String> {
        x.entities
            .first()
            .map(|m| m.signature.exports.to_vec())
            .unwrap_or_default()
    };
    let (ex_before, ex_after) = (exports(before), exports(after));
    if ex_before != ex_after {
        if ex_before.is_empty() != ex_after.is_empty() {
            return None;
        }
        for n in ex_before.iter().chain(&ex_after) {
            if ex_before.contains(n) != ex_after.contains(n) {
                touched.insert(hash(n));
            }
        }
    }
    // Imports: the names the changed ones bind (a star import binds
    // names no list bounds).
    for u in changed_uses(&before.uses, &after.uses, use_key)? {
        if let Some(name) = bound_name(u) {
            touched.insert(hash(name));
        }
    }
    Some(touched)
}

/// What a file's interface tells the spreading of touched names: each
/// entity's name with the names its bases, hint and return annotation
/// mention; each import that binds a name other than the one it imports.
pub fn spread_facts(x: &FileExtract) -> SpreadFacts {
    spread_facts_of(x, declared_idents, bound_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::names::spread_through;
    use crate::model::FileContext;
    use crate::PyExtractor;

    fn extract(path: &str, module: &[&str], src: &str) -> FileExtract {
        let ctx = FileContext {
            path: path.into(),
            package: "shop".into(),
            unit: "src".into(),
            module_path: module.iter().map(|s| s.to_string()).collect(),
            is_test_file: false,
            path_aliases: Vec::new(),
        };
        PyExtractor::new().extract(&ctx, src)
    }

    fn names(list: &[&str]) -> HashSet<Name> {
        list.iter().map(|s| hash(s)).collect()
    }

    fn spread(touched: &mut HashSet<Name>, files: &[&FileExtract]) {
        spread_through(touched, files.iter().map(|x| spread_facts(x)));
    }

    fn mentions_any(x: &FileExtract, touched: &HashSet<Name>) -> bool {
        mentioned(x, &[]).iter().any(|n| touched.contains(n))
    }

    #[test]
    fn a_body_edit_touches_nothing() {
        let a = extract("shop/a.py", &["shop", "a"], "def f():\n    return 1\n");
        let b = extract(
            "shop/a.py",
            &["shop", "a"],
            "\n\ndef f():\n    g()\n    return 2\n",
        );
        assert!(changed(&a, &b).unwrap().is_empty());
    }

    #[test]
    fn a_renamed_function_touches_both_names_and_reaches_its_callers_only() {
        let a = extract(
            "shop/a.py",
            &["shop", "a"],
            "def cheapest(xs):\n    return 1\n\n\ndef kept():\n    pass\n",
        );
        let b = extract(
            "shop/a.py",
            &["shop", "a"],
            "def cheapest_of(xs):\n    return 1\n\n\ndef kept():\n    pass\n",
        );
        let t = changed(&a, &b).unwrap();
        assert_eq!(t, names(&["cheapest", "cheapest_of"]));
        let caller = extract(
            "shop/b.py",
            &["shop", "b"],
            "from .a import cheapest\n\n\ndef run():\n    return cheapest([])\n",
        );
        let bystander = extract(
            "shop/c.py",
            &["shop", "c"],
            "from .a import kept\n\n\ndef run():\n    return kept()\n",
        );
        assert!(mentions_any(&caller, &t));
        assert!(!mentions_any(&bystander, &t));
    }

    #[test]
    fn a_changed_base_reaches_calls_through_hints_and_return_annotations() {
        let before =
            "class Base:\n    pass\n\n\nclass Other:\n    def check(self):\n        pass\n";
        let after = "class Base:\n    def check(self):\n        pass\n\n\nclass Other:\n    def check(self):\n        pass\n";
        let a = extract("shop/a.py", &["shop", "a"], before);
        let b = extract("shop/a.py", &["shop", "a"], after);
        // A new method touches its name (`Base` itself is unchanged).
        let t = changed(&a, &b).unwrap();
        assert_eq!(t, names(&["check"]));
        // A changed base list touches the class, and spreads to what is
        // declared in terms of it.
        let models = "from .a import Base\n\n\nclass Cart(Base):\n    pass\n\n\ndef make() -> Cart:\n    return Cart()\n\n\ndef unrelated() -> int:\n    return 0\n";
        let m1 = extract("shop/m.py", &["shop", "m"], models);
        let m2 = extract(
            "shop/m.py",
            &["shop", "m"],
            &models.replace("class Cart(Base)", "class Cart(Base, Other)"),
        );
        let mut t = changed(&m1, &m2).unwrap();
        assert_eq!(t, names(&["Cart"]));
        spread(&mut t, &[&b, &m2]);
        assert!(t.contains(&hash("make")));
        assert!(!t.contains(&hash("unrelated")));
        let user = extract(
            "shop/u.py",
            &["shop", "u"],
            "from .m import make\n\n\ndef go():\n    make().check()\n",
        );
        assert!(mentions_any(&user, &t));
    }

    #[test]
    fn an_alias_binds_the_touched_name_on() {
        let a = extract(
            "shop/a.py",
            &["shop", "a"],
            "def f() -> int:\n    return 1\n",
        );
        let b = extract(
            "shop/a.py",
            &["shop", "a"],
            "def f() -> str:\n    return ''\n",
        );
        let init = extract("shop/__init__.py", &["shop"], "from .a import f as g\n");
        let mut t = changed(&a, &b).unwrap();
        spread(&mut t, &[&b, &init]);
        assert!(t.contains(&hash("g")));
    }

    #[test]
    fn imports_and_all_touch_what_they_bind() {
        let base = "from .a import x\nimport os.path\n__all__ = [\"x\", \"y\"]\n";
        let a = extract("shop/b.py", &["shop", "b"], base);
        let with = |src: &str| extract("shop/b.py", &["shop", "b"], src);
        let t = changed(
            &a,
            &with(&base.replace("from .a import x", "from .c import x")),
        )
        .unwrap();
        assert_eq!(t, names(&["x"]));
        let t = changed(
            &a,
            &with(&base.replace("import os.path", "import os.path as p")),
        )
        .unwrap();
        assert_eq!(t, names(&["os", "p"]));
        let t = changed(&a, &with(&base.replace("\"y\"", "\"z\""))).unwrap();
        assert!(t.contains(&hash("y")) && t.contains(&hash("z")) && !t.contains(&hash("x")));
        // Reordered imports of one name: the later one wins.
        let two = "from .a import x\nfrom .c import x\n";
        let t = changed(&with(two), &with("from .c import x\nfrom .a import x\n")).unwrap();
        assert_eq!(t, names(&["x"]));
        // Not bounded: a star import, `__all__` set or dropped, a move.
        assert!(changed(&a, &with(&format!("{base}from .c import *\n"))).is_none());
        assert!(changed(&a, &with("from .a import x\nimport os.path\n")).is_none());
        let moved = extract("shop/b.py", &["shop", "moved"], base);
        assert!(changed(&a, &moved).is_none());
    }
}
