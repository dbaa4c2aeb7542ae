//! Tree-sitter based extraction of one Rust source file into a [`FileExtract`].
//!
//! The file is parsed once; a single recursive walk over the tree produces
//! the entities (items), the raw references and the flattened `use`
//! declarations. Nothing here looks at any other file.
//!
//! Design notes:
//! * node kinds are dispatched through a table indexed by tree-sitter's
//!   numeric kind id and fields are looked up by numeric field id, so the hot
//!   loop does no string comparisons on kind names;
//! * children are iterated with one shared `TreeCursor` into one shared node
//!   buffer (a stack discipline keeps nested iterations valid), so the walk
//!   allocates nothing per node;
//! * attributes and doc comments are siblings of the item they annotate in
//!   tree-sitter-rust, so every child loop remembers where the current run of
//!   attributes/comments started and hands that range to the next item;
//! * refs are deduplicated per `(from, kind, on_self, path, receiver)` with a
//!   hash of the borrowed path segments, so duplicates cost no allocation;
//! * method-call receivers get a type hint from the local bindings of the
//!   enclosing function (typed parameters and `let`s, constructor
//!   initialisers; later bindings shadow earlier ones in source order) and
//!   from the owner struct's field types for `self.field`;
//! * recursion depth is bounded so pathological inputs cannot overflow the
//!   (2 MiB) stack of a worker thread; subtrees below the bound are skipped.

use std::collections::hash_map::Entry;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::sync::OnceLock;

use tree_sitter::{Language, Node, Parser, Tree, TreeCursor};

use crate::index::body_text::BodyTexts;
use crate::index::keys::KeyAllocator;
use crate::keys;
use crate::model::{
    ChildDecl, Entity, EntityKind, Field, FileContext, FileExtract, Param, ParamPattern,
    ParseStatus, RawRef, Recv, RefKind, Signature, UseDecl, Visibility,
};

/// Maximum length (in chars) of `Signature::text`.
const TEXT_CAP: usize = 300;
/// Maximum length (in chars) of other rendered texts (types, payloads, ...).
const TYPE_CAP: usize = 2000;
/// Maximum recursion depth of the walk; deeper subtrees are skipped. Keeps
/// the walk well inside a 2 MiB thread stack.
const MAX_DEPTH: u32 = 600;

/// Extracts [`FileExtract`]s from Rust sources. Holds one tree-sitter parser;
/// create one per thread and reuse it across files.
pub struct RustExtractor {
    parser: Parser,
}

impl Default for RustExtractor {
    fn default() -> Self {
        Self::new()
    }
}

impl RustExtractor {
    pub fn new() -> Self {
        RustExtractor {
            parser: new_rust_parser(),
        }
    }

    /// Parse `source` once and extract everything from that one tree.
    pub fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract {
        let Some(tree) = self.parse(source, None) else {
            // Only happens when parsing is cancelled or times out, which we
            // never request; still, degrade to the bare module entity.
            let mut w = Walker::new(ctx, source, tables(), None);
            w.push_file_module();
            return w.finish(1);
        };
        self.extract_tree(ctx, source, &tree)
    }

    /// Parse `source`, reusing `old` (the tree of the text before, edited
    /// to where the text changed) when given: see [`super::held_trees`].
    pub fn parse(&mut self, source: &str, old: Option<&Tree>) -> Option<Tree> {
        self.parser.parse(source, old)
    }

