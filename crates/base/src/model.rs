//! The code-graph vocabulary shared by every stage of the pipeline.
//!
//! The extractor turns one file into a [`FileExtract`] (entities, raw
//! references, `use` declarations) without looking at any other file; the
//! resolver turns the extracts of all files into edges. Keeping extraction
//! file-local is what makes incremental indexing equal to a full rebuild: the
//! stored graph is a pure function of the set of `(path, FileExtract)` pairs.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub mod rel;
pub use rel::Rel;

/// What kind of item an entity is (Rust's kinds so far; a language adds
/// its own). The string forms are stable and are
/// what the store, the CLI (`--kind`) and the emitted context use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    Function,
    Method,
    Struct,
    Enum,
    Union,
    Trait,
    Impl,
    Module,
    Const,
    Static,
    TypeAlias,
    Macro,
    /// A Python `class`.
    Class,
    /// A Python module-level name bound by an assignment (`bp = Blueprint(..)`).
    Variable,
    /// A Python class attribute, or an instance attribute first bound by
    /// `self.x = ...` in a method.
    Attribute,
    /// A Python method decorated `@property` (or `@cached_property`).
    Property,
    /// A test case or suite written as a call rather than a definition
    /// (`describe('…', () => …)`, `it('…', …)` in a TypeScript or
    /// JavaScript test file), named by its title.
    Test,
}

impl EntityKind {
    pub const ALL: [EntityKind; 17] = [
        EntityKind::Function,
        EntityKind::Method,
        EntityKind::Struct,
        EntityKind::Enum,
        EntityKind::Union,
        EntityKind::Trait,
        EntityKind::Impl,
        EntityKind::Module,
        EntityKind::Const,
        EntityKind::Static,
        EntityKind::TypeAlias,
        EntityKind::Macro,
        EntityKind::Class,
        EntityKind::Variable,
        EntityKind::Attribute,
        EntityKind::Property,
        EntityKind::Test,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Function => "function",
            EntityKind::Method => "method",
            EntityKind::Struct => "struct",
            EntityKind::Enum => "enum",
            EntityKind::Union => "union",
            EntityKind::Trait => "trait",
            EntityKind::Impl => "impl",
            EntityKind::Module => "module",
            EntityKind::Const => "const",
            EntityKind::Static => "static",
            EntityKind::TypeAlias => "type_alias",
            EntityKind::Macro => "macro",
            EntityKind::Class => "class",
            EntityKind::Variable => "variable",
            EntityKind::Attribute => "attribute",
            EntityKind::Property => "property",
            EntityKind::Test => "test",
        }
    }

    pub fn parse(s: &str) -> Option<EntityKind> {
        EntityKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Items that live in Rust's type namespace (can be named in a type
    /// position or as a path prefix).
    pub fn is_type_like(self) -> bool {
        matches!(
            self,
            EntityKind::Struct
                | EntityKind::Enum
                | EntityKind::Union
                | EntityKind::Trait
                | EntityKind::TypeAlias
                | EntityKind::Class
        )
    }
}

/// Visibility as written: `pub` → `public`, `pub(crate)` → `crate`,
/// `pub(super)`/`pub(in path)`/`pub(self)` → `restricted`, nothing → `private`.
/// Trait methods and enum variants inherit their container's visibility.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    Public,
    Crate,
    Restricted,
    Private,
}

impl Visibility {
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Crate => "crate",
            Visibility::Restricted => "restricted",
            Visibility::Private => "private",
        }
    }
}

/// How a parameter is passed (seed 004 `pattern`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamPattern {
    Owned,
    Ref,
    MutRef,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub visibility: Visibility,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub pattern: ParamPattern,
    /// The default value as written (Python: `host: str | None = None`
    /// gives `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The interface of an entity, as seed 004's `interface_signature.signature`.
