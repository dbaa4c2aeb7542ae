//! Editor questions answered from the stored graph, in protocol-free types.
//!
//! The index knows entities with line ranges and resolved edges between
//! them, not the column of every reference. So positions are mapped in two
//! steps: the identifier under the cursor (from the editor's text) and the
//! innermost entity whose line range holds the cursor; the edges of that
//! entity say which entity the identifier denotes. Where an edge says
//! *that* an entity refers to another, the reference's columns come from
//! scanning the referring entity's own lines (not the lines of entities
//! nested in it) for the name as a whole identifier.
//!
//! Lines and columns here are 0-based; columns count UTF-16 code units, as
//! LSP's default position encoding does.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::{ServeError, Workspace};
use crate::analyse::blast;
use crate::analyse::select::{self, BaseSpec};
use crate::emit::{self, ContextError, ContextOutput, ContextRequest, Format};
use crate::graph::{self, decode_entities, Direction, EntitiesNamed, EntityRow};
use crate::model::rel::name;
use crate::store::lock::WriteLock;
use crate::store::rows::{self, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, StoreError};

query_rows! {
    /// `queries/serve_dependents.cozo`.
    ServeDependents = "serve_dependents" {
        key { node: Str<'a> }
        value { d: i64, file: Str<'a> }
    }
}

/// A range in a file of the workspace (0-based lines, UTF-16 columns).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    pub file: String,
    pub start_line: u32,
    pub start_col: u32,
    pub end_line: u32,
    pub end_col: u32,
}

/// Hover facts about one entity.
#[derive(Debug, Clone, Serialize)]
pub struct HoverInfo {
    pub key: String,
    pub kind: String,
    pub signature: String,
    pub doc: String,
    /// The language of its file (`rust`, `python`; empty for a file no
    /// language claims): the code fence's.
    pub language: &'static str,
    /// Distinct entities that depend on it within [`HOVER_HOPS`].
    pub dependents: usize,
    /// Distinct files those dependents live in.
    pub dependent_files: usize,
    /// Files changed on disk that the index could not take in yet
    /// (another process is indexing); set by the caller.
    pub stale_files: Vec<String>,
}

/// Hop depth of the hover's blast-radius summary.
pub const HOVER_HOPS: u32 = 2;

impl HoverInfo {
    /// Seed-style one-line blast-radius summary.
    pub fn blast_line(&self) -> String {
        format!(
            "{} dependent{} within {} hops, in {} file{}",
            self.dependents,
            if self.dependents == 1 { "" } else { "s" },
            HOVER_HOPS,
            self.dependent_files,
            if self.dependent_files == 1 { "" } else { "s" }
        )
    }

    /// Markdown for an editor's hover popup.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        if !self.signature.is_empty() {
            s.push_str("```");
            s.push_str(self.language);
            s.push('\n');
            s.push_str(&self.signature);
            s.push_str("\n```\n\n");
        }
        if !self.doc.is_empty() {
            s.push_str(&self.doc);
            s.push_str("\n\n");
        }
        s.push_str("---\n");
        s.push_str(&format!("`{}` · {}", self.key, self.blast_line()));
        if !self.stale_files.is_empty() {
            s.push_str(&format!(
                "\n\nIndex behind for: {} (another process is indexing)",
                self.stale_files.join(", ")
            ));
        }
        s
    }
}

/// A call-hierarchy neighbour and where the calls are.
#[derive(Debug, Clone, Serialize)]
pub struct CallSite {
    pub entity: EntityRow,
    /// Ranges of the calls: in the caller's text for incoming calls, in
    /// the requested entity's text for outgoing ones.
    pub ranges: Vec<Span>,
}

