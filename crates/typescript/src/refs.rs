//! The references of bodies and type positions.
//!
//! A reference is read in a unit — a function, method, accessor, a
//! `const`'s declarator, a class's or interface's heading, a top-level
//! statement — and belongs to the entity that unit stands for (a field's
//! type and initializer are its class's, a property or method
//! signature's its interface's or class's: they have no body). Every name the unit binds (parameters, `const`/`let`/
//! `var`, destructuring, `catch`, loop variables, nested functions and
//! classes, type parameters, mapped and `infer` types) is local to it
//! throughout: its uses are no references. There is no type inference
//! yet: a member read or call on a local (`c.json()`) is no reference.
//!
//! What is left: a name (`path` one segment) or a dotted chain rooted at
//! a name that is not local (`ns.x`, `Foo.bar`), read as a call (calls,
//! `new`, JSX component tags), a type (type positions), an
//! `implements` (`extends`/`implements` clauses) or a value (any other
//! read, shorthand properties, `typeof x`); `this.x`/`super.x` in a class
//! member, with the class's key as `self_type`; and `import('s')` as the
//! path `import()`, `s`.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

use super::extract::{Walker, MAX_DEPTH};
use crate::model::{Recv, RefKind};

/// Longest chain kept.
const MAX_CHAIN: usize = 4;

struct Cx<'l> {
    from: usize,
    class: Option<usize>,
    locals: &'l HashSet<String>,
    /// Locals declared with a type (`c: Context`, `= new Store()`): the
    /// type's name as written; empty when two bindings disagree.
    typed: &'l HashMap<String, String>,
    skip: Option<usize>,
}

/// The references of unit `n`, from entity `from`; `class` is the class
/// `this` means in it.
pub(crate) fn unit(w: &mut Walker<'_>, n: Node<'_>, from: usize, class: Option<usize>) {
    unit_except(w, n, from, class, None);
}

/// [`unit`] without the subtree `except` (a class's body, whose members
/// are units of their own).
pub(crate) fn unit_except(
    w: &mut Walker<'_>,
    n: Node<'_>,
    from: usize,
    class: Option<usize>,
    except: Option<Node<'_>>,
) {
    let mut locals: HashSet<String> = w.type_params.iter().cloned().collect();
    let skip = except.map(|e| e.id());
    let mut typed = HashMap::default();
    bindings(w, n, &mut locals, &mut typed, skip, 0);
    let cx = Cx {
        from,
        class,
        locals: &locals,
        typed: &typed,
        skip,
    };
    refs_in(w, n, &cx, 0);
}

/// The names a binding pattern binds.
pub(crate) fn pattern_names(w: &Walker<'_>, p: Node<'_>, out: &mut Vec<String>) {
    match p.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => out.push(w.text(p).to_string()),
        "object_pattern" | "array_pattern" | "rest_pattern" => {
            let mut cur = p.walk();
            for c in p.named_children(&mut cur) {
                pattern_names(w, c, out);
            }
        }
        "pair_pattern" => {
            if let Some(v) = p.child_by_field_name("value") {
                pattern_names(w, v, out);
            }
        }
        "object_assignment_pattern" | "assignment_pattern" => {
            if let Some(l) = p.child_by_field_name("left") {
                pattern_names(w, l, out);
            }
        }
        _ => {}
    }
}

fn add_pattern(w: &Walker<'_>, p: Option<Node<'_>>, out: &mut HashSet<String>) {
    if let Some(p) = p {
        let mut names = Vec::new();
        pattern_names(w, p, &mut names);
        out.extend(names);
    }
}

/// The name of the type a binding declares or is made with: `x: T`,
/// `x: T<A>`, `x: ns.T`, `x = new T()`.
fn declared_type(w: &Walker<'_>, n: Node<'_>) -> Option<String> {
    if let Some(t) = n.child_by_field_name("type").and_then(|t| t.named_child(0)) {
        let t = if t.kind() == "generic_type" {
            t.child_by_field_name("name")?
        } else {
            t
        };
        return matches!(t.kind(), "type_identifier" | "nested_type_identifier")
            .then(|| w.text(t).to_string());
    }
    let v = n.child_by_field_name("value")?;
    let v = if v.kind() == "await_expression" {
        v.named_child(0)?
    } else {
        v
    };
    let c = (v.kind() == "new_expression")
        .then(|| v.child_by_field_name("constructor"))
        .flatten()?;
    matches!(c.kind(), "identifier" | "member_expression").then(|| w.text(c).to_string())
}

/// A binding's declared type, unless another binding of its name has
/// another.
fn add_typed(
    w: &Walker<'_>,
    name: Option<Node<'_>>,
    n: Node<'_>,
    typed: &mut HashMap<String, String>,
) {
    let Some(name) = name.filter(|x| x.kind() == "identifier") else {
        return;
    };
    let ty = declared_type(w, n).unwrap_or_default();
    let e = typed
        .entry(w.text(name).to_string())
        .or_insert_with(|| ty.clone());
    if *e != ty {
        e.clear();
    }
}

