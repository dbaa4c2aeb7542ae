//! Which entities of the best files use the query's words in their
//! bodies.
//!
//! An entity's text in the word index is its name, doc comment, signature
//! head and the literals and comments of its body: what names it. A
//! report speaks of what a function does — the fields it reads, the calls
//! it makes, the locals it keeps — and those words are in its body's
//! identifiers, which no index of names holds. Once the files are ranked,
//! the few best are read from the repository (the index is current with
//! them: every command brings it so before it answers) and each of their
//! entities is scored by BM25 over every word of its own lines, as
//! retrievers of functions score them. The idf is the files' own: a word
//! every function of a module uses names none of them. An entity's own
//! lines are its lines less those of the entities nested in it: an impl
//! block, a class or a module holds its members' words, and scored on
//! them all it would outrank each member for what one of them does.
//!
//! Nothing is stored for this: a query reads at most [`BODY_FILES`]
//! files of at most [`MAX_FILE_BYTES`] each.

use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::query::WeightedTerm;
use crate::support::words::each_line_stem;

/// How many of the best files have their entities' bodies read.
pub const BODY_FILES: usize = 10;
/// A file larger than this is not read (generated tables, bundles).
const MAX_FILE_BYTES: u64 = 2 << 20;
/// BM25's term-frequency saturation and length normalisation.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// An entity's lines in its file (1-based, inclusive).
pub struct Span<'a> {
    pub id: &'a str,
    pub file: &'a str,
    pub start_line: i64,
    pub end_line: i64,
}

/// One entity's body score and the query terms its body holds.
#[derive(Debug, Clone, Default)]
pub struct BodyWords {
    /// BM25 of the query over its lines.
    pub score: f64,
    /// Indices into the query's terms, in order.
    pub terms: Vec<usize>,
    /// The share of the query's term weight its body holds.
    pub coverage: f64,
}

/// Per line of one file: how often each query term occurs there (as
/// running sums, so a span's count is a difference) and how many words
/// the lines hold.
struct LineCounts {
    /// `tf[t][l]`: occurrences of term `t` in lines `0..l`.
    tf: Vec<Vec<u32>>,
    /// `len[l]`: words in lines `0..l`.
    len: Vec<u32>,
}

impl LineCounts {
    fn of(text: &str, terms: &FxHashMap<&str, usize>, n_terms: usize) -> LineCounts {
        let lines = text.lines().count();
        let mut per_line_len = vec![0u32; lines];
        let mut hits: Vec<(usize, usize)> = Vec::new();
        each_line_stem(text, |line, stem| {
            per_line_len[line] += 1;
            if let Some(&t) = terms.get(stem) {
                hits.push((t, line));
            }
        });
        let mut tf = vec![Vec::new(); n_terms];
        for &(t, _) in &hits {
            if tf[t].is_empty() {
                tf[t] = vec![0u32; lines + 1];
            }
        }
        for (t, line) in hits {
            tf[t][line + 1] += 1;
        }
        for col in tf.iter_mut().filter(|c| !c.is_empty()) {
            for l in 1..col.len() {
                col[l] += col[l - 1];
            }
        }
        let mut len = vec![0u32; lines + 1];
        for l in 0..lines {
            len[l + 1] = len[l] + per_line_len[l];
        }
        LineCounts { tf, len }
    }

    /// Each term's count and the word count over some line segments.
    fn count(&self, segments: &[(i64, i64)]) -> (Vec<(usize, u32)>, u32) {
        let ranges: Vec<(usize, usize)> = segments.iter().map(|&(a, b)| self.range(a, b)).collect();
        let over = |col: &[u32]| {
            ranges
                .iter()
                .map(|&(lo, hi)| col[hi] - col[lo])
                .sum::<u32>()
        };
        let tfs = self
            .tf
            .iter()
            .enumerate()
            .filter(|(_, col)| !col.is_empty())
            .map(|(t, col)| (t, over(col)))
            .filter(|(_, n)| *n > 0)
            .collect();
        (tfs, over(&self.len))
    }

    /// Lines `start..=end` (1-based) as indices of the running sums,
    /// clamped to the file.
    fn range(&self, start: i64, end: i64) -> (usize, usize) {
        let lines = self.len.len() - 1;
        let hi = usize::try_from(end.max(0)).unwrap_or(0).min(lines);
        let lo = usize::try_from((start - 1).max(0)).unwrap_or(0).min(hi);
        (lo, hi)
    }
}

/// Each span's own line count.
type OwnLines<'a> = Vec<(&'a str, i64)>;

/// A span with each query term's count in its lines (those it holds) and
/// the number of words of its lines.
type Counted<'s, 'a> = (&'s Span<'a>, Vec<(usize, u32)>, u32);