    /// Extract everything from `tree`, the parse of `source`.
    pub fn extract_tree(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract {
        let tables = tables();
        let root = tree.root_node();
        let errors = count_errors(root);
        let mut w = Walker::new(ctx, source, tables, Some(root.walk()));
        w.push_file_module();
        let cx = Cx {
            module: 0,
            from: 0,
            parent: 0,
            doc_target: 0,
            container: Container::Module,
            self_ty: None,
            is_test: ctx.is_test_file,
            local: 0,
        };
        w.walk_children(root, &cx);
        w.finish(errors)
    }
}

/// Parse-only helper used by the benchmark baseline: parse and return the
/// root node's child count (forces the parse).
pub fn parse_only(parser: &mut Parser, source: &str) -> usize {
    parser
        .parse(source, None)
        .map(|t| t.root_node().child_count())
        .unwrap_or(0)
}

/// A parser configured for Rust.
pub fn new_rust_parser() -> Parser {
    let mut parser = Parser::new();
    let language: Language = tree_sitter_rust::LANGUAGE.into();
    parser
        .set_language(&language)
        .expect("tree-sitter-rust grammar is ABI-compatible with tree-sitter");
    parser
}

/// Counts ERROR and MISSING nodes; only descends into subtrees with errors.
fn count_errors(root: Node<'_>) -> u32 {
    if !root.has_error() {
        return 0;
    }
    let mut count = 0u32;
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            count = count.saturating_add(1);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return count.max(1);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Kind and field tables
// ---------------------------------------------------------------------------

/// Node kinds the walker distinguishes. Everything else is `Other` (walk the
/// children) or `Skip` (nothing of interest inside).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum K {
    Other,
    Skip,
    LineComment,
    BlockComment,
    StringLit,
    AttributeItem,
    InnerAttributeItem,
    Attribute,
    // items
    Function,
    FunctionSig,
    Struct,
    Enum,
    Union,
    Trait,
    Impl,
    Mod,
    Const,
    Static,
    TypeItem,
    AssocType,
    MacroDef,
    Use,
    ExternCrate,
    ForeignMod,
    // expressions, types, paths
    Call,
    MacroInvocation,
    StructExpr,
    ScopedIdent,
    Ident,
    TypeIdent,
    ScopedTypeIdent,
    GenericType,
    GenericTypeTurbofish,
    GenericFunction,
    TypeBinding,
    FieldExpr,
    BracketedType,
    QualifiedType,
    TokenTree,
    TokenRepetition,
    Metavariable,
    PathKw,
    TypeParameters,
    ConstrainedTypeParam,
    OptionalTypeParam,
    ConstParam,
    VisibilityModifier,
    UseList,
    ScopedUseList,
    UseAsClause,
    UseWildcard,
    FieldDecl,
    OrderedFieldDeclList,
    EnumVariant,
    SelfParameter,
    Parameter,
    ReferenceType,
    PointerType,
    DynamicType,
    AbstractType,
    FunctionModifiers,
    WhereClause,
    WherePredicate,
    MutableSpecifier,
    Primitive,
    // bindings and receiver types of method calls
    LetDecl,
    Closure,
    ForExpr,
    MatchArm,
    LetCondition,
    TryExpr,
    RefExpr,
    UnaryExpr,
    ParenExpr,
    AwaitExpr,
    IndexExpr,
    TypeCastExpr,
    // anonymous tokens
    TColonColon,
    TBang,
    TDot,
    TFn,
    TUnsafe,
}

impl K {
    fn is_item(self) -> bool {
        matches!(
            self,
            K::Function
                | K::FunctionSig
                | K::Struct
                | K::Enum
                | K::Union
                | K::Trait
                | K::Impl
                | K::Mod
                | K::Const
                | K::Static
                | K::TypeItem
                | K::AssocType
                | K::MacroDef
                | K::Use
                | K::ExternCrate
                | K::ForeignMod
        )
    }

    fn is_comment(self) -> bool {
        matches!(self, K::LineComment | K::BlockComment)
    }

    fn named(name: &str) -> K {
        K::named_item(name)
            .or_else(|| K::named_expr(name))
            .or_else(|| K::named_type(name))
            .or_else(|| K::named_decl_part(name))
            .unwrap_or_else(|| {
                if K::is_skipped(name) {
                    K::Skip
                } else {
                    K::Other
                }
            })
    }

