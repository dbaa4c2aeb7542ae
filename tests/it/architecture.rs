//! The import rules of ARCHITECTURE.md that the compiler does not hold,
//! checked on the source:
//!
//! - the workspace's crates are its layers: a crate depends on crates of
//!   lower layers only, a language crate on the index and what is below
//!   it, and only the binary's assembly (the root package) on a language;
//! - inside `graphctx-apply`, which holds several modules of the apply
//!   side, a module uses only modules of lower layers: every
//!   `crate::<module>` path in its code (comments, strings and character
//!   literals skipped) counts as a use;
//! - no file outside a language's crate names it, but the assembly
//!   (`src/languages.rs`): the index, analysis, emitting, the servers and
//!   the CLI talk to languages through `index::lang::Language` and the
//!   registry `index::languages`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use graphctx::index::lang::Language;

/// The workspace's crates by layer, from the bottom up. A crate depends
/// on crates of lower layers only (not its own layer's, so a layer cannot
/// hide a cycle). Language crates are not listed: they are found by what
/// they implement ([`language_crates`]).
const LAYERS: &[&[&str]] = &[
    &["graphctx-base"],
    &["graphctx-store"],
    &["graphctx-graph", "graphctx-index", "graphctx-llm"],
    &["graphctx-analyse"],
    &["graphctx-emit", "graphctx-search"],
    &["graphctx-apply"],
    &["graphctx-serve"],
];

/// The crate a language crate builds on; it may use that crate's layer
/// and the ones below.
const LANGUAGE_BASE: &str = "graphctx-index";

/// The modules of `graphctx-apply` by layer, from the bottom up.
const APPLY_LAYERS: &[&[&str]] = &[
    &["ontology"],
    &["canvas", "capture", "flow", "operations"],
    &["assistant"],
];

fn layer_of(krate: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&krate))
}

fn apply_layer_of(module: &str) -> Option<usize> {
    APPLY_LAYERS.iter().position(|l| l.contains(&module))
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every crate under `crates/`: its package name and directory.
fn crates() -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .map(|n| n.trim_end_matches('"').to_string())
            .expect("a crate's manifest names its package");
        found.push((name, dir));
    }
    found.sort();
    found
}

/// The workspace crates a manifest's `[dependencies]` name.
fn workspace_dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && line.starts_with("graphctx-") {
            found.push(line.split([' ', '=', '.']).next().unwrap().to_string());
        }
    }
    found
}

