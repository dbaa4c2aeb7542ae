//! What a receiver ([`Recv`]) is, over the table of every file: the class
//! or interface whose member a reference names.
//!
//! Types are read as written, each in the scope it was written in
//! ([`Written`]: a file and the entity whose namespaces and type
//! parameters are around it). A name is looked up there; a type alias is
//! followed to what it names; a type parameter stands for its constraint
//! (`M extends H<E>` → `H<E>`); `Promise<T>` and `Awaited<T>` for `T`;
//! `T | undefined` for `T`. A function's type is its parameter lists: a
//! function or method's own, a function type written out (`(c:
//! Context) => R`), an alias of one or a union of such, or an
//! interface's call signatures — overloads each a list, tried in order.
//! An array (`T[]`, `Array<T>`) gives its element to an index, a
//! `for … of`, `at`/`find`/`pop`, and the callbacks of `map`, `filter`,
//! `sort` and the like; `slice`, `filter` and `sort` give the array back.
//! So `app.get('/', (c) => c.json())` reaches `Context.json`: `app.get`
//! is a field typed `HandlerInterface`, whose call signatures take a
//! handler `H` at argument 1, an alias of a union of function types whose
//! first parameter is a `Context`.

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;

use super::resolve::{member, walk};
use super::table::{Table, Target, Want};
use crate::model::{Entity, EntityKind, Recv};

/// Deepest a receiver or a type is followed.
const MAX_DEPTH: u32 = 8;
/// Most candidate types a receiver is tried as.
const MAX_CANDIDATES: usize = 8;

/// A type as written, and where.
#[derive(Clone)]
pub(crate) struct Written<'a> {
    file: usize,
    scope: &'a Entity,
    text: String,
}

/// One parameter list of a function type.
struct Params<'a> {
    file: usize,
    scope: &'a Entity,
    shape: Rc<Shape>,
}

/// A parameter list as written.
#[derive(Default)]
struct Shape {
    /// Type parameters and what each stands for (its constraint, else
    /// its default).
    generics: Vec<(String, String)>,
    /// Each parameter's type as written, and whether it is a rest
    /// parameter (`...xs: T[]`).
    params: Vec<(String, bool)>,
    returns: Option<String>,
}

impl<'a> Params<'a> {
    /// The type argument `n` is expected to have (a rest parameter's
    /// element for any position from it on).
    fn at(&self, n: usize) -> Option<Written<'a>> {
        let params = &self.shape.params;
        let (ty, rest) = match params.get(n) {
            Some((t, false)) => (t.as_str(), false),
            _ => {
                let (t, _) = params.iter().rev().find(|(_, rest)| *rest)?;
                (t.as_str(), true)
            }
        };
        let ty = if rest { element_type(ty)? } else { ty.trim() };
        Some(self.written(ty))
    }

    fn written(&self, ty: &str) -> Written<'a> {
        let ty = ty.trim();
        let text = self
            .shape
            .generics
            .iter()
            .find(|(name, _)| name == ty)
            .map_or(ty, |(_, stands)| stands.as_str());
        Written {
            file: self.file,
            scope: self.scope,
            text: text.to_string(),
        }
    }
}

/// Where a receiver is read: the table, the file and entity reading it
/// (the scope its types are named in), and the class `this` is there.
#[derive(Clone, Copy)]
pub(crate) struct Site<'t, 'a> {
    pub table: &'t Table<'a>,
    pub file: usize,
    pub from: &'a Entity,
    pub self_type: Option<&'t str>,
}