/// Every name bound inside `n`.
fn bindings(
    w: &Walker<'_>,
    n: Node<'_>,
    out: &mut HashSet<String>,
    typed: &mut HashMap<String, String>,
    skip: Option<usize>,
    depth: u32,
) {
    if depth > MAX_DEPTH || Some(n.id()) == skip {
        return;
    }
    match n.kind() {
        "required_parameter" | "optional_parameter" => {
            add_pattern(w, n.child_by_field_name("pattern"), out);
            add_pattern(w, n.child_by_field_name("name"), out);
            add_typed(w, n.child_by_field_name("pattern"), n, typed);
        }
        "variable_declarator" => {
            add_pattern(w, n.child_by_field_name("name"), out);
            add_typed(w, n.child_by_field_name("name"), n, typed);
        }
        "catch_clause" => add_pattern(w, n.child_by_field_name("parameter"), out),
        "for_in_statement" => add_pattern(w, n.child_by_field_name("left"), out),
        "arrow_function" => add_pattern(w, n.child_by_field_name("parameter"), out),
        "function_declaration"
        | "generator_function_declaration"
        | "function_expression"
        | "generator_function"
        | "class_declaration"
        | "abstract_class_declaration"
        | "class"
        | "interface_declaration"
        | "type_alias_declaration"
        | "enum_declaration"
        | "type_parameter"
        | "mapped_type_clause" => {
            if let Some(name) = n.child_by_field_name("name") {
                if matches!(name.kind(), "identifier" | "type_identifier") {
                    out.insert(w.text(name).to_string());
                }
            }
        }
        "infer_type" => {
            if let Some(t) = n.named_child(0) {
                out.insert(w.text(t).to_string());
            }
        }
        _ => {}
    }
    let mut cur = n.walk();
    for c in n.named_children(&mut cur) {
        bindings(w, c, out, typed, skip, depth + 1);
    }
}

/// Kinds whose `name` field declares rather than reads.
fn names_itself(kind: &str) -> bool {
    matches!(
        kind,
        "function_declaration"
            | "generator_function_declaration"
            | "function_expression"
            | "generator_function"
            | "function_signature"
            | "class_declaration"
            | "abstract_class_declaration"
            | "class"
            | "interface_declaration"
            | "type_alias_declaration"
            | "enum_declaration"
            | "method_definition"
            | "method_signature"
            | "abstract_method_signature"
            | "public_field_definition"
            | "property_signature"
            | "internal_module"
            | "module"
            | "type_parameter"
            | "mapped_type_clause"
            | "enum_assignment"
    )
}

fn line(n: Node<'_>) -> u32 {
    n.start_position().row as u32 + 1
}

fn push(w: &mut Walker<'_>, cx: &Cx<'_>, kind: RefKind, path: Vec<String>, n: Node<'_>) {
    w.push_ref(cx.from, kind, path, None, line(n));
}

/// A name read: a reference unless local.
fn name_ref(w: &mut Walker<'_>, cx: &Cx<'_>, kind: RefKind, n: Node<'_>) {
    let name = w.text(n);
    if name.is_empty() || cx.locals.contains(name) {
        return;
    }
    push(w, cx, kind, vec![name.to_string()], n);
}

/// `a.b.c` as its names, rooted at a name, `this` or `super`.
fn chain(w: &Walker<'_>, n: Node<'_>, depth: u32) -> Option<Vec<String>> {
    if depth > 32 {
        return None;
    }
    match n.kind() {
        "identifier" => Some(vec![w.text(n).to_string()]),
        "this" => Some(vec!["this".into()]),
        "super" => Some(vec!["super".into()]),
        "member_expression" => {
            let prop = n.child_by_field_name("property")?;
            if !matches!(
                prop.kind(),
                "property_identifier" | "private_property_identifier"
            ) {
                return None;
            }
            let mut c = chain(w, n.child_by_field_name("object")?, depth + 1)?;
            c.push(w.text(prop).to_string());
            Some(c)
        }
        "non_null_expression" | "parenthesized_expression" => {
            chain(w, n.named_child(0)?, depth + 1)
        }
        _ => None,
    }
}

