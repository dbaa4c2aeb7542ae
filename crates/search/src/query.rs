//! Reading a task the way a maintainer reads a bug report.
//!
//! An issue is not a bag of words: its title says what it is about, code
//! in backticks and identifiers (`snake_case`, `CamelCase`,
//! `path::to::item`) name the code, a backtrace's `src/x.rs:12:5` names a
//! file and a line, and the headings of an issue template ("What version
//! are you using?"), version numbers, URLs and `uname -a` output name
//! nothing in the code. [`read`] turns the text into weighted terms (the
//! words the text index holds, each with how much the text means it), the
//! identifiers it names as code, the file locations it quotes, and the
//! phrases it quotes (flags, error messages) — so that ranking weighs what
//! the author meant, not how many words the template had.
//!
//! Nothing here looks at the repository: the same text reads the same
//! way everywhere, and every rule is one a maintainer would apply to any
//! project's reports.

use crate::support::words::{query_words, Term};

/// Longest query text read (bytes): a bug report with its backtrace, not a
/// pasted log. Longer text is cut at a character boundary.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;
/// Most distinct terms a query keeps, its heaviest ones.
pub const MAX_TERMS: usize = 160;

/// Weight of a word in the title (the first line of a multi-line text).
const TITLE: f64 = 2.0;
/// Weight of a word in prose.
const PROSE: f64 = 1.0;
/// Weight of a word of an identifier or of code in backticks or a code
/// block: the author named the code.
const CODE: f64 = 1.6;
/// Weight of a word under a heading about the environment (version,
/// platform, OS), in a quoted log line or in a heading itself.
const NOISE: f64 = 0.15;

/// A weighted query term.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedTerm {
    pub term: Term,
    /// How much the text means it: the sum of its occurrences' weights,
    /// saturated (see [`saturate`]).
    pub weight: f64,
}

/// A file location the text quotes: a path (as written, `\` made `/`) and
/// the line, when given (`src/x.rs:12:5`, `x.rs#L12`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: String,
    pub line: Option<u32>,
    /// In a panic message (`panicked at src/x.rs:12:5`): where it failed.
    pub panic: bool,
}

/// What a query text says, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Distinct terms, heaviest first (ties in order of appearance).
    pub terms: Vec<WeightedTerm>,
    /// Identifiers named as code, lowercased, `::`-joined paths kept whole
    /// (`runtime::builder::enable_io`, `join_set`, `spawnblocking`).
    pub identifiers: Vec<String>,
    /// File locations, in order of appearance.
    pub locations: Vec<Location>,
    /// Quoted phrases and flags, lowercased: `--no-ignore` → `no-ignore`,
    /// `"failed to park"` → `failed to park`.
    pub phrases: Vec<String>,
}

/// Read a query text. Never fails: text with no words gives an empty
/// reading.
pub fn read(text: &str) -> Reading {
    let text = cut(text, MAX_QUERY_BYTES);
    let mut acc = Accumulator::default();
    let multi_line = text.trim().contains('\n');
    let mut in_fence = false;
    let mut section_noise = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let title = multi_line && i == 0;
        if !in_fence && !title {
            if let Some(heading) = heading_text(line) {
                section_noise = is_environment_heading(heading);
                acc.words(heading, NOISE);
                continue;
            }
        }
        locations(line, &mut acc.reading.locations);
        let line = strip_urls(line);
        if in_fence {
            let w = if section_noise || is_log_line(&line) {
                NOISE
            } else {
                CODE
            };
            acc.code(&line, w);
            continue;
        }
        let base = if title {
            TITLE
        } else if section_noise {
            NOISE
        } else {
            PROSE
        };
        acc.prose(&line, base);
    }
    acc.finish()
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[derive(Default)]
struct Accumulator {
    reading: Reading,
    /// Per term, in order of first appearance: the summed weight.
    sums: Vec<(Term, f64)>,
    /// Where each stem is in `sums` (a 64 KB report has thousands).
    place: rustc_hash::FxHashMap<String, usize>,
}

impl Accumulator {
    fn words(&mut self, text: &str, weight: f64) {
        for term in query_words(text) {
            match self.place.get(&term.stem) {
                Some(&i) => self.sums[i].1 += weight,
                None => {
                    self.place.insert(term.stem.clone(), self.sums.len());
                    self.sums.push((term, weight));
                }
            }
        }
    }