impl<'a> Site<'_, 'a> {
    /// The class or interface a receiver's value is an instance of, with its
    /// file.
    pub(crate) fn recv_class(&self, recv: &Recv, depth: u32) -> Option<(usize, &'a Entity)> {
        let Site {
            table, self_type, ..
        } = *self;
        if depth > MAX_DEPTH {
            return None;
        }
        if let Recv::Type(t) = recv {
            if t == "this" {
                return table.entity(self_type?);
            }
        }
        self.types_of(recv, depth)
            .iter()
            .find_map(|w| class_of(table, w, depth + 1))
    }

    /// The classes and interfaces a receiver's value is an instance of:
    /// [`Site::recv_class`]'s, or each of a union's (`a: A | B`, or an alias
    /// of one) that is one, as TypeScript reads a member of a union in
    /// every alternative.
    pub(crate) fn recv_classes(&self, recv: &Recv) -> Vec<(usize, &'a Entity)> {
        if let Recv::Literal(of, keys) = recv {
            return self.literal_classes(of, keys);
        }
        if let Recv::Type(t) = recv {
            if t == "this" {
                return self
                    .self_type
                    .and_then(|k| self.table.entity(k))
                    .into_iter()
                    .collect();
            }
        }
        self.types_of(recv, 0)
            .iter()
            .map(|w| classes_of(self.table, w, 1))
            .find(|found| !found.is_empty())
            .unwrap_or_default()
    }

    /// The classes and interfaces an object literal of type `of` holding
    /// `keys` is: of a union, the alternatives that declare the most of
    /// its keys (all of them, in a literal TypeScript accepts) — a
    /// literal is one alternative, and its keys tell which.
    fn literal_classes(&self, of: &Recv, keys: &[String]) -> Vec<(usize, &'a Entity)> {
        let all = self.recv_classes(of);
        if all.len() < 2 {
            return all;
        }
        let declared: Vec<usize> = all
            .iter()
            .map(|&(cf, c)| {
                keys.iter()
                    .filter(|k| member(self.table, cf, c, k, true).is_some())
                    .count()
            })
            .collect();
        let most = declared.iter().copied().max().unwrap_or(0);
        all.into_iter()
            .zip(declared)
            .filter(|&(_, n)| n == most)
            .map(|(c, _)| c)
            .collect()
    }

    /// The types a receiver's value may have, most likely first.
    fn types_of(&self, recv: &Recv, depth: u32) -> Vec<Written<'a>> {
        let Site {
            table, file, from, ..
        } = *self;
        if depth > MAX_DEPTH {
            return Vec::new();
        }
        let mut out = match recv {
            Recv::Type(t) => vec![Written {
                file,
                scope: from,
                text: t.clone(),
            }],
            Recv::Field(base, name) => {
                let Some(m) = self.member_of(base, name, depth) else {
                    return Vec::new();
                };
                value_type(table, m).into_iter().collect()
            }
            Recv::Method(base, name) => {
                if let Some(r) = self.array_method(base, name, depth) {
                    return vec![r];
                }
                let Some(m) = self.member_of(base, name, depth) else {
                    return Vec::new();
                };
                returns_of(table, m, depth)
            }
            Recv::Call(path) => match self.value_at(path) {
                Some(e) => returns_of(table, e, depth),
                None => Vec::new(),
            },
            Recv::Value(path) => match self.value_at(path) {
                Some(e) => value_type(table, e).into_iter().collect(),
                None => Vec::new(),
            },
            Recv::Arg(callee, n) => {
                if let Some(cb) = self.array_callback(callee, *n, depth) {
                    return vec![cb];
                }
                self.callable(callee, depth)
                    .iter()
                    .filter_map(|p| p.at(*n as usize))
                    .collect()
            }
            Recv::Param(f, n) => {
                // A function named (a component's props): its own
                // parameters when they are typed, else its declared type's.
                let own: Vec<Written<'a>> = match **f {
                    Recv::Value(_) => self
                        .callable(f, depth)
                        .iter()
                        .filter_map(|p| p.at(*n as usize))
                        .filter(|w| !w.text.is_empty())
                        .collect(),
                    _ => Vec::new(),
                };
                if own.is_empty() {
                    self.types_of(f, depth + 1)
                        .iter()
                        .flat_map(|w| fn_params(table, w, depth + 1))
                        .filter_map(|p| p.at(*n as usize))
                        .collect()
                } else {
                    own
                }
            }
            Recv::Element(inner) => self
                .types_of(inner, depth + 1)
                .iter()
                .filter_map(|w| element_of(w))
                .collect(),
            Recv::Literal(of, _) => self.types_of(of, depth + 1),
            Recv::Try(_) => Vec::new(),
        };
        out.truncate(MAX_CANDIDATES);
        out
    }

    /// What calling array method `name` on a receiver returns, when the
    /// receiver is an array.
    fn array_method(&self, base: &Recv, name: &str, depth: u32) -> Option<Written<'a>> {
        let same = ARRAY_SAME.contains(&name);
        if !same && !ARRAY_ONE.contains(&name) {
            return None;
        }
        self.types_of(base, depth + 1)
            .iter()
            .find_map(|w| element_of(w).map(|e| if same { w.clone() } else { e }))
    }

    /// The type an array method's callback is expected to have (`xs.map((x)
    /// => …)`: called with an element, and `sort`'s with two).
    fn array_callback(&self, callee: &Recv, n: u32, depth: u32) -> Option<Written<'a>> {
        let Recv::Field(base, name) = callee else {
            return None;
        };
        if n != 0 || !ARRAY_CALLBACKS.contains(&name.as_str()) {
            return None;
        }
        let e = self
            .types_of(base, depth + 1)
            .iter()
            .find_map(|w| element_of(w))?;
        Some(Written {
            text: format!("(a: {t}, b: {t}) => unknown", t = e.text),
            ..e
        })
    }

    /// The member `name` of the class a receiver is.
    fn member_of(&self, base: &Recv, name: &str, depth: u32) -> Option<&'a Entity> {
        let Site { table, .. } = *self;
        let (bf, bc) = self.recv_class(base, depth + 1)?;
        member(table, bf, bc, name, true)
    }

    /// The entity a value path names (`app`, `ns.create`, `Hono.get`).
    fn value_at(&self, path: &[String]) -> Option<&'a Entity> {
        let Site {
            table, file, from, ..
        } = *self;
        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
        match walk(table, file, from, &segs, false) {
            (Some(Target::Entity(e)), _, true) => Some(e),
            _ => None,
        }
    }

    /// The parameter lists of the function a callee value is.
    fn callable(&self, callee: &Recv, depth: u32) -> Vec<Params<'a>> {
        let Site { table, .. } = *self;
        let entity = match callee {
            Recv::Value(path) => self.value_at(path),
            Recv::Field(base, name) => self.member_of(base, name, depth),
            _ => None,
        };
        match entity {
            Some(e) => entity_params(table, e, depth),
            None => self
                .types_of(callee, depth + 1)
                .iter()
                .flat_map(|w| fn_params(table, w, depth + 1))
                .collect(),
        }
    }
}

