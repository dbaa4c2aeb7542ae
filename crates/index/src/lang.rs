//! The seam between the index and the languages it reads.
//!
//! A language plugs in by implementing [`Language`] and being listed in
//! [`super::languages`]: it says which files it claims and where each sits
//! in its packages ([`Layout`]), how a file's bytes decode into its text
//! ([`Language::decode`]), turns one file into a [`FileExtract`]
//! ([`Extractor`]), splits an extract into the interface other files'
//! resolution reads and the rest (and stores both), names what an
//! interface edit touches, and resolves references against a symbol table
//! of every file's interface ([`SymbolTable`]). The pipeline — walk, hash,
//! diff, incremental bookkeeping, write, usage, text — handles files,
//! extracts and [`FileLinks`] through this trait and never looks inside a
//! language's folder.
//!
//! A file belongs to the first language of the registry that claims its
//! name; resolution runs per language over that language's files.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashSet as HashSet;
use tree_sitter::Tree;

use super::links::{FileLinks, RefsApart};
use super::names::{Name, SpreadFacts};
use crate::model::{ChildDecl, Entity, FileContext, FileExtract, LanguageId, RawRef};

/// One language the index reads. Implementations are unit structs listed
/// once in [`super::languages`]; every method is a pure function of its
/// arguments, so a full and an incremental run agree.
pub trait Language: Send + Sync + 'static {
    /// Its name (`rust`), as entities carry it ([`Entity::language`]).
    fn name(&self) -> &'static str;
    /// Its place in the registry, stamped on its entities.
    fn id(&self) -> LanguageId;
    /// Changes whenever its extractor or its stored extract format
    /// changes, so every file of an index written by an older graphctx is
    /// parsed again instead of being resolved from a stale extract.
    fn extract_version(&self) -> &'static str;

    /// The extensions of its source files, without the dot (`rs`; `py`,
    /// `pyi`): git history reads the files `*.{ext}`
    /// ([`super::history`]).
    fn extensions(&self) -> &'static [&'static str];
    /// Whether a file of this name is one of its sources: by default, one
    /// ending in `.{ext}` for one of its [`Language::extensions`].
    fn claims(&self, file_name: &str) -> bool {
        file_name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| self.extensions().contains(&ext))
    }
    /// What a file is there for (`is_test`: its layout calls it a test):
    /// by default [`default_role`], its directories' names.
    fn file_role(&self, path: &str, is_test: bool) -> FileRole {
        default_role(path, is_test)
    }
    /// Words a report uses for this language's type declarations
    /// ([`FileRole::Declarations`]) beyond "type" and "declaration": its
    /// name, its declaration files' suffix.
    fn declaration_words(&self) -> &'static str {
        ""
    }
    /// File names nearly every package of the language holds (`lib.rs`,
    /// `mod.rs`; `__init__.py`): a path ending in one names no file
    /// without its directory.
    fn common_file_names(&self) -> &'static [&'static str];
    /// File stems whose module is their directory's (`mod`; `__init__`):
    /// a path read as one name drops them.
    fn directory_module_stems(&self) -> &'static [&'static str];
    /// Directories its tools write build output to (`target`), which a
    /// server's file watch does not follow (the walk reads them unless
    /// they are ignored).
    fn output_dirs(&self) -> &'static [&'static str] {
        &[]
    }
    /// The names of the manifests that decide its layout (`Cargo.toml`):
    /// the walk hands their texts to [`Language::layout`], and a change
    /// to one means a new walk.
    fn manifests(&self) -> &'static [&'static str];
    /// Whether a file of this name is one of its manifests: one of
    /// [`Language::manifests`], or a name the language matches otherwise
    /// (TypeScript: `tsconfig.*.json`, which a `tsconfig.json` extends).
    fn is_manifest(&self, name: &str) -> bool {
        self.manifests().contains(&name)
    }
    /// The packages of a tree: `manifests` maps a manifest's
    /// repository-relative path (`crates/x/Cargo.toml`) to its text, `files` holds the repository-relative paths of the
    /// sources it claims.
    fn layout(
        &self,
        manifests: &BTreeMap<String, String>,
        files: &BTreeSet<String>,
    ) -> Box<dyn Layout>;

    /// The names a key's tail (what follows `{file}-`, see
    /// [`super::keys`]) is made of, in order, with root markers and twin
    /// marks (`#2`) dropped; the last is the entity's own name. Rust
    /// `a::b-Foo::new` → `a b Foo new`; Python `flask.app-Flask.run` →
    /// `flask app Flask run`.
    fn tail_names<'k>(&self, tail: &'k str) -> Vec<&'k str>;
    /// A key's tail as the language writes the path it names: Rust
    /// `crate::a::b::Foo::new`, Python `flask.app.Flask.run`.
    fn qualified_name(&self, tail: &str) -> String;
    /// How code elsewhere imports what a key's tail names: Rust
    /// `use crate::a::Foo;`, Python `from flask.app import Flask`.
    fn import_line(&self, tail: &str) -> String {
        self.qualified_name(tail)
    }

    /// An extractor; one per thread, reused across files.
    fn extractor(&self) -> Box<dyn Extractor>;

    /// A source file's text from its bytes, and a note when some of them
    /// could not be read as they were meant (replaced by U+FFFD). UTF-8
    /// unless the language lets a file declare its encoding.
    fn decode(&self, bytes: Vec<u8>) -> (String, Option<String>) {
        decode_utf8(bytes)
    }

    /// The stored forms of an extract: its interface and its other
    /// references.
    fn encode(&self, extract: &FileExtract) -> Stored;
    /// A stored interface; `None` for a blob this version cannot read
    /// (the file is then parsed again).
    fn decode_interface(&self, bytes: &[u8]) -> Option<FileExtract>;
    /// A file's stored other references; `None` as for
    /// [`Language::decode_interface`].
    fn decode_body(&self, bytes: &[u8]) -> Option<Vec<RawRef>>;
    /// The extract keeps its interface references; the others are
    /// returned, in order.
    fn take_apart(&self, extract: &mut FileExtract) -> Vec<RawRef>;
    /// The whole extract again from its interface and other references.
    fn join(&self, interface: FileExtract, body: Vec<RawRef>) -> FileExtract;
    /// A copy of the interface part of an extract.
    fn interface_copy(&self, extract: &FileExtract) -> FileExtract;
    /// Drop the references that are not the interface's.
    fn keep_interface(&self, extract: &mut FileExtract);
    /// Whether two extracts show other files the same: if so, no other
    /// file's links can differ.
    fn same_interface(&self, a: &FileExtract, b: &FileExtract) -> bool;
    /// Whether two versions of an entity are the same to the symbol
    /// table and the usage rows (lines and docs aside).
    fn same_entity_facts(&self, a: &Entity, b: &Entity) -> bool;

    /// The names a whole extract mentions (sorted): what its resolution
    /// can look up ([`super::names`]).
    fn mentioned(&self, extract: &FileExtract) -> Vec<Name>;
    /// [`Language::mentioned`] of an interface and the references held
    /// apart from it.
    fn mentioned_with(&self, extract: &FileExtract, apart: &[RawRef]) -> Vec<Name>;
    /// The names an edit of one file's interface touches; `None` when the
    /// change reaches further than names can bound (every file of the
    /// language is resolved then).
    fn changed_names(&self, before: &FileExtract, after: &FileExtract) -> Option<HashSet<Name>>;
    /// What a file's interface tells the spreading of touched names.
    fn spread_facts(&self, extract: &FileExtract) -> SpreadFacts;

    /// Resolve the references of the files `wanted` picks against a
    /// symbol table of all `files` (its files only). The picked ones are
    /// whole extracts, or interfaces whose other references `apart`
    /// holds.
    fn resolve_files<'a>(
        &self,
        files: &[(&'a FileContext, &'a FileExtract)],
        wanted: &dyn Fn(&str) -> bool,
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'a>>;
    /// A symbol table a long-lived process keeps between runs, built from
    /// these interfaces (whole extracts are fine too).
    fn symbol_table(&self, files: Vec<(FileContext, FileExtract)>) -> Box<dyn SymbolTable>;
}