    /// Code: every token is an identifier the author wrote.
    fn code(&mut self, line: &str, weight: f64) {
        for token in tokens(line) {
            if is_identifier(token) && weight > NOISE {
                self.identifier(token);
            }
        }
        self.words(line, weight);
    }

    /// Prose, with code spans in backticks, identifiers, flags and quoted
    /// phrases picked out.
    fn prose(&mut self, line: &str, base: f64) {
        let mut rest = line;
        let mut plain = String::new();
        // `code spans` first: everything in them is code.
        while let Some(open) = rest.find('`') {
            plain.push_str(&rest[..open]);
            plain.push(' ');
            let after = &rest[open + 1..];
            match after.find('`') {
                Some(close) => {
                    let span = &after[..close];
                    self.code_span(span, base);
                    rest = &after[close + 1..];
                }
                None => {
                    rest = after;
                }
            }
        }
        plain.push_str(rest);
        for phrase in quoted(&plain) {
            self.phrase(phrase);
        }
        for token in tokens(&plain) {
            if let Some(flag) = flag_name(token) {
                self.phrase(flag);
                self.words(flag, base.max(CODE));
            } else if is_identifier(token) {
                self.identifier(token);
                self.words(token, base.max(CODE));
            } else {
                self.words(token, base);
            }
        }
    }

    fn code_span(&mut self, span: &str, base: f64) {
        let w = base.max(CODE);
        let span_t = span.trim();
        if let Some(flag) = flag_name(span_t) {
            self.phrase(flag);
        } else if span_t.contains(' ') && span_t.len() <= 120 {
            self.phrase(span_t);
        }
        for token in tokens(span) {
            if let Some(flag) = flag_name(token) {
                self.phrase(flag);
            } else if token.chars().any(char::is_alphabetic) && token.len() > 1 {
                // A token in backticks is code even when plain (`spawn`).
                self.identifier(token);
            }
        }
        self.words(span, w);
    }

    fn identifier(&mut self, token: &str) {
        let id = token
            .trim_matches(|c: char| c == ':' || c == '_' || c == '.')
            .trim_end_matches("()")
            .to_lowercase();
        if id.len() > 1 && !self.reading.identifiers.contains(&id) {
            self.reading.identifiers.push(id);
        }
    }

    fn phrase(&mut self, phrase: &str) {
        let p = phrase.trim().to_lowercase();
        if p.chars().filter(|c| c.is_alphanumeric()).count() >= 3
            && !self.reading.phrases.contains(&p)
        {
            self.reading.phrases.push(p);
        }
    }

    fn finish(mut self) -> Reading {
        let mut terms: Vec<(usize, WeightedTerm)> = self
            .sums
            .into_iter()
            .enumerate()
            .filter(|(_, (_, w))| *w > 0.0)
            .map(|(i, (term, w))| {
                (
                    i,
                    WeightedTerm {
                        term,
                        weight: saturate(w),
                    },
                )
            })
            .collect();
        terms.sort_by(|a, b| b.1.weight.total_cmp(&a.1.weight).then(a.0.cmp(&b.0)));
        terms.truncate(MAX_TERMS);
        self.reading.terms = terms.into_iter().map(|(_, t)| t).collect();
        self.reading
    }
}

/// A term's weight from its occurrences' summed weight: more mentions mean
/// more, but the tenth mention far less than the second (BM25's query-side
/// saturation, k3 = 4).
pub fn saturate(sum: f64) -> f64 {
    const K3: f64 = 4.0;
    sum * (K3 + 1.0) / (K3 + sum)
}

/// Whitespace-separated tokens with the punctuation around them trimmed
/// (sentence marks, brackets, quotes), keeping what is inside (`a::b`,
/// `--flag`, `foo()`).
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ',' | ';' | '(' | '[' | '{' | '<' | '>' | '=' | '"' | '\'' | '*' | '|' | '`'
            )
    })
    .map(|t| {
        t.trim_matches(|c: char| {
            matches!(
                c,
                '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']' | '}' | '&' | '#' | '\\' | '/'
            )
        })
    })
    .filter(|t| !t.is_empty())
}

/// A token the author wrote as code: `snake_case`, an inner capital
/// (`JoinSet`, `spawnBlocking`), a path (`tokio::spawn`) or a call (`f()`).
fn is_identifier(token: &str) -> bool {
    let t = token.trim_end_matches("()");
    if !t.chars().any(char::is_alphabetic) || t.contains('/') {
        return false;
    }
    let word_chars = t
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == ':');
    if !word_chars {
        return false;
    }
    let inner = t.trim_matches(|c| c == '_' || c == ':');
    inner.contains('_')
        || inner.contains("::")
        || inner.chars().skip(1).any(char::is_uppercase)
        || token.ends_with("()")
}

