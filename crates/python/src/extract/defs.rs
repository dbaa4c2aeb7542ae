//! Definitions: classes and functions (methods, properties and
//! overloads among them) with their signatures — decorators, bases,
//! parameters with annotations and defaults, return annotations — and
//! docstrings.

use std::rc::Rc;

use tree_sitter::Node;

use super::{exprs, Cx, Walker, TEXT_CAP};
use crate::model::{EntityKind, Param, ParamPattern};

impl Walker<'_> {
    pub(super) fn class(&mut self, n: Node<'_>, decorators: &[Node<'_>], cx: &Cx<'_>) {
        let Some(name_node) = n.child_by_field_name("name") else {
            return exprs::refs_in(self, n, cx);
        };
        let name = self.text(name_node).to_string();
        let i = self.new_entity(cx.parent, EntityKind::Class, &name, n);
        self.note_member(cx, &name);
        let bases_node = n.child_by_field_name("superclasses");
        let mut bases = Vec::new();
        if let Some(b) = bases_node {
            let mut cur = b.walk();
            for a in b.named_children(&mut cur) {
                if a.kind() != "keyword_argument" && a.kind() != "comment" {
                    bases.push(one_line(self.text(a)));
                }
            }
        }
        let is_test_class =
            name.starts_with("Test") || bases.iter().any(|b| b.ends_with("TestCase")) || cx.is_test;
        let body = n.child_by_field_name("body");
        let head_end = body.map_or(n.end_byte(), |b| b.start_byte());
        let doc = body.and_then(|b| self.docstring(b)).unwrap_or_default();
        let decos: Vec<String> = decorators
            .iter()
            .map(|d| one_line(self.text(*d).trim_start_matches('@')))
            .collect();
        let text = one_line(self.src.get(n.start_byte()..head_end).unwrap_or(""));
        {
            let e = &mut self.entities[i];
            e.doc = doc;
            e.is_test = is_test_class;
            e.signature.bases = bases.into();
            e.signature.decorators = decos.into();
            e.signature.text = text;
        }
        let inner = Cx {
            from: i,
            parent: i,
            class: Some(i),
            method_of: None,
            locals: None,
            is_test: is_test_class,
            depth: cx.depth + 1,
        };
        for d in decorators {
            exprs::refs_in(self, *d, &inner);
        }
        if let Some(b) = bases_node {
            exprs::bases_refs(self, b, &inner);
        }
        if let Some(b) = body {
            // Class-level names first: `x: int` below `__init__` still is
            // the attribute `self.x` binds.
            let (names, typed) = exprs::class_level_names(self, b);
            self.class_names.insert(i, names);
            self.typed_members.insert(i, typed);
            self.block(b, &inner);
        }
    }

    /// A class member or module name now has an entity: later bindings
    /// of it make none.
    pub(super) fn note_member(&mut self, cx: &Cx<'_>, name: &str) {
        match cx.class {
            Some(c) if c == cx.parent => {
                self.members.entry(c).or_default().insert(name.to_string());
            }
            None if cx.parent == 0 => {
                self.module_names.insert(name.to_string());
            }
            _ => {}
        }
    }

    pub(super) fn function(&mut self, n: Node<'_>, decorators: &[Node<'_>], cx: &Cx<'_>) {
        let Some(name_node) = n.child_by_field_name("name") else {
            return exprs::refs_in(self, n, cx);
        };
        let name = self.text(name_node).to_string();
        let decos: Vec<String> = decorators
            .iter()
            .map(|d| one_line(self.text(*d).trim_start_matches('@')))
            .collect();
        let in_class = cx.class.is_some_and(|c| c == cx.parent);
        let kind = def_kind(in_class, &decos);
        // `@overload` stubs and the implementation after them are one
        // function, as are a property and its setter and deleter: one
        // entity from the first def to the last.
        let is_overload = decos
            .iter()
            .any(|d| d == "overload" || d.ends_with(".overload"));
        let is_accessor = decos
            .iter()
            .any(|d| *d == format!("{name}.setter") || *d == format!("{name}.deleter"));
        let (i, merged) = self.def_entity(n, cx, &name, kind, is_accessor);
        if is_overload {
            self.open_overloads.insert(i);
        } else {
            self.open_overloads.remove(&i);
        }
        // What a merged def adds: the implementation's signature replaces
        // the stubs'; an accessor's is the property's own.
        let keep_signature = merged && (is_overload || is_accessor);
        let is_async = n.child(0).is_some_and(|c| c.kind() == "async");
        let body = n.child_by_field_name("body");
        let doc = body.and_then(|b| self.docstring(b)).unwrap_or_default();
        let params = n.child_by_field_name("parameters");
        let ret = n.child_by_field_name("return_type");
        let parameters = params.map(|p| self.parameters(p)).unwrap_or_default();
        let is_test = self.def_is_test(cx, &name, in_class);
        let head_end = body.map_or(n.end_byte(), |b| b.start_byte());
        let text = one_line(self.src.get(n.start_byte()..head_end).unwrap_or(""));
        let ret_text = ret.map(|r| one_line(self.text(r)).into());
        let owner_name = if in_class {
            cx.class.map(|c| self.entities[c].name.clone().into())
        } else {
            None
        };
        let self_param = self_param_of(in_class, &decos, &parameters);
        if !keep_signature {
            let e = &mut self.entities[i];
            if !doc.is_empty() || !merged {
                e.doc = doc;
            }
            e.is_test = is_test;
            e.signature.is_async = is_async;
            e.signature.decorators = decos.into();
            e.signature.return_type = ret_text;
            e.signature.parameters = parameters.into();
            e.signature.text = text;
            e.signature.self_type = owner_name;
        }
        let method_of = if in_class {
            cx.class.map(|c| (c, self_param))
        } else {
            cx.method_of.clone()
        };
        self.def_head_refs(i, decorators, params, ret, cx);
        let Some(body) = body else { return };
        let locals = exprs::locals_of(self, params, body, &method_of, cx);
        let inner = Cx {
            from: i,
            parent: i,
            class: None,
            method_of,
            locals: Some(&locals),
            is_test,
            depth: cx.depth + 1,
        };
        self.block(body, &inner);
    }

    /// The def's entity, and whether it is an earlier one this def merges
    /// into (an open `@overload`, or the property an accessor belongs to),
    /// which then reaches to this def's end; else a new entity.
    fn def_entity(
        &mut self,
        n: Node<'_>,
        cx: &Cx<'_>,
        name: &str,
        kind: EntityKind,
        is_accessor: bool,
    ) -> (usize, bool) {
        let merge = self
            .defs
            .get(&(cx.parent, name.to_string()))
            .copied()
            .filter(|&j| {
                self.open_overloads.contains(&j)
                    || (is_accessor && self.entities[j].kind == EntityKind::Property)
            });
        match merge {
            Some(j) => {
                self.entities[j].end_line = n.end_position().row as u32 + 1;
                (j, true)
            }
            None => {
                let i = self.new_entity(cx.parent, kind, name, n);
                self.defs.insert((cx.parent, name.to_string()), i);
                self.note_member(cx, name);
                (i, false)
            }
        }
    }

    /// A def is a test in a test file or class, or when its name starts
    /// with `test` at module level or in a class.
    fn def_is_test(&self, cx: &Cx<'_>, name: &str, in_class: bool) -> bool {
        cx.is_test
            || (name.starts_with("test") && (cx.parent == 0 || in_class))
            || cx
                .class
                .is_some_and(|c| self.entities[c].is_test && in_class)
    }

    /// Decorators, defaults and annotations are evaluated where the def
    /// stands; their references are the function's own (as a reader
    /// credits `@app.route` to the view it registers).
    fn def_head_refs(
        &mut self,
        i: usize,
        decorators: &[Node<'_>],
        params: Option<Node<'_>>,
        ret: Option<Node<'_>>,
        cx: &Cx<'_>,
    ) {
        let outer = Cx {
            from: i,
            ..cx.clone()
        };
        for d in decorators {
            exprs::refs_in(self, *d, &outer);
        }
        if let Some(p) = params {
            exprs::parameter_refs(self, p, &outer);
        }
        if let Some(r) = ret {
            exprs::annotation_refs(self, r, &outer);
        }
    }

    fn parameters(&self, p: Node<'_>) -> Vec<Param> {
        let mut out = Vec::new();
        let mut cur = p.walk();
        for c in p.named_children(&mut cur) {
            let (name, ty, default) = match c.kind() {
                "identifier" => (self.text(c).to_string(), None, None),
                "typed_parameter" => {
                    let mut cc = c.walk();
                    let name = c
                        .named_children(&mut cc)
                        .find(|k| k.kind() != "type")
                        .map(|k| self.text(k).to_string())
                        .unwrap_or_default();
                    (name, c.child_by_field_name("type"), None)
                }
                "default_parameter" | "typed_default_parameter" => (
                    c.child_by_field_name("name")
                        .map(|k| self.text(k).to_string())
                        .unwrap_or_default(),
                    c.child_by_field_name("type"),
                    c.child_by_field_name("value"),
                ),
                "list_splat_pattern" | "dictionary_splat_pattern" => {
                    (self.text(c).to_string(), None, None)
                }
                "keyword_separator" => ("*".to_string(), None, None),
                "positional_separator" => ("/".to_string(), None, None),
                _ => continue,
            };
            out.push(Param {
                name,
                ty: ty.map(|t| one_line(self.text(t))).unwrap_or_default(),
                pattern: ParamPattern::Owned,
                default: default.map(|d| one_line(self.text(d))),
            });
        }
        out
    }

    /// The docstring of a module, class or function body: its first
    /// statement when that is a string.
    pub(super) fn docstring(&self, body: Node<'_>) -> Option<String> {
        let mut cur = body.walk();
        let first = body
            .named_children(&mut cur)
            .find(|c| c.kind() != "comment")?;
        if first.kind() != "expression_statement" {
            return None;
        }
        let s = first.named_child(0)?;
        if s.kind() != "string" {
            return None;
        }
        let mut cc = s.walk();
        let content: String = s
            .named_children(&mut cc)
            .filter(|c| c.kind() == "string_content")
            .map(|c| self.text(c))
            .collect();
        Some(dedent(&content))
    }
}

