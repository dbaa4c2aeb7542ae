//! The write half of an index run: the rows that differ between what is
//! stored and what this run parsed and resolved — entities, links
//! (edges and unresolved references), usage summaries, file rows and
//! stored extracts — staged as typed rows in the run's one batch.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::file_edges;
use super::lang::{Language, Stored};
use super::links::FileLinks;
use super::state::StoredFile;
use super::usage;
use super::walk::SourceFile;
use super::{languages, names};
use crate::model::rel::name::TESTS;
use crate::model::{Entity, FileContext, FileExtract};
use crate::store::rows::{
    decode_rows, query_rows, Bytes, CodeEntityRow, CodeExtractRow, CodeFileEdgesRow,
    CodeFileEntitiesRow, CodeFileRow, CodeInterfaceRow, CodeNamesRow, CodeUnresolvedRow,
    CodeUsageRow, CodeUsageVersionRow, EdgeRow, Json, NodeRow, Str,
};
use crate::store::value::str_list;
use crate::store::{queries, Batch, Params, Store, StoreError};
use cozo::NamedRows;

query_rows! {
    /// `queries/entity_rows_in_files.cozo`.
    EntityRowsInFiles = "entity_rows_in_files" {
        key { id: Str<'a> }
        value {
            kind: Str<'a>,
            name: Str<'a>,
            doc: Str<'a>,
            file: Str<'a>,
            package: Str<'a>,
            module_path: Vec<Str<'a>>,
            visibility: Str<'a>,
            start_line: i64,
            end_line: i64,
            signature: Json<'a>,
            is_test: bool,
            owner: Option<Str<'a>>,
            trait_name: Option<Str<'a>>,
            parent: Option<Str<'a>>,
        }
    }
    /// `queries/file_edges_of.cozo`.
    FileEdgesOf = "file_edges_of" {
        key { file: Str<'a> }
        value { edges: Bytes<'a> }
    }
    /// `queries/edges_of_origins_scan.cozo`.
    EdgesOfOriginsScan = "edges_of_origins_scan" {
        key { src: Str<'a>, rel: Str<'a>, dst: Str<'a>, origin: Str<'a> }
        value { weight: f64 }
    }
    /// `queries/unresolved_from_origins.cozo`.
    UnresolvedFromOrigins = "unresolved_from_origins" {
        key { origin: Str<'a>, src: Str<'a> }
        value { refs: Json<'a> }
    }
}

/// Store an extract: its interface and its other references apart (see
/// [`super::lang::Language::encode`]), so a run that resolves only edited files reads the
/// interfaces of the rest and nothing else, and the names it mentions.
/// `stored` is the language's encoding of the whole extract, `names`
/// [`names::encode`] of what it mentions.
pub(super) fn put_extract(
    batch: &mut Batch,
    graph: &str,
    path: &str,
    stored: Stored,
    names: Vec<u8>,
) {
    let Stored { iface, body } = stored;
    batch.put_row(CodeInterfaceRow {
        graph: graph.into(),
        path: path.into(),
        data: iface.into(),
    });
    batch.put_row(CodeExtractRow {
        graph: graph.into(),
        path: path.into(),
        data: body.into(),
    });
    batch.put_row(CodeNamesRow {
        graph: graph.into(),
        path: path.into(),
        names: names.into(),
    });
}

/// Store the names a whole extract mentions (see [`names`]).
pub(super) fn put_names(batch: &mut Batch, graph: &str, path: &str, extract: &FileExtract) {
    batch.put_row(CodeNamesRow {
        graph: graph.into(),
        path: path.into(),
        names: names::encode(&languages::get(extract.language).mentioned(extract)).into(),
    });
}

/// An entity as it was before a run: its stored rows, or the entity the
/// last run in this process held (its interface).
enum OldEntity<'a> {
    Stored(Box<(NodeRow<'a>, CodeEntityRow<'a>)>),
    Held {
        entity: &'a Entity,
        package: &'a str,
    },
}

impl OldEntity<'_> {
    /// The file that declared it.
    fn file(&self) -> &str {
        match self {
            OldEntity::Stored(rows) => rows.1.file.as_ref(),
            OldEntity::Held { entity, .. } => entity.file.as_ref(),
        }
    }
}

/// What a run changed of one entity: which of its rows to put, and
/// whether its usage (`facts`: kind, file, test flag) follows. (Its text
/// rows follow its file: a body's literals are words too, see
/// `text::write`.)
struct EntityChange {
    node: bool,
    row: bool,
    facts: bool,
}

/// The `node` and `code_entity` rows of an entity.
pub(super) fn entity_rows<'a>(
    graph: &'a str,
    package: &'a str,
    e: &'a Entity,
) -> (NodeRow<'a>, CodeEntityRow<'a>) {
    (
        NodeRow {
            graph: graph.into(),
            id: e.key.as_ref().into(),
            kind: e.kind.as_str().into(),
            name: e.name.as_str().into(),
            doc: e.doc.as_str().into(),
        },
        CodeEntityRow {
            graph: graph.into(),
            id: e.key.as_ref().into(),
            file: e.file.as_ref().into(),
            package: package.into(),
            module_path: e.module_path.iter().map(|m| m.as_str().into()).collect(),
            visibility: e.visibility.as_str().into(),
            start_line: e.start_line as i64,
            end_line: e.end_line as i64,
            signature: Cow::Owned(serde_json::to_value(&e.signature).unwrap_or_default()),
            is_test: e.is_test,
            owner: e.owner.as_deref().map(Cow::Borrowed),
            trait_name: e.trait_name.as_deref().map(Cow::Borrowed),
            parent: e.parent.as_deref().map(Cow::Borrowed),
        },
    )
}

/// The stored rows of an entity, as `queries/entity_rows_in_files.cozo`
/// returns them.
pub(super) fn stored_entity_rows<'a>(
    graph: &'a str,
    r: EntityRowsInFiles<'a>,
) -> (NodeRow<'a>, CodeEntityRow<'a>) {
    (
        NodeRow {
            graph: graph.into(),
            id: r.id.clone(),
            kind: r.kind,
            name: r.name,
            doc: r.doc,
        },
        CodeEntityRow {
            graph: graph.into(),
            id: r.id,
            file: r.file,
            package: r.package,
            module_path: r.module_path,
            visibility: r.visibility,
            start_line: r.start_line,
            end_line: r.end_line,
            signature: r.signature,
            is_test: r.is_test,
            owner: r.owner,
            trait_name: r.trait_name,
            parent: r.parent,
        },
    )
}