/// `--no-ignore` → `no-ignore`; `-x` and `--` are not flags worth a phrase.
fn flag_name(token: &str) -> Option<&str> {
    let name = token.strip_prefix("--")?;
    let name = name.split('=').next().unwrap_or(name);
    (name.len() > 2
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    .then_some(name)
}

/// Text between double quotes, of at least two words (a message, not a
/// single value): `"failed to park"`.
fn quoted(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut parts = text.split('"');
    parts.next();
    while let Some(inside) = parts.next() {
        if inside.contains(' ') && inside.len() <= 200 {
            out.push(inside);
        }
        parts.next();
    }
    out
}

/// The text of a heading: a Markdown heading (`## Version`), a line that
/// is all bold (`**Steps to reproduce**`), or a short line ending with a
/// colon that names a template section (`Platform:`).
fn heading_text(line: &str) -> Option<&str> {
    if let Some(h) = line.strip_prefix('#') {
        let h = h.trim_start_matches('#');
        if h.starts_with(' ') {
            return Some(h.trim());
        }
    }
    if line.len() > 4 && line.starts_with("**") && line.ends_with("**") {
        return Some(line.trim_matches('*').trim());
    }
    if line.len() <= 40 && line.ends_with(':') && !line.contains('`') {
        let h = line.trim_end_matches(':');
        if is_environment_heading(h) {
            return Some(h);
        }
    }
    None
}

/// Whether a heading introduces the reporter's environment (versions,
/// platform, OS, toolchain): what follows names no code of the project.
fn is_environment_heading(heading: &str) -> bool {
    let h = heading.to_lowercase();
    [
        "version",
        "platform",
        "environment",
        "operating system",
        "rustc",
        "toolchain",
        "os ",
        "system info",
    ]
    .iter()
    .any(|w| h.contains(w))
        || h == "os"
}

/// A line of a log or of a terminal session inside a code block: a shell
/// prompt, `uname`/`cargo` output, a timestamped log line.
fn is_log_line(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with("$ ")
        || l.starts_with("Linux ")
        || l.starts_with("Darwin ")
        || l.starts_with("rustc ")
        || l.starts_with("cargo ")
        || l.starts_with("Compiling ")
        || l.starts_with("Finished ")
        || l.starts_with("Running ")
        || l.starts_with("warning: unused")
}

/// The line without its URLs (kept: a link to a source file names it, see
/// [`locations`]).
fn strip_urls(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for (i, part) in line.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let bare = part.trim_start_matches(['(', '<', '[']);
        let url = bare.find("http://").or_else(|| bare.find("https://"));
        match url {
            Some(at) => out.push_str(&part[..part.len() - bare.len() + at]),
            None => out.push_str(part),
        }
    }
    out
}

/// The file locations a line quotes: `src/x.rs`, `src/x.rs:12:5`,
/// `…/blob/<rev>/src/x.rs#L12`, Windows separators made `/`.
fn locations(line: &str, out: &mut Vec<Location>) {
    let panic = line.contains("panicked at");
    for raw in line.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '(' | ')' | '[' | ']' | '<' | '>' | '"' | '\'' | '`' | ','
            )
    }) {
        let token = raw.replace('\\', "/");
        // A source file of any language: a name, a dot and a short
        // extension of letters; only files of the graph match later.
        let Some(end) = source_path_end(&token) else {
            continue;
        };
        let (path, rest) = token.split_at(end);
        let path = path.rsplit("/blob/").next().unwrap_or(path);
        // `/blob/<rev>/path`: drop the revision.
        let path = if token.contains("/blob/") {
            path.split_once('/').map_or(path, |(_, p)| p)
        } else {
            path
        };
        let path = path.trim_start_matches("./").trim_start_matches(|c: char| {
            !(c.is_alphanumeric() || c == '_' || c == '.' || c == '/')
        });
        if path.len() <= 3
            || !path
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+' | '@'))
        {
            continue;
        }
        let line_no = rest
            .strip_prefix(':')
            .or_else(|| rest.strip_prefix("#L"))
            .and_then(|r| {
                let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
                digits.parse().ok()
            });
        let loc = Location {
            path: path.to_string(),
            line: line_no,
            panic,
        };
        if !out.contains(&loc) {
            out.push(loc);
        }
    }
}

