//! Words of code and of free text, the same way on both sides of the text
//! index (`code_text`, `code_word`; schema 12).
//!
//! An entity's text is its name, owner type, doc comment and signature
//! head, and for a file's module entity the file's path. Its words: `camelCase` split apart, split
//! at anything that is not a letter or digit (so `snake_case`, `::`, `/`
//! and `-` too), lowercased, stop words and Rust's ubiquitous keywords
//! dropped, English-stemmed (the Snowball stemmer CozoDB's full-text
//! search uses). A query is split the same way, so its terms are the words
//! the index holds, and no character of it is ever query syntax.

use rust_stemmers::{Algorithm, Stemmer};

/// `fooBar9Baz` → `foo Bar9 Baz`: a space between an ASCII lowercase letter
/// or digit and the ASCII uppercase letter after it — what
/// `regex_replace_all(s, '([a-z0-9])([A-Z])', '$1 $2')` does.
pub fn split_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 4);
    let mut prev_low = false;
    for c in s.chars() {
        if prev_low && c.is_ascii_uppercase() {
            out.push(' ');
        }
        prev_low = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// One word of a query: the indexed form (lowercased, stemmed) and the
/// word as written, for explaining a hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub stem: String,
    pub surface: String,
}

/// Longest query the ranking reads: a bug report's first paragraphs, not a
/// pasted file.
pub const MAX_TERMS: usize = 64;

/// Words no query means and every text has: English stop words, and the
/// keywords and path parts nearly every signature or key holds.
const STOP: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
    "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from",
    "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
    "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "no",
    "nor", "of", "off", "on", "once", "only", "or", "other", "our", "out", "over", "own", "same",
    "she", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your", "fn", "pub", "crate", "self", "mut", "let", "ref", "dyn", "rs",
    "src", "mod", "super",
];

/// Longest word indexed; longer runs are hashes and data, not words.
const MAX_WORD: usize = 40;

/// The words of `text` in order (lowercased, stemmed, stop words dropped).
fn words(text: &str, stemmer: &Stemmer) -> Vec<(String, String)> {
    let split = split_camel(text);
    split
        .split(|c: char| !c.is_alphanumeric())
        // One letter (`T`, `'a`, `x`) names a generic, a lifetime or a
        // local: no query means it, and nearly every signature has one.
        .filter(|w| w.len() > 1 && w.len() <= MAX_WORD)
        .filter_map(|w| {
            let lower = w.to_lowercase();
            if STOP.contains(&lower.as_str()) {
                return None;
            }
            let stem = stemmer.stem(&lower).into_owned();
            Some((stem, lower))
        })
        .collect()
}

/// The postings of an entity's text: each distinct word with how often it
/// occurs, and the number of words.
pub fn index_words(text: &str) -> (Vec<(String, i64)>, i64) {
    let stemmer = Stemmer::create(Algorithm::English);
    let all = words(text, &stemmer);
    let mut counts: std::collections::BTreeMap<String, i64> = Default::default();
    for (stem, _) in &all {
        *counts.entry(stem.clone()).or_default() += 1;
    }
    (counts.into_iter().collect(), all.len() as i64)
}

/// The stored form of an entity's words (`code_text.text`): each word as
/// often as it occurs, in word order, separated by spaces. Two texts with
/// the same word list have the same postings, and the postings of a stored
/// list are read back by [`stored_words`] without tokenising again.
pub fn word_list(words: &[(String, i64)]) -> String {
    let mut out = String::new();
    for (w, n) in words {
        for _ in 0..*n {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out
}

/// The distinct words of a stored [`word_list`].
pub fn stored_words(list: &str) -> impl Iterator<Item = &str> {
    let mut prev = "";
    list.split(' ').filter(move |w| {
        let new = !w.is_empty() && *w != prev;
        prev = w;
        new
    })
}

/// Whether free text has any word at all (letters or digits), stop words
/// included: an empty query is an error, one of only stop words is not.
pub fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// The distinct terms of free text, in order of first appearance, stop
/// words dropped.
pub fn query_terms(text: &str) -> Vec<Term> {
    let stemmer = Stemmer::create(Algorithm::English);
    let mut out: Vec<Term> = Vec::new();
    for (stem, lower) in words(text, &stemmer) {
        if out.iter().any(|t| t.stem == stem) {
            continue;
        }
        out.push(Term {
            stem,
            surface: lower,
        });
        if out.len() == MAX_TERMS {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_splits_like_the_schema_regex() {
        assert_eq!(split_camel("SerializeStruct"), "Serialize Struct");
        assert_eq!(split_camel("HTTPServer"), "HTTPServer");
        assert_eq!(split_camel("u8ToValue"), "u8 To Value");
        assert_eq!(split_camel("snake_case_name"), "snake_case_name");
        assert_eq!(split_camel("aBcD"), "a Bc D");
    }

    #[test]
    fn query_terms_are_stemmed_lowercase_words_without_syntax() {
        let terms: Vec<String> =
            query_terms("Fix deserializing of \"untagged\" enums (OR NOT) *x* deserializeAny")
                .into_iter()
                .map(|t| t.stem)
                .collect();
        // `OR` is a stop word; `NOT` is a plain word here, not an operator;
        // `x` is too short to mean anything; `deserializeAny` repeats a
        // stem and a stop word.
        assert_eq!(terms, ["fix", "deseri", "untag", "enum", "not"]);
        assert!(query_terms("  ~!@#$%^&*()  ").is_empty());
        assert!(query_terms("the of and").is_empty());
        assert!(has_words("the of and") && !has_words(" *() "));
    }

    #[test]
    fn word_lists_round_trip() {
        let (words, _) = index_words("Rect Rect::scale the scaleFactor");
        let list = word_list(&words);
        assert_eq!(list, "factor rect rect scale scale");
        assert_eq!(
            stored_words(&list).collect::<Vec<_>>(),
            ["factor", "rect", "scale"]
        );
        assert_eq!(stored_words("").count(), 0);
    }

    #[test]
    fn index_words_count_and_measure() {
        let (words, len) = index_words("Rect Rect::scale the scaleFactor");
        assert_eq!(len, 5);
        assert_eq!(
            words,
            [
                ("factor".to_string(), 1),
                ("rect".to_string(), 2),
                ("scale".to_string(), 2)
            ]
        );
    }
}
