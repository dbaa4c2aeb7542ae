//! The import rules of ARCHITECTURE.md, checked on the source:
//!
//! - a top-level module of the library uses only modules of lower layers:
//!   every `crate::<module>` path in a module's code (comments, strings
//!   and character literals skipped) counts as a use, whether in a `use`
//!   declaration or inline;
//! - no file outside a language's folder (`src/index/<language>/`) names
//!   that language's module, but the registry (`src/index/languages.rs`)
//!   and the `mod` declaration in `src/index/mod.rs`: the pipeline, the
//!   store, analysis, emitting, the servers, the CLI and `main.rs` talk to
//!   languages through `index::lang::Language` and the registry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Layers from the bottom up; a module may use modules of lower layers
/// only (not its own layer's, so a layer cannot hide a cycle).
const LAYERS: &[&[&str]] = &[
    &["model", "support"],
    &["store"],
    &["graph", "index", "llm"],
    &["analyse"],
    &["emit"],
    &["ontology"],
    &["canvas", "capture", "flow", "operations"],
    &["assistant"],
    &["serve"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
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
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
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
            i = j;
            out.push_str("\"\"");
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
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
fn modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = BTreeMap::new();
    let mut unknown = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_str().unwrap().to_string();
        if ["lib", "main", "cli"].contains(&module.as_str()) {
            continue;
        }
        let Some(layer) = layer_of(&module) else {
            unknown.push(module);
            continue;
        };
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path.clone());
            let dir = src.join(&module);
            if dir.is_dir() {
                rust_files(&dir, &mut files);
            }
        }
        for file in files {
            let code = code_only(&std::fs::read_to_string(&file).unwrap());
            for used in used_modules(&code) {
                if used == module {
                    continue;
                }
                match layer_of(&used) {
                    Some(l) if l < layer => {}
                    _ => {
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
    }
    assert!(
        unknown.is_empty(),
        "top-level modules missing from the layer table in tests/it/architecture.rs \
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

/// The language folders: the directories of `src/index` whose module
/// implements the `Language` trait.
fn language_modules(index: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(index).unwrap() {
        let path = entry.unwrap().path();
        let Ok(text) = std::fs::read_to_string(path.join("mod.rs")) else {
            continue;
        };
        if code_only(&text).contains("Language for ") {
            found.push(path.file_name().unwrap().to_str().unwrap().to_string());
        }
    }
    found.sort();
    found
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
fn only_the_registry_names_a_language() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let index = src.join("index");
    let languages = language_modules(&index);
    assert!(
        languages.contains(&"rust".to_string()),
        "the Rust language module implements Language: {languages:?}"
    );
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap().to_path_buf();
        let in_language = languages
            .iter()
            .any(|l| rel.starts_with(Path::new("index").join(l)));
        if in_language || rel == Path::new("index/languages.rs") {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for lang in &languages {
            // The folder is declared where its parent declares modules.
            let code = match rel == Path::new("index/mod.rs") {
                true => code.replace(&format!("pub mod {lang};"), ""),
                false => code.clone(),
            };
            for line in mentions(&code, lang) {
                violations.push(format!("{}:{line} names {lang}", rel.display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "files outside a language's folder naming it (go through index::languages and \
         index::lang::Language; see ARCHITECTURE.md, \"Import rules\"):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_word_scanner_finds_path_segments_only() {
    let code = code_only(
        "use super::rust::resolve; // rust\n\
         let s = \"crate::index::rust\"; let t = tree_sitter_rust::LANGUAGE;\n\
         use super::{links, rust};\n\
         fn rust_files() {}",
    );
    assert_eq!(mentions(&code, "rust"), vec![1, 3]);
}
