//! The symbol table over every TypeScript and JavaScript file's
//! interface: files by path, what a relative specifier names, each
//! module's exports and each file's own names.
//!
//! A relative specifier (`./x`, `../x`, `.`, `..`) names a file: `x`
//! itself, then `x` with each source extension (`.ts`, `.tsx`, `.mts`,
//! `.cts`, `.js`, `.jsx`, `.mjs`, `.cjs`) and `x.d.ts` (a source before
//! its declaration file), then `x/index` with those; a `.js`-style
//! specifier (`./x.js`) is first read as the TypeScript file it is
//! compiled from (`./x.ts`, `./x.tsx`). A bare specifier is read through
//! the importing file's path aliases (its `tsconfig.json`'s `paths` and
//! `baseUrl`: `@/lib/x` → `src/lib/x`), else as a package of the tree by
//! its `package.json` name: the file its `exports` (or `source`, `module`,
//! `main`) names, else read from its source: `@acme/ui` → its
//! `src/index` or `index`, `@acme/ui/button` → its `src/button` or
//! `button`. What names no file of the tree (`react`, `node:fs`) stays
//! unresolved: nothing is ever matched by name across files without a
//! path.
//!
//! A module exports its exported declarations, the names of its export
//! clauses (`export { a as b }`, `export default a`, `export { a } from
//! 's'`, `export * as ns from 's'`) and, through `export * from 's'`,
//! whatever `s` exports but `default`. An export is followed to the
//! original definition through any chain of re-exports and imports;
//! each chain is walked once per module and name, so cycles end.

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;

use crate::model::{Entity, EntityKind, FileContext, FileExtract, UseDecl};

/// What a name means.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    Entity(&'a Entity),
    /// A module (a namespace import): its file.
    Module(usize),
}

/// The namespace a name is looked up in: TypeScript keeps types
/// (interfaces, aliases) and values (functions, variables) apart; classes,
/// enums and namespaces are both. An import binds whichever its name has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Type,
    Value,
    Either,
}

impl Want {
    /// A type position's or a value's.
    pub fn of(want_type: bool) -> Want {
        if want_type {
            Want::Type
        } else {
            Want::Value
        }
    }
}

/// The table of all files' interfaces.
pub struct Table<'a> {
    files: Vec<&'a FileExtract>,
    contexts: Vec<&'a FileContext>,
    /// The tree's packages by name: their directories (`None`: a name two
    /// share).
    packages: HashMap<&'a str, Option<&'a str>>,
    by_path: HashMap<&'a str, usize>,
    by_key: HashMap<&'a str, (usize, &'a Entity)>,
    /// Per parent key: its children by name, in source order.
    children: HashMap<&'a str, HashMap<&'a str, Vec<&'a Entity>>>,
    /// Per package name: its entry points (the aliases its files carry
    /// for their own package's name).
    entries: HashMap<&'a str, Vec<(&'a str, &'a [String])>>,
    /// Per file: the names its imports bind.
    imports: Vec<HashMap<&'a str, Spec<'a>>>,
    /// Per file: its export clauses and re-exports.
    exports: Vec<Vec<Spec<'a>>>,
}

/// An import or export with the file its specifier names, found the
/// first time a lookup passes through it (every reference to an imported
/// name does; finding a file tries a dozen paths).
struct Spec<'a> {
    decl: &'a UseDecl,
    file: OnceLock<Option<usize>>,
}

