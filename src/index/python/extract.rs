//! One Python file's tree-sitter parse into a [`FileExtract`].
//!
//! One walk over the tree makes the entities — the file's module, its
//! classes, functions and methods (nested ones too), module variables,
//! class attributes and the instance attributes methods bind through
//! `self.x = …` — with docstrings, decorators, parameters and
//! annotations; its imports as [`UseDecl`]s; and its references
//! ([`super::exprs`]). Nothing here looks at another file.
//!
//! Python scoping decides what a name means before any other file is
//! read: a name bound anywhere in a function (parameter, assignment,
//! `for`, `with … as`, `except … as`, import, nested def) is local to it
//! throughout, unless declared `global`/`nonlocal`. A local's uses are
//! never references to a global of that name; when the local is bound
//! from a constructor call, a call or an annotation, its uses are
//! references through that value's type, which the resolver works out.
//!
//! The walk is bounded in depth, so a pathological file cannot overflow a
//! worker thread's stack; what lies deeper is skipped.

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::{Node, Parser, Tree};

use super::exprs::{self, Locals};
use crate::index::keys::KeyAllocator;
use crate::model::{
    Entity, EntityKind, FileContext, FileExtract, Param, ParamPattern, ParseStatus, RawRef,
    Signature, UseDecl, Visibility,
};

/// What makes two references of one entity the same.
type RefKey = (
    crate::model::RefKind,
    Vec<String>,
    Option<crate::model::Recv>,
);

/// Longest `Signature::text`, in chars.
const TEXT_CAP: usize = 300;
/// Deepest the walk goes.
pub(super) const MAX_DEPTH: u32 = 400;

/// Extracts Python files; one per thread, reused across files.
pub struct PyExtractor {
    parser: Parser,
}

impl Default for PyExtractor {
    fn default() -> Self {
        Self::new()
    }
}

impl PyExtractor {
    pub fn new() -> Self {
        let mut parser = Parser::new();
        let language: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        // The grammar is built against the tree-sitter this crate pins.
        let _ = parser.set_language(&language);
        PyExtractor { parser }
    }

    pub fn parse(&mut self, source: &str, old: Option<&Tree>) -> Option<Tree> {
        self.parser.parse(source, old)
    }

    pub fn extract(&mut self, ctx: &FileContext, source: &str) -> FileExtract {
        match self.parse(source, None) {
            Some(tree) => self.extract_tree(ctx, source, &tree),
            None => {
                let mut w = Walker::new(ctx, source);
                w.module_entity(None);
                w.finish(1)
            }
        }
    }

    pub fn extract_tree(&mut self, ctx: &FileContext, source: &str, tree: &Tree) -> FileExtract {
        let root = tree.root_node();
        let errors = count_errors(root);
        let mut w = Walker::new(ctx, source);
        w.module_entity(Some(root));
        let cx = Cx {
            from: 0,
            parent: 0,
            class: None,
            method_of: None,
            locals: None,
            is_test: ctx.is_test_file,
            depth: 0,
        };
        w.block(root, &cx);
        w.finish(errors)
    }
}

/// Where the walk is: whose references these are, whose children the
/// definitions are, and the scope names resolve in.
#[derive(Clone)]
pub(super) struct Cx<'l> {
    /// The entity references are attributed to.
    pub from: usize,
    /// The entity new definitions belong to.
    pub parent: usize,
    /// In a class body: the class.
    pub class: Option<usize>,
    /// In a method (or what it nests): its class and the name of its
    /// first parameter with whether that is the class (`cls`).
    pub method_of: Option<(usize, Option<(String, bool)>)>,
    /// The innermost function's locals, if in one.
    pub locals: Option<&'l Locals>,
    pub is_test: bool,
    pub depth: u32,
}