/// Empty collections and `None` are skipped when serialised so a struct does
/// not carry function fields and vice versa.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// Struct/union fields; for enums, one entry per variant (`type` holds
    /// the variant's payload as written, empty for unit variants).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub fields: Box<[Field]>,
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub parameters: Box<[Param]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_type: Option<Box<str>>,
    /// Generic parameters as written, e.g. `["T: Clone", "'a", "const N: usize"]`.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub generics: Box<[String]>,
    /// `where` clause predicates as written.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub where_clause: Box<[String]>,
    /// Derived traits (`#[derive(...)]`) and, after resolution, traits
    /// implemented by explicit impls. Extraction fills derives only.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub traits: Box<[String]>,
    /// For consts, statics and type aliases: the declared type / aliased type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "type")]
    pub ty: Option<Box<str>>,
    /// Supertraits for traits, e.g. `["Clone", "Send"]`.
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub supertraits: Box<[String]>,
    #[serde(default, rename = "async", skip_serializing_if = "is_false")]
    pub is_async: bool,
    #[serde(default, rename = "unsafe", skip_serializing_if = "is_false")]
    pub is_unsafe: bool,
    #[serde(default, rename = "const", skip_serializing_if = "is_false")]
    pub is_const: bool,
    /// `static mut`.
    #[serde(default, rename = "mutable", skip_serializing_if = "is_false")]
    pub is_mut: bool,
    /// For impl blocks: the self type as written (`Vec<T>`); for methods: the owner type name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_type: Option<Box<str>>,
    /// For trait impl blocks and their methods: the trait as written (`From<u8>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trait_ref: Option<Box<str>>,
    /// Decorators as written, without the `@` (Python: `property`,
    /// `app.route("/")`).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub decorators: Box<[String]>,
    /// Base classes as written (Python: `Scaffold`, `t.Generic[T]`).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub bases: Box<[String]>,
    /// The names a module exports explicitly (Python's `__all__`).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub exports: Box<[String]>,
    /// The call signatures of a callable type, each on one line as
    /// written (TypeScript: an interface's `<P>(path: P, handler: H): R`
    /// members).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub call_signatures: Box<[String]>,
    /// A one-line rendering of the declaration head, e.g.
    /// `pub async fn load(path: &Path) -> Result<Config>`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Which of the index's languages a file or entity is in: its place in
/// the registry (`index::languages`), which gives its name. Held in
/// memory only: a stored extract is read back by its language, which
/// stamps it again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LanguageId(pub u8);

/// One item found in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    /// ISGL1 key, unique in the repository; see `crate::index::keys`.
    pub key: std::sync::Arc<str>,
    pub kind: EntityKind,
    pub name: String,
    pub visibility: Visibility,
    /// Repository-relative path with `/` separators.
    pub file: std::sync::Arc<str>,
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// Module path inside the crate, without the crate name; empty for the
    /// crate root. `src/a/b.rs` items have `["a", "b"]`. Shared by the
    /// entities of a module (as is `file` by those of a file): a large
    /// tree holds half a million entities through resolution.
    pub module_path: std::sync::Arc<[String]>,
    /// Doc comment text (`///`, `//!` for modules, `#[doc = "..."]`),
    /// with the comment markers stripped and lines joined by `\n`.
    pub doc: String,
    pub signature: Signature,
    /// `#[test]`-like attribute, inside a `#[cfg(test)]` module, or in a
    /// `tests/` directory.
    pub is_test: bool,
    /// For methods and impl blocks: the owner type's last path segment
    /// (`Vec` for `impl<T> Vec<T>`). For trait method declarations: the trait name.
    pub owner: Option<String>,
    /// For trait impl blocks and their methods: the trait's path as written,
    /// without generic arguments (`fmt::Display`).
    pub trait_name: Option<String>,
    /// Key of the containing entity (module, impl or trait); `None` only for
    /// a file's module entity.
    pub parent: Option<std::sync::Arc<str>>,
    /// The language of its file.
    #[serde(skip)]
    pub language: LanguageId,
}

