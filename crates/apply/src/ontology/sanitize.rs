//! Sanitising what leaves the store (seed 000, "Data Sanitization").
//!
//! Names and descriptions are user and LLM text that ends up in prompts and
//! canvases: `<script>` tags and `javascript:` URLs are removed from them.
//! Properties that hold credentials (`password`, `token`, `secret`,
//! `apiKey`, ...) are stored as given but never emitted — not in captures,
//! not in exports.

use serde_json::{Map, Value};

/// Key endings that mark a property as sensitive (compared on the key in
/// lower case without `_`, `-` and spaces): `password`, `dbPassword`,
/// `api_key`, `accessToken`, `clientSecret`, ...
const SENSITIVE: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "apikey",
    "privatekey",
    "credential",
    "credentials",
];

pub fn is_sensitive(key: &str) -> bool {
    let k: String = key
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect();
    SENSITIVE.iter().any(|s| k.ends_with(s))
}

/// Remove `<script ...>`, `</script>` and `javascript:` (any case), until
/// none is left (so `<scr<script>ipt>` does not reassemble one), and trim.
pub fn text(s: &str) -> String {
    // Both patterns need a `<` or a `:`; most names have neither.
    if !s.contains(['<', ':']) {
        return s.trim().to_string();
    }
    let mut out = s.to_string();
    loop {
        let before = out.len();
        out = remove_ci(&out, "javascript:");
        out = remove_tags(&out, "<script");
        out = remove_tags(&out, "</script");
        if out.len() == before {
            break;
        }
    }
    out.trim().to_string()
}

/// Remove every occurrence of `needle` (ASCII, case-insensitive).
fn remove_ci(s: &str, needle: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(pos) = lower[i..].find(needle) {
        out.push_str(&s[i..i + pos]);
        i += pos + needle.len();
    }
    out.push_str(&s[i..]);
    out
}

/// Remove tags that open with `open` (ASCII, case-insensitive) up to and
/// including their `>` (or the end of the text).
fn remove_tags(s: &str, open: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while let Some(pos) = lower[i..].find(open) {
        let start = i + pos;
        let after = start + open.len();
        // `<scripts>` or `<scripting` is not a script tag.
        let next = lower[after..].chars().next();
        if !matches!(
            next,
            None | Some('>') | Some(' ') | Some('/') | Some('\t') | Some('\n')
        ) {
            out.push_str(&s[i..after]);
            i = after;
            continue;
        }
        out.push_str(&s[i..start]);
        i = match lower[after..].find('>') {
            Some(end) => after + end + 1,
            None => s.len(),
        };
    }
    out.push_str(&s[i..]);
    out
}

/// Properties without sensitive keys, string values sanitised (recursively).
pub fn props(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| !is_sensitive(k))
        .map(|(k, v)| (k.clone(), value(v)))
        .collect()
}

fn value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(text(s)),
        Value::Array(a) => Value::Array(a.iter().map(value).collect()),
        Value::Object(m) => Value::Object(props(m)),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_scripts_and_javascript_urls() {
        assert_eq!(text("  Hello<script>alert(1)</script> "), "Helloalert(1)");
        assert_eq!(text("a<SCRIPT type=\"x\">b"), "ab");
        assert_eq!(text("<scr<script>ipt>x"), "x");
        assert_eq!(text("go JavaScript:alert(1)"), "go alert(1)");
        assert_eq!(text("javajavascript:script:x"), "x");
        assert_eq!(text("<scripts> are fine"), "<scripts> are fine");
    }

    #[test]
    fn sensitive_keys() {
        for k in [
            "password",
            "token",
            "secret",
            "apiKey",
            "api_key",
            "dbPassword",
            "accessToken",
        ] {
            assert!(is_sensitive(k), "{k}");
        }
        for k in ["priority", "owner", "tokenizer", "status"] {
            assert!(!is_sensitive(k), "{k}");
        }
    }
}
