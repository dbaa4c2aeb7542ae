//! A file's links taken from the ones it stored, instead of resolved
//! again, when an edit changed nothing resolution reads of it.
//!
//! Resolution is a function of a file's extract and the symbol table,
//! and a reference's line is read only to note where an unresolved
//! reference first occurs (see [`LinksBuilder`](super::links)). So when
//! no interface changed anywhere (the table is the one the stored links
//! were resolved against) and an edited file's extract differs from its
//! stored one in lines alone (a comment, blank lines, a literal, code
//! moved down), its links are the stored ones with those first lines
//! moved. A command-line run then needs no other file's interface and no
//! symbol table: on a large tree those are nearly all of its cost.
//!
//! Both halves are checked, not assumed: the extracts are compared field
//! by field with every line left out, and the links read back from the
//! stored rows must have the digest the file's row holds; otherwise the
//! file is resolved as before.

use std::collections::BTreeMap;

use crate::model::rel::Rel;
use crate::model::FileExtract;

use super::links::{FileLinks, AMBIGUOUS_MARK};

/// Where each line of a file's references went in an edit: old line →
/// new line, for the lines a reference or `use` is on.
#[derive(Debug, PartialEq, Eq)]
pub struct LineMap(Vec<(u32, u32)>);

impl LineMap {
    /// The new line of a line some reference was on.
    pub fn get(&self, old: u32) -> Option<u32> {
        self.0
            .binary_search_by_key(&old, |&(o, _)| o)
            .ok()
            .map(|i| self.0[i].1)
    }
}

/// How `before` became `now` when they differ in lines alone (entity
/// spans, reference and `use` lines, and doc comments, which resolution
/// does not read): where each reference's line went. `None` when anything
/// else differs, or the lines did not keep their order (the first line
/// of a group of references could then be another one's).
pub fn lines_moved(before: &FileExtract, now: &FileExtract) -> Option<LineMap> {
    if without_lines(before) != without_lines(now) {
        return None;
    }
    let refs = before
        .refs
        .iter()
        .zip(&now.refs)
        .map(|(a, b)| (a.line, b.line));
    let uses = before
        .uses
        .iter()
        .zip(&now.uses)
        .map(|(a, b)| (a.line, b.line));
    let mut pairs: Vec<(u32, u32)> = refs.chain(uses).collect();
    pairs.sort_unstable();
    pairs.dedup();
    // One new line per old line, in the same order.
    let ordered = pairs
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1);
    ordered.then_some(LineMap(pairs))
}

/// An extract with every line (and doc comment) blanked, and what a parse
/// adds that is never stored (the texts for the text index).
fn without_lines(extract: &FileExtract) -> FileExtract {
    let mut e = extract.clone();
    e.texts.clear();
    e.language = Default::default();
    for entity in &mut e.entities {
        entity.start_line = 0;
        entity.end_line = 0;
        entity.doc.clear();
    }
    for r in &mut e.refs {
        r.line = 0;
    }
    for u in &mut e.uses {
        u.line = 0;
    }
    e
}

