//! Roles and tags from YAML frontmatter (seed 002's properties system).
//!
//! Frontmatter is a YAML mapping in a block that opens the text: a first
//! line `---`, the YAML, a closing line `---`. Nothing else counts (a `---`
//! later in the text is a Markdown rule). Only two keys mean something:
//! `role` (`system`, `user` or `assistant`; the API roles, no invented
//! ones) and `tags` (a list, or one string). Text without frontmatter is
//! a user message; a role outside the three, YAML that does not parse, or
//! frontmatter that is not a mapping, fall back to `user` with a warning.
//! The block is removed from the message content either way.

use serde::Serialize;
use yaml_rust2::{Yaml, YamlLoader};

/// The chat-completion role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// `system`, `user` or `assistant`, ignoring case and surrounding space.
    pub fn parse(s: &str) -> Option<Role> {
        match s.trim().to_ascii_lowercase().as_str() {
            "system" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
}

/// What a text says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed<'a> {
    pub role: Role,
    pub tags: Vec<String>,
    /// The text after the frontmatter block (all of it when there is none).
    pub body: &'a str,
    /// Whether a frontmatter block was found.
    pub has_frontmatter: bool,
    /// Why the role fell back to `user`, or why keys were ignored.
    pub warnings: Vec<String>,
}

/// Split a leading `---` block off: `(Some(yaml), body)` or `(None, text)`.
pub fn split(text: &str) -> (Option<&str>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some((first, rest)) = split_line(text) else {
        return (None, text);
    };
    if first.trim_end() != "---" {
        return (None, text);
    }
    let mut pos = 0;
    let mut remaining = rest;
    while let Some((line, after)) = split_line(remaining) {
        if line.trim_end() == "---" {
            return (Some(&rest[..pos]), after);
        }
        pos += remaining.len() - after.len();
        remaining = after;
    }
    (None, text)
}

/// The first line (without its line break) and what follows; `None` for
/// empty text. A last line without a line break counts.
fn split_line(text: &str) -> Option<(&str, &str)> {
    if text.is_empty() {
        return None;
    }
    Some(match text.find('\n') {
        Some(i) => (
            text[..i].strip_suffix('\r').unwrap_or(&text[..i]),
            &text[i + 1..],
        ),
        None => (text, ""),
    })
}

/// Role, tags and body of a text (a canvas text node or a vault note).
pub fn parse(text: &str) -> Parsed<'_> {
    let (yaml, body) = split(text);
    let mut parsed = Parsed {
        role: Role::User,
        tags: Vec::new(),
        body,
        has_frontmatter: yaml.is_some(),
        warnings: Vec::new(),
    };
    let Some(yaml) = yaml else {
        return parsed;
    };
    let docs = match YamlLoader::load_from_str(yaml) {
        Ok(docs) => docs,
        Err(e) => {
            parsed
                .warnings
                .push(format!("frontmatter is not valid YAML ({e}); role user"));
            return parsed;
        }
    };
    let map = match docs.into_iter().next() {
        None | Some(Yaml::Null) => return parsed,
        Some(Yaml::Hash(map)) => map,
        Some(_) => {
            parsed
                .warnings
                .push("frontmatter is not a mapping of keys to values; role user".into());
            return parsed;
        }
    };
    match map.get(&Yaml::String("role".into())) {
        None | Some(Yaml::Null) => {}
        Some(Yaml::String(s)) => match Role::parse(s) {
            Some(role) => parsed.role = role,
            None => parsed.warnings.push(format!(
                "invalid role '{s}' (expected system, user or assistant); role user"
            )),
        },
        Some(other) => parsed.warnings.push(format!(
            "invalid role {} (expected system, user or assistant); role user",
            scalar(other).unwrap_or_else(|| "of a non-text type".into())
        )),
    }
    match map.get(&Yaml::String("tags".into())) {
        None | Some(Yaml::Null) => {}
        Some(Yaml::Array(items)) => {
            for item in items {
                match scalar(item) {
                    Some(t) => push_tag(&mut parsed.tags, &t),
                    None => parsed
                        .warnings
                        .push("a tag that is not text was ignored".into()),
                }
            }
        }
        Some(Yaml::String(s)) => {
            for t in s.split(|c: char| c == ',' || c.is_whitespace()) {
                push_tag(&mut parsed.tags, t);
            }
        }
        Some(_) => parsed
            .warnings
            .push("'tags' is neither a list nor text; ignored".into()),
    }
    parsed
}

fn push_tag(tags: &mut Vec<String>, t: &str) {
    let t = t.trim().trim_start_matches('#');
    if !t.is_empty() && !tags.iter().any(|x| x == t) {
        tags.push(t.to_string());
    }
}

fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_tags_and_body() {
        let p = parse("---\nrole: system\ntags: [context, \"#research\"]\n---\nYou are helpful.");
        assert_eq!(p.role, Role::System);
        assert_eq!(p.tags, vec!["context", "research"]);
        assert_eq!(p.body, "You are helpful.");
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn no_frontmatter_is_user_and_keeps_the_text() {
        let p = parse("What is ML?\n---\nmore");
        assert_eq!(p.role, Role::User);
        assert_eq!(p.body, "What is ML?\n---\nmore");
        assert!(!p.has_frontmatter);
        // An unclosed block is not frontmatter.
        assert_eq!(parse("---\nrole: system\n").body, "---\nrole: system\n");
    }

    #[test]
    fn invalid_roles_fall_back_to_user_with_a_warning() {
        for text in [
            "---\nrole: wizard\n---\nx",
            "---\nrole: 3\n---\nx",
            "---\nrole: [a\n---\nx",
            "---\n- a list\n---\nx",
        ] {
            let p = parse(text);
            assert_eq!(p.role, Role::User, "{text}");
            assert_eq!(p.body, "x", "{text}");
            assert_eq!(p.warnings.len(), 1, "{text}: {:?}", p.warnings);
        }
        assert_eq!(parse("---\nrole: Assistant\n---\n").role, Role::Assistant);
    }

    #[test]
    fn crlf_and_bom() {
        let p = parse("\u{feff}---\r\nrole: assistant\r\ntags: a, b\r\n---\r\nHi");
        assert_eq!(p.role, Role::Assistant);
        assert_eq!(p.tags, vec!["a", "b"]);
        assert_eq!(p.body, "Hi");
    }
}
