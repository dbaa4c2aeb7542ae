//! The stored forms of an interface that holds no reference: a file's
//! entities (names, kinds, parents, signatures), its imports and its
//! context, with every reference the body's. A language whose table reads
//! nothing else uses these as its [`Language`](crate::lang::Language)
//! stored forms; so an edit that leaves entities and imports as they were
//! re-resolves that file alone. (A language whose interface keeps some
//! references, for what other files resolve through them, has forms of
//! its own.)

use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::Serialize;

use crate::links::{FileLinks, RefsApart};

use crate::lang::Stored;
use crate::model::{
    ChildDecl, Entity, FileContext, FileExtract, LanguageId, ParseStatus, RawRef, UseDecl,
};
use crate::support::packed::{pack, unpack};

#[derive(Serialize)]
struct InterfaceView<'a> {
    path: &'a str,
    status: ParseStatus,
    syntax_errors: u32,
    entities: &'a [Entity],
    refs: [RawRef; 0],
    uses: &'a [UseDecl],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    children: &'a [ChildDecl],
    context: &'a FileContext,
}

/// The stored forms: MessagePack with field names, compressed.
pub fn encode(extract: &FileExtract) -> Stored {
    let view = InterfaceView {
        path: &extract.path,
        status: extract.status,
        syntax_errors: extract.syntax_errors,
        entities: &extract.entities,
        refs: [],
        uses: &extract.uses,
        children: &extract.children,
        context: &extract.context,
    };
    Stored {
        iface: pack(&rmp_serde::to_vec_named(&view).unwrap_or_default()),
        body: pack(&rmp_serde::to_vec_named(&extract.refs).unwrap_or_default()),
    }
}

/// The interface stored by [`encode`], its entities of `language`.
pub fn decode_interface(bytes: &[u8], language: LanguageId) -> Option<FileExtract> {
    let mut extract: FileExtract = rmp_serde::from_slice(&unpack(bytes)?).ok()?;
    extract.language = language;
    for e in &mut extract.entities {
        e.language = language;
    }
    Some(extract)
}

/// The references stored by [`encode`].
pub fn decode_body(bytes: &[u8]) -> Option<Vec<RawRef>> {
    rmp_serde::from_slice(&unpack(bytes)?).ok()
}

/// Every reference is the body's.
pub fn take_apart(extract: &mut FileExtract) -> Vec<RawRef> {
    std::mem::take(&mut extract.refs)
}

/// An interface with its body's references back.
pub fn join(mut interface: FileExtract, body: Vec<RawRef>) -> FileExtract {
    interface.refs.extend(body);
    interface
}

/// The interface of an extract: all but its references and texts.
pub fn interface_copy(extract: &FileExtract) -> FileExtract {
    FileExtract {
        path: extract.path.clone(),
        status: extract.status,
        syntax_errors: extract.syntax_errors,
        entities: extract.entities.clone(),
        refs: Vec::new(),
        uses: extract.uses.clone(),
        children: extract.children.clone(),
        context: extract.context.clone(),
        language: extract.language,
        texts: Vec::new(),
    }
}

/// Whether two interfaces read the same to resolution: paths, status,
/// contexts, entities' facts and imports.
pub fn same_interface(a: &FileExtract, b: &FileExtract) -> bool {
    a.path == b.path
        && a.status == b.status
        && a.context == b.context
        && a.entities.len() == b.entities.len()
        && a.uses.len() == b.uses.len()
        && a.entities
            .iter()
            .zip(&b.entities)
            .all(|(x, y)| same_entity_facts(x, y))
        && a.uses.iter().zip(&b.uses).all(|(x, y)| {
            x.from == y.from
                && x.path == y.path
                && x.alias == y.alias
                && x.glob == y.glob
                && x.is_pub == y.is_pub
        })
}

/// Everything but lines and doc comments. Every field is named, so that a
/// new one is not left out unseen.
pub fn same_entity_facts(a: &Entity, b: &Entity) -> bool {
    let Entity {
        key,
        kind,
        name,
        visibility,
        file,
        start_line: _,
        end_line: _,
        module_path,
        doc: _,
        signature,
        is_test,
        owner,
        trait_name,
        parent,
        language,
    } = a;
    *key == b.key
        && *file == b.file
        && *language == b.language
        && *kind == b.kind
        && *name == b.name
        && *visibility == b.visibility
        && *module_path == b.module_path
        && *signature == b.signature
        && *is_test == b.is_test
        && *owner == b.owner
        && *trait_name == b.trait_name
        && *parent == b.parent
}

/// Resolve `files` (whole extracts, or interfaces whose other references
/// `apart` holds in the stored form of [`encode`]) on every core, each by
/// `one` with the references held apart for it.
pub fn resolve_each<'a>(
    files: &[(&'a FileContext, &'a FileExtract)],
    mut apart: RefsApart,
    one: impl Fn(&'a FileExtract, &[RawRef]) -> FileLinks<'a> + Sync,
) -> BTreeMap<String, FileLinks<'a>> {
    let work: Vec<_> = files
        .iter()
        .map(|&(_, ex)| (ex, apart.remove(&ex.path)))
        .collect();
    work.into_par_iter()
        .map(|(ex, held)| {
            let held = held.map(|h| h.into_refs(decode_body)).unwrap_or_default();
            (ex.path.clone(), one(ex, &held))
        })
        .collect()
}
