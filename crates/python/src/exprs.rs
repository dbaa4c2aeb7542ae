//! The references of Python expressions, and what a value's syntax says
//! about its type.
//!
//! A name or attribute chain rooted at a name that is not local (a
//! module-level name, a nested def, an import) becomes a path reference
//! (`flask.Flask` → `["flask", "Flask"]`), resolved by scope in the
//! resolver. A chain rooted at a method's `self`/`cls` or at `super()`
//! gets the roots `<self>`, `<cls>`, `<super>`. A chain rooted at a local
//! bound from a call, a constructor or an annotation, or at a call, is a
//! method call or attribute read with a receiver ([`Recv`]) the resolver
//! types; one rooted at a local of unknown type is a method call without
//! a receiver, kept unresolved with its text.
//!
//! Receivers use [`Recv`] in Python's terms: `Type(t)` is an instance of
//! the annotation `t`, except that `Type("=a.b")` is the value the dotted
//! path `a.b` names; `Call(path)` is what calling that path returns;
//! `Method` and `Field` step through a value. Entity hints
//! (`Signature::ty` of variables and attributes) are the annotation as
//! written, or `= ` and the value's chain (`= Blueprint()`,
//! `= <self>.make_config()`), read back by [`hint_recv`].

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

use super::extract::{one_line, Cx, MethodOf, Walker, MAX_DEPTH};
use crate::model::{RawRef, Recv, RefKind};

/// A function's local names, each with its value when one binding gives
/// it (`None`: bound, type unknown).
#[derive(Debug, Clone, Default)]
pub struct Locals {
    names: HashMap<String, Option<Recv>>,
}

impl Locals {
    fn get(&self, name: &str) -> Option<&Option<Recv>> {
        self.names.get(name)
    }
}

/// The value a dotted path names, as a receiver.
fn path_value(path: &str) -> Recv {
    Recv::Type(format!("={path}"))
}

/// What an expression's syntax says of its value.
fn value_of(w: &Walker<'_>, n: Node<'_>, cx: &Cx<'_>) -> Option<Recv> {
    match n.kind() {
        "identifier" => {
            let name = w.text(n);
            if let Some(l) = cx.locals.and_then(|l| l.get(name)) {
                return l.clone();
            }
            Some(path_value(name))
        }
        "attribute" => {
            let obj = value_of(w, n.child_by_field_name("object")?, cx)?;
            let attr = w.text(n.child_by_field_name("attribute")?).to_string();
            Some(match obj {
                Recv::Type(t) if t.starts_with('=') => Recv::Type(format!("{t}.{attr}")),
                other => Recv::Field(Box::new(other), attr),
            })
        }
        "call" => {
            let f = n.child_by_field_name("function")?;
            if f.kind() == "identifier" && w.text(f) == "super" {
                return Some(path_value("<super>"));
            }
            match value_of(w, f, cx)? {
                Recv::Type(t) if t.starts_with('=') => {
                    Some(Recv::Call(t[1..].split('.').map(str::to_string).collect()))
                }
                Recv::Field(base, name) => Some(Recv::Method(base, name)),
                _ => None,
            }
        }
        "parenthesized_expression" => value_of(w, n.named_child(0)?, cx),
        _ => None,
    }
}

/// A receiver as an entity hint's chain (`= a.b()`), if it is one.
fn recv_chain(r: &Recv) -> Option<String> {
    Some(match r {
        Recv::Type(t) => t.strip_prefix('=')?.to_string(),
        Recv::Call(p) => format!("{}()", p.join(".")),
        Recv::Method(b, n) => format!("{}.{n}()", recv_chain(b)?),
        Recv::Field(b, n) => format!("{}.{n}", recv_chain(b)?),
        _ => return None,
    })
}

/// The receiver an entity hint describes (see the module docs).
pub fn hint_recv(hint: &str) -> Option<Recv> {
    if let Some(json) = hint.strip_prefix("~ ") {
        return serde_json::from_str(json).ok();
    }
    let Some(chain) = hint.strip_prefix("= ") else {
        return Some(Recv::Type(hint.to_string()));
    };
    let mut cur: Option<Recv> = None;
    for seg in chain.split('.') {
        let (name, called) = match seg.strip_suffix("()") {
            Some(n) => (n, true),
            None => (seg, false),
        };
        cur = Some(match (cur, called) {
            (None, false) => path_value(name),
            (None, true) => Recv::Call(vec![name.to_string()]),
            (Some(Recv::Type(t)), false) if t.starts_with('=') => Recv::Type(format!("{t}.{name}")),
            (Some(Recv::Type(t)), true) if t.starts_with('=') => {
                let mut p: Vec<String> = t[1..].split('.').map(str::to_string).collect();
                p.push(name.to_string());
                Recv::Call(p)
            }
            (Some(b), false) => Recv::Field(Box::new(b), name.to_string()),
            (Some(b), true) => Recv::Method(Box::new(b), name.to_string()),
        });
    }
    cur
}

