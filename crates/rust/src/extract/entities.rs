//! Entities: signatures' one-line heads, entity construction and keys, members, generics, and the item dispatch with its deferred body plans.

use super::*;

impl<'t, 'x> Walker<'t, 'x> {
    /// Text of `n` from its start to byte `end`, on one line, capped, with
    /// trailing `;`/`=` removed.
    #[inline(never)]
    pub(super) fn head(&self, n: Node<'t>, end: usize) -> String {
        let start = n.start_byte();
        let s = self.src.get(start..end.max(start)).unwrap_or("");
        let mut t = collapse(s, TEXT_CAP);
        while t.ends_with([';', '=', ' ']) {
            t.pop();
        }
        t
    }

    #[inline(never)]
    pub(super) fn one_line(&self, n: Node<'t>) -> String {
        collapse(self.text(n), TYPE_CAP)
    }

    #[inline(never)]
    pub(super) fn new_entity(&self, n: Node<'t>, kind: EntityKind, name: &str, cx: &Cx) -> Entity {
        Entity {
            key: "".into(),
            kind,
            name: name.to_string(),
            visibility: Visibility::Private,
            file: self.file.clone(),
            start_line: line_of(n),
            end_line: end_line_of(n),
            module_path: self.children[cx.module as usize].path.clone(),
            doc: String::new(),
            signature: Signature::default(),
            is_test: cx.is_test,
            owner: None,
            trait_name: None,
            parent: Some(self.entities[cx.parent as usize].key.clone()),
            language: crate::ID,
        }
    }

    /// Assigns the key (from `item`, the item part) and stores the entity.
    #[inline(never)]
    pub(super) fn add(&mut self, mut e: Entity, item: &str) -> u32 {
        let key = match self.local_fn {
            0 => keys::item_key(&self.ctx.path, &e.module_path, item),
            f => keys::local_item_key(&self.entities[f as usize - 1].key, item),
        };
        e.key = self.keys.allocate(key).into();
        self.entities.push(e);
        (self.entities.len() - 1) as u32
    }

    /// Kind, owner, trait name, item key part and visibility of a member
    /// that may sit in an impl or trait body.
    #[inline(never)]
    pub(super) fn member(
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
    pub(super) fn push_generics(&mut self, tp: Node<'t>) {
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
    pub(super) fn child_texts(&mut self, n: Node<'t>, only: Option<K>) -> Vec<String> {
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
    pub(super) fn item(&mut self, n: Node<'t>, k: K, attrs: Range<usize>, cx: &Cx) {
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

    pub(super) fn item_inner(&mut self, n: Node<'t>, k: K, attrs: Range<usize>, cx: &Cx) {
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

    pub(super) fn run_plan(&mut self, plan: Plan<'t>) {
        for part in plan.parts.into_iter().flatten() {
            self.walk(part, &plan.part_cx);
        }
        if let Some(body) = plan.body {
            self.walk_children(body, &plan.body_cx);
        }
        self.generics.truncate(plan.mark);
    }
}
