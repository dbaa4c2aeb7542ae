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
        let mut s = TtScan::new();
        for i in range {
            let c = self.buf[i];
            let k = self.kind(c);
            match k {
                K::Ident | K::PathKw | K::Metavariable => s.ident(self.text(c)),
                K::TColonColon => s.colons(),
                K::TDot => self.tt_dot(&mut s),
                K::TBang => s.bang(),
                K::TFn => {
                    s.path.clear();
                    s.prev = Tok::Fn;
                }
                K::TokenTree | K::TokenRepetition => {
                    if k == K::TokenTree && s.path.len > 0 && !s.path.overflow && !s.tainted {
                        self.tt_path_before_tree(c, &s, cx);
                    }
                    self.scan_tt(c, cx);
                    s.path.clear();
                    s.prev = Tok::Other;
                }
                _ => {
                    if k == K::StringLit {
                        self.note_text(cx.from, c);
                    }
                    if s.prev == Tok::Ident {
                        // `Kind::A,` `x == Mode::B)`: a path that ends here.
                        self.emit_tt_value(&s.path, s.before_path, s.tainted, c, cx);
                    }
                    s.path.clear();
                    s.prev = Tok::Other;
                }
            }
            s.prev_gt = k == K::Skip && !c.is_named() && self.text(c).ends_with('>');
        }
        self.buf.truncate(start);
        self.depth -= 1;
    }

    /// `.` in a token tree: notes whether the receiver was `self` and what
    /// is known of its type (a local, or a field of `self`).
    #[inline]
    fn tt_dot(&mut self, s: &mut TtScan<'t>) {
        s.self_dot = s.prev == Tok::Ident && s.path.as_slice() == ["self"];
        s.dot_recv = match s.path.as_slice() {
            // `x.` with `x` not itself after a `.`: a local.
            [name] if s.prev == Tok::Ident && s.before_path != Tok::Dot => self.lookup_local(name),
            // `self.field.`
            [field] if s.prev == Tok::Ident && s.path_self => self
                .lookup_local("self")
                .map(|r| Recv::Field(Box::new(r), field.to_string())),
            _ => None,
        };
        s.path.clear();
        s.prev = Tok::Dot;
    }

    /// The (complete) path before a nested token tree `c`: `path(` is a
    /// call, `.name(` a method call, `path!(` a macro call, and `Foo::Bar {`
    /// or `a::B[` a path as a value.
    fn tt_path_before_tree(&mut self, c: Node<'t>, s: &TtScan<'t>, cx: &Cx) {
        let paren = self.src.as_bytes().get(c.start_byte()) == Some(&b'(');
        let segs = s.path.as_slice();
        let first = segs[0];
        let bare_self = segs.len() == 1 && first == "Self";
        let plain = !bare_self && !self.is_generic(first) && !first.starts_with('$');
        if s.prev == Tok::Ident && paren {
            if s.before_path == Tok::Dot {
                if segs.len() == 1 {
                    let recv = s.path_recv.clone();
                    self.emit_ref(RefKind::MethodCall, segs, c, cx, s.path_self, recv);
                }
            } else if s.before_path != Tok::Fn && plain {
                self.emit(RefKind::Call, segs, c, cx, false);
            }
        } else if s.prev == Tok::Bang && s.before_path != Tok::Dot && plain {
            self.emit(RefKind::MacroCall, segs, c, cx, false);
        } else if s.prev == Tok::Ident {
            // `Foo::Bar { .. }`, `a::B[..]`: a path as a value.
            self.emit_tt_value(&s.path, s.before_path, s.tainted, c, cx);
        }
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

/// Where a scan of one token tree is: the path being read and the tokens
/// around it.
struct TtScan<'t> {
    path: TokPath<'t>,
    prev: Tok,
    /// The token before the current path's first segment.
    before_path: Tok,
    /// The path started after `.` whose receiver was `self`.
    path_self: bool,
    self_dot: bool,
    /// What is known about the receiver before the last `.`, and about
    /// the receiver of the current path when it started after a `.`.
    dot_recv: Option<Recv>,
    path_recv: Option<Recv>,
    /// The last token ended in `>` / the current path continues one
    /// (`Vec::<u8>::new`, `<X as Tr>::f`): its segments are incomplete.
    prev_gt: bool,
    tainted: bool,
}

impl<'t> TtScan<'t> {
    /// The state before a token tree's first token.
    #[inline]
    fn new() -> Self {
        TtScan {
            path: TokPath::new(),
            prev: Tok::None,
            before_path: Tok::None,
            path_self: false,
            self_dot: false,
            dot_recv: None,
            path_recv: None,
            prev_gt: false,
            tainted: false,
        }
    }

    /// An identifier: the next segment after `::`, else the first of a new
    /// path (which remembers what came before it).
    #[inline]
    fn ident(&mut self, t: &'t str) {
        if self.prev == Tok::Sep && self.path.len > 0 {
            self.path.push(t);
        } else {
            if self.prev != Tok::Sep {
                self.before_path = self.prev;
                self.tainted = false;
            }
            self.path_self = self.prev == Tok::Dot && self.self_dot;
            self.path_recv = if self.prev == Tok::Dot {
                self.dot_recv.clone()
            } else {
                None
            };
            self.path.clear();
            self.path.push(t);
        }
        self.prev = Tok::Ident;
    }

    /// `::`: a separator, or the start of a path that begins with `::`.
    #[inline]
    fn colons(&mut self) {
        if self.prev != Tok::Ident {
            // A path starting with `::`.
            self.before_path = self.prev;
            self.tainted = self.prev_gt;
            self.path.clear();
        }
        self.prev = Tok::Sep;
    }

    /// `!`: a macro's bang when it follows a path, else just a token.
    #[inline]
    fn bang(&mut self) {
        self.prev = if self.prev == Tok::Ident && self.path.len > 0 {
            Tok::Bang
        } else {
            Tok::Other
        };
    }
}
