//! One TypeScript or JavaScript file's parse into a [`FileExtract`].
//!
//! One walk over the top level (and namespace bodies) makes the entities:
//! the file's module; functions (overload signatures and their
//! implementation are one); `const` (an arrow function or function
//! expression bound to one is still a `const`, with its parameters and
//! return type in the signature), `let` and `var` bindings; classes with
//! their methods, constructor, accessors (a getter and its setter are one
//! `property`), fields and constructor parameter properties
//! (`attribute`s); interfaces (`trait`) with their property signatures
//! (`attribute`) and method signatures (`method`); type aliases; enums;
//! namespaces (`module`). A `/** … */` comment right before a
//! declaration (or its `export`) is its doc; a range starts at `export`
//! or the first decorator. Everything a test file (`*.test.*`,
//! `*.spec.*`, under `__tests__/`) declares is a test.
//!
//! Imports and exports become [`UseDecl`]s ([`super::imports`]); the
//! references of bodies and type positions [`RawRef`]s
//! ([`super::refs`]). Nothing here looks at another file.
//!
//! A minified bundle (a line over [`MINIFIED_LINE`] chars, or lines of
//! [`MINIFIED_AVERAGE`] chars on average) is its module entity alone. The
//! walk is bounded in depth, so a pathological file cannot overflow a
//! worker thread's stack.

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::{Node, Parser, Tree};

use super::refs;
use super::syntax::Fields;
use crate::index::keys::KeyAllocator;
use crate::model::{
    Entity, EntityKind, FileContext, FileExtract, Param, ParamPattern, ParseStatus, RawRef, Recv,
    RefKind, Signature, UseDecl, Visibility,
};

/// Longest `Signature::text`, in chars.
const TEXT_CAP: usize = 300;
/// Deepest the walks go.
pub(crate) const MAX_DEPTH: u32 = 200;
/// A line longer than this marks a minified file.
pub const MINIFIED_LINE: usize = 5_000;
/// An average line longer than this marks a minified file.
pub const MINIFIED_AVERAGE: usize = 500;

/// Extracts TypeScript and JavaScript files; one per thread.
pub struct TsExtractor {
    ts: Parser,
    tsx: Parser,
    tsx_kinds: usize,
}

impl Default for TsExtractor {
    fn default() -> Self {
        Self::new()
    }
}

/// Whether a file is read with the TSX grammar (TSX and JavaScript).
pub fn uses_tsx(path: &str) -> bool {
    [".tsx", ".js", ".jsx", ".mjs", ".cjs"]
        .iter()
        .any(|e| path.ends_with(e))
}

/// Whether a text looks like a minified bundle.
pub fn is_minified(source: &str) -> bool {
    let mut lines = 0usize;
    for line in source.lines() {
        if line.len() > MINIFIED_LINE {
            return true;
        }
        lines += 1;
    }
    lines > 0 && source.len() / lines > MINIFIED_AVERAGE
}

impl TsExtractor {
    pub fn new() -> Self {
        let ts_lang: tree_sitter::Language = tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into();
        let tsx_lang: tree_sitter::Language = tree_sitter_typescript::LANGUAGE_TSX.into();
        let mut ts = Parser::new();
        let mut tsx = Parser::new();
        // The grammars are built against the tree-sitter this crate pins.
        let _ = ts.set_language(&ts_lang);
        let _ = tsx.set_language(&tsx_lang);
        TsExtractor {
            ts,
            tsx,
            tsx_kinds: tsx_lang.node_kind_count(),
        }
    }

    /// Parse with the grammar of `old` (TypeScript for a first parse:
    /// [`TsExtractor::extract_tree`] parses again when the file wants the
    /// other). A byte-order mark is read as blanks.
    pub fn parse(&mut self, source: &str, old: Option<&Tree>) -> Option<Tree> {
        let tsx = old.is_some_and(|t| t.language().node_kind_count() == self.tsx_kinds);
        self.parse_with(source, old, tsx)
    }

    fn parse_with(&mut self, source: &str, old: Option<&Tree>, tsx: bool) -> Option<Tree> {
        let parser = if tsx { &mut self.tsx } else { &mut self.ts };
        match source.strip_prefix('\u{feff}') {
            Some(rest) => parser.parse(format!("   {rest}"), None),
            None => parser.parse(source, old),
        }
    }

    pub fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract {
        if is_minified(source) {
            return module_only(ctx, source);
        }
        match self.parse_with(source, None, uses_tsx(&ctx.path)) {
            Some(tree) => self.extract_tree(ctx, source, &tree),
            None => module_only(ctx, source),
        }
    }