    /// Comments, string literals, attributes and items.
    fn named_item(name: &str) -> Option<K> {
        Some(match name {
            "line_comment" => K::LineComment,
            "block_comment" => K::BlockComment,
            "string_literal" | "raw_string_literal" => K::StringLit,
            "attribute_item" => K::AttributeItem,
            "inner_attribute_item" => K::InnerAttributeItem,
            "attribute" => K::Attribute,
            "function_item" => K::Function,
            "function_signature_item" => K::FunctionSig,
            "struct_item" => K::Struct,
            "enum_item" => K::Enum,
            "union_item" => K::Union,
            "trait_item" => K::Trait,
            "impl_item" => K::Impl,
            "mod_item" => K::Mod,
            "const_item" => K::Const,
            "static_item" => K::Static,
            "type_item" => K::TypeItem,
            "associated_type" => K::AssocType,
            "macro_definition" => K::MacroDef,
            "use_declaration" => K::Use,
            "extern_crate_declaration" => K::ExternCrate,
            "foreign_mod_item" => K::ForeignMod,
            _ => return None,
        })
    }

    /// Expressions, bindings, paths and macro tokens.
    fn named_expr(name: &str) -> Option<K> {
        Some(match name {
            "call_expression" => K::Call,
            "macro_invocation" => K::MacroInvocation,
            "struct_expression" => K::StructExpr,
            "scoped_identifier" => K::ScopedIdent,
            "identifier" => K::Ident,
            "generic_function" => K::GenericFunction,
            "field_expression" => K::FieldExpr,
            "token_tree" => K::TokenTree,
            "token_repetition" => K::TokenRepetition,
            "metavariable" => K::Metavariable,
            "self" | "super" | "crate" => K::PathKw,
            "let_declaration" => K::LetDecl,
            "closure_expression" => K::Closure,
            "for_expression" => K::ForExpr,
            "match_arm" => K::MatchArm,
            "let_condition" => K::LetCondition,
            "try_expression" => K::TryExpr,
            "reference_expression" => K::RefExpr,
            "unary_expression" => K::UnaryExpr,
            "parenthesized_expression" => K::ParenExpr,
            "await_expression" => K::AwaitExpr,
            "index_expression" => K::IndexExpr,
            "type_cast_expression" => K::TypeCastExpr,
            _ => return None,
        })
    }

    /// Types, generic parameters and where clauses.
    fn named_type(name: &str) -> Option<K> {
        Some(match name {
            "type_identifier" => K::TypeIdent,
            "scoped_type_identifier" => K::ScopedTypeIdent,
            "generic_type" => K::GenericType,
            "generic_type_with_turbofish" => K::GenericTypeTurbofish,
            "type_binding" => K::TypeBinding,
            "bracketed_type" => K::BracketedType,
            "qualified_type" => K::QualifiedType,
            "type_parameters" => K::TypeParameters,
            "constrained_type_parameter" => K::ConstrainedTypeParam,
            "optional_type_parameter" => K::OptionalTypeParam,
            "const_parameter" => K::ConstParam,
            "reference_type" => K::ReferenceType,
            "pointer_type" => K::PointerType,
            "dynamic_type" => K::DynamicType,
            "abstract_type" => K::AbstractType,
            "where_clause" => K::WhereClause,
            "where_predicate" => K::WherePredicate,
            "mutable_specifier" => K::MutableSpecifier,
            "primitive_type" => K::Primitive,
            _ => return None,
        })
    }

    /// Parts of declarations: visibility, use trees, fields, variants and parameters.
    fn named_decl_part(name: &str) -> Option<K> {
        Some(match name {
            "visibility_modifier" => K::VisibilityModifier,
            "use_list" => K::UseList,
            "scoped_use_list" => K::ScopedUseList,
            "use_as_clause" => K::UseAsClause,
            "use_wildcard" => K::UseWildcard,
            "field_declaration" => K::FieldDecl,
            "ordered_field_declaration_list" => K::OrderedFieldDeclList,
            "enum_variant" => K::EnumVariant,
            "self_parameter" => K::SelfParameter,
            "parameter" => K::Parameter,
            "function_modifiers" => K::FunctionModifiers,
            _ => return None,
        })
    }