/// What [`write_entities`] changed.
pub(super) struct EntitiesWritten {
    /// Entities whose usage row may change: appeared, went, or
    /// changed kind, file or test flag (the facts a usage row holds
    /// besides its edges). An entity whose lines moved is not among them.
    pub facts_changed: BTreeSet<String>,
    /// Entities now minus entities before.
    pub entities_delta: i64,
}

/// The extracts of a run, and the stored interfaces of the files parsed
/// now as the last run left them.
#[derive(Clone, Copy)]
pub(super) struct ExtractsNowAndBefore<'a> {
    pub now: &'a BTreeMap<String, (FileContext, FileExtract)>,
    pub before: &'a BTreeMap<String, FileExtract>,
}

/// What follows `{file}-` in an entity key of `file` (every key starts
/// so, see [`super::keys`]): what `code_file_entities` lists.
fn key_tail<'k>(file: &str, key: &'k str) -> Option<&'k str> {
    key.strip_prefix(file)?.strip_prefix('-')
}

/// The tails of a file's entity keys as `code_file_entities` holds them:
/// sorted, each once.
fn sorted_tails<'k>(file: &str, keys: impl Iterator<Item = &'k str>) -> Vec<&'k str> {
    let mut tails: Vec<&str> = keys.filter_map(|k| key_tail(file, k)).collect();
    tails.sort_unstable();
    tails.dedup();
    tails
}

/// Tails a `code_file_entities` row holds at most (schema 22): CozoDB
/// copies a row's whole list for every element a query unnests from it,
/// so listing a file's entities costs the square of its longest list.
const TAILS_PER_ROW: usize = 64;

/// Put the `code_file_entities` rows of a file whose entities now differ
/// from those before: its sorted tails in parts of [`TAILS_PER_ROW`],
/// each keyed by its first tail. A part unchanged is not put again; a
/// part no longer there is deleted (a file that declares nothing has no
/// rows).
fn write_file_entities(batch: &mut Batch, graph: &str, file: &str, before: &[&str], now: &[&str]) {
    if before == now {
        return;
    }
    let (old, new) = (parts_by_first(before), parts_by_first(now));
    for first in old.keys().filter(|first| !new.contains_key(*first)) {
        batch.delete_key::<CodeFileEntitiesRow>(vec![graph.into(), file.into(), (*first).into()]);
    }
    for (first, tails) in new {
        if old.get(first) == Some(&tails) {
            continue;
        }
        batch.put_row(CodeFileEntitiesRow {
            graph: graph.into(),
            file: file.into(),
            first_tail: first.into(),
            tails: tails.iter().map(|t| (*t).into()).collect(),
        });
    }
}

/// Sorted tails cut into `code_file_entities` parts, by their first tail.
fn parts_by_first<'t>(tails: &'t [&'t str]) -> BTreeMap<&'t str, &'t [&'t str]> {
    tails
        .chunks(TAILS_PER_ROW)
        .map(|part| (part[0], part))
        .collect()
}

/// Write the entities of re-parsed, skipped and deleted files: only the
/// rows that differ from what is stored (an edit to one function rewrites
/// that function's rows, not its file's). Rows are made and staged a file
/// at a time, so a first index never holds every entity's rows at once;
/// the changed sets are collected only when `track` asks for them (a run
/// that rewrites the text and usage rows of every entity reads neither).
///
/// What is stored for a file whose stored interface is in `before` is
/// made from it: a file's entity rows and its interface are written
/// together, from the same extract (see [`entity_rows`]), so they are
/// the rows the store holds without reading them (on a large generated
/// file, reading them back was most of a save's diff). The other files'
/// rows (deleted files, files with no readable interface) are read.
pub(super) fn write_entities(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    replaced: &BTreeSet<String>,
    deleted: &[String],
    extracts: ExtractsNowAndBefore<'_>,
    track: bool,
) -> Result<EntitiesWritten, StoreError> {
    let stored_rows = read_rows_not_held(store, graph, replaced, deleted, extracts.before)?;
    let mut old = old_entities(
        store,
        graph,
        stored_rows.as_ref(),
        replaced,
        deleted,
        extracts,
    )?;
    write_entity_lists(batch, graph, replaced, deleted, &old, extracts.now);
    let mut written = EntitiesWritten {
        facts_changed: BTreeSet::new(),
        entities_delta: -(old.len() as i64),
    };
    let mut sink = EntitySink {
        store,
        graph,
        batch,
        track,
        written: &mut written,
    };
    sink.put_changed(replaced, extracts.now, &mut old)?;
    sink.delete_gone(replaced, deleted, extracts.now, old);
    Ok(written)
}

