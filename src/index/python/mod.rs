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
//! - [`texts`] — the literals and comments of bodies, for the text index.
//!
//! Keys follow dotted module paths: `{file}-{module}` for a file's module
//! (`src/flask/app.py-flask.app`), `{file}-{module}-{qualname}` for what
//! it defines (`…-flask.app-Flask.run`), with `()` after a function
//! whose locals they are (`…-create_app().FlaskTask`).
//!
//! Nothing outside this folder names it but the registry
//! ([`crate::index::languages`]).
pub mod exprs;
pub mod extract;
pub mod imports;
pub mod interface;
pub mod layout;
pub mod resolve;
pub mod table;
mod texts;

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet as HashSet;
use tree_sitter::Tree;

pub use extract::PyExtractor;

use crate::index::lang::{self, Extractor, Language, Stored, SymbolTable};
use crate::index::links::{FileLinks, RefsApart};
use crate::index::names::{self, Name, SpreadFacts};
use crate::model::{Entity, FileContext, FileExtract, LanguageId, RawRef};

/// Python's place in the registry.
pub const ID: LanguageId = LanguageId(1);

/// Changes whenever the extractor or the stored extract changes.
pub const EXTRACT_VERSION: &str = "graphctx-python-2";

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

    fn claims(&self, file_name: &str) -> bool {
        file_name.ends_with(".py") || file_name.ends_with(".pyi")
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
        mentioned(extract, &[])
    }

    fn mentioned_with(&self, extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
        mentioned(extract, apart)
    }

    /// An interface edit reaches every Python file: imports, star
    /// imports, bases and hints chain names across modules further than
    /// names can bound cheaply.
    fn changed_names(&self, _before: &FileExtract, _after: &FileExtract) -> Option<HashSet<Name>> {
        None
    }

    fn spread_facts(&self, _extract: &FileExtract) -> SpreadFacts {
        SpreadFacts::default()
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
        Box::new(Resident { files })
    }
}

/// The names an extract spells, hashed and sorted.
fn mentioned(extract: &FileExtract, apart: &[RawRef]) -> Vec<Name> {
    let mut out: Vec<Name> = extract
        .refs
        .iter()
        .chain(apart)
        .flat_map(|r| r.path.iter())
        .chain(extract.uses.iter().flat_map(|u| u.path.iter()))
        .map(|s| names::hash(s))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
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

/// The table a server keeps: every Python file's interface, the table
/// itself built for each resolution (Python trees are small beside the
/// parse a save costs).
struct Resident {
    files: Vec<(FileContext, FileExtract)>,
}

impl SymbolTable for Resident {
    fn resolve_files<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        let all: Vec<(&'s FileContext, &'s FileExtract)> =
            self.files.iter().map(|(c, e)| (c, e)).collect();
        let table = table::Table::build(&all);
        resolve::resolve_against(&table, files, apart)
    }

    fn update(
        self: Box<Self>,
        changed: &dyn Fn(&str) -> bool,
        now: Vec<(FileContext, FileExtract)>,
    ) -> Box<dyn SymbolTable> {
        let mut files: Vec<(FileContext, FileExtract)> = self
            .files
            .into_iter()
            .filter(|(_, e)| !changed(&e.path))
            .collect();
        files.extend(now.into_iter().map(|(c, mut e)| {
            e.refs.clear();
            (c, e)
        }));
        files.sort_by(|a, b| a.1.path.cmp(&b.1.path));
        Box::new(Resident { files })
    }

    fn prepare_edits(&mut self) {}
}