/// A text on one line, whitespace runs as one space, capped.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(TEXT_CAP));
    for (i, w) in s.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
        if out.len() > TEXT_CAP {
            let mut cut = TEXT_CAP;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push('…');
            break;
        }
    }
    out.trim_end_matches(':').trim_end().to_string()
}

/// A docstring's lines with the common indentation of all but the first
/// removed (as `inspect.cleandoc`), blank edges trimmed.
fn dedent(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            out.push(l.trim());
        } else {
            out.push(
                l.get(indent.min(l.len() - l.trim_start().len())..)
                    .unwrap_or(l)
                    .trim_end(),
            );
        }
    }
    out.join("\n").trim().to_string()
}

/// A def in a class body is a method, or a property when decorated as
/// one; elsewhere it is a function.
fn def_kind(in_class: bool, decos: &[String]) -> EntityKind {
    let is_property = decos.iter().any(|d| {
        matches!(
            d.as_str(),
            "property" | "cached_property" | "functools.cached_property"
        )
    });
    match (in_class, is_property) {
        (true, true) => EntityKind::Property,
        (true, false) => EntityKind::Method,
        _ => EntityKind::Function,
    }
}

/// A method's first parameter (unless it is a static method), and
/// whether it is a class method's `cls`.
fn self_param_of(
    in_class: bool,
    decos: &[String],
    parameters: &[Param],
) -> Option<(Rc<str>, bool)> {
    let is_static = decos.iter().any(|d| d == "staticmethod");
    let is_classmethod = decos.iter().any(|d| d == "classmethod");
    (in_class && !is_static)
        .then(|| {
            parameters
                .first()
                .map(|p| (Rc::from(p.name.as_str()), is_classmethod))
        })
        .flatten()
}
