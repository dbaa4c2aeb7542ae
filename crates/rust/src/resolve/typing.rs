//! Typing receivers: what a method is called on, what a field is read from.
//!
//! The extractor describes a receiver by syntax alone ([`Recv`]: a local's
//! declared type, a call, a method, a field, `?`, an element); here it gets
//! a type by following the declarations of the whole repository — the
//! callee's return type, the struct's field type, a type alias's target,
//! a generic parameter's trait bounds — each read in the scope it was
//! written in. The standard library's common types are known by the few
//! facts in [`crate::types`]. When a step cannot be typed the
//! chain stops and the reference is resolved as if nothing were known.

use super::{EntId, ModId, Ns, Res, SymbolTable};
use crate::model::{Entity, EntityKind, RawRef, Recv};
use crate::types::{self, StdReturn, Ty};

/// Where a name is written: what it resolves against.
#[derive(Clone, Copy, Debug)]
pub(super) struct Site<'a> {
    pub krate: &'a str,
    pub scope: Option<ModId>,
    /// Name of the enclosing impl's or trait's self type, for `Self`.
    pub self_type: Option<&'a str>,
    /// The entity the name is written in: its enclosing functions' local
    /// items and its generic parameters' bounds are in scope.
    pub from: Option<EntId>,
    /// What `Self` is when it is known as an entity (a method's return
    /// type read for a receiver of that type).
    pub self_ent: Option<EntId>,
}

/// A type and the site whose names it is written with.
#[derive(Clone, Debug)]
pub(super) struct Typed<'a> {
    ty: Ty,
    site: Site<'a>,
}

/// What a typed value is, seen through references and smart pointers.
pub(super) enum Kind<'a> {
    /// Types of the repository.
    Ours(Vec<EntId>),
    /// Traits a value is known to implement (`impl Tr`, `dyn Tr`, `T: Tr`).
    Traits(Vec<EntId>),
    /// A type that is not the repository's, by its last segment.
    Foreign(String, Typed<'a>),
    Unknown,
}

const MAX_STEPS: u32 = 16;

