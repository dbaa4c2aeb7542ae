//! The Cargo layout: which crates a workspace builds and which crate and
//! module each `.rs` file belongs to.
//!
//! A file's place is decided the way Cargo and rustc decide it: every
//! target of a package (`[lib]`, `[[bin]]`, `[[test]]`, `[[example]]`,
//! `[[bench]]`, the build script — explicit entries with their `path`, and
//! the ones Cargo discovers unless `autobins`/`autotests`/… say otherwise)
//! is a crate root, and a file is a module of the crate whose root reaches
//! it through `mod name;` declarations (`#[path = "…"]` honoured). That
//! needs the `mod` declarations of other files, which only parsing yields,
//! so the layout works in two steps:
//!
//! 1. [`Layout::guess`] — from the manifests and the path alone, used to
//!    parse a file the first time (right for every file in the standard
//!    layout);
//! 2. [`Layout::contexts`] — from the module declarations of every file's
//!    extract; a file whose extract was made with another context is
//!    extracted again (its keys contain its module path).
//!
//! Files no crate root reaches (cfg-gated leftovers, files named only in
//! macros) keep their guessed context.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::model::{ChildDecl, FileContext};

/// One crate a package builds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// Crate name with `-` replaced by `_`.
    pub package: String,
    /// How resolution tells this crate apart ([`FileContext::unit`]):
    /// the name of a library, the root path of any other target.
    pub unit: String,
    /// Repository-relative path of the crate root file.
    pub root: String,
    /// Test and bench targets: everything in them is test code.
    pub is_test: bool,
}

#[derive(Debug, Clone)]
struct Package {
    /// Repository-relative directory of the manifest (`""` at the root).
    dir: String,
    /// The package's name, `-` replaced by `_` (the lib's default name).
    name: String,
    targets: Vec<Target>,
}

/// The packages of a tree and their targets.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// By manifest directory.
    packages: BTreeMap<String, Package>,
    /// Target root path → index into the target list of its package.
    roots: BTreeMap<String, (String, usize)>,
}

/// The manifest fields that decide targets.
#[derive(Default)]
struct Manifest {
    name: String,
    lib: Option<TargetDecl>,
    bins: Vec<TargetDecl>,
    tests: Vec<TargetDecl>,
    examples: Vec<TargetDecl>,
    benches: Vec<TargetDecl>,
    auto: [bool; 4],
    /// `None`: `build.rs` if present; `Some(None)`: `build = false`.
    build: Option<Option<String>>,
}

#[derive(Default, Clone)]
struct TargetDecl {
    name: Option<String>,
    path: Option<String>,
}

fn parse_manifest(text: &str) -> Option<Manifest> {
    let table: toml::Table = match toml::from_str(text) {
        Ok(t) => t,
        // An unreadable manifest still names its package as far as a
        // line scan can tell; its targets are the discovered ones.
        Err(_) => {
            return package_name(text).map(|name| Manifest {
                name,
                auto: [true; 4],
                ..Manifest::default()
            })
        }
    };
    let package = table.get("package")?.as_table()?;
    let name = package.get("name")?.as_str()?.to_string();
    let flag = |k: &str| package.get(k).and_then(|v| v.as_bool()).unwrap_or(true);
    let decl = |v: &toml::Value| TargetDecl {
        name: v.get("name").and_then(|n| n.as_str()).map(str::to_string),
        path: v.get("path").and_then(|n| n.as_str()).map(str::to_string),
    };
    let list = |k: &str| -> Vec<TargetDecl> {
        table
            .get(k)
            .and_then(|v| v.as_array())
            .map(|a| a.iter().map(decl).collect())
            .unwrap_or_default()
    };
    let build = match package.get("build") {
        Some(toml::Value::String(s)) => Some(Some(s.clone())),
        Some(toml::Value::Boolean(false)) => Some(None),
        _ => None,
    };
    Some(Manifest {
        name,
        lib: table.get("lib").map(decl),
        bins: list("bin"),
        tests: list("test"),
        examples: list("example"),
        benches: list("bench"),
        auto: [
            flag("autobins"),
            flag("autotests"),
            flag("autoexamples"),
            flag("autobenches"),
        ],
        build,
    })
}

