//! Words of code and of free text, the same way on both sides of the text
//! index (`code_entity_texts`, `code_word`; schemas 12, 14 and 20), and the stored
//! forms of an entity's words and of a word's posting list.
//!
//! An entity's text is its name, owner type, doc comment and signature
//! head, and for a file's module entity the file's path. Its words:
//! `camelCase` split apart, split at anything that is not a letter or digit
//! (so `snake_case`, `::`, `/` and `-` too), lowercased, stop words and
//! Rust's ubiquitous keywords dropped, English-stemmed (the Snowball
//! stemmer CozoDB's full-text search uses). A query is split the same way,
//! so its terms are the words the index holds, and no character of it is
//! ever query syntax.

use std::cell::RefCell;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashMap;

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
/// keywords and path parts nearly every signature or key holds. A `match`
/// over the lowercased word: the compiler dispatches on its length and
/// bytes instead of comparing it with every stop word in turn (it runs
/// for every word of every entity an index run writes).
fn is_stop(w: &str) -> bool {
    matches!(
        w,
        "a" | "about"
            | "above"
            | "after"
            | "again"
            | "all"
            | "also"
            | "am"
            | "an"
            | "and"
            | "any"
            | "are"
            | "as"
            | "at"
            | "be"
            | "because"
            | "been"
            | "before"
            | "being"
            | "below"
            | "between"
            | "both"
            | "but"
            | "by"
            | "can"
            | "could"
            | "did"
            | "do"
            | "does"
            | "doing"
            | "down"
            | "during"
            | "each"
            | "few"
            | "for"
            | "from"
            | "further"
            | "had"
            | "has"
            | "have"
            | "having"
            | "he"
            | "her"
            | "here"
            | "hers"
            | "him"
            | "his"
            | "how"
            | "i"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "itself"
            | "just"
            | "me"
            | "more"
            | "most"
            | "my"
            | "no"
            | "nor"
            | "of"
            | "off"
            | "on"
            | "once"
            | "only"
            | "or"
            | "other"
            | "our"
            | "out"
            | "over"
            | "own"
            | "same"
            | "she"
            | "should"
            | "so"
            | "some"
            | "such"
            | "than"
            | "that"
            | "the"
            | "their"
            | "them"
            | "then"
            | "there"
            | "these"
            | "they"
            | "this"
            | "those"
            | "through"
            | "to"
            | "too"
            | "under"
            | "until"
            | "up"
            | "very"
            | "was"
            | "we"
            | "were"
            | "what"
            | "when"
            | "where"
            | "which"
            | "while"
            | "who"
            | "whom"
            | "why"
            | "will"
            | "with"
            | "would"
            | "you"
            | "your"
            | "fn"
            | "pub"
            | "crate"
            | "self"
            | "mut"
            | "let"
            | "ref"
            | "dyn"
            | "rs"
            | "src"
            | "mod"
            | "super"
    )
}

/// Longest word indexed; longer runs are hashes and data, not words.
const MAX_WORD: usize = 40;

/// Call `f` with each word of `text` in order: its stem and its lowercased
/// form (stop words dropped).
fn each_word(text: &str, mut f: impl FnMut(&str, &str)) {
    let stemmer = Stemmer::create(Algorithm::English);
    each_lower(text, |lower| f(&stemmer.stem(lower), lower));
}

/// Call `f` with each word of `text` in order, lowercased (stop words
/// dropped), before stemming.
fn each_lower(text: &str, mut f: impl FnMut(&str)) {
    let split = split_camel(text);
    let mut lower = String::new();
    // One letter (`T`, `'a`, `x`) names a generic, a lifetime or a local:
    // no query means it, and nearly every signature has one.
    for w in split
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 1 && w.len() <= MAX_WORD)
    {
        lower.clear();
        if w.is_ascii() {
            lower.push_str(w);
            lower.make_ascii_lowercase();
        } else {
            lower.push_str(&w.to_lowercase());
        }
        if is_stop(&lower) {
            continue;
        }
        f(&lower);
    }
}

thread_local! {
    /// Stems of the words this thread has seen, by lowercased word: a
    /// whole file has thousands of words but a few hundred distinct ones,
    /// and a tree's files share most of them, so each is stemmed once.
    static STEMS: RefCell<FxHashMap<String, String>> = RefCell::new(FxHashMap::default());
}

/// Distinct words a thread's stem cache holds before it starts afresh
/// (a bound on its memory, far above a code base's vocabulary).
const MAX_STEMS: usize = 200_000;

/// The words of a whole source file (its path, then its text: every
/// identifier, comment and string word), split, stemmed and filtered as an
/// entity's text is, each with how often it occurs, sorted by word: the
/// file's row of the file-level text index (schema 16). It depends on the
/// file's path and bytes only.
pub fn file_words(path: &str, text: &str) -> Vec<(String, i64)> {
    stem_counts(&[path, text]).0
}