/// What a reference means, which decides the namespace it resolves in and
/// the edge it becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// `foo()`, `a::b::foo()`, `Type::new()` — a path in call position.
    Call,
    /// `x.foo()` — only the method name is known.
    MethodCall,
    /// `foo!()` — a macro invocation.
    MacroCall,
    /// A type named in a signature or body (`Foo`, `a::Foo`, `Foo<Bar>` gives two refs).
    Type,
    /// The trait of `impl Trait for Type` (from the impl block).
    Implements,
    /// The self type of an impl block (`impl Foo` / `impl T for Foo`),
    /// from the impl block; becomes `contains` edges type → methods.
    ImplOwner,
    /// A path used as a value that is not called (`let f = foo;`, `Foo::CONST`, unit structs).
    Value,
    /// `x.field` — a field read; `path` is the field name.
    Field,
}

/// A name used somewhere in a file, not yet resolved to an entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawRef {
    /// Key of the innermost entity in which the reference occurs
    /// (function, method, const, struct, impl, ...; the file module at top level).
    /// Shared by the references of one entity: a large tree holds a
    /// million references until they are resolved.
    pub from: Arc<str>,
    pub kind: RefKind,
    /// Path segments as written, generic arguments removed:
    /// `crate::a::Foo::<T>::new` → `["crate", "a", "Foo", "new"]`;
    /// `self.x.len()` (MethodCall) → `["len"]`; `Self::new` → `["Self", "new"]`.
    pub path: Vec<String>,
    /// 1-based line of the reference.
    pub line: u32,
    /// Module path in which the reference occurs (inline modules
    /// included); shared by the references of one module.
    pub scope: Arc<[String]>,
    /// Self type name (last segment) of the enclosing impl or trait, if any,
    /// so `Self::new` and `self.method()` can be resolved.
    pub self_type: Option<String>,
    /// For MethodCall: true when the receiver is literally `self`.
    pub on_self: bool,
    /// For MethodCall and Field: what the syntax says about the value
    /// the method is called on or the field is read from, typed by the
    /// resolver from the signatures of every file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<Recv>,
}

/// The value a method is called on, or a field read from, as far as one
/// file's syntax tells: the resolver types it with the declared parameter,
/// return, field and alias types of the entities it leads to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recv {
    /// A type as written: a parameter's or annotated binding's type, a
    /// struct literal's name, `Self` for `self`.
    Type(String),
    /// What calling the function at this path returns (`f(..)`, `T::new(..)`).
    Call(Vec<String>),
    /// What calling the method named second on the first returns.
    Method(Box<Recv>, String),
    /// The field named second of the first.
    Field(Box<Recv>, String),
    /// `value?`
    Try(Box<Recv>),
    /// An element of a collection (`for x in v`, `v[i]`).
    Element(Box<Recv>),
    /// The value a path names: a binding, a function, a field reached by
    /// name (TypeScript: `app` in `app.get(…)` for a module's `const app`).
    Value(Vec<String>),
    /// What argument `n` (from 0) of a call to the function the first is
    /// expected to be: the declared type of its parameter there.
    Arg(Box<Recv>, u32),
    /// Parameter `n` (from 0) of a function whose type is the first: a
    /// callback's parameter written without a type (`(c) => c.json()`).
    Param(Box<Recv>, u32),
    /// A literal of the first's type that holds the members named (an
    /// object literal where the type is expected, with its keys): of a
    /// union, the value is one of the alternatives that declare them all.
    Literal(Box<Recv>, Vec<String>),
}