/// The identifier at a column of a line (UTF-16 column), with its range.
pub fn ident_at(line: &str, col: u32) -> Option<(String, u32, u32)> {
    let chars: Vec<(u32, char)> = {
        let mut u = 0u32;
        line.chars()
            .map(|c| {
                let at = u;
                u += c.len_utf16() as u32;
                (at, c)
            })
            .collect()
    };
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    // The char at the cursor, or the one before it (cursor after a word).
    let mut idx = chars
        .iter()
        .position(|(u, c)| *u <= col && col < *u + c.len_utf16() as u32);
    if !idx.is_some_and(|i| is_ident(chars[i].1)) {
        idx = chars
            .iter()
            .position(|(u, c)| *u + c.len_utf16() as u32 == col)
            .filter(|&i| is_ident(chars[i].1));
    }
    let i = idx?;
    let mut s = i;
    while s > 0 && is_ident(chars[s - 1].1) {
        s -= 1;
    }
    let mut e = i;
    while e + 1 < chars.len() && is_ident(chars[e + 1].1) {
        e += 1;
    }
    let word: String = chars[s..=e].iter().map(|(_, c)| *c).collect();
    if word.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    let end = chars[e].0 + chars[e].1.len_utf16() as u32;
    Some((word, chars[s].0, end))
}

/// Whole-identifier occurrences of `word` in `line`, as UTF-16 column ranges.
pub fn occurrences(line: &str, word: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    if word.is_empty() {
        return out;
    }
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(pos) = line[from..].find(word) {
        let start = from + pos;
        let end = start + word.len();
        let before = line[..start].chars().next_back();
        let after = line[end..].chars().next();
        if !before.is_some_and(is_ident) && !after.is_some_and(is_ident) {
            let c0 = line[..start].encode_utf16().count() as u32;
            let c1 = c0 + word.encode_utf16().count() as u32;
            out.push((c0, c1));
        }
        from = end;
    }
    out
}

/// The span of an entity's first line (the name is searched there).
fn decl_span(e: &EntityRow, text: Option<&str>) -> Span {
    let line0 = (e.start_line.max(1) - 1) as usize;
    decl_span_from(e, text.map(|t| t.lines().skip(line0)))
}

/// [`decl_span`] given the file's lines from the entity's first line on
/// (`None` when the file cannot be read): for the entities of one file,
/// whose lines are split once instead of skipped to for each.
fn decl_span_from<'t>(e: &EntityRow, lines: Option<impl Iterator<Item = &'t str>>) -> Span {
    let line0 = (e.start_line.max(1) - 1) as u32;
    let end0 = (e.end_line.max(e.start_line).max(1) - 1) as u32;
    if let Some(lines) = lines {
        // The name on the first line of the entity that has it (attributes
        // and doc comments may come first).
        for (i, l) in lines.take((end0 - line0 + 1).min(20) as usize).enumerate() {
            if let Some((c0, c1)) = occurrences(l, &e.name).first() {
                let line = line0 + i as u32;
                return Span {
                    file: e.file.clone(),
                    start_line: line,
                    start_col: *c0,
                    end_line: line,
                    end_col: *c1,
                };
            }
        }
    }
    Span {
        file: e.file.clone(),
        start_line: line0,
        start_col: 0,
        end_line: line0,
        end_col: 0,
    }
}

/// The whole line range of an entity.
pub fn full_span(e: &EntityRow) -> Span {
    let line0 = (e.start_line.max(1) - 1) as u32;
    let end0 = (e.end_line.max(e.start_line).max(1) - 1) as u32;
    Span {
        file: e.file.clone(),
        start_line: line0,
        start_col: 0,
        end_line: end0 + 1,
        end_col: 0,
    }
}

impl Workspace {
    /// Entities declared in a file, in source order: from the interfaces
    /// this server holds when they are the store's (a large generated
    /// file's thousands of rows are not joined again after every save),
    /// else from the store.
    pub fn entities_in_file(&self, rel: &str) -> Result<Vec<EntityRow>, ServeError> {
        if let Some(held) = self.held_entities_of(rel)? {
            return Ok(held);
        }
        self.stored_entities_in_file(rel)
    }

    /// [`Workspace::entities_in_file`] read from the store.
    pub fn stored_entities_in_file(&self, rel: &str) -> Result<Vec<EntityRow>, ServeError> {
        let rows = self.store.read(
            queries::SERVE_ENTITIES_IN_FILE,
            Params::new()
                .with("graph", self.graph.as_str())
                .with("file", rel),
        )?;
        Ok(decode_entities(&rows)?)
    }

