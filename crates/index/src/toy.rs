//! A language for the index core's own tests: it claims `*.toy` files
//! and reads `Toy.toml` manifests, places every file in one package
//! under its path, and extracts one module entity per file. The core's
//! tests (the walk, its record) exercise the pipeline's mechanics through
//! it, with no real language in the crate; what a real language does
//! with the core is tested in its own crate and at the top.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet as HashSet;
use tree_sitter::Tree;

use crate::lang::{Extractor, Language, Layout, Stored, SymbolTable};
use crate::links::{FileLinks, RefsApart};
use crate::model::{ChildDecl, Entity, FileContext, FileExtract, LanguageId, ParseStatus, RawRef};
use crate::names::{Name, SpreadFacts};

/// The toy language; install it with [`install`].
pub struct Toy;

/// Installs the toy as the only language (every test of the crate that
/// walks or indexes calls this first).
pub fn install() {
    crate::languages::install(vec![&Toy]);
}

impl Language for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }
    fn id(&self) -> LanguageId {
        LanguageId(0)
    }
    fn extract_version(&self) -> &'static str {
        "toy 1"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["toy"]
    }
    fn common_file_names(&self) -> &'static [&'static str] {
        &["lib.toy"]
    }
    fn directory_module_stems(&self) -> &'static [&'static str] {
        &[]
    }
    fn tail_names<'k>(&self, tail: &'k str) -> Vec<&'k str> {
        vec![tail]
    }
    fn qualified_name(&self, tail: &str) -> String {
        tail.to_string()
    }
    fn manifests(&self) -> &'static [&'static str] {
        &["Toy.toml"]
    }
    fn layout(
        &self,
        manifests: &BTreeMap<String, String>,
        _files: &BTreeSet<String>,
    ) -> Box<dyn Layout> {
        Box::new(ToyLayout(format!("{manifests:?}")))
    }
    fn extractor(&self) -> Box<dyn Extractor> {
        Box::new(ToyExtractor)
    }
    fn encode(&self, _extract: &FileExtract) -> Stored {
        Stored {
            iface: Vec::new(),
            body: Vec::new(),
        }
    }
    fn decode_interface(&self, _bytes: &[u8]) -> Option<FileExtract> {
        None
    }
    fn decode_body(&self, _bytes: &[u8]) -> Option<Vec<RawRef>> {
        None
    }
    fn take_apart(&self, extract: &mut FileExtract) -> Vec<RawRef> {
        std::mem::take(&mut extract.refs)
    }
    fn join(&self, mut interface: FileExtract, body: Vec<RawRef>) -> FileExtract {
        interface.refs = body;
        interface
    }
    fn interface_copy(&self, extract: &FileExtract) -> FileExtract {
        extract.clone()
    }
    fn keep_interface(&self, extract: &mut FileExtract) {
        extract.refs.clear();
    }
    fn same_interface(&self, a: &FileExtract, b: &FileExtract) -> bool {
        a.entities == b.entities
    }
    fn same_entity_facts(&self, a: &Entity, b: &Entity) -> bool {
        a == b
    }
    fn mentioned(&self, _extract: &FileExtract) -> Vec<Name> {
        Vec::new()
    }
    fn mentioned_with(&self, _extract: &FileExtract, _apart: &[RawRef]) -> Vec<Name> {
        Vec::new()
    }
    fn changed_names(&self, _before: &FileExtract, _after: &FileExtract) -> Option<HashSet<Name>> {
        None
    }
    fn spread_facts(&self, _extract: &FileExtract) -> SpreadFacts {
        SpreadFacts::default()
    }
    fn resolve_files<'a>(
        &self,
        files: &[(&'a FileContext, &'a FileExtract)],
        _wanted: &dyn Fn(&str) -> bool,
        _apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'a>> {
        files
            .iter()
            .map(|(ctx, _)| (ctx.path.clone(), FileLinks::default()))
            .collect()
    }
    fn symbol_table(&self, _files: Vec<(FileContext, FileExtract)>) -> Box<dyn SymbolTable> {
        Box::new(ToyTable)
    }
}

/// One package; a file's module is its path.
#[derive(Debug)]
struct ToyLayout(String);

impl ToyLayout {
    fn context(rel: &str) -> FileContext {
        FileContext {
            path: rel.to_string(),
            package: "toy".into(),
            unit: "toy".into(),
            module_path: vec![rel.trim_end_matches(".toy").replace('/', "_")],
            is_test_file: false,
            path_aliases: Vec::new(),
        }
    }
}

impl Layout for ToyLayout {
    fn digest(&self) -> String {
        self.0.clone()
    }
    fn guess(&self, rel: &str) -> FileContext {
        Self::context(rel)
    }
    fn contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        _decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        files
            .iter()
            .map(|f| (f.clone(), Self::context(f)))
            .collect()
    }
    fn reached_contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext> {
        self.contexts(files, decls_of)
    }
    fn root_contexts(&self, files: &BTreeSet<String>) -> Vec<(String, FileContext)> {
        files
            .iter()
            .map(|f| (f.clone(), Self::context(f)))
            .collect()
    }
    fn child_contexts(
        &self,
        _file: &str,
        _mod_rs: bool,
        _parent: &FileContext,
        _decls: &[ChildDecl],
        _files: &BTreeSet<String>,
    ) -> Vec<(String, bool, FileContext)> {
        Vec::new()
    }
}

/// A file's extract: its module entity alone.
struct ToyExtractor;

impl Extractor for ToyExtractor {
    fn extract(&mut self, ctx: &FileContext, _source: &str) -> FileExtract {
        FileExtract {
            path: ctx.path.clone(),
            status: ParseStatus::Ok,
            syntax_errors: 0,
            entities: Vec::new(),
            refs: Vec::new(),
            uses: Vec::new(),
            children: Vec::new(),
            context: ctx.clone(),
            language: LanguageId(0),
            texts: Vec::new(),
        }
    }
    fn parse(&mut self, _source: &str, _old: Option<&Tree>) -> Option<Tree> {
        None
    }
    fn extract_tree(&mut self, ctx: &FileContext, source: &str, _tree: &Tree) -> FileExtract {
        self.extract(ctx, source)
    }
}

/// Nothing to resolve against.
struct ToyTable;

impl SymbolTable for ToyTable {
    fn resolve_files<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        _apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>> {
        files
            .iter()
            .map(|(ctx, _)| (ctx.path.clone(), FileLinks::default()))
            .collect()
    }
    fn update(
        self: Box<Self>,
        _changed: &dyn Fn(&str) -> bool,
        _now: Vec<(FileContext, FileExtract)>,
    ) -> Box<dyn SymbolTable> {
        self
    }
    fn prepare_edits(&mut self) {}
}
