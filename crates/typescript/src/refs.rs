//! The references of bodies and type positions.
//!
//! A reference is read in a unit — a function, method, accessor, a
//! `const`'s declarator, a class's or interface's heading, a top-level
//! statement — and belongs to the entity that unit stands for (a field's
//! type and initializer are its class's, a property signature's its
//! interface's: they have no body; a method signature reads its own
//! types). Every name the unit binds (parameters, `const`/`let`/
//! `var`, destructuring, `catch`, loop variables, nested functions and
//! classes, type parameters, mapped and `infer` types) is local to it
//! throughout: its uses are no references. A member read or call on a
//! local, or on any expression, is a reference through its receiver
//! ([`super::typing`]: `c.json()` of `(c: Context)` or of `app.get('/',
//! (c) => …)`); so is a key of an object literal whose type is expected
//! there, and a JSX tag's attribute.
//!
//! What is left: a name (`path` one segment) or a dotted chain rooted at
//! a name that is not local (`ns.x`, `Foo.bar`), read as a call (calls,
//! `new`, JSX component tags), a type (type positions), an
//! `implements` (`extends`/`implements` clauses) or a value (any other
//! read, shorthand properties, `typeof x`); `this.x`/`super.x` in a class
//! member, with the class's key as `self_type`; and `import('s')` as the
//! path `import()`, `s`.

use tree_sitter::Node;

use super::extract::{Walker, MAX_DEPTH};
use super::syntax::Fields;
use super::typing::{property_name, Locals};
use crate::model::{Recv, RefKind};

/// Longest chain kept.
const MAX_CHAIN: usize = 4;
/// Most keys of an object literal its receiver carries (each key's
/// reference holds them all): enough to tell a union's alternatives
/// apart.
const LITERAL_KEYS: usize = 16;

struct Cx<'l, 't> {
    from: usize,
    class: Option<usize>,
    locals: &'l Locals<'t>,
    skip: Option<usize>,
}

/// The references of unit `n`, from entity `from`; `class` is the class
/// `this` means in it.
pub(crate) fn unit<'t>(w: &mut Walker<'_>, n: Node<'t>, from: usize, class: Option<usize>) {
    unit_except(w, n, from, class, None);
}

/// [`unit`] without the subtree `except` (a class's body, whose members
/// are units of their own).
pub(crate) fn unit_except<'t>(
    w: &mut Walker<'_>,
    n: Node<'t>,
    from: usize,
    class: Option<usize>,
    except: Option<Node<'_>>,
) {
    let mut locals = Locals::default();
    for t in &w.type_params {
        locals.insert(t.clone());
    }
    let skip = except.map(|e| e.id());
    bindings(w, n, &mut locals, skip, 0);
    let cx = Cx {
        from,
        class,
        locals: &locals,
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
            if let Some(v) = p.field("value") {
                pattern_names(w, v, out);
            }
        }
        "object_assignment_pattern" | "assignment_pattern" => {
            if let Some(l) = p.field("left") {
                pattern_names(w, l, out);
            }
        }
        _ => {}
    }
}

fn add_pattern(w: &Walker<'_>, p: Option<Node<'_>>, out: &mut Locals<'_>) {
    if let Some(p) = p {
        let mut names = Vec::new();
        pattern_names(w, p, &mut names);
        for n in names {
            out.insert(n);
        }
    }
}