    pub fn extract_tree(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract {
        let tsx = tree.language().node_kind_count() == self.tsx_kinds;
        if tsx != uses_tsx(&ctx.path) {
            return self.extract(ctx, source);
        }
        if is_minified(source) {
            return module_only(ctx, source);
        }
        match self.repaired_tree(source, tree, tsx) {
            Some(better) => self.walk(ctx, source, &better),
            None => self.walk(ctx, source, tree),
        }
    }

    /// A parse of [`repaired`] text when `tree` has errors and that one
    /// has fewer.
    fn repaired_tree(&mut self, source: &str, tree: &Tree, tsx: bool) -> Option<Tree> {
        if !tree.root_node().has_error() {
            return None;
        }
        let fixed = repaired(source, tsx)?;
        let better = self.parse_with(&fixed, None, tsx)?;
        (count_errors(better.root_node()) < count_errors(tree.root_node())).then_some(better)
    }

    fn walk(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract {
        let root = tree.root_node();
        let errors = count_errors(root);
        let mut w = Walker::new(ctx, source);
        w.module_entity(Some(root));
        w.body(root, 0, 0);
        let mut extract = w.finish(errors);
        extract.texts = super::texts::body_texts(root, source, &extract.entities);
        extract
    }
}

/// `source` with what the grammar (tree-sitter-typescript 0.23) does not
/// read yet written as what it does, byte for byte as long (so every
/// position stays): `export type * from` as `export * from`, `const`
/// type parameters (`<const T extends …>`) without `const`, and in
/// TypeScript files a `;` before a generic call signature that starts a
/// line after a member without one (`): R\n  <T>(…)`). `None` when
/// there is nothing to write.
pub fn repaired(source: &str, tsx: bool) -> Option<String> {
    let mut b = source.as_bytes().to_vec();
    let mut changed = false;
    for (i, _) in source.match_indices("export type *") {
        b[i + 7..i + 11].copy_from_slice(b"    ");
        changed = true;
    }
    for (i, _) in source.match_indices("const ") {
        let before = source[..i].trim_end();
        if !(before.ends_with('<') || before.ends_with(',')) {
            continue;
        }
        let after = &source[i + 6..];
        let ident = after
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .next()
            .unwrap_or("");
        let rest = after[ident.len()..].trim_start();
        if !ident.is_empty()
            && (rest.starts_with("extends ") || rest.starts_with(',') || rest.starts_with('>'))
        {
            b[i..i + 5].copy_from_slice(b"     ");
            changed = true;
        }
    }
    if !tsx {
        let mut prev_end: Option<u8> = None;
        let mut start = 0;
        for line in source.split_inclusive('\n') {
            let trimmed = line.trim();
            let indented = line.starts_with([' ', '\t']);
            if indented
                && trimmed.starts_with('<')
                && prev_end
                    .is_some_and(|c| matches!(c, b')' | b']' | b'>') || c.is_ascii_alphanumeric())
            {
                b[start] = b';';
                changed = true;
            }
            if !trimmed.is_empty() && !trimmed.starts_with("//") {
                prev_end = trimmed.bytes().last();
            }
            start += line.len();
        }
    }
    changed.then(|| String::from_utf8(b).ok()).flatten()
}

fn module_only(ctx: &FileContext, source: &str) -> FileExtract {
    let mut w = Walker::new(ctx, source);
    w.module_entity(None);
    let lines = source.lines().count().max(1) as u32;
    w.entities[0].end_line = lines;
    w.finish(0)
}

/// What makes two references of one entity the same.
type RefKey = (usize, RefKind, Vec<String>, Option<String>, Option<Recv>);

pub(crate) struct Walker<'s> {
    pub src: &'s str,
    pub ctx: &'s FileContext,
    pub file: Arc<str>,
    pub module_path: Arc<[String]>,
    pub entities: Vec<Entity>,
    pub refs: Vec<RawRef>,
    pub uses: Vec<UseDecl>,
    keys: KeyAllocator,
    /// Functions, methods and accessors by parent and name, with whether
    /// the last declaration so far was a signature (an overload) or an
    /// accessor: the next of that name continues it.
    open: HashMap<(usize, String), (usize, bool)>,
    seen_refs: HashSet<RefKey>,
    /// The type parameters of the class or interface whose members are
    /// read: local to each member.
    pub type_params: Vec<String>,
    /// The module JSX is read through (`/** @jsxImportSource ../jsx */`
    /// at the top of the file): its `jsx-runtime` exports the `JSX`
    /// namespace intrinsic elements are members of.
    pub jsx_source: Option<String>,
    /// The innermost test block ([`super::test_blocks`]) the walk is in:
    /// the calls made there are its calls too.
    pub test_block: Option<usize>,
}

impl<'s> Walker<'s> {
    fn new(ctx: &'s FileContext, src: &'s str) -> Walker<'s> {
        Walker {
            src,
            ctx,
            file: Arc::from(ctx.path.as_str()),
            module_path: Arc::from(ctx.module_path.clone()),
            entities: Vec::new(),
            refs: Vec::new(),
            uses: Vec::new(),
            keys: KeyAllocator::default(),
            open: HashMap::default(),
            seen_refs: HashSet::default(),
            type_params: Vec::new(),
            jsx_source: jsx_pragma(src),
            test_block: None,
        }
    }