/// A member chain read as `kind`; what is not a chain is walked.
fn member(w: &mut Walker<'_>, cx: &Cx<'_>, n: Node<'_>, kind: RefKind, depth: u32) {
    let Some(mut segs) = chain(w, n, 0) else {
        if let Some(o) = n.child_by_field_name("object") {
            refs_in(w, o, cx, depth + 1);
        }
        return;
    };
    match segs[0].as_str() {
        "this" | "super" => {
            if let (Some(class), true) = (cx.class, segs.len() > 1) {
                // `this.items.push()` reads `items`; only `this.m()` calls.
                let k = if segs.len() > 2 { RefKind::Value } else { kind };
                if segs[0] == "this" && segs.len() > 2 {
                    let recv = Recv::Field(Box::new(Recv::Type("this".into())), segs[1].clone());
                    let k2 = member_kind(kind, segs.len() == 3);
                    w.push_recv_ref(
                        cx.from,
                        k2,
                        vec![segs[2].clone()],
                        Some(class),
                        Some(recv),
                        line(n),
                    );
                }
                segs.truncate(2);
                w.push_ref(cx.from, k, segs, Some(class), line(n));
            }
        }
        root if cx.locals.contains(root) => {
            // A local declared with a type: its members through that type.
            let Some(ty) = cx.typed.get(root).filter(|t| !t.is_empty()) else {
                return;
            };
            let mut recv = Recv::Type(ty.clone());
            for (i, m) in segs.iter().enumerate().skip(1).take(2) {
                let last = i + 1 == segs.len();
                w.push_recv_ref(
                    cx.from,
                    member_kind(kind, last),
                    vec![m.clone()],
                    None,
                    Some(recv.clone()),
                    line(n),
                );
                recv = Recv::Field(Box::new(recv), m.clone());
            }
        }
        _ => {
            segs.truncate(MAX_CHAIN);
            push(w, cx, kind, segs, n);
        }
    }
}

/// The kind of a member reached through a receiver: a method call when
/// it is the one called, else a field read.
fn member_kind(kind: RefKind, last: bool) -> RefKind {
    if last && kind == RefKind::Call {
        RefKind::MethodCall
    } else {
        RefKind::Field
    }
}

/// What a call or `new` calls.
fn callee(w: &mut Walker<'_>, cx: &Cx<'_>, f: Node<'_>, depth: u32) {
    match f.kind() {
        "identifier" => name_ref(w, cx, RefKind::Call, f),
        "member_expression" | "non_null_expression" => member(w, cx, f, RefKind::Call, depth),
        _ => refs_in(w, f, cx, depth + 1),
    }
}

/// A heritage clause's entry: an `implements` reference to what it
/// names, the rest (type arguments, mixin calls) walked.
fn heritage(w: &mut Walker<'_>, cx: &Cx<'_>, t: Node<'_>, depth: u32) {
    match t.kind() {
        "identifier" | "type_identifier" => name_ref(w, cx, RefKind::Implements, t),
        "member_expression" => member(w, cx, t, RefKind::Implements, depth),
        "nested_type_identifier" => {
            let path: Vec<String> = w.text(t).split('.').map(|s| s.trim().to_string()).collect();
            if !cx.locals.contains(&path[0]) {
                push(w, cx, RefKind::Implements, path, t);
            }
        }
        "generic_type" => {
            if let Some(name) = t.child_by_field_name("name") {
                heritage(w, cx, name, depth + 1);
            }
            if let Some(args) = t.child_by_field_name("type_arguments") {
                refs_in(w, args, cx, depth + 1);
            }
        }
        _ => refs_in(w, t, cx, depth + 1),
    }
}

/// The default values inside a binding pattern.
fn pattern_defaults(w: &mut Walker<'_>, cx: &Cx<'_>, p: Node<'_>, depth: u32) {
    if depth > MAX_DEPTH {
        return;
    }
    match p.kind() {
        "object_pattern" | "array_pattern" | "rest_pattern" => {
            let mut cur = p.walk();
            let kids: Vec<Node<'_>> = p.named_children(&mut cur).collect();
            for c in kids {
                pattern_defaults(w, cx, c, depth + 1);
            }
        }
        "pair_pattern" => {
            if let Some(v) = p.child_by_field_name("value") {
                pattern_defaults(w, cx, v, depth + 1);
            }
        }
        "object_assignment_pattern" | "assignment_pattern" => {
            if let Some(r) = p.child_by_field_name("right") {
                refs_in(w, r, cx, depth + 1);
            }
        }
        _ => {}
    }
}