/// One `use` declaration, flattened: `use a::{b, c as d, e::*};` gives three.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UseDecl {
    /// Key of the module entity that contains the `use`.
    pub from: String,
    /// Module path in which the `use` occurs.
    pub scope: Vec<String>,
    /// The imported path: `["crate", "a", "b"]`, `["super", "x"]`, `["std", "fmt"]`.
    /// For a glob `use a::b::*`, the path of the module `["a", "b"]`.
    /// `use a::{self}` gives `["a"]`.
    pub path: Vec<String>,
    /// `use x as y` → `Some("y")`; `use x as _` → `Some("_")`.
    pub alias: Option<String>,
    pub glob: bool,
    /// `pub use` (any visibility other than private): a re-export.
    pub is_pub: bool,
    pub line: u32,
}

/// How completely a file was understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParseStatus {
    /// Parsed without syntax errors.
    Ok,
    /// tree-sitter reported syntax errors; what parsed is kept.
    Partial,
}

/// Everything learnt from one file, computed from its path and contents alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileExtract {
    pub path: String,
    pub status: ParseStatus,
    /// Number of ERROR/MISSING nodes (0 when `status == Ok`).
    pub syntax_errors: u32,
    /// Entities in source order; the first is the file's module entity.
    pub entities: Vec<Entity>,
    pub refs: Vec<RawRef>,
    pub uses: Vec<UseDecl>,
    /// The declarations that make other files part of the package (Rust's
    /// `mod name;`): the layout follows them from the package's roots.
    #[serde(default, skip_serializing_if = "Vec::is_empty", alias = "mods")]
    pub children: Vec<ChildDecl>,
    /// The crate and module the extract was made for: keys contain the
    /// module path, so an extract is reused only while this is still the
    /// file's place.
    pub context: FileContext,
    /// The language that made it (and reads its stored form).
    #[serde(skip)]
    pub language: LanguageId,
    /// What its entities' bodies say in words rather than code — string
    /// literals and comments, as written — for the text index: (index
    /// into `entities`, text), at most one entry per entity, in entity
    /// order. Made by a parse and never stored: the text index reads it
    /// from the files parsed in the same run (see `index::text`).
    #[serde(skip)]
    pub texts: Vec<(u32, String)>,
}

/// A declaration in one file that makes another file part of its package
/// (Rust's `mod name;`): the layout follows these from the package's
/// roots. Stored in extracts under its Rust-era field names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildDecl {
    pub name: String,
    /// Inline scopes between the file's own module and the declaration
    /// (`mod a { mod b; }` gives `["a"]` for `b`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inline: Vec<String>,
    /// The child's path as the declaration gives it (`#[path = "…"]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_attr: Option<String>,
    /// Declared for tests only (`#[cfg(test)]`, or inside test code).
    #[serde(default)]
    pub cfg_test: bool,
}

/// Where a file sits in the repository: which package, and which module
/// in it. Computed by the walk from the language's layout, passed to the
/// extractor.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FileContext {
    /// Repository-relative path with `/` separators.
    pub path: String,
    /// The package's name as code names it (a Rust crate's, `-` replaced
    /// by `_`: `serde_json`; a Python project's).
    #[serde(alias = "crate_name")]
    pub package: String,
    /// The package as resolution tells packages apart: the unit its
    /// references resolve within. Rust: a library's name (what other
    /// crates call it by), or the root path of any other target — no
    /// crate names a binary, test, example, bench or build script, and
    /// two of them with one name are different crates (every package's
    /// `build.rs` is `build_script_build`). Python: the import root's
    /// directory (`src`, `""` for the top).
    #[serde(alias = "crate_id")]
    pub unit: String,
    /// Module path of the file inside its package (empty for a root).
    pub module_path: Vec<String>,
    /// In a `tests/`, `benches/` directory or otherwise test-only location.
    pub is_test_file: bool,
    /// Bare import specifiers the file's build maps to paths, tried in
    /// order: a pattern (`@/*`, `zustand`) and the repository-relative
    /// paths it stands for, `*` in them what the pattern's `*` matched
    /// (TypeScript: its `tsconfig.json`'s `paths` and `baseUrl`). Empty
    /// for languages without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_aliases: Vec<(String, Vec<String>)>,
}