    pub fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    /// The module (`src/utils/http-status`).
    fn module_name(&self) -> String {
        self.ctx.module_path.join("/")
    }

    fn module_entity(&mut self, root: Option<Node<'_>>) {
        let name = self
            .ctx
            .module_path
            .last()
            .cloned()
            .unwrap_or_else(|| "index".into());
        let key = self
            .keys
            .allocate(format!("{}-{}", self.file, self.module_name()));
        let end = root.map_or(1, |r| r.end_position().row as u32 + 1).max(1);
        let doc = root.and_then(|r| file_doc(self, r)).unwrap_or_default();
        self.entities.push(Entity {
            key: Arc::from(key),
            kind: EntityKind::Module,
            name,
            visibility: Visibility::Public,
            file: self.file.clone(),
            start_line: 1,
            end_line: end,
            module_path: self.module_path.clone(),
            doc,
            signature: Signature::default(),
            is_test: self.ctx.is_test_file,
            owner: None,
            trait_name: None,
            parent: None,
            language: super::ID,
        });
    }

    fn finish(self, errors: u32) -> FileExtract {
        FileExtract {
            path: self.ctx.path.clone(),
            status: if errors == 0 {
                ParseStatus::Ok
            } else {
                ParseStatus::Partial
            },
            syntax_errors: errors,
            entities: self.entities,
            refs: self.refs,
            uses: self.uses,
            children: Vec::new(),
            context: self.ctx.clone(),
            language: super::ID,
            texts: Vec::new(),
        }
    }

    /// A reference from entity `from`, once per entity and reference.
    pub fn push_ref(
        &mut self,
        from: usize,
        kind: RefKind,
        path: Vec<String>,
        self_type: Option<usize>,
        line: u32,
    ) {
        self.push_recv_ref(from, kind, path, self_type, None, line);
    }

    /// [`Walker::push_ref`] with a receiver.
    pub fn push_recv_ref(
        &mut self,
        from: usize,
        kind: RefKind,
        path: Vec<String>,
        self_type: Option<usize>,
        receiver: Option<Recv>,
        line: u32,
    ) {
        if let Some(test) = self.test_block.filter(|&t| t != from) {
            if matches!(kind, RefKind::Call | RefKind::MethodCall) {
                self.push_recv_ref(test, kind, path.clone(), self_type, receiver.clone(), line);
            }
        }
        let self_type = self_type.map(|c| self.entities[c].key.to_string());
        if !self.seen_refs.insert((
            from,
            kind,
            path.clone(),
            self_type.clone(),
            receiver.clone(),
        )) {
            return;
        }
        let on_self = self_type.is_some() && path.first().is_some_and(|p| p == "this");
        self.refs.push(RawRef {
            from: self.entities[from].key.clone(),
            kind,
            path,
            line,
            scope: self.module_path.clone(),
            self_type,
            on_self,
            receiver,
        });
    }

    /// The key of a child named `name` of entity `parent`: `{file
    /// module}:{name}`, `{parent}.{name}` below that.
    fn child_key(&mut self, parent: usize, name: &str) -> String {
        let p = &self.entities[parent];
        let key = if parent == 0 {
            format!("{}:{}", p.key, name)
        } else {
            format!("{}.{}", strip_twin_key(&p.key), name)
        };
        self.keys.allocate(key)
    }

    /// A new entity of `parent`, spanning `outer`.
    pub(crate) fn new_entity(
        &mut self,
        parent: usize,
        kind: EntityKind,
        name: &str,
        outer: Node<'_>,
        visibility: Visibility,
    ) -> usize {
        let key = self.child_key(parent, name);
        let p = &self.entities[parent];
        let owner = matches!(p.kind, EntityKind::Class | EntityKind::Trait).then(|| p.name.clone());
        let doc = doc_before(self, outer).unwrap_or_default();
        self.entities.push(Entity {
            key: Arc::from(key),
            kind,
            name: name.to_string(),
            visibility,
            file: self.file.clone(),
            start_line: outer.start_position().row as u32 + 1,
            end_line: outer.end_position().row as u32 + 1,
            module_path: self.module_path.clone(),
            doc,
            signature: Signature::default(),
            is_test: self.ctx.is_test_file,
            owner,
            trait_name: None,
            parent: Some(p.key.clone()),
            language: super::ID,
        });
        self.entities.len() - 1
    }

