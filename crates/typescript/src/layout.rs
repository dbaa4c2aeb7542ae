//! Where each TypeScript or JavaScript file sits: its package root and
//! its module.
//!
//! A package root is a directory holding a `package.json`, or the tree's
//! top. A file belongs to its deepest root; its module is its path below
//! that root with the extension dropped (`.d.ts` as a whole): `src/
//! utils/http-status.ts` → `src/utils/http-status`. `index` files keep
//! their stem (`src/jsx/index`): an import of the directory reaches them
//! through the resolver, not through the key.
//!
//! In the [`FileContext`] the root is the package: `unit` is its
//! directory (`""` for the top), `package` the `name` of its
//! `package.json` (else the directory's name), `module_path` the module's
//! segments. A file is test code when it is named `*.test.*` or
//! `*.spec.*`, or sits under a directory of tests or their scaffolding
//! ([`TEST_DIRS`]: `test/`, `tests/`, `__tests__/`, `__mocks__/`, `e2e/`).

use std::collections::{BTreeMap, BTreeSet};

use super::config::{Aliases, Scoped};
use crate::model::{ChildDecl, FileContext};

/// A package root: its directory (`""`: the tree's top), its name and
/// its entry points as path aliases (`@acme/ui/button` → the file its
/// `package.json` names for it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Root {
    dir: String,
    name: String,
    entries: Aliases,
}

/// The package roots of a tree, and its build configurations.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Deepest first, so a file's root is the first that holds it.
    roots: Vec<Root>,
    /// Per directory with a `tsconfig.json` (else `jsconfig.json`): the
    /// path aliases of the configuration its files build with.
    configs: BTreeMap<String, Vec<Scoped>>,
    /// The manifests that could not be read, and why.
    unread: Vec<(String, String)>,
}

impl Layout {
    /// The roots of a tree from its manifests (`package.json`s,
    /// `tsconfig*.json`s and `jsconfig.json`s, path → text).
    pub fn new(manifests: &BTreeMap<String, String>, _files: &BTreeSet<String>) -> Layout {
        let mut roots: Vec<Root> = vec![Root {
            dir: String::new(),
            name: String::new(),
            entries: Vec::new(),
        }];
        let mut unread = super::config::unread(manifests);
        for (path, text) in manifests {
            let (dir, file) = split_path(path);
            if file != "package.json" {
                continue;
            }
            if let Err(e) = serde_json::from_str::<serde_json::Value>(text) {
                unread.push((
                    path.clone(),
                    format!("not JSON ({e}): the package is named after its directory"),
                ));
            }
            let name = package_name(text).unwrap_or_else(|| last_segment(dir).to_string());
            let entries = package_entries(text, &name, dir);
            match roots.iter_mut().find(|r| r.dir == dir) {
                Some(r) => {
                    r.name = name;
                    r.entries = entries;
                }
                None => roots.push(Root {
                    dir: dir.to_string(),
                    name,
                    entries,
                }),
            }
        }
        if let Some(top) = roots.iter_mut().find(|r| r.dir.is_empty()) {
            if top.name.is_empty() {
                top.name = "__root__".into();
            }
        }
        roots.sort_by(|a, b| {
            depth(&b.dir)
                .cmp(&depth(&a.dir))
                .then_with(|| a.dir.cmp(&b.dir))
        });
        roots.dedup_by(|a, b| a.dir == b.dir);
        Layout {
            roots,
            configs: super::config::configs(manifests),
            unread,
        }
    }

    /// A digest of the roots: when it changes, files may have other
    /// modules.
    pub fn digest(&self) -> String {
        let mut h = blake3::Hasher::new();
        for r in &self.roots {
            h.update(r.dir.as_bytes());
            h.update(&[0]);
            h.update(r.name.as_bytes());
            h.update(&[1]);
            h.update(format!("{:?}", r.entries).as_bytes());
        }
        for (dir, scoped) in &self.configs {
            h.update(dir.as_bytes());
            for s in scoped {
                h.update(format!("{:?}{:?}", s.includes, s.aliases).as_bytes());
            }
            h.update(&[2]);
        }
        format!("ts{}", &h.finalize().to_hex()[..16])
    }

    /// The context of a file: its root and module.
    pub fn context(&self, rel: &str) -> FileContext {
        let root = self
            .roots
            .iter()
            .find(|r| r.dir.is_empty() || rel.starts_with(&format!("{}/", r.dir)));
        let (dir, name, entries) = match root {
            Some(r) => (r.dir.as_str(), r.name.as_str(), r.entries.as_slice()),
            None => ("", "__root__", &[][..]),
        };
        let below = if dir.is_empty() {
            rel
        } else {
            &rel[dir.len() + 1..]
        };
        FileContext {
            path: rel.to_string(),
            package: name.to_string(),
            unit: dir.to_string(),
            module_path: module_of(below).split('/').map(str::to_string).collect(),
            is_test_file: is_test_path(rel),
            // The configuration's aliases, then the package's own entry
            // points (a package may import itself by name).
            path_aliases: self
                .aliases_of(rel)
                .into_iter()
                .chain(entries.iter().cloned())
                .collect(),
        }
    }