/// An array's element type as written (`T[]`, `Array<T>`,
/// `ReadonlyArray<T>`), where it was written.
fn element_of<'a>(w: &Written<'a>) -> Option<Written<'a>> {
    let t = unparenthesized(w.text.trim());
    let t = t
        .strip_prefix("Readonly")
        .filter(|r| r.starts_with("Array<"))
        .unwrap_or(t);
    Some(Written {
        text: element_type(t)?.to_string(),
        ..w.clone()
    })
}

/// The array methods whose result is an array of the same elements, and
/// those whose result is one of them.
const ARRAY_SAME: &[&str] = &[
    "concat",
    "filter",
    "reverse",
    "slice",
    "sort",
    "toReversed",
    "toSorted",
];
const ARRAY_ONE: &[&str] = &["at", "find", "findLast", "pop", "shift"];
/// The array methods whose first argument is called with elements.
const ARRAY_CALLBACKS: &[&str] = &[
    "every",
    "filter",
    "find",
    "findIndex",
    "findLast",
    "findLastIndex",
    "flatMap",
    "forEach",
    "map",
    "some",
    "sort",
    "toSorted",
];

/// The declared type of a value: a field's, a binding's, an accessor's.
pub(crate) fn value_type<'a>(table: &Table<'a>, e: &'a Entity) -> Option<Written<'a>> {
    let text = match e.kind {
        EntityKind::Attribute | EntityKind::Const | EntityKind::Variable => {
            e.signature.ty.as_deref()
        }
        EntityKind::Property => e.signature.return_type.as_deref(),
        _ => None,
    }?;
    let (file, _) = table.entity(&e.key)?;
    Some(Written {
        file,
        scope: e,
        text: text.to_string(),
    })
}