    /// Node kinds the walk passes over: literals, labels, lifetimes,
    /// parts of macro rules and the like.
    fn is_skipped(name: &str) -> bool {
        matches!(
            name,
            "lifetime"
                | "label"
                | "char_literal"
                | "integer_literal"
                | "float_literal"
                | "boolean_literal"
                | "field_identifier"
                | "shorthand_field_identifier"
                | "escape_sequence"
                | "string_content"
                | "doc_comment"
                | "fragment_specifier"
                | "token_tree_pattern"
                | "macro_rule"
                | "shebang"
                | "empty_statement"
                | "unit_type"
                | "never_type"
                | "remaining_field_pattern"
                | "inner_doc_comment_marker"
                | "outer_doc_comment_marker"
                | "extern_modifier"
        )
    }

    fn anonymous(name: &str) -> K {
        match name {
            "::" => K::TColonColon,
            "!" => K::TBang,
            "." => K::TDot,
            "fn" => K::TFn,
            "unsafe" => K::TUnsafe,
            _ => K::Skip,
        }
    }
}

/// Numeric field ids of the grammar.
struct Fields {
    name: u16,
    body: u16,
    parameters: u16,
    return_type: u16,
    type_parameters: u16,
    ty: u16,
    trait_: u16,
    function: u16,
    arguments: u16,
    macro_: u16,
    field: u16,
    value: u16,
    path: u16,
    alias: u16,
    list: u16,
    pattern: u16,
    left: u16,
    argument: u16,
    type_arguments: u16,
    bounds: u16,
}

struct Tables {
    kinds: Vec<K>,
    f: Fields,
    /// Kind id of `shorthand_field_identifier` (a binding in `Foo { x }`
    /// patterns; otherwise uninteresting, so it stays `K::Skip`).
    shorthand_field: u16,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let lang: Language = tree_sitter_rust::LANGUAGE.into();
        let count = lang.node_kind_count().min(u16::MAX as usize);
        let kinds = (0..count)
            .map(|id| {
                let id = id as u16;
                let name = lang.node_kind_for_id(id).unwrap_or("");
                if lang.node_kind_is_named(id) {
                    K::named(name)
                } else {
                    K::anonymous(name)
                }
            })
            .collect();
        let fid = |n: &str| lang.field_id_for_name(n).map(|f| f.get()).unwrap_or(0);
        Tables {
            kinds,
            shorthand_field: lang.id_for_node_kind("shorthand_field_identifier", true),
            f: Fields {
                name: fid("name"),
                body: fid("body"),
                parameters: fid("parameters"),
                return_type: fid("return_type"),
                type_parameters: fid("type_parameters"),
                ty: fid("type"),
                trait_: fid("trait"),
                function: fid("function"),
                arguments: fid("arguments"),
                macro_: fid("macro"),
                field: fid("field"),
                value: fid("value"),
                path: fid("path"),
                alias: fid("alias"),
                list: fid("list"),
                pattern: fid("pattern"),
                left: fid("left"),
                argument: fid("argument"),
                type_arguments: fid("type_arguments"),
                bounds: fid("bounds"),
            },
        }
    })
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

fn line_of(n: Node<'_>) -> u32 {
    u32::try_from(n.start_position().row)
        .unwrap_or(u32::MAX - 1)
        .saturating_add(1)
}

#[inline]
fn end_line_of(n: Node<'_>) -> u32 {
    u32::try_from(n.end_position().row)
        .unwrap_or(u32::MAX - 1)
        .saturating_add(1)
}

/// Renders source text on one line: whitespace runs become one space,
/// comments are dropped, string literals are kept verbatim; at most `cap` chars.
fn collapse(s: &str, cap: usize) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len().min(cap));
    let mut n = 0usize;
    let mut space = false;
    let mut in_str = false;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if n >= cap {
            break;
        }
        if in_str {
            out.push(c);
            n += 1;
            if c == '\\' {
                if let Some((_, d)) = it.next() {
                    out.push(d);
                    n += 1;
                }
            } else if c == '"' {
                in_str = false;
            }
            continue;
        }
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if c == '/' && bytes.get(i + 1) == Some(&b'/') {
            while let Some(&(_, d)) = it.peek() {
                if d == '\n' {
                    break;
                }
                it.next();
            }
            space = true;
            continue;
        }
        if c == '/' && bytes.get(i + 1) == Some(&b'*') {
            it.next();
            let mut prev = '\0';
            for (_, d) in it.by_ref() {
                if prev == '*' && d == '/' {
                    break;
                }
                prev = d;
            }
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
            n += 1;
        }
        space = false;
        if c == '"' {
            in_str = true;
        }
        out.push(c);
        n += 1;
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '\''
}