    /// The path aliases of the configuration a file builds with: the
    /// nearest directory above it with one; of a configuration that
    /// refers to others (`references`), the first whose `include` holds
    /// the file.
    fn aliases_of(&self, rel: &str) -> Aliases {
        let mut dir = split_path(rel).0;
        loop {
            if let Some(scoped) = self.configs.get(dir) {
                let holds = |s: &&Scoped| {
                    s.includes.is_empty()
                        || s.includes
                            .iter()
                            .any(|i| i.is_empty() || rel == i || rel.starts_with(&format!("{i}/")))
                };
                return scoped
                    .iter()
                    .find(holds)
                    .map(|s| s.aliases.clone())
                    .unwrap_or_default();
            }
            if dir.is_empty() {
                return Vec::new();
            }
            dir = split_path(dir).0;
        }
    }

    pub fn contexts(&self, files: &BTreeSet<String>) -> BTreeMap<String, FileContext> {
        files.iter().map(|f| (f.clone(), self.context(f))).collect()
    }
}

impl crate::index::lang::Layout for Layout {
    fn digest(&self) -> String {
        Layout::digest(self)
    }

    fn guess(&self, rel: &str) -> FileContext {
        self.context(rel)
    }

    fn unread(&self) -> Vec<(String, String)> {
        self.unread.clone()
    }

    fn contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        _decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        Layout::contexts(self, files)
    }

    fn reached_contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        _decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        Layout::contexts(self, files)
    }

    /// Every file is a root of its own: its place needs no parent.
    fn root_contexts(&self, files: &BTreeSet<String>) -> Vec<(String, FileContext)> {
        files.iter().map(|f| (f.clone(), self.context(f))).collect()
    }

    fn child_contexts(
        &self,
        _file: &str,
        _mod_rs: bool,
        _parent: &FileContext,
        _decls: &[ChildDecl],
        _files: &BTreeSet<String>,
    ) -> Vec<(String, bool, FileContext)> {
        Vec::new()
    }
}

/// The extensions a module drops, longest first.
const SUFFIXES: &[&str] = &[
    ".d.ts", ".d.mts", ".d.cts", ".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs",
];

/// A path with its extension dropped: `a/b.d.ts` → `a/b`, `a/b.tsx` → `a/b`.
pub fn module_of(path: &str) -> &str {
    SUFFIXES
        .iter()
        .find_map(|s| path.strip_suffix(s))
        .unwrap_or(path)
}

/// Whether a file declares types only: `x.d.ts`, `x.d.mts`, `x.d.cts`.
pub fn is_declaration(path: &str) -> bool {
    SUFFIXES[..3].iter().any(|s| path.ends_with(s))
}

/// Directories whose files are tests or their scaffolding, as jest,
/// vitest, mocha, `node:test` and Playwright projects lay them out.
pub const TEST_DIRS: [&str; 5] = ["test", "tests", "__tests__", "__mocks__", "e2e"];

/// Whether a path is test code: `*.test.*`, `*.spec.*` (type tests
/// `*.test-d.*` too), or under one of the [`TEST_DIRS`].
pub fn is_test_path(rel: &str) -> bool {
    let mut parts = rel.split('/').peekable();
    while let Some(p) = parts.next() {
        if parts.peek().is_none() {
            return [".test.", ".spec.", ".test-d.", ".spec-d."]
                .iter()
                .any(|t| p.contains(t));
        }
        if TEST_DIRS.contains(&p) {
            return true;
        }
    }
    false
}