/// Every name bound inside `n`.
fn bindings<'t>(
    w: &Walker<'_>,
    n: Node<'t>,
    out: &mut Locals<'t>,
    skip: Option<usize>,
    depth: u32,
) {
    if depth > MAX_DEPTH || Some(n.id()) == skip {
        return;
    }
    match n.kind() {
        "required_parameter" | "optional_parameter" => {
            add_pattern(w, n.field("pattern"), out);
            add_pattern(w, n.field("name"), out);
            if let Some(p) = n.field("pattern") {
                out.bind(w, p, n, parameter_of(w, n));
            }
        }
        "variable_declarator" => {
            add_pattern(w, n.field("name"), out);
            if let Some(p) = n.field("name") {
                out.bind(w, p, n, None);
            }
        }
        "catch_clause" => {
            add_pattern(w, n.field("parameter"), out);
            if let Some(p) = n.field("parameter") {
                out.bind_unknown(w, p, n, Some(n));
            }
        }
        "for_in_statement" => {
            add_pattern(w, n.field("left"), out);
            let of = n.field("operator").is_some_and(|o| w.text(o) == "of");
            let left = n.field("left").filter(|l| l.kind() == "identifier");
            if let (true, Some(left), Some(right)) = (of, left, n.field("right")) {
                out.bind_element(w, left, right, n);
            }
        }
        "arrow_function" => {
            if let Some(p) = n.field("parameter").filter(|p| p.kind() == "identifier") {
                out.bind(w, p, p, Some((n, 0)));
            }
        }
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
            if let Some(name) = n.field("name") {
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
        bindings(w, c, out, skip, depth + 1);
    }
}

/// The function a parameter is of, and its position there (a `this`
/// parameter aside).
fn parameter_of<'t>(w: &Walker<'_>, p: Node<'t>) -> Option<(Node<'t>, u32)> {
    let list = p.parent().filter(|l| l.kind() == "formal_parameters")?;
    let func = list.parent()?;
    let mut cur = list.walk();
    let index = list
        .named_children(&mut cur)
        .filter(|c| matches!(c.kind(), "required_parameter" | "optional_parameter"))
        .filter(|c| c.field("pattern").is_none_or(|x| w.text(x) != "this"))
        .position(|c| c.id() == p.id())?;
    Some((func, u32::try_from(index).ok()?))
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

fn push<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, kind: RefKind, path: Vec<String>, n: Node<'t>) {
    w.push_ref(cx.from, kind, path, None, line(n));
}

/// A name read: a reference unless local.
fn name_ref<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, kind: RefKind, n: Node<'t>) {
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
            let prop = n.field("property")?;
            if !matches!(
                prop.kind(),
                "property_identifier" | "private_property_identifier"
            ) {
                return None;
            }
            let mut c = chain(w, n.field("object")?, depth + 1)?;
            c.push(w.text(prop).to_string());
            Some(c)
        }
        "non_null_expression" | "parenthesized_expression" => {
            chain(w, n.named_child(0)?, depth + 1)
        }
        _ => None,
    }
}

/// A member chain read as `kind`: a path when rooted at a name that is
/// not local, else members through the receiver of its root (a local,
/// `this`, or any expression: `f().x`, `new A().m()`).
fn member<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, n: Node<'t>, kind: RefKind, depth: u32) {
    let Some(mut segs) = chain(w, n, 0) else {
        let object = n.field("object");
        let prop = n.field("property").filter(|p| {
            matches!(
                p.kind(),
                "property_identifier" | "private_property_identifier"
            )
        });
        if let (Some(o), Some(p)) = (object, prop) {
            if let Some(recv) = cx.locals.expr_recv(w, o, 0) {
                let name = w.text(p).to_string();
                through_receiver(w, cx, recv, &[name], kind, n);
            }
        }
        if let Some(o) = object {
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
                    through_receiver(w, cx, recv, &segs[2..], kind, n);
                }
                segs.truncate(2);
                w.push_ref(cx.from, k, segs, Some(class), line(n));
            }
        }
        root if cx.locals.contains(root) => {
            if let Some(recv) = cx.locals.recv_of(w, root, n.start_byte(), 0) {
                through_receiver(w, cx, recv, &segs[1..], kind, n);
            }
        }
        _ => {
            segs.truncate(MAX_CHAIN);
            push(w, cx, kind, segs, n);
        }
    }
}

/// The members `names` reached one after another from `recv`, the last
/// read as `kind`.
fn through_receiver<'t>(
    w: &mut Walker<'_>,
    cx: &Cx<'_, 't>,
    mut recv: Recv,
    names: &[String],
    kind: RefKind,
    n: Node<'t>,
) {
    let names = &names[..names.len().min(MAX_CHAIN - 1)];
    for (i, m) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        w.push_recv_ref(
            cx.from,
            member_kind(kind, last),
            vec![m.clone()],
            cx.class,
            Some(recv.clone()),
            line(n),
        );
        recv = Recv::Field(Box::new(recv), m.clone());
    }
}

/// The keys of an object literal whose type is expected where it stands
/// (`const e: Event = { version: '1' }`, an argument, a return value):
/// references to that type's members (of a union, to the members of the
/// alternatives that declare the most of its keys: the literal is one of
/// them).
fn object_keys<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, n: Node<'t>) {
    let Some(recv) = cx.locals.context_of(w, n, 0) else {
        return;
    };
    let mut cur = n.walk();
    let keys: Vec<String> = n
        .named_children(&mut cur)
        .filter_map(|c| match c.kind() {
            "pair" | "method_definition" => {
                let key = c.field("key").or_else(|| c.field("name"))?;
                property_name(w, key)
            }
            "shorthand_property_identifier" => Some(w.text(c).to_string()),
            _ => None,
        })
        .collect();
    // Of a union, the literal is one of the alternatives that declare
    // its keys: the receiver carries them.
    let told = keys.iter().take(LITERAL_KEYS).cloned().collect();
    let literal = Recv::Literal(Box::new(recv), told);
    for k in keys {
        through_receiver(w, cx, literal.clone(), &[k], RefKind::Value, n);
    }
}