impl<'a> Spec<'a> {
    fn new(decl: &'a UseDecl) -> Spec<'a> {
        Spec {
            decl,
            file: OnceLock::new(),
        }
    }

    /// The file its specifier names, written in `from`.
    fn file(&self, table: &Table<'a>, from: usize) -> Option<usize> {
        *self.file.get_or_init(|| {
            let spec = self.decl.path.first().map_or("", String::as_str);
            table.module_file(from, spec)
        })
    }
}

/// The extensions a specifier without one is tried with, sources first.
const EXTENSIONS: &[&str] = &[
    ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".d.ts", ".d.mts", ".d.cts",
];

impl<'a> Table<'a> {
    pub fn build(files: &[(&'a FileContext, &'a FileExtract)]) -> Table<'a> {
        let mut t = Table {
            files: Vec::with_capacity(files.len()),
            contexts: Vec::with_capacity(files.len()),
            packages: HashMap::default(),
            entries: HashMap::default(),
            by_path: HashMap::default(),
            by_key: HashMap::default(),
            children: HashMap::default(),
            imports: Vec::with_capacity(files.len()),
            exports: Vec::with_capacity(files.len()),
        };
        for (i, (ctx, ex)) in files.iter().enumerate() {
            t.files.push(ex);
            t.contexts.push(ctx);
            // A name two packages of the tree share names neither.
            let unit = t
                .packages
                .entry(ctx.package.as_str())
                .or_insert(Some(ctx.unit.as_str()));
            if *unit != Some(ctx.unit.as_str()) {
                *unit = None;
            }
            let package = ctx.package.as_str();
            if !t.entries.contains_key(package) {
                let own = |p: &str| {
                    p == package
                        || p.strip_prefix(package)
                            .is_some_and(|rest| rest.starts_with('/'))
                };
                let list: Vec<(&str, &[String])> = ctx
                    .path_aliases
                    .iter()
                    .filter(|(p, _)| own(p))
                    .map(|(p, ts)| (p.as_str(), ts.as_slice()))
                    .collect();
                t.entries.insert(package, list);
            }
            t.by_path.insert(ex.path.as_str(), i);
            for e in &ex.entities {
                t.by_key.insert(&e.key, (i, e));
                // A test block is named by its title, which no code names.
                if e.kind == EntityKind::Test {
                    continue;
                }
                if let Some(p) = &e.parent {
                    t.children
                        .entry(p)
                        .or_default()
                        .entry(e.name.as_str())
                        .or_default()
                        .push(e);
                }
            }
            let mut imports = HashMap::default();
            let mut exports = Vec::new();
            for u in &ex.uses {
                if u.is_pub {
                    exports.push(Spec::new(u));
                } else if let Some(a) = &u.alias {
                    imports.insert(a.as_str(), Spec::new(u));
                }
            }
            t.imports.push(imports);
            t.exports.push(exports);
        }
        t
    }

    pub fn file_of(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// An entity by key, with its file.
    pub fn entity(&self, key: &str) -> Option<(usize, &'a Entity)> {
        self.by_key.get(key).copied()
    }

    /// A file's module entity.
    pub fn module_entity(&self, file: usize) -> Option<&'a Entity> {
        self.files.get(file).and_then(|f| f.entities.first())
    }

    /// The children of `parent` named `name`.
    pub fn children(&self, parent: &str, name: &str) -> &[&'a Entity] {
        self.children
            .get(parent)
            .and_then(|m| m.get(name))
            .map_or(&[], Vec::as_slice)
    }

    /// The file a specifier written in `from` names.
    pub fn module_file(&self, from: usize, spec: &str) -> Option<usize> {
        let relative =
            spec == "." || spec == ".." || spec.starts_with("./") || spec.starts_with("../");
        if !relative {
            return self.bare(from, spec);
        }
        let path = &self.files.get(from)?.path;
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let joined = normalize(dir, spec)?;
        let directory_only = spec == "." || spec == ".." || spec.ends_with('/');
        self.at_path(&joined, directory_only)
    }

