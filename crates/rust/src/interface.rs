//! A file's interface: the part of its extract that other files'
//! resolution can see.
//!
//! Resolution (see [`super::resolve`]) builds one symbol table from every
//! file and then resolves each file's own references against it. The
//! table reads a file's entities (keys, names, kinds, visibility, module
//! paths, signatures, owners, traits, parents), its `use` and `mod`
//! declarations, its context and the two kinds of reference that place
//! impl blocks (`impl Trait for Owner`). It never reads a file's other
//! references, line numbers or doc comments: those only shape the links
//! whose origin is that file.
//!
//! So an edit that leaves a file's interface as it was — a changed body,
//! a comment, lines shifted — cannot change another file's links, and the
//! index re-resolves that file alone. The index stores the interface and
//! the remaining references apart, so such a run reads the interfaces of
//! the other files (to build the table) and not their references.

use serde::Serialize;

use crate::model::{
    ChildDecl, Entity, FileContext, FileExtract, ParseStatus, RawRef, RefKind, UseDecl,
};
use crate::support::packed::{pack, unpack};

/// Whether the symbol table reads references of this kind.
pub fn is_interface_ref(kind: RefKind) -> bool {
    matches!(kind, RefKind::ImplOwner | RefKind::Implements)
}

/// Split an extract into its interface (an extract holding only the
/// references the table reads) and the rest of its references, in order.
pub fn split(mut extract: FileExtract) -> (FileExtract, Vec<RawRef>) {
    let body = take_apart(&mut extract);
    (extract, body)
}

/// [`split`] in place: the extract keeps its interface references and the
/// others are returned, in order. The others stay in the allocation they
/// were made in (interface references are few, and copied out).
pub fn take_apart(extract: &mut FileExtract) -> Vec<RawRef> {
    let mut body = std::mem::take(&mut extract.refs);
    extract.refs = body
        .iter()
        .filter(|r| is_interface_ref(r.kind))
        .cloned()
        .collect();
    body.retain(|r| !is_interface_ref(r.kind));
    body
}

/// A copy of the interface part of an extract (what [`split`] keeps),
/// without copying the other references.
pub fn interface_copy(extract: &FileExtract) -> FileExtract {
    FileExtract {
        path: extract.path.clone(),
        status: extract.status,
        syntax_errors: extract.syntax_errors,
        entities: extract.entities.clone(),
        refs: extract
            .refs
            .iter()
            .filter(|r| is_interface_ref(r.kind))
            .cloned()
            .collect(),
        uses: extract.uses.clone(),
        children: extract.children.clone(),
        context: extract.context.clone(),
        language: extract.language,
        texts: Vec::new(),
    }
}

/// [`split`] in place, dropping the other references.
pub fn keep_interface(extract: &mut FileExtract) {
    extract.refs.retain(|r| is_interface_ref(r.kind));
}

/// The whole extract again from what [`split`] made. Reference order
/// differs from the parse (interface references first); resolution does
/// not depend on it.
pub fn join(mut interface: FileExtract, body: Vec<RawRef>) -> FileExtract {
    interface.refs.extend(body);
    share_names(&mut interface.refs);
    interface
}

/// Make references read back from storage share their `from` key and
/// `scope` again, as the extractor made them: each decoded reference
/// otherwise holds copies of its own.
fn share_names(refs: &mut [RawRef]) {
    let mut froms: rustc_hash::FxHashSet<std::sync::Arc<str>> = Default::default();
    let mut scopes: rustc_hash::FxHashSet<std::sync::Arc<[String]>> = Default::default();
    for r in refs {
        match froms.get(&*r.from) {
            Some(shared) => r.from = shared.clone(),
            None => {
                froms.insert(r.from.clone());
            }
        }
        match scopes.get(&*r.scope) {
            Some(shared) => r.scope = shared.clone(),
            None => {
                scopes.insert(r.scope.clone());
            }
        }
    }
}

/// The stored form of [`split`]'s interface, serialised from a borrowed
/// extract: field for field a `FileExtract` (MessagePack, named fields).
#[derive(Serialize)]
struct InterfaceView<'a> {
    path: &'a str,
    status: ParseStatus,
    syntax_errors: u32,
    entities: &'a [Entity],
    refs: Vec<&'a RawRef>,
    uses: &'a [UseDecl],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    children: &'a [ChildDecl],
    context: &'a FileContext,
}

