//! Rust: everything the index knows about the language, behind
//! [`Language`] (see [`crate::index::lang`]).
//!
//! - [`layout`] — the Cargo layout: packages, targets, and the crate and
//!   module of every file (from `mod` declarations, `#[path]` honoured).
//! - [`extract`] — one file's tree-sitter parse into a `FileExtract`.
//! - [`resolve`] — name resolution over all extracts into edges.
//! - [`interface`] — what of a file other files' resolution can see.
//! - [`names`] — which names an interface change touches.
//! - [`types`] — declared types parsed into structure, std's common types.
//!
//! Nothing outside this crate names it but the binary's assembly
//! (`src/languages.rs`), which installs it in the index's registry
//! ([`crate::index::languages`]).
use graphctx_base::model;
use graphctx_base::support;
use graphctx_index as index;

pub mod extract;
pub mod interface;
pub mod keys;
pub mod layout;
pub mod names;
pub mod resolve;
pub mod types;

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet as HashSet;
use tree_sitter::Tree;

pub use extract::RustExtractor;

use crate::index::lang::{self, Extractor, Language, Stored, SymbolTable};
use crate::index::links::{FileLinks, RefsApart};
use crate::index::names::{Name, SpreadFacts};
use crate::model::{ChildDecl, Entity, FileContext, FileExtract, LanguageId, RawRef};

/// Rust's place in the registry.
pub const ID: LanguageId = LanguageId(0);

/// Changes whenever the extractor or the `FileExtract` format changes, so
/// every file of an index written by an older graphctx is parsed again
/// instead of being resolved from a stale extract.
pub const EXTRACT_VERSION: &str = "graphctx-extract-6";

/// The Rust language.
pub struct Rust;

impl Language for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn id(&self) -> LanguageId {
        ID
    }

    fn extract_version(&self) -> &'static str {
        EXTRACT_VERSION
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["rs"]
    }

    fn common_file_names(&self) -> &'static [&'static str] {
        &["lib.rs", "mod.rs", "main.rs", "build.rs"]
    }

    fn directory_module_stems(&self) -> &'static [&'static str] {
        &["mod"]
    }

    fn output_dirs(&self) -> &'static [&'static str] {
        &["target"]
    }

    /// A package's build script (`build.rs`) builds; the rest by their
    /// directories (`benches/`, `examples/`, `tests/` are Cargo's).
    fn file_role(&self, path: &str, is_test: bool) -> lang::FileRole {
        match path.rsplit('/').next() {
            Some("build.rs") => lang::FileRole::Build,
            _ => lang::default_role(path, is_test),
        }
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["Cargo.toml"]
    }

    fn tail_names<'k>(&self, tail: &'k str) -> Vec<&'k str> {
        let (module, item) = keys::tail_parts(tail);
        module
            .split("::")
            .chain(item.split("::"))
            .filter(|s| !s.is_empty() && *s != "crate")
            .collect()
    }

    fn qualified_name(&self, tail: &str) -> String {
        match keys::tail_parts(tail) {
            ("crate", item) => format!("crate::{item}"),
            (module, item) => format!("crate::{module}::{item}"),
        }
    }

    fn import_line(&self, tail: &str) -> String {
        format!("use {};", self.qualified_name(tail))
    }

    fn layout(
        &self,
        manifests: &BTreeMap<String, String>,
        files: &BTreeSet<String>,
    ) -> Box<dyn lang::Layout> {
        Box::new(layout::Layout::new(manifests, files))
    }

    fn extractor(&self) -> Box<dyn Extractor> {
        Box::new(RustExtractor::new())
    }

    fn encode(&self, extract: &FileExtract) -> Stored {
        interface::encode(extract)
    }

    fn decode_interface(&self, bytes: &[u8]) -> Option<FileExtract> {
        interface::decode_interface(bytes)
    }

    fn decode_body(&self, bytes: &[u8]) -> Option<Vec<RawRef>> {
        interface::decode_body(bytes)
    }

    fn take_apart(&self, extract: &mut FileExtract) -> Vec<RawRef> {
        interface::take_apart(extract)
    }

    fn join(&self, iface: FileExtract, body: Vec<RawRef>) -> FileExtract {
        interface::join(iface, body)
    }

    fn interface_copy(&self, extract: &FileExtract) -> FileExtract {
        interface::interface_copy(extract)
    }

    fn keep_interface(&self, extract: &mut FileExtract) {
        interface::keep_interface(extract)
    }

    fn same_interface(&self, a: &FileExtract, b: &FileExtract) -> bool {
        interface::same_interface(a, b)
    }

    fn same_entity_facts(&self, a: &Entity, b: &Entity) -> bool {
        interface::same_entity_facts(a, b)
    }

    fn mentioned(&self, extract: &FileExtract) -> Vec<Name> {
        names::mentioned(extract)
    }

    fn mentioned_with(&self, extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
        names::mentioned_with(extract, apart)
    }

    fn changed_names(&self, before: &FileExtract, after: &FileExtract) -> Option<HashSet<Name>> {
        names::changed(before, after)
    }

    fn spread_facts(&self, extract: &FileExtract) -> SpreadFacts {
        names::spread_facts(extract)
    }

    fn resolve_files<'a>(
        &self,
        files: &[(&'a FileContext, &'a FileExtract)],
        wanted: &dyn Fn(&str) -> bool,
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'a>> {
        resolve::resolve_files(files, wanted, apart)
    }

    fn symbol_table(&self, files: Vec<(FileContext, FileExtract)>) -> Box<dyn SymbolTable> {
        Box::new(resolve::ResidentTable::build(files))
    }
}

impl Extractor for RustExtractor {
    fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract {
        RustExtractor::extract(self, ctx, source)
    }

    fn parse(&mut self, source: &str, old: Option<&Tree>) -> Option<Tree> {
        RustExtractor::parse(self, source, old)
    }

    fn extract_tree(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract {
        RustExtractor::extract_tree(self, ctx, source, tree)
    }
}

impl lang::Layout for layout::Layout {
    fn digest(&self) -> String {
        layout::Layout::digest(self)
    }

    fn guess(&self, rel: &str) -> FileContext {
        layout::Layout::guess(self, rel)
    }

    fn contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        layout::Layout::contexts(self, files, decls_of)
    }

    fn reached_contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        layout::Layout::reached_contexts(self, files, decls_of)
    }

    fn root_contexts(&self, files: &BTreeSet<String>) -> Vec<(String, FileContext)> {
        layout::Layout::root_contexts(self, files)
    }

    fn child_contexts(
        &self,
        file: &str,
        children_beside: bool,
        parent: &FileContext,
        decls: &[ChildDecl],
        files: &BTreeSet<String>,
    ) -> Vec<(String, bool, FileContext)> {
        layout::Layout::child_contexts(self, file, children_beside, parent, decls, files)
    }
}

impl SymbolTable for resolve::ResidentTable {
    fn resolve_files<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        resolve::ResidentTable::resolve_files(self, files, apart)
    }

    fn update(
        self: Box<Self>,
        changed: &dyn Fn(&str) -> bool,
        now: Vec<(FileContext, FileExtract)>,
    ) -> Box<dyn SymbolTable> {
        Box::new(resolve::ResidentTable::update(*self, changed, now))
    }

    fn prepare_edits(&mut self) {
        resolve::ResidentTable::prepare_edits(self)
    }
}