/// What calling entity `e` returns: a function's or method's declared
/// return type, or the return types of the function type a field or
/// binding is declared with.
fn returns_of<'a>(table: &Table<'a>, e: &'a Entity, depth: u32) -> Vec<Written<'a>> {
    entity_params(table, e, depth)
        .into_iter()
        .filter_map(|p| {
            let r = p.shape.returns.as_deref()?.to_string();
            Some(p.written(&r))
        })
        .collect()
}

/// The parameter lists of an entity called: a function's or method's
/// own (a class's: its constructor's), else those of the function type
/// its value is declared with.
fn entity_params<'a>(table: &Table<'a>, e: &'a Entity, depth: u32) -> Vec<Params<'a>> {
    let Some((file, _)) = table.entity(&e.key) else {
        return Vec::new();
    };
    let own = |e: &'a Entity| Params {
        file,
        scope: e,
        shape: Rc::new(Shape {
            generics: e
                .signature
                .generics
                .iter()
                .filter_map(|g| generic(g))
                .collect(),
            params: e
                .signature
                .parameters
                .iter()
                .filter(|p| p.name != "this")
                .map(|p| (p.ty.clone(), p.name.starts_with("...")))
                .collect(),
            returns: e.signature.return_type.as_deref().map(str::to_string),
        }),
    };
    match e.kind {
        EntityKind::Function | EntityKind::Method => vec![own(e)],
        EntityKind::Class => match table.children(&e.key, "constructor").first() {
            Some(c) => vec![own(c)],
            None => Vec::new(),
        },
        EntityKind::Const | EntityKind::Variable
            if !e.signature.parameters.is_empty() || e.signature.return_type.is_some() =>
        {
            vec![own(e)]
        }
        _ => match value_type(table, e) {
            Some(w) => fn_params(table, &w, depth + 1),
            None => Vec::new(),
        },
    }
}

/// The parameter lists of a function type as written.
fn fn_params<'a>(table: &Table<'a>, w: &Written<'a>, depth: u32) -> Vec<Params<'a>> {
    if depth > MAX_DEPTH {
        return Vec::new();
    }
    let text = unparenthesized(w.text.trim());
    let alts = split_top(text, '|');
    if alts.len() > 1 {
        // The first few alternatives' lists: a union of a union's aliases
        // stays bounded.
        let mut out = Vec::new();
        for a in alts.iter().take(MAX_CANDIDATES) {
            let w = Written {
                text: a.to_string(),
                ..w.clone()
            };
            out.extend(fn_params(table, &w, depth + 1));
            if out.len() >= MAX_CANDIDATES {
                break;
            }
        }
        return out;
    }
    if let Some(p) = signature_params(w.file, w.scope, text) {
        return vec![p];
    }
    let Some(name) = type_name(text) else {
        return Vec::new();
    };
    let segs: Vec<&str> = name.split('.').map(str::trim).collect();
    let Some(Target::Entity(e)) = walk(table, w.file, w.scope, &segs, true).0 else {
        return Vec::new();
    };
    let Some((ef, _)) = table.entity(&e.key) else {
        return Vec::new();
    };
    match e.kind {
        EntityKind::TypeAlias => match e.signature.ty.as_deref() {
            Some(t) => fn_params(
                table,
                &Written {
                    file: ef,
                    scope: e,
                    text: t.to_string(),
                },
                depth + 1,
            ),
            None => Vec::new(),
        },
        EntityKind::Trait => e
            .signature
            .call_signatures
            .iter()
            .filter_map(|s| signature_params(ef, e, s))
            .collect(),
        _ => Vec::new(),
    }
}