/// The stored forms of an extract (`code_interface`, `code_extract`):
/// MessagePack with field names (self-describing, so optional fields can
/// come and go), compressed with zstd ([`crate::support::packed`]). The names repeat in every entity
/// and reference, so a file's blobs shrink about tenfold (the registry
/// tree's 486 MB of stored extracts to about 50 MB), and decompressing
/// costs less than decoding.
pub use crate::index::lang::Stored;

/// The stored forms of an extract: its interface and its other
/// references.
pub fn encode(extract: &FileExtract) -> Stored {
    let (iface, body): (Vec<&RawRef>, Vec<&RawRef>) =
        extract.refs.iter().partition(|r| is_interface_ref(r.kind));
    let view = InterfaceView {
        path: &extract.path,
        status: extract.status,
        syntax_errors: extract.syntax_errors,
        entities: &extract.entities,
        refs: iface,
        uses: &extract.uses,
        children: &extract.children,
        context: &extract.context,
    };
    Stored {
        iface: pack(&rmp_serde::to_vec_named(&view).unwrap_or_default()),
        body: pack(&rmp_serde::to_vec_named(&body).unwrap_or_default()),
    }
}

/// A stored interface; `None` for a blob this version cannot read (the
/// file is then parsed again).
pub fn decode_interface(bytes: &[u8]) -> Option<FileExtract> {
    let mut extract: FileExtract = rmp_serde::from_slice(&unpack(bytes)?).ok()?;
    extract.language = super::ID;
    for e in &mut extract.entities {
        e.language = super::ID;
    }
    share_paths(&mut extract.entities);
    Some(extract)
}

/// Make entities read back from storage share their file and module
/// paths and their parents' keys again, as the extractor made them (a
/// server holds every file's interface).
fn share_paths(entities: &mut [Entity]) {
    let keys: rustc_hash::FxHashSet<std::sync::Arc<str>> =
        entities.iter().map(|e| e.key.clone()).collect();
    for e in entities.iter_mut() {
        if let Some(shared) = e.parent.as_ref().and_then(|p| keys.get(p)) {
            e.parent = Some(shared.clone());
        }
    }
    let Some((first, rest)) = entities.split_first_mut() else {
        return;
    };
    let mut modules: Vec<std::sync::Arc<[String]>> = vec![first.module_path.clone()];
    for e in rest {
        if e.file == first.file {
            e.file = first.file.clone();
        }
        match modules.iter().find(|m| **m == e.module_path) {
            Some(shared) => e.module_path = shared.clone(),
            None => modules.push(e.module_path.clone()),
        }
    }
}

/// A file's stored other references; `None` as for [`decode_interface`].
pub fn decode_body(bytes: &[u8]) -> Option<Vec<RawRef>> {
    rmp_serde::from_slice(&unpack(bytes)?).ok()
}

/// Whether two extracts show other files the same: if so, no other
/// file's links can differ. Lines, docs and the count of syntax errors
/// are left out, so adding a line to a body or editing a doc comment
/// keeps it. Compared in place, field by field (a save of a large file
/// compares its interface before and after; copying and serialising both
/// to hash them took 4–5 ms on a 1,600-entity file).
pub fn same_interface(a: &FileExtract, b: &FileExtract) -> bool {
    a.path == b.path
        && a.status == b.status
        && a.context == b.context
        && a.children == b.children
        && a.entities.len() == b.entities.len()
        && a.uses.len() == b.uses.len()
        && a.entities
            .iter()
            .zip(&b.entities)
            .all(|(x, y)| x.file == y.file && same_entity_facts(x, y))
        && a.uses.iter().zip(&b.uses).all(|(x, y)| same_use(x, y))
        && {
            let (x, y) = (interface_refs(a), interface_refs(b));
            x.len() == y.len() && x.iter().zip(&y).all(|(x, y)| same_ref(x, y))
        }
}

/// The references the symbol table reads.
fn interface_refs(extract: &FileExtract) -> Vec<&RawRef> {
    extract
        .refs
        .iter()
        .filter(|r| is_interface_ref(r.kind))
        .collect()
}