    /// The file a bare specifier names: through the path aliases of
    /// `from`'s configuration, else a package of the tree by name.
    fn bare(&self, from: usize, spec: &str) -> Option<usize> {
        let ctx = self.contexts.get(from)?;
        for (pattern, targets) in &ctx.path_aliases {
            let Some(star) = alias_match(pattern, spec) else {
                continue;
            };
            for t in targets {
                if let Some(f) = self.at_path(&t.replacen('*', star, 1), false) {
                    return Some(f);
                }
            }
        }
        let (name, sub) = package_parts(spec)?;
        let dir = (*self.packages.get(name)?)?;
        // Its `package.json`'s entry points, then its source by path.
        for (pattern, targets) in self.entries.get(name).map_or(&[][..], Vec::as_slice) {
            let Some(star) = alias_match(pattern, spec) else {
                continue;
            };
            for t in targets.iter() {
                if let Some(f) = self.at_path(&t.replacen('*', star, 1), false) {
                    return Some(f);
                }
            }
        }
        let join = |a: &str, b: &str| match (a.is_empty(), b.is_empty()) {
            (true, _) => b.to_string(),
            (_, true) => a.to_string(),
            _ => format!("{a}/{b}"),
        };
        [join(&join(dir, "src"), sub), join(dir, sub)]
            .iter()
            .find_map(|p| self.at_path(p, sub.is_empty()))
    }

    /// The file a module path names (`src/x` → `src/x.ts`, `src/x/index.ts`).
    fn at_path(&self, joined: &str, directory_only: bool) -> Option<usize> {
        let joined = joined.to_string();
        let find = |p: &str| self.by_path.get(p).copied();
        if !directory_only {
            for (js, ts) in [
                (".js", &[".ts", ".tsx"][..]),
                (".jsx", &[".tsx"][..]),
                (".mjs", &[".mts"][..]),
                (".cjs", &[".cts"][..]),
            ] {
                if let Some(stem) = joined.strip_suffix(js) {
                    for e in ts {
                        if let Some(f) = find(&format!("{stem}{e}")) {
                            return Some(f);
                        }
                    }
                }
            }
            if let Some(f) = find(&joined) {
                return Some(f);
            }
            for e in EXTENSIONS {
                if let Some(f) = find(&format!("{joined}{e}")) {
                    return Some(f);
                }
            }
        }
        let base = joined.trim_end_matches('/');
        for e in EXTENSIONS {
            let p = if base.is_empty() {
                format!("index{e}")
            } else {
                format!("{base}/index{e}")
            };
            if let Some(f) = find(&p) {
                return Some(f);
            }
        }
        None
    }

    /// What `name` means at the top of `file`: its own declaration, else
    /// what its import of that name brings.
    pub fn lookup(&self, file: usize, name: &str, want: Want) -> Option<Target<'a>> {
        self.lookup_in(file, name, want, &mut Vec::new())
    }

    fn lookup_in(
        &self,
        file: usize,
        name: &str,
        want: Want,
        seen: &mut Vec<(usize, String)>,
    ) -> Option<Target<'a>> {
        let m = self.module_entity(file)?;
        if let Some(e) = pick(self.children(&m.key, name), want, false) {
            return Some(Target::Entity(e));
        }
        let import = self.imports.get(file)?.get(name)?;
        let u = import.decl;
        if u.path.is_empty() {
            return None;
        }
        let target = import.file(self, file)?;
        match u.path.get(1) {
            None => Some(Target::Module(target)),
            Some(n) => self.export_in(target, n, want, seen),
        }
    }

    /// What module `file` exports as `name`, followed to its definition.
    pub fn export(&self, file: usize, name: &str, want: Want) -> Option<Target<'a>> {
        self.export_in(file, name, want, &mut Vec::new())
    }

    fn export_in(
        &self,
        file: usize,
        name: &str,
        want: Want,
        seen: &mut Vec<(usize, String)>,
    ) -> Option<Target<'a>> {
        if seen.iter().any(|(f, n)| *f == file && n == name) || seen.len() > 256 {
            return None;
        }
        seen.push((file, name.to_string()));
        for export in self.exports.get(file)? {
            let u = export.decl;
            if u.glob {
                continue;
            }
            let bound = u.alias.as_deref().or(u.path.get(1).map(String::as_str));
            if bound != Some(name) {
                continue;
            }
            let spec = u.path.first().map(String::as_str).unwrap_or("");
            let found = match u.path.get(1) {
                None => export.file(self, file).map(Target::Module),
                Some(n) if spec.is_empty() => self.lookup_in(file, n, want, seen),
                Some(n) => export
                    .file(self, file)
                    .and_then(|m| self.export_in(m, n, want, seen)),
            };
            if found.is_some() {
                return found;
            }
        }
        let m = self.module_entity(file)?;
        if let Some(e) = pick(self.children(&m.key, name), want, true) {
            return Some(Target::Entity(e));
        }
        if name == "default" {
            return None;
        }
        for export in self.exports.get(file)? {
            if !export.decl.glob || export.decl.path.is_empty() {
                continue;
            }
            if let Some(m) = export.file(self, file) {
                if let Some(t) = self.export_in(m, name, want, seen) {
                    return Some(t);
                }
            }
        }
        None
    }
}