/// The alternatives of a union a member is read in at most.
const MAX_UNION: usize = 32;

/// The classes and interfaces a type as written is: its class, or each
/// alternative's of a union (through aliases), the first [`MAX_UNION`].
fn classes_of<'a>(table: &Table<'a>, w: &Written<'a>, depth: u32) -> Vec<(usize, &'a Entity)> {
    if depth > MAX_DEPTH {
        return Vec::new();
    }
    let text = unparenthesized(w.text.trim());
    let alts: Vec<&str> = split_top(text, '|')
        .into_iter()
        .map(str::trim)
        .filter(|a| !a.is_empty() && !matches!(*a, "undefined" | "null" | "void"))
        .collect();
    if alts.len() > 1 {
        let mut out: Vec<(usize, &'a Entity)> = Vec::new();
        for a in alts.iter().take(MAX_UNION) {
            let alt = Written {
                text: a.to_string(),
                ..w.clone()
            };
            for c in classes_of(table, &alt, depth + 1) {
                if !out.iter().any(|(_, e)| e.key == c.1.key) {
                    out.push(c);
                }
            }
        }
        return out;
    }
    if let Some(c) = class_of(table, w, depth + 1) {
        return vec![c];
    }
    // An alias of a union.
    let Some(name) = type_name(text) else {
        return Vec::new();
    };
    let segs: Vec<&str> = name.split('.').map(str::trim).collect();
    match walk(table, w.file, w.scope, &segs, true).0 {
        Some(Target::Entity(e)) if e.kind == EntityKind::TypeAlias => {
            let (Some((ef, _)), Some(ty)) = (table.entity(&e.key), e.signature.ty.as_deref())
            else {
                return Vec::new();
            };
            let aliased = Written {
                file: ef,
                scope: e,
                text: ty.to_string(),
            };
            classes_of(table, &aliased, depth + 1)
        }
        _ => Vec::new(),
    }
}

/// The class or interface a type as written is.
pub(crate) fn class_of<'a>(
    table: &Table<'a>,
    w: &Written<'a>,
    depth: u32,
) -> Option<(usize, &'a Entity)> {
    if depth > MAX_DEPTH {
        return None;
    }
    if let Some(e) = import_type(table, w) {
        let (ef, _) = table.entity(&e.key)?;
        return matches!(e.kind, EntityKind::Class | EntityKind::Trait).then_some((ef, e));
    }
    // `T["k"]`: the declared type of `T`'s member `k`.
    if let Some((base, key)) = indexed_access(&w.text) {
        let base = Written {
            text: base.to_string(),
            ..w.clone()
        };
        let (cf, c) = class_of(table, &base, depth + 1)?;
        let m = member(table, cf, c, key, true)?;
        return class_of(table, &value_type(table, m)?, depth + 1);
    }
    let name = type_name(&w.text)?;
    if let Some(stands) = type_parameter(table, w.scope, &name) {
        let w = Written {
            text: stands,
            ..w.clone()
        };
        return class_of(table, &w, depth + 1);
    }
    let segs: Vec<&str> = name.split('.').map(str::trim).collect();
    let Some(Target::Entity(e)) = walk(table, w.file, w.scope, &segs, true).0 else {
        return None;
    };
    let (ef, _) = table.entity(&e.key)?;
    match e.kind {
        EntityKind::Class | EntityKind::Trait => Some((ef, e)),
        EntityKind::TypeAlias => {
            let w = Written {
                file: ef,
                scope: e,
                text: e.signature.ty.as_deref()?.to_string(),
            };
            class_of(table, &w, depth + 1)
        }
        _ => None,
    }
}