    /// The statements of a module or namespace body: `parent` owns the
    /// declarations, `from` the references of other statements.
    pub fn body(&mut self, n: Node<'_>, parent: usize, depth: u32) {
        if depth > MAX_DEPTH / 4 {
            return;
        }
        let mut cur = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cur).collect();
        for c in children {
            self.statement(c, parent, depth);
        }
    }

    fn statement(&mut self, n: Node<'_>, parent: usize, depth: u32) {
        match n.kind() {
            "export_statement" => self.export(n, parent, depth),
            "import_statement" => super::imports::import(self, n, parent),
            "expression_statement" => match n.named_child(0) {
                Some(c) if matches!(c.kind(), "internal_module" | "module") => {
                    self.declare(c, n, parent, false, depth)
                }
                _ if parent == 0 && super::commonjs::statement(self, n, parent) => {}
                _ => refs::unit(self, n, parent, None),
            },
            "comment" | "empty_statement" | "hash_bang_line" => {}
            k if is_declaration(k) => self.declare(n, n, parent, false, depth),
            _ => refs::unit(self, n, parent, None),
        }
    }

    fn export(&mut self, n: Node<'_>, parent: usize, depth: u32) {
        let default = has_token(n, "default");
        if let Some(d) = n.field("declaration") {
            let before = self.entities.len();
            self.declare(d, n, parent, true, depth);
            if default && parent == 0 {
                if let Some(e) = self.entities.get(before) {
                    let name = e.name.clone();
                    super::imports::local_export(self, &name, Some("default"), n);
                }
            }
            return;
        }
        if n.field("source").is_some() || has_child(n, "export_clause") {
            if parent == 0 {
                super::imports::export(self, n);
            }
            return;
        }
        if let Some(v) = n.field("value") {
            if default && parent == 0 && v.kind() == "identifier" {
                let name = self.text(v).to_string();
                super::imports::local_export(self, &name, Some("default"), n);
                return;
            }
            if default && matches!(v.kind(), "function_expression" | "class" | "arrow_function") {
                // An anonymous default export is named `default`.
                let name = v
                    .field("name")
                    .map_or("default".to_string(), |x| self.text(x).to_string());
                let kind = if v.kind() == "class" {
                    EntityKind::Class
                } else {
                    EntityKind::Function
                };
                let i = self.new_entity(parent, kind, &name, n, Visibility::Public);
                if kind == EntityKind::Class {
                    self.class_body(v, n, i, depth);
                } else {
                    self.entities[i].signature = function_signature(self, v, n);
                    refs::unit(self, v, i, None);
                }
                if parent == 0 {
                    super::imports::local_export(self, &name, Some("default"), n);
                }
                return;
            }
            refs::unit(self, v, parent, None);
        }
    }

    /// A declaration `d` written as `outer` (its `export` statement, or
    /// itself).
    fn declare(&mut self, d: Node<'_>, outer: Node<'_>, parent: usize, exported: bool, depth: u32) {
        let vis = if exported || parent != 0 {
            Visibility::Public
        } else {
            Visibility::Private
        };
        match d.kind() {
            "ambient_declaration" => {
                let mut cur = d.walk();
                let inner = d
                    .named_children(&mut cur)
                    .find(|c| is_declaration(c.kind()));
                if let Some(inner) = inner {
                    self.declare(inner, outer, parent, exported, depth);
                }
            }
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                let Some(name) = d.field("name") else {
                    return;
                };
                let name = self.text(name).to_string();
                let signature_only = d.kind() == "function_signature";
                let i = self.continued(parent, &name, outer, signature_only, |w| {
                    w.new_entity(parent, EntityKind::Function, &name, outer, vis)
                });
                if self.entities[i].signature.text.is_empty() || !signature_only {
                    self.entities[i].signature = function_signature(self, d, outer);
                }
                refs::unit(self, d, i, None);
            }
            "class_declaration" | "abstract_class_declaration" => {
                let Some(name) = d.field("name") else {
                    return;
                };
                let name = self.text(name).to_string();
                let i = self.new_entity(parent, EntityKind::Class, &name, outer, vis);
                self.class_body(d, outer, i, depth);
            }
            "interface_declaration" => {
                let Some(name) = d.field("name") else {
                    return;
                };
                let name = self.text(name).to_string();
                let i = self.new_entity(parent, EntityKind::Trait, &name, outer, vis);
                self.interface(d, outer, i);
            }
            "type_alias_declaration" => {
                let Some(name) = d.field("name") else {
                    return;
                };
                let name = self.text(name).to_string();
                let i = self.new_entity(parent, EntityKind::TypeAlias, &name, outer, vis);
                let s = &mut self.entities[i].signature;
                // Read again by resolution (a handler alias's function
                // type): whole, not capped as display text is.
                s.ty = d
                    .field("value")
                    .map(|v| whole_line(self.src.get(v.byte_range()).unwrap_or("")).into());
                s.generics = generics(self.src, d);
                s.text = one_line(self.src.get(outer.byte_range()).unwrap_or(""));
                refs::unit(self, d, i, None);
            }
            "enum_declaration" => {
                let Some(name) = d.field("name") else {
                    return;
                };
                let name = self.text(name).to_string();
                let i = self.new_entity(parent, EntityKind::Enum, &name, outer, vis);
                let mut fields = Vec::new();
                if let Some(body) = d.field("body") {
                    let mut cur = body.walk();
                    for m in body.named_children(&mut cur) {
                        let n = match m.kind() {
                            "enum_assignment" => m.field("name"),
                            "property_identifier" | "string" => Some(m),
                            _ => None,
                        };
                        if let Some(n) = n {
                            fields.push(crate::model::Field {
                                name: self.text(n).to_string(),
                                ty: String::new(),
                                visibility: Visibility::Public,
                            });
                        }
                    }
                }
                self.entities[i].signature.fields = fields.into();
                self.entities[i].signature.text = head(self, outer, d.field("body"));
                refs::unit(self, d, i, None);
            }
            "lexical_declaration" | "variable_declaration" => {
                self.bindings(d, outer, parent, vis);
            }
            "internal_module" | "module" => {
                let Some(name) = d.field("name") else {
                    return;
                };
                if name.kind() == "string" {
                    // `declare module 'x' { … }`: an augmentation of
                    // another module, not read yet.
                    return;
                }
                let name = self.text(name).to_string();
                let i = self.new_entity(parent, EntityKind::Module, &name, outer, vis);
                self.entities[i].signature.text = head(self, outer, d.field("body"));
                if let Some(body) = d.field("body") {
                    self.body(body, i, depth + 1);
                }
            }
            _ => refs::unit(self, d, parent, None),
        }
    }

    /// The entity a function, method or accessor named `name` continues
    /// (after an overload signature, or a getter for its setter), else a
    /// new one from `make`; its range then reaches to `outer`'s end.
    fn continued(
        &mut self,
        parent: usize,
        name: &str,
        outer: Node<'_>,
        stays_open: bool,
        make: impl FnOnce(&mut Self) -> usize,
    ) -> usize {
        let k = (parent, name.to_string());
        let i = match self.open.get(&k) {
            Some(&(i, true)) => {
                let e = &mut self.entities[i];
                e.end_line = e.end_line.max(outer.end_position().row as u32 + 1);
                i
            }
            _ => make(self),
        };
        self.open.insert(k, (i, stays_open));
        i
    }

    /// `const`/`let`/`var` at module or namespace level: an entity per
    /// bound name.
    fn bindings(&mut self, d: Node<'_>, outer: Node<'_>, parent: usize, vis: Visibility) {
        let kind = match d.field("kind").map(|k| self.text(k)) {
            Some("const") => EntityKind::Const,
            _ if d.kind() == "lexical_declaration" => EntityKind::Variable,
            _ => EntityKind::Variable,
        };
        let mut cur = d.walk();
        let declarators: Vec<Node<'_>> = d
            .named_children(&mut cur)
            .filter(|c| c.kind() == "variable_declarator")
            .collect();
        let single = declarators.len() == 1;
        for v in declarators {
            let Some(name) = v.field("name") else {
                continue;
            };
            if parent == 0 && super::commonjs::require_binding(self, v) {
                continue;
            }
            let span = if single { outer } else { v };
            if name.kind() != "identifier" {
                // Destructuring: each name bound, the value read by the
                // module.
                let mut names = Vec::new();
                refs::pattern_names(self, name, &mut names);
                for n in names {
                    let i = self.new_entity(parent, kind, &n, span, vis);
                    self.entities[i].signature.text = first_line(self, span);
                }
                refs::unit(self, v, parent, None);
                continue;
            }
            let name = self.text(name).to_string();
            let i = self.new_entity(parent, kind, &name, span, vis);
            let value = v.field("value");
            let func = value.filter(|x| {
                matches!(
                    x.kind(),
                    "arrow_function" | "function_expression" | "generator_function"
                )
            });
            let mut sig = match func {
                Some(f) => function_signature(self, f, span),
                None => Signature {
                    text: first_line(self, span),
                    ..Default::default()
                },
            };
            // Its type: as declared, else the class a `new` makes or the
            // type an `as` asserts.
            sig.ty = v
                .field("type")
                .map(|t| type_text(self.text(t)).into())
                .or_else(|| constructed(self, value?).map(Into::into));
            sig.is_const = kind == EntityKind::Const;
            self.entities[i].signature = sig;
            // A function's body is the binding's; any other value runs
            // when the module loads: its references are the module's.
            let owner = if func.is_some() { i } else { parent };
            refs::unit(self, v, owner, None);
        }
    }

    /// A class's heritage, decorators and members.
    pub(crate) fn class_body(&mut self, d: Node<'_>, outer: Node<'_>, class: usize, depth: u32) {
        let body = d.field("body");
        let mut bases = Vec::new();
        let mut cur = d.walk();
        for c in d.named_children(&mut cur) {
            if c.kind() == "class_heritage" {
                let mut cur = c.walk();
                for clause in c.named_children(&mut cur) {
                    let mut cur = clause.walk();
                    for t in clause.named_children(&mut cur) {
                        if !matches!(t.kind(), "type_arguments" | "comment") {
                            bases.push(one_line(self.text(t)));
                        }
                    }
                }
            }
        }
        let text = head(self, outer, body);
        let s = &mut self.entities[class].signature;
        s.bases = bases.into();
        s.generics = generics(self.src, d);
        s.decorators = decorators(self.src, outer).into();
        s.text = text;
        // The heading (decorators, type parameters, heritage) is the
        // class's; the body is read member by member.
        refs::unit_except(self, outer, class, Some(class), body);
        let Some(body) = body else { return };
        let mut cur = body.walk();
        let members: Vec<Node<'_>> = body.named_children(&mut cur).collect();
        let outer_params = self.enter_type_params(d);
        for m in members {
            self.member(m, class, depth);
        }
        self.type_params = outer_params;
    }

    /// One member of a class body.
    fn member(&mut self, m: Node<'_>, class: usize, _depth: u32) {
        let name_of = |w: &Self, m: Node<'_>| m.field("name").map(|n| w.text(n).to_string());
        match m.kind() {
            "method_definition" | "method_signature" | "abstract_method_signature" => {
                let Some(name) = name_of(self, m) else {
                    return;
                };
                let accessor = has_token(m, "get") || has_token(m, "set");
                let kind = if accessor {
                    EntityKind::Property
                } else {
                    EntityKind::Method
                };
                let vis = member_visibility(self, m, &name);
                let signature_only = m.kind() != "method_definition";
                let i = self.continued(class, &name, m, signature_only || accessor, |w| {
                    w.new_entity(class, kind, &name, m, vis)
                });
                if self.entities[i].signature.text.is_empty() || !signature_only {
                    let mut sig = function_signature(self, m, m);
                    sig.self_type = Some(self.entities[class].name.clone().into());
                    sig.decorators = decorators(self.src, m).into();
                    self.entities[i].signature = sig;
                }
                if name == "constructor" {
                    self.parameter_properties(m, class);
                }
                // A method signature (an interface's, a class's overload)
                // reads its own parameter and return types.
                refs::unit(self, m, i, Some(class));
            }
            "public_field_definition" | "property_signature" => {
                let Some(name) = name_of(self, m) else {
                    return;
                };
                let vis = member_visibility(self, m, &name);
                let i = self.new_entity(class, EntityKind::Attribute, &name, m, vis);
                let text = first_line(self, m);
                let ty = m
                    .field("type")
                    .map(|t| type_text(self.text(t)))
                    // `#cart = new Cart()`: the class it is made of.
                    .or_else(|| constructed(self, m.field("value")?));
                let s = &mut self.entities[i].signature;
                s.ty = ty.map(Into::into);
                s.text = text;
                s.decorators = decorators(self.src, m).into();
                // A field's type and initializer are read for its class.
                refs::unit(self, m, class, Some(class));
            }
            "comment" => {}
            _ => refs::unit(self, m, class, Some(class)),
        }
    }

    /// `constructor(private x: T)`: the class's attribute `x`.
    fn parameter_properties(&mut self, m: Node<'_>, class: usize) {
        let Some(params) = m.field("parameters") else {
            return;
        };
        let mut cur = params.walk();
        for p in params.named_children(&mut cur) {
            let property = has_child(p, "accessibility_modifier")
                || has_token(p, "readonly")
                || has_child(p, "override_modifier");
            if !property {
                continue;
            }
            let Some(pat) = p.field("pattern").or_else(|| p.field("name")) else {
                continue;
            };
            if pat.kind() != "identifier" {
                continue;
            }
            let name = self.text(pat).to_string();
            let vis = member_visibility(self, p, &name);
            let i = self.new_entity(class, EntityKind::Attribute, &name, p, vis);
            let s = &mut self.entities[i].signature;
            s.ty = p
                .field("type")
                .map(|t| type_text(self.src.get(t.byte_range()).unwrap_or("")).into());
            s.text = one_line(self.src.get(p.byte_range()).unwrap_or(""));
        }
    }

    /// An interface's heritage and members: property signatures are its
    /// attributes (their types read for it), method signatures its
    /// methods.
    fn interface(&mut self, d: Node<'_>, outer: Node<'_>, i: usize) {
        let body = d.field("body");
        let mut bases = Vec::new();
        let mut cur = d.walk();
        for c in d.named_children(&mut cur) {
            if c.kind() == "extends_type_clause" {
                let mut cur = c.walk();
                for t in c.named_children(&mut cur) {
                    bases.push(one_line(self.text(t)));
                }
            }
        }
        let text = head(self, outer, body);
        let s = &mut self.entities[i].signature;
        s.bases = bases.into();
        s.generics = generics(self.src, d);
        s.text = text;
        refs::unit_except(self, outer, i, None, body);
        let Some(body) = body else { return };
        let mut cur = body.walk();
        let members: Vec<Node<'_>> = body.named_children(&mut cur).collect();
        let outer_params = self.enter_type_params(d);
        let mut calls = Vec::new();
        for m in members {
            match m.kind() {
                "property_signature" | "method_signature" => self.member(m, i, 0),
                "comment" => {}
                "call_signature" => {
                    calls.push(whole_line(self.text(m)));
                    refs::unit(self, m, i, None);
                }
                _ => refs::unit(self, m, i, None),
            }
        }
        self.entities[i].signature.call_signatures = calls.into();
        self.type_params = outer_params;
    }

    /// Adds the type parameters of `d` to those local to its members;
    /// returns the ones before.
    fn enter_type_params(&mut self, d: Node<'_>) -> Vec<String> {
        let before = self.type_params.clone();
        if let Some(tp) = d.field("type_parameters") {
            let mut cur = tp.walk();
            for c in tp.named_children(&mut cur) {
                if let Some(n) = c.field("name") {
                    self.type_params.push(self.text(n).to_string());
                }
            }
        }
        before
    }
}

