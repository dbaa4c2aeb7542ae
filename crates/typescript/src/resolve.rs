//! TypeScript references and imports into edges, over a [`Table`] of
//! every file.
//!
//! Each reference's first name is looked up from its entity: the
//! namespaces around it, then its file's declarations and imports
//! ([`Table::lookup`]); the rest of a chain through a module's exports
//! (`ns.x`) or a namespace's, class's or enum's members (`Foo.bar`).
//! `this.x` is a member of the class around it, or of a base class the
//! file names (`super.x`: of a base). The entity reached gets the
//! reference's edge — `calls` for calls, `new` and JSX tags, `uses_type`
//! for type positions, `implements` for heritage clauses naming a class
//! or interface, `references` for other reads; a chain that stops at a
//! member it cannot find is a `references` edge to the last entity it
//! reached, and every entity passed through gets one too (the module of
//! `ns.x` for a module bound whole, not a namespace). A test's calls
//! into code that is not a test are also `tests` edges; a test block
//! (`it('…', …)`) gets only those, its module having the rest.
//!
//! Every import and re-export is an `imports` edge from the file's
//! module to the module its specifier names, and one to the original
//! definition of each name it brings (through barrels and aliases).
//! What is not found is kept unresolved with its text, but for a short
//! list of the language's global names that no file declares.

use std::collections::BTreeMap;

use super::receivers::{class_of, value_type, Site};
use super::table::{Table, Target, Want};
use crate::index::links::{FileLinks, LinksBuilder, RefsApart};
use crate::model::rel::name as rel;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::model::{Entity, EntityKind, FileContext, FileExtract, RawRef, Recv, RefKind};

/// Resolve the picked files against a table of all.
pub fn resolve_files<'a>(
    files: &[(&'a FileContext, &'a FileExtract)],
    wanted: &dyn Fn(&str) -> bool,
    apart: RefsApart,
) -> BTreeMap<String, FileLinks<'a>> {
    let table = Table::build(files);
    let picked: Vec<_> = files
        .iter()
        .filter(|(_, e)| wanted(&e.path))
        .copied()
        .collect();
    resolve_against(&table, &picked, apart)
}

/// Resolve `files` (whole extracts, or interfaces whose other references
/// `apart` holds) against `table`.
pub fn resolve_against<'a>(
    table: &Table<'a>,
    files: &[(&'a FileContext, &'a FileExtract)],
    apart: RefsApart,
) -> BTreeMap<String, FileLinks<'a>> {
    crate::index::refless::resolve_each(files, apart, |ex, held| resolve_one(table, ex, held))
}

fn resolve_one<'a>(table: &Table<'a>, ex: &'a FileExtract, held: &[RawRef]) -> FileLinks<'a> {
    let mut links = LinksBuilder::default();
    let Some(file) = table.file_of(&ex.path) else {
        return links.seal();
    };
    for e in &ex.entities {
        if let Some(p) = &e.parent {
            links.edge(p, rel::CONTAINS, &e.key);
        }
    }
    let mut classes = Classes::default();
    for r in ex.refs.iter().chain(held) {
        resolve_ref(table, file, r, &mut links, &mut classes);
    }
    for u in &ex.uses {
        let Some((_, src)) = table.entity(&u.from) else {
            continue;
        };
        let spec = u.path.first().map(String::as_str).unwrap_or("");
        let name = u.path.get(1);
        if spec.is_empty() {
            // `export { a }`: the module reads its own `a`; not so a
            // declaration exported where it is written (`export default
            // function a`), whose range holds its export.
            if let Some(Target::Entity(dst)) =
                name.and_then(|n| table.lookup(file, n, Want::Either))
            {
                let written_here = (dst.start_line..=dst.end_line).contains(&u.line);
                if dst.key != src.key && !written_here {
                    links.edge(&src.key, rel::IMPORTS, &dst.key);
                }
            }
            continue;
        }
        let Some(m) = table.module_file(file, spec) else {
            links.unresolved(&src.key, rel::IMPORTS, spec.to_string(), u.line);
            continue;
        };
        if let Some(me) = table.module_entity(m) {
            if me.key != src.key {
                links.edge(&src.key, rel::IMPORTS, &me.key);
            }
        }
        let Some(name) = name else { continue };
        match table.export(m, name, Want::Either) {
            Some(Target::Entity(dst)) => links.edge(&src.key, rel::IMPORTS, &dst.key),
            Some(Target::Module(mm)) => {
                if let Some(me) = table.module_entity(mm) {
                    if me.key != src.key {
                        links.edge(&src.key, rel::IMPORTS, &me.key);
                    }
                }
            }
            None => links.unresolved(&src.key, rel::IMPORTS, format!("{spec}:{name}"), u.line),
        }
    }
    links.seal()
}