fn sanitize(s: &str) -> String {
    s.replace('-', "_")
}

/// `a/./b/../c` → `a/c`; `None` when it climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(out.join("/"))
}

fn join(dir: &str, rel: &str) -> Option<String> {
    if dir.is_empty() {
        normalize(rel)
    } else {
        normalize(&format!("{dir}/{rel}"))
    }
}

fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

impl Layout {
    /// The layout of a tree: `manifests` maps a manifest's path to its
    /// text, `files` holds every repository-relative `.rs` path.
    pub fn new(manifests: &BTreeMap<String, String>, files: &BTreeSet<String>) -> Layout {
        use rayon::prelude::*;
        let mut layout = Layout::default();
        // Parsed on every core: a large tree has hundreds of manifests,
        // and their TOML was a tenth of a walk.
        let packages: Vec<Package> = manifests
            .par_iter()
            .filter_map(|(path, text)| {
                let dir = crate::index::lang::manifest_dir(path);
                let m = parse_manifest(text)?;
                Some(Package {
                    dir: dir.to_string(),
                    name: sanitize(&m.name),
                    targets: targets_of(dir, &m, files),
                })
            })
            .collect();
        for pkg in packages {
            let dir = pkg.dir.clone();
            for (i, t) in pkg.targets.iter().enumerate() {
                layout
                    .roots
                    .entry(t.root.clone())
                    .or_insert((dir.clone(), i));
            }
            layout.packages.insert(dir.clone(), pkg);
        }
        layout
    }

    /// Every target of every package, in package order.
    pub fn targets(&self) -> impl Iterator<Item = &Target> {
        self.packages.values().flat_map(|p| p.targets.iter())
    }

    /// A digest of the targets: when it changes, files may belong to other
    /// crates, so every file is extracted again.
    pub fn digest(&self) -> String {
        let mut h = blake3::Hasher::new();
        for t in self.targets() {
            for part in [t.package.as_str(), t.unit.as_str(), t.root.as_str()] {
                h.update(part.as_bytes());
                h.update(&[0]);
            }
            h.update(&[t.is_test as u8, 1]);
        }
        h.finalize().to_hex()[..16].to_string()
    }

    fn package_of(&self, rel: &str) -> Option<&Package> {
        let mut dir = rel;
        while let Some((parent, _)) = dir.rsplit_once('/') {
            if let Some(p) = self.packages.get(parent) {
                return Some(p);
            }
            dir = parent;
        }
        self.packages.get("")
    }

