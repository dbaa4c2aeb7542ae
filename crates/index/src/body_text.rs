//! The words of entity bodies that names and docs do not hold: string
//! literals and plain comments, kept per entity for the text index.
//!
//! An issue quotes what a program prints or reads (an error message, a
//! flag's name, a log line, a config key), and that is written in a
//! literal or explained in a comment inside a body, not in any name. Each
//! language's extractor hands its literals and comments here, attributed
//! to the entity that holds them; the result is
//! [`crate::model::FileExtract::texts`], which only the text index reads.

use crate::model::Entity;

/// Most bytes of literals and comments one entity keeps: a table of
/// strings adds no meaning past its first rows, and a generated module's
/// would crowd out every other entity's words.
pub const MAX_BODY_TEXT: usize = 1024;

/// Literals and comments per entity index, in the order they were noted.
#[derive(Debug, Default)]
pub struct BodyTexts {
    per_entity: Vec<String>,
}

impl BodyTexts {
    /// Keep `text` (a literal or comment as written in the source) for
    /// the entity at `entity`, up to [`MAX_BODY_TEXT`] bytes in all.
    /// Escapes (`\n`, `\t`, `\"`) are not letters of the words around
    /// them: each becomes a space.
    pub fn note(&mut self, entity: u32, text: &str) {
        let i = entity as usize;
        if self.per_entity.len() <= i {
            self.per_entity.resize_with(i + 1, String::new);
        }
        let buf = &mut self.per_entity[i];
        let room = MAX_BODY_TEXT.saturating_sub(buf.len());
        if room == 0 {
            return;
        }
        if !buf.is_empty() {
            buf.push(' ');
        }
        let mut chars = text.chars();
        let start = buf.len();
        while let Some(c) = chars.next() {
            if buf.len() - start >= room {
                break;
            }
            if c == '\\' {
                chars.next();
                buf.push(' ');
            } else {
                buf.push(c);
            }
        }
    }

    /// The entities that have any, as `(entity index, text)` in index order.
    pub fn into_pairs(self) -> Vec<(u32, String)> {
        self.per_entity
            .into_iter()
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(i, t)| (u32::try_from(i).unwrap_or(u32::MAX), t))
            .collect()
    }
}

/// For each line (in nondecreasing order), the index in `entities` of the
/// innermost entity that `may_own` lets own what is written there (the
/// first, a file's module, is never a candidate); 0, the module, when none.
pub fn owners_of_lines(
    entities: &[Entity],
    lines: impl Iterator<Item = u32>,
    may_own: impl Fn(&Entity) -> bool,
) -> Vec<u32> {
    let mut spans: Vec<(u32, u32, u32)> = entities
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, e)| may_own(e))
        .filter_map(|(i, e)| Some((e.start_line, e.end_line, u32::try_from(i).ok()?)))
        .collect();
    // Outer before inner: the earlier start first, then the later end.
    spans.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut open: Vec<(u32, u32, u32)> = Vec::new();
    let mut next = spans.into_iter().peekable();
    let mut out = Vec::new();
    for line in lines {
        while let Some(&span) = next.peek() {
            if span.0 > line {
                break;
            }
            while open.last().is_some_and(|o| o.1 < span.0) {
                open.pop();
            }
            open.push(span);
            next.next();
        }
        while open.last().is_some_and(|o| o.1 < line) {
            open.pop();
        }
        out.push(open.last().map_or(0, |o| o.2));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_split_words_and_entities_keep_their_own() {
        let mut t = BodyTexts::default();
        t.note(2, r#""no such file:\n{path}""#);
        t.note(0, "// retry once");
        t.note(2, "'x'");
        assert_eq!(
            t.into_pairs(),
            vec![
                (0, "// retry once".to_string()),
                (2, r#""no such file: {path}" 'x'"#.to_string())
            ]
        );
    }

    #[test]
    fn an_entity_keeps_at_most_the_cap() {
        let mut t = BodyTexts::default();
        let long = "word ".repeat(1000);
        t.note(0, &long);
        t.note(0, "late");
        let pairs = t.into_pairs();
        assert!(
            pairs[0].1.len() <= MAX_BODY_TEXT + 4,
            "{}",
            pairs[0].1.len()
        );
        assert!(!pairs[0].1.contains("late"));
    }
}