impl std::fmt::Debug for dyn Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Bytes read as UTF-8, invalid sequences replaced, with a note naming
/// the first.
pub fn decode_utf8(bytes: Vec<u8>) -> (String, Option<String>) {
    match String::from_utf8(bytes) {
        Ok(t) => (t, None),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            Some(format!(
                "not valid UTF-8 (first bad byte at offset {}); invalid bytes replaced",
                e.utf8_error().valid_up_to()
            )),
        ),
    }
}

/// The stored forms of an extract (`code_interface`, `code_extract`), as
/// its language encodes them.
pub struct Stored {
    pub iface: Vec<u8>,
    pub body: Vec<u8>,
}

/// Turns one file's text into its extract, from nothing but its context
/// and text.
pub trait Extractor: Send {
    /// Parse `source` once and extract everything from that one tree.
    fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract;
    /// Parse `source`, reusing `old` (the tree of the text before, edited
    /// to where the text changed) when given (see [`super::held_trees`]).
    fn parse(&mut self, source: &str, old: Option<&Tree>) -> Option<Tree>;
    /// Extract everything from `tree`, the parse of `source`.
    fn extract_tree(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract;
}

/// Where each of a language's files sits in its packages. A file's place
/// may follow from other files' declarations (Rust's `mod`): the pipeline
/// parses from the roots down the declarations, and settles every place
/// once every file's declarations are known.
pub trait Layout: Send + Sync {
    /// A digest of the packages: when it changes, files may sit elsewhere,
    /// so every file is extracted again.
    fn digest(&self) -> String;
    /// The context a file's path suggests.
    fn guess(&self, rel: &str) -> FileContext;
    /// The manifests it could not read, and why (path, reason): the
    /// layout goes on without them, and the summary reports them.
    fn unread(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// The context of every file in `files`: reached from a root through
    /// declarations (`decls_of` gives a file's), else guessed.
    fn contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext>;
    /// The contexts of the files reached from a root through
    /// declarations; a file whose declarations `decls_of` does not know
    /// yet ends its branch.
    fn reached_contexts<'m>(
        &self,
        files: &BTreeSet<String>,
        decls_of: &dyn Fn(&str) -> Option<&'m [ChildDecl]>,
    ) -> BTreeMap<String, FileContext>;
    /// The roots among `files`, each once, in its context (a root is
    /// "mod-rs": its children live beside it).
    fn root_contexts(&self, files: &BTreeSet<String>) -> Vec<(String, FileContext)>;
    /// The files among `files` that the declarations `decls` of `file` (in
    /// context `parent`, "mod-rs" or not) load, in declaration order, each
    /// with whether it is "mod-rs" and its context.
    fn child_contexts(
        &self,
        file: &str,
        children_beside: bool,
        parent: &FileContext,
        decls: &[ChildDecl],
        files: &BTreeSet<String>,
    ) -> Vec<(String, bool, FileContext)>;
}

/// A symbol table kept by a long-lived process between index runs (see
/// [`Language::symbol_table`]): right for as long as every file's
/// interface stays what it was.
pub trait SymbolTable: Send + Sync {
    /// Resolve `files` (whole extracts of files whose interfaces the
    /// table holds, or interfaces whose other references `apart` holds)
    /// against the table.
    fn resolve_files<'s>(
        &'s self,
        files: &[(&'s FileContext, &'s FileExtract)],
        apart: RefsApart,
    ) -> BTreeMap<String, FileLinks<'s>>;
    /// The table with the files `changed` names taken out and `now`
    /// (their interfaces, for those that still exist) put in.
    fn update(
        self: Box<Self>,
        changed: &dyn Fn(&str) -> bool,
        now: Vec<(FileContext, FileExtract)>,
    ) -> Box<dyn SymbolTable>;
    /// Make the indexes an edit's update reads.
    fn prepare_edits(&mut self);
}