    /// Crate and module of `rel` from the manifests and its path alone.
    pub fn guess(&self, rel: &str) -> FileContext {
        let is_test_file = rel.split('/').any(|c| c == "tests");
        if let Some((dir, i)) = self.roots.get(rel) {
            let t = &self.packages[dir].targets[*i];
            return FileContext {
                path: rel.to_string(),
                package: t.package.clone(),
                unit: t.unit.clone(),
                module_path: vec![],
                is_test_file: is_test_file || t.is_test,
                path_aliases: Vec::new(),
            };
        }
        let stem = |p: &str| -> String {
            let file = p.rsplit('/').next().unwrap_or(p);
            sanitize(file.strip_suffix(".rs").unwrap_or(file))
        };
        let Some(pkg) = self.package_of(rel) else {
            // A loose file: its own crate root.
            return FileContext {
                path: rel.to_string(),
                package: stem(rel),
                unit: stem(rel),
                module_path: vec![],
                is_test_file,
                path_aliases: Vec::new(),
            };
        };
        let inner = if pkg.dir.is_empty() {
            rel
        } else {
            &rel[pkg.dir.len() + 1..]
        };
        let (top, rest) = inner.split_once('/').unwrap_or(("", inner));
        match top {
            "src" => FileContext {
                path: rel.to_string(),
                package: pkg.name.clone(),
                unit: pkg.name.clone(),
                module_path: module_path_of(rest),
                is_test_file,
                path_aliases: Vec::new(),
            },
            "tests" | "benches" | "examples" => {
                // Each top-level file (or directory with main.rs) is a crate.
                let (target, inside) = rest.split_once('/').unwrap_or((rest, ""));
                // Not a library: known by its root, as a reached file is
                // (`tests/it.rs`, `tests/it/main.rs`), never by a name a
                // library may have.
                let crate_id = match inside {
                    "" => rel.to_string(),
                    _ => rel[..rel.len() - inside.len()].to_string() + "main.rs",
                };
                FileContext {
                    path: rel.to_string(),
                    package: sanitize(target.strip_suffix(".rs").unwrap_or(target)),
                    unit: crate_id,
                    module_path: if inside.is_empty() {
                        vec![]
                    } else {
                        module_path_of(inside)
                    },
                    is_test_file: is_test_file || top != "examples",
                    path_aliases: Vec::new(),
                }
            }
            _ => FileContext {
                path: rel.to_string(),
                package: stem(rel),
                unit: stem(rel),
                module_path: vec![],
                is_test_file,
                path_aliases: Vec::new(),
            },
        }
    }

    /// The context of every file in `files`: reached from a crate root
    /// through `mod` declarations (`mods_of` gives a file's), else guessed.
    pub fn contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        mods_of: impl Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        let mut out = self.reached_contexts(files, mods_of);
        for f in files {
            if !out.contains_key(f) {
                out.insert(f.clone(), self.guess(f));
            }
        }
        out
    }

    /// The contexts of the files in `files` reached from a crate root
    /// through `mod` declarations, breadth first. A file whose
    /// declarations `mods_of` does not know yet (not parsed) ends its
    /// branch: the files reached are those every complete run reaches
    /// through the same parents, with the same contexts — the first
    /// declaration to claim a file, in the same order, claims it here.
    pub fn reached_contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        mods_of: impl Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        let mut out: BTreeMap<String, FileContext> = BTreeMap::new();
        let mut queue: VecDeque<(String, bool)> = VecDeque::new();
        for (root, ctx) in self.root_contexts(files) {
            out.insert(root.clone(), ctx);
            queue.push_back((root, true));
        }
        while let Some((file, children_beside)) = queue.pop_front() {
            let Some(decls) = mods_of(&file) else {
                continue;
            };
            for (child, child_beside, ctx) in
                self.child_contexts(&file, children_beside, &out[&file], decls, files)
            {
                if out.contains_key(&child) {
                    continue;
                }
                out.insert(child.clone(), ctx);
                queue.push_back((child, child_beside));
            }
        }
        out
    }

    /// The crate roots among `files`, each once, in its context, in the
    /// order [`Layout::reached_contexts`] starts from them (a root is
    /// "mod-rs": its children live beside it).
    pub fn root_contexts(&self, files: &BTreeSet<String>) -> Vec<(String, FileContext)> {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut roots = Vec::new();
        for t in self.targets() {
            if !files.contains(&t.root) || !seen.insert(t.root.as_str()) {
                continue;
            }
            let mut ctx = self.guess(&t.root);
            ctx.package = t.package.clone();
            ctx.unit = t.unit.clone();
            ctx.module_path.clear();
            ctx.is_test_file |= t.is_test;
            roots.push((t.root.clone(), ctx));
        }
        roots
    }

    /// The files among `files` that the declarations `decls` of `file`
    /// (in context `parent`, "mod-rs" or not) load, in declaration order,
    /// each with whether it is "mod-rs" and the context its declaration
    /// gives it. A file declared twice is listed twice; the first
    /// declaration to reach it in [`Layout::reached_contexts`]'s order
    /// claims it.
    pub fn child_contexts(
        &self,
        file: &str,
        children_beside: bool,
        parent: &FileContext,
        decls: &[ChildDecl],
        files: &BTreeSet<String>,
    ) -> Vec<(String, bool, FileContext)> {
        decls
            .iter()
            .filter_map(|d| {
                let (child, child_beside) = child_file(file, children_beside, d, files)?;
                let mut module_path = parent.module_path.clone();
                module_path.extend(d.inline.iter().cloned());
                module_path.push(d.name.clone());
                let ctx = FileContext {
                    path: child.clone(),
                    package: parent.package.clone(),
                    unit: parent.unit.clone(),
                    module_path,
                    is_test_file: parent.is_test_file
                        || d.cfg_test
                        || child.split('/').any(|c| c == "tests"),
                    path_aliases: Vec::new(),
                };
                Some((child, child_beside, ctx))
            })
            .collect()
    }
}