pub(super) struct Walker<'s> {
    pub src: &'s str,
    pub ctx: &'s FileContext,
    pub file: Arc<str>,
    pub module_path: Arc<[String]>,
    pub entities: Vec<Entity>,
    pub refs: Vec<RawRef>,
    pub uses: Vec<UseDecl>,
    keys: KeyAllocator,
    /// Per class entity: its member names so far (attributes bound by
    /// `self.x` are made once, where first bound).
    members: HashMap<usize, HashSet<String>>,
    /// Per class entity: the names its body binds, known before its
    /// methods are walked.
    class_names: HashMap<usize, HashSet<String>>,
    /// Functions by parent and name, so a def can join the overloads or
    /// the property it continues.
    defs: HashMap<(usize, String), usize>,
    /// Functions whose last def so far is an `@overload` stub.
    open_overloads: HashSet<usize>,
    /// Names bound at module level so far: the first binding is the
    /// variable's entity.
    module_names: HashSet<String>,
    seen_refs: HashSet<(usize, RefKey)>,
    exports: Vec<String>,
}

impl<'s> Walker<'s> {
    fn new(ctx: &'s FileContext, src: &'s str) -> Walker<'s> {
        Walker {
            src,
            ctx,
            file: Arc::from(ctx.path.as_str()),
            module_path: Arc::from(ctx.module_path.clone()),
            entities: Vec::new(),
            refs: Vec::new(),
            uses: Vec::new(),
            keys: KeyAllocator::default(),
            members: HashMap::default(),
            class_names: HashMap::default(),
            defs: HashMap::default(),
            open_overloads: HashSet::default(),
            module_names: HashSet::default(),
            seen_refs: HashSet::default(),
            exports: Vec::new(),
        }
    }

    pub fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    /// The dotted module path (`flask.sansio.app`).
    fn module_name(&self) -> String {
        if self.ctx.module_path.is_empty() {
            "__init__".to_string()
        } else {
            self.ctx.module_path.join(".")
        }
    }

    fn module_entity(&mut self, root: Option<Node<'_>>) {
        let name = self
            .ctx
            .module_path
            .last()
            .cloned()
            .unwrap_or_else(|| "__init__".into());
        let key = self
            .keys
            .allocate(format!("{}-{}", self.file, self.module_name()));
        let end = root.map_or(1, |r| r.end_position().row as u32 + 1).max(1);
        let doc = root.and_then(|r| self.docstring(r)).unwrap_or_default();
        self.entities.push(Entity {
            key: Arc::from(key),
            kind: EntityKind::Module,
            name,
            visibility: Visibility::Public,
            file: self.file.clone(),
            start_line: 1,
            end_line: end,
            module_path: self.module_path.clone(),
            doc,
            signature: Signature::default(),
            is_test: self.ctx.is_test_file,
            owner: None,
            trait_name: None,
            parent: None,
            language: super::ID,
        });
    }

    fn finish(mut self, errors: u32) -> FileExtract {
        if let Some(m) = self.entities.first_mut() {
            m.signature.exports = std::mem::take(&mut self.exports).into();
        }
        FileExtract {
            path: self.ctx.path.clone(),
            status: if errors == 0 {
                ParseStatus::Ok
            } else {
                ParseStatus::Partial
            },
            syntax_errors: errors,
            entities: self.entities,
            refs: self.refs,
            uses: self.uses,
            mods: Vec::new(),
            context: self.ctx.clone(),
            language: super::ID,
            // Docstrings are the entities' docs; a Python body's other
            // strings and comments are not read for the text index yet.
            texts: Vec::new(),
        }
    }

    /// A reference, once per entity and reference.
    pub fn push_ref(&mut self, from: usize, r: RawRef) {
        let k = (r.kind, r.path.clone(), r.receiver.clone());
        if self.seen_refs.insert((from, k)) {
            self.refs.push(r);
        }
    }

    /// The key of a child named `name` of entity `parent`.
    fn child_key(&mut self, parent: usize, name: &str) -> String {
        let p = &self.entities[parent];
        let key = match p.kind {
            EntityKind::Module => format!("{}-{}", p.key, name),
            EntityKind::Function | EntityKind::Method | EntityKind::Property => {
                format!("{}().{}", p.key, name)
            }
            _ => format!("{}.{}", p.key, name),
        };
        self.keys.allocate(key)
    }

    fn new_entity(&mut self, parent: usize, kind: EntityKind, name: &str, n: Node<'_>) -> usize {
        let key = self.child_key(parent, name);
        let p = &self.entities[parent];
        let owner = (p.kind == EntityKind::Class).then(|| p.name.clone());
        let visibility =
            if name.starts_with('_') && !(name.starts_with("__") && name.ends_with("__")) {
                Visibility::Private
            } else {
                Visibility::Public
            };
        self.entities.push(Entity {
            key: Arc::from(key),
            kind,
            name: name.to_string(),
            visibility,
            file: self.file.clone(),
            start_line: n.start_position().row as u32 + 1,
            end_line: n.end_position().row as u32 + 1,
            module_path: self.module_path.clone(),
            doc: String::new(),
            signature: Signature::default(),
            is_test: false,
            owner,
            trait_name: None,
            parent: Some(p.key.clone()),
            language: super::ID,
        });
        self.entities.len() - 1
    }

    /// The statements of a block (a module, a class or function body, or
    /// the branches of an `if`/`try`/`with`/`for`/`while` inside one).
    pub fn block(&mut self, n: Node<'_>, cx: &Cx<'_>) {
        if cx.depth > MAX_DEPTH {
            return;
        }
        let mut cur = n.walk();
        let children: Vec<Node<'_>> = n.named_children(&mut cur).collect();
        for c in children {
            self.statement(c, cx);
        }
    }

    fn statement(&mut self, n: Node<'_>, cx: &Cx<'_>) {
        let deeper = Cx {
            depth: cx.depth + 1,
            ..cx.clone()
        };
        match n.kind() {
            "function_definition" => self.function(n, &[], &deeper),
            "class_definition" => self.class(n, &[], &deeper),
            "decorated_definition" => {
                let mut cur = n.walk();
                let decorators: Vec<Node<'_>> = n
                    .named_children(&mut cur)
                    .filter(|c| c.kind() == "decorator")
                    .collect();
                match n.child_by_field_name("definition") {
                    Some(d) if d.kind() == "function_definition" => {
                        self.function(d, &decorators, &deeper)
                    }
                    Some(d) if d.kind() == "class_definition" => {
                        self.class(d, &decorators, &deeper)
                    }
                    _ => exprs::refs_in(self, n, &deeper),
                }
            }
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                super::imports::import(self, n, cx)
            }
            "expression_statement" => {
                let mut cur = n.walk();
                let kids: Vec<Node<'_>> = n.named_children(&mut cur).collect();
                for k in kids {
                    match k.kind() {
                        "assignment" => self.assignment(k, &deeper),
                        _ => exprs::refs_in(self, k, &deeper),
                    }
                }
            }
            "for_statement" => {
                let left = n.child_by_field_name("left").map(|l| l.id());
                let mut cur = n.walk();
                let kids: Vec<Node<'_>> = n.named_children(&mut cur).collect();
                for k in kids {
                    if Some(k.id()) == left {
                        continue;
                    }
                    match k.kind() {
                        "block" | "else_clause" => self.statement(k, &deeper),
                        _ => exprs::refs_in(self, k, &deeper),
                    }
                }
            }
            "block" => self.block(n, &deeper),
            "if_statement"
            | "try_statement"
            | "with_statement"
            | "while_statement"
            | "match_statement"
            | "else_clause"
            | "elif_clause"
            | "except_clause"
            | "finally_clause"
            | "case_clause"
            | "except_group_clause" => {
                let mut cur = n.walk();
                let kids: Vec<Node<'_>> = n.named_children(&mut cur).collect();
                for k in kids {
                    match k.kind() {
                        "block"
                        | "else_clause"
                        | "elif_clause"
                        | "except_clause"
                        | "finally_clause"
                        | "case_clause"
                        | "except_group_clause" => self.statement(k, &deeper),
                        _ => exprs::refs_in(self, k, &deeper),
                    }
                }
            }
            "comment" | "pass_statement" | "break_statement" | "continue_statement" => {}
            _ => exprs::refs_in(self, n, &deeper),
        }
    }

    /// An assignment: module variables and class attributes are entities
    /// (bound first here), `self.x = …` in a method makes its class's
    /// attribute; the value's references are the enclosing entity's.
    fn assignment(&mut self, n: Node<'_>, cx: &Cx<'_>) {
        let left = n.child_by_field_name("left");
        let right = n.child_by_field_name("right");
        let ann = n.child_by_field_name("type");
        if let Some(t) = ann {
            exprs::annotation_refs(self, t, cx);
        }
        let hint = exprs::value_hint(self, ann, right, cx);
        if let Some(l) = left {
            match l.kind() {
                "identifier" => {
                    let name = self.text(l);
                    if cx.locals.is_none() {
                        let name = name.to_string();
                        if name == "__all__" && cx.class.is_none() && cx.parent == 0 {
                            if let Some(r) = right {
                                self.exports = exprs::string_items(self, r);
                            }
                        }
                        self.binding(&name, n, hint, cx);
                    }
                }
                "pattern_list" | "tuple_pattern" | "list_pattern" => {
                    if cx.locals.is_none() {
                        let mut cur = l.walk();
                        let names: Vec<String> = l
                            .named_children(&mut cur)
                            .filter(|c| c.kind() == "identifier")
                            .map(|c| self.text(c).to_string())
                            .collect();
                        for name in names {
                            self.binding(&name, n, None, cx);
                        }
                    }
                }
                "attribute" => {
                    // `self.x = …` declares (or rebinds) the attribute: no
                    // reference; what `x` is set on elsewhere is one.
                    if !self.self_attribute(l, n, hint, cx) {
                        exprs::refs_in(self, l, cx);
                    }
                }
                _ => exprs::refs_in(self, l, cx),
            }
        }
        if let Some(r) = right {
            if r.kind() == "assignment" {
                self.assignment(r, cx);
            } else {
                exprs::refs_in(self, r, cx);
            }
        }
    }

    /// A name bound at module or class level: its entity, unless bound
    /// before.
    fn binding(&mut self, name: &str, n: Node<'_>, hint: Option<String>, cx: &Cx<'_>) {
        let kind = match cx.class {
            Some(c) if c == cx.parent => EntityKind::Attribute,
            Some(_) => return,
            None if cx.parent == 0 => EntityKind::Variable,
            None => return,
        };
        let fresh = match cx.class {
            Some(c) => self.members.entry(c).or_default().insert(name.to_string()),
            None => self.module_names.insert(name.to_string()),
        };
        if !fresh {
            return;
        }
        let i = self.new_entity(cx.parent, kind, name, n);
        let e = &mut self.entities[i];
        e.signature.ty = hint.map(Into::into);
        e.signature.text = one_line(self.src.get(n.byte_range()).unwrap_or(""));
        e.is_test = cx.is_test;
    }

    /// `self.x = …` in a method: the class's attribute `x`, made where
    /// first bound.
    /// Whether `target` is `self.x`.
    fn self_attribute(
        &mut self,
        target: Node<'_>,
        n: Node<'_>,
        hint: Option<String>,
        cx: &Cx,
    ) -> bool {
        let Some((class, Some((self_name, false)))) = &cx.method_of else {
            return false;
        };
        let (Some(obj), Some(attr)) = (
            target.child_by_field_name("object"),
            target.child_by_field_name("attribute"),
        ) else {
            return false;
        };
        if obj.kind() != "identifier" || self.text(obj) != self_name {
            return false;
        }
        let name = self.text(attr).to_string();
        if self
            .class_names
            .get(class)
            .is_some_and(|n| n.contains(&name))
            || !self.members.entry(*class).or_default().insert(name.clone())
        {
            return true;
        }
        let class_name = self.entities[*class].name.clone();
        let i = self.new_entity(*class, EntityKind::Attribute, &name, n);
        let e = &mut self.entities[i];
        // The hint is in the method's terms: `self` is the instance.
        e.signature.ty = hint.map(Into::into);
        e.signature.text = one_line(self.src.get(n.byte_range()).unwrap_or(""));
        // Bound through `self`, not in the class body: a base class's
        // declaration of the name is the attribute's.
        e.signature.self_type = Some(class_name.into());
        e.is_test = cx.is_test;
        true
    }

    fn class(&mut self, n: Node<'_>, decorators: &[Node<'_>], cx: &Cx<'_>) {
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
            let names = exprs::class_level_names(self, b);
            self.class_names.insert(i, names);
            self.block(b, &inner);
        }
    }

    /// A class member or module name now has an entity: later bindings
    /// of it make none.
    fn note_member(&mut self, cx: &Cx<'_>, name: &str) {
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

    fn function(&mut self, n: Node<'_>, decorators: &[Node<'_>], cx: &Cx<'_>) {
        let Some(name_node) = n.child_by_field_name("name") else {
            return exprs::refs_in(self, n, cx);
        };
        let name = self.text(name_node).to_string();
        let decos: Vec<String> = decorators
            .iter()
            .map(|d| one_line(self.text(*d).trim_start_matches('@')))
            .collect();
        let in_class = cx.class.is_some_and(|c| c == cx.parent);
        let is_property = decos.iter().any(|d| {
            matches!(
                d.as_str(),
                "property" | "cached_property" | "functools.cached_property"
            )
        });
        let kind = match (in_class, is_property) {
            (true, true) => EntityKind::Property,
            (true, false) => EntityKind::Method,
            _ => EntityKind::Function,
        };
        // `@overload` stubs and the implementation after them are one
        // function, as are a property and its setter and deleter: one
        // entity from the first def to the last.
        let is_overload = decos
            .iter()
            .any(|d| d == "overload" || d.ends_with(".overload"));
        let is_accessor = decos
            .iter()
            .any(|d| *d == format!("{name}.setter") || *d == format!("{name}.deleter"));
        let merge = self
            .defs
            .get(&(cx.parent, name.clone()))
            .copied()
            .filter(|&j| {
                self.open_overloads.contains(&j)
                    || (is_accessor && self.entities[j].kind == EntityKind::Property)
            });
        let i = match merge {
            Some(j) => {
                self.entities[j].end_line = n.end_position().row as u32 + 1;
                j
            }
            None => {
                let i = self.new_entity(cx.parent, kind, &name, n);
                self.defs.insert((cx.parent, name.clone()), i);
                self.note_member(cx, &name);
                i
            }
        };
        if is_overload {
            self.open_overloads.insert(i);
        } else {
            self.open_overloads.remove(&i);
        }
        // What a merged def adds: the implementation's signature replaces
        // the stubs'; an accessor's is the property's own.
        let keep_signature = merge.is_some() && (is_overload || is_accessor);
        let is_async = n.child(0).is_some_and(|c| c.kind() == "async");
        let body = n.child_by_field_name("body");
        let doc = body.and_then(|b| self.docstring(b)).unwrap_or_default();
        let params = n.child_by_field_name("parameters");
        let ret = n.child_by_field_name("return_type");
        let parameters = params.map(|p| self.parameters(p)).unwrap_or_default();
        let is_static = decos.iter().any(|d| d == "staticmethod");
        let is_classmethod = decos.iter().any(|d| d == "classmethod");
        let is_test = cx.is_test
            || (name.starts_with("test") && (cx.parent == 0 || in_class))
            || cx
                .class
                .is_some_and(|c| self.entities[c].is_test && in_class);
        let head_end = body.map_or(n.end_byte(), |b| b.start_byte());
        let text = one_line(self.src.get(n.start_byte()..head_end).unwrap_or(""));
        let ret_text = ret.map(|r| one_line(self.text(r)).into());
        let owner_name = if in_class {
            cx.class.map(|c| self.entities[c].name.clone().into())
        } else {
            None
        };
        let self_param = (in_class && !is_static)
            .then(|| parameters.first().map(|p| (p.name.clone(), is_classmethod)))
            .flatten();
        if !keep_signature {
            let e = &mut self.entities[i];
            if !doc.is_empty() || merge.is_none() {
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
        // Decorators, defaults and annotations are evaluated where the
        // def stands; their references are the function's own (as a
        // reader credits `@app.route` to the view it registers).
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
    fn docstring(&self, body: Node<'_>) -> Option<String> {
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
pub(super) fn one_line(s: &str) -> String {
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

fn count_errors(root: Node<'_>) -> u32 {
    if !root.has_error() {
        return 0;
    }
    let mut count = 0u32;
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            count = count.saturating_add(1);
        }
        if n.has_error() {
            let mut cur = n.walk();
            stack.extend(n.children(&mut cur));
        }
    }
    count.max(1)
}
