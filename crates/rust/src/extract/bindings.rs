//! Local bindings of the enclosing function (parameters, `let`s, patterns) and the receiver type hints they give method calls.

use super::*;

impl<'t, 'x> Walker<'t, 'x> {
    /// What the latest binding of `name` in the current function holds.
    pub(super) fn lookup_local(&self, name: &str) -> Option<Recv> {
        self.locals[self.locals_base..]
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .and_then(|(_, t)| t.clone())
    }

    /// Records a binding whose value is not known: it hides an earlier
    /// binding of the same name (only needed when that one was known).
    pub(super) fn shadow(&mut self, name: &'t str) {
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
    pub(super) fn bind_let(&mut self, n: Node<'t>) {
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
    pub(super) fn shadow_pattern(&mut self, p: Node<'t>) {
        if self.locals.len() > self.locals_base {
            self.shadow_walk(p, 0);
        }
    }

    pub(super) fn shadow_walk(&mut self, p: Node<'t>, depth: u32) {
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
    pub(super) fn value_recv(&mut self, v: Node<'t>, depth: u32) -> Option<Recv> {
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
}
