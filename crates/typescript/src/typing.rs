//! What a unit's locals and expressions are, as far as its own text tells:
//! the receivers ([`Recv`]) resolution later turns into classes.
//!
//! A binding is typed by its annotation (`c: Context`), else by its
//! initializer (`= new Hono()`, `= app.request(…)`, `= await f()`,
//! `= x as T`), else — a parameter of an arrow function or function
//! expression written without a type — by the type its function is
//! expected to have there: the parameter of the call's argument
//! (`app.get('/', (c) => …)` is `Param(Arg(app.get, 1), 0)`), of the
//! enclosing function's return type (`(): MiddlewareHandler => async
//! (c, next) => …`), of an annotated binding, or of a typed object's
//! property. Each binding has the lexical scope it is declared in (its
//! block, or its function for `var` and parameters), so the many `const
//! app` of a test file's callbacks are each their own.
//!
//! Nothing here looks at another file: a name that is not local is a
//! [`Recv::Value`] path, a call of one a [`Recv::Call`]; resolution reads
//! their declarations.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

use super::extract::Walker;
use super::syntax::Fields;
use crate::model::Recv;

/// Deepest a receiver is followed through bindings and contexts.
const MAX_STEPS: u32 = 12;

/// How a binding gets its value.
#[derive(Clone, Copy)]
enum How<'t> {
    /// Its type annotation (the `type_annotation` node).
    Typed(Node<'t>),
    /// Its initializer.
    Init(Node<'t>),
    /// Parameter `n` of function `f`, written without a type.
    Param(Node<'t>, u32),
    /// An element of what the expression iterates (`for (const a of xs)`).
    ElementOf(Node<'t>),
    /// Nothing its text tells (a `function`'s untyped parameter, a
    /// destructured name): it hides a binding of its name around it.
    Unknown,
}

#[derive(Clone)]
struct Binding<'t> {
    /// The byte range the binding is seen in.
    scope: (usize, usize),
    how: How<'t>,
    /// The keys a destructuring takes from that value (`const { a: { b } }
    /// = x` binds `b` as `x.a.b`).
    keys: Vec<String>,
}

/// The names a unit binds, and how each binding is typed.
#[derive(Default)]
pub(crate) struct Locals<'t> {
    pub names: HashSet<String>,
    bound: HashMap<String, Vec<Binding<'t>>>,
}

impl<'t> Locals<'t> {
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// A name bound by the unit without its type known.
    pub fn insert(&mut self, name: String) {
        self.names.insert(name);
    }

    /// How declaration `decl` gives its value: a `variable_declarator`, or
    /// a parameter of function `func` at position `index`.
    fn how_of(decl: Node<'t>, param: Option<(Node<'t>, u32)>) -> How<'t> {
        if let Some(t) = decl.field("type") {
            How::Typed(t)
        } else if let Some((func, index)) = param {
            match func.kind() {
                "arrow_function" | "function_expression" | "generator_function" => {
                    How::Param(func, index)
                }
                _ => How::Unknown,
            }
        } else if let Some(v) = decl.field("value") {
            How::Init(v)
        } else {
            How::Unknown
        }
    }

    /// Binding the names of `pattern` (an identifier, or a destructuring
    /// `{ a, b: { c } }`) by declaration `decl`, or by a parameter of
    /// function `func` at position `index`.
    pub fn bind(
        &mut self,
        w: &Walker<'_>,
        pattern: Node<'t>,
        decl: Node<'t>,
        param: Option<(Node<'t>, u32)>,
    ) {
        let how = Self::how_of(decl, param);
        let scope = scope_of(decl, param.map(|(f, _)| f));
        self.bind_pattern(w, pattern, scope, how, Vec::new());
    }

    /// Every name of a pattern with no type known (a `catch` variable).
    pub fn bind_unknown(
        &mut self,
        w: &Walker<'_>,
        pattern: Node<'t>,
        decl: Node<'t>,
        func: Option<Node<'t>>,
    ) {
        let scope = scope_of(decl, func);
        self.bind_pattern(w, pattern, scope, How::Unknown, Vec::new());
    }

    fn bind_pattern(
        &mut self,
        w: &Walker<'_>,
        pattern: Node<'t>,
        scope: (usize, usize),
        how: How<'t>,
        keys: Vec<String>,
    ) {
        match pattern.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                let text = w.text(pattern).to_string();
                self.names.insert(text.clone());
                self.bound
                    .entry(text)
                    .or_default()
                    .push(Binding { scope, how, keys });
            }
            "object_pattern" => {
                let mut cur = pattern.walk();
                let kids: Vec<Node<'t>> = pattern.named_children(&mut cur).collect();
                for k in kids {
                    let (key, inner) = match k.kind() {
                        "shorthand_property_identifier_pattern" => {
                            (Some(w.text(k).to_string()), Some(k))
                        }
                        "pair_pattern" => (
                            k.field("key").and_then(|x| property_name(w, x)),
                            k.field("value"),
                        ),
                        "object_assignment_pattern" => {
                            let left = k.field("left");
                            (left.map(|l| w.text(l).to_string()), left)
                        }
                        _ => (None, Some(k)),
                    };
                    let Some(inner) = inner else { continue };
                    match key {
                        Some(key) => {
                            let mut keys = keys.clone();
                            keys.push(key);
                            self.bind_pattern(w, inner, scope, how, keys);
                        }
                        None => self.bind_pattern(w, inner, scope, How::Unknown, Vec::new()),
                    }
                }
            }
            "assignment_pattern" => {
                if let Some(l) = pattern.field("left") {
                    self.bind_pattern(w, l, scope, how, keys);
                }
            }
            _ => {
                // An array pattern's, a rest pattern's names: no type told.
                let mut cur = pattern.walk();
                let kids: Vec<Node<'t>> = pattern.named_children(&mut cur).collect();
                for k in kids {
                    self.bind_pattern(w, k, scope, How::Unknown, Vec::new());
                }
            }
        }
    }

    /// The receiver the value declaration `decl` gives is: what its
    /// destructuring keys are members of.
    pub fn declared_recv(
        &self,
        w: &Walker<'_>,
        decl: Node<'t>,
        param: Option<(Node<'t>, u32)>,
    ) -> Option<Recv> {
        self.how_recv(w, Self::how_of(decl, param), 0)
    }

    /// Binding `name` to the elements `for (const name of xs)` iterates.
    pub fn bind_element(&mut self, w: &Walker<'_>, name: Node<'t>, of: Node<'t>, scope: Node<'t>) {
        let text = w.text(name).to_string();
        self.names.insert(text.clone());
        self.bound.entry(text).or_default().push(Binding {
            scope: (scope.start_byte(), scope.end_byte()),
            how: How::ElementOf(of),
            keys: Vec::new(),
        });
    }

    /// The receiver local `name` is at byte `at`: its innermost binding
    /// seen there.
    pub fn recv_of(&self, w: &Walker<'_>, name: &str, at: usize, steps: u32) -> Option<Recv> {
        if steps > MAX_STEPS {
            return None;
        }
        let b = self
            .bound
            .get(name)?
            .iter()
            .filter(|b| b.scope.0 <= at && at < b.scope.1)
            .min_by_key(|b| b.scope.1 - b.scope.0)?;
        let mut recv = self.how_recv(w, b.how, steps)?;
        for k in &b.keys {
            recv = Recv::Field(Box::new(recv), k.clone());
        }
        Some(recv)
    }

    fn how_recv(&self, w: &Walker<'_>, how: How<'t>, steps: u32) -> Option<Recv> {
        match how {
            How::Typed(t) => written_type(w, t),
            How::Init(v) => self.expr_recv(w, v, steps + 1),
            How::Param(f, i) => Some(Recv::Param(Box::new(self.context_of(w, f, steps + 1)?), i)),
            How::ElementOf(xs) => {
                Some(Recv::Element(Box::new(self.expr_recv(w, xs, steps + 1)?)))
            }
            How::Unknown => None,
        }
    }

    /// The receiver an expression's value is.
    pub fn expr_recv(&self, w: &Walker<'_>, e: Node<'t>, steps: u32) -> Option<Recv> {
        if steps > MAX_STEPS {
            return None;
        }
        let inner = |f: &str| e.field(f);
        match e.kind() {
            "identifier" => {
                let name = w.text(e);
                if self.contains(name) {
                    self.recv_of(w, name, e.start_byte(), steps + 1)
                } else {
                    Some(Recv::Value(vec![name.to_string()]))
                }
            }
            "this" => Some(Recv::Type("this".into())),
            "member_expression" => {
                let prop = inner("property").filter(|p| is_property(p.kind()))?;
                let obj = self.expr_recv(w, inner("object")?, steps + 1)?;
                Some(match obj {
                    Recv::Value(mut path) => {
                        path.push(w.text(prop).to_string());
                        Recv::Value(path)
                    }
                    obj => Recv::Field(Box::new(obj), w.text(prop).to_string()),
                })
            }
            "call_expression" => {
                let f = inner("function")?;
                match f.kind() {
                    "member_expression" => {
                        let prop = f.field("property").filter(|p| is_property(p.kind()))?;
                        let obj = self.expr_recv(w, f.field("object")?, steps + 1)?;
                        let name = w.text(prop).to_string();
                        Some(match obj {
                            Recv::Value(mut path) => {
                                path.push(name);
                                Recv::Call(path)
                            }
                            obj => Recv::Method(Box::new(obj), name),
                        })
                    }
                    "identifier" if !self.contains(w.text(f)) => {
                        Some(Recv::Call(vec![w.text(f).to_string()]))
                    }
                    _ => None,
                }
            }
            "new_expression" => {
                let c = inner("constructor")?;
                matches!(c.kind(), "identifier" | "member_expression")
                    .then(|| Recv::Type(w.text(c).to_string()))
            }
            "as_expression" => {
                let t = e.named_child(1)?;
                type_recv(w, t)
            }
            "subscript_expression" => {
                let index = inner("index")?;
                if index.kind() == "string" {
                    let key = super::imports::unquote(w.text(index));
                    let obj = self.expr_recv(w, inner("object")?, steps + 1)?;
                    return Some(Recv::Field(Box::new(obj), key));
                }
                let obj = self.expr_recv(w, inner("object")?, steps + 1)?;
                Some(Recv::Element(Box::new(obj)))
            }
            "await_expression"
            | "non_null_expression"
            | "parenthesized_expression"
            | "satisfies_expression" => self.expr_recv(w, e.named_child(0)?, steps + 1),
            // `a ?? b`, `a || b`: `a`'s type, else `b`'s; `c ? a : b` the
            // same of its branches.
            "binary_expression"
                if e.field("operator")
                    .is_some_and(|o| matches!(w.text(o), "??" | "||")) =>
            {
                self.either(w, inner("left")?, inner("right")?, steps)
            }
            "ternary_expression" => {
                self.either(w, inner("consequence")?, inner("alternative")?, steps)
            }
            _ => None,
        }
    }

    /// The type of one of two expressions a value is, the first's if it
    /// tells.
    fn either(&self, w: &Walker<'_>, a: Node<'t>, b: Node<'t>, steps: u32) -> Option<Recv> {
        self.expr_recv(w, a, steps + 1)
            .or_else(|| self.expr_recv(w, b, steps + 1))
    }

    /// The type an expression is expected to have where it stands, as a
    /// receiver: a call's argument, a return value, an annotated
    /// binding's value, a typed object's property.
    pub fn context_of(&self, w: &Walker<'_>, e: Node<'t>, steps: u32) -> Option<Recv> {
        if steps > MAX_STEPS {
            return None;
        }
        let p = e.parent()?;
        match p.kind() {
            "arguments" => {
                let call = p.parent()?;
                let index = position_in(p, e)?;
                let callee = match call.kind() {
                    "call_expression" => self.callee_recv(w, call.field("function")?, steps)?,
                    "new_expression" => {
                        let c = call.field("constructor")?;
                        match self.expr_recv(w, c, steps + 1)? {
                            v @ Recv::Value(_) => v,
                            _ => return None,
                        }
                    }
                    _ => return None,
                };
                Some(Recv::Arg(Box::new(callee), index))
            }
            "parenthesized_expression" | "satisfies_expression" | "as_expression" => {
                if p.kind() != "parenthesized_expression" {
                    let t = p.named_child(1)?;
                    return type_recv(w, t);
                }
                self.context_of(w, p, steps + 1)
            }
            "return_statement" => {
                let f = enclosing_function(p)?;
                self.returns_of(w, f)
            }
            "arrow_function" if p.field("body").is_some_and(|b| b.id() == e.id()) => {
                self.returns_of(w, p)
            }
            "variable_declarator" | "public_field_definition"
                if p.field("value").is_some_and(|v| v.id() == e.id()) =>
            {
                written_type(w, p.field("type")?)
            }
            "pair" if p.field("value").is_some_and(|v| v.id() == e.id()) => {
                let key = p.field("key")?;
                let key = property_name(w, key)?;
                let object = p.parent()?;
                Some(Recv::Field(
                    Box::new(self.context_of(w, object, steps + 1)?),
                    key,
                ))
            }
            _ => None,
        }
    }

    /// The type function `f` is declared to return.
    fn returns_of(&self, w: &Walker<'_>, f: Node<'t>) -> Option<Recv> {
        written_type(w, f.field("return_type")?)
    }

    /// The function a call calls, as a receiver: a path's value, or a
    /// member of a receiver (`app.get`).
    fn callee_recv(&self, w: &Walker<'_>, f: Node<'t>, steps: u32) -> Option<Recv> {
        match self.expr_recv(w, f, steps + 1)? {
            Recv::Type(_) => None,
            r => Some(r),
        }
    }
}