/// The member `name` of a class or interface, or of its bases (as its
/// file names them), up to a few levels.
pub(crate) fn member<'a>(
    table: &Table<'a>,
    file: usize,
    class: &'a Entity,
    name: &str,
    own: bool,
) -> Option<&'a Entity> {
    member_in(table, file, class, name, own, 0, &mut HashSet::default())
}

/// [`member`], each class or interface looked in once (diamonds and
/// cycles of bases).
fn member_in<'a>(
    table: &Table<'a>,
    file: usize,
    class: &'a Entity,
    name: &str,
    own: bool,
    depth: u32,
    seen: &mut HashSet<&'a str>,
) -> Option<&'a Entity> {
    if depth > 8 || !seen.insert(&class.key) {
        return None;
    }
    if own {
        if let Some(e) = table.children(&class.key, name).first() {
            return Some(e);
        }
    }
    let (class_file, _) = table.entity(&class.key).unwrap_or((file, class));
    for base in class.signature.bases.iter() {
        let base = base.split('<').next().unwrap_or(base).trim();
        let segs: Vec<&str> = base.split('.').map(str::trim).collect();
        let Some(Target::Entity(b)) = walk(table, class_file, class, &segs, true).0 else {
            continue;
        };
        if matches!(b.kind, EntityKind::Class | EntityKind::Trait) {
            if let Some(e) = member_in(table, class_file, b, name, true, depth + 1, seen) {
                return Some(e);
            }
        }
    }
    None
}

/// A chain from entity `from` of `file`: what its first name means (the
/// namespaces around `from` first), then each next name in that; the
/// target reached, the entities passed through, and whether every name
/// was found.
pub(crate) fn walk<'a>(
    table: &Table<'a>,
    file: usize,
    from: &'a Entity,
    segs: &[&str],
    want_type: bool,
) -> (Option<Target<'a>>, Vec<&'a Entity>, bool) {
    let Some((first, rest)) = segs.split_first() else {
        return (None, Vec::new(), false);
    };
    let last_type = want_type && rest.is_empty();
    let mut cur = None;
    let mut scope = from.parent.as_deref();
    while let Some(p) = scope {
        let Some((_, pe)) = table.entity(p) else {
            break;
        };
        if pe.parent.is_none() {
            break;
        }
        if pe.kind == EntityKind::Module {
            if let Some(e) = table.children(&pe.key, first).first() {
                cur = Some(Target::Entity(e));
                break;
            }
        }
        scope = pe.parent.as_deref();
    }
    let mut cur = match cur.or_else(|| table.lookup(file, first, Want::of(last_type))) {
        Some(t) => t,
        None => return (None, Vec::new(), false),
    };
    let mut through = Vec::new();
    for (i, seg) in rest.iter().enumerate() {
        let want = want_type && i + 1 == rest.len();
        let next = match cur {
            // A module whose `module.exports` is one value is read
            // through it (`const app = require('./app'); app.listen()`).
            Target::Module(m) => table.export(m, seg, Want::of(want)).or_else(|| {
                match table.export(m, "default", Want::Value)? {
                    Target::Entity(d) => table
                        .children(&d.key, seg)
                        .first()
                        .map(|c| Target::Entity(c)),
                    Target::Module(_) => None,
                }
            }),
            Target::Entity(e) => match e.kind {
                EntityKind::Module | EntityKind::Class | EntityKind::Enum | EntityKind::Trait => {
                    table
                        .children(&e.key, seg)
                        .first()
                        .map(|c| Target::Entity(c))
                }
                // A value's member, through its declared type (`app.get`
                // of `const app = new Hono()`).
                _ if !want_type => value_type(table, e)
                    .and_then(|w| class_of(table, &w, 0))
                    .and_then(|(cf, c)| member(table, cf, c, seg, true))
                    .map(Target::Entity),
                _ => None,
            },
        };
        match next {
            Some(n) => {
                match cur {
                    Target::Entity(e) => through.push(e),
                    // `ns.x` of `import * as ns`: the module is read.
                    Target::Module(m) => through.extend(table.module_entity(m)),
                }
                cur = n;
            }
            None => return (Some(cur), through, false),
        }
    }
    (Some(cur), through, true)
}