/// The stored entity rows of the files whose extract the last run in this
/// process did not hold (none in a database being built: it holds no
/// entities yet).
fn read_rows_not_held(
    store: &Store,
    graph: &str,
    replaced: &BTreeSet<String>,
    deleted: &[String],
    before: &BTreeMap<String, FileExtract>,
) -> Result<Option<NamedRows>, StoreError> {
    let files: Vec<&str> = replaced
        .iter()
        .map(String::as_str)
        .chain(deleted.iter().map(String::as_str))
        .filter(|p| !before.contains_key(*p))
        .collect();
    if files.is_empty() || store.is_building() {
        return Ok(None);
    }
    let rows = store.read(
        queries::ENTITY_ROWS_IN_FILES,
        Params::new()
            .with("graph", graph)
            .with("files", str_list(files)),
    )?;
    Ok(Some(rows))
}

/// Every entity of the replaced and deleted files as it was before the
/// run: stored rows, or the entities the last run held. A key declared
/// twice holds the rows put last.
fn old_entities<'a>(
    store: &Store,
    graph: &'a str,
    stored_rows: Option<&'a NamedRows>,
    replaced: &'a BTreeSet<String>,
    deleted: &'a [String],
    extracts: ExtractsNowAndBefore<'a>,
) -> Result<BTreeMap<String, OldEntity<'a>>, StoreError> {
    let mut old: BTreeMap<String, OldEntity> = BTreeMap::new();
    if let Some(rows) = stored_rows {
        for r in decode_rows::<EntityRowsInFiles>(rows)? {
            old.insert(
                r.id.to_string(),
                OldEntity::Stored(Box::new(stored_entity_rows(graph, r))),
            );
        }
    }
    if !store.is_building() {
        for path in replaced.iter().chain(deleted) {
            let Some(ex) = extracts.before.get(path) else {
                continue;
            };
            for e in &ex.entities {
                old.insert(
                    e.key.to_string(),
                    OldEntity::Held {
                        entity: e,
                        package: &ex.context.package,
                    },
                );
            }
        }
    }
    Ok(old)
}

/// Which entities each file declares (`code_file_entities`), where that
/// changed. The stored entities of a file are one range of `old`: their
/// keys all start with `{file}-` (a range may hold another file's whose
/// path starts so too, which `file()` tells apart).
fn write_entity_lists(
    batch: &mut Batch,
    graph: &str,
    replaced: &BTreeSet<String>,
    deleted: &[String],
    old: &BTreeMap<String, OldEntity>,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
) {
    for path in replaced.iter().chain(deleted) {
        let prefix = format!("{path}-");
        let before: Vec<&str> = old
            .range::<str, _>((
                std::ops::Bound::Included(prefix.as_str()),
                std::ops::Bound::Unbounded,
            ))
            .take_while(|(key, _)| key.starts_with(&prefix))
            .filter(|(_, o)| o.file() == path)
            .filter_map(|(key, _)| key_tail(path, key))
            .collect();
        let now = match extracts.get(path) {
            Some((_, ex)) => sorted_tails(
                path,
                ex.entities
                    .iter()
                    .filter(|e| e.file.as_ref() == path.as_str())
                    .map(|e| e.key.as_ref()),
            ),
            None => Vec::new(),
        };
        write_file_entities(batch, graph, path, &before, &now);
    }
}

/// What changed of `e` against what it was, and its rows when comparing
/// made them. An entity the last run in this process held is compared as
/// an entity, and its rows are made only to be written (a line shift above
/// a large file's entities moves thousands); stored rows are compared as
/// rows.
fn entity_change<'a>(
    graph: &'a str,
    lang: &dyn Language,
    package: &'a str,
    e: &'a Entity,
    before: Option<&OldEntity>,
) -> (EntityChange, Option<(NodeRow<'a>, CodeEntityRow<'a>)>) {
    match before {
        Some(OldEntity::Held {
            entity: o,
            package: old_package,
        }) => {
            let same_node = o.kind == e.kind && o.name == e.name && o.doc == e.doc;
            let same_but_lines =
                *old_package == package && o.file == e.file && lang.same_entity_facts(o, e);
            let same_lines = (o.start_line, o.end_line) == (e.start_line, e.end_line);
            let change = EntityChange {
                node: !same_node,
                row: !(same_but_lines && same_lines),
                facts: (o.kind, &o.file, o.is_test) != (e.kind, &e.file, e.is_test),
            };
            (change, None)
        }
        Some(OldEntity::Stored(rows)) => {
            let now = entity_rows(graph, package, e);
            let change = EntityChange {
                node: rows.0 != now.0,
                row: rows.1 != now.1,
                facts: (&rows.0.kind, &rows.1.file, rows.1.is_test)
                    != (&now.0.kind, &now.1.file, now.1.is_test),
            };
            (change, Some(now))
        }
        None => (
            EntityChange {
                node: true,
                row: true,
                facts: true,
            },
            None,
        ),
    }
}

/// Where [`write_entities`] puts rows and what it reports.
struct EntitySink<'s> {
    store: &'s Store,
    graph: &'s str,
    batch: &'s mut Batch,
    track: bool,
    written: &'s mut EntitiesWritten,
}

