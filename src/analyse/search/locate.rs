//! The locations a query quotes (`src/x.rs:12:5` from a backtrace or a
//! panic, a link to a source file) as files of the graph and the entities
//! at their lines.
//!
//! A quoted path is rarely the repository path: a backtrace names
//! `/home/u/.cargo/registry/src/…/tokio-1.38.0/src/runtime/park.rs`, a
//! report names `src/runtime/park.rs` of a workspace member. A location is
//! matched by its last components against the graph's files (a version
//! after a crate's directory name dropped): the longest suffix any file
//! has, when at most [`MAX_MATCHES`] files have it.

use rustc_hash::FxHashMap;

use super::query::Location;
use crate::store::rows::{decode_rows, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};

query_rows! {
    /// `queries/search_paths.cozo`.
    PathRow = "search_paths" {
        key { path: Str<'a> }
    }
    /// `queries/search_file_entities.cozo`.
    FileEntityRow = "search_file_entities" {
        key { id: Str<'a> }
        value { file: Str<'a>, start_line: i64, end_line: i64 }
    }
}

/// A quoted path matching more files than this names none of them.
const MAX_MATCHES: usize = 3;
/// Weight of the first location; each further one weighs this much less
/// (a backtrace's first frames are where it failed).
const DECAY: f64 = 0.8;
/// A panic's location weighs this much more than a location in passing.
const PANIC: f64 = 1.5;

/// The files and entities a query's locations name, each with a weight
/// (the first location 1.0).
#[derive(Debug, Default)]
pub struct Located {
    /// File → (weight, the location as quoted).
    pub files: FxHashMap<String, (f64, String)>,
    /// (entity key, weight, `file:line` as quoted).
    pub entities: Vec<(String, f64, String)>,
}

pub fn locate(store: &Store, graph: &str, locations: &[Location]) -> Result<Located, StoreError> {
    let mut out = Located::default();
    if locations.is_empty() {
        return Ok(out);
    }
    let rows = store.read(queries::SEARCH_PATHS, Params::new().with("graph", graph))?;
    let paths = decode_rows::<PathRow>(&rows)?;
    let paths: Vec<&str> = paths.iter().map(|r| r.path.as_ref()).collect();
    let mut lines: Vec<(String, i64, f64, String)> = Vec::new();
    let mut weight = 1.0;
    for loc in locations {
        let matched = matching_files(&paths, &loc.path);
        if matched.is_empty() {
            continue;
        }
        let w = weight * if loc.panic { PANIC } else { 1.0 } / matched.len() as f64;
        weight *= DECAY;
        for f in matched {
            let e = out
                .files
                .entry(f.to_string())
                .or_insert((0.0, loc.path.clone()));
            e.0 += w;
            if let Some(line) = loc.line {
                lines.push((
                    f.to_string(),
                    i64::from(line),
                    w,
                    format!("{}:{line}", loc.path),
                ));
            }
        }
    }
    if lines.is_empty() {
        return Ok(out);
    }
    let files: Vec<&str> = lines.iter().map(|(f, ..)| f.as_str()).collect();
    let rows = store.read(
        queries::SEARCH_FILE_ENTITIES,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(files)),
    )?;
    let entities = decode_rows::<FileEntityRow>(&rows)?;
    for (file, line, w, quoted) in lines {
        // The innermost entity holding the line: the smallest span.
        let inner = entities
            .iter()
            .filter(|e| e.file == file && e.start_line <= line && line <= e.end_line)
            .min_by_key(|e| (e.end_line - e.start_line, e.id.clone()));
        if let Some(e) = inner {
            out.entities.push((e.id.to_string(), w, quoted));
        }
    }
    Ok(out)
}

/// The files whose paths end with the most components of `quoted` that
/// any file's path ends with (a crate directory's version dropped), when
/// few enough share it; at least the file name and, for the names every
/// crate has (`lib.rs`, `mod.rs`, `main.rs`), its directory too.
fn matching_files<'p>(paths: &[&'p str], quoted: &str) -> Vec<&'p str> {
    let want: Vec<String> = quoted
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .map(unversioned)
        .collect();
    let Some(name) = want.last() else {
        return Vec::new();
    };
    let generic = matches!(name.as_str(), "lib.rs" | "mod.rs" | "main.rs" | "build.rs");
    let min = if generic { 2 } else { 1 };
    let mut best: Vec<&str> = Vec::new();
    let mut best_len = 0;
    for p in paths {
        if !p.ends_with(name.as_str()) {
            continue;
        }
        let have: Vec<&str> = p.split('/').collect();
        let common = have
            .iter()
            .rev()
            .zip(want.iter().rev())
            .take_while(|(a, b)| *a == b)
            .count();
        if common < min {
            continue;
        }
        match common.cmp(&best_len) {
            std::cmp::Ordering::Greater => {
                best_len = common;
                best = vec![p];
            }
            std::cmp::Ordering::Equal => best.push(p),
            std::cmp::Ordering::Less => {}
        }
    }
    if best.len() > MAX_MATCHES {
        return Vec::new();
    }
    best
}

/// `tokio-1.38.0` → `tokio`: a crate's directory in a registry or vendor
/// tree carries its version.
fn unversioned(component: &str) -> String {
    if let Some((name, version)) = component.rsplit_once('-') {
        if version.starts_with(|c: char| c.is_ascii_digit()) && version.contains('.') {
            return name.to_string();
        }
    }
    component.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATHS: [&str; 6] = [
        "tokio/src/runtime/park.rs",
        "tokio/src/lib.rs",
        "tokio-util/src/lib.rs",
        "tokio/src/sync/mod.rs",
        "tokio/src/net/mod.rs",
        "tests/park.rs",
    ];

    #[test]
    fn a_quoted_path_matches_by_its_longest_suffix() {
        assert_eq!(
            matching_files(
                &PATHS,
                "/home/u/.cargo/registry/src/index/tokio-1.38.0/src/runtime/park.rs"
            ),
            ["tokio/src/runtime/park.rs"]
        );
        assert_eq!(
            matching_files(&PATHS, "src/runtime/park.rs"),
            ["tokio/src/runtime/park.rs"]
        );
        // Two files are called park.rs; the one under runtime/ shares more.
        assert_eq!(
            matching_files(&PATHS, "runtime/park.rs"),
            ["tokio/src/runtime/park.rs"]
        );
        assert_eq!(matching_files(&PATHS, "park.rs").len(), 2);
        // `lib.rs` alone names no file; `tokio-util/src/lib.rs` names one.
        assert!(matching_files(&PATHS, "lib.rs").is_empty());
        assert_eq!(
            matching_files(&PATHS, "tokio-util/src/lib.rs"),
            ["tokio-util/src/lib.rs"]
        );
        assert!(matching_files(&PATHS, "other/src/thing.rs").is_empty());
        assert!(matching_files(&PATHS, "").is_empty());
    }
}
