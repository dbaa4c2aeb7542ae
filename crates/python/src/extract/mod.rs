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

use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::{Node, Parser, Tree};

use super::exprs::{self, Locals};

mod defs;
use crate::index::keys::KeyAllocator;
use crate::model::{
    Entity, EntityKind, FileContext, FileExtract, ParseStatus, RawRef, Signature, UseDecl,
    Visibility,
};
pub(super) use defs::one_line;

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
        let mut extract = w.finish(errors);
        extract.texts = super::texts::body_texts(root, source, &extract.entities);
        extract
    }
}

/// In a method (or what it nests): its class, and the name of its first
/// parameter with whether that is the class (`cls`).
pub(super) type MethodOf = Option<(usize, Option<(Rc<str>, bool)>)>;

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
    /// See [`MethodOf`].
    pub method_of: MethodOf,
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
    /// Per class entity: its members declared with a type so far (`x: int`
    /// in its body, `self.x: int = …` in a method).
    typed_members: HashMap<usize, HashSet<String>>,
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
            typed_members: HashMap::default(),
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
            children: Vec::new(),
            context: self.ctx.clone(),
            language: super::ID,
            // Read from the tree once the entities are known
            // (`super::texts`).
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
        for c in n.named_children(&mut cur) {
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
                for k in n.named_children(&mut cur) {
                    match k.kind() {
                        "assignment" => self.assignment(k, &deeper),
                        _ => exprs::refs_in(self, k, &deeper),
                    }
                }
            }
            "for_statement" => {
                let left = n.child_by_field_name("left").map(|l| l.id());
                let mut cur = n.walk();
                for k in n.named_children(&mut cur) {
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
                for k in n.named_children(&mut cur) {
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
                    // reference, unless it is declared with a type; what
                    // `x` is set on elsewhere is one.
                    if !self.self_attribute(l, n, hint, ann.is_some(), cx) {
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
    /// first bound. Once `x` is declared with a type (`x: int` in the
    /// class body, `self.x: int = …`), a plain assignment to it is a use
    /// of that declaration, as a type checker reads it: a reference.
    /// Whether `target` is `self.x`.
    fn self_attribute(
        &mut self,
        target: Node<'_>,
        n: Node<'_>,
        hint: Option<String>,
        annotated: bool,
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
        if obj.kind() != "identifier" || self.text(obj) != &**self_name {
            return false;
        }
        let name = self.text(attr).to_string();
        let typed = self.typed_members.entry(*class).or_default();
        if annotated {
            typed.insert(name.clone());
        } else if typed.contains(&name) {
            exprs::refs_in(self, target, cx);
            return true;
        }
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