    /// Kind, name, file and lines of the given keys (missing keys are left out).
    pub fn entities_by_keys(&self, keys: &[String]) -> Result<Vec<EntityRow>, ServeError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self.store.read(
            queries::SERVE_ENTITIES_BY_KEYS,
            Params::new()
                .with("graph", self.graph.as_str())
                .with("keys", str_list(keys)),
        )?;
        Ok(decode_entities(&rows)?)
    }

    pub fn entity(&self, key: &str) -> Result<Option<EntityRow>, ServeError> {
        Ok(self
            .entities_by_keys(&[key.to_string()])?
            .into_iter()
            .next())
    }

    /// The innermost entity whose line range holds `line` (0-based).
    pub fn entity_at(&self, rel: &str, line: u32) -> Result<Option<EntityRow>, ServeError> {
        let l = line as i64 + 1;
        Ok(self
            .entities_in_file(rel)?
            .into_iter()
            .filter(|e| e.start_line <= l && l <= e.end_line)
            .min_by_key(|e| (e.end_line - e.start_line, -e.start_line)))
    }

    /// The entities the identifier at (`line`, `col`) of `rel` denotes:
    /// the declaration under the cursor, else the targets of the enclosing
    /// entity's edges with that name, else every entity of that name
    /// (those of the same file first). `text` is the editor's text of the
    /// file (read from disk when `None`).
    pub fn definition(
        &self,
        rel: &str,
        line: u32,
        col: u32,
        text: Option<&str>,
    ) -> Result<Vec<EntityRow>, ServeError> {
        let owned;
        let text = match text {
            Some(t) => t,
            None => {
                owned = std::fs::read_to_string(self.absolute(rel)).unwrap_or_default();
                &owned
            }
        };
        let Some(line_text) = text.lines().nth(line as usize) else {
            return Ok(Vec::new());
        };
        let Some((word, _, _)) = ident_at(line_text, col) else {
            return Ok(Vec::new());
        };
        let in_file = self.entities_in_file(rel)?;
        let l = line as i64 + 1;
        let mut enclosing: Vec<&EntityRow> = in_file
            .iter()
            .filter(|e| e.start_line <= l && l <= e.end_line)
            .collect();
        enclosing.sort_by_key(|e| (e.end_line - e.start_line, -e.start_line));
        // A declaration: the cursor is on the name on an entity's first line
        // that carries it.
        for e in &enclosing {
            if e.name == word && decl_span(e, Some(text)).start_line == line {
                return Ok(vec![(*e).clone()]);
            }
        }
        // Targets of the innermost entity's edges (then of its parents).
        for e in &enclosing {
            let edges = graph::edges_of(&self.store, &self.graph, &e.key, Direction::Out)?;
            let dsts: Vec<String> = edges
                .iter()
                .map(|x| x.dst.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let hits: Vec<EntityRow> = self
                .entities_by_keys(&dsts)?
                .into_iter()
                .filter(|d| d.name == word)
                .collect();
            if !hits.is_empty() {
                return Ok(hits);
            }
        }
        // By name.
        let rows = self.store.read(
            queries::ENTITIES_NAMED,
            Params::new()
                .with("graph", self.graph.as_str())
                .with("name", word.as_str()),
        )?;
        let keys: Vec<String> = rows::decode_rows::<EntitiesNamed>(&rows)
            .map_err(StoreError::from)?
            .into_iter()
            .map(|r| r.id.into_owned())
            .collect();
        let mut named = self.entities_by_keys(&keys)?;
        named.sort_by_key(|e| (e.file != rel, e.file.clone(), e.start_line));
        Ok(named)
    }

    /// Where an entity's declaration name is.
    pub fn declaration_span(&self, e: &EntityRow) -> Span {
        let text = std::fs::read_to_string(self.absolute(&e.file)).ok();
        decl_span(e, text.as_deref())
    }

    /// [`Workspace::declaration_span`] of entities of one file, reading
    /// the file once.
    pub fn declaration_spans(&self, file: &str, entities: &[EntityRow]) -> Vec<Span> {
        let text = std::fs::read_to_string(self.absolute(file)).ok();
        let lines: Option<Vec<&str>> = text.as_deref().map(|t| t.lines().collect());
        entities
            .iter()
            .map(|e| {
                let line0 = (e.start_line.max(1) - 1) as usize;
                let from = lines
                    .as_deref()
                    .map(|l| l.get(line0..).unwrap_or_default().iter().copied());
                decl_span_from(e, from)
            })
            .collect()
    }

    /// Places that refer to `key`: for every entity with an edge into it
    /// (other than `contains`), the occurrences of its name in that entity's
    /// own lines, or the entity's first line when the name is not spelled
    /// there (a rename, a macro). Sorted by file and position.
    pub fn references(
        &self,
        key: &str,
        include_declaration: bool,
    ) -> Result<Vec<Span>, ServeError> {
        let Some(target) = self.entity(key)? else {
            return Ok(Vec::new());
        };
        let edges = graph::edges_of(&self.store, &self.graph, key, Direction::In)?;
        let srcs: Vec<String> = edges
            .iter()
            .filter(|e| e.rel != name::CONTAINS)
            .map(|e| e.src.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let referrers = self.entities_by_keys(&srcs)?;
        let mut out: BTreeSet<Span> = BTreeSet::new();
        let mut files = FileCache::default();
        files.preload(
            self,
            &referrers
                .iter()
                .map(|e| e.file.as_str())
                .collect::<Vec<_>>(),
        )?;
        for src in &referrers {
            for s in self.spans_in_own_lines(src, &target.name, &mut files)? {
                out.insert(s);
            }
        }
        if include_declaration {
            out.insert(decl_span(&target, files.get(self, &target.file)));
        }
        Ok(out.into_iter().collect())
    }

    /// Occurrences of `name` in the lines of `e` not covered by entities
    /// nested in it; its first line when there are none.
    fn spans_in_own_lines(
        &self,
        e: &EntityRow,
        name: &str,
        files: &mut FileCache,
    ) -> Result<Vec<Span>, ServeError> {
        let nested: Vec<(i64, i64)> = files
            .entities(self, &e.file)?
            .iter()
            .filter(|n| {
                n.key != e.key
                    && n.start_line >= e.start_line
                    && n.end_line <= e.end_line
                    && (n.start_line, n.end_line) != (e.start_line, e.end_line)
            })
            .map(|n| (n.start_line, n.end_line))
            .collect();
        let mut out = Vec::new();
        if let Some(text) = files.get(self, &e.file) {
            for (i, l) in text
                .lines()
                .enumerate()
                .skip((e.start_line.max(1) - 1) as usize)
                .take((e.end_line - e.start_line + 1).max(1) as usize)
            {
                let ln = i as i64 + 1;
                if nested.iter().any(|(s, t)| *s <= ln && ln <= *t) {
                    continue;
                }
                for (c0, c1) in occurrences(l, name) {
                    out.push(Span {
                        file: e.file.clone(),
                        start_line: i as u32,
                        start_col: c0,
                        end_line: i as u32,
                        end_col: c1,
                    });
                }
            }
        }
        if out.is_empty() {
            out.push(decl_span(e, files.get(self, &e.file)));
        }
        Ok(out)
    }

    /// Hover facts for an entity; `None` when the key does not exist.
    pub fn hover(&self, key: &str) -> Result<Option<HoverInfo>, ServeError> {
        let Some(d) = graph::details_of(&self.store, &self.graph, [key])?
            .into_iter()
            .next()
        else {
            return Ok(None);
        };
        let (dependents, dependent_files) = self.dependents(key, HOVER_HOPS)?;
        Ok(Some(HoverInfo {
            key: d.key.clone(),
            kind: d.kind.clone(),
            signature: d.head(),
            doc: d.doc.clone(),
            language: crate::index::languages::of_file(&d.file).map_or("", |l| l.name()),
            dependents,
            dependent_files,
            stale_files: Vec::new(),
        }))
    }

    /// How many distinct entities depend on `key` within `hops`, and in
    /// how many distinct files they are.
    pub fn dependents(&self, key: &str, hops: u32) -> Result<(usize, usize), ServeError> {
        let rows = self.store.read(
            queries::SERVE_DEPENDENTS,
            Params::new()
                .with("graph", self.graph.as_str())
                .with("bases", str_list([key]))
                .with("hops", hops.min(blast::MAX_HOPS) as i64),
        )?;
        let mut keys = BTreeSet::new();
        let mut files = BTreeSet::new();
        for r in rows::decode_rows::<ServeDependents>(&rows).map_err(StoreError::from)? {
            keys.insert(r.node.into_owned());
            files.insert(r.file.into_owned());
        }
        Ok((keys.len(), files.len()))
    }

    /// Every entity (cached while the graph's seq is unchanged).
    pub fn all_symbols(&self) -> Result<Arc<Vec<EntityRow>>, ServeError> {
        let seq = self.seq()?;
        if let Some((s, table)) = self.symbols.lock().ok().and_then(|g| g.clone()) {
            if s == seq {
                return Ok(table);
            }
        }
        let rows = self.store.read(
            queries::SERVE_ALL_SYMBOLS,
            Params::new().with("graph", self.graph.as_str()),
        )?;
        let table: Arc<Vec<EntityRow>> = Arc::new(decode_entities(&rows)?);
        if let Ok(mut g) = self.symbols.lock() {
            *g = Some((seq, table.clone()));
        }
        Ok(table)
    }

    /// The graph's change sequence number (0 before the first index run).
    pub fn seq(&self) -> Result<i64, ServeError> {
        Ok(self.store.graph_seq(&self.graph)?)
    }

    /// Entities whose name matches `query` fuzzily (case-insensitive
    /// subsequence), best first: exact, prefix, substring, then tighter
    /// subsequences; ties by shorter name, then key. An empty query lists
    /// entities in key order.
    pub fn workspace_symbols(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<EntityRow>, ServeError> {
        let table = self.all_symbols()?;
        let q: Vec<char> = query.to_lowercase().chars().collect();
        let mut scored: Vec<(u32, &EntityRow)> = table
            .iter()
            .filter(|e| e.kind != "impl")
            .filter_map(|e| fuzzy_score(&q, &e.name).map(|s| (s, e)))
            .collect();
        scored.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| a.1.name.len().cmp(&b.1.name.len()))
                .then_with(|| a.1.key.cmp(&b.1.key))
        });
        Ok(scored
            .into_iter()
            .take(limit)
            .map(|(_, e)| e.clone())
            .collect())
    }

    /// Callers of `key` with the call sites in each caller.
    pub fn incoming_calls(&self, key: &str) -> Result<Vec<CallSite>, ServeError> {
        let Some(target) = self.entity(key)? else {
            return Ok(Vec::new());
        };
        let links = blast::callers(&self.store, &self.graph, key)?;
        let keys = distinct_keys(&links);
        let mut files = FileCache::default();
        let callers = self.entities_by_keys(&keys)?;
        files.preload(
            self,
            &callers.iter().map(|e| e.file.as_str()).collect::<Vec<_>>(),
        )?;
        let mut out = Vec::new();
        for caller in callers {
            let ranges = self.spans_in_own_lines(&caller, &target.name, &mut files)?;
            out.push(CallSite {
                entity: caller,
                ranges,
            });
        }
        out.sort_by(|a, b| a.entity.key.cmp(&b.entity.key));
        Ok(out)
    }

    /// Callees of `key` with the call sites in `key`'s own text.
    pub fn outgoing_calls(&self, key: &str) -> Result<Vec<CallSite>, ServeError> {
        let Some(source) = self.entity(key)? else {
            return Ok(Vec::new());
        };
        let links = blast::callees(&self.store, &self.graph, key)?;
        let keys = distinct_keys(&links);
        let mut files = FileCache::default();
        let mut out = Vec::new();
        for callee in self.entities_by_keys(&keys)? {
            let ranges = self.spans_in_own_lines(&source, &callee.name, &mut files)?;
            out.push(CallSite {
                entity: callee,
                ranges,
            });
        }
        out.sort_by(|a, b| a.entity.key.cmp(&b.entity.key));
        Ok(out)
    }

    /// A context document (seed 004 JSON or Format E) around `base`,
    /// cached by graph seq like the CLI's (written only when no other
    /// process is writing).
    pub fn context(
        &self,
        base: BaseSpec,
        hops: u32,
        budget: usize,
        format: Format,
    ) -> Result<ContextOutput, ServeError> {
        if hops > blast::MAX_HOPS {
            return Err(ServeError::BadRequest(format!(
                "hops must be between 0 and {}, got {hops}",
                blast::MAX_HOPS
            )));
        }
        if budget == 0 {
            return Err(ServeError::BadRequest(
                "budget must be a positive number of tokens".into(),
            ));
        }
        let mut req = ContextRequest::new(&self.graph, base);
        req.stale_files = self.ensure_current()?;
        req.hops = hops;
        req.budget = budget;
        req.format = format;
        let lock = WriteLock::try_acquire(self.store.location()).ok();
        let out = emit::cached_context(&self.store, &req, &self.counter, lock.is_some());
        drop(lock);
        Ok(out?)
    }

    /// An `entity_not_found` error (seed 004) for a key, with suggestions.
    pub fn not_found(&self, key: &str) -> ServeError {
        let suggestions =
            select::suggest(&self.store, &self.graph, &[key.to_string()]).unwrap_or_default();
        ServeError::Context(ContextError::EntityNotFound {
            missing: vec![key.to_string()],
            suggestions,
            message: "Base entity not found in codebase".into(),
        })
    }
}