fn is_declaration(kind: &str) -> bool {
    matches!(
        kind,
        "function_declaration"
            | "generator_function_declaration"
            | "function_signature"
            | "class_declaration"
            | "abstract_class_declaration"
            | "interface_declaration"
            | "type_alias_declaration"
            | "enum_declaration"
            | "lexical_declaration"
            | "variable_declaration"
            | "internal_module"
            | "module"
            | "ambient_declaration"
    )
}

/// Whether `n` has an anonymous child token `tok` (`default`, `get`).
pub(crate) fn has_token(n: Node<'_>, tok: &str) -> bool {
    let mut cur = n.walk();
    let found = n
        .children(&mut cur)
        .any(|c| !c.is_named() && c.kind() == tok);
    found
}

pub(crate) fn has_child(n: Node<'_>, kind: &str) -> bool {
    let mut cur = n.walk();
    let found = n.named_children(&mut cur).any(|c| c.kind() == kind);
    found
}

/// A member's visibility: `private` and `#x` private, `protected`
/// restricted, else public.
fn member_visibility(w: &Walker<'_>, m: Node<'_>, name: &str) -> Visibility {
    if name.starts_with('#') {
        return Visibility::Private;
    }
    let mut cur = m.walk();
    let modifier = m
        .named_children(&mut cur)
        .find(|c| c.kind() == "accessibility_modifier")
        .map(|c| w.text(c));
    match modifier {
        Some("private") => Visibility::Private,
        Some("protected") => Visibility::Restricted,
        _ => Visibility::Public,
    }
}

