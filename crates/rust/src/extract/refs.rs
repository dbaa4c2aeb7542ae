//! Raw references: callees, paths, macro token trees, each deduplicated per origin and kind.

use super::*;

impl<'t, 'x> Walker<'t, 'x> {
    /// The function part of a call expression.
    pub(super) fn callee(&mut self, func: Node<'t>, cx: &Cx) {
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
    pub(super) fn collect_path(&self, n: Node<'t>, out: &mut Vec<&'t str>) -> bool {
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
    pub(super) fn walk_path_extras(&mut self, n: Node<'t>, cx: &Cx) {
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
    pub(super) fn path_ref(&mut self, n: Node<'t>, kind: RefKind, cx: &Cx) {
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

    pub(super) fn emit(
        &mut self,
        kind: RefKind,
        path: &[&str],
        n: Node<'_>,
        cx: &Cx,
        on_self: bool,
    ) {
        self.emit_ref(kind, path, n, cx, on_self, None);
    }

    #[inline(never)]
    pub(super) fn emit_ref(
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
        let from = self.entities[cx.from as usize].key.clone();
        let scope = self.children[cx.module as usize].path.clone();
        self.refs.push(RawRef {
            from,
            kind,
            path: path.iter().map(|s| s.to_string()).collect(),
            line: line_of(n),
            scope,
            self_type,
            on_self,
            receiver: recv,
        });
        self.ref_from.push(cx.from);
    }

    /// Cheap heuristic over a macro's token tree: `path(` → Call,
    /// `.name(` → MethodCall, `path!` + tree → MacroCall.
    #[inline(never)]
    pub(super) fn scan_tt(&mut self, tt: Node<'t>, cx: &Cx) {
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
                    if k == K::StringLit {
                        self.note_text(cx.from, c);
                    }
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
    pub(super) fn emit_tt_value(
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
}