/// Lower is better; `None` when `query` is not a subsequence of `name`.
pub fn fuzzy_score(query: &[char], name: &str) -> Option<u32> {
    if query.is_empty() {
        return Some(1000);
    }
    let lower: Vec<char> = name.to_lowercase().chars().collect();
    let q: String = query.iter().collect();
    let l: String = lower.iter().collect();
    if l == q {
        return Some(0);
    }
    if l.starts_with(&q) {
        return Some(1);
    }
    if l.contains(&q) {
        return Some(2);
    }
    // Subsequence: score by the span it covers (tighter is better).
    let mut qi = 0;
    let mut first = None;
    let mut last = 0;
    for (i, c) in lower.iter().enumerate() {
        if qi < query.len() && *c == query[qi] {
            first.get_or_insert(i);
            last = i;
            qi += 1;
        }
    }
    if qi < query.len() {
        return None;
    }
    let span = (last - first.unwrap_or(0) + 1) as u32;
    Some(10 + span - query.len() as u32)
}

/// File texts and entity lists read during one request.
#[derive(Default)]
struct FileCache {
    texts: HashMap<String, Option<String>>,
    entities: BTreeMap<String, Vec<EntityRow>>,
}

impl FileCache {
    fn get(&mut self, ws: &Workspace, rel: &str) -> Option<&str> {
        self.texts
            .entry(rel.to_string())
            .or_insert_with(|| std::fs::read_to_string(ws.absolute(rel)).ok())
            .as_deref()
    }

