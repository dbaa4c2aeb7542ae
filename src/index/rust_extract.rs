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

use tree_sitter::{Language, Node, Parser, TreeCursor};

use crate::index::keys::{self, KeyAllocator};
use crate::model::{
    Entity, EntityKind, Field, FileContext, FileExtract, ModDecl, Param, ParamPattern, ParseStatus,
    RawRef, Recv, RefKind, Signature, UseDecl, Visibility,
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
        let tables = tables();
        let Some(tree) = self.parser.parse(source, None) else {
            // Only happens when parsing is cancelled or times out, which we
            // never request; still, degrade to the bare module entity.
            let mut w = Walker::new(ctx, source, tables, None);
            w.push_file_module();
            return w.finish(1);
        };
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
        match name {
            "line_comment" => K::LineComment,
            "block_comment" => K::BlockComment,
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
            "call_expression" => K::Call,
            "macro_invocation" => K::MacroInvocation,
            "struct_expression" => K::StructExpr,
            "scoped_identifier" => K::ScopedIdent,
            "identifier" => K::Ident,
            "type_identifier" => K::TypeIdent,
            "scoped_type_identifier" => K::ScopedTypeIdent,
            "generic_type" => K::GenericType,
            "generic_type_with_turbofish" => K::GenericTypeTurbofish,
            "generic_function" => K::GenericFunction,
            "type_binding" => K::TypeBinding,
            "field_expression" => K::FieldExpr,
            "bracketed_type" => K::BracketedType,
            "qualified_type" => K::QualifiedType,
            "token_tree" => K::TokenTree,
            "token_repetition" => K::TokenRepetition,
            "metavariable" => K::Metavariable,
            "self" | "super" | "crate" => K::PathKw,
            "type_parameters" => K::TypeParameters,
            "constrained_type_parameter" => K::ConstrainedTypeParam,
            "optional_type_parameter" => K::OptionalTypeParam,
            "const_parameter" => K::ConstParam,
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
            "reference_type" => K::ReferenceType,
            "pointer_type" => K::PointerType,
            "dynamic_type" => K::DynamicType,
            "abstract_type" => K::AbstractType,
            "function_modifiers" => K::FunctionModifiers,
            "where_clause" => K::WhereClause,
            "where_predicate" => K::WherePredicate,
            "mutable_specifier" => K::MutableSpecifier,
            "primitive_type" => K::Primitive,
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
            "lifetime"
            | "label"
            | "string_literal"
            | "raw_string_literal"
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
            | "extern_modifier" => K::Skip,
            _ => K::Other,
        }
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
    path: Vec<String>,
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
    uses: Vec<UseDecl>,
    mods: Vec<ModInfo>,
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
    mod_decls: Vec<ModDecl>,
    /// `Cx::local` of the item being added.
    local_fn: u32,
}

impl<'t, 'x> Walker<'t, 'x> {
    fn new(
        ctx: &'x FileContext,
        src: &'t str,
        t: &'static Tables,
        cursor: Option<TreeCursor<'t>>,
    ) -> Self {
        Walker {
            src,
            t,
            ctx,
            cursor,
            buf: Vec::with_capacity(256),
            keys: KeyAllocator::default(),
            entities: Vec::new(),
            refs: Vec::new(),
            ref_from: Vec::new(),
            uses: Vec::new(),
            mods: Vec::new(),
            impls: Vec::new(),
            generics: Vec::new(),
            seen: FxMap::default(),
            path_buf: Vec::new(),
            depth: 0,
            locals: Vec::new(),
            locals_base: 0,
            mod_decls: Vec::new(),
            local_fn: 0,
        }
    }

    fn finish(mut self, errors: u32) -> FileExtract {
        // Inner docs (`//!`) are appended while walking; drop trailing blanks.
        for e in &mut self.entities {
            trim_doc_end(&mut e.doc);
        }
        FileExtract {
            path: self.ctx.path.clone(),
            status: if errors > 0 {
                ParseStatus::Partial
            } else {
                ParseStatus::Ok
            },
            syntax_errors: errors,
            entities: self.entities,
            refs: self.refs,
            uses: self.uses,
            mods: self.mod_decls,
            context: self.ctx.clone(),
        }
    }

    fn push_file_module(&mut self) {
        let ctx = self.ctx;
        let name = ctx
            .module_path
            .last()
            .cloned()
            .unwrap_or_else(|| ctx.crate_name.clone());
        let key = keys::file_module_key(&ctx.path, &ctx.module_path, &ctx.crate_name);
        let key = self.keys.allocate(key);
        let module_path = match ctx.module_path.split_last() {
            Some((_, parent)) => parent.to_vec(),
            None => Vec::new(),
        };
        let newlines = self.src.bytes().filter(|&b| b == b'\n').count();
        let last_line = if self.src.is_empty() || !self.src.ends_with('\n') {
            newlines + 1
        } else {
            newlines
        };
        self.entities.push(Entity {
            key,
            kind: EntityKind::Module,
            name,
            visibility: Visibility::Public,
            file: ctx.path.clone(),
            start_line: 1,
            end_line: u32::try_from(last_line.max(1)).unwrap_or(u32::MAX),
            module_path,
            doc: String::new(),
            signature: Signature::default(),
            is_test: ctx.is_test_file,
            owner: None,
            trait_name: None,
            parent: None,
        });
        self.mods.push(ModInfo {
            path: ctx.module_path.clone(),
            entity: 0,
        });
    }

    // -- tree access -------------------------------------------------------

    #[inline]
    fn kind(&self, n: Node<'_>) -> K {
        self.t
            .kinds
            .get(n.kind_id() as usize)
            .copied()
            .unwrap_or(K::Other)
    }