impl EntitySink<'_> {
    /// Put the rows of entities that appeared or changed, each row only if
    /// it changed (lines moved by an edit above an entity change its
    /// entity row, not its node). Their usage rows follow if their kind,
    /// file or test flag changed (an unchanged row keeps them; edges
    /// around it are the other writer's business, see `write_links`),
    /// their text rows if more than their lines changed. What is left in
    /// `old` went.
    fn put_changed(
        &mut self,
        replaced: &BTreeSet<String>,
        extracts: &BTreeMap<String, (FileContext, FileExtract)>,
        old: &mut BTreeMap<String, OldEntity>,
    ) -> Result<(), StoreError> {
        // Keys are unique, but a count of rows must not trust it: each key
        // is one row, however many entities carry it.
        let mut keys_now: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::default();
        for path in replaced {
            let Some((ctx, ex)) = extracts.get(path) else {
                continue;
            };
            let lang = languages::get(ex.language);
            for e in &ex.entities {
                if keys_now.insert(e.key.as_ref()) {
                    self.written.entities_delta += 1;
                }
                let before = old.remove(e.key.as_ref());
                let (change, now) =
                    entity_change(self.graph, lang, &ctx.package, e, before.as_ref());
                if !change.node && !change.row {
                    continue;
                }
                if self.track && change.facts {
                    self.written.facts_changed.insert(e.key.to_string());
                }
                let (node, entity) =
                    now.unwrap_or_else(|| entity_rows(self.graph, &ctx.package, e));
                if change.node {
                    self.batch.put_row(node);
                }
                if change.row {
                    self.batch.put_row(entity);
                }
                self.store.land_when_full(self.batch)?;
            }
        }
        Ok(())
    }

    /// Delete the rows of the entities that went, and the stored extract of
    /// every file gone or skipped now.
    fn delete_gone(
        &mut self,
        replaced: &BTreeSet<String>,
        deleted: &[String],
        extracts: &BTreeMap<String, (FileContext, FileExtract)>,
        old: BTreeMap<String, OldEntity>,
    ) {
        let graph = self.graph;
        for key in old.keys() {
            self.batch
                .delete_key::<NodeRow>(vec![graph.into(), key.as_str().into()]);
            self.batch
                .delete_key::<CodeEntityRow>(vec![graph.into(), key.as_str().into()]);
        }
        if self.track {
            self.written.facts_changed.extend(old.into_keys());
        }
        for path in deleted
            .iter()
            .chain(replaced.iter().filter(|p| !extracts.contains_key(*p)))
        {
            let key = || vec![graph.into(), path.as_str().into()];
            self.batch.delete_key::<CodeExtractRow>(key());
            self.batch.delete_key::<CodeInterfaceRow>(key());
            self.batch.delete_key::<CodeNamesRow>(key());
        }
    }
}

/// Edges, unresolved and ambiguous references: now minus before.
#[derive(Default)]
pub(super) struct LinkDelta {
    pub edges: i64,
    pub unresolved: i64,
    pub ambiguous: i64,
}

/// What [`write_links`] changed.
#[derive(Default)]
pub(super) struct LinksWritten {
    /// Both ends of every edge added or removed.
    pub endpoints: BTreeSet<String>,
    /// The targets of every `tests` edge added or removed: whether a test
    /// calls them changed, so their containers' usage follows.
    pub tested: BTreeSet<String>,
    /// The targets of every edge added or removed: the entities whose
    /// edges in changed (the usage of any other is what it was on that
    /// side).
    pub targets: BTreeSet<String>,
    pub delta: LinkDelta,
}

/// Write the links of files whose digest differs from the stored one (and
/// drop those of deleted files): only the rows that changed. The ends of
/// changed edges are collected only when `track` asks for them.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_links(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    links: &BTreeMap<String, FileLinks>,
    digests: &BTreeMap<String, String>,
    stored: &BTreeMap<String, StoredFile>,
    deleted: &[String],
    track: bool,
) -> Result<LinksWritten, StoreError> {
    let mut written = LinksWritten::default();
    let changed = files_whose_links_changed(digests, stored, deleted);
    if changed.is_empty() {
        return Ok(written);
    }
    // Stored rows of these origins, diffed against the new links: only
    // what changed is deleted or written. A database being built holds
    // none yet.
    let (mut old_edges, mut old_unresolved) = match store.is_building() {
        true => (OldEdges::new(), OldUnresolved::new()),
        false => read_stored_links(store, graph, &changed)?,
    };
    written.delta.take_stored(&old_edges, &old_unresolved);
    for path in changed {
        let Some(l) = links.get(path) else { continue };
        written.delta.add_now(l);
        let old = old_edges.remove(path).unwrap_or_default();
        let old = put_changed_edges(batch, graph, path, l, old, track.then_some(&mut written));
        // What is left of the file's old edges is gone (below).
        if !old.is_empty() {
            old_edges.insert(path.to_string(), old);
        }
        // A chunk of rows lands at once in a database being built: the
        // rows put here are final (deletes below are of old rows only).
        store.land_when_full(batch)?;
        put_changed_unresolved(batch, graph, path, l, &mut old_unresolved);
    }
    delete_gone_links(batch, graph, links, old_edges, old_unresolved, &mut written);
    Ok(written)
}