/// A function's, method's or arrow function's signature; its text is
/// `outer` up to the body.
pub(crate) fn function_signature(w: &Walker<'_>, f: Node<'_>, outer: Node<'_>) -> Signature {
    let mut params = Vec::new();
    if let Some(ps) = f.field("parameters") {
        let mut cur = ps.walk();
        for p in ps.named_children(&mut cur) {
            if !matches!(p.kind(), "required_parameter" | "optional_parameter") {
                continue;
            }
            let pattern = p.field("pattern").or_else(|| p.field("name"));
            let name = pattern.map(|x| w.text(x).to_string()).unwrap_or_default();
            params.push(Param {
                name: name.clone(),
                ty: p
                    .field("type")
                    .map(|t| {
                        whole_line(w.text(t).trim_start().trim_start_matches(['?', ':']).trim())
                    })
                    .unwrap_or_default(),
                pattern: ParamPattern::Owned,
                default: p.field("value").map(|v| one_line(w.text(v))),
            });
        }
    } else if let Some(p) = f.field("parameter") {
        params.push(Param {
            name: w.text(p).to_string(),
            ty: String::new(),
            pattern: ParamPattern::Owned,
            default: None,
        });
    }
    Signature {
        parameters: params.into(),
        return_type: f.field("return_type").map(|t| type_text(w.text(t)).into()),
        generics: generics(w.src, f),
        is_async: has_token(f, "async"),
        text: head(w, outer, f.field("body")),
        ..Default::default()
    }
}