    #[inline]
    fn text(&self, n: Node<'_>) -> &'t str {
        self.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
    }

    #[inline]
    fn field(&self, n: Node<'t>, id: u16) -> Option<Node<'t>> {
        if id == 0 {
            None
        } else {
            n.child_by_field_id(id)
        }
    }

    /// Pushes the children of `n` onto `buf`; returns their index range. The
    /// caller must `buf.truncate(start)` when done.
    fn load_children(&mut self, n: Node<'t>) -> Range<usize> {
        let start = self.buf.len();
        if let Some(cursor) = self.cursor.as_mut() {
            cursor.reset(n);
            if cursor.goto_first_child() {
                loop {
                    self.buf.push(cursor.node());
                    if !cursor.goto_next_sibling() {
                        break;
                    }
                }
            }
        }
        start..self.buf.len()
    }

    /// First direct child whose kind satisfies `pred`.
    fn find_child(&mut self, n: Node<'t>, pred: impl Fn(K) -> bool) -> Option<Node<'t>> {
        let cursor = self.cursor.as_mut()?;
        cursor.reset(n);
        if !cursor.goto_first_child() {
            return None;
        }
        loop {
            let c = cursor.node();
            let k = self
                .t
                .kinds
                .get(c.kind_id() as usize)
                .copied()
                .unwrap_or(K::Other);
            if pred(k) {
                return Some(c);
            }
            if !cursor.goto_next_sibling() {
                return None;
            }
        }
    }

    fn is_generic(&self, name: &str) -> bool {
        self.generics.iter().rev().any(|g| *g == name)
    }

    // -- generic walk -------------------------------------------------------

    /// Walks the children of a list-like node, handing each item the run of
    /// attributes and comments that precedes it.
    fn walk_children(&mut self, n: Node<'t>, cx: &Cx) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let range = self.load_children(n);
        let start = range.start;
        let mut cx = *cx;
        let mut run = start;
        for i in range {
            let c = self.buf[i];
            let k = self.kind(c);
            match k {
                K::AttributeItem => {}
                K::LineComment | K::BlockComment => {
                    let text = self.text(c);
                    if text.starts_with("//!") || text.starts_with("/*!") {
                        let target = &mut self.entities[cx.doc_target as usize].doc;
                        push_comment_doc(target, text, true);
                    }
                }
                K::InnerAttributeItem => {
                    self.inner_attribute(c, &mut cx);
                    run = i + 1;
                }
                K::Skip => run = i + 1,
                _ if k.is_item() => {
                    self.item(c, k, run..i, &cx);
                    run = i + 1;
                }
                _ => {
                    self.walk(c, &cx);
                    run = i + 1;
                }
            }
        }
        self.buf.truncate(start);
        self.depth -= 1;
    }

    fn walk(&mut self, n: Node<'t>, cx: &Cx) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.walk_inner(n, cx);
        self.depth -= 1;
    }

    fn walk_inner(&mut self, n: Node<'t>, cx: &Cx) {
        let k = self.kind(n);
        let f = &self.t.f;
        match k {
            K::Skip
            | K::LineComment
            | K::BlockComment
            | K::AttributeItem
            | K::InnerAttributeItem
            | K::VisibilityModifier
            | K::TokenTree
            | K::TokenRepetition
            | K::Metavariable
            | K::PathKw
            | K::MutableSpecifier
            | K::Primitive
            | K::TColonColon
            | K::TBang
            | K::TDot
            | K::TFn
            | K::TUnsafe => {}
            _ if k.is_item() => self.item(n, k, 0..0, cx),
            K::Call => {
                let (func, args) = (self.field(n, f.function), self.field(n, f.arguments));
                if let Some(func) = func {
                    self.callee(func, cx);
                }
                if let Some(args) = args {
                    self.walk(args, cx);
                }
            }
            K::MacroInvocation => {
                if let Some(m) = self.field(n, f.macro_) {
                    self.path_ref(m, RefKind::MacroCall, cx);
                }
                if let Some(tt) = self.find_child(n, |k| k == K::TokenTree) {
                    self.scan_tt(tt, cx);
                }
            }
            K::StructExpr => {
                let (name, body) = (self.field(n, f.name), self.field(n, f.body));
                if let Some(name) = name {
                    self.path_ref(name, RefKind::Type, cx);
                }
                if let Some(body) = body {
                    self.walk(body, cx);
                }
            }
            K::ScopedIdent => self.path_ref(n, RefKind::Value, cx),
            K::Ident => {
                let t = self.text(n);
                if is_all_caps(t) && !self.is_generic(t) {
                    self.emit(RefKind::Value, &[t], n, cx, false);
                }
            }
            K::TypeIdent => {
                let t = self.text(n);
                if t != "Self" && !self.is_generic(t) {
                    self.emit(RefKind::Type, &[t], n, cx, false);
                }
            }
            K::ScopedTypeIdent | K::GenericType => self.path_ref(n, RefKind::Type, cx),
            K::GenericFunction => {
                let (func, args) = (self.field(n, f.function), self.field(n, f.type_arguments));
                if let Some(func) = func {
                    self.walk(func, cx);
                }
                if let Some(args) = args {
                    self.walk(args, cx);
                }
            }
            K::TypeBinding => {
                let (ty, args) = (self.field(n, f.ty), self.field(n, f.type_arguments));
                if let Some(args) = args {
                    self.walk(args, cx);
                }
                if let Some(ty) = ty {
                    self.walk(ty, cx);
                }
            }
            K::FieldExpr => {
                let (value, field) = (self.field(n, f.value), self.field(n, f.field));
                if let (Some(v), Some(field)) = (value, field) {
                    // A field read: the resolver types the value and links
                    // the struct that has the field.
                    if let Some(recv) = self.value_recv(v, 0) {
                        let name = self.text(field);
                        self.emit_ref(RefKind::Field, &[name], field, cx, false, Some(recv));
                    }
                }
                if let Some(v) = value {
                    self.walk(v, cx);
                }
            }
            // Bindings: the initialiser / scrutinee still sees the old
            // names, so bind after walking it.
            K::LetDecl => {
                self.walk_children(n, cx);
                self.bind_let(n);
            }
            K::LetCondition => {
                self.walk_children(n, cx);
                if let Some(p) = self.field(n, f.pattern) {
                    self.shadow_pattern(p);
                }
            }
            K::ForExpr => {
                let (pat, val, body) = (
                    self.field(n, f.pattern),
                    self.field(n, f.value),
                    self.field(n, f.body),
                );
                if let Some(v) = val {
                    self.walk(v, cx);
                }
                if let Some(p) = pat {
                    // `for x in v`: `x` is an element of `v`.
                    let element = match (self.kind(p), val) {
                        (K::Ident, Some(v)) => self.value_recv(v, 0),
                        _ => None,
                    };
                    match element {
                        Some(e) => {
                            let name = self.text(p);
                            self.locals.push((name, Some(Recv::Element(Box::new(e)))));
                        }
                        None => self.shadow_pattern(p),
                    }
                    self.walk(p, cx);
                }
                if let Some(b) = body {
                    self.walk(b, cx);
                }
            }
            K::Closure => {
                if let Some(p) = self.field(n, f.parameters) {
                    self.shadow_pattern(p);
                }
                self.walk_children(n, cx);
            }
            K::MatchArm => {
                // `match_pattern` is the pattern plus an optional guard.
                if let Some(p) = self.field(n, f.pattern).and_then(|mp| mp.child(0)) {
                    self.shadow_pattern(p);
                }
                self.walk_children(n, cx);
            }
            _ => self.walk_children(n, cx),
        }
    }

    // -- local bindings and receiver types ------------------------------------

    /// What the latest binding of `name` in the current function holds.
    fn lookup_local(&self, name: &str) -> Option<Recv> {
        self.locals[self.locals_base..]
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .and_then(|(_, t)| t.clone())
    }

    /// Records a binding whose value is not known: it hides an earlier
    /// binding of the same name (only needed when that one was known).
    fn shadow(&mut self, name: &'t str) {
        let known = self.locals[self.locals_base..]
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .is_some_and(|(_, t)| t.is_some());
        if known {
            self.locals.push((name, None));
        }
    }

    /// `let <pattern>[: T] [= value];` — binds an identifier to its declared
    /// type or to what its initialiser is; any other pattern only hides
    /// earlier bindings of the names it binds.
    #[inline(never)]
    fn bind_let(&mut self, n: Node<'t>) {
        let f = &self.t.f;
        let Some(pat) = self.field(n, f.pattern) else {
            return;
        };
        if self.kind(pat) != K::Ident {
            self.shadow_pattern(pat);
            return;
        }
        let name = self.text(pat);
        let ty = match (self.field(n, f.ty), self.field(n, f.value)) {
            (Some(t), _) => Some(Recv::Type(self.one_line(t))),
            (None, Some(v)) => self.value_recv(v, 0),
            (None, None) => None,
        };
        match ty {
            Some(_) => self.locals.push((name, ty)),
            None => self.shadow(name),
        }
    }

    /// Hides earlier bindings of every name a pattern binds (over-approximated:
    /// every identifier in it that is not a path).
    fn shadow_pattern(&mut self, p: Node<'t>) {
        if self.locals.len() > self.locals_base {
            self.shadow_walk(p, 0);
        }
    }

    fn shadow_walk(&mut self, p: Node<'t>, depth: u32) {
        match self.kind(p) {
            K::Ident => {
                let t = self.text(p);
                self.shadow(t);
                return;
            }
            K::ScopedIdent | K::TypeIdent | K::ScopedTypeIdent | K::GenericType => return,
            _ if p.kind_id() == self.t.shorthand_field => {
                let t = self.text(p);
                self.shadow(t);
                return;
            }
            _ => {}
        }
        if depth >= 32 || p.named_child_count() == 0 {
            return;
        }
        let range = self.load_children(p);
        let start = range.start;
        for i in range {
            let c = self.buf[i];
            if c.is_named() {
                self.shadow_walk(c, depth + 1);
            }
        }
        self.buf.truncate(start);
    }

    /// What the syntax says about the value of expression `v`, for the
    /// resolver to type: a local's binding, a call's or method's return
    /// value, a field, `?`, an element, a literal's type. `None` when the
    /// expression says nothing usable.
    #[inline(never)]
    fn value_recv(&mut self, v: Node<'t>, depth: u32) -> Option<Recv> {
        if depth > 12 {
            return None;
        }
        let f = &self.t.f;
        let inner = |w: &mut Self, n: Option<Node<'t>>| -> Option<Box<Recv>> {
            w.value_recv(n?, depth + 1).map(Box::new)
        };
        match self.kind(v) {
            K::Ident | K::PathKw => self.lookup_local(self.text(v)),
            K::FieldExpr => {
                let name = self.text(self.field(v, f.field)?).to_string();
                let value = self.field(v, f.value);
                Some(Recv::Field(inner(self, value)?, name))
            }
            K::Call => {
                let mut func = self.field(v, f.function)?;
                if self.kind(func) == K::GenericFunction {
                    func = self.field(func, f.function)?;
                }
                match self.kind(func) {
                    K::FieldExpr => {
                        let name = self.text(self.field(func, f.field)?).to_string();
                        let value = self.field(func, f.value);
                        Some(Recv::Method(inner(self, value)?, name))
                    }
                    K::Ident | K::ScopedIdent => {
                        let mut p = Vec::new();
                        if !self.collect_path(func, &mut p) || p.is_empty() {
                            return None;
                        }
                        // `Box::new(x)` and its kin: what `x` is.
                        if let [wrapper, "new"] = p[..] {
                            if is_smart_pointer(wrapper) {
                                let args = self.field(v, f.arguments)?;
                                return self.value_recv(args.named_child(0)?, depth + 1);
                            }
                        }
                        Some(Recv::Call(p.iter().map(|s| s.to_string()).collect()))
                    }
                    _ => None,
                }
            }
            K::TryExpr => Some(Recv::Try(inner(self, v.named_child(0))?)),
            K::RefExpr => self.value_recv(self.field(v, f.value)?, depth + 1),
            K::UnaryExpr | K::ParenExpr | K::AwaitExpr => {
                self.value_recv(v.named_child(0)?, depth + 1)
            }
            K::IndexExpr => Some(Recv::Element(inner(self, v.named_child(0))?)),
            K::StructExpr => {
                let name = self.field(v, f.name)?;
                Some(Recv::Type(compact(self.text(name))))
            }
            K::TypeCastExpr => Some(Recv::Type(self.one_line(self.field(v, f.ty)?))),
            _ => None,
        }
    }

    /// The function part of a call expression.
    fn callee(&mut self, func: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        match self.kind(func) {
            K::Ident => {
                let t = self.text(func);
                if t != "Self" && !self.is_generic(t) {
                    self.emit(RefKind::Call, &[t], func, cx, false);
                }
            }
            K::ScopedIdent => self.path_ref(func, RefKind::Call, cx),
            K::FieldExpr => {
                let (value, name) = (self.field(func, f.value), self.field(func, f.field));
                if let Some(name) = name {
                    let t = self.text(name);
                    if t.bytes().next().is_some_and(|b| !b.is_ascii_digit()) {
                        let on_self = value
                            .is_some_and(|v| self.kind(v) == K::PathKw && self.text(v) == "self");
                        let recv = match value {
                            Some(v) => self.value_recv(v, 0),
                            None => None,
                        };
                        self.emit_ref(RefKind::MethodCall, &[t], name, cx, on_self, recv);
                    }
                }
                if let Some(v) = value {
                    self.walk(v, cx);
                }
            }
            K::GenericFunction => {
                let (inner, args) = (
                    self.field(func, f.function),
                    self.field(func, f.type_arguments),
                );
                if let Some(inner) = inner {
                    self.callee(inner, cx);
                }
                if let Some(args) = args {
                    self.walk(args, cx);
                }
            }
            _ => self.walk(func, cx),
        }
    }

    // -- paths and refs -----------------------------------------------------

    /// Appends the segments of a path node (generic args dropped; `<X as Tr>`
    /// gives `Tr`, `<X>` gives `X`). On failure `out` is left unchanged.
    fn collect_path(&self, n: Node<'t>, out: &mut Vec<&'t str>) -> bool {
        let f = &self.t.f;
        let start = out.len();
        let mut cur = n;
        let ok = loop {
            match self.kind(cur) {
                K::Ident | K::TypeIdent | K::PathKw | K::Metavariable => {
                    out.push(self.text(cur));
                    break true;
                }
                K::ScopedIdent | K::ScopedTypeIdent => {
                    let Some(name) = self.field(cur, f.name) else {
                        break false;
                    };
                    out.push(self.text(name));
                    match self.field(cur, f.path) {
                        Some(p) => cur = p,
                        None => break true, // leading `::`
                    }
                }
                K::GenericType | K::GenericTypeTurbofish => match self.field(cur, f.ty) {
                    Some(t) => cur = t,
                    None => break false,
                },
                K::BracketedType => match cur.named_child(0) {
                    Some(inner) if self.kind(inner) == K::QualifiedType => {
                        match self.field(inner, f.alias) {
                            Some(a) => cur = a,
                            None => break false,
                        }
                    }
                    Some(inner) => cur = inner,
                    None => break false,
                },
                _ => break false,
            }
        };
        if ok {
            out[start..].reverse();
        } else {
            out.truncate(start);
        }
        ok
    }

    /// Walks the parts of a path that are not its segments: generic
    /// arguments and the self type of `<X as Tr>::f`.
    fn walk_path_extras(&mut self, n: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        let mut cur = n;
        loop {
            match self.kind(cur) {
                K::ScopedIdent | K::ScopedTypeIdent => match self.field(cur, f.path) {
                    Some(p) => cur = p,
                    None => return,
                },
                K::GenericType | K::GenericTypeTurbofish => {
                    if let Some(args) = self.field(cur, f.type_arguments) {
                        self.walk(args, cx);
                    }
                    match self.field(cur, f.ty) {
                        Some(t) => cur = t,
                        None => return,
                    }
                }
                K::BracketedType => match cur.named_child(0) {
                    Some(inner) if self.kind(inner) == K::QualifiedType => {
                        if let Some(t) = self.field(inner, f.ty) {
                            self.walk(t, cx);
                        }
                        match self.field(inner, f.alias) {
                            Some(a) => cur = a,
                            None => return,
                        }
                    }
                    Some(inner) => match self.kind(inner) {
                        K::TypeIdent
                        | K::ScopedTypeIdent
                        | K::GenericType
                        | K::Ident
                        | K::ScopedIdent => cur = inner,
                        _ => {
                            self.walk(inner, cx);
                            return;
                        }
                    },
                    None => return,
                },
                _ => return,
            }
        }
    }

    /// Emits a ref of the path `n` (unless it is `Self` or starts with a
    /// generic parameter) and walks its generic arguments.
    fn path_ref(&mut self, n: Node<'t>, kind: RefKind, cx: &Cx) {
        let mut p = std::mem::take(&mut self.path_buf);
        p.clear();
        if self.collect_path(n, &mut p) && !p.is_empty() {
            let first = p[0];
            let bare_self = p.len() == 1 && first == "Self";
            // A generic parameter alone names nothing; `T::Assoc` and
            // `T::new()` name items of its bounds.
            if !(bare_self || p.len() == 1 && self.is_generic(first)) {
                self.emit(kind, &p, n, cx, false);
            }
        }
        self.path_buf = p;
        self.walk_path_extras(n, cx);
    }

    fn emit(&mut self, kind: RefKind, path: &[&str], n: Node<'_>, cx: &Cx, on_self: bool) {
        self.emit_ref(kind, path, n, cx, on_self, None);
    }

    #[inline(never)]
    fn emit_ref(
        &mut self,
        kind: RefKind,
        path: &[&str],
        n: Node<'_>,
        cx: &Cx,
        on_self: bool,
        recv: Option<Recv>,
    ) {
        if path.is_empty() || path.iter().any(|s| s.is_empty()) {
            return;
        }
        let mut h = rustc_hash::FxHasher::default();
        cx.from.hash(&mut h);
        (kind as u8).hash(&mut h);
        on_self.hash(&mut h);
        for s in path {
            s.hash(&mut h);
        }
        recv.hash(&mut h);
        match self.seen.entry(h.finish()) {
            Entry::Occupied(e) => {
                let i = *e.get() as usize;
                let r = &self.refs[i];
                if self.ref_from[i] == cx.from
                    && r.kind == kind
                    && r.on_self == on_self
                    && r.path.len() == path.len()
                    && r.path.iter().zip(path).all(|(a, b)| a == b)
                    && r.receiver == recv
                {
                    return;
                }
                // Hash collision with a different ref: keep both.
            }
            Entry::Vacant(v) => {
                v.insert(self.refs.len() as u32);
            }
        }
        let self_type = cx.self_ty.map(|i| {
            let e = &self.entities[i as usize];
            e.owner.clone().unwrap_or_else(|| e.name.clone())
        });
        self.refs.push(RawRef {
            from: self.entities[cx.from as usize].key.clone(),
            kind,
            path: path.iter().map(|s| s.to_string()).collect(),
            line: line_of(n),
            scope: self.mods[cx.module as usize].path.clone(),
            self_type,
            on_self,
            receiver: recv,
        });
        self.ref_from.push(cx.from);
    }

    /// Cheap heuristic over a macro's token tree: `path(` → Call,
    /// `.name(` → MethodCall, `path!` + tree → MacroCall.
    #[inline(never)]
    fn scan_tt(&mut self, tt: Node<'t>, cx: &Cx) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let range = self.load_children(tt);
        let start = range.start;
        let mut path = TokPath::new();
        let mut prev = Tok::None;
        // The token before the current path's first segment.
        let mut before_path = Tok::None;
        // The path started after `.` whose receiver was `self`.
        let mut path_self = false;
        let mut self_dot = false;
        // What is known about the receiver before the last `.`, and about
        // the receiver of the current path when it started after a `.`.
        let mut dot_recv: Option<Recv> = None;
        let mut path_recv: Option<Recv> = None;
        // The last token ended in `>` / the current path continues one
        // (`Vec::<u8>::new`, `<X as Tr>::f`): its segments are incomplete.
        let mut prev_gt = false;
        let mut tainted = false;
        for i in range {
            let c = self.buf[i];
            let k = self.kind(c);
            match k {
                K::Ident | K::PathKw | K::Metavariable => {
                    let t = self.text(c);
                    if prev == Tok::Sep && path.len > 0 {
                        path.push(t);
                    } else {
                        if prev != Tok::Sep {
                            before_path = prev;
                            tainted = false;
                        }
                        path_self = prev == Tok::Dot && self_dot;
                        path_recv = if prev == Tok::Dot {
                            dot_recv.clone()
                        } else {
                            None
                        };
                        path.clear();
                        path.push(t);
                    }
                    prev = Tok::Ident;
                }
                K::TColonColon => {
                    if prev != Tok::Ident {
                        // A path starting with `::`.
                        before_path = prev;
                        tainted = prev_gt;
                        path.clear();
                    }
                    prev = Tok::Sep;
                }
                K::TDot => {
                    self_dot = prev == Tok::Ident && path.as_slice() == ["self"];
                    dot_recv = match path.as_slice() {
                        // `x.` with `x` not itself after a `.`: a local.
                        [name] if prev == Tok::Ident && before_path != Tok::Dot => {
                            self.lookup_local(name)
                        }
                        // `self.field.`
                        [field] if prev == Tok::Ident && path_self => self
                            .lookup_local("self")
                            .map(|s| Recv::Field(Box::new(s), field.to_string())),
                        _ => None,
                    };
                    path.clear();
                    prev = Tok::Dot;
                }
                K::TBang => {
                    prev = if prev == Tok::Ident && path.len > 0 {
                        Tok::Bang
                    } else {
                        Tok::Other
                    };
                }
                K::TFn => {
                    path.clear();
                    prev = Tok::Fn;
                }
                K::TokenTree | K::TokenRepetition => {
                    if k == K::TokenTree && path.len > 0 && !path.overflow && !tainted {
                        let paren = self.src.as_bytes().get(c.start_byte()) == Some(&b'(');
                        let segs = path.as_slice();
                        let first = segs[0];
                        let bare_self = segs.len() == 1 && first == "Self";
                        let plain =
                            !bare_self && !self.is_generic(first) && !first.starts_with('$');
                        if prev == Tok::Ident && paren {
                            if before_path == Tok::Dot {
                                if segs.len() == 1 {
                                    let recv = path_recv.clone();
                                    self.emit_ref(
                                        RefKind::MethodCall,
                                        segs,
                                        c,
                                        cx,
                                        path_self,
                                        recv,
                                    );
                                }
                            } else if before_path != Tok::Fn && plain {
                                self.emit(RefKind::Call, segs, c, cx, false);
                            }
                        } else if prev == Tok::Bang && before_path != Tok::Dot && plain {
                            self.emit(RefKind::MacroCall, segs, c, cx, false);
                        } else if prev == Tok::Ident {
                            // `Foo::Bar { .. }`, `a::B[..]`: a path as a value.
                            self.emit_tt_value(&path, before_path, tainted, c, cx);
                        }
                    }
                    self.scan_tt(c, cx);
                    path.clear();
                    prev = Tok::Other;
                }
                _ => {
                    if prev == Tok::Ident {
                        // `Kind::A,` `x == Mode::B)`: a path that ends here.
                        self.emit_tt_value(&path, before_path, tainted, c, cx);
                    }
                    path.clear();
                    prev = Tok::Other;
                }
            }
            prev_gt = k == K::Skip && !c.is_named() && self.text(c).ends_with('>');
        }
        self.buf.truncate(start);
        self.depth -= 1;
    }

    /// A qualified path that ends without being called inside a macro's
    /// tokens (`assert_eq!(m, Mode::Fast)`, `vec![Token::A]`) is a value.
    /// One segment is left alone: in macro tokens it is as often a pattern
    /// binding or a format argument as a reference.
    fn emit_tt_value(
        &mut self,
        path: &TokPath<'t>,
        before: Tok,
        tainted: bool,
        at: Node<'_>,
        cx: &Cx,
    ) {
        let segs = path.as_slice();
        if segs.len() < 2 || path.overflow || tainted || before == Tok::Dot {
            return;
        }
        let first = segs[0];
        if self.is_generic(first) || first.starts_with('$') {
            return;
        }
        self.emit(RefKind::Value, segs, at, cx, false);
    }

    // -- attributes ---------------------------------------------------------

    #[inline(never)]
    fn attrs(&mut self, range: Range<usize>) -> Attrs {
        let mut a = Attrs::default();
        for i in range {
            let Some(&c) = self.buf.get(i) else { break };
            match self.kind(c) {
                K::LineComment | K::BlockComment => {
                    let text = self.text(c);
                    push_comment_doc(&mut a.doc, text, false);
                }
                K::AttributeItem => self.attribute(c, &mut a),
                _ => {}
            }
        }
        trim_doc_end(&mut a.doc);
        a
    }

    /// Reads one `#[...]` / `#![...]` into `a`.
    #[inline(never)]
    fn attribute(&mut self, item: Node<'t>, a: &mut Attrs) {
        let Some(attr) = self.find_child(item, |k| k == K::Attribute) else {
            return;
        };
        let Some(path) = self.find_child(attr, |k| {
            matches!(k, K::Ident | K::ScopedIdent | K::PathKw | K::Metavariable)
        }) else {
            return;
        };
        let f = &self.t.f;
        let p = self.text(path);
        let last = p.rsplit("::").next().unwrap_or(p).trim();
        match last {
            "test" | "rstest" => a.test = true,
            "derive" if p == "derive" => {
                if let Some(tt) = self.field(attr, f.arguments) {
                    let t = self.text(tt);
                    let inner = t.get(1..t.len().saturating_sub(1)).unwrap_or("");
                    for part in inner.split(',') {
                        let d = compact(part);
                        if !d.is_empty() {
                            a.derives.push(d);
                        }
                    }
                }
            }
            "cfg" if p == "cfg" => {
                if let Some(tt) = self.field(attr, f.arguments) {
                    if self.tt_has_test(tt) {
                        a.cfg_test = true;
                    }
                }
            }
            "doc" if p == "doc" => {
                let value = self.field(attr, f.value);
                // Only literal docs; `#[doc = include_str!(..)]` is skipped.
                if let Some(v) = value.filter(|v| v.kind().ends_with("string_literal")) {
                    let t = self.text(v);
                    if let (Some(s), Some(e)) = (t.find('"'), t.rfind('"')) {
                        if s < e {
                            for line in t[s + 1..e].split('\n') {
                                push_doc_line(&mut a.doc, line);
                            }
                        }
                    }
                }
            }
            "macro_export" => a.macro_export = true,
            "path" if p == "path" => {
                let value = self.field(attr, f.value);
                if let Some(v) = value.filter(|v| v.kind() == "string_literal") {
                    let t = self.text(v);
                    if let (Some(s), Some(e)) = (t.find('"'), t.rfind('"')) {
                        if s < e {
                            a.path = Some(t[s + 1..e].to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether a `cfg(...)` predicate mentions `test` outside a `not(...)`.
    #[inline(never)]
    fn tt_has_test(&mut self, tt: Node<'t>) -> bool {
        if self.depth >= MAX_DEPTH {
            return false;
        }
        self.depth += 1;
        let range = self.load_children(tt);
        let start = range.start;
        let mut found = false;
        let mut after_not = false;
        for i in range {
            let c = self.buf[i];
            match self.kind(c) {
                K::Ident => {
                    let t = self.text(c);
                    if t == "test" {
                        found = true;
                        break;
                    }
                    after_not = t == "not";
                }
                K::TokenTree => {
                    if !after_not && self.tt_has_test(c) {
                        found = true;
                        break;
                    }
                    after_not = false;
                }
                _ => after_not = false,
            }
        }
        self.buf.truncate(start);
        self.depth -= 1;
        found
    }

    #[inline(never)]
    fn inner_attribute(&mut self, n: Node<'t>, cx: &mut Cx) {
        let mut a = Attrs::default();
        self.attribute(n, &mut a);
        let target = &mut self.entities[cx.doc_target as usize];
        if !a.doc.is_empty() {
            if !target.doc.is_empty() {
                target.doc.push('\n');
            }
            target.doc.push_str(&a.doc);
        }
        if a.cfg_test {
            target.is_test = true;
            cx.is_test = true;
        }
    }

    // -- entities -----------------------------------------------------------

    fn visibility(&mut self, n: Node<'t>) -> Visibility {
        match self.find_child(n, |k| k == K::VisibilityModifier) {
            Some(v) => classify_visibility(self.text(v)),
            None => Visibility::Private,
        }
    }

    /// Text of `n` from its start to byte `end`, on one line, capped, with
    /// trailing `;`/`=` removed.
    #[inline(never)]
    fn head(&self, n: Node<'t>, end: usize) -> String {
        let start = n.start_byte();
        let s = self.src.get(start..end.max(start)).unwrap_or("");
        let mut t = collapse(s, TEXT_CAP);
        while t.ends_with([';', '=', ' ']) {
            t.pop();
        }
        t
    }

    #[inline(never)]
    fn one_line(&self, n: Node<'t>) -> String {
        collapse(self.text(n), TYPE_CAP)
    }

    #[inline(never)]
    fn new_entity(&self, n: Node<'t>, kind: EntityKind, name: &str, cx: &Cx) -> Entity {
        Entity {
            key: String::new(),
            kind,
            name: name.to_string(),
            visibility: Visibility::Private,
            file: self.ctx.path.clone(),
            start_line: line_of(n),
            end_line: end_line_of(n),
            module_path: self.mods[cx.module as usize].path.clone(),
            doc: String::new(),
            signature: Signature::default(),
            is_test: cx.is_test,
            owner: None,
            trait_name: None,
            parent: Some(self.entities[cx.parent as usize].key.clone()),
        }
    }

    /// Assigns the key (from `item`, the item part) and stores the entity.
    #[inline(never)]
    fn add(&mut self, mut e: Entity, item: &str) -> u32 {
        let key = match self.local_fn {
            0 => keys::item_key(&self.ctx.path, &e.module_path, item),
            f => keys::local_item_key(&self.entities[f as usize - 1].key, item),
        };
        e.key = self.keys.allocate(key);
        self.entities.push(e);
        (self.entities.len() - 1) as u32
    }

    /// Kind, owner, trait name, item key part and visibility of a member
    /// that may sit in an impl or trait body.
    #[inline(never)]
    fn member(
        &self,
        cx: &Cx,
        free_kind: EntityKind,
        assoc_kind: EntityKind,
        name: &str,
        own_vis: Visibility,
    ) -> (
        EntityKind,
        Option<String>,
        Option<String>,
        String,
        Visibility,
    ) {
        match cx.container {
            Container::Impl(i) => {
                let info = &self.impls[i as usize];
                let vis = if info.trait_key.is_some() {
                    Visibility::Public
                } else {
                    own_vis
                };
                (
                    assoc_kind,
                    Some(info.owner.clone()),
                    info.trait_name.clone(),
                    keys::method_item(&info.owner, info.trait_key.as_deref(), name),
                    vis,
                )
            }
            Container::Trait(t) => {
                let tr = &self.entities[t as usize];
                (
                    assoc_kind,
                    Some(tr.name.clone()),
                    None,
                    keys::method_item(&tr.name, None, name),
                    tr.visibility,
                )
            }
            Container::Module => (free_kind, None, None, name.to_string(), own_vis),
        }
    }

    #[inline(never)]
    fn push_generics(&mut self, tp: Node<'t>) {
        let f = &self.t.f;
        let range = self.load_children(tp);
        let start = range.start;
        for i in range {
            let c = self.buf[i];
            let name = match self.kind(c) {
                K::TypeIdent => Some(c),
                K::ConstrainedTypeParam => self.field(c, f.left),
                K::OptionalTypeParam => match self.field(c, f.name) {
                    Some(nm) if self.kind(nm) == K::ConstrainedTypeParam => self.field(nm, f.left),
                    other => other,
                },
                K::ConstParam => self.field(c, f.name),
                _ => None,
            };
            if let Some(nm) = name {
                if matches!(self.kind(nm), K::TypeIdent | K::Ident) {
                    let t = self.text(nm);
                    self.generics.push(t);
                }
            }
        }
        self.buf.truncate(start);
    }

    /// Texts of the named children of `n` (generic params, where predicates,
    /// bounds), attributes and comments excluded.
    #[inline(never)]
    fn child_texts(&mut self, n: Node<'t>, only: Option<K>) -> Vec<String> {
        let range = self.load_children(n);
        let start = range.start;
        let mut out = Vec::new();
        for i in range {
            let c = self.buf[i];
            let k = self.kind(c);
            if !c.is_named() || k.is_comment() || k == K::AttributeItem {
                continue;
            }
            if only.is_some_and(|o| o != k) {
                continue;
            }
            out.push(self.one_line(c));
        }
        self.buf.truncate(start);
        out
    }

    /// Handles one item. The per-kind builders (never inlined, with large
    /// frames) create the entity and return a [`Plan`] of what to walk next,
    /// so only this small frame stays on the stack while nested items and
    /// bodies are walked.
    fn item(&mut self, n: Node<'t>, k: K, attrs: Range<usize>, cx: &Cx) {
        // An item does not see the local bindings around it; `Self` means
        // something else inside a nested type, trait or module.
        let (saved_base, saved_len) = (self.locals_base, self.locals.len());
        let saved_local = self.local_fn;
        self.locals_base = saved_len;
        self.local_fn = cx.local;
        self.item_inner(n, k, attrs, cx);
        self.local_fn = saved_local;
        self.locals.truncate(saved_len);
        self.locals_base = saved_base;
    }

    fn item_inner(&mut self, n: Node<'t>, k: K, attrs: Range<usize>, cx: &Cx) {
        let plan = match k {
            K::Use => {
                self.use_decl(n, cx);
                return;
            }
            K::ExternCrate => {
                self.extern_crate(n, cx);
                return;
            }
            K::ForeignMod => {
                let mut plan = Plan::new(*cx, self.generics.len());
                plan.body = self.field(n, self.t.f.body);
                plan
            }
            K::Function | K::FunctionSig => self.function(n, attrs, cx),
            K::Struct | K::Union => self.struct_like(n, k, attrs, cx),
            K::Enum => self.enum_item(n, attrs, cx),
            K::Trait => self.trait_item(n, attrs, cx),
            K::Impl => self.impl_item(n, attrs, cx),
            K::Mod => self.mod_item(n, attrs, cx),
            K::Const | K::Static => self.const_static(n, k, attrs, cx),
            K::TypeItem | K::AssocType => self.type_item(n, k, attrs, cx),
            K::MacroDef => {
                self.macro_def(n, attrs, cx);
                return;
            }
            _ => return,
        };
        self.run_plan(plan);
    }

    fn run_plan(&mut self, plan: Plan<'t>) {
        for part in plan.parts.into_iter().flatten() {
            self.walk(part, &plan.part_cx);
        }
        if let Some(body) = plan.body {
            self.walk_children(body, &plan.body_cx);
        }
        self.generics.truncate(plan.mark);
    }

    #[inline(never)]
    fn function(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let body = self.field(n, f.body);
        let mark = self.generics.len();
        let Some(name_node) = self.field(n, f.name) else {
            // Not a usable item (error recovery); still look inside.
            let mut plan = Plan::new(*cx, mark);
            plan.body = body;
            return plan;
        };
        let name = self.text(name_node);
        let tp = self.field(n, f.type_parameters);
        let params = self.field(n, f.parameters);
        let ret = self.field(n, f.return_type);
        if let Some(tp) = tp {
            self.push_generics(tp);
        }
        let mut sig = Signature::default();
        if let Some(p) = params {
            sig.parameters = self.params(p, body.is_some());
        }
        sig.return_type = ret.map(|r| self.one_line(r));
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None);
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate));
        }
        if let Some(m) = self.find_child(n, |k| k == K::FunctionModifiers) {
            for word in self.text(m).split_whitespace() {
                match word {
                    "async" => sig.is_async = true,
                    "unsafe" => sig.is_unsafe = true,
                    "const" => sig.is_const = true,
                    _ => {}
                }
            }
        }
        sig.text = self.head(n, body.map_or(n.end_byte(), |b| b.start_byte()));
        let own_vis = self.visibility(n);
        let (kind, owner, trait_name, item, vis) =
            self.member(cx, EntityKind::Function, EntityKind::Method, name, own_vis);
        if kind == EntityKind::Method {
            sig.self_type = owner.clone();
            if let Container::Impl(i) = cx.container {
                sig.trait_ref = self.impls[i as usize].trait_ref.clone();
            }
        }
        let is_test = cx.is_test || a.test || a.cfg_test;
        let mut e = self.new_entity(n, kind, name, cx);
        e.visibility = vis;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = is_test;
        e.owner = owner;
        e.trait_name = trait_name;
        let idx = self.add(e, &item);
        let mut plan = Plan::new(*cx, mark);
        plan.part_cx.from = idx;
        plan.parts = [tp, params, ret, wc];
        plan.body = body;
        // Items in the body are the function's own: their keys and their
        // parent say so, and names in the body resolve to them first.
        plan.body_cx = Cx {
            module: cx.module,
            from: idx,
            parent: idx,
            doc_target: idx,
            container: Container::Module,
            self_ty: cx.self_ty,
            is_test,
            local: idx + 1,
        };
        plan
    }

    /// The parameters of a function; with `bind`, parameters with declared
    /// types also become local bindings of the body.
    #[inline(never)]
    fn params(&mut self, p: Node<'t>, bind: bool) -> Vec<Param> {
        let f = &self.t.f;
        let range = self.load_children(p);
        let start = range.start;
        let mut out = Vec::new();
        for i in range {
            let c = self.buf[i];
            match self.kind(c) {
                K::SelfParameter => {
                    let t = self.text(c);
                    let (ty, pattern) = if t.trim_start().starts_with('&') {
                        if t.contains("mut") {
                            ("&mut Self", ParamPattern::MutRef)
                        } else {
                            ("&Self", ParamPattern::Ref)
                        }
                    } else {
                        ("Self", ParamPattern::Owned)
                    };
                    out.push(Param {
                        name: "self".to_string(),
                        ty: ty.to_string(),
                        pattern,
                    });
                    if bind {
                        self.locals.push(("self", Some(Recv::Type("Self".into()))));
                    }
                }
                K::Parameter => {
                    let (pat, ty) = (self.field(c, f.pattern), self.field(c, f.ty));
                    if bind {
                        if let (Some(p), Some(t)) = (pat, ty) {
                            if matches!(self.kind(p), K::Ident | K::PathKw) {
                                let name = self.text(p);
                                let ty = Recv::Type(self.one_line(t));
                                self.locals.push((name, Some(ty)));
                            }
                        }
                    }
                    let name = match pat {
                        Some(p) if matches!(self.kind(p), K::Ident | K::PathKw) => {
                            self.text(p).to_string()
                        }
                        Some(p) => self.one_line(p),
                        None => String::new(),
                    };
                    let (ty_text, pattern) = match ty {
                        Some(ty) => {
                            let pattern = if self.kind(ty) == K::ReferenceType {
                                if self.find_child(ty, |k| k == K::MutableSpecifier).is_some() {
                                    ParamPattern::MutRef
                                } else {
                                    ParamPattern::Ref
                                }
                            } else {
                                ParamPattern::Owned
                            };
                            (self.one_line(ty), pattern)
                        }
                        None => (String::new(), ParamPattern::Owned),
                    };
                    out.push(Param {
                        name,
                        ty: ty_text,
                        pattern,
                    });
                }
                _ => {}
            }
        }
        self.buf.truncate(start);
        out
    }

    #[inline(never)]
    fn struct_like(&mut self, n: Node<'t>, k: K, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let Some(name_node) = self.field(n, f.name) else {
            return Plan::new(*cx, self.generics.len());
        };
        let name = self.text(name_node);
        let mark = self.generics.len();
        let tp = self.field(n, f.type_parameters);
        let body = self.field(n, f.body);
        if let Some(tp) = tp {
            self.push_generics(tp);
        }
        let vis = self.visibility(n);
        let mut sig = Signature::default();
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None);
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate));
        }
        sig.traits = a.derives;
        if let Some(b) = body {
            sig.fields = self.fields(b);
        }
        sig.text = self.head(n, body.map_or(n.end_byte(), |b| b.start_byte()));
        let kind = if k == K::Union {
            EntityKind::Union
        } else {
            EntityKind::Struct
        };
        let mut e = self.new_entity(n, kind, name, cx);
        e.visibility = vis;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = cx.is_test || a.cfg_test;
        let idx = self.add(e, name);
        let mut plan = Plan::new(*cx, mark);
        plan.part_cx.from = idx;
        plan.parts = [tp, body, wc, None];
        plan
    }

