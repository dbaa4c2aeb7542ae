//! The Python layout: where each file sits among the import roots of a
//! tree, and so its dotted module path.
//!
//! Python needs no declarations to place a file: a file's module follows
//! from its path below an import root (a `sys.path` entry). The roots are
//! the tree's own top, every directory holding a `pyproject.toml`,
//! `setup.cfg` or `setup.py`, and the `src/` directory beside such a
//! manifest (the "src layout"). A file belongs to its deepest root; its
//! module path is its path below that root with `/` read as `.`, the
//! `.py`/`.pyi` suffix dropped and `__init__` standing for its package.
//! Directories without `__init__.py` are namespace packages and count as
//! packages all the same, so `src/flask/sansio/app.py` is `flask.sansio.app`.
//!
//! In the [`FileContext`] a root is the package: `unit` is its directory
//! (`""` for the top, `src`, `examples/tutorial`), `package` the
//! project's name from its manifest when it has one (else the directory's
//! name), `module_path` the dotted path's segments.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ChildDecl, FileContext};

/// An import root: its directory (`""`: the tree's top) and the name of
/// the project it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Root {
    dir: String,
    name: String,
}

/// The import roots of a tree.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Deepest first, so a file's root is the first that holds it.
    roots: Vec<Root>,
}

impl Layout {
    /// The roots of a tree from its manifests (path → text) and its
    /// Python files.
    pub fn new(manifests: &BTreeMap<String, String>, files: &BTreeSet<String>) -> Layout {
        let mut roots: Vec<Root> = vec![Root {
            dir: String::new(),
            name: String::new(),
        }];
        for (dir, name) in project_names(manifests) {
            let dir = &dir;
            let src = join(dir, "src");
            let src_prefix = format!("{src}/");
            if files.iter().any(|f| f.starts_with(&src_prefix)) {
                roots.push(Root {
                    dir: src,
                    name: name.clone(),
                });
            }
            match roots.iter_mut().find(|r| r.dir == *dir) {
                Some(r) => r.name = name,
                None => roots.push(Root {
                    dir: dir.clone(),
                    name,
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
        Layout { roots }
    }

    /// A digest of the roots: when it changes, files may have other
    /// module paths.
    pub fn digest(&self) -> String {
        let mut h = blake3::Hasher::new();
        for r in &self.roots {
            h.update(r.dir.as_bytes());
            h.update(&[0]);
            h.update(r.name.as_bytes());
            h.update(&[1]);
        }
        format!("py{}", &h.finalize().to_hex()[..16])
    }

    /// The context of a file: its root and dotted module path.
    pub fn context(&self, rel: &str) -> FileContext {
        let root = self
            .roots
            .iter()
            .find(|r| r.dir.is_empty() || rel.starts_with(&format!("{}/", r.dir)));
        let (dir, name) = match root {
            Some(r) => (r.dir.as_str(), r.name.as_str()),
            None => ("", "__root__"),
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
            module_path: module_path_of(below),
            is_test_file: is_test_path(rel),
            path_aliases: Vec::new(),
        }
    }

    /// Every file's context: no declaration moves a Python file.
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

/// `a/b/c.py` → `["a", "b", "c"]`; `a/b/__init__.py` → `["a", "b"]`.
/// Segments that are not identifiers (a `my-scripts` directory) are kept
/// as written: such a module cannot be imported by name, and nothing
/// resolves to it through an import.
pub fn module_path_of(below_root: &str) -> Vec<String> {
    let stem = below_root
        .strip_suffix(".pyi")
        .or_else(|| below_root.strip_suffix(".py"))
        .unwrap_or(below_root);
    let mut segs: Vec<String> = stem.split('/').map(str::to_string).collect();
    if segs.last().is_some_and(|s| s == "__init__") {
        segs.pop();
    }
    segs
}

/// Whether a path is test code: under a `tests`/`test`/`testing`
/// directory, or a `test_*.py`, `*_test.py` or `conftest.py` file.
pub fn is_test_path(rel: &str) -> bool {
    let mut parts = rel.split('/').peekable();
    while let Some(p) = parts.next() {
        if parts.peek().is_none() {
            let stem = p.trim_end_matches(".pyi").trim_end_matches(".py");
            return stem.starts_with("test_") || stem.ends_with("_test") || stem == "conftest";
        }
        if matches!(p, "tests" | "test" | "testing") {
            return true;
        }
    }
    false
}

/// `[project] name = "Flask"` of a pyproject, `name = x` of a setup.cfg's
/// `[metadata]`, `name="x"` of a setup.py: lower-cased, `-` as `_`.
fn project_name(text: &str) -> Option<String> {
    let mut section = "";
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t;
            continue;
        }
        let in_table = matches!(section, "[project]" | "[metadata]" | "[tool.poetry]");
        if let Some(rest) = t.strip_prefix("name") {
            let rest = rest.trim_start();
            let value = rest
                .strip_prefix('=')
                .map(|v| v.trim().trim_end_matches(',').trim());
            if let Some(v) = value {
                let v = v.trim_matches(|c| c == '"' || c == '\'');
                if (in_table || section.is_empty())
                    && !v.is_empty()
                    && v.chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                {
                    return Some(v.to_lowercase().replace(['-', '.'], "_"));
                }
            }
        }
    }
    None
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Each directory with a manifest and its project's name: the first of
/// its manifests that names one (`pyproject.toml`, then `setup.cfg`,
/// then `setup.py`), else the directory's.
fn project_names(manifests: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let rank = |path: &str| {
        let file = path.rsplit('/').next().unwrap_or(path);
        ["pyproject.toml", "setup.cfg", "setup.py"]
            .iter()
            .position(|m| *m == file)
            .unwrap_or(usize::MAX)
    };
    let mut ordered: Vec<(&str, usize, &str)> = manifests
        .iter()
        .map(|(path, text)| {
            (
                crate::index::lang::manifest_dir(path),
                rank(path),
                text.as_str(),
            )
        })
        .collect();
    ordered.sort();
    let mut out: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (dir, _, text) in ordered {
        let name = out.entry(dir.to_string()).or_default();
        if name.is_none() {
            *name = project_name(text);
        }
    }
    out.into_iter()
        .map(|(dir, name)| {
            let name = name.unwrap_or_else(|| last_segment(&dir).to_string());
            (dir, name)
        })
        .collect()
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
    fn src_layouts_namespace_packages_and_projects_give_dotted_paths() {
        let manifests: BTreeMap<String, String> = [
            (
                "pyproject.toml".into(),
                "[project]\nname = \"Flask\"\n".to_string(),
            ),
            (
                "examples/tutorial/pyproject.toml".into(),
                "[project]\nname = \"flaskr\"\n".into(),
            ),
        ]
        .into_iter()
        .collect();
        let files: BTreeSet<String> = [
            "src/flask/__init__.py",
            "src/flask/sansio/app.py",
            "tests/test_basic.py",
            "examples/tutorial/flaskr/db.py",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let l = Layout::new(&manifests, &files);
        let c = l.context("src/flask/sansio/app.py");
        assert_eq!(c.module_path, ["flask", "sansio", "app"]);
        assert_eq!((c.unit.as_str(), c.package.as_str()), ("src", "flask"));
        assert_eq!(l.context("src/flask/__init__.py").module_path, ["flask"]);
        let t = l.context("tests/test_basic.py");
        assert_eq!(t.module_path, ["tests", "test_basic"]);
        assert!(t.is_test_file);
        let e = l.context("examples/tutorial/flaskr/db.py");
        assert_eq!(e.module_path, ["flaskr", "db"]);
        assert_eq!(e.unit, "examples/tutorial");
        assert!(!e.is_test_file);
    }
}
