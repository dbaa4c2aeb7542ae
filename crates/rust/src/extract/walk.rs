//! The walk itself: construction and finishing of an extract, the file's module entity, node kinds and fields, child iteration on the shared cursor, and the dispatch of every node kind.

use super::*;

impl<'t, 'x> Walker<'t, 'x> {
    pub(super) fn new(
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
            file: ctx.path.as_str().into(),
            uses: Vec::new(),
            children: Vec::new(),
            impls: Vec::new(),
            generics: Vec::new(),
            seen: FxMap::default(),
            path_buf: Vec::new(),
            depth: 0,
            locals: Vec::new(),
            locals_base: 0,
            mod_decls: Vec::new(),
            local_fn: 0,
            texts: BodyTexts::default(),
        }
    }

    pub(super) fn finish(mut self, errors: u32) -> FileExtract {
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
            entities: exact(self.entities),
            refs: exact(self.refs),
            uses: exact(self.uses),
            children: self.mod_decls,
            context: self.ctx.clone(),
            language: crate::ID,
            texts: self.texts.into_pairs(),
        }
    }

    /// Keep the words of a string literal or a plain comment for the
    /// entity the walk is in (see [`BodyTexts`]).
    pub(super) fn note_text(&mut self, entity: u32, n: Node<'_>) {
        let text = self.text(n);
        self.texts.note(entity, text);
    }

    pub(super) fn push_file_module(&mut self) {
        let ctx = self.ctx;
        let name = ctx
            .module_path
            .last()
            .cloned()
            .unwrap_or_else(|| ctx.package.clone());
        let key = keys::file_module_key(&ctx.path, &ctx.module_path, &ctx.package);
        let key = self.keys.allocate(key);
        let module_path = match ctx.module_path.split_last() {
            Some((_, parent)) => parent.into(),
            None => Vec::new().into(),
        };
        let newlines = self.src.bytes().filter(|&b| b == b'\n').count();
        let last_line = if self.src.is_empty() || !self.src.ends_with('\n') {
            newlines + 1
        } else {
            newlines
        };
        self.entities.push(Entity {
            key: key.into(),
            kind: EntityKind::Module,
            name,
            visibility: Visibility::Public,
            file: self.file.clone(),
            start_line: 1,
            end_line: u32::try_from(last_line.max(1)).unwrap_or(u32::MAX),
            module_path,
            doc: String::new(),
            signature: Signature::default(),
            is_test: ctx.is_test_file,
            owner: None,
            trait_name: None,
            parent: None,
            language: crate::ID,
        });
        self.children.push(ModInfo {
            path: ctx.module_path.as_slice().into(),
            entity: 0,
        });
    }

    // -- tree access -------------------------------------------------------

    #[inline]
    pub(super) fn kind(&self, n: Node<'_>) -> K {
        self.t
            .kinds
            .get(n.kind_id() as usize)
            .copied()
            .unwrap_or(K::Other)
    }

    #[inline]
    pub(super) fn text(&self, n: Node<'_>) -> &'t str {
        self.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
    }

    #[inline]
    pub(super) fn field(&self, n: Node<'t>, id: u16) -> Option<Node<'t>> {
        if id == 0 {
            None
        } else {
            n.child_by_field_id(id)
        }
    }

    /// Pushes the children of `n` onto `buf`; returns their index range. The
    /// caller must `buf.truncate(start)` when done.
    pub(super) fn load_children(&mut self, n: Node<'t>) -> Range<usize> {
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
    pub(super) fn find_child(&mut self, n: Node<'t>, pred: impl Fn(K) -> bool) -> Option<Node<'t>> {
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

    pub(super) fn is_generic(&self, name: &str) -> bool {
        self.generics.iter().rev().any(|g| *g == name)
    }

    // -- generic walk -------------------------------------------------------

    /// Walks the children of a list-like node, handing each item the run of
    /// attributes and comments that precedes it.
    pub(super) fn walk_children(&mut self, n: Node<'t>, cx: &Cx) {
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
                    } else if !is_outer_doc(text) {
                        self.note_text(cx.from, c);
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

    pub(super) fn walk(&mut self, n: Node<'t>, cx: &Cx) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.walk_inner(n, cx);
        self.depth -= 1;
    }

    pub(super) fn walk_inner(&mut self, n: Node<'t>, cx: &Cx) {
        let k = self.kind(n);
        let f = &self.t.f;
        match k {
            K::StringLit => self.note_text(cx.from, n),
            K::LineComment | K::BlockComment => {
                if !is_outer_doc(self.text(n)) {
                    self.note_text(cx.from, n);
                }
            }
            K::Skip
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
            K::Call => self.walk_call(n, cx),
            K::MacroInvocation => self.walk_macro_invocation(n, cx),
            K::StructExpr => self.walk_struct_expr(n, cx),
            K::ScopedIdent => self.path_ref(n, RefKind::Value, cx),
            K::Ident => self.ident_ref(n, cx),
            K::TypeIdent => self.type_ident_ref(n, cx),
            K::ScopedTypeIdent | K::GenericType => self.path_ref(n, RefKind::Type, cx),
            K::GenericFunction => {
                let (func, args) = (self.field(n, f.function), self.field(n, f.type_arguments));
                self.walk_each([func, args], cx);
            }
            K::TypeBinding => {
                let (ty, args) = (self.field(n, f.ty), self.field(n, f.type_arguments));
                self.walk_each([args, ty], cx);
            }
            K::FieldExpr => self.walk_field_expr(n, cx),
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
            K::ForExpr => self.walk_for_expr(n, cx),
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

    /// Walks each node that is present, in the order given.
    #[inline]
    fn walk_each<const N: usize>(&mut self, nodes: [Option<Node<'t>>; N], cx: &Cx) {
        for n in nodes.into_iter().flatten() {
            self.walk(n, cx);
        }
    }

    /// A call: the callee is a reference of its own kind, then the arguments.
    fn walk_call(&mut self, n: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        let (func, args) = (self.field(n, f.function), self.field(n, f.arguments));
        if let Some(func) = func {
            self.callee(func, cx);
        }
        if let Some(args) = args {
            self.walk(args, cx);
        }
    }

    /// A macro call: the macro's path, then the paths in its token tree.
    fn walk_macro_invocation(&mut self, n: Node<'t>, cx: &Cx) {
        if let Some(m) = self.field(n, self.t.f.macro_) {
            self.path_ref(m, RefKind::MacroCall, cx);
        }
        if let Some(tt) = self.find_child(n, |k| k == K::TokenTree) {
            self.scan_tt(tt, cx);
        }
    }

    /// A struct literal: its type's name, then the field values.
    fn walk_struct_expr(&mut self, n: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        let (name, body) = (self.field(n, f.name), self.field(n, f.body));
        if let Some(name) = name {
            self.path_ref(name, RefKind::Type, cx);
        }
        if let Some(body) = body {
            self.walk(body, cx);
        }
    }

    /// A plain identifier refers to something only when it reads like a
    /// constant (`ALL_CAPS`) and is no generic parameter.
    fn ident_ref(&mut self, n: Node<'t>, cx: &Cx) {
        let t = self.text(n);
        if is_all_caps(t) && !self.is_generic(t) {
            self.emit(RefKind::Value, &[t], n, cx, false);
        }
    }

    /// A type name refers to a type unless it is `Self` or a generic parameter.
    fn type_ident_ref(&mut self, n: Node<'t>, cx: &Cx) {
        let t = self.text(n);
        if t != "Self" && !self.is_generic(t) {
            self.emit(RefKind::Type, &[t], n, cx, false);
        }
    }

    /// A field read: the resolver types the value and links the struct
    /// that has the field; then the value itself is walked.
    fn walk_field_expr(&mut self, n: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        let (value, field) = (self.field(n, f.value), self.field(n, f.field));
        if let (Some(v), Some(field)) = (value, field) {
            if let Some(recv) = self.value_recv(v, 0) {
                let name = self.text(field);
                self.emit_ref(RefKind::Field, &[name], field, cx, false, Some(recv));
            }
        }
        if let Some(v) = value {
            self.walk(v, cx);
        }
    }

    /// `for pat in value { body }`: the value sees the old names, the
    /// pattern binds, then the body is walked.
    fn walk_for_expr(&mut self, n: Node<'t>, cx: &Cx) {
        let f = &self.t.f;
        let (pat, val, body) = (
            self.field(n, f.pattern),
            self.field(n, f.value),
            self.field(n, f.body),
        );
        if let Some(v) = val {
            self.walk(v, cx);
        }
        if let Some(p) = pat {
            self.bind_for_pattern(p, val);
            self.walk(p, cx);
        }
        if let Some(b) = body {
            self.walk(b, cx);
        }
    }

    /// `for x in v`: `x` is an element of `v`; any other pattern only
    /// shadows the names it binds.
    fn bind_for_pattern(&mut self, p: Node<'t>, val: Option<Node<'t>>) {
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
    }

    // -- local bindings and receiver types ------------------------------------
}

/// A `///` or `/** */` comment: the next item's doc, read with its
/// attributes.
fn is_outer_doc(text: &str) -> bool {
    (text.starts_with("///") && !text.starts_with("////"))
        || (text.starts_with("/**") && !text.starts_with("/***") && text != "/**/")
}

/// `items` in an allocation of their size. An index run holds every
/// file's extract until it has resolved them all: without the room the
/// vectors grew into (a third more, on average), a large tree's extracts
/// take 200 MB less. (`shrink_to_fit` may keep the block: an allocator such
/// as mimalloc shrinks in place down to half.)
fn exact<T>(items: Vec<T>) -> Vec<T> {
    if items.capacity() == items.len() {
        return items;
    }
    let mut out = Vec::with_capacity(items.len());
    out.extend(items);
    out
}