/// The entity an import type names: `import("./jsx-runtime").JSX.X`.
fn import_type<'a>(table: &Table<'a>, w: &Written<'a>) -> Option<&'a Entity> {
    let rest = w.text.trim().strip_prefix("import(")?;
    let close = rest.find(')')?;
    let spec = super::imports::unquote(rest[..close].trim());
    let path = rest[close + 1..].strip_prefix('.')?;
    let mut segs = path.split('.').map(str::trim);
    let m = table.module_file(w.file, &spec)?;
    let mut cur = match table.export(m, segs.next()?, Want::Type)? {
        Target::Entity(e) => e,
        Target::Module(_) => return None,
    };
    for seg in segs {
        cur = table.children(&cur.key, seg).first()?;
    }
    Some(cur)
}

/// What type parameter `name` of `scope` (or of what encloses it)
/// stands for: its constraint, else its default.
fn type_parameter<'a>(table: &Table<'a>, scope: &'a Entity, name: &str) -> Option<String> {
    let mut cur = Some(scope);
    while let Some(e) = cur {
        if let Some((_, stands)) = e
            .signature
            .generics
            .iter()
            .filter_map(|g| generic(g))
            .find(|(n, _)| n == name)
        {
            return (!stands.is_empty()).then_some(stands);
        }
        cur = e
            .parent
            .as_deref()
            .and_then(|p| table.entity(p))
            .map(|(_, e)| e);
    }
    None
}

/// `M extends H<E> = H<E>` → (`M`, `H<E>`); `T = X` → (`T`, `X`); `T` →
/// (`T`, ``).
fn generic(g: &str) -> Option<(String, String)> {
    let g = g
        .trim()
        .trim_start_matches("const ")
        .trim_start_matches("in ")
        .trim_start_matches("out ");
    let name: String = g
        .chars()
        .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '$'))
        .collect();
    if name.is_empty() {
        return None;
    }
    let rest = g[name.len()..].trim();
    let parts = split_top(rest, '=');
    let stands = match rest.strip_prefix("extends ") {
        Some(_) => parts[0].trim().trim_start_matches("extends ").trim(),
        None => parts.get(1).map_or("", |d| d.trim()),
    };
    Some((name, stands.to_string()))
}

/// A call signature or function type as written — `<G>(a: A, ...b:
/// B[]) => R` or `(a: A): R` — as a parameter list. Each text is read
/// once per thread: an interface's call signatures are read for every
/// callback passed to it.
fn signature_params<'a>(file: usize, scope: &'a Entity, text: &str) -> Option<Params<'a>> {
    thread_local! {
        static SHAPES: RefCell<HashMap<String, Option<Rc<Shape>>>> = RefCell::default();
    }
    let shape = SHAPES.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(s) = m.get(text) {
            return s.clone();
        }
        if m.len() > MAX_SHAPES {
            m.clear();
        }
        let s = shape_of(text).map(Rc::new);
        m.insert(text.to_string(), s.clone());
        s
    })?;
    Some(Params { file, scope, shape })
}

/// Most signature texts a thread keeps read.
const MAX_SHAPES: usize = 4096;

fn shape_of(text: &str) -> Option<Shape> {
    let mut rest = text.trim();
    let mut generics = Vec::new();
    if rest.starts_with('<') {
        let close = matching(rest, 0)?;
        generics = split_top(&rest[1..close], ',')
            .iter()
            .filter_map(|g| generic(g))
            .collect();
        rest = rest[close + 1..].trim_start();
    }
    if !rest.starts_with('(') {
        return None;
    }
    let close = matching(rest, 0)?;
    let inside = &rest[1..close];
    let after = rest[close + 1..].trim_start();
    let returns = after
        .strip_prefix("=>")
        .or_else(|| after.strip_prefix(':'))
        .map(|r| r.trim().to_string());
    let params = split_top(inside, ',')
        .iter()
        .filter(|p| !p.trim().is_empty() && !is_this_param(p))
        .map(|p| {
            let p = p.trim();
            let rest = p.starts_with("...");
            let ty = split_top(p, ':').get(1).map_or("", |t| t.trim());
            let ty = split_top(ty, '=')[0].trim();
            (ty.to_string(), rest)
        })
        .collect();
    Some(Shape {
        generics,
        params,
        returns,
    })
}