/// Where a path to a source file ends in `token` (`src/x.rs` of
/// `src/x.rs:12:5`): after the first `.ext` (1 to 6 ASCII letters or
/// digits, starting with a letter) that is followed by the end, `:` or `#`.
fn source_path_end(token: &str) -> Option<usize> {
    let bytes = token.as_bytes();
    for (dot, _) in token.match_indices('.') {
        let ext = bytes[dot + 1..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let end = dot + 1 + ext;
        if (1..=6).contains(&ext)
            && bytes[dot + 1].is_ascii_alphabetic()
            && dot > 0
            && matches!(bytes.get(end), None | Some(b':') | Some(b'#'))
        {
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stems(r: &Reading) -> Vec<&str> {
        r.terms.iter().map(|t| t.term.stem.as_str()).collect()
    }

    fn weight(r: &Reading, stem: &str) -> f64 {
        r.terms
            .iter()
            .find(|t| t.term.stem == stem)
            .map_or(0.0, |t| t.weight)
    }

    #[test]
    fn a_backtrace_names_files_and_lines_and_the_panic_comes_first() {
        let r = read(
            "Panic in spawn_blocking\n\
             thread 'main' panicked at 'oh no', tokio/src/runtime/blocking/pool.rs:210:9\n\
             stack backtrace:\n   at /home/u/.cargo/registry/src/github.com-1ecc6299db9ec823/tokio-1.2.0/src/runtime/task/harness.rs:44:5\n\
             see https://github.com/tokio-rs/tokio/blob/master/tokio/src/sync/watch.rs#L120",
        );
        assert_eq!(
            r.locations[0],
            Location {
                path: "tokio/src/runtime/blocking/pool.rs".into(),
                line: Some(210),
                panic: true
            }
        );
        assert!(r.locations[1]
            .path
            .ends_with("tokio-1.2.0/src/runtime/task/harness.rs"));
        assert_eq!(r.locations[1].line, Some(44));
        assert_eq!(
            r.locations[2],
            Location {
                path: "tokio/src/sync/watch.rs".into(),
                line: Some(120),
                panic: false
            }
        );
        assert!(r.identifiers.contains(&"spawn_blocking".to_string()));
        // The URL's words are not terms (`master` is only in the link).
        assert_eq!(weight(&r, "master"), 0.0);
    }

    #[test]
    fn template_headings_and_the_environment_weigh_little_and_code_much() {
        let r = read(
            "JoinSet::shutdown hangs\n\
             ## Version\n\
             tokio v1.38.0 on Linux x86_64\n\
             ## Description\n\
             Calling `shutdown` on a `JoinSet` with an aborted task never returns.",
        );
        assert!(weight(&r, "linux") < 0.5, "{r:?}");
        assert!(weight(&r, "version") < 0.5);
        assert!(weight(&r, "shutdown") > weight(&r, "return"));
        assert!(r.identifiers.contains(&"joinset::shutdown".to_string()));
        assert!(r.identifiers.contains(&"joinset".to_string()));
        // Named in the title and in code twice: among the heaviest terms.
        assert!(stems(&r)[..3].contains(&"shutdown"), "{:?}", stems(&r));
        // Version numbers are not words of the code.
        assert_eq!(weight(&r, "38"), 0.0);
    }

    #[test]
    fn flags_and_quoted_messages_are_phrases() {
        let r = read("fd --no-ignore ignores \"failed to read directory\" errors; try `--hidden`");
        assert!(r.phrases.contains(&"no-ignore".to_string()));
        assert!(r.phrases.contains(&"hidden".to_string()));
        assert!(r.phrases.contains(&"failed to read directory".to_string()));
        assert!(weight(&r, "ignor") > 0.0);
    }

    #[test]
    fn any_text_reads_without_panicking_and_long_text_is_cut() {
        for t in [
            "",
            "   \n\t ",
            "```",
            "``` unterminated\nfoo_bar",
            "`",
            "\"",
            "a.rs:",
            "x.rs#L",
            "—ü€\u{0}\u{ffff}.rs:99999999999999",
            "## \n**\n**x**",
            "--\n--=\n---",
        ] {
            let _ = read(t);
        }
        let long = "word_".repeat(40_000);
        let r = read(&long);
        assert!(r.terms.len() <= MAX_TERMS);
        let many: String = (0..5000).map(|i| format!("w{i}x ")).collect();
        assert_eq!(read(&many).terms.len(), MAX_TERMS);
    }
}