/// The deleted files and those whose links' digest differs from the
/// stored one.
fn files_whose_links_changed<'a>(
    digests: &'a BTreeMap<String, String>,
    stored: &BTreeMap<String, StoredFile>,
    deleted: &'a [String],
) -> Vec<&'a str> {
    let mut changed: Vec<&str> = deleted.iter().map(String::as_str).collect();
    for (path, digest) in digests {
        if stored.get(path).map(|s| s.edge_digest.as_str()) != Some(digest.as_str()) {
            changed.push(path);
        }
    }
    changed
}

impl LinkDelta {
    /// Less what the changed files stored.
    fn take_stored(&mut self, old_edges: &OldEdges, old_unresolved: &OldUnresolved) {
        self.edges -= old_edges.values().map(BTreeMap::len).sum::<usize>() as i64;
        for refs in old_unresolved.values() {
            for r in refs.as_array().into_iter().flatten() {
                self.unresolved -= 1;
                let text = r.get(1).and_then(|t| t.as_str()).unwrap_or_default();
                if text.contains(super::links::AMBIGUOUS_MARK) {
                    self.ambiguous -= 1;
                }
            }
        }
    }

    /// Plus what a file links now.
    fn add_now(&mut self, l: &FileLinks) {
        self.edges += l.edges.len() as i64;
        self.unresolved += l.unresolved.len() as i64;
        self.ambiguous += l.ambiguous_count() as i64;
    }
}

impl LinksWritten {
    /// Note an edge that came, went or was reweighted: usage around it
    /// follows.
    fn note_edge(&mut self, src: &str, rel: &str, dst: &str) {
        self.endpoints.insert(src.to_string());
        self.endpoints.insert(dst.to_string());
        self.targets.insert(dst.to_string());
        if rel == TESTS {
            self.tested.insert(dst.to_string());
        }
    }
}

/// Put the edges of `path` that are new or reweighted against `old` (its
/// stored edges), and its edge list when any came, went or was
/// reweighted; `track` notes their ends. Returns what is left of `old`:
/// the edges that went.
fn put_changed_edges(
    batch: &mut Batch,
    graph: &str,
    path: &str,
    l: &FileLinks,
    mut old: BTreeMap<(String, String, String), f64>,
    mut track: Option<&mut LinksWritten>,
) -> BTreeMap<(String, String, String), f64> {
    let mut list_changed = false;
    for ((src, rel, dst), weight) in &l.edges {
        let w = *weight as f64;
        // (A file resolved for the first time has no old edges: no
        // key is copied to look one up.)
        if !old.is_empty()
            && old.remove(&(src.to_string(), rel.to_string(), dst.to_string())) == Some(w)
        {
            continue;
        }
        list_changed = true;
        // Added, or its weight changed: usage around it follows. An
        // edge as stored leaves its ends' usage as it was, though its
        // file's other references moved.
        if let Some(written) = track.as_deref_mut() {
            written.note_edge(src, rel, dst);
        }
        batch.put_row(EdgeRow {
            graph: graph.into(),
            src: (*src).into(),
            rel: (*rel).into(),
            dst: (*dst).into(),
            origin: path.into(),
            weight: w,
        });
    }
    if list_changed || !old.is_empty() {
        put_file_edges(batch, graph, path, l);
    }
    old
}

/// Put the unresolved-reference rows of `path` that differ from the
/// stored ones, removing from `old_unresolved` those still current.
fn put_changed_unresolved(
    batch: &mut Batch,
    graph: &str,
    path: &str,
    l: &FileLinks,
    old_unresolved: &mut OldUnresolved,
) {
    let mut per_src: BTreeMap<&str, Vec<serde_json::Value>> = BTreeMap::new();
    for ((src, rel, text), (line, count, candidates)) in &l.unresolved {
        // An ambiguous reference says so in its text, with the number
        // of entities it could have meant.
        let text = match candidates {
            0 | 1 => text.clone(),
            n => format!("{text} {}{n} candidates)", super::links::AMBIGUOUS_MARK),
        };
        per_src
            .entry(*src)
            .or_default()
            .push(serde_json::json!([rel, text, line, count]));
    }
    for (src, refs) in per_src {
        let refs = serde_json::Value::Array(refs);
        if old_unresolved
            .remove(&(path.to_string(), src.to_string()))
            .as_ref()
            == Some(&refs)
        {
            continue;
        }
        batch.put_row(CodeUnresolvedRow {
            graph: graph.into(),
            origin: path.into(),
            src: src.into(),
            refs: Cow::Owned(refs),
        });
    }
}

/// Whatever is left of the old rows is gone; so is the list of a file
/// that has no links now (deleted, or no longer parsed).
fn delete_gone_links(
    batch: &mut Batch,
    graph: &str,
    links: &BTreeMap<String, FileLinks>,
    old_edges: OldEdges,
    old_unresolved: OldUnresolved,
    written: &mut LinksWritten,
) {
    for (origin, old) in old_edges {
        if !links.contains_key(&origin) {
            batch.delete_key::<CodeFileEdgesRow>(vec![graph.into(), origin.as_str().into()]);
        }
        for (src, rel, dst) in old.into_keys() {
            written.note_edge(&src, &rel, &dst);
            batch.delete_key::<EdgeRow>(vec![
                graph.into(),
                src.into(),
                rel.into(),
                dst.into(),
                origin.as_str().into(),
            ]);
        }
    }
    for (origin, src) in old_unresolved.into_keys() {
        batch.delete_key::<CodeUnresolvedRow>(vec![graph.into(), origin.into(), src.into()]);
    }
}