/// The file a `mod name;` of `file` loads, and whether that file is itself
/// "mod-rs" (its children live beside it rather than in a directory named
/// after it).
fn child_file(
    file: &str,
    children_beside: bool,
    d: &ChildDecl,
    files: &BTreeSet<String>,
) -> Option<(String, bool)> {
    let file_name = file.rsplit('/').next().unwrap_or(file);
    let stem = file_name.strip_suffix(".rs").unwrap_or(file_name);
    // The directory `mod` declarations of this file look in.
    let own_dir = if children_beside || stem == "mod" {
        parent_dir(file).to_string()
    } else if parent_dir(file).is_empty() {
        stem.to_string()
    } else {
        format!("{}/{stem}", parent_dir(file))
    };
    let mut dir = own_dir;
    for seg in &d.inline {
        dir = if dir.is_empty() {
            seg.clone()
        } else {
            format!("{dir}/{seg}")
        };
    }
    if let Some(p) = &d.path_attr {
        // Outside inline modules the path is relative to the declaring
        // file's directory; inside them, to the inline module's directory.
        let base = if d.inline.is_empty() {
            parent_dir(file).to_string()
        } else {
            dir
        };
        let path = join(&base, p)?;
        // A file loaded through `#[path]` declares its children beside it.
        return files.contains(&path).then_some((path, true));
    }
    let flat = join(&dir, &format!("{}.rs", d.name))?;
    if files.contains(&flat) {
        return Some((flat, false));
    }
    let nested = join(&dir, &format!("{}/mod.rs", d.name))?;
    files.contains(&nested).then_some((nested, true))
}

/// The targets of one package, explicit ones first, then discovered ones
/// whose root no explicit target claims.
fn targets_of(dir: &str, m: &Manifest, files: &BTreeSet<String>) -> Vec<Target> {
    let at = |rel: &str| join(dir, rel);
    let pkg = sanitize(&m.name);
    let mut out: Vec<Target> = Vec::new();
    // The library.
    let lib_root = match m.lib.as_ref().and_then(|l| l.path.clone()) {
        Some(p) => at(&p),
        None => at("src/lib.rs"),
    };
    let lib_name = m
        .lib
        .as_ref()
        .and_then(|l| l.name.clone())
        .unwrap_or_else(|| pkg.clone());
    push_target(&mut out, files, lib_name, lib_root, false);
    // Only a library is known to other crates, by its name.
    if let Some(lib) = out.first_mut() {
        lib.unit = lib.package.clone();
    }

    // Explicit targets of each kind, then the discovered ones.
    let kinds: [(&Vec<TargetDecl>, &str, bool, bool); 4] = [
        (&m.bins, "src/bin", false, m.auto[0]),
        (&m.tests, "tests", true, m.auto[1]),
        (&m.examples, "examples", false, m.auto[2]),
        (&m.benches, "benches", true, m.auto[3]),
    ];
    for (decls, auto_dir, is_test, auto) in kinds {
        for d in decls {
            let Some(name) = decl_name(d) else {
                continue;
            };
            let root = decl_root(dir, d, auto_dir, &name, &pkg, files);
            push_target(&mut out, files, name, root, is_test);
        }
        if !auto {
            continue;
        }
        if auto_dir == "src/bin" {
            push_target(&mut out, files, pkg.clone(), at("src/main.rs"), false);
        }
        push_discovered(&mut out, files, dir, auto_dir, is_test);
    }
    // The build script.
    let build = match &m.build {
        Some(Some(p)) => at(p),
        Some(None) => None,
        None => at("build.rs"),
    };
    push_target(&mut out, files, "build_script_build".into(), build, false);
    out
}