/// A `this:` parameter, which no argument is passed for.
fn is_this_param(p: &str) -> bool {
    p.trim()
        .strip_prefix("this")
        .is_some_and(|r| r.trim_start().starts_with(':'))
}

/// The element type of a rest parameter's array type: `T[]`,
/// `Array<T>`, `readonly T[]`.
fn element_type(t: &str) -> Option<&str> {
    let t = t.trim().trim_start_matches("readonly ").trim();
    if let Some(inner) = t.strip_suffix("[]") {
        return Some(unparenthesized(inner.trim()));
    }
    let inner = t.strip_prefix("Array<")?.strip_suffix('>')?;
    Some(inner.trim())
}

/// The type a type as written names, when it names one: `Foo`,
/// `ns.Foo<A>`, `Foo | undefined` → `Foo`, `ns.Foo`; `Promise<Foo>`,
/// `Awaited<Foo>` → `Foo`.
pub(crate) fn type_name(t: &str) -> Option<String> {
    let t = unparenthesized(t.trim());
    let alts: Vec<&str> = split_top(t, '|')
        .into_iter()
        .map(str::trim)
        .filter(|a| !a.is_empty() && !matches!(*a, "undefined" | "null" | "void"))
        .collect();
    let [one] = alts.as_slice() else { return None };
    let name = one.split('<').next()?.trim();
    if matches!(name, "Promise" | "Awaited" | "PromiseLike" | "Readonly") {
        let open = one.find('<')?;
        let close = matching(one, open)?;
        return type_name(&one[open + 1..close]);
    }
    let simple = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.'));
    simple.then(|| name.to_string())
}