/// The stored edges of some files, by file: `(src, rel, dst)` → weight.
/// Stored edges by origin file: `(src, rel, dst)` → weight.
pub(super) type OldEdges = BTreeMap<String, BTreeMap<(String, String, String), f64>>;

/// Stored unresolved-reference rows by `(origin, src)`: their
/// `[[rel, text, line, count], …]`.
pub(super) type OldUnresolved = BTreeMap<(String, String), serde_json::Value>;

/// The links `files` stored: their edges and unresolved-reference rows.
pub(super) fn read_stored_links(
    store: &Store,
    graph: &str,
    files: &[&str],
) -> Result<(OldEdges, OldUnresolved), StoreError> {
    let edges = read_file_edges(store, graph, files)?;
    let mut unresolved = OldUnresolved::new();
    let origins = str_list(files.iter().copied());
    let params = Params::new().with("graph", graph).with("origins", origins);
    let rows = store.read(queries::UNRESOLVED_FROM_ORIGINS, params)?;
    for r in decode_rows::<UnresolvedFromOrigins>(&rows)? {
        unresolved.insert((r.origin.into(), r.src.into()), r.refs.into_owned());
    }
    Ok((edges, unresolved))
}

/// The edges `files` produced, from their stored lists; a file whose list
/// cannot be read has its edges found by a scan of the graph's edges.
fn read_file_edges(store: &Store, graph: &str, files: &[&str]) -> Result<OldEdges, StoreError> {
    let mut old = OldEdges::new();
    let params = Params::new()
        .with("graph", graph)
        .with("files", str_list(files.iter().copied()));
    let rows = store.read(queries::FILE_EDGES_OF, params)?;
    let mut unreadable: Vec<String> = Vec::new();
    for r in decode_rows::<FileEdgesOf>(&rows)? {
        match file_edges::decode(&r.edges) {
            Some(list) => {
                let of = old.entry(r.file.into_owned()).or_default();
                for (src, rel, dst, weight) in list {
                    of.insert((src, rel, dst), weight);
                }
            }
            None => unreadable.push(r.file.into_owned()),
        }
    }
    if !unreadable.is_empty() {
        let params = Params::new()
            .with("graph", graph)
            .with("origins", str_list(unreadable.iter().map(String::as_str)));
        let rows = store.read(queries::EDGES_OF_ORIGINS_SCAN, params)?;
        for r in decode_rows::<EdgesOfOriginsScan>(&rows)? {
            old.entry(r.origin.into_owned())
                .or_default()
                .insert((r.src.into(), r.rel.into(), r.dst.into()), r.weight);
        }
    }
    Ok(old)
}

/// Stage the list of a file's edges as `links` has them (none: no row).
fn put_file_edges(batch: &mut Batch, graph: &str, path: &str, links: &FileLinks) {
    if links.edges.is_empty() {
        batch.delete_key::<CodeFileEdgesRow>(vec![graph.into(), path.into()]);
        return;
    }
    let list = links
        .edges
        .iter()
        .map(|((src, rel, dst), weight)| (*src, *rel, *dst, *weight as f64));
    batch.put_row(CodeFileEdgesRow {
        graph: graph.into(),
        file: path.into(),
        edges: file_edges::encode(list).into(),
    });
}

/// Which edges `links` holds: every file's, or only those of the files a
/// narrow run resolved (the rest are read from the store).
pub(super) enum UsageScope<'r> {
    AllLinks,
    Around(&'r BTreeSet<String>),
}

/// The entities a run's changes reach (see [`write_usage`]).
pub(super) struct UsageTouched<'r> {
    /// Whose usage may have changed.
    pub keys: &'r BTreeSet<String>,
    /// Those of them whose being tested changed: their containers too.
    pub tested: &'r BTreeSet<String>,
    /// Those of them whose edges in (or whose entity) changed; of any
    /// other, what its stored row says of its edges in still holds.
    pub incoming: &'r BTreeSet<String>,
}