/// The hint of a binding: its annotation, else its value's chain.
pub(super) fn value_hint(
    w: &Walker<'_>,
    ann: Option<Node<'_>>,
    right: Option<Node<'_>>,
    cx: &Cx<'_>,
) -> Option<String> {
    if let Some(a) = ann {
        return Some(one_line(w.text(a)));
    }
    let v = value_of(w, right?, cx)?;
    match (&v, recv_chain(&v)) {
        (Recv::Type(t), None) => Some(t.clone()),
        (_, Some(c)) => Some(format!("= {c}")),
        // A chain through an annotated local (`req.thing`): its
        // structure as JSON.
        (_, None) => serde_json::to_string(&v).ok().map(|j| format!("~ {j}")),
    }
}

/// The names a function binds locally, with their values where known:
/// parameters (annotated ones typed; a method's first is `<self>` or
/// `<cls>`), assignments, loop and `with`/`except` targets, comprehension
/// variables aside. Imports, nested defs and classes are not locals: they
/// have entities (or imports) the resolver finds by scope. A closure's
/// locals include its enclosing function's.
pub(super) fn locals_of(
    w: &Walker<'_>,
    params: Option<Node<'_>>,
    body: Node<'_>,
    method_of: &MethodOf,
    cx: &Cx<'_>,
) -> Locals {
    let mut out = cx.locals.cloned().unwrap_or_default();
    let mut globals: HashSet<String> = HashSet::default();
    let mut own: HashMap<String, Vec<Option<Recv>>> = HashMap::default();
    if let Some(p) = params {
        let mut cur = p.walk();
        for (i, c) in p.named_children(&mut cur).enumerate() {
            let (name, ty) = match c.kind() {
                "identifier" => (w.text(c).to_string(), None),
                "typed_parameter" => {
                    let mut cc = c.walk();
                    let name = c
                        .named_children(&mut cc)
                        .find(|k| k.kind() == "identifier")
                        .map(|k| w.text(k).to_string());
                    match name {
                        Some(n) => (n, c.child_by_field_name("type")),
                        None => {
                            splat_names(w, c, &mut own);
                            continue;
                        }
                    }
                }
                "default_parameter" | "typed_default_parameter" => {
                    match c.child_by_field_name("name") {
                        Some(n) if n.kind() == "identifier" => {
                            (w.text(n).to_string(), c.child_by_field_name("type"))
                        }
                        _ => continue,
                    }
                }
                "list_splat_pattern" | "dictionary_splat_pattern" => {
                    splat_names(w, c, &mut own);
                    continue;
                }
                _ => continue,
            };
            let first_of_method =
                i == 0 && matches!(method_of, Some((_, Some((first, _)))) if **first == *name);
            let value = if first_of_method {
                let cls = matches!(method_of, Some((_, Some((_, true)))));
                Some(path_value(if cls { "<cls>" } else { "<self>" }))
            } else {
                ty.map(|t| Recv::Type(one_line(w.text(t))))
            };
            own.entry(name).or_default().push(value);
        }
    }
    // Values are read in the function's own scope: one pass finds its
    // local names and what each binding binds, and the values are read
    // once every local name is known (`result = runner.invoke()` with
    // `runner` a parameter is not the global `runner`).
    let mut bound: Vec<(String, Bound<'_>)> = Vec::new();
    scan_bindings(w, body, &mut bound, &mut globals, 0);
    let mut provisional = out.clone();
    for name in own.keys().chain(bound.iter().map(|(name, _)| name)) {
        let typed = own.get(name).and_then(|v| v.first().cloned().flatten());
        provisional.names.insert(name.clone(), typed);
    }
    for g in &globals {
        provisional.names.remove(g);
    }
    let inner = Cx {
        locals: Some(&provisional),
        ..cx.clone()
    };
    for (name, b) in bound {
        let value = match b {
            Bound::Known(v) => v,
            Bound::Value(n) => value_of(w, n, &inner),
        };
        own.entry(name).or_default().push(value);
    }
    for (name, values) in own {
        if globals.contains(&name) {
            out.names.remove(&name);
            continue;
        }
        let first = values.first().cloned().flatten();
        let agree = values.iter().all(|v| v.is_none() || *v == first);
        out.names.insert(name, if agree { first } else { None });
    }
    for g in globals {
        out.names.remove(&g);
    }
    out
}

fn splat_names(w: &Walker<'_>, n: Node<'_>, own: &mut HashMap<String, Vec<Option<Recv>>>) {
    let mut cur = n.walk();
    for k in n.named_children(&mut cur) {
        if k.kind() == "identifier" {
            own.entry(w.text(k).to_string()).or_default().push(None);
        } else {
            splat_names(w, k, own);
        }
    }
}

/// Every name a pattern binds.
fn pattern_names(w: &Walker<'_>, n: Node<'_>, out: &mut Vec<String>) {
    match n.kind() {
        "identifier" => out.push(w.text(n).to_string()),
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "list_splat_pattern"
        | "tuple"
        | "list"
        | "parenthesized_expression"
        | "as_pattern_target" => {
            let mut cur = n.walk();
            for k in n.named_children(&mut cur) {
                pattern_names(w, k, out);
            }
        }
        _ => {}
    }
}

fn scan_bindings<'t>(
    w: &Walker<'_>,
    n: Node<'t>,
    bound: &mut Vec<(String, Bound<'t>)>,
    globals: &mut HashSet<String>,
    depth: u32,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let unknown = |bound: &mut Vec<(String, Bound<'t>)>, names: Vec<String>| {
        bound.extend(names.into_iter().map(|name| (name, Bound::Known(None))));
    };
    let mut cur = n.walk();
    for k in n.named_children(&mut cur) {
        match k.kind() {
            "function_definition"
            | "class_definition"
            | "decorated_definition"
            | "lambda"
            | "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression" => {}
            "global_statement" | "nonlocal_statement" => {
                let mut c2 = k.walk();
                for g in k.named_children(&mut c2) {
                    if g.kind() == "identifier" {
                        globals.insert(w.text(g).to_string());
                    }
                }
            }
            "assignment" | "augmented_assignment" => {
                let ann = k.child_by_field_name("type");
                let right = k.child_by_field_name("right");
                if let Some(l) = k.child_by_field_name("left") {
                    if l.kind() == "identifier" {
                        let b = match (ann, right) {
                            (Some(a), _) => Bound::Known(Some(Recv::Type(one_line(w.text(a))))),
                            (None, Some(r)) if k.kind() == "assignment" => Bound::Value(r),
                            (None, _) => Bound::Known(None),
                        };
                        bound.push((w.text(l).to_string(), b));
                    } else {
                        let mut names = Vec::new();
                        pattern_names(w, l, &mut names);
                        unknown(bound, names);
                    }
                }
                if let Some(r) = right {
                    scan_bindings(w, r, bound, globals, depth + 1);
                }
            }
            "for_statement" | "for_in_clause" => {
                if let Some(l) = k.child_by_field_name("left") {
                    let mut names = Vec::new();
                    pattern_names(w, l, &mut names);
                    unknown(bound, names);
                }
                scan_bindings(w, k, bound, globals, depth + 1);
            }
            "named_expression" => {
                if let Some(t) = k.child_by_field_name("name") {
                    let b = match k.child_by_field_name("value") {
                        Some(v) => Bound::Value(v),
                        None => Bound::Known(None),
                    };
                    bound.push((w.text(t).to_string(), b));
                }
                scan_bindings(w, k, bound, globals, depth + 1);
            }
            "as_pattern_target" => {
                let mut names = Vec::new();
                pattern_names(w, k, &mut names);
                unknown(bound, names);
                scan_bindings(w, k, bound, globals, depth + 1);
            }
            "except_clause" => {
                // `except E as e`: the alias is the last expression
                // before the block, after `as`.
                let mut c2 = k.walk();
                let mut after_as = false;
                for c in k.children(&mut c2) {
                    if c.kind() == "as" {
                        after_as = true;
                    } else if after_as && c.kind() == "identifier" {
                        bound.push((w.text(c).to_string(), Bound::Known(None)));
                        after_as = false;
                    }
                }
                scan_bindings(w, k, bound, globals, depth + 1);
            }
            // A leaf binds nothing (the common case: not walked).
            _ if k.named_child_count() == 0 => {}
            _ => scan_bindings(w, k, bound, globals, depth + 1),
        }
    }
}

/// What a binding found by [`scan_bindings`] binds: a value known from
/// its form (an annotation, or nothing known), or the expression whose
/// value it is, read once the function's local names are known.
enum Bound<'t> {
    Known(Option<Recv>),
    Value(Node<'t>),
}

/// The names a class body binds at its own level (assignments, defs,
/// classes, annotations), before its methods bind `self.x`; and of
/// them, those declared with a type (`x: int`).
pub(super) fn class_level_names(
    w: &Walker<'_>,
    body: Node<'_>,
) -> (HashSet<String>, HashSet<String>) {
    let mut out = HashSet::default();
    let mut typed = HashSet::default();
    let mut cur = body.walk();
    for s in body.named_children(&mut cur) {
        let s = if s.kind() == "decorated_definition" {
            match s.child_by_field_name("definition") {
                Some(d) => d,
                None => continue,
            }
        } else {
            s
        };
        match s.kind() {
            "function_definition" | "class_definition" => {
                if let Some(n) = s.child_by_field_name("name") {
                    out.insert(w.text(n).to_string());
                }
            }
            "expression_statement" => {
                if let Some(a) = s.named_child(0).filter(|a| a.kind() == "assignment") {
                    if let Some(l) = a.child_by_field_name("left") {
                        if l.kind() == "identifier" && a.child_by_field_name("type").is_some() {
                            typed.insert(w.text(l).to_string());
                        }
                        let mut names = Vec::new();
                        pattern_names(w, l, &mut names);
                        out.extend(names);
                    }
                }
            }
            _ => {}
        }
    }
    (out, typed)
}

/// The string items of a list or tuple (`__all__ = ["a", "b"]`).
pub(super) fn string_items(w: &Walker<'_>, n: Node<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = n.walk();
    for k in n.named_children(&mut cur) {
        if k.kind() == "string" {
            let mut c2 = k.walk();
            let s: String = k
                .named_children(&mut c2)
                .filter(|c| c.kind() == "string_content")
                .map(|c| w.text(c))
                .collect();
            if !s.is_empty() {
                out.push(s);
            }
        }
    }
    out
}

fn raw(w: &Walker<'_>, kind: RefKind, path: Vec<String>, n: Node<'_>, cx: &Cx<'_>) -> RawRef {
    let on_self = path.first().is_some_and(|p| p == "<self>" || p == "<cls>");
    RawRef {
        from: w.entities[cx.from].key.clone(),
        kind,
        path,
        line: n.start_position().row as u32 + 1,
        scope: w.module_path.clone(),
        self_type: None,
        on_self,
        receiver: None,
    }
}

/// The reference a use of `n` makes (`called`: in call position).
fn use_ref(w: &mut Walker<'_>, n: Node<'_>, called: bool, cx: &Cx<'_>) {
    let value = value_of(w, n, cx);
    let r = match value {
        Some(Recv::Type(t)) if t.starts_with('=') => {
            let path: Vec<String> = t[1..].split('.').map(str::to_string).collect();
            if path.len() == 1 && path[0].starts_with('<') && !called {
                return;
            }
            let kind = if called {
                RefKind::Call
            } else {
                RefKind::Value
            };
            raw(w, kind, path, n, cx)
        }
        Some(Recv::Field(base, name)) => {
            let kind = if called {
                RefKind::MethodCall
            } else {
                RefKind::Field
            };
            let mut r = raw(w, kind, vec![name], n, cx);
            r.receiver = Some(*base);
            r
        }
        None if called && n.kind() == "attribute" => {
            // On a local of unknown type: kept unresolved with its text.
            let Some(attr) = n.child_by_field_name("attribute") else {
                return;
            };
            let name = w.text(attr).to_string();
            raw(w, RefKind::MethodCall, vec![name], n, cx)
        }
        _ => return,
    };
    let from = cx.from;
    w.push_ref(from, r);
}

/// The references of an expression or statement (definitions inside are
/// walked as entities by the caller; a lambda's or comprehension's
/// variables are locals of their own).
pub(super) fn refs_in(w: &mut Walker<'_>, n: Node<'_>, cx: &Cx<'_>) {
    if cx.depth > MAX_DEPTH {
        return;
    }
    let deeper = Cx {
        depth: cx.depth + 1,
        ..cx.clone()
    };
    match n.kind() {
        "identifier" => use_ref(w, n, false, cx),
        "attribute" => {
            use_ref(w, n, false, cx);
            chain_root_refs(w, n, &deeper);
        }
        "call" => call_refs(w, n, cx, &deeper),
        "keyword_argument" => {
            if let Some(v) = n.child_by_field_name("value") {
                refs_in(w, v, &deeper);
            }
        }
        "lambda"
        | "list_comprehension"
        | "set_comprehension"
        | "dictionary_comprehension"
        | "generator_expression" => scope_refs(w, n, cx, &deeper),
        "for_in_clause" => {
            if let Some(r) = n.child_by_field_name("right") {
                refs_in(w, r, cx);
            }
        }
        "for_statement" => {
            let left = n.child_by_field_name("left").map(|l| l.id());
            let mut cur = n.walk();
            for c in n.named_children(&mut cur) {
                if Some(c.id()) != left {
                    refs_in(w, c, &deeper);
                }
            }
        }
        "as_pattern" => {
            if let Some(v) = n.named_child(0) {
                refs_in(w, v, &deeper);
            }
        }
        "named_expression" => {
            if let Some(v) = n.child_by_field_name("value") {
                refs_in(w, v, &deeper);
            }
        }
        "type" => annotation_refs(w, n, cx),
        "string" | "concatenated_string" => {
            let mut cur = n.walk();
            for c in n.named_children(&mut cur) {
                if matches!(c.kind(), "interpolation" | "string") {
                    refs_in(w, c, &deeper);
                }
            }
        }
        "global_statement" | "nonlocal_statement" | "comment" | "as_pattern_target" => {}
        "function_definition" | "class_definition" | "decorated_definition" => {}
        // A leaf other than a name refers to nothing (most nodes: not walked).
        _ if n.named_child_count() == 0 => {}
        _ => {
            let mut cur = n.walk();
            for c in n.named_children(&mut cur) {
                refs_in(w, c, &deeper);
            }
        }
    }
}

/// A call: a named callee is a call reference (its chain's root walked),
/// any other callee an expression; then the arguments.
fn call_refs(w: &mut Walker<'_>, n: Node<'_>, cx: &Cx<'_>, deeper: &Cx<'_>) {
    if let Some(f) = n.child_by_field_name("function") {
        match f.kind() {
            "identifier" | "attribute" => {
                use_ref(w, f, true, cx);
                if f.kind() == "attribute" {
                    chain_root_refs(w, f, deeper);
                }
            }
            _ => refs_in(w, f, deeper),
        }
    }
    if let Some(a) = n.child_by_field_name("arguments") {
        refs_in(w, a, deeper);
    }
}

/// A lambda or comprehension: its parameters and loop variables are
/// locals of its own; a lambda's defaults are the enclosing scope's.
fn scope_refs(w: &mut Walker<'_>, n: Node<'_>, cx: &Cx<'_>, deeper: &Cx<'_>) {
    let names = scope_names(w, n);
    let mut locals = cx.locals.cloned().unwrap_or_default();
    for name in names {
        locals.names.insert(name, None);
    }
    let inner = Cx {
        locals: Some(&locals),
        ..deeper.clone()
    };
    let mut cur = n.walk();
    for c in n.named_children(&mut cur) {
        if c.kind() == "lambda_parameters" {
            // Defaults are the enclosing scope's.
            let mut c2 = c.walk();
            for p in c.named_children(&mut c2) {
                if let Some(v) = p.child_by_field_name("value") {
                    refs_in(w, v, deeper);
                }
            }
            continue;
        }
        refs_in(w, c, &inner);
    }
}

/// The names a lambda's parameters and a comprehension's `for` clauses
/// bind.
fn scope_names(w: &Walker<'_>, n: Node<'_>) -> Vec<String> {
    let mut names = Vec::new();
    if let Some(p) = n.child_by_field_name("parameters") {
        let mut own = HashMap::default();
        splat_names(w, p, &mut own);
        let mut cur = p.walk();
        for c in p.named_children(&mut cur) {
            match c.kind() {
                "identifier" => names.push(w.text(c).to_string()),
                _ => {
                    if let Some(k) = c.child_by_field_name("name") {
                        names.push(w.text(k).to_string());
                    }
                }
            }
        }
        names.extend(own.into_keys());
    }
    let mut cur = n.walk();
    for c in n.named_children(&mut cur) {
        if c.kind() == "for_in_clause" {
            if let Some(l) = c.child_by_field_name("left") {
                pattern_names(w, l, &mut names);
            }
        }
    }
    names
}

/// The references in the root of an attribute chain that is not a name
/// (`f(x).a.b`: the call `f(x)`).
fn chain_root_refs(w: &mut Walker<'_>, n: Node<'_>, cx: &Cx<'_>) {
    let mut root = n;
    while root.kind() == "attribute" {
        match root.child_by_field_name("object") {
            Some(o) => root = o,
            None => return,
        }
    }
    if root.kind() != "identifier" {
        refs_in(w, root, cx);
    }
}

/// The type references of an annotation: each dotted name in it, string
/// annotations (`"Flask"`, `"t.Optional[Foo]"`) read as their text.
pub(super) fn annotation_refs(w: &mut Walker<'_>, n: Node<'_>, cx: &Cx<'_>) {
    let mut names: Vec<(String, Node<'_>)> = Vec::new();
    collect_type_names(w, n, &mut names, 0);
    for (path, at) in names {
        let segs: Vec<String> = path.split('.').map(str::to_string).collect();
        if segs.iter().any(|s| s.is_empty()) {
            continue;
        }
        if cx.locals.and_then(|l| l.get(&segs[0])).is_some() {
            continue;
        }
        let r = raw(w, RefKind::Type, segs, at, cx);
        let from = cx.from;
        w.push_ref(from, r);
    }
}

fn collect_type_names<'t>(
    w: &Walker<'_>,
    n: Node<'t>,
    out: &mut Vec<(String, Node<'t>)>,
    depth: u32,
) {
    if depth > 64 {
        return;
    }
    match n.kind() {
        "identifier" => out.push((w.text(n).to_string(), n)),
        "attribute" => {
            let t = w.text(n);
            if t.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
            {
                out.push((t.to_string(), n));
            }
        }
        "string" => {
            let mut cur = n.walk();
            for c in n.named_children(&mut cur) {
                if c.kind() == "string_content" {
                    for name in dotted_names(w.text(c)) {
                        out.push((name, n));
                    }
                }
            }
        }
        "keyword_argument" => {}
        _ => {
            let mut cur = n.walk();
            for c in n.named_children(&mut cur) {
                collect_type_names(w, c, out, depth + 1);
            }
        }
    }
}

/// The dotted names in a string annotation's text.
fn dotted_names(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' || (c == '.' && !cur.is_empty()) {
            cur.push(c);
        } else {
            let t = cur.trim_end_matches('.');
            if t.chars().next().is_some_and(|c| !c.is_ascii_digit()) {
                out.push(t.to_string());
            }
            cur.clear();
        }
    }
    out
}