/// The class each receiver of a file is, by the entity it is read from
/// (whose scope its types are named in): the many members read from one
/// receiver (`c.json`, `c.req`, `c.header` of one callback) find it once.
type Classes<'a, 'r> = HashMap<(&'a str, Option<&'r str>, &'r Recv), Vec<(usize, &'a Entity)>>;

fn resolve_ref<'a, 'r>(
    table: &Table<'a>,
    file: usize,
    r: &'r RawRef,
    links: &mut LinksBuilder<'a>,
    classes: &mut Classes<'a, 'r>,
) {
    let Some((_, from)) = table.entity(&r.from) else {
        return;
    };
    // A test block's calls are its module's too (see `test_blocks`): it
    // reads its names as the module does, and adds only the `tests` edges
    // of what it reaches.
    let block = from.kind == EntityKind::Test;
    let reader = match block {
        true => table.module_entity(file).unwrap_or(from),
        false => from,
    };
    let src: &'a str = &from.key;
    let unresolved = |links: &mut LinksBuilder<'a>, rel: &'static str, text: String| {
        if !block {
            links.unresolved(src, rel, text, r.line);
        }
    };
    let segs: Vec<&str> = r.path.iter().map(String::as_str).collect();
    if segs.first() == Some(&"import()") {
        let spec = segs.get(1).copied().unwrap_or("");
        match table
            .module_file(file, spec)
            .and_then(|m| table.module_entity(m))
        {
            Some(m) if !block => links.edge(src, rel::IMPORTS, &m.key),
            Some(_) => {}
            None => unresolved(links, rel::IMPORTS, spec.to_string()),
        }
        return;
    }
    if let Some(recv) = &r.receiver {
        let Some(name) = segs.first() else { return };
        let found = classes
            .entry((&reader.key, r.self_type.as_deref(), recv))
            .or_insert_with(|| {
                let site = Site {
                    table,
                    file,
                    from: reader,
                    self_type: r.self_type.as_deref(),
                };
                site.recv_classes(recv)
            });
        for &(cf, c) in found.iter() {
            if let Some(dst) = member(table, cf, c, name, true) {
                edge(links, from, r.kind, dst, true);
            }
        }
        return;
    }
    let text = || match r.kind {
        RefKind::Call => format!("{}()", r.path.join(".")),
        _ => r.path.join("."),
    };
    if matches!(segs.first(), Some(&"this") | Some(&"super")) {
        let class = r.self_type.as_deref().and_then(|k| table.entity(k));
        let name = segs.get(1).copied().unwrap_or("");
        let found = class.and_then(|(cf, c)| member(table, cf, c, name, segs[0] == "this"));
        match found {
            Some(dst) => edge(links, from, r.kind, dst, true),
            None => unresolved(links, relname(r.kind, None), text()),
        }
        return;
    }
    let want_type = matches!(r.kind, RefKind::Type | RefKind::Implements);
    let (found, through, whole) = walk(table, file, reader, &segs, want_type);
    for e in &through {
        let namespace = e.kind == EntityKind::Module && e.parent.is_some();
        if !block && e.key != from.key && !namespace {
            links.edge(src, rel::REFERENCES, &e.key);
        }
    }
    match found {
        Some(Target::Entity(dst)) => edge(links, from, r.kind, dst, whole),
        // A module called or constructed: its one exported value.
        Some(Target::Module(m)) if whole && matches!(r.kind, RefKind::Call) => {
            if let Some(Target::Entity(dst)) = table.export(m, "default", Want::Value) {
                edge(links, from, r.kind, dst, true);
            }
        }
        Some(Target::Module(_)) => {}
        None => {
            if segs.len() == 1 && is_global(segs[0]) {
                return;
            }
            unresolved(links, relname(r.kind, None), text());
        }
    }
}