/// An entity as other files' resolution reads it: everything but where
/// it is in its file (file, lines) and its doc comment. Every field is
/// named, so that a new one is not left out unseen.
pub(crate) fn same_entity_facts(a: &Entity, b: &Entity) -> bool {
    let Entity {
        key,
        kind,
        name,
        visibility,
        file: _,
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

/// References equal but for their line.
fn same_ref(a: &RawRef, b: &RawRef) -> bool {
    let RawRef {
        from,
        kind,
        path,
        line: _,
        scope,
        self_type,
        on_self,
        receiver,
    } = a;
    (from, kind, path, scope) == (&b.from, &b.kind, &b.path, &b.scope)
        && (self_type, on_self, receiver) == (&b.self_type, &b.on_self, &b.receiver)
}

/// A `use` as other files' resolution reads it: everything but its line.
pub(crate) fn same_use(a: &UseDecl, b: &UseDecl) -> bool {
    let UseDecl {
        from,
        scope,
        path,
        alias,
        glob,
        is_pub,
        line: _,
    } = a;
    *from == b.from
        && *scope == b.scope
        && *path == b.path
        && *alias == b.alias
        && *glob == b.glob
        && *is_pub == b.is_pub
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FileContext;
    use crate::RustExtractor;

    fn extract(src: &str) -> FileExtract {
        let ctx = FileContext {
            path: "src/lib.rs".into(),
            package: "demo".into(),
            unit: "demo".into(),
            module_path: vec![],
            is_test_file: false,
            path_aliases: Vec::new(),
        };
        RustExtractor::new().extract(&ctx, src)
    }

    #[test]
    fn a_body_edit_keeps_the_interface() {
        let a = extract("/// Doc.\npub fn f() -> u8 { 1 }\nstruct S;\nimpl Clone for S { fn clone(&self) -> S { S } }\n");
        let b = extract("\n/// Other doc.\npub fn f() -> u8 {\n    g();\n    2\n}\nstruct S;\nimpl Clone for S { fn clone(&self) -> S { S } }\n");
        assert!(same_interface(&a, &b));
    }

    #[test]
    fn a_signature_a_name_or_a_use_changes_it() {
        let base = extract("pub fn f() -> u8 { 1 }\n");
        for other in [
            "pub fn f() -> u16 { 1 }\n",
            "pub fn g() -> u8 { 1 }\n",
            "fn f() -> u8 { 1 }\n",
            "use std::fmt;\npub fn f() -> u8 { 1 }\n",
            "pub fn f() -> u8 { 1 }\npub fn g() {}\n",
            "pub fn f<T: Clone>() -> u8 { 1 }\n",
            "#[test]\npub fn f() -> u8 { 1 }\n",
        ] {
            assert!(!same_interface(&base, &extract(other)), "{other}");
        }
        // A `use` moved to another line is the same `use`.
        assert!(same_interface(
            &extract("use std::fmt;\npub fn f() -> u8 { 1 }\n"),
            &extract("\n\nuse std::fmt;\npub fn f() -> u8 { 1 }\n"),
        ));
    }

    #[test]
    fn the_stored_forms_read_back_as_the_extract() {
        let full = extract("struct S;\nimpl Clone for S { fn clone(&self) -> S { helper(); S } }\nfn helper() {}\nmod m;\n");
        let Stored { iface, body } = encode(&full);
        let back = join(
            decode_interface(&iface).unwrap(),
            decode_body(&body).unwrap(),
        );
        let shared = |ex: &FileExtract| {
            let (a, b) = (&ex.entities[1], &ex.entities[2]);
            let method = ex.entities.iter().find(|e| &*e.name == "clone").unwrap();
            std::sync::Arc::ptr_eq(&a.file, &b.file)
                && std::sync::Arc::ptr_eq(&a.module_path, &b.module_path)
                && std::sync::Arc::ptr_eq(method.parent.as_ref().unwrap(), &b.key)
        };
        assert!(shared(&full) && shared(&back));
        let (want_iface, want_body) = split(full);
        assert_eq!(back, join(want_iface, want_body));
    }

    #[test]
    fn a_blob_stored_before_compression_reads_as_none() {
        // Uncompressed MessagePack, as indexes of an older extract version
        // hold: not read (the file is parsed again), never a panic.
        let full = extract("pub fn f() {}\n");
        let plain = rmp_serde::to_vec_named(&full.refs).unwrap();
        assert!(decode_body(&plain).is_none());
        assert!(decode_interface(&plain).is_none());
        assert!(decode_interface(&[]).is_none());
    }

    #[test]
    fn split_and_join_keep_every_reference() {
        let full = extract("struct S;\nimpl Clone for S { fn clone(&self) -> S { helper(); S } }\nfn helper() {}\n");
        let (iface, body) = split(full.clone());
        assert!(iface.refs.iter().all(|r| is_interface_ref(r.kind)));
        assert!(body.iter().all(|r| !is_interface_ref(r.kind)));
        let mut joined = join(iface, body).refs;
        let mut original = full.refs;
        let order = |r: &RawRef| (r.line, r.kind, r.path.clone(), r.from.clone());
        joined.sort_by_key(order);
        original.sort_by_key(order);
        assert_eq!(joined, original);
    }
}