/// The language crates: those whose root implements `Language`.
fn language_crates() -> Vec<(String, PathBuf)> {
    crates()
        .into_iter()
        .filter(|(_, dir)| {
            std::fs::read_to_string(dir.join("src/lib.rs"))
                .is_ok_and(|t| code_only(&t).contains("Language for "))
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source with comments, string literals (raw ones included) and
/// character literals blanked out, so only code is left to search.
fn code_only(src: &str) -> String {
    scan(src).0
}

/// A string literal's text as written, and where it stands in
/// [`code_only`]'s output.
struct Literal {
    text: String,
    at: usize,
}

/// [`code_only`]'s output, and every string literal it blanked out.
fn scan(src: &str) -> (String, Vec<Literal>) {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut literals = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && !b[..i]
                .last()
                .is_some_and(|p| p.is_ascii_alphanumeric() || *p == b'_')
        {
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|h| **h == b'#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            let start = (i + 2 + hashes).min(b.len());
            let end = j.saturating_sub(1 + hashes).max(start);
            literals.push(Literal {
                text: src[start..end].to_string(),
                at: out.len(),
            });
            i = j;
            out.push_str("\"\"");
        } else if c == b'"' {
            i += 1;
            let start = i;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            literals.push(Literal {
                text: src[start..i.min(b.len())].to_string(),
                at: out.len(),
            });
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&b'\'') {
                i += 3;
            } else {
                // Multi-byte character literal or a lifetime: copy the quote.
                let ch_len = src[i + 1..].chars().next().map_or(0, char::len_utf8);
                if src.as_bytes().get(i + 1 + ch_len) == Some(&b'\'') {
                    i += 2 + ch_len;
                } else {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    (out, literals)
}

/// The spans of `code` (as [`code_only`] gives it) that only tests
/// compile: each `#[cfg(test)]` item to its closing brace.
fn test_spans(code: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(test)]") {
        let start = from + k;
        let Some(open) = code[start..].find(['{', ';']).map(|o| start + o) else {
            break;
        };
        let mut end = open;
        if code.as_bytes()[open] == b'{' {
            let mut depth = 0;
            for (o, ch) in code[open..].char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + o;
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        spans.push((start, end));
        from = end + 1;
    }
    spans
}

/// `code` with what only tests compile blanked out, lines kept: tests may
/// name what the library does not (a language, through a
/// dev-dependency).
fn without_tests(code: &str) -> String {
    let mut out = code.to_string();
    for (start, end) in test_spans(code).into_iter().rev() {
        let end = (end + 1).min(code.len());
        let blank: String = code[start..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(start..end, &blank);
    }
    out
}

/// The top-level modules a file's code names as `crate::<module>`.
fn used_modules(code: &str) -> Vec<String> {
    let mut used = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        let after = &rest[i + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // `graphctx::…`, `$crate::…` in another path, …
        }
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            used.push(name);
        }
    }
    // `use crate::{a, b::c}` groups
    let mut rest = code;
    while let Some(i) = rest.find("crate::{") {
        let after = &rest[i + "crate::{".len()..];
        let mut depth = 1;
        let mut end = 0;
        for (k, ch) in after.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        let group = &after[..end];
        for item in split_top_level(group) {
            let name: String = item
                .trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != "self" {
                used.push(name);
            }
        }
        rest = &after[end..];
    }
    used
}

fn split_top_level(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (k, ch) in group.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

#[test]
fn crates_depend_only_on_lower_layers() {
    let languages: Vec<String> = language_crates().into_iter().map(|(n, _)| n).collect();
    assert!(
        languages.contains(&"graphctx-rust".to_string()),
        "the Rust language crate implements Language: {languages:?}"
    );
    let mut violations = Vec::new();
    let mut unknown = Vec::new();
    for (name, dir) in crates() {
        let is_language = languages.contains(&name);
        let ceiling = match (is_language, layer_of(&name)) {
            (true, _) => layer_of(LANGUAGE_BASE).unwrap() + 1,
            (false, Some(layer)) => layer,
            (false, None) => {
                unknown.push(name);
                continue;
            }
        };
        for dep in workspace_dependencies(&dir.join("Cargo.toml")) {
            let fits = match languages.contains(&dep) {
                true => false,
                false => layer_of(&dep).is_some_and(|l| l < ceiling),
            };
            if !fits {
                violations.push(format!("{name} depends on {dep}"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "crates missing from the layer table in tests/it/architecture.rs \
         (and ARCHITECTURE.md): {unknown:?}"
    );
    assert!(
        violations.is_empty(),
        "crates depending on a crate of their own or a higher layer, or on a language \
         (see ARCHITECTURE.md, \"Layers point down\"):\n{}",
        violations.join("\n")
    );
}

#[test]
fn modules_of_apply_use_only_lower_layers() {
    let src = workspace().join("crates/apply/src");
    let mut violations = BTreeMap::new();
    let mut unknown = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        if module == "lib" {
            continue;
        }
        let Some(layer) = apply_layer_of(&module) else {
            unknown.push(module);
            continue;
        };
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path.clone());
        }
        for file in files {
            let code = code_only(&std::fs::read_to_string(&file).unwrap());
            for used in used_modules(&code) {
                // Other crates' modules, imported at the crate root, are
                // below by the crates' own layering.
                let Some(used_layer) = apply_layer_of(&used) else {
                    continue;
                };
                if used != module && used_layer >= layer {
                    violations
                        .entry(format!(
                            "{} uses crate::{used}",
                            file.strip_prefix(&src).unwrap().display()
                        ))
                        .or_insert(());
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "modules of graphctx-apply missing from APPLY_LAYERS in tests/it/architecture.rs \
         (and ARCHITECTURE.md): {unknown:?}"
    );
    let list: Vec<_> = violations.into_keys().collect();
    assert!(
        list.is_empty(),
        "modules using a module of their own or a higher layer (see ARCHITECTURE.md, \
         \"Layers point down\"):\n{}",
        list.join("\n")
    );
}

#[test]
fn the_scanner_sees_code_and_skips_text() {
    let code = code_only(
        "use crate::store::Store; // crate::serve\n\
         let s = \"crate::emit\"; let r = r#\"crate::flow\"#; let c = '\"';\n\
         fn f<'a>(x: &'a str) { crate::index::walk(); }\n\
         use crate::{analyse::blast, model::{Entity, Rel}};",
    );
    assert_eq!(
        used_modules(&code),
        vec!["store", "index", "analyse", "model"]
    );
}

/// Where `code` names the identifier `name` (a whole word), by line.
fn mentions(code: &str, name: &str) -> Vec<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut lines = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let mut rest = line;
        let mut offset = 0;
        while let Some(k) = rest.find(name) {
            let at = offset + k;
            let before = line[..at].chars().last();
            let after = line[at + name.len()..].chars().next();
            if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
                lines.push(i + 1);
                break;
            }
            offset = at + name.len();
            rest = &line[offset..];
        }
    }
    lines
}

#[test]
fn only_the_assembly_names_a_language() {
    let root = workspace();
    let languages = language_crates();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let mut violations = Vec::new();
    for (name, dir) in &languages {
        let ident = name.replace('-', "_");
        for file in &files {
            if file.starts_with(dir) || file == &root.join("src/languages.rs") {
                continue;
            }
            let code = without_tests(&code_only(&std::fs::read_to_string(file).unwrap()));
            for line in mentions(&code, &ident) {
                let rel = file.strip_prefix(&root).unwrap();
                violations.push(format!("{}:{line} names {ident}", rel.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "files outside a language's crate naming it (go through index::languages and \
         index::lang::Language; see ARCHITECTURE.md, \"Import rules\"):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_word_scanner_finds_path_segments_only() {
    let code = code_only(
        "use graphctx_rust::resolve; // graphctx_rust\n\
         let s = \"graphctx_rust\"; let t = graphctx_rust_x::LANGUAGE;\n\
         use graphctx_rust::{self as rust};\n\
         fn graphctx_rust_files() {}",
    );
    assert_eq!(mentions(&code, "graphctx_rust"), vec![1, 3]);
}

/// Whether a string literal names something of `lang`: its name, a
/// source file by its extension (`.rs`, `*.py`), a manifest, one of its
/// common files (`lib.rs`), or a stem of those that no word shares
/// (`__init__`; not `main` or `mod`, which name kinds and functions too).
fn names_language(text: &str, lang: &dyn Language) -> bool {
    let stems = lang
        .common_file_names()
        .iter()
        .map(|f| f.rsplit_once('.').map_or(*f, |(stem, _)| stem))
        .chain(lang.directory_module_stems().iter().copied())
        .filter(|stem| !stem.chars().all(|c| c.is_ascii_lowercase()));
    let extension = |ext: &str| {
        let dotted = format!(".{ext}");
        text.match_indices(&dotted).any(|(at, _)| {
            !text[at + dotted.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    };
    text == lang.name()
        || lang.extensions().iter().any(|e| extension(e))
        || lang.manifests().iter().any(|m| text.contains(m))
        || lang.common_file_names().iter().any(|f| text.contains(f))
        || stems.into_iter().any(|stem| text == stem)
}

/// Whether the literal at `at` of `code` is the file an `include_str!`
/// or `include_bytes!` embeds: a file of the crate's own (`page.js`),
/// not knowledge of a language.
fn embedded(code: &str, at: usize) -> bool {
    let before = code[..at].trim_end();
    before.ends_with("include_str!(") || before.ends_with("include_bytes!(")
}

/// The seam holds for every language installed, the next one included:
/// no string literal outside the languages' crates and the assembly
/// names one of them (tests aside).
#[test]
fn neutral_code_names_no_language_in_its_strings() {
    let root = workspace();
    let languages: Vec<PathBuf> = language_crates().into_iter().map(|(_, d)| d).collect();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    // Build scripts are Cargo's, whatever the indexed language.
    let build_script = |f: &Path| f.file_name().is_some_and(|n| n == "build.rs");
    files.retain(|f| {
        !languages.iter().any(|d| f.starts_with(d))
            && !build_script(f)
            && f != &root.join("src/languages.rs")
            && f.components().all(|c| c.as_os_str() != "tests")
            && f.file_name().is_some_and(|n| n != "tests.rs")
    });
    assert!(files.len() > 100, "{} files", files.len());
    let mut violations = Vec::new();
    for file in &files {
        let (code, literals) = scan(&std::fs::read_to_string(file).unwrap());
        let tests = test_spans(&code);
        for literal in literals {
            if tests.iter().any(|(a, b)| (*a..=*b).contains(&literal.at))
                || embedded(&code, literal.at)
            {
                continue;
            }
            for lang in graphctx::index::languages::all() {
                if names_language(&literal.text, *lang) {
                    let rel = file.strip_prefix(&root).unwrap();
                    let line = code[..literal.at].matches('\n').count() + 1;
                    violations.push(format!(
                        "{}:~{line} {:?} names {}",
                        rel.display(),
                        literal.text,
                        lang.name()
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "string literals naming a language outside its crate (ask the language through \
         index::lang::Language instead; see ARCHITECTURE.md, \"Import rules\"):\n{}",
        violations.join("\n")
    );
}

#[test]
fn an_embedded_file_is_no_language_knowledge() {
    let (code, literals) =
        scan("const PAGE: &str = include_str!( \"page.js\");\nlet x = \"a.js\";");
    let flags: Vec<bool> = literals.iter().map(|l| embedded(&code, l.at)).collect();
    assert_eq!(flags, [true, false]);
}

#[test]
fn the_string_scanner_sees_literals_outside_tests() {
    let src = "let a = \"src/lib.rs\"; // \"not.rs\"\n\
               let b = r#\"Cargo.toml\"#;\n\
               #[cfg(test)]\n\
               mod tests { const C: &str = \"main.rs\"; }\n\
               fn after() { let d = \"rust\"; }";
    let (code, literals) = scan(src);
    let spans = test_spans(&code);
    let outside: Vec<&str> = literals
        .iter()
        .filter(|l| !spans.iter().any(|(a, b)| (*a..=*b).contains(&l.at)))
        .map(|l| l.text.as_str())
        .collect();
    assert_eq!(outside, ["src/lib.rs", "Cargo.toml", "rust"]);
}
