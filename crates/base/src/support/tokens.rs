//! Exact token counts with a real BPE tokenizer (tiktoken's o200k_base or
//! cl100k_base), not a characters-per-token estimate.
//!
//! Emitters count each piece (an entity's JSON, a Format E line) once and
//! cache the count by content hash, then count the assembled document once
//! more to report — and guarantee — the exact figure. BPE counts are not
//! additive across concatenation, but for JSON and line-oriented text built
//! from pieces separated by punctuation and newlines the sum of the pieces
//! is a close upper-bound estimate; the final check is what the budget is
//! enforced against.

use std::collections::HashMap;
use std::sync::Mutex;

use rayon::prelude::*;
use tiktoken_rs::CoreBPE;

/// Below this many lines a document is counted on one thread.
const PARALLEL_SEGMENTS: usize = 64;

/// Which encoding to count with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// GPT-4o family (default).
    #[default]
    O200k,
    /// GPT-4 / GPT-3.5 family.
    Cl100k,
}

impl Encoding {
    pub fn parse(s: &str) -> Option<Encoding> {
        match s {
            "o200k" | "o200k_base" => Some(Encoding::O200k),
            "cl100k" | "cl100k_base" => Some(Encoding::Cl100k),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200k => "o200k_base",
            Encoding::Cl100k => "cl100k_base",
        }
    }

    fn bpe(self) -> &'static CoreBPE {
        match self {
            Encoding::O200k => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100k => tiktoken_rs::cl100k_base_singleton(),
        }
    }
}

/// A token counter with a cache keyed by blake3 of the text.
pub struct TokenCounter {
    encoding: Encoding,
    cache: Mutex<HashMap<[u8; 32], usize>>,
}

impl TokenCounter {
    pub fn new(encoding: Encoding) -> TokenCounter {
        TokenCounter {
            encoding,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Load the encoding's tables on a thread of their own, so that the
    /// first count does not wait for them: a server calls this when it
    /// starts (loading them takes a few hundred milliseconds, which the
    /// first context an editor or agent asks for would otherwise pay).
    pub fn prepare_in_background(&self) {
        let encoding = self.encoding;
        let _ = std::thread::Builder::new()
            .name("graphctx-tokenizer".into())
            .spawn(move || {
                encoding.bpe();
            });
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Exact count, uncached (for whole documents).
    pub fn count_exact(&self, text: &str) -> usize {
        self.encoding.bpe().encode_ordinary(text).len()
    }

    /// Count of a piece, cached by content hash.
    pub fn count(&self, text: &str) -> usize {
        let key = *blake3::hash(text.as_bytes()).as_bytes();
        if let Some(&n) = self
            .cache
            .lock()
            .ok()
            .and_then(|c| c.get(&key).copied())
            .as_ref()
        {
            return n;
        }
        let n = self.count_exact(text);
        if let Ok(mut c) = self.cache.lock() {
            c.insert(key, n);
        }
        n
    }

    /// The cached count of a piece, if it was counted before.
    pub fn cached(&self, text: &str) -> Option<usize> {
        let key = *blake3::hash(text.as_bytes()).as_bytes();
        self.cache.lock().ok().and_then(|c| c.get(&key).copied())
    }

    /// Exact count of a document made of lines, from cached per-line
    /// counts. BPE counts add up across a boundary where the tokenizer's
    /// pre-tokenizer always splits: after a newline that is followed by
    /// neither whitespace nor `/` (o200k and cl100k split there; their
    /// patterns let a punctuation run swallow trailing `\r`, `\n` and `/`
    /// only). graphctx's documents are built so every line starts with a
    /// non-space, non-`/` character, which makes this the exact count of
    /// the assembled document; tests compare it with [`Self::count_exact`].
    ///
    /// Lines not in the cache yet are counted in parallel.
    pub fn count_lines(&self, text: &str) -> usize {
        let mut segments: Vec<&str> = Vec::new();
        let mut start = 0;
        for (i, _) in text.match_indices('\n') {
            let end = i + 1;
            let next = text[end..].chars().next();
            let splits = match next {
                None => true,
                Some(c) => !c.is_whitespace() && c != '/',
            };
            if splits {
                segments.push(&text[start..end]);
                start = end;
            }
        }
        if start < text.len() {
            segments.push(&text[start..]);
        }
        if segments.len() < PARALLEL_SEGMENTS {
            return segments.iter().map(|s| self.count(s)).sum();
        }
        segments.par_iter().map(|s| self.count(s)).sum()
    }

    /// The longest prefix of `text` (on a char boundary, preferring a word
    /// boundary) whose token count is at most `max_tokens`.
    pub fn truncate(&self, text: &str, max_tokens: usize) -> String {
        if self.count_exact(text) <= max_tokens {
            return text.to_string();
        }
        let tokens = self.encoding.bpe().encode_ordinary(text);
        let mut keep = max_tokens.min(tokens.len());
        loop {
            if let Ok(s) = self.encoding.bpe().decode(&tokens[..keep]) {
                let cut = match s.rfind(char::is_whitespace) {
                    Some(i) if i > s.len() / 2 => s[..i].to_string(),
                    _ => s,
                };
                if self.count_exact(&cut) <= max_tokens {
                    return cut;
                }
            }
            if keep == 0 {
                return String::new();
            }
            keep -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_real_bpe_counts() {
        let c = TokenCounter::new(Encoding::O200k);
        assert_eq!(c.count("hello world"), 2);
        assert_eq!(c.count(""), 0);
        // cached path gives the same answer
        assert_eq!(c.count("hello world"), 2);
        let cl = TokenCounter::new(Encoding::Cl100k);
        assert!(cl.count("fn main() { println!(\"hi\"); }") > 5);
    }

    #[test]
    fn line_counts_add_up_to_the_document_count() {
        let c = TokenCounter::new(Encoding::O200k);
        let docs = [
            "{\"a\":1},\n{\"b\":\"x y\"}\n],\n\"rel\":[\n{\"c\":2}\n]}\n",
            "# head · 12 tokens\n## Nodes\nRect|struct|src/a.rs-crate-Rect|A box.\n_x|fn|src/a.rs-crate-_x|\n## Edges\nsrc/a.rs-crate-_x -ca-> src/a.rs-crate-Rect\n",
            "a\n\n  b\n/c\nd",
        ];
        for d in docs {
            assert_eq!(c.count_lines(d), c.count_exact(d), "{d:?}");
        }
    }

    #[test]
    fn truncation_respects_the_limit() {
        let c = TokenCounter::new(Encoding::O200k);
        let text = "Creates a new user instance with email validation and duplicate checking. Returns UserError if email is invalid.";
        for max in [0, 1, 3, 7, 12, 100] {
            let t = c.truncate(text, max);
            assert!(c.count_exact(&t) <= max, "{max}: {t}");
            assert!(text.starts_with(&t));
        }
    }
}