/// Adds a target whose root is one of `files` and no earlier target's.
fn push_target(
    out: &mut Vec<Target>,
    files: &BTreeSet<String>,
    name: String,
    root: Option<String>,
    is_test: bool,
) {
    if let Some(root) = root.filter(|r| files.contains(r)) {
        if !out.iter().any(|t| t.root == root) {
            out.push(Target {
                package: sanitize(&name),
                unit: root.clone(),
                root,
                is_test,
            });
        }
    }
}

/// A declared target's name: its `name`, else its path's file stem.
fn decl_name(d: &TargetDecl) -> Option<String> {
    d.name.clone().or_else(|| {
        d.path.as_deref().map(|p| {
            let f = p.rsplit('/').next().unwrap_or(p);
            f.strip_suffix(".rs").unwrap_or(f).to_string()
        })
    })
}

/// A declared target's root: its `path`, else `auto_dir/name.rs` or
/// `auto_dir/name/main.rs` when present, else for a binary named as the
/// package `src/main.rs`.
fn decl_root(
    dir: &str,
    d: &TargetDecl,
    auto_dir: &str,
    name: &str,
    pkg: &str,
    files: &BTreeSet<String>,
) -> Option<String> {
    let at = |rel: &str| join(dir, rel);
    let exists = |p: &Option<String>| p.as_ref().is_some_and(|p| files.contains(p));
    match &d.path {
        Some(p) => at(p),
        None => {
            let flat = at(&format!("{auto_dir}/{name}.rs"));
            let nested = at(&format!("{auto_dir}/{name}/main.rs"));
            let main = at("src/main.rs");
            if exists(&flat) {
                flat
            } else if exists(&nested) {
                nested
            } else if auto_dir == "src/bin" && sanitize(name) == pkg {
                main
            } else {
                None
            }
        }
    }
}

/// Adds the targets discovered in `auto_dir`: its `name.rs` files and
/// `name/main.rs` files.
fn push_discovered(
    out: &mut Vec<Target>,
    files: &BTreeSet<String>,
    dir: &str,
    auto_dir: &str,
    is_test: bool,
) {
    let Some(base) = join(dir, auto_dir) else {
        return;
    };
    let prefix = if base.is_empty() {
        String::new()
    } else {
        format!("{base}/")
    };
    for f in files.range(prefix.clone()..) {
        let Some(rest) = f.strip_prefix(&prefix) else {
            break;
        };
        let name = match rest.split('/').collect::<Vec<_>>()[..] {
            [file] => file.strip_suffix(".rs"),
            [d, "main.rs"] => Some(d),
            _ => None,
        };
        if let Some(name) = name {
            push_target(out, files, name.to_string(), Some(f.clone()), is_test);
        }
    }
}

/// Module path of a file below a crate's source directory by the standard
/// layout: `lib.rs`/`main.rs` → `[]`, `a/mod.rs` → `[a]`, `a/b.rs` → `[a, b]`.
fn module_path_of(under_src: &str) -> Vec<String> {
    let mut parts: Vec<&str> = under_src.split('/').collect();
    let last = parts.pop().unwrap_or("");
    let stem = last.strip_suffix(".rs").unwrap_or(last);
    let mut path: Vec<String> = parts.iter().map(|p| sanitize(p)).collect();
    let is_root_file = parts.is_empty() && (stem == "lib" || stem == "main");
    if !(stem == "mod" || is_root_file || (stem == "main" && !parts.is_empty())) {
        path.push(sanitize(stem));
    }
    path
}

