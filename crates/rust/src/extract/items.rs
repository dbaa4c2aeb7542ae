//! Items by kind: functions and their parameters, structs, enums, traits, impl blocks, modules, constants and statics, type aliases, macro definitions.

use super::*;

impl<'t, 'x> Walker<'t, 'x> {
    #[inline(never)]
    pub(super) fn function(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
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
            sig.parameters = self.params(p, body.is_some()).into();
        }
        sig.return_type = ret.map(|r| self.one_line(r)).map(Into::into);
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None).into();
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate)).into();
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
            sig.self_type = owner.clone().map(Into::into);
            if let Container::Impl(i) = cx.container {
                sig.trait_ref = self.impls[i as usize].trait_ref.clone().map(Into::into);
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
    pub(super) fn params(&mut self, p: Node<'t>, bind: bool) -> Vec<Param> {
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
                        default: None,
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
                        default: None,
                    });
                }
                _ => {}
            }
        }
        self.buf.truncate(start);
        out
    }

    #[inline(never)]
    pub(super) fn struct_like(
        &mut self,
        n: Node<'t>,
        k: K,
        attrs: Range<usize>,
        cx: &Cx,
    ) -> Plan<'t> {
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
            sig.generics = self.child_texts(tp, None).into();
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate)).into();
        }
        sig.traits = a.derives.into();
        if let Some(b) = body {
            sig.fields = self.fields(b).into();
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
    pub(super) fn fields(&mut self, body: Node<'t>) -> Vec<Field> {
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
    pub(super) fn enum_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
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
            sig.generics = self.child_texts(tp, None).into();
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate)).into();
        }
        sig.traits = a.derives.into();
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
            self.entities[idx as usize].signature.fields = variants.into();
        }
        Plan::new(*cx, mark)
    }

    #[inline(never)]
    pub(super) fn trait_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
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
            sig.generics = self.child_texts(tp, None).into();
        }
        if let Some(b) = bounds {
            sig.supertraits = self.child_texts(b, None).into();
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate)).into();
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
    pub(super) fn type_owner(&self, ty: Node<'t>) -> String {
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
    pub(super) fn impl_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
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
        let trait_name = tr.map(|t| self.impl_trait_name(t));
        let item = keys::impl_item(&owner, trait_key.as_deref());
        let wc = self.find_child(n, |k| k == K::WhereClause);
        let sig = self.impl_signature(n, tp, wc, ty, body, trait_ref.as_deref());
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
            self.implements_ref(t, &icx);
        }
        if let Some(t) = ty {
            self.impl_owner_ref(t, &icx);
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

    /// The implemented trait's name as written, without its generic
    /// arguments.
    fn impl_trait_name(&self, t: Node<'t>) -> String {
        let base = if self.kind(t) == K::GenericType {
            self.field(t, self.t.f.ty).unwrap_or(t)
        } else {
            t
        };
        compact(self.text(base))
    }

    /// An impl block's signature: generics, where clause, `unsafe`, self
    /// type, trait and head text.
    fn impl_signature(
        &mut self,
        n: Node<'t>,
        tp: Option<Node<'t>>,
        wc: Option<Node<'t>>,
        ty: Option<Node<'t>>,
        body: Option<Node<'t>>,
        trait_ref: Option<&str>,
    ) -> Signature {
        let mut sig = Signature::default();
        if let Some(tp) = tp {
            sig.generics = self.child_texts(tp, None).into();
        }
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate)).into();
        }
        sig.is_unsafe = self.find_child(n, |k| k == K::TUnsafe).is_some();
        sig.self_type = ty.map(|t| self.one_line(t)).map(Into::into);
        sig.trait_ref = trait_ref.map(Into::into);
        sig.text = self.head(n, body.map_or(n.end_byte(), |b| b.start_byte()));
        sig
    }

    /// The `Implements` reference of `impl Trait for …`, and the paths in
    /// the trait's generic arguments.
    fn implements_ref(&mut self, t: Node<'t>, icx: &Cx) {
        let mut p = std::mem::take(&mut self.path_buf);
        p.clear();
        if self.collect_path(t, &mut p) && !p.is_empty() {
            self.emit(RefKind::Implements, &p, t, icx, false);
        }
        self.path_buf = p;
        self.walk_path_extras(t, icx);
    }

    /// The `ImplOwner` reference to the type an impl is for (through `&`,
    /// `*` and `dyn`; not a generic parameter), or a walk of a type that is
    /// no path.
    fn impl_owner_ref(&mut self, t: Node<'t>, icx: &Cx) {
        let f = &self.t.f;
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
            self.emit(RefKind::ImplOwner, &p, base, icx, false);
        }
        self.path_buf = p;
        if is_path {
            self.walk_path_extras(base, icx);
        } else {
            self.walk(base, icx);
        }
    }

    #[inline(never)]
    pub(super) fn mod_item(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let (Some(name_node), Some(body)) = (self.field(n, f.name), self.field(n, f.body)) else {
            // `mod foo;` — the module is the entity of another file.
            if let Some(name_node) = self.field(n, f.name) {
                let inline =
                    self.children[cx.module as usize].path[self.ctx.module_path.len()..].to_vec();
                self.mod_decls.push(ChildDecl {
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
        let mut path = self.children[cx.module as usize].path.to_vec();
        path.push(name.to_string());
        self.children.push(ModInfo {
            path: path.into(),
            entity: idx,
        });
        let mut plan = Plan::new(*cx, self.generics.len());
        plan.body = Some(body);
        plan.body_cx = Cx {
            module: (self.children.len() - 1) as u32,
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
    pub(super) fn const_static(
        &mut self,
        n: Node<'t>,
        k: K,
        attrs: Range<usize>,
        cx: &Cx,
    ) -> Plan<'t> {
        let a = self.attrs(attrs);
        let f = &self.t.f;
        let ty = self.field(n, f.ty);
        let value = self.field(n, f.value);
        let name = self.field(n, f.name).map(|x| self.text(x));
        let Some(name) = name.filter(|nm| *nm != "_") else {
            // `const _: () = { ... };` — no entity, but look inside.
            let vcx = Cx {
                parent: self.children[cx.module as usize].entity,
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
            ty: ty.map(|t| self.one_line(t).into()),
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
            parent: self.children[cx.module as usize].entity,
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
    pub(super) fn type_item(
        &mut self,
        n: Node<'t>,
        k: K,
        attrs: Range<usize>,
        cx: &Cx,
    ) -> Plan<'t> {
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
            sig.generics = self.child_texts(tp, None).into();
        }
        let wc = self.find_child(n, |k| k == K::WhereClause);
        if let Some(w) = wc {
            sig.where_clause = self.child_texts(w, Some(K::WherePredicate)).into();
        }
        if k == K::TypeItem {
            sig.ty = ty.map(|t| self.one_line(t)).map(Into::into);
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
    pub(super) fn macro_def(&mut self, n: Node<'t>, attrs: Range<usize>, cx: &Cx) {
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
}