/// Bring `code_usage` up to date (see [`usage`]): recompute the entities
/// whose surroundings changed — `touched` (the entities, and those of them
/// whose being tested changed), or every entity when `None` (no rows yet,
/// or rows of another version) — and write the rows that differ from the
/// stored ones.
pub(super) fn write_usage(
    store: &Store,
    graph: &str,
    batch: &mut Batch,
    links: &BTreeMap<String, FileLinks>,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    touched: Option<UsageTouched>,
    scope: UsageScope,
) -> Result<(), StoreError> {
    if touched.as_ref().is_some_and(|t| t.keys.is_empty()) {
        return Ok(());
    }
    // The containers of these come with them; when every entity of the
    // scope is recomputed, of every one.
    let tested_changed = |key: &str| touched.as_ref().is_none_or(|t| t.tested.contains(key));
    let incoming_changed = |key: &str| touched.as_ref().is_none_or(|t| t.incoming.contains(key));
    let entities = entities_with_known_facts(extracts, &scope);
    // Every entity, of every file: the containers of each are among them.
    let all = touched.is_none() && matches!(scope, UsageScope::AllLinks);
    let touched: Vec<&str> = match &touched {
        Some(t) => t.keys.iter().map(String::as_str).collect(),
        None => {
            batch.put_row(CodeUsageVersionRow {
                graph: graph.into(),
                version: usage::USAGE_VERSION,
            });
            entities.keys().copied().collect()
        }
    };
    let around = match &scope {
        UsageScope::AllLinks => None,
        UsageScope::Around(resolved) => Some(usage::read_around(
            store,
            graph,
            links,
            resolved,
            &touched,
            &tested_changed,
            &incoming_changed,
        )?),
    };
    // A chunk of entities at a time: a cold run's usage of every entity,
    // outgoing edges included, held at once was a large tree's peak of
    // memory. (No more than a landing chunk: a test that lands a few rows
    // at a time computes usage a few entities at a time too.)
    let chunk_len = USAGE_CHUNK.min(store.land_chunk_rows());
    let mut writer = UsageWriter {
        store,
        graph,
        batch,
        entities: &entities,
        scope: &scope,
    };
    if around.is_none() && all {
        // Every entity is in some chunk, each with the edges at it: a
        // container need not come with its members' chunk.
        let chunked = usage::Chunked::new(links, touched, chunk_len);
        for i in 0..chunked.len() {
            let (chunk, mut computed) = chunked.compute(i);
            let asked: BTreeSet<&str> = chunk.iter().copied().collect();
            writer.write_rows(&mut computed, asked, &[])?;
        }
        return Ok(());
    }
    // Otherwise each chunk reads the edges once more.
    let mut written: rustc_hash::FxHashSet<&str> = rustc_hash::FxHashSet::default();
    for chunk in touched.chunks(chunk_len) {
        let mut computed = match &around {
            None => usage::compute(links, chunk.iter().copied(), &tested_changed),
            Some(around) => around.compute(links, chunk.iter().copied(), &tested_changed),
        };
        // The containers of a chunk's entities come with it; one that an
        // earlier chunk brought is written already (each key is put or
        // deleted once: a chunk may land at any time).
        let asked: BTreeSet<&str> = chunk
            .iter()
            .copied()
            .chain(computed.keys().copied())
            .filter(|k| !written.contains(k))
            .collect();
        written.extend(asked.iter().copied());
        let read_already = around.as_ref().map_or(&[][..], |a| a.usage_rows());
        writer.write_rows(&mut computed, asked, read_already)?;
    }
    Ok(())
}

/// The entities whose facts (kind, file, test flag) this run knows:
/// every file's, or in a narrow run those of the files it resolved (any
/// other entity keeps the facts its stored row has).
fn entities_with_known_facts<'x>(
    extracts: &'x BTreeMap<String, (FileContext, FileExtract)>,
    scope: &UsageScope,
) -> rustc_hash::FxHashMap<&'x str, &'x Entity> {
    extracts
        .iter()
        .filter(|(path, _)| match scope {
            UsageScope::AllLinks => true,
            UsageScope::Around(resolved) => resolved.contains(*path),
        })
        .flat_map(|(_, (_, ex))| ex.entities.iter().map(|e| (e.key.as_ref(), e)))
        .collect()
}

/// Entities whose usage one chunk of [`write_usage`] computes.
const USAGE_CHUNK: usize = 1 << 17;

/// Where [`write_usage`] puts the rows, and the facts it knows.
struct UsageWriter<'w> {
    store: &'w Store,
    graph: &'w str,
    batch: &'w mut Batch,
    entities: &'w rustc_hash::FxHashMap<&'w str, &'w Entity>,
    scope: &'w UsageScope<'w>,
}

impl UsageWriter<'_> {
    /// Write the usage rows of `asked` that differ from the stored ones,
    /// from `computed`; delete those of entities gone.
    fn write_rows<'a>(
        &mut self,
        computed: &mut rustc_hash::FxHashMap<&'a str, usage::UsageOf<'a>>,
        asked: BTreeSet<&'a str>,
        read_already: &[cozo::NamedRows],
    ) -> Result<(), StoreError> {
        let graph = self.graph;
        let mut outs = compress_outs(computed, &asked);
        // The stored rows of those asked: some read already (see
        // `usage::read_around`), the others now. A database being built
        // holds none yet.
        let mut found = usage_rows_among(read_already, &asked)?;
        let stored_rows = self.read_usage_rows_not_in(&asked, &found)?;
        if let Some(rows) = &stored_rows {
            found.extend(decode_rows::<CodeUsageRow>(rows)?);
        }
        let stored: BTreeMap<String, CodeUsageRow> =
            found.into_iter().map(|r| (r.id.to_string(), r)).collect();
        for key in asked {
            let Some((kind, file, is_test)) = self.facts_of(key, stored.get(key)) else {
                if stored.contains_key(key) {
                    self.batch
                        .delete_key::<CodeUsageRow>(vec![graph.into(), key.into()]);
                }
                continue;
            };
            let u = computed.remove(key).unwrap_or_default();
            let out = match outs.remove(key) {
                Some(out) => out,
                None => usage::encode_out(&u.out),
            };
            let row = CodeUsageRow {
                graph: graph.into(),
                id: key.into(),
                kind,
                file,
                is_test,
                fan_in: u.fan_in,
                references: u.references as i64,
                call_sites: u.call_sites.iter().map(|s| Cow::Borrowed(*s)).collect(),
                tests: u.tests as i64,
                tested_members: u.tested_members as i64,
                degree: (u.out.len() + u.incoming) as i64,
                out: out.into(),
            };
            if stored.get(key) == Some(&row) {
                continue;
            }
            self.batch.put_row(row);
            // Each key is put or deleted once: a chunk may land at any time.
            self.store.land_when_full(self.batch)?;
        }
        Ok(())
    }

    /// The stored usage rows of those `asked` that are not `found` (none
    /// read in a database being built).
    fn read_usage_rows_not_in(
        &self,
        asked: &BTreeSet<&str>,
        found: &[CodeUsageRow],
    ) -> Result<Option<cozo::NamedRows>, StoreError> {
        let read: BTreeSet<&str> = found.iter().map(|r| r.id.as_ref()).collect();
        let unread: BTreeSet<&str> = asked
            .iter()
            .copied()
            .filter(|k| !read.contains(k))
            .collect();
        if self.store.is_building() || unread.is_empty() {
            return Ok(None);
        }
        let rows = self.store.read(
            queries::USAGE_OF,
            Params::new()
                .with("graph", self.graph)
                .with("keys", str_list(unread.iter().copied())),
        )?;
        Ok(Some(rows))
    }

    /// An entity's kind, file and test flag: as this run extracted it, or,
    /// outside the files it resolved, as stored; `None` when it is gone.
    fn facts_of<'s>(
        &self,
        key: &str,
        stored: Option<&'s CodeUsageRow<'s>>,
    ) -> Option<(Cow<'s, str>, Cow<'s, str>, bool)>
    where
        Self: 's,
    {
        match (self.entities.get(key), self.scope, stored) {
            (Some(e), ..) => Some((e.kind.as_str().into(), e.file.as_ref().into(), e.is_test)),
            // Not in a resolved file: unchanged, as stored.
            (None, UsageScope::Around(resolved), Some(row))
                if !resolved.contains(row.file.as_ref()) =>
            {
                Some((row.kind.clone(), row.file.clone(), row.is_test))
            }
            _ => None,
        }
    }
}