/// The `name` of a manifest's `[package]` table, if it has one.
pub fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
            continue;
        }
        if !in_package {
            continue;
        }
        if let Some(rest) = line.strip_prefix("name") {
            let rest = rest.trim_start();
            if let Some(value) = rest.strip_prefix('=') {
                let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
                if !v.is_empty() {
                    return Some(v.to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(rel: &str) -> FileContext {
        let files: BTreeSet<String> = [
            "src/lib.rs",
            "src/main.rs",
            "src/a/mod.rs",
            "src/a/b.rs",
            "src/bin/tool/main.rs",
            "crates/core/src/x.rs",
            "tests/it.rs",
            "tests/common/mod.rs",
            "build.rs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut m = BTreeMap::new();
        m.insert(
            "Cargo.toml".to_string(),
            "[package]\nname = \"my-app\"\n".to_string(),
        );
        m.insert(
            "crates/core/Cargo.toml".to_string(),
            "[package]\nname = \"app-core\"\n".to_string(),
        );
        Layout::new(&m, &files).guess(rel)
    }

    #[test]
    fn modules_follow_the_cargo_layout() {
        assert_eq!(ctx("src/lib.rs").module_path, Vec::<String>::new());
        assert_eq!(ctx("src/main.rs").module_path, Vec::<String>::new());
        assert_eq!(ctx("src/a/mod.rs").module_path, vec!["a"]);
        assert_eq!(ctx("src/a/b.rs").module_path, vec!["a", "b"]);
        // A binary is a crate of its own.
        let bin = ctx("src/bin/tool/main.rs");
        assert_eq!(bin.package, "tool");
        assert!(bin.module_path.is_empty());
        let c = ctx("crates/core/src/x.rs");
        assert_eq!(c.package, "app_core");
        assert_eq!(c.module_path, vec!["x"]);
        let t = ctx("tests/it.rs");
        assert_eq!(t.package, "it");
        assert!(t.is_test_file);
        assert!(t.module_path.is_empty());
        assert_eq!(ctx("tests/common/mod.rs").package, "common");
        assert_eq!(ctx("build.rs").package, "build_script_build");
        // Resolution knows a library by its name, any other target by its
        // root: the binary named as the library is another crate.
        assert_eq!(ctx("src/lib.rs").unit, "my_app");
        assert_eq!(ctx("src/a/b.rs").unit, "my_app");
        assert_eq!(ctx("src/main.rs").package, "my_app");
        assert_eq!(ctx("src/main.rs").unit, "src/main.rs");
        assert_eq!(ctx("build.rs").unit, "build.rs");
        // A file of a test target no declaration reached is of that
        // target, not of a library named like it.
        assert_eq!(ctx("tests/common/mod.rs").unit, "tests/common/main.rs");
    }

    #[test]
    fn package_names_come_from_the_package_table() {
        let m = "[workspace]\nmembers = []\n[package]\nname = \"serde-json\"\nversion = \"1\"\n";
        assert_eq!(package_name(m).as_deref(), Some("serde-json"));
        assert_eq!(package_name("[workspace]\nname = \"x\"\n"), None);
    }

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|s| s.to_string()).collect()
    }

    fn decl(name: &str, path_attr: Option<&str>) -> ChildDecl {
        ChildDecl {
            name: name.into(),
            inline: vec![],
            path_attr: path_attr.map(str::to_string),
            cfg_test: false,
        }
    }

    #[test]
    fn explicit_targets_and_auto_discovery() {
        let files = set(&[
            "src/lib.rs",
            "src/main.rs",
            "src/bin/tool.rs",
            "cli/entry.rs",
            "tests/it.rs",
            "tests/common/mod.rs",
            "checks/smoke.rs",
            "build.rs",
        ]);
        let manifest = r#"
[package]
name = "my-app"
autotests = false
[[bin]]
name = "app-cli"
path = "cli/entry.rs"
[[test]]
name = "smoke"
path = "checks/smoke.rs"
"#;
        let mut manifests = BTreeMap::new();
        manifests.insert("Cargo.toml".to_string(), manifest.to_string());
        let layout = Layout::new(&manifests, &files);
        let roots: Vec<(&str, &str, bool)> = layout
            .targets()
            .map(|t| (t.package.as_str(), t.root.as_str(), t.is_test))
            .collect();
        assert_eq!(
            roots,
            vec![
                ("my_app", "src/lib.rs", false),
                ("app_cli", "cli/entry.rs", false),
                ("my_app", "src/main.rs", false),
                ("tool", "src/bin/tool.rs", false),
                ("smoke", "checks/smoke.rs", true),
                ("build_script_build", "build.rs", false),
            ]
        );
    }

    #[test]
    fn files_belong_to_the_crate_whose_root_declares_them() {
        let files = set(&[
            "tests/tests.rs",
            "tests/testenv/mod.rs",
            "tests/testenv/deep.rs",
            "src/main.rs",
            "src/gen/out.rs",
            "src/sys/unix.rs",
        ]);
        let mut manifests = BTreeMap::new();
        manifests.insert(
            "Cargo.toml".to_string(),
            "[package]\nname = \"fd-find\"\n".into(),
        );
        let layout = Layout::new(&manifests, &files);
        let children: BTreeMap<&str, Vec<ChildDecl>> = [
            ("tests/tests.rs", vec![decl("testenv", None)]),
            ("tests/testenv/mod.rs", vec![decl("deep", None)]),
            (
                "src/main.rs",
                vec![
                    decl("generated", Some("gen/out.rs")),
                    ChildDecl {
                        name: "imp".into(),
                        inline: vec!["sys".into()],
                        path_attr: None,
                        cfg_test: true,
                    },
                ],
            ),
        ]
        .into_iter()
        .collect();
        let ctx = layout.contexts(&files, |f| children.get(f).map(|v| &v[..]));
        let env = &ctx["tests/testenv/mod.rs"];
        assert_eq!(
            (env.package.as_str(), &env.module_path[..]),
            ("tests", &["testenv".to_string()][..])
        );
        assert!(env.is_test_file);
        assert_eq!(
            ctx["tests/testenv/deep.rs"].module_path,
            vec!["testenv", "deep"]
        );
        let g = &ctx["src/gen/out.rs"];
        assert_eq!(
            (g.package.as_str(), &g.module_path[..]),
            ("fd_find", &["generated".to_string()][..])
        );
        // Not declared by anyone: the guess from the path.
        assert_eq!(ctx["src/sys/unix.rs"].module_path, vec!["sys", "unix"]);
    }

    #[test]
    fn inline_modules_and_paths_that_climb() {
        let files = set(&["src/lib.rs", "src/a.rs", "src/a/b/c.rs", "shared/x.rs"]);
        let mut manifests = BTreeMap::new();
        manifests.insert("Cargo.toml".to_string(), "[package]\nname = \"k\"\n".into());
        let layout = Layout::new(&manifests, &files);
        let children: BTreeMap<&str, Vec<ChildDecl>> = [
            (
                "src/lib.rs",
                vec![decl("a", None), decl("x", Some("../shared/x.rs"))],
            ),
            (
                "src/a.rs",
                vec![ChildDecl {
                    name: "c".into(),
                    inline: vec!["b".into()],
                    path_attr: None,
                    cfg_test: false,
                }],
            ),
        ]
        .into_iter()
        .collect();
        let ctx = layout.contexts(&files, |f| children.get(f).map(|v| &v[..]));
        assert_eq!(ctx["src/a/b/c.rs"].module_path, vec!["a", "b", "c"]);
        assert_eq!(ctx["shared/x.rs"].package, "k");
        assert_eq!(ctx["shared/x.rs"].module_path, vec!["x"]);
    }
}