/// `T["k"]` (or `T['k']`) as `T` and `k`: an indexed access by a
/// literal key, the last of a chain (`U["a"]["b"]` is `U["a"]` and `b`).
fn indexed_access(t: &str) -> Option<(&str, &str)> {
    let t = t.trim();
    if !t.ends_with(']') {
        return None;
    }
    let mut open = None;
    let mut i = 0;
    while i < t.len() {
        match t.as_bytes()[i] {
            b'[' | b'(' | b'<' | b'{' => {
                let close = matching(t, i)?;
                if t.as_bytes()[i] == b'[' && close == t.len() - 1 {
                    open = Some(i);
                }
                i = close + 1;
            }
            b'\'' | b'"' | b'`' => {
                let q = t.as_bytes()[i];
                i += 1;
                while i < t.len() && t.as_bytes()[i] != q {
                    i += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    let open = open?;
    let base = t[..open].trim();
    let key = t[open + 1..t.len() - 1].trim();
    let quoted = key.len() >= 2
        && matches!(key.as_bytes()[0], b'"' | b'\'')
        && key.as_bytes()[key.len() - 1] == key.as_bytes()[0];
    (quoted && !base.is_empty()).then(|| (base, &key[1..key.len() - 1]))
}

/// `(T)` → `T`, when the parentheses enclose it all.
fn unparenthesized(t: &str) -> &str {
    let t = t.trim();
    if t.starts_with('(') && matching(t, 0) == Some(t.len() - 1) {
        unparenthesized(&t[1..t.len() - 1])
    } else {
        t
    }
}

/// The byte of the bracket closing the one at `open` (`(`, `<`, `[`,
/// `{`), brackets of every kind nested, `=>` not a closer.
fn matching(t: &str, open: usize) -> Option<usize> {
    let b = t.as_bytes();
    let mut depth = 0i32;
    let mut i = open;
    while i < b.len() {
        match b[i] {
            b'(' | b'<' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'=' => {}
            b')' | b'>' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'\'' | b'"' | b'`' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `t` split at `sep` outside brackets and quotes (`=>` is no `=` and no
/// closer).
fn split_top(t: &str, sep: char) -> Vec<&str> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'(' | b'<' | b'[' | b'{' => depth += 1,
            b'>' if i > 0 && b[i - 1] == b'=' => {}
            b')' | b'>' | b']' | b'}' => depth -= 1,
            b'\'' | b'"' | b'`' => {
                let q = c;
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
            }
            _ if depth == 0 && c == sep as u8 && !(sep == '=' && b.get(i + 1) == Some(&b'>')) => {
                out.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(&t[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_access_by_a_literal_key_is_split_at_its_last_index() {
        assert_eq!(indexed_access("U[\"_zod\"]"), Some(("U", "_zod")));
        assert_eq!(
            indexed_access("U[\"_zod\"]['config']"),
            Some(("U[\"_zod\"]", "config"))
        );
        assert_eq!(
            indexed_access("Env<X>['Bindings']"),
            Some(("Env<X>", "Bindings"))
        );
        assert_eq!(indexed_access("T[number]"), None);
        assert_eq!(indexed_access("string[]"), None);
        assert_eq!(indexed_access("[\"a\"]"), None);
        assert_eq!(indexed_access("Record<string, ']'>"), None);
    }

    #[test]
    fn type_names_see_through_promises_unions_and_arguments() {
        assert_eq!(type_name("Context<E, P, I>").as_deref(), Some("Context"));
        assert_eq!(
            type_name("Promise<Response | undefined>").as_deref(),
            Some("Response")
        );
        assert_eq!(type_name("(ns.Foo | null)").as_deref(), Some("ns.Foo"));
        assert_eq!(type_name("A | B"), None);
        assert_eq!(type_name("{ a: string }"), None);
    }

    #[test]
    fn splitting_keeps_arrows_and_nested_brackets_whole() {
        assert_eq!(
            split_top("(c: Context<E, P>, next: Next) => R | Promise<R>", '|'),
            vec!["(c: Context<E, P>, next: Next) => R ", " Promise<R>"]
        );
        assert_eq!(
            split_top("a: (x: X) => Y, b: B", ','),
            vec!["a: (x: X) => Y", " b: B"]
        );
        assert_eq!(
            generic("M1 extends H<E2, P, I> = H<E2, P, I>"),
            Some(("M1".into(), "H<E2, P, I>".into()))
        );
        assert_eq!(generic("E = Env"), Some(("E".into(), "Env".into())));
    }

    #[test]
    fn call_signatures_read_as_parameter_lists() {
        let scope = Entity {
            key: "k".into(),
            kind: EntityKind::Trait,
            name: "I".into(),
            visibility: crate::model::Visibility::Public,
            file: "f.ts".into(),
            start_line: 1,
            end_line: 1,
            module_path: std::sync::Arc::from(Vec::<String>::new()),
            doc: String::new(),
            signature: Default::default(),
            is_test: false,
            owner: None,
            trait_name: None,
            parent: None,
            language: super::super::ID,
        };
        let p = signature_params(
            0,
            &scope,
            "<P extends string, M1 extends H<E> = H<E>>(path: P, handler: M1, ...rest: H[]): HonoBase<E>",
        )
        .unwrap();
        assert_eq!(p.at(1).unwrap().text, "H<E>");
        assert_eq!(p.at(4).unwrap().text, "H");
        assert_eq!(p.shape.returns.as_deref(), Some("HonoBase<E>"));
        let f = signature_params(
            0,
            &scope,
            "(c: Context<E, P, I>, next: Next) => Promise<R | void>",
        )
        .unwrap();
        assert_eq!(f.at(0).unwrap().text, "Context<E, P, I>");
        assert!(f.at(2).is_none());
    }
}
