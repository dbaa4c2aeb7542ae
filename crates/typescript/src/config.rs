//! What a tree's `tsconfig.json`s (and `jsconfig.json`s) tell resolution:
//! the path aliases bare specifiers stand for.
//!
//! A configuration's `compilerOptions.paths` maps patterns (`@/*`,
//! `zustand`) to paths, read from its `baseUrl` when it has one, else from
//! the configuration that declares `paths`; `baseUrl` alone maps every
//! bare specifier below it (`*`). `extends` (a relative path, or a list)
//! brings the options of the configurations it names first, which the
//! file's own override. A configuration that refers to others
//! (`references`, a solution such as `{ "files": [], "references": […] }`)
//! gives its files the aliases of the first referred one whose `include`
//! holds them. Configurations allow comments and trailing commas; one
//! that cannot be read is no configuration. An `extends` of a package
//! (`@tsconfig/node18`) is not installed in a source tree and is left
//! out.

use std::collections::BTreeMap;

use serde_json::Value;

use super::layout::split_path;

/// Path aliases: a pattern and the paths it stands for.
pub(crate) type Aliases = Vec<(String, Vec<String>)>;

/// Path aliases, and the directories (repository-relative) whose files
/// they are for; none: every file below the configuration's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scoped {
    pub includes: Vec<String>,
    pub aliases: Aliases,
}

/// Deepest an `extends` chain is followed.
const MAX_EXTENDS: u32 = 8;

/// The options a configuration has once what it extends is read.
#[derive(Default, Clone)]
struct Options {
    /// `baseUrl`, repository-relative.
    base_url: Option<String>,
    /// `paths`, and the directory of the configuration declaring them.
    paths: Option<(Aliases, String)>,
}

/// Per directory with a `tsconfig.json` (else a `jsconfig.json`): the
/// aliases its files build with.
pub(crate) fn configs(manifests: &BTreeMap<String, String>) -> BTreeMap<String, Vec<Scoped>> {
    let mut out = BTreeMap::new();
    for path in manifests.keys() {
        let (dir, file) = split_path(path);
        let primary = file == "tsconfig.json"
            || file == "jsconfig.json" && !manifests.contains_key(&join(dir, "tsconfig.json"));
        if !primary {
            continue;
        }
        let Some(json) = manifests.get(path).and_then(|t| parse(t)) else {
            continue;
        };
        let mut scoped = Vec::new();
        for r in references(&json) {
            let target = reference_path(dir, &r);
            let Some(rj) = manifests.get(&target).and_then(|t| parse(t)) else {
                continue;
            };
            let includes = includes(split_path(&target).0, &rj);
            let aliases = aliases(&read(&target, manifests, 0));
            scoped.push(Scoped { includes, aliases });
        }
        scoped.push(Scoped {
            includes: Vec::new(),
            aliases: aliases(&read(path, manifests, 0)),
        });
        out.insert(dir.to_string(), scoped);
    }
    out
}

/// A configuration's options, with what it extends read first.
fn read(path: &str, manifests: &BTreeMap<String, String>, depth: u32) -> Options {
    read_once(path, manifests, depth, &mut Vec::new())
}