/// The `"name"` of a `package.json`, if it has one at its top level.
fn package_name(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    let name = v.get("name")?.as_str()?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

/// A package's entry points as path aliases, from its `package.json`:
/// each subpath of `exports` (`"./server"` → `name/server`, `"./*"` →
/// `name/*`), the files its conditions name, in order; and `source`,
/// `module`, `main` for the package itself. Type declarations are left
/// out (a package's source wins over them), and the files a source tree
/// lacks (build output) resolve to nothing.
fn package_entries(text: &str, name: &str, dir: &str) -> Aliases {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let in_dir = |t: &str| {
        let t = t.trim_start_matches("./");
        if dir.is_empty() {
            t.to_string()
        } else {
            format!("{dir}/{t}")
        }
    };
    let mut out: Aliases = Vec::new();
    let mut add = |pattern: String, targets: Vec<String>| {
        // Declarations lose to the source a package's directory holds
        // (found by path after these), and a JSON file is no module.
        let targets: Vec<String> = targets
            .iter()
            .filter(|t| !t.ends_with(".json") && !is_declaration(t))
            .map(|t| in_dir(t))
            .collect();
        if targets.is_empty() {
            return;
        }
        match out.iter_mut().find(|(p, _)| *p == pattern) {
            Some((_, ts)) => ts.extend(targets),
            None => out.push((pattern, targets)),
        }
    };
    match v.get("exports") {
        Some(serde_json::Value::Object(map)) if map.keys().any(|k| k.starts_with('.')) => {
            for (sub, target) in map {
                let pattern = match sub.trim_start_matches('.').trim_start_matches('/') {
                    "" => name.to_string(),
                    rest => format!("{name}/{rest}"),
                };
                add(pattern, leaves(target));
            }
        }
        Some(e) => add(name.to_string(), leaves(e)),
        None => {}
    }
    let fields = ["source", "module", "main"];
    let named: Vec<String> = fields
        .iter()
        .filter_map(|f| v.get(*f)?.as_str().map(str::to_string))
        .collect();
    add(name.to_string(), named);
    out
}

/// The files an `exports` value names: a string, or each of an object's
/// conditions or an array's items, in order.
fn leaves(v: &serde_json::Value) -> Vec<String> {
    match v {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Object(m) => m.values().flat_map(leaves).collect(),
        serde_json::Value::Array(a) => a.iter().flat_map(leaves).collect(),
        _ => Vec::new(),
    }
}

/// `a/b/c.json` → (`a/b`, `c.json`); `c.json` → (``, `c.json`).
pub(crate) fn split_path(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

fn last_segment(dir: &str) -> &str {
    dir.rsplit('/').next().unwrap_or(dir)
}

fn depth(dir: &str) -> usize {
    if dir.is_empty() {
        0
    } else {
        dir.matches('/').count() + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_json_names_its_entry_points() {
        let text = r#"{"name": "@acme/ui", "main": "dist/index.js", "types": "src/index.d.ts",
            "exports": {".": {"@acme/source": "./src/index.ts", "types": "./dist/index.d.ts", "import": "./dist/index.mjs"},
                        "./button": "./src/button/index.tsx", "./*": "./lib/*.js", "./package.json": "./package.json"}}"#;
        let e = package_entries(text, "@acme/ui", "packages/ui");
        let get = |p: &str| e.iter().find(|(q, _)| q == p).map(|(_, t)| t.clone());
        assert_eq!(
            get("@acme/ui").unwrap(),
            [
                "packages/ui/src/index.ts",
                "packages/ui/dist/index.mjs",
                "packages/ui/dist/index.js"
            ]
        );
        assert_eq!(
            get("@acme/ui/button").unwrap(),
            ["packages/ui/src/button/index.tsx"]
        );
        assert_eq!(get("@acme/ui/*").unwrap(), ["packages/ui/lib/*.js"]);
        assert_eq!(get("@acme/ui/package.json"), None);
        assert!(package_entries("not json", "x", "").is_empty());
        assert_eq!(
            package_entries(r#"{"exports": "./main.js"}"#, "solo", ""),
            [("solo".to_string(), vec!["main.js".to_string()])]
        );
    }

    #[test]
    fn modules_are_paths_below_the_nearest_package_json() {
        let manifests: BTreeMap<String, String> = [
            ("package.json".into(), "{\"name\": \"hono\"}".to_string()),
            (
                "packages/ui/package.json".into(),
                "{\"name\": \"@acme/ui\"}".into(),
            ),
            ("tools/package.json".into(), "not json".into()),
        ]
        .into_iter()
        .collect();
        let l = Layout::new(&manifests, &BTreeSet::new());
        let unread: Vec<&str> = l.unread.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(unread, ["tools/package.json"]);
        let c = l.context("src/utils/http-status.ts");
        assert_eq!(c.module_path, ["src", "utils", "http-status"]);
        assert_eq!((c.unit.as_str(), c.package.as_str()), ("", "hono"));
        let d = l.context("packages/ui/src/index.d.ts");
        assert_eq!(d.module_path, ["src", "index"]);
        assert_eq!(
            (d.unit.as_str(), d.package.as_str()),
            ("packages/ui", "@acme/ui")
        );
        assert_eq!(l.context("tools/x.mjs").package, "tools");
        assert!(l.context("src/a.test.ts").is_test_file);
        assert!(l.context("src/__tests__/a.tsx").is_test_file);
        assert!(l.context("src/b.spec.js").is_test_file);
        assert!(l.context("packages/dts-test/setup.test-d.ts").is_test_file);
        assert!(l.context("test/main.ts").is_test_file);
        assert!(l.context("packages/ui/tests/button.tsx").is_test_file);
        assert!(l.context("src/__mocks__/fs.js").is_test_file);
        assert!(l.context("e2e/login.ts").is_test_file);
        assert!(!l.context("src/testing.ts").is_test_file);
        assert!(!l.context("src/test-utils.ts").is_test_file);
    }
}