impl<'a> SymbolTable<'a> {
    /// The site of a reference written in entity `from`.
    pub(super) fn site_of(&self, krate: &'a str, r: &'a RawRef, from: EntId) -> Site<'a> {
        Site {
            krate,
            scope: self.scope_of(krate, &r.scope),
            self_type: r.self_type.as_deref(),
            from: Some(from),
            self_ent: None,
        }
    }

    /// The site an entity's own declarations (signature, fields) are
    /// written in.
    fn entity_site(&self, id: EntId) -> Site<'a> {
        let (e, krate) = self.entities[id];
        let self_type = match e.kind {
            EntityKind::Method | EntityKind::Impl => e.owner.as_deref(),
            EntityKind::Struct | EntityKind::Enum | EntityKind::Union | EntityKind::Trait => {
                Some(e.name.as_str())
            }
            _ => e
                .parent
                .as_deref()
                .and_then(|p| self.key_to_ent.get(p))
                .and_then(|&p| self.entities[p].0.owner.as_deref()),
        };
        Site {
            krate,
            scope: self.scope_of(krate, &e.module_path),
            self_type,
            from: Some(id),
            self_ent: None,
        }
    }

    /// A path resolved at a site: `Self` when known as an entity, the
    /// local items of the enclosing functions, then the module's names.
    pub(super) fn resolve_in(&self, site: &Site<'a>, segs: &[&str], ns: Ns) -> Option<Res> {
        let (&first, rest) = segs.split_first()?;
        if first == "Self" {
            if let Some(se) = site.self_ent {
                return self.walk_rest(Res::Items(vec![se]), rest, ns, 0);
            }
        }
        if !matches!(first, "crate" | "$crate" | "self" | "super" | "Self") {
            if let Some(from) = site.from {
                let first_ns = if rest.is_empty() { ns } else { Ns::Type };
                if let Some(items) = self.local_lookup(from, first, first_ns) {
                    return self.walk_rest(Res::Items(items), rest, ns, 0);
                }
            }
        }
        let found = self.resolve_path(site.krate, site.scope, segs, ns, site.self_type, 0);
        if found.is_none() && !rest.is_empty() {
            // `S::Error`, `M::new()` of a generic parameter: items of the
            // traits bounding it.
            let bounds = self.bounds_of(site, first);
            if !bounds.is_empty() {
                return self.walk_rest(Res::Items(bounds), rest, ns, 0);
            }
        }
        found
    }

    /// Local items named `name` of the functions enclosing `from`,
    /// innermost first.
    fn local_lookup(&self, from: EntId, name: &str, ns: Ns) -> Option<Vec<EntId>> {
        if self.locals_of.is_empty() {
            return None;
        }
        for (id, _) in self.enclosing(from).take(32) {
            if let Some(items) = self.locals_of.get(&id).and_then(|m| m.get(name)) {
                let hits: Vec<EntId> = items
                    .iter()
                    .copied()
                    .filter(|&i| super::in_ns(self.entities[i].0.kind, ns))
                    .collect();
                if !hits.is_empty() {
                    return Some(hits);
                }
            }
        }
        None
    }

    /// `from` and the entities it is written in, innermost first, up to
    /// (not including) its module.
    pub(super) fn enclosing(&self, from: EntId) -> impl Iterator<Item = (EntId, &'a Entity)> + '_ {
        std::iter::successors(Some(from), |&id| {
            let parent = self.entities[id].0.parent.as_deref()?;
            self.key_to_ent.get(parent).copied()
        })
        .map(|id| (id, self.entities[id].0))
        .take_while(|(_, e)| e.kind != EntityKind::Module)
    }

    /// Traits bounding generic parameter `name` where `site` is written
    /// (`fn f<M: Matcher>`, `where M: Matcher`, the impl's parameters).
    fn bounds_of(&self, site: &Site<'a>, name: &str) -> Vec<EntId> {
        let mut out = Vec::new();
        let around = site.from.into_iter().flat_map(|from| self.enclosing(from));
        for (id, e) in around.take(16) {
            let sig = &e.signature;
            for clause in sig.generics.iter().chain(&sig.where_clause) {
                let Some((param, bounds)) = clause.split_once(':') else {
                    continue;
                };
                if param.trim() != name || bounds.starts_with(':') {
                    continue;
                }
                let bound_site = self.entity_site(id);
                for b in split_bounds(bounds) {
                    if let Ty::Path { segs, .. } = types::parse(b) {
                        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
                        out.extend(self.traits_at(&bound_site, &segs));
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    fn traits_at(&self, site: &Site<'a>, segs: &[&str]) -> Vec<EntId> {
        match self.resolve_in(site, segs, Ns::Type) {
            Some(Res::Items(items)) => items
                .into_iter()
                .filter(|&i| self.entities[i].0.kind == EntityKind::Trait)
                .collect(),
            _ => vec![],
        }
    }

    /// The type of a receiver, as far as declarations tell.
    pub(super) fn typed_of(&self, site: &Site<'a>, recv: &Recv, depth: u32) -> Option<Typed<'a>> {
        if depth > MAX_STEPS {
            return None;
        }
        match recv {
            Recv::Type(text) => Some(Typed {
                ty: types::parse(text),
                site: *site,
            }),
            Recv::Call(path) => self.call_returns(site, path),
            Recv::Method(inner, name) => {
                let t = self.typed_of(site, inner, depth + 1)?;
                self.method_returns(&t, name, depth)
            }
            Recv::Field(inner, name) => {
                let t = self.typed_of(site, inner, depth + 1)?;
                self.field_type(&t, name, depth)
            }
            Recv::Try(inner) => {
                let t = self.typed_of(site, inner, depth + 1)?;
                self.unwrapped(t, depth)
            }
            Recv::Element(inner) => {
                let t = self.typed_of(site, inner, depth + 1)?;
                self.element_of(t, depth)
            }
            // Rust's extraction writes none of these.
            Recv::Value(_) | Recv::Arg(..) | Recv::Param(..) | Recv::Literal(..) => None,
        }
    }

    /// A value known to be of entity `id`.
    fn of_entity(&self, id: EntId) -> Typed<'a> {
        let mut site = self.entity_site(id);
        site.self_ent = Some(id);
        Typed {
            ty: Ty::named("Self"),
            site,
        }
    }

    /// What calling the function at `path` returns.
    fn call_returns(&self, site: &Site<'a>, path: &[String]) -> Option<Typed<'a>> {
        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
        let found = self
            .resolve_in(site, &segs, Ns::Value)
            .or_else(|| self.resolve_in(site, &segs, Ns::Type));
        let qualifier = || -> Option<EntId> {
            let (_, prefix) = segs.split_last()?;
            match self.resolve_in(site, prefix, Ns::Type)? {
                Res::Items(items) => items
                    .into_iter()
                    .find(|&i| self.entities[i].0.kind.is_type_like()),
                Res::Module(_) => None,
            }
        };
        if let Some(Res::Items(items)) = found {
            let id = *items.first()?;
            let e = self.entities[id].0;
            return match e.kind {
                EntityKind::Function | EntityKind::Method => {
                    let rt = e.signature.return_type.as_deref()?;
                    let mut s = self.entity_site(id);
                    s.self_ent =
                        qualifier().filter(|&q| self.entities[q].0.kind != EntityKind::Trait);
                    Some(Typed {
                        ty: types::parse(rt),
                        site: s,
                    })
                }
                // A tuple struct's or a variant's constructor.
                EntityKind::Struct | EntityKind::Enum => Some(self.of_entity(id)),
                _ => None,
            };
        }
        // `T::new()` of a type whose constructor is not declared here
        // (a derive, a foreign type): a value of `T`.
        let (&name, prefix) = segs.split_last()?;
        if prefix.is_empty() || !is_constructor(name) {
            return None;
        }
        match qualifier() {
            Some(q) => Some(self.of_entity(q)),
            None => Some(Typed {
                ty: Ty::Path {
                    segs: prefix.iter().map(|s| s.to_string()).collect(),
                    args: vec![],
                    bindings: vec![],
                },
                site: *site,
            }),
        }
    }

    /// Through references, `Box`, `Rc`, `Arc`, … that are not ours.
    fn deref(&self, mut t: Typed<'a>) -> Typed<'a> {
        for _ in 0..8 {
            match t.ty {
                Ty::Ref(inner) => t.ty = *inner,
                Ty::Path {
                    ref segs, ref args, ..
                } if segs.last().is_some_and(|l| types::is_transparent(l))
                    && !args.is_empty()
                    && !self.is_ours(&t) =>
                {
                    t.ty = args[0].clone();
                }
                _ => return t,
            }
        }
        t
    }

    fn is_ours(&self, t: &Typed<'a>) -> bool {
        let Ty::Path { segs, .. } = &t.ty else {
            return false;
        };
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        matches!(self.resolve_in(&t.site, &segs, Ns::Type), Some(Res::Items(items))
            if items.iter().any(|&i| self.entities[i].0.kind.is_type_like()))
    }

    /// What a typed value is.
    pub(super) fn classify(&self, t: &Typed<'a>, depth: u32) -> Kind<'a> {
        if depth > MAX_STEPS {
            return Kind::Unknown;
        }
        let t = self.deref(t.clone());
        match &t.ty {
            Ty::Bounds(bounds) => {
                let traits: Vec<EntId> = bounds
                    .iter()
                    .filter_map(|b| match b {
                        Ty::Path { segs, .. } => Some(segs),
                        _ => None,
                    })
                    .flat_map(|segs| {
                        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
                        self.traits_at(&t.site, &segs)
                    })
                    .collect();
                if traits.is_empty() {
                    Kind::Unknown
                } else {
                    Kind::Traits(traits)
                }
            }
            Ty::Path { segs, .. } => {
                let s: Vec<&str> = segs.iter().map(String::as_str).collect();
                let items = match self.resolve_in(&t.site, &s, Ns::Type) {
                    Some(Res::Items(items)) => items,
                    _ => vec![],
                };
                let types: Vec<EntId> = items
                    .into_iter()
                    .filter(|&i| self.entities[i].0.kind.is_type_like())
                    .collect();
                if types.is_empty() {
                    if let [name] = s[..] {
                        let bounds = self.bounds_of(&t.site, name);
                        if !bounds.is_empty() {
                            return Kind::Traits(bounds);
                        }
                    }
                    return match s.last() {
                        Some(last) if *last != "Self" => Kind::Foreign(last.to_string(), t.clone()),
                        _ => Kind::Unknown,
                    };
                }
                // A type alias stands for its target.
                if let [alias] = types[..] {
                    let e = self.entities[alias].0;
                    if e.kind == EntityKind::TypeAlias {
                        let Some(target) = e.signature.ty.as_deref() else {
                            return Kind::Unknown;
                        };
                        let aliased = Typed {
                            ty: types::parse(target),
                            site: self.entity_site(alias),
                        };
                        return self.classify(&aliased, depth + 1);
                    }
                }
                if types
                    .iter()
                    .all(|&i| self.entities[i].0.kind == EntityKind::Trait)
                {
                    Kind::Traits(types)
                } else {
                    Kind::Ours(types)
                }
            }
            Ty::Slice(_) => Kind::Foreign("slice".into(), t.clone()),
            _ => Kind::Unknown,
        }
    }

    /// Methods called `name` a value of kind `kind` has: its own (inherent
    /// before trait impls), else the default methods and declarations of
    /// the traits it implements or is bounded by.
    pub(super) fn methods_for(&self, kind: &Kind<'a>, name: &str) -> Vec<EntId> {
        match kind {
            Kind::Ours(ts) => {
                let hits = self.methods_of(ts, name);
                if !hits.is_empty() {
                    return self.prefer_inherent(hits);
                }
                let traits: Vec<EntId> = ts
                    .iter()
                    .filter_map(|t| self.type_traits.get(t))
                    .flatten()
                    .map(|&(_, t)| t)
                    .collect();
                self.trait_methods(&traits, name)
            }
            Kind::Traits(ts) => self.trait_methods(ts, name),
            Kind::Foreign(last, _) => self.extension_methods(last, name),
            Kind::Unknown => vec![],
        }
    }

    /// Declarations (or default methods) of `name` in traits `ts` and
    /// their supertraits.
    fn trait_methods(&self, ts: &[EntId], name: &str) -> Vec<EntId> {
        let mut seen: Vec<EntId> = ts.to_vec();
        let mut i = 0;
        while i < seen.len() && i < 32 {
            let hits = self.methods_of(&[seen[i]], name);
            if !hits.is_empty() {
                return hits;
            }
            let tr = seen[i];
            let site = self.entity_site(tr);
            for sup in &self.entities[tr].0.signature.supertraits {
                if let Ty::Path { segs, .. } = types::parse(sup) {
                    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
                    for s in self.traits_at(&site, &segs) {
                        if !seen.contains(&s) {
                            seen.push(s);
                        }
                    }
                }
            }
            i += 1;
        }
        vec![]
    }

    /// An inherent method hides trait methods of the same name.
    fn prefer_inherent(&self, hits: Vec<EntId>) -> Vec<EntId> {
        if hits.len() < 2 {
            return hits;
        }
        let inherent: Vec<EntId> = hits
            .iter()
            .copied()
            .filter(|&h| self.entities[h].0.trait_name.is_none())
            .collect();
        if inherent.is_empty() {
            hits
        } else {
            inherent
        }
    }

    fn method_returns(&self, recv: &Typed<'a>, name: &str, depth: u32) -> Option<Typed<'a>> {
        let kind = self.classify(recv, depth + 1);
        let ours = match &kind {
            Kind::Ours(ts) => ts.first().copied(),
            _ => None,
        };
        if let Some(&m) = self.methods_for(&kind, name).first() {
            let rt = self.entities[m].0.signature.return_type.as_deref()?;
            let mut site = self.entity_site(m);
            site.self_ent = ours;
            return Some(Typed {
                ty: types::parse(rt),
                site,
            });
        }
        // The std model reads the type as written (`Result<Config>` of an
        // alias keeps its argument), else what it stands for.
        let written = self.deref(recv.clone());
        let written_last = written.ty.last().map(str::to_string);
        let (last, value) = if types::std_method(written_last.as_deref(), name).is_some() {
            (written_last, written)
        } else {
            match kind {
                Kind::Foreign(last, t) => (Some(last), t),
                _ => (None, written),
            }
        };
        let wrap = |outer: &str, inner: Ty| Ty::Path {
            segs: vec![outer.to_string()],
            args: vec![inner],
            bindings: vec![],
        };
        let ty = match types::std_method(last.as_deref(), name)? {
            StdReturn::Same => value.ty.clone(),
            StdReturn::Arg0 => value.ty.arg(0)?.clone(),
            StdReturn::OptionOfArg0 => wrap("Option", value.ty.arg(0)?.clone()),
            StdReturn::ResultOfArg0 => wrap("Result", value.ty.arg(0)?.clone()),
            StdReturn::OptionOfElement => {
                wrap("Option", self.element_of(value.clone(), depth + 1)?.ty)
            }
            StdReturn::OptionOfValue => wrap("Option", value.ty.arg(1)?.clone()),
            StdReturn::ElementsOfValues => wrap("Vec", value.ty.arg(1)?.clone()),
        };
        Some(Typed {
            ty,
            site: value.site,
        })
    }

    fn field_type(&self, recv: &Typed<'a>, name: &str, depth: u32) -> Option<Typed<'a>> {
        let Kind::Ours(ts) = self.classify(recv, depth + 1) else {
            return None;
        };
        ts.iter().find_map(|&t| {
            let f = self.entities[t]
                .0
                .signature
                .fields
                .iter()
                .find(|f| f.name == name && !f.ty.is_empty())?;
            let mut site = self.entity_site(t);
            site.self_ent = Some(t);
            Some(Typed {
                ty: types::parse(&f.ty),
                site,
            })
        })
    }

    /// The structs and unions among `recv`'s types that have field `name`.
    pub(super) fn field_owners(&self, recv: &Typed<'a>, name: &str) -> Vec<EntId> {
        let Kind::Ours(ts) = self.classify(recv, 0) else {
            return vec![];
        };
        ts.into_iter()
            .filter(|&t| {
                let e = self.entities[t].0;
                matches!(e.kind, EntityKind::Struct | EntityKind::Union)
                    && e.signature.fields.iter().any(|f| f.name == name)
            })
            .collect()
    }

    /// `value?`: the `T` of a `Result<T, _>` or `Option<T>` (also through
    /// an alias such as `io::Result<T>`).
    fn unwrapped(&self, t: Typed<'a>, depth: u32) -> Option<Typed<'a>> {
        let t = self.deref(t);
        let last = t.ty.last()?;
        if types::is_fallible(last) {
            let arg = t.ty.arg(0)?.clone();
            return Some(Typed {
                ty: arg,
                site: t.site,
            });
        }
        // An alias of ours for a fallible type keeps the argument as written.
        if let Kind::Foreign(..) | Kind::Unknown = self.classify(&t, depth + 1) {
            return None;
        }
        let segs: Vec<&str> = match &t.ty {
            Ty::Path { segs, .. } => segs.iter().map(String::as_str).collect(),
            _ => return None,
        };
        let Some(Res::Items(items)) = self.resolve_in(&t.site, &segs, Ns::Type) else {
            return None;
        };
        let alias = items
            .into_iter()
            .find(|&i| self.entities[i].0.kind == EntityKind::TypeAlias)?;
        let target = types::parse(self.entities[alias].0.signature.ty.as_deref()?);
        if target.last().is_some_and(types::is_fallible) {
            let arg = t.ty.arg(0)?.clone();
            return Some(Typed {
                ty: arg,
                site: t.site,
            });
        }
        None
    }

    /// An element of a collection value.
    fn element_of(&self, t: Typed<'a>, depth: u32) -> Option<Typed<'a>> {
        if depth > MAX_STEPS {
            return None;
        }
        let t = self.deref(t);
        let ty = match &t.ty {
            Ty::Slice(inner) => (**inner).clone(),
            Ty::Bounds(_) => t.ty.binding("Item")?.clone(),
            Ty::Path { .. } => {
                let last = t.ty.last()?;
                if types::is_collection(last) {
                    t.ty.arg(0)?.clone()
                } else if types::is_map(last) {
                    Ty::Tuple(vec![t.ty.arg(0)?.clone(), t.ty.arg(1)?.clone()])
                } else {
                    t.ty.binding("Item")?.clone()
                }
            }
            _ => return None,
        };
        Some(Typed { ty, site: t.site })
    }
}

/// Associated functions that construct a value of their type.
fn is_constructor(name: &str) -> bool {
    matches!(
        name,
        "new" | "default" | "from" | "with_capacity" | "from_str" | "builder" | "empty"
    ) || name.starts_with("new_")
        || name.starts_with("with_")
        || name.starts_with("from_")
}

/// `A + B<C, D> + 'a` → `["A", "B<C, D>"]` (lifetimes and `?Sized` dropped).
fn split_bounds(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut level = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' => level += 1,
            '>' | ')' => level -= 1,
            '+' if level == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out.into_iter()
        .map(str::trim)
        .filter(|b| !b.is_empty() && !b.starts_with('\'') && !b.starts_with('?'))
        .collect()
}