/// A JSX element's tag and attributes: a component (capitalised or
/// dotted) is called and its attributes are its first parameter's
/// members; an intrinsic tag (`div`) is the member of that name of
/// `JSX.IntrinsicElements` ([`JSX_ELEMENTS`]), and its attributes that
/// member's.
fn jsx_element<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, n: Node<'t>, depth: u32) {
    let name = n.field("name");
    let mut props = None;
    if let Some(t) = name {
        match t.kind() {
            "identifier" if w.text(t).starts_with(|c: char| c.is_ascii_uppercase()) => {
                name_ref(w, cx, RefKind::Call, t);
                props = cx
                    .locals
                    .expr_recv(w, t, 0)
                    .map(|f| Recv::Param(Box::new(f), 0));
            }
            "identifier" => {
                let tag = w.text(t).to_string();
                let elements = Recv::Type(match &w.jsx_source {
                    Some(s) => format!("import(\"{s}/jsx-runtime\").{JSX_ELEMENTS}"),
                    None => JSX_ELEMENTS.into(),
                });
                w.push_recv_ref(
                    cx.from,
                    RefKind::Field,
                    vec![tag.clone()],
                    cx.class,
                    Some(elements.clone()),
                    line(t),
                );
                props = Some(Recv::Field(Box::new(elements), tag));
            }
            "member_expression" => {
                member(w, cx, t, RefKind::Call, depth);
                props = cx
                    .locals
                    .expr_recv(w, t, 0)
                    .map(|f| Recv::Param(Box::new(f), 0));
            }
            _ => {}
        }
    }
    let mut cur = n.walk();
    let kids: Vec<Node<'_>> = n
        .named_children(&mut cur)
        .filter(|c| Some(c.id()) != name.map(|x| x.id()))
        .collect();
    for c in kids {
        if let (Some(p), "jsx_attribute") = (&props, c.kind()) {
            let attr = c
                .named_child(0)
                .filter(|a| a.kind() == "property_identifier");
            if let Some(a) = attr {
                let attr = w.text(a).to_string();
                w.push_recv_ref(
                    cx.from,
                    RefKind::Field,
                    vec![attr],
                    cx.class,
                    Some(p.clone()),
                    line(a),
                );
            }
        }
        refs_in(w, c, cx, depth + 1);
    }
}

/// Where TypeScript reads intrinsic JSX elements from: the `JSX` in
/// scope, or the one the file's `@jsxImportSource` module's
/// `jsx-runtime` exports (as the import type `import("…").JSX…`).
const JSX_ELEMENTS: &str = "JSX.IntrinsicElements";

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
fn callee<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, f: Node<'t>, depth: u32) {
    match f.kind() {
        "identifier" => name_ref(w, cx, RefKind::Call, f),
        "member_expression" | "non_null_expression" => member(w, cx, f, RefKind::Call, depth),
        _ => refs_in(w, f, cx, depth + 1),
    }
}

/// A heritage clause's entry: an `implements` reference to what it
/// names, the rest (type arguments, mixin calls) walked.
fn heritage<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, t: Node<'t>, depth: u32) {
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
            if let Some(name) = t.field("name") {
                heritage(w, cx, name, depth + 1);
            }
            if let Some(args) = t.field("type_arguments") {
                refs_in(w, args, cx, depth + 1);
            }
        }
        _ => refs_in(w, t, cx, depth + 1),
    }
}

/// The keys of a destructuring (`const { a, b: { c } } = x`, `({ req })
/// => …`) declared by `decl`: references to the members of what its value
/// is.
fn destructured_keys<'t>(
    w: &mut Walker<'_>,
    cx: &Cx<'_, 't>,
    pattern: Node<'t>,
    decl: Node<'t>,
    param: Option<(Node<'t>, u32)>,
) {
    if pattern.kind() != "object_pattern" {
        return;
    }
    if let Some(recv) = cx.locals.declared_recv(w, decl, param) {
        pattern_keys(w, cx, pattern, recv, 0);
    }
}