/// Call `f` with the 0-based line and the stem of each word of `text`, in
/// order (split, filtered and stemmed as an entity's text is, through the
/// thread's cache): which lines of a file use which words.
pub fn each_line_stem(text: &str, mut f: impl FnMut(usize, &str)) {
    let stemmer = Stemmer::create(Algorithm::English);
    STEMS.with(|cell| {
        let mut stems = cell.borrow_mut();
        for (line, words) in text.lines().enumerate() {
            each_lower(words, |lower| {
                f(line, cached_stem(&mut stems, &stemmer, lower))
            });
        }
    });
}

/// The stem of a lowercased word, from the thread's cache (stemmed and
/// kept there the first time; the cache starts afresh past
/// [`MAX_STEMS`]).
fn cached_stem<'c>(
    stems: &'c mut FxHashMap<String, String>,
    stemmer: &Stemmer,
    lower: &str,
) -> &'c str {
    if !stems.contains_key(lower) {
        if stems.len() >= MAX_STEMS {
            stems.clear();
        }
        stems.insert(lower.to_string(), stemmer.stem(lower).into_owned());
    }
    &stems[lower]
}

/// Each distinct stem of the words of `texts` with how often it occurs,
/// sorted by stem, and the number of words: stemmed through the thread's
/// cache and counted in a map (an entity's text holds its body's literals
/// and comments too, and a scan per word made a long text's count
/// quadratic).
fn stem_counts(texts: &[&str]) -> (Vec<(String, i64)>, i64) {
    let stemmer = Stemmer::create(Algorithm::English);
    let mut counts: FxHashMap<String, i64> = FxHashMap::default();
    let mut len = 0;
    STEMS.with(|cell| {
        let mut stems = cell.borrow_mut();
        let mut add = |lower: &str| {
            len += 1;
            let stem = cached_stem(&mut stems, &stemmer, lower);
            match counts.get_mut(stem) {
                Some(n) => *n += 1,
                None => {
                    counts.insert(stem.to_string(), 1);
                }
            }
        };
        for text in texts {
            each_lower(text, &mut add);
        }
    });
    let mut out: Vec<(String, i64)> = counts.into_iter().collect();
    out.sort_unstable();
    (out, len)
}

/// The stored form of a file's words (`code_file_text.words`): one line
/// per word, `{word} {count}`, in word order (words hold no spaces).
pub fn encode_file_words(words: &[(String, i64)]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (w, n) in words {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{w} {n}");
    }
    out
}

/// The words of a stored [`encode_file_words`] list; `None` when it is not
/// one.
pub fn decode_file_words(list: &str) -> Option<Vec<(&str, i64)>> {
    list.lines()
        .map(|l| {
            let (w, n) = l.split_once(' ')?;
            Some((w, n.parse().ok()?))
        })
        .collect()
}

/// The postings of an entity's text: each distinct word with how often it
/// occurs, sorted by word, and the number of words.
pub fn index_words(text: &str) -> (Vec<(String, i64)>, i64) {
    stem_counts(&[text])
}

/// The stored form of an entity's words (in `code_entity_texts`): each word as
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

/// One entry of a word's posting list: an entity whose text holds the
/// word, how often, and the text's length in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posting<'a> {
    pub id: &'a str,
    pub tf: i64,
    pub len: i64,
}

/// Blocks a word's posting list is cut into (schema 17): 2^5.
const POSTING_BLOCK_BITS: u32 = 5;
pub const POSTING_BLOCKS: u64 = 1 << POSTING_BLOCK_BITS;

/// The block of a word's posting list that holds the entry of `id` (an
/// entity key or a file path): FNV-1a of its bytes, so every run and every
/// version puts an id in the same block. An index run that changes one
/// entity rewrites one block of each of its words, not the whole lists.
pub fn posting_block(id: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // The top bits: FNV-1a's low bits follow the last bytes (ids of the
    // same name would crowd into half the blocks).
    (hash >> (64 - POSTING_BLOCK_BITS)) as i64
}

/// The stored form of a word's posting list (`code_word.postings`): one
/// line per entity, in the order given (the writer sorts them by id),
/// `{tf} {len} {bytes of id} {id}`. The id is read by its length, so any
/// character may occur in it.
pub fn encode_postings<'a>(entries: impl IntoIterator<Item = Posting<'a>>) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for p in entries {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{} {} {} {}", p.tf, p.len, p.id.len(), p.id);
    }
    out
}

/// The entries of a stored posting list; `None` when it is not one that
/// [`encode_postings`] wrote.
pub fn decode_postings(list: &str) -> Option<Vec<Posting<'_>>> {
    Some(
        posting_spans(list)?
            .into_iter()
            .map(|s| s.posting(list))
            .collect(),
    )
}

/// One entry of a stored posting list, by where its id lies in the list's
/// text: what a server keeps of a list it read (see [`posting_spans`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostingSpan {
    start: u32,
    end: u32,
    pub tf: u32,
    pub len: u32,
}