/// Annotations and defaults of a parameter list.
pub(super) fn parameter_refs(w: &mut Walker<'_>, p: Node<'_>, cx: &Cx<'_>) {
    let mut cur = p.walk();
    for c in p.named_children(&mut cur) {
        if let Some(t) = c.child_by_field_name("type") {
            annotation_refs(w, t, cx);
        }
        if let Some(v) = c.child_by_field_name("value") {
            refs_in(w, v, cx);
        }
    }
}

/// A class's bases (`implements` references) and its keywords
/// (`metaclass=…`).
pub(super) fn bases_refs(w: &mut Walker<'_>, b: Node<'_>, cx: &Cx<'_>) {
    let mut cur = b.walk();
    for a in b.named_children(&mut cur) {
        match a.kind() {
            "identifier" | "attribute" => {
                let t = w.text(a);
                if t.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                {
                    let segs = t.split('.').map(str::to_string).collect();
                    let r = raw(w, RefKind::Implements, segs, a, cx);
                    let from = cx.from;
                    w.push_ref(from, r);
                }
            }
            "subscript" => {
                // `Generic[T]`, `ProxyMixin[Flask]`: the base, and the
                // arguments as types.
                if let Some(v) = a.child_by_field_name("value") {
                    let t = w.text(v);
                    if t.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                    {
                        let segs = t.split('.').map(str::to_string).collect();
                        let r = raw(w, RefKind::Implements, segs, v, cx);
                        let from = cx.from;
                        w.push_ref(from, r);
                    }
                }
                let mut c2 = a.walk();
                let subs: Vec<Node<'_>> = a.children_by_field_name("subscript", &mut c2).collect();
                for s in subs {
                    annotation_refs(w, s, cx);
                }
            }
            _ => refs_in(w, a, cx),
        }
    }
}