    /// Fields of a `{ a: T }` or `(T, U)` body.
    #[inline(never)]
    fn fields(&mut self, body: Node<'t>) -> Vec<Field> {
        let f = &self.t.f;
        let tuple = self.kind(body) == K::OrderedFieldDeclList;
        let range = self.load_children(body);
        let start = range.start;
        let mut out = Vec::new();
        let mut pending_vis = Visibility::Private;
        for i in range {
            let c = self.buf[i];
            let k = self.kind(c);
            if tuple {
                if !c.is_named() || k.is_comment() || k == K::AttributeItem {
                    continue;
                }
                if k == K::VisibilityModifier {
                    pending_vis = classify_visibility(self.text(c));
                    continue;
                }
                out.push(Field {
                    name: out.len().to_string(),
                    ty: self.one_line(c),
                    visibility: pending_vis,
                });
                pending_vis = Visibility::Private;
            } else if k == K::FieldDecl {
                let (nm, ty) = (self.field(c, f.name), self.field(c, f.ty));
                let vis = self.visibility(c);
                out.push(Field {
                    name: nm.map(|x| self.text(x).to_string()).unwrap_or_default(),
                    ty: ty.map(|t| self.one_line(t)).unwrap_or_default(),
                    visibility: vis,
                });
            }
        }
        self.buf.truncate(start);
        out
    }

