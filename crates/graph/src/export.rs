//! `graphctx export --jsonl`: a code graph as JSON lines, the contract for
//! scripts (see docs/commands.md).
//!
//! Three shapes, one object per line:
//!
//! ```text
//! {"type":"entity","key","kind","name","file","start_line","end_line","owner","trait","parent","is_test"}
//! {"type":"edge","src","rel","dst","origin"}
//! {"type":"unresolved","src","refs":[[rel, text, line, count], …]}
//! ```
//!
//! Scripts read these instead of the stored relations, whose layout may
//! change between versions. The graph is read a page of files at a time
//! and each page written before the next is read, so memory follows the
//! largest page, not the graph. Per file, in path order: its entities
//! (by line, then key), the edges leaving them (by source, relationship,
//! target, origin), its unresolved references (by source) — the same
//! bytes for the same graph, whatever the page size.

use std::collections::HashMap;
use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use crate::store::rows::{self, query_rows, Json, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};

/// Files read per page.
pub const PAGE_FILES: usize = 64;

query_rows! {
    /// `queries/export_files.cozo`.
    ExportFile = "export_files" {
        key { path: Str<'a> }
    }
    /// `queries/export_entities.cozo`.
    ExportEntity = "export_entities" {
        key { file: Str<'a>, start_line: i64, key: Str<'a> }
        value {
            kind: Str<'a>,
            name: Str<'a>,
            end_line: i64,
            owner: Option<Str<'a>>,
            trait_name: Option<Str<'a>>,
            parent: Option<Str<'a>>,
            is_test: bool,
        }
    }
    /// `queries/edges_from.cozo`.
    EdgeFrom = "edges_from" {
        key { src: Str<'a>, rel: Str<'a>, dst: Str<'a> }
        value { weight: f64, origin: Str<'a> }
    }
    /// `queries/unresolved_from_origins.cozo`.
    UnresolvedFrom = "unresolved_from_origins" {
        key { origin: Str<'a>, src: Str<'a> }
        value { refs: Json<'a> }
    }
}

/// One line of the export.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Record<'a> {
    Entity {
        key: &'a str,
        kind: &'a str,
        name: &'a str,
        file: &'a str,
        start_line: i64,
        end_line: i64,
        owner: Option<&'a str>,
        #[serde(rename = "trait")]
        trait_name: Option<&'a str>,
        parent: Option<&'a str>,
        is_test: bool,
    },
    Edge {
        src: &'a str,
        rel: &'a str,
        dst: &'a str,
        origin: &'a str,
    },
    Unresolved {
        src: &'a str,
        refs: &'a Value,
    },
}

/// How many records of each shape an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exported {
    pub entities: usize,
    pub edges: usize,
    /// `unresolved` records: one per entity with unresolved references.
    pub unresolved: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the export")]
    Write(#[from] std::io::Error),
    /// Another process changed the graph between two pages.
    #[error(
        "graph '{0}' changed while it was exported (an index run landed); the output mixes \
         two states: run the export again"
    )]
    Changed(String),
}

/// Write `graph` to `out` as JSON lines (see the module docs).
pub fn export_jsonl(
    store: &Store,
    graph: &str,
    out: &mut impl Write,
) -> Result<Exported, ExportError> {
    let seq = store.graph_seq(graph)?;
    let files_rows = store.read(queries::EXPORT_FILES, Params::new().with("graph", graph))?;
    let mut files: Vec<String> = rows::decode_rows::<ExportFile>(&files_rows)
        .map_err(StoreError::from)?
        .into_iter()
        .map(|f| f.path.into_owned())
        .collect();
    drop(files_rows);
    // The order every page is walked in (below), whatever the engine's.
    files.sort();
    let mut exported = Exported::default();
    for page in files.chunks(PAGE_FILES) {
        export_page(store, graph, page, out, &mut exported)?;
    }
    out.flush()?;
    if store.graph_seq(graph)? != seq {
        return Err(ExportError::Changed(graph.to_string()));
    }
    Ok(exported)
}

/// Write the records of `files` (in path order), file by file.
fn export_page(
    store: &Store,
    graph: &str,
    files: &[String],
    out: &mut impl Write,
    exported: &mut Exported,
) -> Result<(), ExportError> {
    let page = || Params::new().with("graph", graph);
    let entity_rows = store.read(
        queries::EXPORT_ENTITIES,
        page().with("files", str_list(files)),
    )?;
    let mut entities = rows::decode_rows::<ExportEntity>(&entity_rows).map_err(StoreError::from)?;
    entities.sort_by(|a, b| (&a.file, a.start_line, &a.key).cmp(&(&b.file, b.start_line, &b.key)));
    let keys: Vec<&str> = entities.iter().map(|e| e.key.as_ref()).collect();
    let file_of: HashMap<&str, &str> = entities
        .iter()
        .map(|e| (e.key.as_ref(), e.file.as_ref()))
        .collect();
    let edge_rows = store.read(queries::EDGES_FROM, page().with("keys", str_list(&keys)))?;
    // Every edge leaves an entity of the page: each is written with its
    // source's file.
    let mut edges: Vec<(&str, EdgeFrom)> = rows::decode_rows::<EdgeFrom>(&edge_rows)
        .map_err(StoreError::from)?
        .into_iter()
        .map(|x| (file_of.get(x.src.as_ref()).copied().unwrap_or(""), x))
        .collect();
    edges.sort_by(|(fa, a), (fb, b)| {
        (fa, &a.src, &a.rel, &a.dst, &a.origin).cmp(&(fb, &b.src, &b.rel, &b.dst, &b.origin))
    });
    let unresolved_rows = store.read(
        queries::UNRESOLVED_FROM_ORIGINS,
        page().with("origins", str_list(files)),
    )?;
    let mut unresolved =
        rows::decode_rows::<UnresolvedFrom>(&unresolved_rows).map_err(StoreError::from)?;
    unresolved.sort_by(|a, b| (&a.origin, &a.src).cmp(&(&b.origin, &b.src)));

    // Each list is in file order: walk the three side by side.
    let (mut e, mut d, mut u) = (0, 0, 0);
    for file in files {
        while e < entities.len() && entities[e].file == file.as_str() {
            let x = &entities[e];
            write_record(
                out,
                &Record::Entity {
                    key: &x.key,
                    kind: &x.kind,
                    name: &x.name,
                    file: &x.file,
                    start_line: x.start_line,
                    end_line: x.end_line,
                    owner: x.owner.as_deref(),
                    trait_name: x.trait_name.as_deref(),
                    parent: x.parent.as_deref(),
                    is_test: x.is_test,
                },
            )?;
            e += 1;
        }
        while d < edges.len() && edges[d].0 == file.as_str() {
            let x = &edges[d].1;
            write_record(
                out,
                &Record::Edge {
                    src: &x.src,
                    rel: &x.rel,
                    dst: &x.dst,
                    origin: &x.origin,
                },
            )?;
            d += 1;
        }
        while u < unresolved.len() && unresolved[u].origin == file.as_str() {
            let x = &unresolved[u];
            write_record(
                out,
                &Record::Unresolved {
                    src: &x.src,
                    refs: &x.refs,
                },
            )?;
            u += 1;
        }
    }
    exported.entities += e;
    exported.edges += d;
    exported.unresolved += u;
    Ok(())
}

fn write_record(out: &mut impl Write, record: &Record) -> Result<(), ExportError> {
    serde_json::to_writer(&mut *out, record).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}
