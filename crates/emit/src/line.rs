//! The line codec Format E shares between code and ontology documents.
//!
//! A node line is fields separated by `|`; an edge line is
//! `Source -rel-> Target[, Target…]`. Text that could be read as a
//! separator is escaped with a backslash: `\\`, `\|` and line breaks
//! (`\n`, `\r`) in fields, and `\\`, `\,` in the endpoints of an edge
//! list, so every line splits back into exactly what was written.

/// Escape one `|`-separated field.
pub fn escape_field(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '|' => out.push_str("\\|"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// Split on unescaped `|`, unescaping each field, stopping after `max`
/// fields (the rest of the line, raw, is returned beside them).
pub fn split_fields_max(line: &str, max: usize) -> (Vec<String>, Option<&str>) {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'n')) => cur.push('\n'),
                Some((_, 'r')) => cur.push('\r'),
                Some((_, other)) => cur.push(other),
                None => cur.push('\\'),
            },
            '|' => {
                fields.push(std::mem::take(&mut cur));
                if fields.len() == max {
                    return (fields, Some(&line[i + 1..]));
                }
            }
            c => cur.push(c),
        }
    }
    fields.push(cur);
    (fields, None)
}

/// Every `|`-separated field of a line, unescaped.
pub fn split_fields(line: &str) -> Vec<String> {
    split_fields_max(line, usize::MAX).0
}

/// Escape one endpoint of an edge list (`,` separates endpoints).
pub fn escape_endpoint(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// Split an edge target list on unescaped `,`, unescaping and trimming
/// each endpoint. Empty endpoints are kept (the caller reports them).
pub fn split_endpoints(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = list.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => cur.push('\n'),
                Some('r') => cur.push('\r'),
                Some(other) => cur.push(other),
                None => cur.push('\\'),
            },
            ',' => out.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// An edge line split into its parts: source, relationship short name,
/// and the raw text after the arrow. The arrow is the first ` -rel-> `
/// whose `rel` is accepted by `is_rel`, so sources containing spaces or
/// dashes (code keys, impl names) split where they should.
pub fn split_edge(line: &str, is_rel: impl Fn(&str) -> bool) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(i) = line[from..].find(" -") {
        let start = from + i;
        let after = &line[start + 2..];
        if let Some(j) = after.find("->") {
            let rel = &after[..j];
            if !rel.is_empty() && !rel.contains(' ') && is_rel(rel) {
                let rest = &after[j + 2..];
                return Some((&line[..start], rel, rest));
            }
        }
        from = start + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let parts = ["a|b", "c\\d", "e\nf", ""];
        let line: Vec<String> = parts.iter().map(|p| escape_field(p)).collect();
        assert_eq!(split_fields(&line.join("|")), parts);
    }

    #[test]
    fn endpoints_round_trip() {
        let parts = ["impl<K, V> Map<K, V>", "a\\b", "plain"];
        let line: Vec<String> = parts.iter().map(|p| escape_endpoint(p)).collect();
        assert_eq!(split_endpoints(&line.join(", ")), parts);
    }

    #[test]
    fn edges_split_at_the_first_known_arrow() {
        let line = "src/a.rs-crate-impl X for Y -cn-> a, b";
        let (src, rel, rest) = split_edge(line, |r| r == "cn").unwrap();
        assert_eq!(
            (src, rel, rest),
            ("src/a.rs-crate-impl X for Y", "cn", " a, b")
        );
        assert!(split_edge("a -zz-> b", |r| r == "cn").is_none());
    }
}
