//! The Python symbol table: modules by dotted path in each import root,
//! every entity's children by name, imports by the scope that makes
//! them; and what a name, an attribute or a call means over it.
//!
//! Values are what Python's runtime would hold, as far as declarations
//! tell: a module, a namespace package, a class, an instance of a class
//! (from a constructor call, an annotation or a return annotation), a
//! function, a variable or attribute (typed through its hint). Attribute
//! lookup on a class or instance walks its bases in method resolution
//! order (depth first, left to right, each class once: C3 for every
//! hierarchy without diamonds). A name is looked up in its scope chain:
//! the function's nested definitions and imports, then each enclosing
//! function's, then the module's (its definitions, its imports, its star
//! imports as `__all__` limits them). Nothing is ever matched by name
//! across files without a path of imports leading there.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::exprs::hint_recv;
use crate::model::{Entity, EntityKind, FileContext, FileExtract, Recv, UseDecl};

/// Deepest chain of imports, hints and bases followed for one answer.
const MAX_HOPS: u32 = 24;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val<'a> {
    /// A module: the index of its file.
    Module(usize),
    /// A namespace package (a directory without `__init__.py`): its root
    /// and dotted path, by index into [`Table::packages`].
    Package(usize),
    Class(&'a Entity),
    Instance(&'a Entity),
    /// `super()` in a method of this class.
    Super(&'a Entity),
    /// A function, method or property.
    Func(&'a Entity),
    /// A variable or attribute.
    Var(&'a Entity),
}

pub struct FileT<'a> {
    pub ctx: &'a FileContext,
    pub ex: &'a FileExtract,
}

pub struct Table<'a> {
    pub files: Vec<FileT<'a>>,
    by_path: HashMap<&'a str, usize>,
    /// `(root, dotted module)` → its file (a `.py` before a `.pyi`).
    modules: HashMap<(&'a str, String), usize>,
    /// Dotted module → the roots that have it.
    module_roots: HashMap<String, Vec<&'a str>>,
    /// Namespace packages: `(root, dotted)`.
    pub packages: Vec<(&'a str, String)>,
    package_ids: HashMap<(&'a str, String), usize>,
    ents: HashMap<&'a str, (usize, &'a Entity)>,
    children: HashMap<&'a str, HashMap<&'a str, Vec<&'a Entity>>>,
    uses: HashMap<&'a str, Vec<&'a UseDecl>>,
}

/// Where a lookup happens: the file and the entity whose scope it is.
#[derive(Clone, Copy)]
pub struct Site<'a> {
    pub file: usize,
    pub from: &'a Entity,
}

impl<'a> Table<'a> {
    pub fn build(files: &[(&'a FileContext, &'a FileExtract)]) -> Table<'a> {
        let mut t = Table {
            files: Vec::with_capacity(files.len()),
            by_path: HashMap::default(),
            modules: HashMap::default(),
            module_roots: HashMap::default(),
            packages: Vec::new(),
            package_ids: HashMap::default(),
            ents: HashMap::default(),
            children: HashMap::default(),
            uses: HashMap::default(),
        };
        let mut order: Vec<usize> = (0..files.len()).collect();
        // `.py` before `.pyi`, then path order: a stub stands in for a
        // module only when there is no source.
        order.sort_by_key(|&i| (files[i].1.path.ends_with(".pyi"), &files[i].1.path));
        for i in order {
            let (ctx, ex) = files[i];
            let fi = t.files.len();
            t.files.push(FileT { ctx, ex });
            t.by_path.insert(ex.path.as_str(), fi);
            let root = ex.context.unit.as_str();
            let dotted = ex.context.module_path.join(".");
            if let std::collections::hash_map::Entry::Vacant(v) =
                t.modules.entry((root, dotted.clone()))
            {
                v.insert(fi);
                t.module_roots.entry(dotted).or_default().push(root);
            }
            let segs = &ex.context.module_path;
            for k in 1..segs.len() {
                let pkg = segs[..k].join(".");
                let key = (root, pkg.clone());
                if !t.package_ids.contains_key(&key) {
                    t.package_ids.insert(key, t.packages.len());
                    t.packages.push((root, pkg.clone()));
                    t.module_roots.entry(pkg).or_default().push(root);
                }
            }
            for e in &ex.entities {
                t.ents.insert(&e.key, (fi, e));
                if let Some(p) = &e.parent {
                    t.children
                        .entry(&**p)
                        .or_default()
                        .entry(e.name.as_str())
                        .or_default()
                        .push(e);
                }
            }
            for u in &ex.uses {
                t.uses.entry(u.from.as_str()).or_default().push(u);
            }
        }
        for roots in t.module_roots.values_mut() {
            roots.sort_unstable();
            roots.dedup();
        }
        t
    }

    pub fn file_of(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    pub fn entity(&self, key: &str) -> Option<&'a Entity> {
        self.ents.get(key).map(|(_, e)| *e)
    }

    fn file_of_entity(&self, e: &Entity) -> Option<usize> {
        self.ents.get(&*e.key).map(|(f, _)| *f)
    }

    /// The module entity of a file.
    pub fn module_entity(&self, file: usize) -> Option<&'a Entity> {
        self.files[file].ex.entities.first()
    }

    fn parent(&self, e: &Entity) -> Option<&'a Entity> {
        e.parent.as_deref().and_then(|p| self.entity(p))
    }

    /// The child of `parent` named `name` that a lookup means: the first
    /// not an `@overload` stub or a property's setter or deleter.
    fn child(&self, parent: &str, name: &str) -> Option<&'a Entity> {
        let all = self.children.get(parent)?.get(name)?;
        all.iter()
            .find(|e| {
                !e.signature.decorators.iter().any(|d| {
                    d == "overload"
                        || d.ends_with(".overload")
                        || d.ends_with(".setter")
                        || d.ends_with(".deleter")
                })
            })
            .or_else(|| all.first())
            .copied()
    }

    fn val_of(&self, e: &'a Entity) -> Option<Val<'a>> {
        Some(match e.kind {
            EntityKind::Class => Val::Class(e),
            EntityKind::Function | EntityKind::Method | EntityKind::Property => Val::Func(e),
            EntityKind::Variable | EntityKind::Attribute => Val::Var(e),
            EntityKind::Module => Val::Module(self.file_of_entity(e)?),
            _ => return None,
        })
    }

    /// The entity a value is, if it is one.
    pub fn entity_of(&self, v: Val<'a>) -> Option<&'a Entity> {
        match v {
            Val::Class(e) | Val::Func(e) | Val::Var(e) => Some(e),
            Val::Module(f) => self.module_entity(f),
            _ => None,
        }
    }

    /// The class a method's `self` is an instance of: the class of the
    /// method that holds (or is) `from`.
    pub fn owner_class(&self, from: &'a Entity) -> Option<&'a Entity> {
        let mut cur = Some(from);
        let mut hops = 0;
        while let Some(e) = cur {
            let parent = self.parent(e)?;
            if parent.kind == EntityKind::Class
                && matches!(e.kind, EntityKind::Method | EntityKind::Property)
            {
                return Some(parent);
            }
            cur = Some(parent);
            hops += 1;
            if hops > 64 {
                return None;
            }
        }
        None
    }

    /// A dotted module path seen from a file's root: that root's module,
    /// else the one root that has it.
    pub fn module(&self, from_root: &str, dotted: &str) -> Option<Val<'a>> {
        let in_root = |root: &'a str| -> Option<Val<'a>> {
            if let Some(&f) = self.modules.get(&(root, dotted.to_string())) {
                return Some(Val::Module(f));
            }
            self.package_ids
                .get(&(root, dotted.to_string()))
                .map(|&p| Val::Package(p))
        };
        let roots = self.module_roots.get(dotted)?;
        if let Some(r) = roots.iter().find(|r| **r == from_root) {
            return in_root(r);
        }
        match roots.as_slice() {
            [one] => in_root(one),
            _ => None,
        }
    }

    fn root_and_dotted(&self, v: Val<'a>) -> Option<(&'a str, String)> {
        match v {
            Val::Module(f) => {
                let c = &self.files[f].ex.context;
                Some((c.unit.as_str(), c.module_path.join(".")))
            }
            Val::Package(p) => {
                let (r, d) = &self.packages[p];
                Some((r, d.clone()))
            }
            _ => None,
        }
    }

    fn submodule(&self, v: Val<'a>, name: &str) -> Option<Val<'a>> {
        let (root, dotted) = self.root_and_dotted(v)?;
        let sub = if dotted.is_empty() {
            name.to_string()
        } else {
            format!("{dotted}.{name}")
        };
        if let Some(&f) = self.modules.get(&(root, sub.clone())) {
            return Some(Val::Module(f));
        }
        self.package_ids.get(&(root, sub)).map(|&p| Val::Package(p))
    }

    /// What a module binds `name` to.
    pub fn module_member(&self, file: usize, name: &str, hops: u32) -> Option<Val<'a>> {
        if hops > MAX_HOPS {
            return None;
        }
        let ex = self.files[file].ex;
        let module = ex.entities.first()?;
        if let Some(e) = self.child(&module.key, name) {
            return self.val_of(e);
        }
        if let Some(v) = self.imported(file, &module.key, name, hops) {
            return Some(v);
        }
        None
    }

    /// What the imports a scope makes bind `name` to (the last import
    /// that binds it wins; a star import only when nothing else binds it).
    fn imported(&self, file: usize, scope: &str, name: &str, hops: u32) -> Option<Val<'a>> {
        let uses = self.uses.get(scope)?;
        for u in uses.iter().rev() {
            if u.glob {
                continue;
            }
            let from_form = u
                .path
                .first()
                .is_some_and(|p| p.is_empty() || p.starts_with('.'));
            let bound = match (&u.alias, from_form) {
                (Some(a), _) => a.as_str(),
                (None, true) => u.path.last().map_or("", String::as_str),
                (None, false) => u.path[0].as_str(),
            };
            if bound != name {
                continue;
            }
            return self.import_target(file, u, hops + 1, u.alias.is_some() || from_form);
        }
        for u in uses.iter().rev() {
            if !u.glob {
                continue;
            }
            let Some(Val::Module(m)) = self.module_of_from(file, &u.path) else {
                continue;
            };
            let exports = &self.files[m].ex.entities[0].signature.exports;
            let visible = if exports.is_empty() {
                !name.starts_with('_')
            } else {
                exports.iter().any(|x| x == name)
            };
            if visible {
                if let Some(v) = self.module_member(m, name, hops + 1) {
                    return Some(v);
                }
            }
        }
        None
    }

    /// What an import names: `whole` for what an alias or a from-import
    /// binds, else (plain `import a.b`) the top package it binds.
    pub fn import_target(
        &self,
        file: usize,
        u: &UseDecl,
        hops: u32,
        whole: bool,
    ) -> Option<Val<'a>> {
        let from_form = u
            .path
            .first()
            .is_some_and(|p| p.is_empty() || p.starts_with('.'));
        let root = self.files[file].ex.context.unit.as_str();
        if !from_form {
            let upto = if whole { u.path.len() } else { 1 };
            return self.module(root, &u.path[..upto].join("."));
        }
        let (name, base) = u.path.split_last()?;
        let m = self.module_of_from(file, base)?;
        if let Val::Module(mf) = m {
            if let Some(v) = self.module_member(mf, name, hops + 1) {
                return Some(v);
            }
        }
        self.submodule(m, name)
    }

    /// The module of a from-import's dots and path (`["..", "x"]`).
    fn module_of_from(&self, file: usize, base: &[String]) -> Option<Val<'a>> {
        let (dots, rest) = base.split_first()?;
        let ctx = &self.files[file].ex.context;
        let root = ctx.unit.as_str();
        if dots.is_empty() {
            return self.module(root, &rest.join("."));
        }
        let is_package = {
            let p = &self.files[file].ex.path;
            p.ends_with("/__init__.py") || p.ends_with("/__init__.pyi") || p == "__init__.py"
        };
        let mut pkg: Vec<String> = ctx.module_path.clone();
        if !is_package {
            pkg.pop();
        }
        for _ in 1..dots.len() {
            pkg.pop()?;
        }
        pkg.extend(rest.iter().cloned());
        let dotted = pkg.join(".");
        if let Some(&f) = self.modules.get(&(root, dotted.clone())) {
            return Some(Val::Module(f));
        }
        self.package_ids
            .get(&(root, dotted))
            .map(|&p| Val::Package(p))
    }

    /// What `name` means where `site` is.
    pub fn lookup(&self, site: Site<'a>, name: &str, hops: u32) -> Option<Val<'a>> {
        let mut cur = Some(site.from);
        let mut first = true;
        while let Some(e) = cur {
            match e.kind {
                EntityKind::Module => return self.module_member(site.file, name, hops),
                EntityKind::Function | EntityKind::Method | EntityKind::Property => {
                    if let Some(c) = self.child(&e.key, name) {
                        return self.val_of(c);
                    }
                    if let Some(v) = self.imported(site.file, &e.key, name, hops) {
                        return Some(v);
                    }
                }
                EntityKind::Class if first => {
                    if let Some(c) = self.child(&e.key, name) {
                        return self.val_of(c);
                    }
                }
                _ => {}
            }
            first = false;
            cur = self.parent(e);
        }
        None
    }

    /// The bases of a class, resolved where the class stands.
    pub fn bases(&self, class: &'a Entity, hops: u32) -> Vec<&'a Entity> {
        let Some(file) = self.file_of_entity(class) else {
            return Vec::new();
        };
        let Some(scope) = self.parent(class) else {
            return Vec::new();
        };
        let site = Site { file, from: scope };
        let mut out = Vec::new();
        for b in class.signature.bases.iter() {
            let head = b.split('[').next().unwrap_or(b).trim();
            let segs: Vec<&str> = head.split('.').collect();
            if let Some(Val::Class(c)) = self.path(site, &segs, hops + 1, &mut |_| {}) {
                if !std::ptr::eq(c, class) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// The classes of a class's method resolution order, itself first.
    pub fn mro(&self, class: &'a Entity, hops: u32) -> Vec<&'a Entity> {
        let mut out: Vec<&'a Entity> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::default();
        let mut stack = vec![(class, 0u32)];
        while let Some((c, depth)) = stack.pop() {
            if depth > 16 || !seen.insert(&c.key) {
                continue;
            }
            out.push(c);
            let bases = self.bases(c, hops + depth);
            for b in bases.into_iter().rev() {
                stack.push((b, depth + 1));
            }
        }
        out
    }

    /// A member of a class (through its bases), skipping the class itself
    /// for `super()`.
    fn class_member(
        &self,
        class: &'a Entity,
        name: &str,
        skip_self: bool,
        hops: u32,
    ) -> Option<&'a Entity> {
        let mut hits = self
            .mro(class, hops)
            .into_iter()
            .skip(usize::from(skip_self))
            .filter_map(|c| self.child(&c.key, name));
        let first = hits.next()?;
        // An attribute a method binds through `self` is the declaration
        // a base class makes of it, if one does (the farthest).
        if first.kind == EntityKind::Attribute && first.signature.self_type.is_some() {
            return Some(hits.next_back().unwrap_or(first));
        }
        Some(first)
    }

    /// An attribute of a value: `passed` hears of each entity stepped
    /// through on the way (a variable typed to reach the member).
    pub fn attr(&self, v: Val<'a>, name: &str, hops: u32) -> Option<Val<'a>> {
        if hops > MAX_HOPS {
            return None;
        }
        match v {
            Val::Module(f) => self
                .module_member(f, name, hops + 1)
                .or_else(|| self.submodule(v, name)),
            Val::Package(_) => self.submodule(v, name),
            Val::Class(c) | Val::Instance(c) => {
                self.val_of(self.class_member(c, name, false, hops + 1)?)
            }
            Val::Super(c) => self.val_of(self.class_member(c, name, true, hops + 1)?),
            Val::Func(_) | Val::Var(_) => None,
        }
    }

    /// The value a variable, attribute or property holds, when its hint
    /// or return annotation tells; other values are themselves.
    pub fn held(&self, v: Val<'a>, hops: u32) -> Option<Val<'a>> {
        if hops > MAX_HOPS {
            return None;
        }
        match v {
            Val::Var(e) => {
                let hint = e.signature.ty.as_deref()?;
                let recv = hint_recv(hint)?;
                let file = self.file_of_entity(e)?;
                // An attribute's hint is in the terms of the method (or
                // class body) that binds it; a module variable's, of its
                // module.
                let from = self.parent(e)?;
                let site = Site { file, from };
                let owner = (from.kind == EntityKind::Class).then_some(from);
                self.recv(site, owner, &recv, hops + 1, &mut |_| {})
            }
            Val::Func(f) if f.kind == EntityKind::Property => self.returns(f, hops + 1),
            other => Some(other),
        }
    }

    /// What calling a value returns.
    pub fn call(&self, v: Val<'a>, hops: u32) -> Option<Val<'a>> {
        match v {
            Val::Class(c) => Some(Val::Instance(c)),
            Val::Func(f) => self.returns(f, hops + 1),
            _ => None,
        }
    }

    fn returns(&self, f: &'a Entity, hops: u32) -> Option<Val<'a>> {
        let ann = f.signature.return_type.as_deref()?;
        let file = self.file_of_entity(f)?;
        let from = self.parent(f)?;
        self.instance_of(Site { file, from }, ann, hops + 1)
    }

    /// An instance of an annotation's class: `Foo`, `"Foo"`, `a.Foo`,
    /// `Optional[Foo]`, `Foo | None`; `type[Foo]` is the class itself.
    pub fn instance_of(&self, site: Site<'a>, ann: &str, hops: u32) -> Option<Val<'a>> {
        let mut a = ann.trim().trim_matches(|c| c == '"' || c == '\'').trim();
        let mut class_itself = false;
        loop {
            if let Some(inner) = strip_wrapper(a, &["Optional", "t.Optional", "typing.Optional"]) {
                a = inner;
                continue;
            }
            if let Some(inner) = strip_wrapper(a, &["type", "t.Type", "typing.Type", "Type"]) {
                a = inner;
                class_itself = true;
                continue;
            }
            break;
        }
        let parts: Vec<&str> = a
            .split('|')
            .map(str::trim)
            .filter(|p| *p != "None")
            .collect();
        let [one] = parts.as_slice() else { return None };
        let one = one.trim_matches(|c| c == '"' || c == '\'');
        if !one
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            return None;
        }
        let segs: Vec<&str> = one.split('.').collect();
        match self.path(site, &segs, hops + 1, &mut |_| {})? {
            Val::Class(c) if class_itself => Some(Val::Class(c)),
            Val::Class(c) => Some(Val::Instance(c)),
            _ => None,
        }
    }

    /// The value a dotted path names where `site` is; `passed` hears of
    /// each entity the path goes through before its last segment.
    pub fn path(
        &self,
        site: Site<'a>,
        segs: &[&str],
        hops: u32,
        passed: &mut dyn FnMut(Val<'a>),
    ) -> Option<Val<'a>> {
        let (first, rest) = segs.split_first()?;
        let owner = || self.owner_class(site.from);
        let mut v = match *first {
            "<self>" => Val::Instance(owner()?),
            "<cls>" => Val::Class(owner()?),
            "<super>" => Val::Super(owner()?),
            name => self.lookup(site, name, hops)?,
        };
        for seg in rest {
            passed(v);
            let holder = self.held(v, hops + 1)?;
            v = self.attr(holder, seg, hops + 1)?;
        }
        Some(v)
    }

    /// The value a receiver names where `site` is (`owner`: the class
    /// `<self>` stands for, when not the site's).
    pub fn recv(
        &self,
        site: Site<'a>,
        owner: Option<&'a Entity>,
        r: &Recv,
        hops: u32,
        passed: &mut dyn FnMut(Val<'a>),
    ) -> Option<Val<'a>> {
        if hops > MAX_HOPS {
            return None;
        }
        let path_in = |segs: &[&str], passed: &mut dyn FnMut(Val<'a>)| -> Option<Val<'a>> {
            match (segs.first(), owner) {
                (Some(&"<self>"), Some(o)) => {
                    let mut v = Val::Instance(o);
                    for seg in &segs[1..] {
                        passed(v);
                        v = self.attr(self.held(v, hops + 1)?, seg, hops + 1)?;
                    }
                    Some(v)
                }
                _ => self.path(site, segs, hops + 1, passed),
            }
        };
        match r {
            Recv::Type(t) => match t.strip_prefix('=') {
                Some(p) => {
                    let segs: Vec<&str> = p.split('.').collect();
                    let v = path_in(&segs, passed)?;
                    passed(v);
                    self.held(v, hops + 1)
                }
                None => self.instance_of(site, t, hops + 1),
            },
            Recv::Call(p) => {
                let segs: Vec<&str> = p.iter().map(String::as_str).collect();
                let v = path_in(&segs, passed)?;
                self.call(v, hops + 1)
            }
            Recv::Method(b, name) => {
                if name == "get" {
                    if let Some(v) = self.context_var_get(site, owner, b, hops + 1) {
                        return Some(v);
                    }
                }
                let base = self.recv(site, owner, b, hops + 1, passed)?;
                let m = self.attr(base, name, hops + 1)?;
                self.call(m, hops + 1)
            }
            Recv::Field(b, name) => {
                let base = self.recv(site, owner, b, hops + 1, passed)?;
                let f = self.attr(base, name, hops + 1)?;
                passed(f);
                self.held(f, hops + 1)
            }
            _ => None,
        }
    }
}

impl<'a> Table<'a> {
    /// `v.get()` of a variable annotated `ContextVar[X]`: an `X` (the
    /// one generic of the standard library that code reaches its
    /// objects through most: flask's request and app contexts).
    fn context_var_get(
        &self,
        site: Site<'a>,
        owner: Option<&'a Entity>,
        b: &Recv,
        hops: u32,
    ) -> Option<Val<'a>> {
        let Recv::Type(t) = b else { return None };
        let p = t.strip_prefix('=')?;
        let segs: Vec<&str> = p.split('.').collect();
        let v = match (segs.first(), owner) {
            (Some(&"<self>"), Some(_)) => return None,
            _ => self.path(site, &segs, hops + 1, &mut |_| {})?,
        };
        let Val::Var(e) = v else { return None };
        let ann = e.signature.ty.as_deref()?;
        let inner = strip_wrapper(ann, &["ContextVar", "contextvars.ContextVar"])?;
        let file = self.file_of_entity(e)?;
        let from = self.parent(e)?;
        self.instance_of(Site { file, from }, inner, hops + 1)
    }
}

/// `W[inner]` for one of `names` as `W`: `inner`.
fn strip_wrapper<'s>(a: &'s str, names: &[&str]) -> Option<&'s str> {
    let open = a.find('[')?;
    if !a.ends_with(']') || !names.contains(&&a[..open]) {
        return None;
    }
    Some(a[open + 1..a.len() - 1].trim())
}