    #[inline(never)]
    fn enum_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let Some(name_node) = self.field(n, f.name) else {
            return Plan::new(*cx, self.generics.len());
        };
        let name = self.text(name_node);
        let mark = self.generics.len();
        let tp = self.field(n, f.type_parameters);
        let body = self.field(n, f.body);
        if let Some(tp) = tp {
            self.push_generics(tp);
        }
        let vis = self.visibility(n);
        let mut sig = Signature::default();
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None);
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate));
        }
        sig.traits = a.derives;
        sig.text = self.head(n, body.map_or(n.end_byte(), |b| b.start_byte()));
        let mut e = self.new_entity(n, EntityKind::Enum, name, cx);
        e.visibility = vis;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = cx.is_test || a.cfg_test;
        let idx = self.add(e, name);
        let mut icx = *cx;
        icx.from = idx;
        for part in [tp, wc].into_iter().flatten() {
            self.walk(part, &icx);
        }
        if let Some(body) = body {
            let range = self.load_children(body);
            let start = range.start;
            let mut variants = Vec::new();
            for i in range {
                let c = self.buf[i];
                if self.kind(c) != K::EnumVariant {
                    continue;
                }
                let (vn, vb, vv) = (
                    self.field(c, f.name),
                    self.field(c, f.body),
                    self.field(c, f.value),
                );
                variants.push(Field {
                    name: vn.map(|x| self.text(x).to_string()).unwrap_or_default(),
                    ty: vb.map(|b| self.one_line(b)).unwrap_or_default(),
                    visibility: vis,
                });
                for part in [vb, vv].into_iter().flatten() {
                    self.walk(part, &icx);
                }
            }
            self.buf.truncate(start);
            self.entities[idx as usize].signature.fields = variants;
        }
        Plan::new(*cx, mark)
    }

    #[inline(never)]
    fn trait_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let Some(name_node) = self.field(n, f.name) else {
            return Plan::new(*cx, self.generics.len());
        };
        let name = self.text(name_node);
        let mark = self.generics.len();
        let tp = self.field(n, f.type_parameters);
        let bounds = self.field(n, f.bounds);
        let body = self.field(n, f.body);
        if let Some(tp) = tp {
            self.push_generics(tp);
        }
        let vis = self.visibility(n);
        let mut sig = Signature::default();
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None);
        }
        if let Some(b) = bounds {
            sig.supertraits = self.child_texts(b, None);
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate));
        }
        sig.is_unsafe = self.find_child(n, |k| k == K::TUnsafe).is_some();
        sig.text = self.head(n, body.map_or(n.end_byte(), |b| b.start_byte()));
        let is_test = cx.is_test || a.cfg_test;
        let mut e = self.new_entity(n, EntityKind::Trait, name, cx);
        e.visibility = vis;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = is_test;
        let idx = self.add(e, name);
        let mut plan = Plan::new(*cx, mark);
        plan.part_cx.from = idx;
        plan.parts = [tp, bounds, wc, None];
        plan.body = body;
        plan.body_cx = Cx {
            module: cx.module,
            from: idx,
            parent: idx,
            doc_target: idx,
            container: Container::Trait(idx),
            self_ty: Some(idx),
            is_test,
            local: cx.local,
        };
        plan
    }

    /// Owner name of an impl's self type: last path segment, generics and
    /// references removed; non-path types give their compacted text.
    #[inline(never)]
    fn type_owner(&self, ty: Node<'t>) -> String {
        let f = &self.t.f;
        let mut cur = ty;
        for _ in 0..64 {
            let next = match self.kind(cur) {
                K::TypeIdent | K::Ident | K::Primitive => {
                    return self.text(cur).to_string();
                }
                K::ScopedTypeIdent | K::ScopedIdent => {
                    return self
                        .field(cur, f.name)
                        .map(|x| self.text(x).to_string())
                        .unwrap_or_else(|| compact(self.text(cur)));
                }
                K::GenericType => self.field(cur, f.ty),
                K::ReferenceType | K::PointerType => self.field(cur, f.ty),
                K::DynamicType | K::AbstractType => self.field(cur, f.trait_),
                _ => None,
            };
            match next {
                Some(nx) => cur = nx,
                None => break,
            }
        }
        compact(self.text(cur))
    }

    #[inline(never)]
    fn impl_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let tp = self.field(n, f.type_parameters);
        let tr = self.field(n, f.trait_);
        let ty = self.field(n, f.ty);
        let body = self.field(n, f.body);
        let mark = self.generics.len();
        if let Some(tp) = tp {
            self.push_generics(tp);
        }
        let owner = match ty {
            Some(t) => self.type_owner(t),
            None => String::new(),
        };
        let negative = tr.is_some() && self.find_child(n, |k| k == K::TBang).is_some();
        let bang = if negative { "!" } else { "" };
        let trait_key = tr.map(|t| format!("{bang}{}", compact(self.text(t))));
        let trait_ref = tr.map(|t| format!("{bang}{}", self.one_line(t)));
        let trait_name = tr.map(|t| {
            let base = if self.kind(t) == K::GenericType {
                self.field(t, f.ty).unwrap_or(t)
            } else {
                t
            };
            compact(self.text(base))
        });
        let item = keys::impl_item(&owner, trait_key.as_deref());
        let mut sig = Signature::default();
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None);
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate));
        }
        sig.is_unsafe = self.find_child(n, |k| k == K::TUnsafe).is_some();
        sig.self_type = ty.map(|t| self.one_line(t));
        sig.trait_ref = trait_ref.clone();
        sig.text = self.head(n, body.map_or(n.end_byte(), |b| b.start_byte()));
        let is_test = cx.is_test || a.cfg_test;
        let mut e = self.new_entity(n, EntityKind::Impl, &item, cx);
        e.visibility = Visibility::Public;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = is_test;
        e.owner = Some(owner.clone());
        e.trait_name = trait_name.clone();
        let idx = self.add(e, &item);
        self.impls.push(ImplInfo {
            owner,
            trait_key,
            trait_name,
            trait_ref,
        });
        let impl_idx = (self.impls.len() - 1) as u32;

        let mut icx = *cx;
        icx.from = idx;
        icx.self_ty = Some(idx);
        if let Some(t) = tr {
            let mut p = std::mem::take(&mut self.path_buf);
            p.clear();
            if self.collect_path(t, &mut p) && !p.is_empty() {
                self.emit(RefKind::Implements, &p, t, &icx, false);
            }
            self.path_buf = p;
            self.walk_path_extras(t, &icx);
        }
        if let Some(t) = ty {
            let mut base = t;
            for _ in 0..16 {
                let inner = match self.kind(base) {
                    K::ReferenceType | K::PointerType => self.field(base, f.ty),
                    K::DynamicType => self.field(base, f.trait_),
                    _ => None,
                };
                match inner {
                    Some(i) => base = i,
                    None => break,
                }
            }
            let mut p = std::mem::take(&mut self.path_buf);
            p.clear();
            let is_path = self.collect_path(base, &mut p) && !p.is_empty();
            if is_path && !(p.len() == 1 && self.is_generic(p[0])) {
                self.emit(RefKind::ImplOwner, &p, base, &icx, false);
            }
            self.path_buf = p;
            if is_path {
                self.walk_path_extras(base, &icx);
            } else {
                self.walk(base, &icx);
            }
        }
        let mut plan = Plan::new(icx, mark);
        plan.parts = [tp, wc, None, None];
        plan.body = body;
        plan.body_cx = Cx {
            module: cx.module,
            from: idx,
            parent: idx,
            doc_target: idx,
            container: Container::Impl(impl_idx),
            self_ty: Some(idx),
            is_test,
            local: cx.local,
        };
        plan
    }

    #[inline(never)]
    fn mod_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let (Some(name_node), Some(body)) = (self.field(n, f.name), self.field(n, f.body)) else {
            // `mod foo;` — the module is the entity of another file.
            if let Some(name_node) = self.field(n, f.name) {
                let inline =
                    self.mods[cx.module as usize].path[self.ctx.module_path.len()..].to_vec();
                self.mod_decls.push(ModDecl {
                    name: self.text(name_node).to_string(),
                    inline,
                    path_attr: a.path,
                    cfg_test: cx.is_test || a.cfg_test,
                });
            }
            return Plan::new(*cx, self.generics.len());
        };
        let name = self.text(name_node);
        let vis = self.visibility(n);
        let is_test = cx.is_test || a.cfg_test || a.test;
        let sig = Signature {
            text: self.head(n, body.start_byte()),
            ..Signature::default()
        };
        let mut e = self.new_entity(n, EntityKind::Module, name, cx);
        e.visibility = vis;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = is_test;
        let idx = self.add(e, name);
        let mut path = self.mods[cx.module as usize].path.clone();
        path.push(name.to_string());
        self.mods.push(ModInfo { path, entity: idx });
        let mut plan = Plan::new(*cx, self.generics.len());
        plan.body = Some(body);
        plan.body_cx = Cx {
            module: (self.mods.len() - 1) as u32,
            from: idx,
            parent: idx,
            doc_target: idx,
            container: Container::Module,
            self_ty: None,
            is_test,
            local: cx.local,
        };
        plan
    }

    #[inline(never)]
    fn const_static(&mut self, n: Node<'t>, k: K, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let ty = self.field(n, f.ty);
        let value = self.field(n, f.value);
        let name = self.field(n, f.name).map(|x| self.text(x));
        let Some(name) = name.filter(|nm| *nm != "_") else {
            // `const _: () = { ... };` — no entity, but look inside.
            let vcx = Cx {
                parent: self.mods[cx.module as usize].entity,
                container: Container::Module,
                ..*cx
            };
            let mut plan = Plan::new(vcx, self.generics.len());
            plan.parts = [ty, value, None, None];
            return plan;
        };
        let free = if k == K::Static {
            EntityKind::Static
        } else {
            EntityKind::Const
        };
        let own_vis = self.visibility(n);
        let (kind, owner, trait_name, item, vis) = self.member(cx, free, free, name, own_vis);
        let sig = Signature {
            ty: ty.map(|t| self.one_line(t)),
            is_mut: k == K::Static && self.find_child(n, |k| k == K::MutableSpecifier).is_some(),
            text: self.head(n, value.map_or(n.end_byte(), |v| v.start_byte())),
            ..Signature::default()
        };
        let mut e = self.new_entity(n, kind, name, cx);
        e.visibility = vis;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = cx.is_test || a.cfg_test;
        e.owner = owner;
        e.trait_name = trait_name;
        let idx = self.add(e, &item);
        let vcx = Cx {
            module: cx.module,
            from: idx,
            parent: self.mods[cx.module as usize].entity,
            doc_target: idx,
            container: Container::Module,
            self_ty: cx.self_ty,
            is_test: cx.is_test,
            local: cx.local,
        };
        let mut plan = Plan::new(vcx, self.generics.len());
        plan.parts = [ty, value, None, None];
        plan
    }

    #[inline(never)]
    fn type_item(&mut self, n: Node<'t>, k: K, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let Some(name_node) = self.field(n, f.name) else {
            return Plan::new(*cx, self.generics.len());
        };
        let name = self.text(name_node);
        let mark = self.generics.len();
        let tp = self.field(n, f.type_parameters);
        let ty = self.field(n, f.ty);
        let bounds = self.field(n, f.bounds);
        if let Some(tp) = tp {
            self.push_generics(tp);
        }
        let own_vis = self.visibility(n);
        let (kind, owner, trait_name, item, vis) = self.member(
            cx,
            EntityKind::TypeAlias,
            EntityKind::TypeAlias,
            name,
            own_vis,
        );
        let mut sig = Signature::default();
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None);
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate));
        }
        if k == K::TypeItem {
            sig.ty = ty.map(|t| self.one_line(t));
        }
        sig.text = self.head(n, n.end_byte());
        let mut e = self.new_entity(n, kind, name, cx);
        e.visibility = vis;
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = cx.is_test || a.cfg_test;
        e.owner = owner;
        e.trait_name = trait_name;
        let idx = self.add(e, &item);
        let mut plan = Plan::new(*cx, mark);
        plan.part_cx.from = idx;
        plan.parts = [tp, ty, bounds, wc];
        plan
    }

    #[inline(never)]
    fn macro_def(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) {
        let a = self.attrs(attrs);
        let Some(name_node) = self.field(n, self.t.f.name) else {
            return;
        };
        let name = self.text(name_node);
        let sig = Signature {
            text: format!("macro_rules! {name}"),
            ..Signature::default()
        };
        let mut e = self.new_entity(n, EntityKind::Macro, name, cx);
        e.visibility = if a.macro_export {
            Visibility::Public
        } else {
            Visibility::Private
        };
        e.doc = a.doc;
        e.signature = sig;
        e.is_test = cx.is_test || a.cfg_test;
        self.add(e, name);
    }

    // -- uses ---------------------------------------------------------------

    #[inline(never)]
    fn use_decl(&mut self, n: Node<'t>, cx: &Cx) {
        let is_pub = self.find_child(n, |k| k == K::VisibilityModifier).is_some();
        if let Some(arg) = self.field(n, self.t.f.argument) {
            let mut prefix = Vec::new();
            self.flatten_use(arg, &mut prefix, is_pub, cx);
        }
    }

    #[inline(never)]
    fn push_use(
        &mut self,
        path: &[&str],
        alias: Option<&str>,
        glob: bool,
        is_pub: bool,
        n: Node<'t>,
        cx: &Cx,
    ) {
        if path.is_empty() {
            return;
        }
        self.uses.push(UseDecl {
            from: self.entities[cx.from as usize].key.clone(),
            scope: self.mods[cx.module as usize].path.clone(),
            path: path.iter().map(|s| s.to_string()).collect(),
            alias: alias.map(str::to_string),
            glob,
            is_pub,
            line: line_of(n),
        });
    }

    #[inline(never)]
    fn flatten_use(&mut self, n: Node<'t>, prefix: &mut Vec<&'t str>, is_pub: bool, cx: &Cx) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        let f = &self.t.f;
        let mark = prefix.len();
        match self.kind(n) {
            K::Ident | K::PathKw | K::Metavariable | K::ScopedIdent if self.use_path(n, prefix) => {
                self.push_use(prefix, None, false, is_pub, n, cx);
            }
            K::UseAsClause => {
                let alias = self.field(n, f.alias).map(|a| self.text(a));
                if let Some(p) = self.field(n, f.path) {
                    if self.use_path(p, prefix) {
                        self.push_use(prefix, alias, false, is_pub, n, cx);
                    }
                }
            }
            K::UseWildcard => {
                if let Some(p) = n.named_child(0) {
                    if self.collect_path(p, prefix) {
                        self.push_use(prefix, None, true, is_pub, n, cx);
                    }
                }
            }
            K::UseList => {
                let range = self.load_children(n);
                let start = range.start;
                for i in range {
                    let c = self.buf[i];
                    if c.is_named() && !self.kind(c).is_comment() {
                        self.flatten_use(c, prefix, is_pub, cx);
                    }
                }
                self.buf.truncate(start);
            }
            K::ScopedUseList => {
                let ok = match self.field(n, f.path) {
                    Some(p) => self.collect_path(p, prefix),
                    None => true,
                };
                if ok {
                    if let Some(list) = self.field(n, f.list) {
                        self.flatten_use(list, prefix, is_pub, cx);
                    }
                }
            }
            _ => {}
        }
        prefix.truncate(mark);
        self.depth -= 1;
    }

    /// Appends a use leaf's path to `prefix`; a trailing `self` (`a::{self}`)
    /// names the prefix itself.
    fn use_path(&self, n: Node<'t>, prefix: &mut Vec<&'t str>) -> bool {
        let mark = prefix.len();
        if !self.collect_path(n, prefix) {
            return false;
        }
        if prefix.len() > 1 && prefix.last() == Some(&"self") && mark > 0 {
            prefix.pop();
        }
        true
    }

    #[inline(never)]
    fn extern_crate(&mut self, n: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        let is_pub = self.find_child(n, |k| k == K::VisibilityModifier).is_some();
        let name = match self.field(n, f.name) {
            Some(x) => Some(self.text(x)),
            None => self
                .find_child(n, |k| k == K::PathKw)
                .map(|x| self.text(x))
                .filter(|t| *t != "crate"),
        };
        let alias = self.field(n, f.alias).map(|a| self.text(a));
        if let Some(name) = name {
            self.push_use(&[name], alias, false, is_pub, n, cx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(path: &str, module: &[&str]) -> FileContext {
        FileContext {
            path: path.to_string(),
            crate_name: "demo".to_string(),
            module_path: module.iter().map(|s| s.to_string()).collect(),
            is_test_file: false,
        }
    }

    fn run(src: &str) -> FileExtract {
        RustExtractor::new().extract(&ctx("src/lib.rs", &[]), src)
    }

    fn ent<'a>(x: &'a FileExtract, key: &str) -> &'a Entity {
        x.entities.iter().find(|e| e.key == key).unwrap_or_else(|| {
            let keys: Vec<_> = x.entities.iter().map(|e| &e.key).collect();
            panic!("no entity {key}; have {keys:#?}")
        })
    }

    fn refs_of(x: &FileExtract, kind: RefKind) -> Vec<Vec<&str>> {
        x.refs
            .iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.path.iter().map(String::as_str).collect())
            .collect()
    }

    fn has_ref(x: &FileExtract, kind: RefKind, path: &[&str]) -> bool {
        x.refs.iter().any(|r| r.kind == kind && r.path == path)
    }

    #[test]
    fn file_module_entity_for_root_and_submodule() {
        let src = "//! Crate docs.\n//! Second line.\n\nfn a() {}\n";
        let x = run(src);
        assert_eq!(x.status, ParseStatus::Ok);
        assert_eq!(x.syntax_errors, 0);
        let m = &x.entities[0];
        assert_eq!(m.key, "src/lib.rs-crate-demo");
        assert_eq!(m.kind, EntityKind::Module);
        assert_eq!(m.name, "demo");
        assert!(m.module_path.is_empty());
        assert_eq!(m.doc, "Crate docs.\nSecond line.");
        assert_eq!((m.start_line, m.end_line), (1, 4));
        assert_eq!(m.parent, None);
        assert_eq!(m.visibility, Visibility::Public);
        let f = ent(&x, "src/lib.rs-crate-a");
        assert_eq!(f.parent.as_deref(), Some("src/lib.rs-crate-demo"));

        let x = RustExtractor::new().extract(&ctx("src/a/b.rs", &["a", "b"]), "pub fn f() {}");
        let m = &x.entities[0];
        assert_eq!(m.key, "src/a/b.rs-a-b");
        assert_eq!(m.name, "b");
        assert_eq!(m.module_path, vec!["a".to_string()]);
        assert_eq!(m.end_line, 1);
        let f = ent(&x, "src/a/b.rs-a::b-f");
        assert_eq!(f.module_path, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(f.visibility, Visibility::Public);
        assert_eq!(f.parent.as_deref(), Some("src/a/b.rs-a-b"));
    }

    #[test]
    fn trait_impls_of_same_method_get_distinct_keys() {
        let src = r#"
use std::fmt;
struct X;
impl fmt::Display for X {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "x") }
}
impl fmt::Debug for X {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}
impl X {
    pub fn new() -> Self { X }
    fn helper(&self) {}
}
"#;
        let x = run(src);
        let d = ent(&x, "src/lib.rs-crate-<X as fmt::Display>::fmt");
        assert_eq!(d.kind, EntityKind::Method);
        assert_eq!(d.owner.as_deref(), Some("X"));
        assert_eq!(d.trait_name.as_deref(), Some("fmt::Display"));
        assert_eq!(d.visibility, Visibility::Public);
        assert_eq!(
            d.parent.as_deref(),
            Some("src/lib.rs-crate-impl fmt::Display for X")
        );
        assert_eq!(d.signature.self_type.as_deref(), Some("X"));
        assert_eq!(d.signature.trait_ref.as_deref(), Some("fmt::Display"));
        assert_eq!(
            d.signature.parameters[0],
            Param {
                name: "self".into(),
                ty: "&Self".into(),
                pattern: ParamPattern::Ref
            }
        );
        assert_eq!(d.signature.parameters[1].pattern, ParamPattern::MutRef);
        ent(&x, "src/lib.rs-crate-<X as fmt::Debug>::fmt");
        let imp = ent(&x, "src/lib.rs-crate-impl fmt::Debug for X");
        assert_eq!(imp.kind, EntityKind::Impl);
        assert_eq!(imp.name, "impl fmt::Debug for X");
        assert_eq!(imp.owner.as_deref(), Some("X"));
        assert_eq!(imp.trait_name.as_deref(), Some("fmt::Debug"));
        assert_eq!(imp.signature.text, "impl fmt::Debug for X");
        let new = ent(&x, "src/lib.rs-crate-X::new");
        assert_eq!(new.visibility, Visibility::Public);
        assert_eq!(new.trait_name, None);
        assert_eq!(new.signature.return_type.as_deref(), Some("Self"));
        let helper = ent(&x, "src/lib.rs-crate-X::helper");
        assert_eq!(helper.visibility, Visibility::Private);
        ent(&x, "src/lib.rs-crate-impl X");
        // Implements / ImplOwner refs come from the impl blocks.
        let imp_refs: Vec<_> = x
            .refs
            .iter()
            .filter(|r| r.kind == RefKind::Implements)
            .map(|r| (r.from.as_str(), r.path.join("::")))
            .collect();
        assert_eq!(
            imp_refs,
            vec![
                (
                    "src/lib.rs-crate-impl fmt::Display for X",
                    "fmt::Display".to_string()
                ),
                (
                    "src/lib.rs-crate-impl fmt::Debug for X",
                    "fmt::Debug".to_string()
                ),
            ]
        );
        assert_eq!(
            refs_of(&x, RefKind::ImplOwner),
            vec![vec!["X"], vec!["X"], vec!["X"]]
        );
        // Self type recorded on refs inside impls.
        let w = x
            .refs
            .iter()
            .find(|r| r.kind == RefKind::MacroCall && r.path == ["write"])
            .unwrap();
        assert_eq!(w.self_type.as_deref(), Some("X"));
        assert_eq!(w.from, "src/lib.rs-crate-<X as fmt::Display>::fmt");
    }

    #[test]
    fn generic_trait_impls_are_distinct() {
        let src = "struct X;\nimpl From<u8> for X { fn from(v: u8) -> Self { X } }\nimpl From< u16 > for X { fn from(v: u16) -> Self { X } }\nimpl<T: Clone> Wrapper for Vec<T> { type Out = T; const N: usize = 1; }\n";
        let x = run(src);
        ent(&x, "src/lib.rs-crate-<X as From<u8>>::from");
        ent(&x, "src/lib.rs-crate-<X as From<u16>>::from");
        let i = ent(&x, "src/lib.rs-crate-impl From<u16> for X");
        assert_eq!(i.trait_name.as_deref(), Some("From"));
        assert_eq!(i.signature.trait_ref.as_deref(), Some("From< u16 >"));
        let v = ent(&x, "src/lib.rs-crate-impl Wrapper for Vec");
        assert_eq!(v.owner.as_deref(), Some("Vec"));
        assert_eq!(v.signature.self_type.as_deref(), Some("Vec<T>"));
        assert_eq!(v.signature.generics, vec!["T: Clone"]);
        assert_eq!(v.signature.text, "impl<T: Clone> Wrapper for Vec<T>");
        let out = ent(&x, "src/lib.rs-crate-<Vec as Wrapper>::Out");
        assert_eq!(out.kind, EntityKind::TypeAlias);
        assert_eq!(out.owner.as_deref(), Some("Vec"));
        assert_eq!(out.signature.ty.as_deref(), Some("T"));
        let n = ent(&x, "src/lib.rs-crate-<Vec as Wrapper>::N");
        assert_eq!(n.kind, EntityKind::Const);
        assert!(has_ref(&x, RefKind::ImplOwner, &["Vec"]));
        assert!(has_ref(&x, RefKind::Implements, &["From"]));
        // `T` is a generic parameter, never a Type ref.
        assert!(!has_ref(&x, RefKind::Type, &["T"]));
    }

    #[test]
    fn blanket_impl_has_no_owner_ref() {
        let x = run("impl<T: Display> Show for T {}\nimpl<'a, T> Tr for &'a mut Foo<T> {}");
        assert_eq!(refs_of(&x, RefKind::ImplOwner), vec![vec!["Foo"]]);
        ent(&x, "src/lib.rs-crate-impl Show for T");
        ent(&x, "src/lib.rs-crate-impl Tr for Foo");
        assert!(has_ref(&x, RefKind::Type, &["Display"]));
    }

    #[test]
    fn duplicate_keys_get_ordinals() {
        let src = "#[cfg(unix)]\nfn f() {}\n#[cfg(windows)]\nfn f() {}\n";
        let x = run(src);
        ent(&x, "src/lib.rs-crate-f");
        let f2 = ent(&x, "src/lib.rs-crate-f#2");
        assert_eq!(f2.start_line, 4);
    }

    #[test]
    fn nested_inline_modules() {
        let src = r#"
pub mod outer {
    //! Outer inner doc.
    pub(crate) mod inner {
        pub fn deep() { super::sibling(); }
        pub(super) struct S;
    }
    fn sibling() {}
}
"#;
        let x = RustExtractor::new().extract(&ctx("src/m.rs", &["m"]), src);
        assert_eq!(x.entities[0].key, "src/m.rs-crate-m");
        let outer = ent(&x, "src/m.rs-m-outer");
        assert_eq!(outer.kind, EntityKind::Module);
        assert_eq!(outer.module_path, vec!["m"]);
        assert_eq!(outer.doc, "Outer inner doc.");
        assert_eq!(outer.parent.as_deref(), Some("src/m.rs-crate-m"));
        assert_eq!(outer.signature.text, "pub mod outer");
        let inner = ent(&x, "src/m.rs-m::outer-inner");
        assert_eq!(inner.visibility, Visibility::Crate);
        assert_eq!(inner.parent.as_deref(), Some("src/m.rs-m-outer"));
        let deep = ent(&x, "src/m.rs-m::outer::inner-deep");
        assert_eq!(deep.module_path, vec!["m", "outer", "inner"]);
        assert_eq!(deep.parent.as_deref(), Some("src/m.rs-m::outer-inner"));
        let s = ent(&x, "src/m.rs-m::outer::inner-S");
        assert_eq!(s.visibility, Visibility::Restricted);
        ent(&x, "src/m.rs-m::outer-sibling");
        let call = x
            .refs
            .iter()
            .find(|r| r.kind == RefKind::Call)
            .expect("call ref");
        assert_eq!(call.path, vec!["super", "sibling"]);
        assert_eq!(call.scope, vec!["m", "outer", "inner"]);
        assert_eq!(call.from, "src/m.rs-m::outer::inner-deep");
    }

    #[test]
    fn cfg_test_modules_and_test_fns() {
        let src = r#"
pub fn prod() {}
#[cfg(test)]
mod tests {
    use super::*;
    fn helper() {}
    #[test]
    fn it_works() { prod(); assert_eq!(helper_value(2), 4); }
}
#[tokio::test]
async fn async_test() {}
#[cfg(not(test))]
fn not_test() {}
#[cfg(any(test, feature = "x"))]
fn maybe_test() {}
"#;
        let x = run(src);
        assert!(!ent(&x, "src/lib.rs-crate-prod").is_test);
        assert!(ent(&x, "src/lib.rs-crate-tests").is_test);
        assert!(ent(&x, "src/lib.rs-tests-helper").is_test);
        assert!(ent(&x, "src/lib.rs-tests-it_works").is_test);
        let at = ent(&x, "src/lib.rs-crate-async_test");
        assert!(at.is_test);
        assert!(at.signature.is_async);
        assert!(!ent(&x, "src/lib.rs-crate-not_test").is_test);
        assert!(ent(&x, "src/lib.rs-crate-maybe_test").is_test);
        let u = &x.uses[0];
        assert_eq!(u.path, vec!["super"]);
        assert!(u.glob);
        assert_eq!(u.from, "src/lib.rs-crate-tests");
        assert_eq!(u.scope, vec!["tests"]);
        // Refs inside macro token trees.
        let c: Vec<_> = x
            .refs
            .iter()
            .filter(|r| r.from == "src/lib.rs-tests-it_works")
            .map(|r| (r.kind, r.path.join("::")))
            .collect();
        assert!(c.contains(&(RefKind::Call, "prod".to_string())));
        assert!(c.contains(&(RefKind::MacroCall, "assert_eq".to_string())));
        assert!(c.contains(&(RefKind::Call, "helper_value".to_string())));
    }

    #[test]
    fn test_file_marks_everything() {
        let mut c = ctx("tests/it.rs", &[]);
        c.is_test_file = true;
        let x = RustExtractor::new().extract(&c, "fn a() {}\nstruct B;");
        assert!(x.entities.iter().all(|e| e.is_test));
    }

    #[test]
    fn inner_cfg_test_marks_file() {
        let x = run("#![cfg(test)]\nfn a() {}");
        assert!(x.entities.iter().all(|e| e.is_test));
    }

    #[test]
    fn macro_rules_definitions() {
        let src = "/// Makes things.\n#[macro_export]\nmacro_rules! make { ($x:expr) => { foo($x) }; }\nmacro_rules! private_one { () => {} }\nfn user() { make!(1); crate::private_one!(); }";
        let x = run(src);
        let m = ent(&x, "src/lib.rs-crate-make");
        assert_eq!(m.kind, EntityKind::Macro);
        assert_eq!(m.visibility, Visibility::Public);
        assert_eq!(m.doc, "Makes things.");
        assert_eq!(m.signature.text, "macro_rules! make");
        assert_eq!(
            ent(&x, "src/lib.rs-crate-private_one").visibility,
            Visibility::Private
        );
        assert!(has_ref(&x, RefKind::MacroCall, &["make"]));
        assert!(has_ref(&x, RefKind::MacroCall, &["crate", "private_one"]));
        // Macro definitions' bodies are not scanned.
        assert!(!has_ref(&x, RefKind::Call, &["foo"]));
    }

    #[test]
    fn use_trees_are_flattened() {
        let src = "use ::a::{b, c as d, e::*, f::{self, g}};\npub(crate) use crate::x::Y;\nextern crate foo as bar;\nuse std::io::{self as sio};\nfn f() { use inner::Thing; }";
        let x = run(src);
        let u: Vec<_> = x
            .uses
            .iter()
            .map(|u| {
                (
                    u.path.join("::"),
                    u.alias.clone(),
                    u.glob,
                    u.is_pub,
                    u.from.as_str(),
                )
            })
            .collect();
        let m = "src/lib.rs-crate-demo";
        assert_eq!(
            u,
            vec![
                ("a::b".to_string(), None, false, false, m),
                ("a::c".to_string(), Some("d".to_string()), false, false, m),
                ("a::e".to_string(), None, true, false, m),
                ("a::f".to_string(), None, false, false, m),
                ("a::f::g".to_string(), None, false, false, m),
                ("crate::x::Y".to_string(), None, false, true, m),
                ("foo".to_string(), Some("bar".to_string()), false, false, m),
                (
                    "std::io".to_string(),
                    Some("sio".to_string()),
                    false,
                    false,
                    m
                ),
                (
                    "inner::Thing".to_string(),
                    None,
                    false,
                    false,
                    "src/lib.rs-crate-f"
                ),
            ]
        );
        assert!(x.uses.iter().all(|u| u.scope.is_empty()));
        assert_eq!(x.uses[5].line, 2);
    }

    #[test]
    fn generic_fn_signature() {
        let src = "/// Loads.\n///\n/// More.\n#[inline]\npub async fn load<'a, T: Clone + Send, const N: usize>(\n    &mut self,\n    path: &'a Path,\n    out: &mut Vec<T>,\n    mut count: usize,\n    (a, b): (u8, u8),\n) -> Result<Config, Error>\nwhere\n    T: Debug,\n{\n    let v: Vec<T> = Vec::new();\n    T::default();\n    let arr = [0u8; N];\n}\n";
        let x = run(src);
        let f = ent(&x, "src/lib.rs-crate-load");
        assert_eq!(f.kind, EntityKind::Function);
        assert_eq!(f.doc, "Loads.\n\nMore.");
        assert_eq!(f.start_line, 5);
        assert_eq!(f.end_line, 18);
        let s = &f.signature;
        assert!(s.is_async);
        assert!(!s.is_unsafe);
        assert_eq!(s.generics, vec!["'a", "T: Clone + Send", "const N: usize"]);
        assert_eq!(s.where_clause, vec!["T: Debug"]);
        assert_eq!(s.return_type.as_deref(), Some("Result<Config, Error>"));
        let p: Vec<_> = s
            .parameters
            .iter()
            .map(|p| (p.name.as_str(), p.ty.as_str(), p.pattern))
            .collect();
        assert_eq!(
            p,
            vec![
                ("self", "&mut Self", ParamPattern::MutRef),
                ("path", "&'a Path", ParamPattern::Ref),
                ("out", "&mut Vec<T>", ParamPattern::MutRef),
                ("count", "usize", ParamPattern::Owned),
                ("(a, b)", "(u8, u8)", ParamPattern::Owned),
            ]
        );
        assert_eq!(
            s.text,
            "pub async fn load<'a, T: Clone + Send, const N: usize>( &mut self, path: &'a Path, out: &mut Vec<T>, mut count: usize, (a, b): (u8, u8), ) -> Result<Config, Error> where T: Debug,"
        );
        let types = refs_of(&x, RefKind::Type);
        for t in [
            "Clone", "Send", "Path", "Vec", "Result", "Config", "Error", "Debug",
        ] {
            assert!(types.contains(&vec![t]), "missing Type {t}: {types:?}");
        }
        assert!(!types.contains(&vec!["T"]));
        assert!(!has_ref(&x, RefKind::Value, &["N"]));
        // `T::default()` names an item of `T`'s bounds: the resolver looks there.
        assert!(has_ref(&x, RefKind::Call, &["T", "default"]));
        assert!(has_ref(&x, RefKind::Call, &["Vec", "new"]));
        // Vec is referenced twice in the fn but deduped.
        assert_eq!(types.iter().filter(|t| **t == vec!["Vec"]).count(), 1);
    }

    #[test]
    fn struct_fields_visibility_and_derives() {
        let src = "#[derive(Debug, Clone, serde::Serialize)]\npub struct User<T> where T: Send {\n    pub id: u64,\n    pub(crate) name: String,\n    /// doc\n    secret: Option<T>,\n}\npub struct Pair(pub u8, String);\nstruct Unit;\nunion U { a: u32, pub b: f32 }";
        let x = run(src);
        let u = ent(&x, "src/lib.rs-crate-User");
        assert_eq!(u.kind, EntityKind::Struct);
        assert_eq!(
            u.signature.traits,
            vec!["Debug", "Clone", "serde::Serialize"]
        );
        assert_eq!(u.signature.text, "pub struct User<T> where T: Send");
        assert_eq!(u.signature.generics, vec!["T"]);
        assert_eq!(u.signature.where_clause, vec!["T: Send"]);
        let fields: Vec<_> = u
            .signature
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.ty.as_str(), f.visibility))
            .collect();
        assert_eq!(
            fields,
            vec![
                ("id", "u64", Visibility::Public),
                ("name", "String", Visibility::Crate),
                ("secret", "Option<T>", Visibility::Private),
            ]
        );
        let p = ent(&x, "src/lib.rs-crate-Pair");
        let fields: Vec<_> = p
            .signature
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.ty.as_str(), f.visibility))
            .collect();
        assert_eq!(
            fields,
            vec![
                ("0", "u8", Visibility::Public),
                ("1", "String", Visibility::Private)
            ]
        );
        assert_eq!(p.signature.text, "pub struct Pair");
        assert_eq!(
            ent(&x, "src/lib.rs-crate-Unit").signature.text,
            "struct Unit"
        );
        let un = ent(&x, "src/lib.rs-crate-U");
        assert_eq!(un.kind, EntityKind::Union);
        assert_eq!(un.signature.fields.len(), 2);
        assert!(has_ref(&x, RefKind::Type, &["String"]));
        assert!(has_ref(&x, RefKind::Type, &["Option"]));
        assert!(!has_ref(&x, RefKind::Type, &["T"]));
        assert!(!has_ref(&x, RefKind::Type, &["User"]));
    }

    #[test]
    fn enum_variants() {
        let src = "pub(crate) enum E<T> {\n    /// a\n    A,\n    B(u8, String),\n    C { a: u8, b: T },\n    D = 4,\n}";
        let x = run(src);
        let e = ent(&x, "src/lib.rs-crate-E");
        let v: Vec<_> = e
            .signature
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.ty.as_str(), f.visibility))
            .collect();
        assert_eq!(
            v,
            vec![
                ("A", "", Visibility::Crate),
                ("B", "(u8, String)", Visibility::Crate),
                ("C", "{ a: u8, b: T }", Visibility::Crate),
                ("D", "", Visibility::Crate),
            ]
        );
        assert_eq!(e.signature.text, "pub(crate) enum E<T>");
        assert_eq!(refs_of(&x, RefKind::Type), vec![vec!["String"]]);
        assert!(refs_of(&x, RefKind::Value).is_empty());
    }

    #[test]
    fn trait_with_default_method_and_supertraits() {
        let src = "/// A shape.\npub unsafe trait Shape: Clone + fmt::Debug + 'static {\n    type Unit: Copy;\n    const SIDES: u32;\n    fn area(&self) -> f64;\n    fn describe(&self) -> String { format!(\"{}\", self.area()) }\n}\ntrait Private { fn p(); }";
        let x = run(src);
        let t = ent(&x, "src/lib.rs-crate-Shape");
        assert_eq!(t.kind, EntityKind::Trait);
        assert_eq!(t.doc, "A shape.");
        assert!(t.signature.is_unsafe);
        assert_eq!(
            t.signature.supertraits,
            vec!["Clone", "fmt::Debug", "'static"]
        );
        assert_eq!(
            t.signature.text,
            "pub unsafe trait Shape: Clone + fmt::Debug + 'static"
        );
        let area = ent(&x, "src/lib.rs-crate-Shape::area");
        assert_eq!(area.kind, EntityKind::Method);
        assert_eq!(area.owner.as_deref(), Some("Shape"));
        assert_eq!(area.trait_name, None);
        assert_eq!(area.visibility, Visibility::Public);
        assert_eq!(area.parent.as_deref(), Some("src/lib.rs-crate-Shape"));
        assert_eq!(area.signature.text, "fn area(&self) -> f64");
        let d = ent(&x, "src/lib.rs-crate-Shape::describe");
        assert_eq!(d.signature.return_type.as_deref(), Some("String"));
        let unit = ent(&x, "src/lib.rs-crate-Shape::Unit");
        assert_eq!(unit.kind, EntityKind::TypeAlias);
        assert_eq!(unit.owner.as_deref(), Some("Shape"));
        let sides = ent(&x, "src/lib.rs-crate-Shape::SIDES");
        assert_eq!(sides.kind, EntityKind::Const);
        assert_eq!(sides.signature.ty.as_deref(), Some("u32"));
        assert_eq!(
            ent(&x, "src/lib.rs-crate-Private::p").visibility,
            Visibility::Private
        );
        let mc = x
            .refs
            .iter()
            .find(|r| r.kind == RefKind::MethodCall && r.path == ["area"])
            .expect("self.area() inside format!");
        assert!(mc.on_self);
        assert_eq!(mc.self_type.as_deref(), Some("Shape"));
        assert!(has_ref(&x, RefKind::Type, &["Clone"]));
        assert!(has_ref(&x, RefKind::Type, &["fmt", "Debug"]));
        assert!(has_ref(&x, RefKind::Type, &["Copy"]));
    }

    #[test]
    fn doc_comment_forms() {
        let src = "/** Block doc\n * second line\n */\n#[doc = \" attr doc\"]\n#[doc = include_str!(\"x.md\")]\n#[doc(hidden)]\n// plain comment\n/// line doc\npub const MAX: usize = 10;\n//// not a doc\nstatic mut COUNTER: u32 = 0;";
        let x = run(src);
        let c = ent(&x, "src/lib.rs-crate-MAX");
        assert_eq!(c.doc, "Block doc\nsecond line\nattr doc\nline doc");
        assert_eq!(c.kind, EntityKind::Const);
        assert_eq!(c.signature.text, "pub const MAX: usize");
        assert_eq!(c.signature.ty.as_deref(), Some("usize"));
        assert_eq!(c.start_line, 9);
        let s = ent(&x, "src/lib.rs-crate-COUNTER");
        assert_eq!(s.kind, EntityKind::Static);
        assert!(s.signature.is_mut);
        assert_eq!(s.doc, "");
    }

    #[test]
    fn calls_values_and_types_in_bodies() {
        let src = r#"
fn body(x: Foo) {
    let v = Vec::<u8>::with_capacity(MAX_LEN);
    <Bar as Tr>::f();
    <Baz>::g();
    (self.f)();
    x.method().other();
    let s = Point { x: 1, y: Ordering::Less };
    let t = Wrapper(3);
    match y { Kind::A(z) => {}, Kind::B { .. } => {}, LIMIT => {}, local => {} }
    let r = y as Target;
    let f = crate::util::helper;
    let closure = |c: Config| c;
    lower_case_local;
    Self::assoc();
}
"#;
        let x = run(src);
        let calls = refs_of(&x, RefKind::Call);
        assert!(calls.contains(&vec!["Vec", "with_capacity"]));
        assert!(calls.contains(&vec!["Tr", "f"]));
        assert!(calls.contains(&vec!["Baz", "g"]));
        assert!(calls.contains(&vec!["Wrapper"]));
        assert!(calls.contains(&vec!["Self", "assoc"]));
        assert_eq!(calls.len(), 5, "{calls:?}");
        let mut mc = refs_of(&x, RefKind::MethodCall);
        mc.sort();
        assert_eq!(mc, vec![vec!["method"], vec!["other"]]);
        let vals = refs_of(&x, RefKind::Value);
        for v in [
            vec!["MAX_LEN"],
            vec!["Ordering", "Less"],
            vec!["Kind", "A"],
            vec!["LIMIT"],
            vec!["crate", "util", "helper"],
        ] {
            assert!(vals.contains(&v), "missing {v:?} in {vals:?}");
        }
        assert_eq!(vals.len(), 5, "{vals:?}");
        let types = refs_of(&x, RefKind::Type);
        for t in [
            vec!["Foo"],
            vec!["Bar"],
            vec!["Point"],
            vec!["Kind", "B"],
            vec!["Target"],
            vec!["Config"],
        ] {
            assert!(types.contains(&t), "missing {t:?} in {types:?}");
        }
        assert!(x.refs.iter().all(|r| r.from == "src/lib.rs-crate-body"));
        let line = x.refs.iter().find(|r| r.path == ["Target"]).map(|r| r.line);
        assert_eq!(line, Some(11));
    }

    /// A receiver in a compact form: `Vec<Foo>` (a written type),
    /// `f()`, `x.m()`, `x.f`, `x?`, `elem(x)`.
    fn show(r: &Recv) -> String {
        match r {
            Recv::Type(t) => t.clone(),
            Recv::Call(p) => format!("{}()", p.join("::")),
            Recv::Method(v, m) => format!("{}.{m}()", show(v)),
            Recv::Field(v, f) => format!("{}.{f}", show(v)),
            Recv::Try(v) => format!("{}?", show(v)),
            Recv::Element(v) => format!("elem({})", show(v)),
        }
    }

    /// Receivers of the method calls `.method()` made from `from`, in
    /// source order (`None`: nothing known).
    fn recvs(x: &FileExtract, from: &str, method: &str) -> Vec<Option<String>> {
        x.refs
            .iter()
            .filter(|r| r.kind == RefKind::MethodCall && r.path == [method])
            .filter(|r| r.from.ends_with(&format!("-{from}")))
            .map(|r| r.receiver.as_ref().map(show))
            .collect()
    }

    fn recv(x: &FileExtract, from: &str, method: &str) -> Option<String> {
        let all = recvs(x, from, method);
        assert_eq!(all.len(), 1, "calls of .{method}() from {from}: {all:?}");
        all.into_iter().next().flatten()
    }

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn receivers_from_parameters() {
        let src = r#"
fn f<T: Tr>(
    a: &mut Vec<Foo>,
    b: Box<a::Foo>,
    g: T,
    (p, q): (A, B),
    j: impl Iterator<Item = u8>,
) {
    a.m1(); b.m2(); g.m6(); p.m8(); j.m10();
    undeclared.m12();
}
"#;
        let x = run(src);
        assert_eq!(recv(&x, "f", "m1"), some("&mut Vec<Foo>"));
        assert_eq!(recv(&x, "f", "m2"), some("Box<a::Foo>"));
        // Generic parameters are typed by their bounds in the resolver.
        assert_eq!(recv(&x, "f", "m6"), some("T"));
        assert_eq!(recv(&x, "f", "m8"), None, "tuple pattern");
        assert_eq!(recv(&x, "f", "m10"), some("impl Iterator<Item = u8>"));
        assert_eq!(recv(&x, "f", "m12"), None);
    }

    #[test]
    fn receivers_from_let_bindings_and_chains() {
        let src = r#"
fn f(p: &Path) {
    let a: Foo = make();
    let b = Foo::new();
    let d = Baz { x: 1 };
    let g = lower::func();
    let k = Box::new(Qux::new());
    let l = Config::load(p)?;
    let n = &Wrap::new();
    let o = b;
    a.m1(); b.m2(); d.m4(); g.m6(); k.m10(); l.m11(); n.m12(); o.m13(); p.m17();
    Builder::new().name("x").build().run();
    self.cfg.items[0].go();
    for it in self.list.iter() { it.each(); }
}
"#;
        let x = run(src);
        assert_eq!(recv(&x, "f", "m1"), some("Foo"));
        assert_eq!(recv(&x, "f", "m2"), some("Foo::new()"));
        assert_eq!(recv(&x, "f", "m4"), some("Baz"));
        assert_eq!(recv(&x, "f", "m6"), some("lower::func()"));
        assert_eq!(recv(&x, "f", "m10"), some("Qux::new()"));
        assert_eq!(recv(&x, "f", "m11"), some("Config::load()?"));
        assert_eq!(recv(&x, "f", "m12"), some("Wrap::new()"));
        assert_eq!(recv(&x, "f", "m13"), some("Foo::new()"));
        assert_eq!(recv(&x, "f", "m17"), some("&Path"));
        assert_eq!(recv(&x, "f", "run"), some("Builder::new().name().build()"));
        // No `self` parameter in a free function: nothing known.
        assert_eq!(recv(&x, "f", "go"), None);
    }

    #[test]
    fn receivers_of_self_fields_and_elements() {
        let src = r#"
impl S {
    fn m(&self, other: &Self) {
        self.go();
        other.go2();
        self.inner.run();
        format!("{}", self.inner.in_macro());
        for it in self.list.iter() { it.each(); }
        self.items[0].first_one();
    }
}
"#;
        let x = run(src);
        assert_eq!(recv(&x, "S::m", "go"), some("Self"));
        assert_eq!(recv(&x, "S::m", "go2"), some("&Self"));
        assert_eq!(recv(&x, "S::m", "run"), some("Self.inner"));
        assert_eq!(recv(&x, "S::m", "in_macro"), some("Self.inner"));
        assert_eq!(recv(&x, "S::m", "each"), some("elem(Self.list.iter())"));
        assert_eq!(recv(&x, "S::m", "first_one"), some("elem(Self.items)"));
        let go = x.refs.iter().find(|r| r.path == ["go"]).unwrap();
        assert!(go.on_self);
        // A field read is a reference of its own.
        let fields: Vec<String> = x
            .refs
            .iter()
            .filter(|r| r.kind == RefKind::Field)
            .map(|r| format!("{}.{}", show(r.receiver.as_ref().unwrap()), r.path[0]))
            .collect();
        assert!(fields.contains(&"Self.inner".to_string()), "{fields:?}");
        assert!(fields.contains(&"Self.list".to_string()), "{fields:?}");
    }

    #[test]
    fn later_bindings_shadow_earlier_ones() {
        let src = r#"
fn f(r: Rect, items: Vec<Circle>, o: Option<Rect>) {
    r.a();
    for r in r.iter_all() { r.d(); }
    r.after_for();
}
fn g(r: Rect) {
    let r = Circle::new();
    r.b();
    let r = compute;
    r.c();
    let r: Rect = r.convert();
    r.e();
}
fn h(r: Rect, o: Option<Rect>) {
    let f = |r| r.cl();
    r.after_closure();
}
fn i(r: Rect, o: Option<Rect>) {
    match o { _ if r.guard() => {}, Some(r) => r.arm(), None => {} }
}
fn k(r: Rect, pair: (u8, u8)) {
    let (r, _) = pair;
    r.tuple();
}
fn outer(r: Rect) {
    fn inner() { r.nested(); }
    r.after_nested();
}
"#;
        let x = run(src);
        assert_eq!(recv(&x, "f", "a"), some("Rect"));
        // The iterated expression still sees the parameter; the loop
        // variable is an element of it.
        assert_eq!(recv(&x, "f", "iter_all"), some("Rect"));
        assert_eq!(recv(&x, "f", "d"), some("elem(Rect.iter_all())"));
        assert_eq!(recv(&x, "g", "b"), some("Circle::new()"));
        assert_eq!(recv(&x, "g", "c"), None);
        assert_eq!(recv(&x, "g", "e"), some("Rect"));
        assert_eq!(recv(&x, "h", "cl"), None);
        assert_eq!(recv(&x, "h", "after_closure"), None);
        // A guard is not a pattern: it binds nothing.
        assert_eq!(recv(&x, "i", "guard"), some("Rect"));
        assert_eq!(recv(&x, "i", "arm"), None);
        assert_eq!(recv(&x, "k", "tuple"), None);
        assert_eq!(
            recv(&x, "outer()::inner", "nested"),
            None,
            "items do not see locals"
        );
        assert_eq!(recv(&x, "outer", "after_nested"), some("Rect"));
    }

    #[test]
    fn method_refs_are_deduplicated_per_receiver() {
        let src = r#"
impl S {
    fn m(&self, x: A, y: B) {
        x.go(); y.go(); x.go(); z.go(); z.go();
    }
}
"#;
        let x = run(src);
        assert_eq!(recvs(&x, "S::m", "go"), vec![some("A"), some("B"), None]);
    }

    #[test]
    fn refs_inside_assert_macros() {
        let src = "#[test]\nfn t() {\n    assert_eq!(compute(1, 2), 3);\n    assert!(util::check(&v), \"msg {}\", fmt_it(x));\n    assert!(self.ok());\n    vec![fn_in_vec(), v.len()];\n    let _ = std::format!(\"{}\", x);\n}";
        let x = run(src);
        let calls = refs_of(&x, RefKind::Call);
        assert!(calls.contains(&vec!["compute"]));
        assert!(calls.contains(&vec!["util", "check"]));
        assert!(calls.contains(&vec!["fmt_it"]));
        assert!(calls.contains(&vec!["fn_in_vec"]));
        let macros = refs_of(&x, RefKind::MacroCall);
        assert!(macros.contains(&vec!["assert_eq"]));
        assert!(macros.contains(&vec!["std", "format"]));
        let ok = x
            .refs
            .iter()
            .find(|r| r.kind == RefKind::MethodCall && r.path == ["ok"])
            .unwrap();
        assert!(ok.on_self);
        let len = x
            .refs
            .iter()
            .find(|r| r.kind == RefKind::MethodCall && r.path == ["len"])
            .unwrap();
        assert!(!len.on_self);
        assert!(ent(&x, "src/lib.rs-crate-t").is_test);
    }

    #[test]
    fn macro_heuristic_skips_incomplete_paths() {
        let src = "fn t() { assert!(Vec::<u8>::new().is_empty()); v!(::std::mem::take(x), <X as Tr>::f(), fn g() {}, Self(1)); }";
        let x = run(src);
        let calls = refs_of(&x, RefKind::Call);
        assert_eq!(calls, vec![vec!["std", "mem", "take"]]);
        assert!(has_ref(&x, RefKind::MethodCall, &["is_empty"]));
    }

    #[test]
    fn generic_params_are_not_type_refs() {
        let src = "struct S<T, U = Default>(T, U);\nimpl<K: Hash, V> Map<K, V> {\n    fn get<Q: ?Sized>(&self, k: &Q) -> Option<&V> where K: Borrow<Q> { None }\n}\nfn outside(t: T) {}\ntype Alias<X> = Vec<X>;\ntrait Tr<A> { fn m(&self, a: A) -> Self; }";
        let x = run(src);
        let types = refs_of(&x, RefKind::Type);
        for g in ["K", "V", "Q", "U", "X", "A", "Self"] {
            assert!(!types.contains(&vec![g]), "generic {g} emitted: {types:?}");
        }
        // `T` outside any generic scope is a real type name.
        let t_refs: Vec<_> = x
            .refs
            .iter()
            .filter(|r| r.kind == RefKind::Type && r.path == ["T"])
            .map(|r| r.from.as_str())
            .collect();
        assert_eq!(t_refs, vec!["src/lib.rs-crate-outside"]);
        for t in ["Default", "Hash", "Option", "Borrow", "Vec", "Sized"] {
            assert!(types.contains(&vec![t]), "missing {t}: {types:?}");
        }
        let alias = ent(&x, "src/lib.rs-crate-Alias");
        assert_eq!(alias.kind, EntityKind::TypeAlias);
        assert_eq!(alias.signature.ty.as_deref(), Some("Vec<X>"));
        assert_eq!(alias.signature.text, "type Alias<X> = Vec<X>");
    }

    #[test]
    fn scoped_types_emit_path_and_args() {
        let x = run("fn f(a: a::b::Foo<Bar>, c: <T as Iterator>::Item) {}");
        assert!(has_ref(&x, RefKind::Type, &["a", "b", "Foo"]));
        assert!(has_ref(&x, RefKind::Type, &["Bar"]));
        assert!(has_ref(&x, RefKind::Type, &["Iterator", "Item"]));
        assert!(has_ref(&x, RefKind::Type, &["T"]));
    }

    #[test]
    fn nested_items_in_fn_bodies_and_const_blocks() {
        let src = "fn outer() {\n    fn inner() { helper(); }\n    struct Local;\n    impl Local { fn m(&self) {} }\n}\nconst _: () = {\n    impl Foo for Bar {}\n};\n";
        let x = run(src);
        // Items of a function body are the function's: key and parent say so.
        let inner = ent(&x, "src/lib.rs-crate-outer()::inner");
        assert_eq!(inner.kind, EntityKind::Function);
        assert_eq!(inner.parent.as_deref(), Some("src/lib.rs-crate-outer"));
        let m = ent(&x, "src/lib.rs-crate-outer()::Local::m");
        assert_eq!(m.kind, EntityKind::Method);
        let call = x.refs.iter().find(|r| r.path == ["helper"]).unwrap();
        assert_eq!(call.from, "src/lib.rs-crate-outer()::inner");
        let i = ent(&x, "src/lib.rs-crate-impl Foo for Bar");
        assert_eq!(i.parent.as_deref(), Some("src/lib.rs-crate-demo"));
        assert!(!x.entities.iter().any(|e| e.name == "_"));
    }

    #[test]
    fn foreign_items_and_modifiers() {
        let src = "extern \"C\" { fn ext(x: i32) -> i32; static ERRNO: i32; }\npub const unsafe fn cu() {}\nunsafe impl Send for X {}\nimpl !Sync for X {}\npub(in crate::a) fn restricted() {}";
        let x = run(src);
        let e = ent(&x, "src/lib.rs-crate-ext");
        assert_eq!(e.kind, EntityKind::Function);
        assert_eq!(e.signature.text, "fn ext(x: i32) -> i32");
        ent(&x, "src/lib.rs-crate-ERRNO");
        let cu = ent(&x, "src/lib.rs-crate-cu");
        assert!(cu.signature.is_const && cu.signature.is_unsafe);
        assert!(
            ent(&x, "src/lib.rs-crate-impl Send for X")
                .signature
                .is_unsafe
        );
        let neg = ent(&x, "src/lib.rs-crate-impl !Sync for X");
        assert_eq!(neg.trait_name.as_deref(), Some("Sync"));
        assert_eq!(
            ent(&x, "src/lib.rs-crate-restricted").visibility,
            Visibility::Restricted
        );
    }

    #[test]
    fn syntax_errors_keep_good_items() {
        let src = "fn good() {}\nfn broken( { let x = ; }\nstruct Fine;\nimpl Foo {\n    fn a(&self) {\n}\nfn z() {}\n";
        let x = run(src);
        assert_eq!(x.status, ParseStatus::Partial);
        assert!(x.syntax_errors >= 1);
        ent(&x, "src/lib.rs-crate-good");
        ent(&x, "src/lib.rs-crate-Fine");
        assert!(x.entities.iter().any(|e| e.name == "a"));
    }

    #[test]
    fn empty_and_garbage_inputs_do_not_panic() {
        let x = run("");
        assert_eq!(x.status, ParseStatus::Ok);
        assert_eq!(x.entities.len(), 1);
        assert_eq!(x.entities[0].end_line, 1);
        assert!(x.refs.is_empty() && x.uses.is_empty());

        let bytes: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let garbage = String::from_utf8_lossy(&bytes);
        let x = run(&garbage);
        assert_eq!(x.entities[0].kind, EntityKind::Module);

        let snippets = [
            "fn",
            "impl",
            "impl for {",
            "use ::{",
            "use a::{b::{c::{",
            "#[derive(",
            "#[cfg(test)] mod",
            "macro_rules! {",
            "struct S { a: }",
            "enum E { A(, }",
            "fn f() { a!(b(c, d!(e::f(",
            "trait T: { fn",
            "pub(in) fn x",
            "const _",
            "/// doc only",
            "/** unterminated",
            "\"unterminated string",
            "'",
            "r#\"raw",
            "impl<T> !",
            "extern crate ;",
            "fn f(self: Box<Self>, ...) {}",
            "\u{feff}fn bom() {}",
            "fn f() { x.0(); (a.b)(); foo::<>(); <>::x(); }",
        ];
        for s in snippets {
            let _ = run(s);
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow_small_stacks() {
        let mut src = String::from("fn f() { let x = ");
        for _ in 0..5000 {
            src.push_str("a + ");
        }
        src.push_str("FINAL; ");
        for _ in 0..3000 {
            src.push_str("{ ");
        }
        src.push_str("g();");
        for _ in 0..3000 {
            src.push_str("} ");
        }
        src.push_str("foo!(");
        for _ in 0..3000 {
            src.push('(');
        }
        for _ in 0..3000 {
            src.push(')');
        }
        src.push_str(");\n");
        for _ in 0..2000 {
            src.push_str("mod m { ");
        }
        for _ in 0..2000 {
            src.push('}');
        }
        src.push('}');
        // Release frames need well under 2 MiB at the depth bound (measured:
        // 640 KiB suffice); unoptimised frames are several times larger.
        let stack = if cfg!(debug_assertions) { 8 } else { 2 } * 1024 * 1024;
        let handle = std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || run(&src).entities.len())
            .unwrap();
        assert!(handle.join().unwrap() >= 2);
    }

    #[test]
    fn unicode_and_crlf_sources() {
        let src = "/// Größe\r\nfn größe() -> &'static str { \"ü\" }\r\n";
        let x = run(src);
        let f = ent(&x, "src/lib.rs-crate-größe");
        assert_eq!(f.doc, "Größe");
        assert_eq!(f.start_line, 2);
        assert_eq!(x.entities[0].end_line, 2);
    }

    #[test]
    fn signature_text_is_capped() {
        let mut src = String::from("fn long(");
        for i in 0..100 {
            src.push_str(&format!("arg{i}: u32, "));
        }
        src.push_str(") {}");
        let x = run(&src);
        let f = ent(&x, "src/lib.rs-crate-long");
        assert_eq!(f.signature.text.chars().count(), TEXT_CAP);
        assert_eq!(f.signature.parameters.len(), 100);
    }

    #[test]
    fn extracts_this_file() {
        let src = include_str!("rust_extract.rs");
        let c = ctx("src/index/rust_extract.rs", &["index", "rust_extract"]);
        let x = RustExtractor::new().extract(&c, src);
        assert_eq!(x.status, ParseStatus::Ok);
        let e = ent(
            &x,
            "src/index/rust_extract.rs-index::rust_extract-RustExtractor::extract",
        );
        assert_eq!(e.kind, EntityKind::Method);
        assert_eq!(e.owner.as_deref(), Some("RustExtractor"));
        assert_eq!(e.visibility, Visibility::Public);
        assert_eq!(
            e.doc,
            "Parse `source` once and extract everything from that one tree."
        );
        assert_eq!(
            e.signature.text,
            "pub fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract"
        );
        let t = ent(
            &x,
            "src/index/rust_extract.rs-index::rust_extract::tests-extracts_this_file",
        );
        assert!(t.is_test);
        ent(
            &x,
            "src/index/rust_extract.rs-index::rust_extract-<RustExtractor as Default>::default",
        );
        assert!(x
            .uses
            .iter()
            .any(|u| u.path == ["crate", "index", "keys", "KeyAllocator"]));
    }

    #[test]
    fn parse_only_counts_children() {
        let mut p = new_rust_parser();
        assert_eq!(parse_only(&mut p, "fn a() {}\nfn b() {}"), 2);
        assert_eq!(parse_only(&mut p, ""), 0);
    }

    #[test]
    fn extractor_is_reusable() {
        let mut ex = RustExtractor::new();
        let c = ctx("src/lib.rs", &[]);
        let a = ex.extract(&c, "fn a() { b(); }");
        let b = ex.extract(&c, "fn a() { b(); }");
        assert_eq!(a, b);
    }

    /// Throwaway robustness sweep over the crates in the cargo registry:
    /// `cargo test --release --lib rust_extract -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn sweep_cargo_registry() {
        let Some(home) = std::env::var_os("HOME") else {
            return;
        };
        let root = std::path::Path::new(&home).join(".cargo/registry/src");
        let mut stack = vec![root];
        let mut files = Vec::new();
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in rd.flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|e| e == "rs") {
                    files.push(p);
                }
            }
        }
        let mut ex = RustExtractor::new();
        let mut parser = new_rust_parser();
        let (mut bytes, mut ents, mut refs, mut uses, mut partial) = (0usize, 0, 0, 0, 0);
        let (mut t_parse, mut t_extract) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
        for p in &files {
            let Ok(content) = std::fs::read(p) else {
                continue;
            };
            let src = String::from_utf8_lossy(&content);
            let c = ctx(&p.to_string_lossy(), &["m"]);
            let t0 = std::time::Instant::now();
            parse_only(&mut parser, &src);
            let t1 = std::time::Instant::now();
            let x = ex.extract(&c, &src);
            t_extract += t1.elapsed();
            t_parse += t1 - t0;
            bytes += src.len();
            ents += x.entities.len();
            refs += x.refs.len();
            uses += x.uses.len();
            if x.status == ParseStatus::Partial {
                partial += 1;
            }
            let mut keys = std::collections::HashSet::new();
            for e in &x.entities {
                assert!(keys.insert(e.key.as_str()), "duplicate key {}", e.key);
                assert!(e.start_line >= 1 && e.end_line >= e.start_line);
            }
            for r in &x.refs {
                assert!(!r.path.is_empty() && r.path.iter().all(|s| !s.is_empty()));
                assert!(keys.contains(r.from.as_str()));
            }
        }
        println!(
            "{} files, {} MB, {ents} entities, {refs} refs, {uses} uses, {partial} partial; parse {:?}, parse+extract {:?} ({:.2}x)",
            files.len(),
            bytes / 1_000_000,
            t_parse,
            t_extract,
            t_extract.as_secs_f64() / t_parse.as_secs_f64().max(1e-9)
        );
    }
}