/// `<T extends X, U>` → `["T extends X", "U"]`.
fn generics(src: &str, d: Node<'_>) -> Box<[String]> {
    let Some(tp) = d.field("type_parameters") else {
        return Box::default();
    };
    let mut cur = tp.walk();
    let out: Vec<String> = tp
        .named_children(&mut cur)
        .filter(|c| c.kind() == "type_parameter")
        .map(|c| one_line(src.get(c.byte_range()).unwrap_or("")))
        .collect();
    out.into()
}

/// The decorators of a declaration (or of its `export`), without `@`.
fn decorators(src: &str, n: Node<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = n.walk();
    for c in n.named_children(&mut cur) {
        if c.kind() == "decorator" {
            let t = src.get(c.byte_range()).unwrap_or("");
            out.push(one_line(t.trim_start_matches('@')));
        }
    }
    out
}

/// The `@jsxImportSource` pragma of a file: in one of the comments that
/// open it, before its first statement.
fn jsx_pragma(src: &str) -> Option<String> {
    let mut rest = src.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        let comment = if let Some(line) = rest.strip_prefix("//") {
            let end = line.find('\n').unwrap_or(line.len());
            rest = &line[end..];
            &line[..end]
        } else if let Some(block) = rest.strip_prefix("/*") {
            let end = block.find("*/")?;
            rest = &block[end + 2..];
            &block[..end]
        } else {
            return None;
        };
        if let Some(at) = comment.find("@jsxImportSource") {
            let source = comment[at + "@jsxImportSource".len()..]
                .split_whitespace()
                .next()?;
            return (!source.is_empty()).then(|| source.to_string());
        }
    }
}