/// Whether a member expression's property is a name.
fn is_property(kind: &str) -> bool {
    matches!(kind, "property_identifier" | "private_property_identifier")
}

/// A property key as a name: `a`, `'a'`, `"a"`.
pub(crate) fn property_name(w: &Walker<'_>, key: Node<'_>) -> Option<String> {
    match key.kind() {
        "property_identifier" | "private_property_identifier" => Some(w.text(key).to_string()),
        "string" => {
            let s = super::imports::unquote(w.text(key));
            (!s.is_empty()).then_some(s)
        }
        _ => None,
    }
}

/// The receiver a `type_annotation` (`: T`) or a type node stands for:
/// the type as written on one line.
fn written_type(w: &Walker<'_>, t: Node<'_>) -> Option<Recv> {
    let t = if t.kind() == "type_annotation" {
        t.named_child(0)?
    } else {
        t
    };
    type_recv(w, t)
}

/// A type node as a receiver; `None` for what names nothing
/// (`string`, `any`, a literal type).
fn type_recv(w: &Walker<'_>, t: Node<'_>) -> Option<Recv> {
    if matches!(t.kind(), "predefined_type" | "literal_type" | "object_type") {
        return None;
    }
    let text = super::extract::one_line(w.text(t));
    (!text.is_empty()).then_some(Recv::Type(text))
}