/// A reference to an interface that is not tied to the borrow it came
/// from: for a [`SymbolTable`] that keeps the interfaces its table
/// borrows beside the table, in one value.
///
/// # Safety
///
/// The caller keeps `file` where it is and unchanged for as long as the
/// returned references are used: the owner holds the interfaces behind a
/// pointer (or in a vector it never changes) that it drops only after
/// the table that holds the references.
pub unsafe fn unbound<'x>(file: &(FileContext, FileExtract)) -> (&'x FileContext, &'x FileExtract) {
    let file: &'x (FileContext, FileExtract) =
        unsafe { &*(file as *const (FileContext, FileExtract)) };
    (&file.0, &file.1)
}

/// The directory of a manifest's repository-relative path (`""` for the
/// top): `crates/x/Cargo.toml` → `crates/x`.
pub fn manifest_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// What a file is there for: the code a change belongs in, or what
/// exercises, measures, shows, documents or builds that code (search
/// ranks those below the code unless a query is about them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRole {
    Code,
    Test,
    Bench,
    Example,
    Docs,
    Build,
    /// Type declarations with no behaviour of their own (TypeScript's
    /// `.d.ts`): a report about what code does is fixed in the code.
    Declarations,
    /// Build output the tree holds (a bundle committed under `dist/`): a
    /// copy of code that is fixed in its source.
    Generated,
}

/// A file's role: build output under one of its language's output
/// directories ([`Language::output_dirs`]: `target`, `dist`), which the
/// walk reads when the tree holds it, else what the language tells
/// ([`Language::file_role`]).
pub fn role_of(language: &dyn Language, path: &str, is_test: bool) -> FileRole {
    let under_output = path
        .split('/')
        .rev()
        .skip(1)
        .any(|d| language.output_dirs().contains(&d));
    if under_output {
        FileRole::Generated
    } else {
        language.file_role(path, is_test)
    }
}

/// A file's role told by its directories, as most languages lay them out:
/// under `bench/`, `benches/`, `benchmark/` or `benchmarks/` a benchmark;
/// else a test when its layout says so; else under `example/`,
/// `examples/` an example, under `doc/`, `docs/` documentation; else
/// code.
pub fn default_role(path: &str, is_test: bool) -> FileRole {
    let under = |names: &[&str]| path.split('/').rev().skip(1).any(|d| names.contains(&d));
    if under(&["bench", "benches", "benchmark", "benchmarks"]) {
        FileRole::Bench
    } else if is_test {
        FileRole::Test
    } else if under(&["example", "examples"]) {
        FileRole::Example
    } else if under(&["doc", "docs"]) {
        FileRole::Docs
    } else {
        FileRole::Code
    }
}