/// Of the entities of one name, the one a reference means: a type-like
/// one for a type, a value for a value (declaration merging gives a name
/// both; a type alias never stands for a value of its name, nor a function
/// for a type), for an import the value if there is one; `exported` ones
/// only when asked.
fn pick<'a>(cands: &[&'a Entity], want: Want, exported: bool) -> Option<&'a Entity> {
    let ok = |e: &&&'a Entity| !exported || e.visibility == crate::model::Visibility::Public;
    let typed = |e: &Entity| {
        matches!(
            e.kind,
            EntityKind::Class
                | EntityKind::Trait
                | EntityKind::TypeAlias
                | EntityKind::Enum
                | EntityKind::Module
        )
    };
    let value = |e: &Entity| !matches!(e.kind, EntityKind::Trait | EntityKind::TypeAlias);
    let mut fit = cands.iter().filter(ok);
    match want {
        Want::Type => fit.find(|e| typed(e)),
        Want::Value => fit.find(|e| value(e)),
        Want::Either => fit.clone().find(|e| value(e)).or_else(|| fit.next()),
    }
    .copied()
}

/// `dir` joined with a relative specifier, `.` and `..` read; `None`
/// above the top.
/// What a path alias pattern's `*` matches in `spec` (`""` for a pattern
/// without one that is `spec`).
fn alias_match<'s>(pattern: &str, spec: &'s str) -> Option<&'s str> {
    match pattern.split_once('*') {
        None => (pattern == spec).then_some(""),
        Some((pre, post)) => {
            let rest = spec.strip_prefix(pre)?.strip_suffix(post)?;
            Some(rest)
        }
    }
}

/// A bare specifier's package name and the path below it:
/// `@acme/ui/button` → (`@acme/ui`, `button`), `hono` → (`hono`, ``).
fn package_parts(spec: &str) -> Option<(&str, &str)> {
    let split_at = if spec.starts_with('@') {
        let first = spec.find('/')?;
        spec[first + 1..].find('/').map(|i| first + 1 + i)
    } else {
        spec.find('/')
    };
    Some(match split_at {
        Some(i) => (&spec[..i], &spec[i + 1..]),
        None => (spec, ""),
    })
}

/// `dir` joined with a relative specifier, `.` and `..` read (a trailing
/// `/` kept); `None` above the tree's top.
pub(crate) fn normalize(dir: &str, spec: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in spec.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    let mut out = parts.join("/");
    if spec.ends_with('/') && !out.is_empty() {
        out.push('/');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn specifiers_join_their_directory() {
        assert_eq!(normalize("src/a", "../b").as_deref(), Some("src/b"));
        assert_eq!(normalize("src/a", "./c/d").as_deref(), Some("src/a/c/d"));
        assert_eq!(normalize("src", "..").as_deref(), Some(""));
        assert_eq!(normalize("", "../x"), None);
    }
}