/// The position of `e` among the arguments `args` (comments aside).
fn position_in(args: Node<'_>, e: Node<'_>) -> Option<u32> {
    let mut cur = args.walk();
    let i = args
        .named_children(&mut cur)
        .filter(|c| c.kind() != "comment")
        .position(|c| c.id() == e.id())?;
    u32::try_from(i).ok()
}

/// Kinds of node a function is.
pub(crate) fn is_function(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function"
            | "function_expression"
            | "generator_function"
            | "function_declaration"
            | "generator_function_declaration"
            | "method_definition"
    )
}

/// The function a `return` is in.
fn enclosing_function(n: Node<'_>) -> Option<Node<'_>> {
    let mut cur = n.parent();
    while let Some(p) = cur {
        if is_function(p.kind()) {
            return Some(p);
        }
        if matches!(p.kind(), "class_body" | "program") {
            return None;
        }
        cur = p.parent();
    }
    None
}

/// The byte range a binding declared by `decl` is seen in: its
/// function's for a parameter (`func`) or a `var`, else its block's.
fn scope_of(decl: Node<'_>, func: Option<Node<'_>>) -> (usize, usize) {
    if let Some(f) = func {
        return (f.start_byte(), f.end_byte());
    }
    let is_var = decl
        .parent()
        .is_some_and(|d| d.kind() == "variable_declaration");
    let mut cur = decl.parent();
    let mut last = decl;
    while let Some(p) = cur {
        let block = if is_var {
            is_function(p.kind()) || p.kind() == "program"
        } else {
            matches!(
                p.kind(),
                "statement_block"
                    | "program"
                    | "for_statement"
                    | "for_in_statement"
                    | "switch_body"
                    | "class_static_block"
            ) || is_function(p.kind())
        };
        if block {
            return (p.start_byte(), p.end_byte());
        }
        last = p;
        cur = p.parent();
    }
    (last.start_byte(), last.end_byte())
}