/// What reading the spans' files gave.
pub struct Read<'a> {
    /// The body words of each span whose lines hold a query word.
    pub words: FxHashMap<String, BodyWords>,
    /// How many own lines each span has (at least 1), whether or not its
    /// file could be read.
    pub own_lines: FxHashMap<&'a str, i64>,
}

/// BM25 of the query over each span's own lines, read from the files under
/// `root`; spans of a file that cannot be read score nothing.
pub fn scores<'a>(root: &Path, spans: &[Span<'a>], terms: &[WeightedTerm]) -> Read<'a> {
    let index: FxHashMap<&str, usize> = terms
        .iter()
        .enumerate()
        .map(|(i, t)| (t.term.stem.as_str(), i))
        .collect();
    let mut by_file: FxHashMap<&str, Vec<&Span>> = FxHashMap::default();
    for s in spans {
        by_file.entry(s.file).or_default().push(s);
    }
    // Each span's own lines, term counts and length, a file per core.
    let mut files: Vec<(&str, Vec<&Span>)> = by_file.into_iter().collect();
    files.sort_by_key(|(f, _)| *f);
    let per_file: Vec<(OwnLines, Vec<Counted>)> = files
        .par_iter()
        .map(|(file, spans)| {
            let own = own_segments(spans);
            let own_lines = spans
                .iter()
                .zip(&own)
                .map(|(s, segments)| {
                    let n: i64 = segments.iter().map(|(a, b)| b - a + 1).sum();
                    (s.id, n.max(1))
                })
                .collect();
            let counted = match read_source(root, file) {
                Some(text) => {
                    let lines = LineCounts::of(&text, &index, terms.len());
                    spans
                        .iter()
                        .zip(&own)
                        .map(|(s, segments)| {
                            let (tfs, len) = lines.count(segments);
                            (*s, tfs, len)
                        })
                        .collect()
                }
                None => Vec::new(),
            };
            (own_lines, counted)
        })
        .collect();
    let mut own_lines = FxHashMap::default();
    let mut counted: Vec<Counted> = Vec::new();
    for (lines, c) in per_file {
        own_lines.extend(lines);
        counted.extend(c);
    }
    let words = body_words(counted, terms);
    Read { words, own_lines }
}

/// BM25 of the query over the counted spans, with the idf of their own.
fn body_words(counted: Vec<Counted>, terms: &[WeightedTerm]) -> FxHashMap<String, BodyWords> {
    if counted.is_empty() {
        return FxHashMap::default();
    }
    let n = counted.len() as f64;
    let avg = (counted.iter().map(|c| f64::from(c.2)).sum::<f64>() / n).max(1.0);
    let mut df = vec![0u32; terms.len()];
    for (_, tfs, _) in &counted {
        for &(t, _) in tfs {
            df[t] += 1;
        }
    }
    let idf: Vec<f64> = df
        .iter()
        .zip(terms)
        .map(|(&d, t)| {
            let d = f64::from(d);
            (1.0 + (n - d + 0.5) / (d + 0.5)).ln() * t.weight
        })
        .collect();
    let weights: Vec<f64> = terms.iter().map(|t| t.weight).collect();
    let total: f64 = weights.iter().sum();
    counted
        .into_iter()
        .filter(|(_, tfs, _)| !tfs.is_empty())
        .map(|(s, tfs, len)| {
            let norm = K1 * (1.0 - B + B * f64::from(len) / avg);
            let score = tfs
                .iter()
                .map(|&(t, tf)| {
                    let tf = f64::from(tf);
                    idf[t] * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum();
            let terms: Vec<usize> = tfs.iter().map(|&(t, _)| t).collect();
            let held: f64 = terms.iter().map(|&t| weights[t]).sum();
            let coverage = if total > 0.0 { held / total } else { 0.0 };
            (
                s.id.to_string(),
                BodyWords {
                    score,
                    terms,
                    coverage,
                },
            )
        })
        .collect()
}

/// Each span's own lines, as 1-based inclusive segments, in the order of
/// `spans` (one file's): its lines less those of the spans directly
/// nested in it. A span nests in the innermost other span that holds its
/// lines and is not the same lines (and in each span of those lines).
fn own_segments(spans: &[&Span]) -> Vec<Vec<(i64, i64)>> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].start_line, std::cmp::Reverse(spans[i].end_line), i));
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); spans.len()];
    let mut open: Vec<usize> = Vec::new();
    for &i in &order {
        let s = spans[i];
        while open
            .last()
            .is_some_and(|&t| spans[t].end_line < s.start_line)
        {
            open.pop();
        }
        let holds = |t: &&usize| {
            let p = spans[**t];
            p.start_line <= s.start_line
                && s.end_line <= p.end_line
                && (p.start_line, p.end_line) != (s.start_line, s.end_line)
        };
        if let Some(&p) = open.iter().rev().find(holds) {
            // And in every span of the same lines as that one (a module
            // that is one class, twin keys).
            let lines = (spans[p].start_line, spans[p].end_line);
            for &t in &open {
                if (spans[t].start_line, spans[t].end_line) == lines {
                    children[t].push(i);
                }
            }
        }
        open.push(i);
    }
    spans
        .iter()
        .zip(&children)
        .map(|(s, kids)| {
            // The children in order of their first line (as pushed), their
            // lines cut out of the span's.
            let mut segments = Vec::new();
            let mut at = s.start_line;
            for &k in kids {
                let c = spans[k];
                if c.start_line > at {
                    segments.push((at, c.start_line - 1));
                }
                at = at.max(c.end_line + 1);
            }
            if at <= s.end_line {
                segments.push((at, s.end_line));
            }
            segments
        })
        .collect()
}

