//! Who an edit of a TypeScript interface can affect.
//!
//! Every lookup resolution makes starts from a name some file spells: a
//! reference's path, a receiver's types and members, an import's
//! specifier and names, a declared type. A file's exports reach other
//! files only under names: `export *` passes them on as they are, an
//! alias (`export { a as b }`, `export default a`, `import x from`) binds
//! one name to another, and a declaration typed with a name passes a
//! change of that name on to its own (a `get: Route` member, when `Route`
//! changes, means something else to `app.get(…)`). So an edit touches the
//! names of the entities it changes, adds or removes and the names the
//! imports and exports it changes bind; the index spreads them through
//! every file's [`SpreadFacts`] and resolves the files that mention one
//! ([`crate::index::names`]).
//!
//! What names cannot bound resolves every file: a changed configuration
//! or layout (the file's context), and an `export *` added or removed
//! (what it lets in has no list). A module imported whole
//! (`import * as ns`, `const m = require('m')`) may be called or read
//! through its default export, so such a file mentions `default` too.
//!
//! Names are 32-bit hashes (see [`crate::index::names`]).

use rustc_hash::FxHashSet as HashSet;

use super::interface::same_entity_facts;
use crate::index::names::{
    add_idents, add_recv_idents, changed_uses, hash, spread_facts_of, touched_entities, Name,
    SpreadFacts,
};
use crate::model::{Entity, EntityKind, FileExtract, RawRef, UseDecl};

/// The identifiers an entity's declared types mention: its type, return
/// type, parameters' types, bases, type parameters and call signatures.
fn declared_idents(out: &mut HashSet<Name>, e: &Entity) {
    let s = &e.signature;
    for t in [&s.ty, &s.return_type].into_iter().flatten() {
        add_idents(out, t);
    }
    for p in s.parameters.iter() {
        add_idents(out, &p.ty);
    }
    for t in s
        .bases
        .iter()
        .chain(s.generics.iter())
        .chain(s.call_signatures.iter())
    {
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
        if let Some(t) = &r.self_type {
            add_idents(&mut out, t);
        }
        if let Some(recv) = &r.receiver {
            add_recv_idents(&mut out, recv);
        }
    }
    for u in &extract.uses {
        out.extend(u.path.iter().map(|s| hash(s)));
        if let Some(a) = &u.alias {
            out.insert(hash(a));
        }
        if imports_whole_module(u) {
            out.insert(hash("default"));
        }
    }
    let mut v: Vec<Name> = out.into_iter().collect();
    v.sort_unstable();
    v
}

/// `import * as ns from 's'`, `const m = require('s')`: a module bound to
/// a name, which may be called or read through its default export.
fn imports_whole_module(u: &UseDecl) -> bool {
    !u.glob && u.path.len() == 1 && u.alias.is_some()
}

/// The name an import or export binds: its alias, else the name it
/// brings.
fn bound_name(u: &UseDecl) -> Option<&str> {
    u.alias.as_deref().or(u.path.last().map(String::as_str))
}

/// An import or export as the table sees it (not its line).
type UseKey<'u> = (&'u [String], Option<&'u str>, bool, bool);

fn use_key(u: &UseDecl) -> UseKey<'_> {
    (&u.path, u.alias.as_deref(), u.glob, u.is_pub)
}

/// The names an edit of one file's interface touches, from its interface
/// `before` and its extract `after`; `None` when names cannot bound it
/// (see the module doc).
pub fn changed(before: &FileExtract, after: &FileExtract) -> Option<HashSet<Name>> {
    if before.context != after.context || before.path != after.path {
        return None;
    }
    // Test blocks aside: no lookup finds them (a test titled `Env` is no
    // `Env`).
    let mut touched = touched_entities(before, after, same_entity_facts, |e| {
        e.kind != EntityKind::Test
    });
    for u in changed_uses(&before.uses, &after.uses, use_key)? {
        if let Some(name) = bound_name(u) {
            touched.insert(hash(name));
        }
        if imports_whole_module(u) {
            touched.insert(hash("default"));
        }
    }
    Some(touched)
}

/// What a file's interface tells the spreading of touched names: each
/// entity's name with the names its declared types mention; each import
/// or export that binds a name other than the one it brings.
pub fn spread_facts(x: &FileExtract) -> SpreadFacts {
    spread_facts_of(x, declared_idents, bound_name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::names::spread_through;
    use crate::TsExtractor;

    fn extract(path: &str, src: &str) -> FileExtract {
        let l = crate::layout::Layout::new(&Default::default(), &Default::default());
        TsExtractor::new().extract(&l.context(path), src)
    }

    fn names(list: &[&str]) -> HashSet<Name> {
        list.iter().map(|n| hash(n)).collect()
    }

    /// A new export touches its name; a changed member its own; a body
    /// edit nothing; an `export *` added is unbounded.
    #[test]
    fn an_edit_touches_the_names_it_changes() {
        let before = extract(
            "src/a.ts",
            "import { B } from './b'\nexport class Cart { add(x: B): Cart { return this } }\nexport function total() { return 1 }\n",
        );
        let body = extract(
            "src/a.ts",
            "import { B } from './b'\nexport class Cart { add(x: B): Cart { return this } }\nexport function total() { return 2 }\n",
        );
        assert_eq!(changed(&before, &body), Some(HashSet::default()));
        let member = extract(
            "src/a.ts",
            "import { B } from './b'\nexport class Cart { add(x: B, n: number): Cart { return this } }\nexport function total() { return 1 }\n",
        );
        assert_eq!(changed(&before, &member), Some(names(&["add"])));
        let added = extract(
            "src/a.ts",
            "import { B } from './b'\nexport class Cart { add(x: B): Cart { return this } }\nexport function total() { return 1 }\nexport const fresh = 1\n",
        );
        assert_eq!(changed(&before, &added), Some(names(&["fresh"])));
        let import = extract(
            "src/a.ts",
            "import { C as B } from './b'\nexport class Cart { add(x: B): Cart { return this } }\nexport function total() { return 1 }\n",
        );
        assert_eq!(changed(&before, &import), Some(names(&["B"])));
        let glob = extract(
            "src/a.ts",
            "import { B } from './b'\nexport * from './c'\nexport class Cart { add(x: B): Cart { return this } }\nexport function total() { return 1 }\n",
        );
        assert_eq!(changed(&before, &glob), None);
        let test = |src: &str| extract("src/a.test.ts", src);
        assert_eq!(
            changed(
                &test("it('Env', () => {})\nexport const x = 1\n"),
                &test("it('Envs', () => {})\nexport const x = 1\n")
            ),
            Some(HashSet::default()),
            "a test block's title is no name"
        );
    }

    /// A changed type reaches the members declared with it, and a default
    /// export's declaration reaches `default`.
    #[test]
    fn touched_names_spread_through_types_and_aliases() {
        let router = extract(
            "src/router.ts",
            "import type { Route } from './route'\nexport class Router { get!: Route }\nexport default function make(): Router { return new Router() }\n",
        );
        let mut touched = names(&["Route"]);
        spread_through(&mut touched, [spread_facts(&router)].into_iter());
        assert!(touched.contains(&hash("get")), "a member typed Route");
        let mut touched = names(&["make"]);
        spread_through(&mut touched, [spread_facts(&router)].into_iter());
        assert!(touched.contains(&hash("default")), "the default export");
        let user = extract("src/use.ts", "import * as r from './router'\nr.default()\n");
        assert!(mentioned(&user, &[]).contains(&hash("default")));
    }
}