fn refs_in(w: &mut Walker<'_>, n: Node<'_>, cx: &Cx<'_>, depth: u32) {
    if depth > MAX_DEPTH || Some(n.id()) == cx.skip {
        return;
    }
    let field = |f: &str| n.child_by_field_name(f);
    match n.kind() {
        "identifier" | "shorthand_property_identifier" => name_ref(w, cx, RefKind::Value, n),
        "type_identifier" => name_ref(w, cx, RefKind::Type, n),
        "nested_type_identifier" => {
            let path: Vec<String> = w.text(n).split('.').map(|s| s.trim().to_string()).collect();
            if !cx.locals.contains(&path[0]) {
                push(w, cx, RefKind::Type, path, n);
            }
        }
        "member_expression" => member(w, cx, n, RefKind::Value, depth),
        "call_expression" => {
            if let Some(f) = field("function") {
                if f.kind() == "import" {
                    let spec = field("arguments")
                        .and_then(|a| a.named_child(0))
                        .filter(|s| s.kind() == "string")
                        .map(|s| super::imports::unquote(w.text(s)));
                    if let Some(spec) = spec {
                        push(w, cx, RefKind::Value, vec!["import()".into(), spec], n);
                    }
                } else {
                    callee(w, cx, f, depth);
                }
            }
            walk_fields(w, cx, n, &["arguments", "type_arguments"], depth);
        }
        "new_expression" => {
            if let Some(f) = field("constructor") {
                callee(w, cx, f, depth);
            }
            walk_fields(w, cx, n, &["arguments", "type_arguments"], depth);
        }
        "jsx_opening_element" | "jsx_self_closing_element" => {
            let name = field("name");
            if let Some(t) = name {
                match t.kind() {
                    "identifier" if w.text(t).starts_with(|c: char| c.is_ascii_uppercase()) => {
                        name_ref(w, cx, RefKind::Call, t)
                    }
                    "member_expression" => member(w, cx, t, RefKind::Call, depth),
                    _ => {}
                }
            }
            let mut cur = n.walk();
            let kids: Vec<Node<'_>> = n
                .named_children(&mut cur)
                .filter(|c| Some(c.id()) != name.map(|x| x.id()))
                .collect();
            for c in kids {
                refs_in(w, c, cx, depth + 1);
            }
        }
        "extends_clause" | "implements_clause" | "extends_type_clause" => {
            let mut cur = n.walk();
            let kids: Vec<Node<'_>> = n.named_children(&mut cur).collect();
            for c in kids {
                if c.kind() == "type_arguments" {
                    refs_in(w, c, cx, depth + 1);
                } else {
                    heritage(w, cx, c, depth);
                }
            }
        }
        "jsx_closing_element"
        | "property_identifier"
        | "private_property_identifier"
        | "statement_identifier"
        | "comment"
        | "string"
        | "regex"
        | "number"
        | "predefined_type"
        | "jsx_text"
        | "this"
        | "super"
        | "infer_type"
        | "import_statement"
        | "shorthand_property_identifier_pattern" => {}
        "pair" => {
            if let Some(k) = field("key").filter(|k| k.kind() == "computed_property_name") {
                refs_in(w, k, cx, depth + 1);
            }
            if let Some(v) = field("value") {
                refs_in(w, v, cx, depth + 1);
            }
        }
        "variable_declarator" => {
            if let Some(p) = field("name") {
                pattern_defaults(w, cx, p, depth);
            }
            walk_fields(w, cx, n, &["type", "value"], depth);
        }
        "required_parameter" | "optional_parameter" => {
            let bound: Vec<usize> = ["pattern", "name"]
                .iter()
                .filter_map(|f| field(f))
                .map(|p| p.id())
                .collect();
            for f in ["pattern", "name"] {
                if let Some(p) = field(f) {
                    pattern_defaults(w, cx, p, depth);
                }
            }
            let mut cur = n.walk();
            let kids: Vec<Node<'_>> = n
                .named_children(&mut cur)
                .filter(|c| !bound.contains(&c.id()))
                .collect();
            for c in kids {
                refs_in(w, c, cx, depth + 1);
            }
        }
        "catch_clause" => walk_fields(w, cx, n, &["type", "body"], depth),
        "for_in_statement" => walk_fields(w, cx, n, &["right", "body"], depth),
        "arrow_function" => walk_fields(
            w,
            cx,
            n,
            &["type_parameters", "parameters", "return_type", "body"],
            depth,
        ),
        "object_pattern" | "array_pattern" | "object_assignment_pattern" | "assignment_pattern" => {
            pattern_defaults(w, cx, n, depth)
        }
        kind => {
            let skip = names_itself(kind)
                .then(|| field("name").map(|x| x.id()))
                .flatten();
            let mut cur = n.walk();
            let kids: Vec<Node<'_>> = n
                .named_children(&mut cur)
                .filter(|c| Some(c.id()) != skip)
                .collect();
            for c in kids {
                refs_in(w, c, cx, depth + 1);
            }
        }
    }
}

fn walk_fields(w: &mut Walker<'_>, cx: &Cx<'_>, n: Node<'_>, fields: &[&str], depth: u32) {
    for f in fields {
        let mut cur = n.walk();
        let kids: Vec<Node<'_>> = n.children_by_field_name(f, &mut cur).collect();
        for c in kids {
            refs_in(w, c, cx, depth + 1);
        }
    }
}