/// [`read`], each configuration of the chain read once (a cycle, or one
/// extended twice, is read at its first mention).
fn read_once(
    path: &str,
    manifests: &BTreeMap<String, String>,
    depth: u32,
    seen: &mut Vec<String>,
) -> Options {
    if seen.iter().any(|s| s == path) {
        return Options::default();
    }
    seen.push(path.to_string());
    let Some(json) = manifests.get(path).and_then(|t| parse(t)) else {
        return Options::default();
    };
    let dir = split_path(path).0;
    let mut opts = Options::default();
    if depth < MAX_EXTENDS {
        let extends: Vec<&str> = match json.get("extends") {
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for e in extends {
            if !(e.starts_with("./") || e.starts_with("../")) {
                continue;
            }
            let Some(mut target) = normalize(dir, e) else {
                continue;
            };
            if !target.ends_with(".json") {
                target.push_str(".json");
            }
            let base = read_once(&target, manifests, depth + 1, seen);
            if base.base_url.is_some() {
                opts.base_url = base.base_url;
            }
            if base.paths.is_some() {
                opts.paths = base.paths;
            }
        }
    }
    let compiler = json.get("compilerOptions");
    if let Some(b) = compiler
        .and_then(|c| c.get("baseUrl"))
        .and_then(Value::as_str)
    {
        opts.base_url = normalize(dir, b);
    }
    if let Some(Value::Object(paths)) = compiler.and_then(|c| c.get("paths")) {
        let entries = paths
            .iter()
            .map(|(pattern, targets)| {
                let targets = match targets {
                    Value::Array(a) => a
                        .iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect(),
                    Value::String(s) => vec![s.clone()],
                    _ => Vec::new(),
                };
                (pattern.clone(), targets)
            })
            .collect();
        opts.paths = Some((entries, dir.to_string()));
    }
    opts
}

/// The aliases options give, repository-relative, in the order they are
/// tried: an exact pattern first, then by the length of what precedes
/// `*` (TypeScript's rule), then `baseUrl`'s `*`.
fn aliases(opts: &Options) -> Aliases {
    let mut out: Aliases = Vec::new();
    if let Some((entries, declared_in)) = &opts.paths {
        let from = opts.base_url.as_deref().unwrap_or(declared_in);
        for (pattern, targets) in entries {
            let targets: Vec<String> = targets
                .iter()
                .filter_map(|t| normalize(from, &format!("./{}", t.trim_start_matches("./"))))
                .collect();
            if !targets.is_empty() {
                out.push((pattern.clone(), targets));
            }
        }
    }
    out.sort_by_key(|(pattern, _)| match pattern.find('*') {
        None => (0, usize::MAX - pattern.len()),
        Some(star) => (1, usize::MAX - star),
    });
    if let Some(base) = &opts.base_url {
        out.push(("*".into(), vec![join(base, "*")]));
    }
    out
}

/// The configurations a solution refers to.
fn references(json: &Value) -> Vec<String> {
    match json.get("references") {
        Some(Value::Array(refs)) => refs
            .iter()
            .filter_map(|r| r.get("path").and_then(Value::as_str))
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    }
}

/// A reference's configuration: a file named, or a directory's
/// `tsconfig.json`.
fn reference_path(dir: &str, r: &str) -> String {
    let p = normalize(dir, &format!("./{}", r.trim_start_matches("./"))).unwrap_or_default();
    if p.ends_with(".json") {
        p
    } else {
        join(&p, "tsconfig.json")
    }
}

/// The directories a configuration's `include` names, to their first
/// wildcard (`src/**/*` → `src`); without one, the files it lists
/// (`files`), else its own directory.
fn includes(dir: &str, json: &Value) -> Vec<String> {
    let Some(Value::Array(inc)) = json.get("include") else {
        if let Some(Value::Array(files)) = json.get("files") {
            return files
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|f| normalize(dir, &format!("./{}", f.trim_start_matches("./"))))
                .collect();
        }
        return vec![dir.to_string()];
    };
    inc.iter()
        .filter_map(Value::as_str)
        .filter_map(|i| {
            let literal: Vec<&str> = i
                .split('/')
                .take_while(|s| !s.contains('*'))
                .filter(|s| !s.is_empty() && *s != ".")
                .collect();
            normalize(dir, &format!("./{}", literal.join("/")))
        })
        .collect()
}

/// A configuration's JSON: comments, trailing commas and a byte-order
/// mark allowed.
fn parse(text: &str) -> Option<Value> {
    parsed(text).ok()
}

fn parsed(text: &str) -> Result<Value, serde_json::Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(&without_trailing_commas(&without_comments(text)))
}

/// The configurations among `manifests` that cannot be read, and why.
pub(crate) fn unread(manifests: &BTreeMap<String, String>) -> Vec<(String, String)> {
    manifests
        .iter()
        .filter(|(path, _)| split_path(path).1 != "package.json")
        .filter_map(|(path, text)| {
            let e = parsed(text).err()?;
            Some((
                path.clone(),
                format!(
                    "not JSON even with comments and trailing commas ({e}): its paths are not read"
                ),
            ))
        })
        .collect()
}

/// `text` without comments (`//`, `/* */`) outside strings.
fn without_comments(text: &str) -> String {
    strip(text, false)
}

/// `text` without commas before a closing `}` or `]` outside strings.
fn without_trailing_commas(text: &str) -> String {
    strip(text, true)
}

