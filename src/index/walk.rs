//! Finding the files to index and where each sits in its crate.
//!
//! The walk honours `.gitignore`, `.ignore` and git's exclude files (also
//! outside a git checkout), skips hidden directories and graphctx's own
//! store, and follows symlinks so that a loop is reported instead of
//! silently ignored. The manifests found on the way give the
//! [`Layout`]; each file starts with the context its path suggests
//! ([`Layout::guess`]), which the pipeline corrects once the `mod`
//! declarations of every file are known.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::rust::layout::Layout;
use crate::model::FileContext;
use crate::store::STORE_DIR;

/// A Rust source file found by the walk.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub abs_path: PathBuf,
    pub ctx: FileContext,
    /// Size in bytes from the directory entry's metadata.
    pub bytes: u64,
    /// Modification time (nanoseconds since the Unix epoch; 0 when the
    /// file system does not say), for the stat shortcut of the index.
    pub mtime_ns: i64,
}

/// Something the walk could not look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkIssue {
    /// Repository-relative path, or the root when no path is known.
    pub path: String,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct WalkResult {
    /// Sorted by path.
    pub files: Vec<SourceFile>,
    pub issues: Vec<WalkIssue>,
    /// The packages and their targets.
    pub layout: Layout,
}

/// Walk `root` for `.rs` files.
pub fn walk(root: &Path) -> WalkResult {
    let mut rust_files: Vec<(String, PathBuf, u64, i64)> = Vec::new();
    let mut manifests: BTreeMap<String, String> = BTreeMap::new(); // manifest dir → text
    let mut issues = Vec::new();

    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .follow_links(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != STORE_DIR)
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(err) => {
                issues.push(WalkIssue {
                    path: error_path(&err, root),
                    reason: describe_walk_error(&err),
                });
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let abs = entry.path();
        let Some(rel) = relative(root, abs) else {
            continue;
        };
        let name = entry.file_name().to_string_lossy();
        if name == "Cargo.toml" {
            if let Ok(text) = std::fs::read_to_string(abs) {
                let dir = rel
                    .rsplit_once('/')
                    .map(|(d, _)| d)
                    .unwrap_or("")
                    .to_string();
                manifests.insert(dir, text);
            }
        } else if name.ends_with(".rs") {
            let meta = entry.metadata().ok();
            let bytes = meta.as_ref().map_or(0, |m| m.len());
            let mtime_ns = meta.and_then(|m| m.modified().ok()).map_or(0, unix_nanos);
            rust_files.push((rel, abs.to_path_buf(), bytes, mtime_ns));
        }
    }

    let paths: BTreeSet<String> = rust_files.iter().map(|(rel, ..)| rel.clone()).collect();
    let layout = Layout::new(&manifests, &paths);
    let mut files: Vec<SourceFile> = rust_files
        .into_iter()
        .map(|(rel, abs_path, bytes, mtime_ns)| SourceFile {
            ctx: layout.guess(&rel),
            abs_path,
            bytes,
            mtime_ns,
        })
        .collect();
    files.sort_by(|a, b| a.ctx.path.cmp(&b.ctx.path));
    issues.sort_by(|a, b| a.path.cmp(&b.path));
    WalkResult {
        files,
        issues,
        layout,
    }
}

fn relative(root: &Path, abs: &Path) -> Option<String> {
    let rel = abs.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("/"))
    }
}

fn error_path(err: &ignore::Error, root: &Path) -> String {
    fn find(err: &ignore::Error) -> Option<&Path> {
        match err {
            ignore::Error::WithPath { path, .. } => Some(path),
            ignore::Error::Loop { child, .. } => Some(child),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                find(err)
            }
            _ => None,
        }
    }
    find(err)
        .and_then(|p| relative(root, p))
        .unwrap_or_else(|| root.display().to_string())
}

fn describe_walk_error(err: &ignore::Error) -> String {
    match err {
        ignore::Error::Loop { ancestor, .. } => {
            format!("symlink loop back to {}", ancestor.display())
        }
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => describe_walk_error(err),
        ignore::Error::Io(e) => format!("unreadable: {e}"),
        other => other.to_string(),
    }
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

/// A time as nanoseconds since the Unix epoch (0 before it or past i64).
pub fn unix_nanos(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
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
        m.insert(String::new(), "[package]\nname = \"my-app\"\n".to_string());
        m.insert(
            "crates/core".to_string(),
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
        assert_eq!(bin.crate_name, "tool");
        assert!(bin.module_path.is_empty());
        let c = ctx("crates/core/src/x.rs");
        assert_eq!(c.crate_name, "app_core");
        assert_eq!(c.module_path, vec!["x"]);
        let t = ctx("tests/it.rs");
        assert_eq!(t.crate_name, "it");
        assert!(t.is_test_file);
        assert!(t.module_path.is_empty());
        assert_eq!(ctx("tests/common/mod.rs").crate_name, "common");
        assert_eq!(ctx("build.rs").crate_name, "build_script_build");
    }

    #[test]
    fn package_names_come_from_the_package_table() {
        let m = "[workspace]\nmembers = []\n[package]\nname = \"serde-json\"\nversion = \"1\"\n";
        assert_eq!(package_name(m).as_deref(), Some("serde-json"));
        assert_eq!(package_name("[workspace]\nname = \"x\"\n"), None);
    }
}
