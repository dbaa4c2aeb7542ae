//! Python: everything the index knows about the language, behind
//! [`Language`] (see [`crate::index::lang`]).
//!
//! - [`layout`] — import roots (`pyproject.toml`/`setup.cfg`/`setup.py`,
//!   `src/` layouts) and the dotted module of every file.
//! - [`extract`] — one file's parse into entities, imports
//!   ([`imports`]) and references ([`exprs`]).
//! - [`table`] — the symbol table: modules, scopes, classes with their
//!   bases, and what names, attributes and calls mean.
//! - [`resolve`] — references into edges over the table.
//! - [`interface`] — what of a file other files' resolution reads, and
//!   the stored forms.
//! - [`names`] — the names a file mentions and an interface edit
//!   touches: which files an edit re-resolves.
//! - [`texts`] — the literals and comments of bodies, for the text index.
//! - [`encoding`] — a file's text as Python reads it (PEP 263).
//!
//! Keys follow dotted module paths: `{file}-{module}` for a file's module
//! (`src/flask/app.py-flask.app`), `{file}-{module}-{qualname}` for what
//! it defines (`…-flask.app-Flask.run`), with `()` after a function
//! whose locals they are (`…-create_app().FlaskTask`).
//!
//! Nothing outside this crate names it but the binary's assembly
//! (`src/languages.rs`), which installs it in the index's registry
//! ([`crate::index::languages`]).
use graphctx_base::model;
use graphctx_index as index;

mod encoding;
pub mod exprs;
pub mod extract;
pub mod imports;
pub mod interface;
pub mod layout;
mod names;
pub mod resolve;
pub mod table;
mod texts;

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet as HashSet;
use tree_sitter::Tree;

pub use extract::PyExtractor;

use crate::index::lang::{self, Extractor, Language, Stored, SymbolTable};
use crate::index::links::{FileLinks, RefsApart};
use crate::index::names::{Name, SpreadFacts};
use crate::index::rebuilt::{Rebuilt, WholeTable};
use crate::model::{Entity, FileContext, FileExtract, LanguageId, RawRef};

/// Python's place in the registry.
pub const ID: LanguageId = LanguageId(1);

/// Changes whenever the extractor or the stored extract changes.
pub const EXTRACT_VERSION: &str = "graphctx-python-4";

/// The Python language.
pub struct Python;

impl Language for Python {
    fn name(&self) -> &'static str {
        "python"
    }

    fn id(&self) -> LanguageId {
        ID
    }

    fn extract_version(&self) -> &'static str {
        EXTRACT_VERSION
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["py", "pyi"]
    }

    fn common_file_names(&self) -> &'static [&'static str] {
        &["__init__.py", "__init__.pyi", "__main__.py", "conftest.py"]
    }

    fn directory_module_stems(&self) -> &'static [&'static str] {
        &["__init__"]
    }

    fn tail_names<'k>(&self, tail: &'k str) -> Vec<&'k str> {
        let (module, qualname) = tail_parts(tail);
        module
            .split('.')
            .chain(qualname.into_iter().flat_map(|q| q.split('.')))
            .map(|s| s.trim_end_matches("()"))
            .filter(|s| !s.is_empty())
            .collect()
    }

    fn qualified_name(&self, tail: &str) -> String {
        match tail_parts(tail) {
            (module, None) => module.to_string(),
            (module, Some(qualname)) => format!("{module}.{qualname}"),
        }
    }

    fn import_line(&self, tail: &str) -> String {
        match tail_parts(tail) {
            (module, None) => format!("import {module}"),
            (module, Some(qualname)) => {
                let first = qualname.split('.').next().unwrap_or(qualname);
                format!("from {module} import {}", first.trim_end_matches("()"))
            }
        }
    }

    /// A project's `setup.py` and `noxfile.py` build; the rest by their
    /// directories.
    fn file_role(&self, path: &str, is_test: bool) -> lang::FileRole {
        match path.rsplit('/').next() {
            Some("setup.py" | "noxfile.py") => lang::FileRole::Build,
            _ => lang::default_role(path, is_test),
        }
    }

    fn manifests(&self) -> &'static [&'static str] {
        &["pyproject.toml", "setup.cfg", "setup.py"]
    }

    fn layout(
        &self,
        manifests: &BTreeMap<String, String>,
        files: &BTreeSet<String>,
    ) -> Box<dyn lang::Layout> {
        Box::new(layout::Layout::new(manifests, files))
    }

    fn extractor(&self) -> Box<dyn Extractor> {
        Box::new(PyExtractor::new())
    }

    fn decode(&self, bytes: Vec<u8>) -> (String, Option<String>) {
        encoding::decode(bytes)
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
        extract.refs.clear();
    }

    fn same_interface(&self, a: &FileExtract, b: &FileExtract) -> bool {
        interface::same_interface(a, b)
    }

    fn same_entity_facts(&self, a: &Entity, b: &Entity) -> bool {
        interface::same_entity_facts(a, b)
    }

    fn mentioned(&self, extract: &FileExtract) -> Vec<Name> {
        names::mentioned(extract, &[])
    }

    fn mentioned_with(&self, extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
        names::mentioned(extract, apart)
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
        Box::new(Rebuilt::<table::Table<'static>>::build(files))
    }
}

impl Extractor for PyExtractor {
    fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract {
        PyExtractor::extract(self, ctx, source)
    }

    fn parse(&mut self, source: &str, old: Option<&Tree>) -> Option<Tree> {
        PyExtractor::parse(self, source, old)
    }

    fn extract_tree(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract {
        PyExtractor::extract_tree(self, ctx, source, tree)
    }
}

/// The table a server keeps, built again on an interface edit (see
/// `index::rebuilt`).
impl WholeTable for table::Table<'static> {
    fn build(files: &[(&'static FileContext, &'static FileExtract)]) -> Self {
        table::Table::build(files)
    }

    fn resolve<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        resolve::resolve_against(self, files, apart)
    }
}

/// A key's tail read back: its dotted module and, for what a module
/// defines, its qualified name, without a twin mark
/// (`flask.app-Flask.run#2` → `flask.app`, `Flask.run`).
fn tail_parts(tail: &str) -> (&str, Option<&str>) {
    let tail = tail.split('#').next().unwrap_or(tail);
    match tail.split_once('-') {
        Some((module, qualname)) => (module, Some(qualname)),
        None => (tail, None),
    }
}
