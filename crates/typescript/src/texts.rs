//! A TypeScript file's string literals and comments, each kept for the
//! entity that holds it (see [`crate::index::body_text`]).
//!
//! One pass over the tree after the entities are made: an item belongs to
//! the innermost entity whose lines contain it. A `/** … */` comment
//! right before a declaration is skipped: it is that entity's doc.

use tree_sitter::Node;

/// Deepest the walk goes.
const MAX_DEPTH: u32 = 400;

use crate::index::body_text::BodyTexts;
use crate::model::Entity;

/// The texts of `root`'s file, as [`crate::model::FileExtract::texts`].
pub(super) fn body_texts(root: Node<'_>, src: &str, entities: &[Entity]) -> Vec<(u32, String)> {
    let items = items(root, src);
    if items.is_empty() {
        return Vec::new();
    }
    let owners = crate::index::body_text::owners_of_lines(
        entities,
        items.iter().map(|(line, _)| *line),
        |_| true,
    );
    let mut texts = BodyTexts::default();
    for ((_, text), owner) in items.iter().zip(owners) {
        texts.note(owner, text);
    }
    texts.into_pairs()
}

/// Every literal and comment but docs as `(line, text)`, in source order:
/// one cursor's walk, not descending into literals or past [`MAX_DEPTH`].
fn items<'s>(root: Node<'_>, src: &'s str) -> Vec<(u32, &'s str)> {
    let lang = root.language();
    let id = |kind: &str| lang.id_for_node_kind(kind, true);
    let (comment, string, template) = (id("comment"), id("string"), id("template_string"));
    let mut out = Vec::new();
    let mut cur = root.walk();
    let mut depth = 0u32;
    loop {
        let n = cur.node();
        let kind = n.kind_id();
        let line = n.start_position().row as u32 + 1;
        let leaf = if kind == comment {
            let t = text(n, src);
            if !(t.starts_with("/**") && documents(n)) {
                out.push((line, t));
            }
            true
        } else if kind == string || kind == template {
            out.push((line, text(n, src)));
            true
        } else {
            depth >= MAX_DEPTH
        };
        if !leaf && cur.goto_first_child() {
            depth += 1;
            continue;
        }
        while !cur.goto_next_sibling() {
            if depth == 0 || !cur.goto_parent() {
                return out;
            }
            depth -= 1;
        }
    }
}

/// Whether a comment sits right before a declaration (is its doc).
fn documents(c: Node<'_>) -> bool {
    c.next_sibling().is_some_and(|n| {
        n.kind() != "comment" && n.start_position().row <= c.end_position().row + 1
    })
}

fn text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    src.get(n.byte_range()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use crate::model::FileContext;
    use crate::TsExtractor;

    #[test]
    fn literals_and_comments_go_to_the_innermost_entity_docs_aside() {
        let ctx = FileContext {
            path: "src/a.ts".into(),
            package: "p".into(),
            unit: String::new(),
            module_path: vec!["src".into(), "a".into()],
            is_test_file: false,
            path_aliases: Vec::new(),
        };
        let src = "// top note\nconst TIMEOUT = 'timed out'\n/** Doc, not text. */\nexport function login(user: string) {\n  // check first\n  throw new Error(`no such user: ${user}`)\n}\n";
        let ex = TsExtractor::new().extract(&ctx, src);
        let got: Vec<(String, String)> = ex
            .texts
            .iter()
            .map(|(i, t)| (ex.entities[*i as usize].name.clone(), t.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a".to_string(), "// top note".to_string()),
                ("TIMEOUT".to_string(), "'timed out'".to_string()),
                (
                    "login".to_string(),
                    "// check first `no such user: ${user}`".to_string()
                ),
            ]
        );
    }
}