/// The edge a reference of `kind` to `dst` makes (`whole`: its whole
/// chain was found, else `dst` is only where it stopped).
fn edge<'a>(
    links: &mut LinksBuilder<'a>,
    from: &'a Entity,
    kind: RefKind,
    dst: &'a Entity,
    whole: bool,
) {
    if dst.key == from.key || dst.kind == EntityKind::Module && dst.parent.is_none() {
        return;
    }
    let relname = if whole {
        relname(kind, Some(dst))
    } else {
        rel::REFERENCES
    };
    if from.kind == EntityKind::Test {
        if relname == rel::CALLS && !dst.is_test {
            links.edge(&from.key, rel::TESTS, &dst.key);
        }
        return;
    }
    links.edge(&from.key, relname, &dst.key);
    if relname == rel::CALLS && from.is_test && !dst.is_test {
        links.edge(&from.key, rel::TESTS, &dst.key);
    }
}

fn relname(kind: RefKind, dst: Option<&Entity>) -> &'static str {
    let typed = dst.is_some_and(|d| {
        matches!(
            d.kind,
            EntityKind::Trait | EntityKind::TypeAlias | EntityKind::Enum | EntityKind::Module
        )
    });
    match kind {
        RefKind::Call | RefKind::MethodCall if !typed => rel::CALLS,
        RefKind::Implements
            if dst.is_none_or(|d| matches!(d.kind, EntityKind::Class | EntityKind::Trait)) =>
        {
            rel::IMPLEMENTS
        }
        RefKind::Type | RefKind::Implements => rel::USES_TYPE,
        RefKind::Call | RefKind::MethodCall => rel::USES_TYPE,
        _ => rel::REFERENCES,
    }
}

/// JavaScript's and TypeScript's global names (the standard library,
/// the utility types, the usual runtime globals): a reference to one
/// that no file declares is neither an edge nor unresolved.
fn is_global(name: &str) -> bool {
    GLOBALS.binary_search(&name).is_ok()
}

/// Sorted.
const GLOBALS: &[&str] = &[
    "AbortController",
    "AbortSignal",
    "Array",
    "ArrayBuffer",
    "Awaited",
    "BigInt",
    "Blob",
    "Boolean",
    "ConstructorParameters",
    "DataView",
    "Date",
    "Error",
    "Exclude",
    "Extract",
    "FormData",
    "Function",
    "Headers",
    "Infinity",
    "InstanceType",
    "Intl",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "NonNullable",
    "Number",
    "Object",
    "Omit",
    "Parameters",
    "Partial",
    "Pick",
    "Promise",
    "PromiseLike",
    "Proxy",
    "RangeError",
    "ReadableStream",
    "Readonly",
    "ReadonlyArray",
    "Record",
    "Reflect",
    "RegExp",
    "Request",
    "Required",
    "Response",
    "ReturnType",
    "Set",
    "String",
    "Symbol",
    "SyntaxError",
    "TextDecoder",
    "TextEncoder",
    "TypeError",
    "URL",
    "URLSearchParams",
    "Uint8Array",
    "WeakMap",
    "WeakSet",
    "WritableStream",
    "arguments",
    "atob",
    "btoa",
    "clearInterval",
    "clearTimeout",
    "console",
    "crypto",
    "decodeURIComponent",
    "encodeURIComponent",
    "fetch",
    "globalThis",
    "isNaN",
    "parseFloat",
    "parseInt",
    "process",
    "queueMicrotask",
    "require",
    "setInterval",
    "setTimeout",
    "structuredClone",
    "undefined",
];

#[cfg(test)]
mod tests {
    #[test]
    fn globals_are_sorted() {
        assert!(super::GLOBALS.windows(2).all(|w| w[0] < w[1]));
    }
}