/// A file's links as its stored rows hold them, owned: the edges of its
/// edge list and its unresolved-reference rows.
#[derive(Debug, Default)]
pub struct StoredLinks {
    edges: Vec<(String, &'static str, String, u32)>,
    unresolved: BTreeMap<(String, &'static str, String), (u32, u32, u32)>,
}

impl StoredLinks {
    /// From a file's stored edges (`(src, rel, dst)` → weight) and its
    /// unresolved rows (`src` and its `[[rel, text, line, count], …]`).
    /// `None` for a row this version would not have written.
    pub fn from_rows<'r>(
        edges: &BTreeMap<(String, String, String), f64>,
        unresolved: impl Iterator<Item = (&'r str, &'r serde_json::Value)>,
    ) -> Option<StoredLinks> {
        let mut links = StoredLinks::default();
        for ((src, rel, dst), weight) in edges {
            if weight.fract() != 0.0 || *weight < 1.0 || *weight > u32::MAX as f64 {
                return None;
            }
            links
                .edges
                .push((src.clone(), rel_name(rel)?, dst.clone(), *weight as u32));
        }
        for (src, refs) in unresolved {
            for r in refs.as_array()? {
                let [rel, text, line, count] = r.as_array()?.as_slice() else {
                    return None;
                };
                let (text, candidates) = unmarked(text.as_str()?)?;
                let line = u32::try_from(line.as_u64()?).ok()?;
                let count = u32::try_from(count.as_u64()?).ok()?;
                let key = (src.to_string(), rel_name(rel.as_str()?)?, text);
                if links
                    .unresolved
                    .insert(key, (line, count, candidates))
                    .is_some()
                {
                    return None;
                }
            }
        }
        Some(links)
    }

    /// The links, borrowing their keys from these.
    pub fn links(&self) -> FileLinks<'_> {
        FileLinks {
            edges: self
                .edges
                .iter()
                .map(|(s, r, d, w)| ((s.as_str(), *r, d.as_str()), *w))
                .collect(),
            unresolved: self
                .unresolved
                .iter()
                .map(|((s, r, t), v)| ((s.as_str(), *r, t.clone()), *v))
                .collect(),
        }
    }

    /// The same links after an edit that moved lines as `map` says: each
    /// unresolved reference's first line moved with it. `None` when a
    /// stored line is none of the old lines a reference was on.
    pub fn relined(mut self, map: &LineMap) -> Option<StoredLinks> {
        for (line, _, _) in self.unresolved.values_mut() {
            *line = map.get(*line)?;
        }
        Some(self)
    }
}

/// A relation's name as the links hold it.
fn rel_name(name: &str) -> Option<&'static str> {
    Rel::from_name(name).map(Rel::name)
}

/// An unresolved reference's stored text without the note an ambiguous
/// one carries (`.fmt() (ambiguous: 2 candidates)`), and its number of
/// candidates (0 without the note).
fn unmarked(text: &str) -> Option<(String, u32)> {
    let Some(at) = text.rfind(&format!(" {AMBIGUOUS_MARK}")) else {
        return Some((text.to_string(), 0));
    };
    let note = &text[at + 1 + AMBIGUOUS_MARK.len()..];
    let n: u32 = note.strip_suffix(" candidates)")?.parse().ok()?;
    (n > 1).then(|| (text[..at].to_string(), n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::links::LinksBuilder;

    #[test]
    fn an_ambiguous_note_is_read_back_and_plain_text_kept() {
        assert_eq!(
            unmarked(".fmt() (ambiguous: 2 candidates)"),
            Some((".fmt()".into(), 2))
        );
        assert_eq!(unmarked("a::b"), Some(("a::b".into(), 0)));
        assert_eq!(unmarked("x (ambiguous: many candidates)"), None);
    }

    #[test]
    fn stored_rows_read_back_to_the_links_that_wrote_them() {
        let mut b = LinksBuilder::default();
        b.edge("f-a", "calls", "g-b");
        b.edge("f-a", "calls", "g-b");
        b.unresolved("f-a", "calls", "missing".into(), 7);
        b.ambiguous("f-a", "calls", ".fmt()".into(), 9, 3);
        let links = b.seal();
        let edges: BTreeMap<(String, String, String), f64> = links
            .edges
            .iter()
            .map(|((s, r, d), w)| ((s.to_string(), r.to_string(), d.to_string()), *w as f64))
            .collect();
        let row = serde_json::json!([
            ["calls", ".fmt() (ambiguous: 3 candidates)", 9, 1],
            ["calls", "missing", 7, 1]
        ]);
        let stored = StoredLinks::from_rows(&edges, [("f-a", &row)].into_iter()).unwrap();
        assert_eq!(stored.links(), links);
        assert_eq!(stored.links().digest(), links.digest());
        let moved = stored
            .relined(&LineMap(vec![(7, 8), (9, 10)]))
            .expect("both lines are mapped");
        let lines: Vec<u32> = moved.links().unresolved.iter().map(|(_, v)| v.0).collect();
        assert_eq!(lines, [10, 8]);
    }
}