fn pattern_keys<'t>(
    w: &mut Walker<'_>,
    cx: &Cx<'_, 't>,
    pattern: Node<'t>,
    recv: Recv,
    depth: u32,
) {
    if depth > 8 {
        return;
    }
    let mut cur = pattern.walk();
    let kids: Vec<Node<'t>> = pattern.named_children(&mut cur).collect();
    for k in kids {
        let (key, nested) = match k.kind() {
            "shorthand_property_identifier_pattern" => (Some(w.text(k).to_string()), None),
            "object_assignment_pattern" => (k.field("left").map(|l| w.text(l).to_string()), None),
            "pair_pattern" => (
                k.field("key").and_then(|x| property_name(w, x)),
                k.field("value").filter(|v| v.kind() == "object_pattern"),
            ),
            _ => (None, None),
        };
        let Some(key) = key else { continue };
        through_receiver(
            w,
            cx,
            recv.clone(),
            std::slice::from_ref(&key),
            RefKind::Value,
            k,
        );
        if let Some(inner) = nested {
            pattern_keys(
                w,
                cx,
                inner,
                Recv::Field(Box::new(recv.clone()), key),
                depth + 1,
            );
        }
    }
}

/// The default values inside a binding pattern.
fn pattern_defaults<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, p: Node<'t>, depth: u32) {
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
            if let Some(v) = p.field("value") {
                pattern_defaults(w, cx, v, depth + 1);
            }
        }
        "object_assignment_pattern" | "assignment_pattern" => {
            if let Some(r) = p.field("right") {
                refs_in(w, r, cx, depth + 1);
            }
        }
        _ => {}
    }
}

fn refs_in<'t>(w: &mut Walker<'_>, n: Node<'t>, cx: &Cx<'_, 't>, depth: u32) {
    if depth > MAX_DEPTH || Some(n.id()) == cx.skip {
        return;
    }
    let field = |f: &str| n.field(f);
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
            let block = w
                .ctx
                .is_test_file
                .then(|| super::test_blocks::block(w, n, cx.from))
                .flatten();
            let around = w.test_block;
            w.test_block = block.or(around);
            walk_fields(w, cx, n, &["arguments", "type_arguments"], depth);
            w.test_block = around;
        }
        "new_expression" => {
            if let Some(f) = field("constructor") {
                callee(w, cx, f, depth);
            }
            walk_fields(w, cx, n, &["arguments", "type_arguments"], depth);
        }
        "jsx_opening_element" | "jsx_self_closing_element" => jsx_element(w, cx, n, depth),
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
        // `T["k"]`: `T`'s member `k` is read.
        "lookup_type" => {
            let (Some(object), Some(index)) = (n.named_child(0), n.named_child(1)) else {
                return;
            };
            let key = (index.kind() == "literal_type")
                .then(|| index.named_child(0))
                .flatten()
                .filter(|k| k.kind() == "string")
                .map(|k| super::imports::unquote(w.text(k)))
                .filter(|k| !k.is_empty());
            if let Some(key) = key {
                let base = super::extract::one_line(w.text(object));
                w.push_recv_ref(
                    cx.from,
                    RefKind::Field,
                    vec![key],
                    None,
                    Some(Recv::Type(base)),
                    line(n),
                );
            }
            refs_in(w, object, cx, depth + 1);
            refs_in(w, index, cx, depth + 1);
        }
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
                destructured_keys(w, cx, p, n, None);
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
            if let Some(p) = field("pattern") {
                destructured_keys(w, cx, p, n, parameter_of(w, n));
            }
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
        "object" => {
            object_keys(w, cx, n);
            let mut cur = n.walk();
            let kids: Vec<Node<'_>> = n.named_children(&mut cur).collect();
            for c in kids {
                refs_in(w, c, cx, depth + 1);
            }
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

/// The children in `fields`, field by field, each field's in source
/// order: one pass over the children.
fn walk_fields<'t>(w: &mut Walker<'_>, cx: &Cx<'_, 't>, n: Node<'t>, fields: &[&str], depth: u32) {
    let mut cur = n.walk();
    let mut kids: Vec<(usize, Node<'t>)> = Vec::new();
    if cur.goto_first_child() {
        loop {
            let field = cur.field_name();
            if let Some(i) = field.and_then(|f| fields.iter().position(|x| *x == f)) {
                kids.push((i, cur.node()));
            }
            if !cur.goto_next_sibling() {
                break;
            }
        }
    }
    kids.sort_by_key(|(i, _)| *i);
    for (_, c) in kids {
        refs_in(w, c, cx, depth + 1);
    }
}