/// The outgoing edges of those asked, compressed on every thread (the
/// rows are put in key order on this one).
fn compress_outs<'a>(
    computed: &rustc_hash::FxHashMap<&'a str, usage::UsageOf<'a>>,
    asked: &BTreeSet<&'a str>,
) -> rustc_hash::FxHashMap<&'a str, Vec<u8>> {
    use rayon::prelude::*;
    asked
        .par_iter()
        .filter_map(|k| computed.get(k).map(|u| (*k, usage::encode_out(&u.out))))
        .collect()
}

/// The rows among `rows` (usage rows read already) of those `asked`.
fn usage_rows_among<'r>(
    rows: &'r [cozo::NamedRows],
    asked: &BTreeSet<&str>,
) -> Result<Vec<CodeUsageRow<'r>>, StoreError> {
    let mut found = Vec::new();
    for rows in rows {
        found.extend(
            decode_rows::<CodeUsageRow>(rows)?
                .into_iter()
                .filter(|r| asked.contains(r.id.as_ref())),
        );
    }
    Ok(found)
}

/// Put the `code_file` rows of files new, re-parsed or whose resolved
/// links changed, and delete those of files gone; returns each row as
/// written (`None`: deleted), so a run can bring the file states it holds
/// up to date without reading them all again.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_files(
    graph: &str,
    batch: &mut Batch,
    new_files: &BTreeMap<String, (String, u64, String, String)>,
    digests: &BTreeMap<String, String>,
    stored: &BTreeMap<String, StoredFile>,
    extracts: &BTreeMap<String, (FileContext, FileExtract)>,
    deleted: &[String],
    walked: &[SourceFile],
) -> Vec<(String, Option<StoredFile>)> {
    let mut rows: Vec<(String, Option<StoredFile>)> = Vec::new();
    for path in deleted {
        batch.delete_key::<CodeFileRow>(vec![graph.into(), path.as_str().into()]);
        rows.push((path.clone(), None));
    }
    let digest_of = |p: &str| digests.get(p).cloned().unwrap_or_default();
    let crate_of = |p: &str| {
        extracts
            .get(p)
            .map(|(c, _)| c.package.clone())
            .unwrap_or_default()
    };
    let entities_of = |p: &str| {
        extracts
            .get(p)
            .map(|(_, e)| e.entities.len() as i64)
            .unwrap_or(0)
    };
    let mut put = |path: &str, hash: &str, bytes: u64, status: &str, reason: &str| {
        rows.push((
            path.to_string(),
            Some(StoredFile {
                hash: hash.to_string(),
                status: status.to_string(),
                edge_digest: digest_of(path),
            }),
        ));
        batch.put_row(CodeFileRow {
            graph: graph.into(),
            path: path.into(),
            hash: hash.into(),
            bytes: bytes as i64,
            status: status.into(),
            reason: reason.into(),
            package: crate_of(path).into(),
            entities: entities_of(path),
            edge_digest: digest_of(path).into(),
        });
    };
    for (path, (hash, bytes, status, reason)) in new_files {
        put(path, hash, *bytes, status, reason);
    }
    // Unchanged files whose resolved links changed: refresh the digest
    // (files not resolved in this run keep theirs). `walked` is in path
    // order.
    for (path, digest) in digests {
        let path = path.as_str();
        if new_files.contains_key(path) {
            continue;
        }
        let (Some(s), Ok(at)) = (
            stored.get(path),
            walked.binary_search_by(|f| f.ctx.path.as_str().cmp(path)),
        ) else {
            continue;
        };
        let file = &walked[at];
        if &s.edge_digest != digest {
            let reason = extracts
                .get(path)
                .map(|(_, e)| match e.syntax_errors {
                    0 => String::new(),
                    n => format!("{n} syntax error(s); kept what parsed"),
                })
                .unwrap_or_default();
            put(path, &s.hash, file.bytes, &s.status, &reason);
        }
    }
    rows
}
