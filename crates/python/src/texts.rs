//! A Python file's string literals and comments, each kept for the entity
//! that holds it (see [`crate::index::body_text`]).
//!
//! One pass over the tree after the entities are made: an item belongs to
//! the innermost function, class or module-level binding whose lines
//! contain it, and a decorator's (`@app.route("/login")`) to the
//! definition it decorates. Docstrings are skipped: they are the
//! entities' docs already. Attributes bound through `self.x = …` are not
//! owners: their literals are the method's that binds them.

use tree_sitter::Node;

use crate::index::body_text::BodyTexts;
use crate::model::{Entity, EntityKind};

/// The texts of `root`'s file, as [`crate::model::FileExtract::texts`].
pub(super) fn body_texts(root: Node<'_>, src: &str, entities: &[Entity]) -> Vec<(u32, String)> {
    let items = items(root, src);
    if items.is_empty() {
        return Vec::new();
    }
    let owners = crate::index::body_text::owners_of_lines(
        entities,
        items.iter().map(|(line, _)| *line),
        may_own,
    );
    let mut texts = BodyTexts::default();
    for ((_, text), owner) in items.iter().zip(owners) {
        texts.note(owner, text);
    }
    texts.into_pairs()
}

/// Every literal and comment outside a docstring as `(line, text)`, in
/// source order; `line` (1-based) is the one its owner is looked up at.
fn items<'s>(root: Node<'_>, src: &'s str) -> Vec<(u32, &'s str)> {
    let mut out = Vec::new();
    let mut skip = Vec::new();
    if let Some(d) = docstring_of(root) {
        skip.push(d);
    }
    // (node, the line a decorator's contents count at)
    let mut stack: Vec<(Node<'_>, Option<u32>)> = vec![(root, None)];
    while let Some((n, at)) = stack.pop() {
        let line = at.unwrap_or(n.start_position().row as u32 + 1);
        match n.kind() {
            "comment" => out.push((line, text(n, src))),
            "string" | "concatenated_string" => {
                if !skip.contains(&n.id()) {
                    out.push((line, text(n, src)));
                }
            }
            kind => {
                if matches!(kind, "function_definition" | "class_definition") {
                    if let Some(d) = n.child_by_field_name("body").and_then(docstring_of) {
                        skip.push(d);
                    }
                }
                // A decorator is read as part of what it decorates.
                let decorated = (kind == "decorated_definition")
                    .then(|| n.child_by_field_name("definition"))
                    .flatten()
                    .map(|d| d.start_position().row as u32 + 1);
                // Children in reverse, so that they come off the stack in
                // source order; leaves other than comments hold nothing.
                let first = stack.len();
                let mut cur = n.walk();
                for c in n.children(&mut cur) {
                    if c.child_count() == 0 && !matches!(c.kind(), "comment" | "string") {
                        continue;
                    }
                    let at = match (decorated, c.kind()) {
                        (Some(line), "decorator") => Some(line),
                        _ => at,
                    };
                    stack.push((c, at));
                }
                stack[first..].reverse();
            }
        }
    }
    // Source order (a decorator's items sort at their definition's line).
    out.sort_by_key(|(line, _)| *line);
    out
}

/// The id of the string that is `body`'s docstring: its first statement,
/// when that is a lone string.
fn docstring_of(body: Node<'_>) -> Option<usize> {
    let mut cur = body.walk();
    let first = body
        .named_children(&mut cur)
        .find(|c| c.kind() != "comment")?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    let s = first.named_child(0)?;
    matches!(s.kind(), "string" | "concatenated_string").then(|| s.id())
}

fn text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    src.get(n.byte_range()).unwrap_or("")
}

/// Entities a literal can be written in: definitions and the bindings of
/// a module or class body, not the attributes methods bind on `self`.
fn may_own(e: &Entity) -> bool {
    match e.kind {
        EntityKind::Attribute => e.signature.self_type.is_none(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use crate::model::FileContext;
    use crate::PyExtractor;

    fn texts_by_name(src: &str) -> Vec<(String, String)> {
        let ctx = FileContext {
            path: "pkg/mod.py".into(),
            package: "pkg".into(),
            unit: "pkg".into(),
            module_path: vec!["pkg".into(), "mod".into()],
            is_test_file: false,
            path_aliases: Vec::new(),
        };
        let ex = PyExtractor::new().extract(&ctx, src);
        ex.texts
            .iter()
            .map(|(i, t)| (ex.entities[*i as usize].name.clone(), t.clone()))
            .collect()
    }

    #[test]
    fn literals_and_comments_go_to_the_innermost_definition() {
        let src = r#""""Module doc."""
# top-level note
TIMEOUT = "connect timed out"

@app.route("/login")
def login(user):
    """Doc, not text."""
    # check the password first
    if not user:
        raise ValueError(f"no such user: {user!r}")

class Store:
    """Class doc."""
    kind = 'sqlite'

    def open(self):
        self.path = "graph.db"
        return "opened"
"#;
        let got = texts_by_name(src);
        assert_eq!(
            got,
            vec![
                ("mod".to_string(), "# top-level note".to_string()),
                ("TIMEOUT".to_string(), "\"connect timed out\"".to_string()),
                (
                    "login".to_string(),
                    "\"/login\" # check the password first f\"no such user: {user!r}\"".to_string()
                ),
                ("kind".to_string(), "'sqlite'".to_string()),
                ("open".to_string(), "\"graph.db\" \"opened\"".to_string()),
            ]
        );
    }

    #[test]
    fn a_file_without_literals_has_no_texts() {
        assert!(texts_by_name("def f(x):\n    return x + 1\n").is_empty());
    }
}
