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
//!
//! A quoted test names the code it tests: a report that links
//! `tests/test_pycode_ast.py#L57` or `tracing/tests/macros.rs` is about
//! `sphinx/pycode/ast.py` or `tracing/src/macros.rs`, by the convention
//! nearly every project follows of naming a test after what it tests
//! ([`tested_files`]). Those files are located too, a little less.

use rustc_hash::FxHashMap;

use crate::held_lists::HeldLists;
use crate::index::languages;
use crate::query::Location;
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
/// The code a quoted test is named after weighs this share of the
/// test's location.
const TESTED: f64 = 0.8;

/// The files and entities a query's locations name, each with a weight
/// (the first location 1.0).
#[derive(Debug, Default)]
pub struct Located {
    /// File → (weight, the location as quoted).
    pub files: FxHashMap<String, (f64, String)>,
    /// (entity key, weight, `file:line` as quoted).
    pub entities: Vec<(String, f64, String)>,
}

pub fn locate(
    store: &Store,
    graph: &str,
    locations: &[Location],
    held: Option<&HeldLists>,
) -> Result<Located, StoreError> {
    let mut out = Located::default();
    if locations.is_empty() {
        return Ok(out);
    }
    let read = || -> Result<Vec<String>, StoreError> {
        let rows = store.read(queries::SEARCH_PATHS, Params::new().with("graph", graph))?;
        Ok(decode_rows::<PathRow>(&rows)?
            .into_iter()
            .map(|r| r.path.into_owned())
            .collect())
    };
    let paths = match held {
        Some(held) => held.paths(store, graph, read)?,
        None => std::sync::Arc::new(read()?),
    };
    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
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
            for tested in tested_files(&paths, f) {
                let e = out
                    .files
                    .entry(tested.to_string())
                    .or_insert((0.0, format!("{} (its test)", loc.path)));
                e.0 += w * TESTED;
            }
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
/// few enough share it; at least the file name and, for the names nearly
/// every package of its language has (`lib.rs`, `__init__.py`: the
/// language's common file names), its directory too.
fn matching_files<'p>(paths: &[&'p str], quoted: &str) -> Vec<&'p str> {
    let want: Vec<String> = quoted
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .map(unversioned)
        .collect();
    let Some(name) = want.last() else {
        return Vec::new();
    };
    let generic = is_common_file_name(name);
    let min = if generic { 2 } else { 1 };
    let mut scored: Vec<(&str, usize)> = Vec::new();
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
        scored.push((p, common));
    }
    best_few(scored)
}

/// The paths of the highest score, none when more than [`MAX_MATCHES`]
/// share it: a location that fits many files names none of them.
fn best_few(scored: Vec<(&str, usize)>) -> Vec<&str> {
    let Some(top) = scored.iter().map(|(_, s)| *s).max() else {
        return Vec::new();
    };
    let best: Vec<&str> = scored
        .into_iter()
        .filter(|(_, s)| *s == top)
        .map(|(p, _)| p)
        .collect();
    if best.len() > MAX_MATCHES {
        return Vec::new();
    }
    best
}

/// The files the test file `test` is named after: its name without the
/// test marks (`test_x.py`, `x_test.go`, `tests/x.rs` → `x`) matching the
/// end of a file's path read as one name (`pycode_ast` matches
/// `sphinx/pycode/ast.py`, `__init__` files counting as their package),
/// among the files outside tests; the ones sharing the most leading
/// directories with the test, when at most [`MAX_MATCHES`] do. None for
/// a file that is no test, or a test of a name every package has (a
/// language's common file names, `tests/main.rs`, or words such as
/// `util`).
fn tested_files<'p>(paths: &[&'p str], test: &str) -> Vec<&'p str> {
    if !is_test_path(test) {
        return Vec::new();
    }
    let stem = file_stem(test);
    let name = stem
        .strip_prefix("test_")
        .or_else(|| stem.strip_suffix("_tests"))
        .or_else(|| stem.strip_suffix("_test"))
        .unwrap_or(stem);
    if name.len() < 3 || matches!(name, "util" | "utils" | "common") || is_common_stem(name) {
        return Vec::new();
    }
    let suffix = format!("_{name}");
    let test_dirs: Vec<&str> = test.split('/').collect();
    let mut scored: Vec<(&str, usize)> = Vec::new();
    // The last word of the name is in the path as written (a cheap test
    // before the path is read as one name).
    let last_word = name.rsplit('_').next().unwrap_or(name);
    for p in paths {
        if !p.contains(last_word) || is_test_path(p) {
            continue;
        }
        let joined = path_name(p);
        if joined != name && !joined.ends_with(&suffix) {
            continue;
        }
        let shared = p
            .split('/')
            .zip(&test_dirs)
            .take_while(|(a, b)| a == *b)
            .count();
        scored.push((p, shared));
    }
    best_few(scored)
}

/// Whether a path is a test's by the conventions of most languages: under
/// a `tests`/`test` directory, or a file named `test_*` or `*_test(s)`.
fn is_test_path(path: &str) -> bool {
    let stem = file_stem(path);
    path.split('/')
        .rev()
        .skip(1)
        .any(|c| matches!(c, "tests" | "test"))
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
}

/// A file's name without its extension.
fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

/// A path read as one name: its components without the extension joined
/// by `_`, a file whose module is its directory's as that directory
/// (`sphinx/builders/latex/__init__.py` → `sphinx_builders_latex`; the
/// language's directory module stems).
fn path_name(path: &str) -> String {
    let mut parts: Vec<&str> = path.split('/').collect();
    if let Some(last) = parts.last_mut() {
        *last = file_stem(last);
    }
    let stands_for_directory = languages::of_file(path).is_some_and(|l| {
        parts
            .last()
            .is_some_and(|stem| l.directory_module_stems().contains(stem))
    });
    if parts.len() > 1 && stands_for_directory {
        parts.pop();
    }
    parts.join("_")
}

/// Whether a file name is one nearly every package of its language holds.
fn is_common_file_name(name: &str) -> bool {
    languages::of_file(name).is_some_and(|l| l.common_file_names().contains(&name))
}

/// Whether a name is the stem of some language's common file name or one
/// of its directory module stems (`main`, `mod`, `__init__`).
fn is_common_stem(name: &str) -> bool {
    languages::all().iter().any(|l| {
        l.directory_module_stems().contains(&name)
            || l.common_file_names().iter().any(|f| file_stem(f) == name)
    })
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
    fn a_quoted_test_names_the_code_it_is_named_after() {
        let paths = [
            "sphinx/pycode/ast.py",
            "sphinx/pycode/parser.py",
            "sphinx/ext/autodoc/ast.py",
            "tests/test_pycode_ast.py",
            "tracing/src/macros.rs",
            "tracing-core/src/macros.rs",
            "tracing/tests/macros.rs",
            "tests/main.rs",
            "src/main.rs",
        ];
        assert_eq!(
            tested_files(&paths, "tests/test_pycode_ast.py"),
            ["sphinx/pycode/ast.py"]
        );
        // Two crates have macros.rs; the test's own crate shares a directory.
        assert_eq!(
            tested_files(&paths, "tracing/tests/macros.rs"),
            ["tracing/src/macros.rs"]
        );
        // Not a test, or a name every crate has.
        assert!(tested_files(&paths, "sphinx/pycode/parser.py").is_empty());
        assert!(tested_files(&paths, "tests/main.rs").is_empty());
    }

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