impl PostingSpan {
    /// The entry, read in `list`, the text it was found in.
    pub fn posting(self, list: &str) -> Posting<'_> {
        Posting {
            id: list
                .get(self.start as usize..self.end as usize)
                .unwrap_or_default(),
            tf: i64::from(self.tf),
            len: i64::from(self.len),
        }
    }
}

/// The entries of a stored posting list as spans of its text; `None` when
/// it is not one that [`encode_postings`] wrote (or longer than 4 GiB).
/// Read byte by byte: a large tree's common word lists hundreds of
/// thousands of entries, and a search parses the lists of every word of
/// a report.
pub fn posting_spans(list: &str) -> Option<Vec<PostingSpan>> {
    let bytes = list.as_bytes();
    u32::try_from(bytes.len()).ok()?;
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let mut out = Vec::with_capacity(lines);
    let mut at = 0;
    // A count: digits, then the space after them.
    let number = |at: &mut usize| -> Option<u32> {
        let start = *at;
        let mut n: u32 = 0;
        loop {
            let b = *bytes.get(*at)?;
            *at += 1;
            if b == b' ' {
                break;
            }
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                return None;
            }
            n = n.checked_mul(10)?.checked_add(u32::from(digit))?;
        }
        (*at - start > 1).then_some(n)
    };
    while at < bytes.len() {
        let tf = number(&mut at)?;
        let len = number(&mut at)?;
        let n = number(&mut at)? as usize;
        let start = at;
        let end = start.checked_add(n)?;
        // The id lies between a space and a newline, both ASCII: whole
        // characters of `list`.
        if bytes.get(end) != Some(&b'\n') {
            return None;
        }
        out.push(PostingSpan {
            start: start as u32,
            end: end as u32,
            tf,
            len,
        });
        at = end + 1;
    }
    Some(out)
}

/// Whether free text has any word at all (letters or digits), stop words
/// included: an empty query is an error, one of only stop words is not.
pub fn has_words(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// The distinct terms of free text, in order of first appearance, stop
/// words dropped.
pub fn query_terms(text: &str) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    each_word(text, |stem, lower| {
        if out.len() == MAX_TERMS || out.iter().any(|t| t.stem == stem) {
            return;
        }
        out.push(Term {
            stem: stem.to_string(),
            surface: lower.to_string(),
        });
    });
    out
}

/// Every word of free text in order, each occurrence (stop words and
/// numbers dropped: a number in a report is a version, a count or a line,
/// not a word of the code), as [`Term`]s.
pub fn query_words(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    each_word(text, |stem, lower| {
        if lower.bytes().all(|b| b.is_ascii_digit()) {
            return;
        }
        out.push(Term {
            stem: stem.to_string(),
            surface: lower.to_string(),
        });
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posting_blocks_are_stable_and_spread() {
        // Stored lists depend on where an id goes: a change here needs a
        // new TEXT_VERSION.
        assert_eq!(posting_block(""), 25);
        assert_eq!(posting_block("src/lib.rs"), posting_block("src/lib.rs"));
        let used: std::collections::BTreeSet<i64> = (0..1000)
            .map(|i| posting_block(&format!("src/m{i}.rs-m{i}-f")))
            .collect();
        assert_eq!(used, (0..POSTING_BLOCKS as i64).collect());
    }

    #[test]
    fn file_words_are_the_index_words_of_path_and_text_counted() {
        let text = "// Parses the frame header.\nfn parse_header(buf: &[u8]) { parseHeader(buf) }";
        let words = file_words("src/frame.rs", text);
        let mut expected = index_words(&format!("src/frame.rs {text}")).0;
        expected.sort_unstable();
        assert_eq!(words, expected);
        assert!(words.contains(&("header".to_string(), 3)));
        // The stem cache gives the same words the second time.
        assert_eq!(file_words("src/frame.rs", text), words);
        let stored = encode_file_words(&words);
        let back: Vec<(String, i64)> = decode_file_words(&stored)
            .unwrap()
            .into_iter()
            .map(|(w, n)| (w.to_string(), n))
            .collect();
        assert_eq!(back, words);
        assert_eq!(decode_file_words(""), Some(Vec::new()));
        assert_eq!(decode_file_words("word x\n"), None);
    }

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
    fn posting_lists_round_trip_any_id() {
        let entries = [
            Posting {
                id: "src/a.rs-a-f",
                tf: 2,
                len: 7,
            },
            Posting {
                id: "src/odd name\n1 2 3 x.rs-x-<A as B>::c",
                tf: 1,
                len: 12,
            },
        ];
        let list = encode_postings(entries);
        assert!(list.starts_with("2 7 12 src/a.rs-a-f\n"));
        assert_eq!(decode_postings(&list).unwrap(), entries);
        assert_eq!(decode_postings("").unwrap(), []);
        for bad in [
            "1 2 3 ab",
            "1 2 99 abc\n",
            "x 2 1 a\n",
            "1 2 1 ab\n",
            "1 2",
            " 2 1 a\n",
            "1 2 1 \u{e9}\n",
            "99999999999 2 1 a\n",
        ] {
            assert!(decode_postings(bad).is_none(), "{bad:?}");
        }
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