/// Key form of a type/trait text: comments dropped, whitespace removed
/// except where it separates two identifier characters (`&'a str`, `dyn X`).
fn compact(s: &str) -> String {
    let collapsed = collapse(s, TYPE_CAP);
    let mut out = String::with_capacity(collapsed.len());
    let mut pending = false;
    for c in collapsed.chars() {
        if c.is_whitespace() {
            pending = true;
            continue;
        }
        if pending && out.chars().next_back().is_some_and(is_ident_char) && is_ident_char(c) {
            out.push(' ');
        }
        pending = false;
        out.push(c);
    }
    out
}

fn is_all_caps(s: &str) -> bool {
    let mut upper = false;
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' => upper = true,
            b'0'..=b'9' | b'_' => {}
            _ => return false,
        }
    }
    upper
}

fn push_doc_line(doc: &mut String, line: &str) {
    let line = line.strip_prefix(' ').unwrap_or(line);
    let line = line.trim_end();
    if doc.is_empty() && line.is_empty() {
        return; // drop leading blank lines
    }
    if !doc.is_empty() {
        doc.push('\n');
    }
    doc.push_str(line);
}

fn push_block_doc(doc: &mut String, body: &str) {
    // Blank lines are only emitted when more text follows in the block.
    let mut blanks = 0usize;
    for line in body.lines() {
        let l = line.trim_start();
        let l = match l.strip_prefix('*') {
            Some(rest) if !rest.starts_with('*') => rest,
            _ => l,
        };
        if l.trim().is_empty() {
            blanks += 1;
            continue;
        }
        for _ in 0..blanks {
            push_doc_line(doc, "");
        }
        blanks = 0;
        push_doc_line(doc, l);
    }
}

/// Appends the doc text of a comment if it is a doc comment of the wanted
/// flavour (`inner`: `//!`/`/*!`; otherwise `///`/`/**`). Returns whether
/// it was one.
fn push_comment_doc(doc: &mut String, text: &str, inner: bool) -> bool {
    if let Some(rest) = text.strip_prefix("//") {
        let ok = if inner {
            rest.starts_with('!')
        } else {
            rest.starts_with('/') && !rest.starts_with("//")
        };
        if ok {
            let body = rest.get(1..).unwrap_or("");
            push_doc_line(doc, body.trim_end_matches(['\n', '\r']));
        }
        return ok;
    }
    if let Some(rest) = text.strip_prefix("/*") {
        let ok = if inner {
            rest.starts_with('!')
        } else {
            rest.starts_with('*') && !rest.starts_with("**") && rest != "*/"
        };
        if ok {
            let body = rest.get(1..).unwrap_or("");
            let body = body.strip_suffix("*/").unwrap_or(body);
            push_block_doc(doc, body);
        }
        return ok;
    }
    false
}

fn trim_doc_end(doc: &mut String) {
    let len = doc.trim_end().len();
    doc.truncate(len);
}

fn classify_visibility(t: &str) -> Visibility {
    let t = t.trim();
    if t == "pub" {
        return Visibility::Public;
    }
    if t == "crate" {
        return Visibility::Crate;
    }
    let inner = t
        .strip_prefix("pub")
        .map(str::trim)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'))
        .map(str::trim);
    match inner {
        Some("crate") => Visibility::Crate,
        _ => Visibility::Restricted,
    }
}

/// A short path assembled from token-tree tokens (no heap allocation).
struct TokPath<'t> {
    segs: [&'t str; 8],
    len: usize,
    overflow: bool,
}

impl<'t> TokPath<'t> {
    fn new() -> Self {
        TokPath {
            segs: [""; 8],
            len: 0,
            overflow: false,
        }
    }
    fn clear(&mut self) {
        self.len = 0;
        self.overflow = false;
    }
    fn push(&mut self, s: &'t str) {
        if self.len < self.segs.len() {
            self.segs[self.len] = s;
            self.len += 1;
        } else {
            self.overflow = true;
        }
    }
    fn as_slice(&self) -> &[&'t str] {
        &self.segs[..self.len]
    }
}