    /// Load the entities of all `files` not loaded yet, in one query.
    fn preload(&mut self, ws: &Workspace, files: &[&str]) -> Result<(), ServeError> {
        let missing: Vec<&str> = files
            .iter()
            .copied()
            .filter(|f| !self.entities.contains_key(*f))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let rows = ws.store.read(
            queries::SERVE_ENTITIES_IN_FILES,
            Params::new()
                .with("graph", ws.graph.as_str())
                .with("files", str_list(&missing)),
        )?;
        for f in &missing {
            self.entities.insert(f.to_string(), Vec::new());
        }
        for e in decode_entities(&rows)? {
            if let Some(list) = self.entities.get_mut(&e.file) {
                list.push(e);
            }
        }
        Ok(())
    }

    fn entities(&mut self, ws: &Workspace, rel: &str) -> Result<&Vec<EntityRow>, ServeError> {
        if !self.entities.contains_key(rel) {
            let e = ws.entities_in_file(rel)?;
            self.entities.insert(rel.to_string(), e);
        }
        Ok(&self.entities[rel])
    }
}

/// Format from its wire name (`json` or `e`).
pub fn parse_format(s: &str) -> Result<Format, ServeError> {
    match s.to_ascii_lowercase().as_str() {
        "json" => Ok(Format::Json),
        "e" | "format_e" => Ok(Format::E),
        other => Err(ServeError::BadRequest(format!(
            "unknown format '{other}' (expected \"json\" or \"e\")"
        ))),
    }
}

/// The keys of call links, each once, sorted.
fn distinct_keys(links: &[blast::CallLink]) -> Vec<String> {
    links
        .iter()
        .map(|l| l.key.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}