/// One pass over JSON text, strings kept whole: comments dropped, or
/// (`commas`) trailing commas dropped.
fn strip(text: &str, commas: bool) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
                out.extend_from_slice(&b[start..i]);
                continue;
            }
            b'/' if !commas && b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if !commas && b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            b',' if commas => {
                let next = b[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
                if !matches!(next, Some(b'}') | Some(b']')) {
                    out.push(b',');
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// `dir` joined with a relative path, `.` and `..` read, without a
/// trailing `/`; `None` above the tree's top.
fn normalize(dir: &str, rel: &str) -> Option<String> {
    super::table::normalize(dir, rel).map(|p| p.trim_end_matches('/').to_string())
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifests(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect()
    }

    #[test]
    fn paths_are_read_from_base_url_through_extends_with_comments() {
        let m = manifests(&[
            (
                "tsconfig.base.json",
                r#"{ // shared
                  "compilerOptions": { "baseUrl": "./src", "paths": { "@/*": ["./*"], "app": ["main.ts"], }, },
                }"#,
            ),
            (
                "tsconfig.json",
                r#"{ "extends": "./tsconfig.base", "include": ["src"] }"#,
            ),
            (
                "packages/ui/tsconfig.json",
                r#"{ "compilerOptions": { "paths": { "zustand/*": ["./src/*.ts"] } } /* own */ }"#,
            ),
        ]);
        let c = configs(&m);
        assert_eq!(
            c[""][0].aliases,
            vec![
                ("app".to_string(), vec!["src/main.ts".to_string()]),
                ("@/*".to_string(), vec!["src/*".to_string()]),
                ("*".to_string(), vec!["src/*".to_string()]),
            ]
        );
        assert_eq!(
            c["packages/ui"][0].aliases,
            vec![(
                "zustand/*".to_string(),
                vec!["packages/ui/src/*.ts".to_string()]
            )]
        );
    }

    #[test]
    fn a_solution_gives_each_file_the_referred_configuration_that_includes_it() {
        let m = manifests(&[
            (
                "tsconfig.json",
                r#"{ "files": [], "references": [{ "path": "./tsconfig.app.json" }, { "path": "./tools" }] }"#,
            ),
            (
                "tsconfig.app.json",
                r#"{ "include": ["src/**/*"], "compilerOptions": { "paths": { "~/*": ["./src/*"] } } }"#,
            ),
            (
                "tools/tsconfig.json",
                r#"{ "compilerOptions": { "baseUrl": "." } }"#,
            ),
            ("broken/tsconfig.json", "{ not json"),
        ]);
        let c = configs(&m);
        let top = &c[""];
        assert_eq!(top[0].includes, vec!["src".to_string()]);
        assert_eq!(top[0].aliases[0].0, "~/*");
        assert_eq!(top[1].includes, vec!["tools".to_string()]);
        assert_eq!(top[2].includes, Vec::<String>::new());
        assert!(!c.contains_key("broken"));
        assert_eq!(
            c["tools"][0].aliases,
            vec![("*".to_string(), vec!["tools/*".to_string()])]
        );
    }

    #[test]
    fn comments_before_a_closing_bracket_a_mark_and_cycles_are_read_through() {
        let m = manifests(&[
            (
                "tsconfig.json",
                "\u{feff}{ \"extends\": [\"./tsconfig.json\", \"./tsconfig.json\"], \"compilerOptions\": { \"paths\": { \"@/*\": [\"./src/*\"], // app\n } } }",
            ),
            (
                "tools/tsconfig.json",
                r#"{ "files": [], "references": [{ "path": "./tsconfig.node.json" }, { "path": "./tsconfig.app.json" }] }"#,
            ),
            ("tools/tsconfig.node.json", r#"{ "files": ["vite.config.ts"] }"#),
            (
                "tools/tsconfig.app.json",
                r#"{ "include": ["src"], "compilerOptions": { "paths": { "~/*": ["./src/*"] } } }"#,
            ),
        ]);
        let c = configs(&m);
        assert_eq!(
            c[""][0].aliases,
            vec![("@/*".to_string(), vec!["src/*".to_string()])]
        );
        let tools = &c["tools"];
        assert_eq!(tools[0].includes, vec!["tools/vite.config.ts".to_string()]);
        assert_eq!(tools[1].includes, vec!["tools/src".to_string()]);
    }
}