/// Wrappers that method calls see through (auto-deref), so a receiver of
/// type `Box<T>`/`Rc<T>`/`Arc<T>` is hinted as `T`.
fn is_smart_pointer(last: &str) -> bool {
    matches!(last, "Box" | "Rc" | "Arc")
}

/// The token before something in a token tree.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok {
    None,
    Ident,
    Sep,
    Dot,
    Bang,
    Fn,
    Other,
}

// ---------------------------------------------------------------------------
// The walker
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Container {
    Module,
    /// Index into `Walker::impls`.
    Impl(u32),
    /// Entity index of the trait.
    Trait(u32),
}

/// Where the walk currently is.
#[derive(Clone, Copy)]
struct Cx {
    /// Index into `Walker::mods`.
    module: u32,
    /// Entity index refs are attributed to.
    from: u32,
    /// Entity index new entities get as parent.
    parent: u32,
    /// Entity index receiving inner docs / inner `#![cfg(test)]`.
    doc_target: u32,
    container: Container,
    /// Entity index of the enclosing impl or trait.
    self_ty: Option<u32>,
    is_test: bool,
    /// Entity index + 1 of the function whose body the walk is in (0:
    /// none): items declared there are that function's local items.
    local: u32,
}

struct ModInfo {
    /// Shared by the module's entities and references.
    path: std::sync::Arc<[String]>,
    entity: u32,
}

struct ImplInfo {
    owner: String,
    /// Trait as written, compacted (key form, generic args kept).
    trait_key: Option<String>,
    /// Trait path without generic args.
    trait_name: Option<String>,
    /// Trait as written (one line).
    trait_ref: Option<String>,
}

#[derive(Default)]
struct Attrs {
    doc: String,
    derives: Vec<String>,
    test: bool,
    cfg_test: bool,
    macro_export: bool,
    /// `#[path = "…"]` on a `mod` declaration.
    path: Option<String>,
}

/// What to walk after an item's entity has been created.
struct Plan<'t> {
    part_cx: Cx,
    /// Signature parts (generics, parameters, types, bounds, where clause).
    parts: [Option<Node<'t>>; 4],
    /// A body whose children are walked as a list (items, statements).
    body: Option<Node<'t>>,
    body_cx: Cx,
    /// Length of the generic-name stack to restore afterwards.
    mark: usize,
}

impl<'t> Plan<'t> {
    fn new(cx: Cx, mark: usize) -> Self {
        Plan {
            part_cx: cx,
            parts: [None; 4],
            body: None,
            body_cx: cx,
            mark,
        }
    }
}

struct Walker<'t, 'x> {
    src: &'t str,
    t: &'static Tables,
    ctx: &'x FileContext,
    cursor: Option<TreeCursor<'t>>,
    buf: Vec<Node<'t>>,
    keys: KeyAllocator,
    entities: Vec<Entity>,
    refs: Vec<RawRef>,
    ref_from: Vec<u32>,
    /// The file's path, shared by its entities.
    file: std::sync::Arc<str>,
    uses: Vec<UseDecl>,
    children: Vec<ModInfo>,
    impls: Vec<ImplInfo>,
    generics: Vec<&'t str>,
    seen: FxMap<u64, u32>,
    path_buf: Vec<&'t str>,
    depth: u32,
    /// Local bindings of the function being walked, in source order: name →
    /// what its value is (`None`: unknown, shadows an earlier binding).
    locals: Vec<(&'t str, Option<Recv>)>,
    /// Start of the current item's bindings in `locals`.
    locals_base: usize,
    /// `mod name;` declarations.
    mod_decls: Vec<ChildDecl>,
    /// `Cx::local` of the item being added.
    local_fn: u32,
    /// Per entity index, the string literals and comments of its body
    /// (see [`FileExtract::texts`]).
    texts: BodyTexts,
}

mod attrs;
mod bindings;
mod entities;
mod items;
mod refs;
mod uses;
mod walk;

#[cfg(test)]
mod tests;