/// The type a value is made with, as written: the class a `new`
/// expression makes (`new ns.Store()` → `ns.Store`), or the type an `as`
/// asserts (`impl as unknown as Persist` → `Persist`; not `as const`);
/// what an `await` waits for counts.
fn constructed(w: &Walker<'_>, v: Node<'_>) -> Option<String> {
    let v = if v.kind() == "await_expression" {
        v.named_child(0)?
    } else {
        v
    };
    match v.kind() {
        "new_expression" => {
            let c = v.field("constructor")?;
            matches!(c.kind(), "identifier" | "member_expression").then(|| one_line(w.text(c)))
        }
        "as_expression" if v.named_child_count() == 2 => Some(type_text(w.text(v.named_child(1)?))),
        _ => None,
    }
}

/// Whitespace runs as one space, uncapped (up to a bound no declaration
/// reaches): a call signature's text is read again by resolution.
fn whole_line(s: &str) -> String {
    let mut out = String::new();
    for part in s.split_whitespace() {
        if out.len() > 20_000 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// `: T` → `T`.
fn type_text(t: &str) -> String {
    one_line(t.trim_start().trim_start_matches(['?', ':']).trim())
}

/// `outer`'s text up to `body` (all of it without one), on one line.
fn head(w: &Walker<'_>, outer: Node<'_>, body: Option<Node<'_>>) -> String {
    let end = body.map_or(outer.end_byte(), |b| b.start_byte());
    let t = w.src.get(outer.start_byte()..end).unwrap_or("");
    one_line(t.trim_end().trim_end_matches("=>").trim_end())
}

/// The first line of `n`, on one line.
pub(crate) fn first_line(w: &Walker<'_>, n: Node<'_>) -> String {
    one_line(w.text(n).lines().next().unwrap_or(""))
}

/// Whitespace runs as one space, capped at [`TEXT_CAP`] chars.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(part);
        if out.len() > TEXT_CAP * 4 {
            break;
        }
    }
    if out.chars().count() > TEXT_CAP {
        out = out.chars().take(TEXT_CAP).collect::<String>() + "…";
    }
    out
}

/// The doc of a declaration written as `outer`: a `/** … */` comment
/// right before it.
fn doc_before(w: &Walker<'_>, outer: Node<'_>) -> Option<String> {
    let prev = outer.prev_sibling()?;
    if prev.kind() != "comment" || prev.end_position().row + 1 < outer.start_position().row {
        return None;
    }
    jsdoc(w.text(prev))
}

/// A file's doc: a `/** … */` comment first in the file that documents
/// no declaration (a blank line after it).
fn file_doc(w: &Walker<'_>, root: Node<'_>) -> Option<String> {
    let first = root.named_child(0)?;
    if first.kind() != "comment" {
        return None;
    }
    let next = first.next_sibling();
    if next.is_some_and(|n| n.start_position().row <= first.end_position().row + 1) {
        return None;
    }
    jsdoc(w.text(first))
}

/// The text of a `/** … */` comment without its markers.
pub(crate) fn jsdoc(t: &str) -> Option<String> {
    let body = t.strip_prefix("/**")?.strip_suffix("*/")?;
    let lines: Vec<&str> = body
        .lines()
        .map(|l| {
            let l = l.trim();
            let l = l.strip_prefix('*').unwrap_or(l);
            l.strip_prefix(' ').unwrap_or(l).trim_end()
        })
        .collect();
    let start = lines.iter().position(|l| !l.is_empty())?;
    let end = lines.iter().rposition(|l| !l.is_empty())?;
    Some(lines[start..=end].join("\n"))
}

/// A key without its twin mark: children of a twin are named after the
/// first of its name.
fn strip_twin_key(key: &str) -> &str {
    super::strip_twin(key)
}

fn count_errors(root: Node<'_>) -> u32 {
    if !root.has_error() {
        return 0;
    }
    let mut count = 0u32;
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            count = count.saturating_add(1);
        }
        if n.has_error() {
            let mut cur = n.walk();
            stack.extend(n.children(&mut cur));
        }
    }
    count.max(1)
}