/// A file of the repository as text (bytes that are not UTF-8 read as
/// U+FFFD), or `None` when it is missing, unreadable or too large.
fn read_source(root: &Path, file: &str) -> Option<String> {
    let path = root.join(file);
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(&path).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::words::Term;

    fn term(stem: &str, weight: f64) -> WeightedTerm {
        WeightedTerm {
            term: Term {
                stem: stem.to_string(),
                surface: stem.to_string(),
            },
            weight,
        }
    }

    #[test]
    fn the_function_whose_body_uses_the_words_scores_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("m.py"),
            "def open_file(path):\n    return read(path)\n\n\
             def retry_connect(host):\n    backoff = 1\n    while not connect(host):\n        sleep(backoff)\n",
        )
        .unwrap();
        let spans = [
            Span {
                id: "m.py-m-open_file",
                file: "m.py",
                start_line: 1,
                end_line: 2,
            },
            Span {
                id: "m.py-m-retry_connect",
                file: "m.py",
                start_line: 4,
                end_line: 7,
            },
            // Past the end of the file: clamped, not a panic.
            Span {
                id: "m.py-m-gone",
                file: "m.py",
                start_line: 40,
                end_line: 90,
            },
            Span {
                id: "missing.py-missing",
                file: "missing.py",
                start_line: 1,
                end_line: 3,
            },
        ];
        let terms = [term("backoff", 1.0), term("sleep", 1.0), term("path", 0.5)];
        let got = scores(dir.path(), &spans, &terms).words;
        let retry = &got["m.py-m-retry_connect"];
        assert_eq!(retry.terms, vec![0, 1]);
        assert!(retry.score > got["m.py-m-open_file"].score);
        assert!(!got.contains_key("m.py-m-gone"));
        assert!(!got.contains_key("missing.py-missing"));
    }

    #[test]
    fn a_container_is_scored_on_its_own_lines_not_its_members() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("c.py"),
            "import time\n\nclass Pool:\n    \"\"\"Connections kept open.\"\"\"\n\n    \
             def retry(self, host):\n        backoff = 1\n        sleep(backoff)\n\n    \
             def close(self):\n        pass\n",
        )
        .unwrap();
        let span = |id, start_line, end_line| Span {
            id,
            file: "c.py",
            start_line,
            end_line,
        };
        let spans = [
            span("c.py-c", 1, 11),
            span("c.py-c-Pool", 3, 11),
            span("c.py-c-Pool.retry", 6, 8),
            span("c.py-c-Pool.close", 10, 11),
            // The same lines as its class: beside it, not in it.
            span("c.py-c-Pool#2", 3, 11),
        ];
        let terms = [
            term("backoff", 1.0),
            term("sleep", 1.0),
            term("connect", 1.0),
        ];
        let read = scores(dir.path(), &spans, &terms);
        let got = &read.words;
        // The method's words are the method's, not its class's or module's;
        // the class has its doc's.
        assert_eq!(got["c.py-c-Pool.retry"].terms, vec![0, 1]);
        assert_eq!(got["c.py-c-Pool"].terms, vec![2]);
        assert!(!got.contains_key("c.py-c"));
        // The class keeps its own lines (its head, doc and the blank
        // lines before and between the methods), the module its import
        // and the blank line after it.
        let lines = &read.own_lines;
        assert_eq!(lines["c.py-c-Pool"], 4);
        assert_eq!(lines["c.py-c-Pool#2"], 4);
        assert_eq!(lines["c.py-c-Pool.retry"], 3);
        assert_eq!(lines["c.py-c"], 2);
    }
}
