//! Field lookups on syntax nodes by name, without tree-sitter's scan of
//! every field name of the grammar on each call.
//!
//! `child_by_field_name` compares the name against the grammar's field
//! names one by one; the walks ask for fields at nearly every node, which
//! made that scan a sixth of extraction. Each thread keeps the ids it has
//! looked up, per grammar (TypeScript's and TSX's number fields
//! differently).

use std::cell::RefCell;
use std::num::NonZeroU16;

use rustc_hash::FxHashMap as HashMap;
use tree_sitter::Node;

/// A grammar's field ids by name; grammars told apart by their number of
/// node kinds.
type Ids = Vec<(usize, HashMap<Box<str>, Option<NonZeroU16>>)>;

thread_local! {
    static IDS: RefCell<Ids> = const { RefCell::new(Vec::new()) };
}

fn field_id(n: &Node<'_>, name: &str) -> Option<NonZeroU16> {
    let lang = n.language();
    let grammar = lang.node_kind_count();
    IDS.with_borrow_mut(|ids| {
        let i = match ids.iter().position(|(g, _)| *g == grammar) {
            Some(i) => i,
            None => {
                ids.push((grammar, HashMap::default()));
                ids.len() - 1
            }
        };
        let known = &mut ids[i].1;
        if let Some(&id) = known.get(name) {
            return id;
        }
        let id = lang.field_id_for_name(name);
        known.insert(name.into(), id);
        id
    })
}

/// [`Node::child_by_field_name`] through the ids each thread keeps.
pub(crate) trait Fields<'t> {
    fn field(&self, name: &str) -> Option<Node<'t>>;
}

impl<'t> Fields<'t> for Node<'t> {
    fn field(&self, name: &str) -> Option<Node<'t>> {
        self.child_by_field_id(field_id(self, name)?.get())
    }
}

#[cfg(test)]
mod tests {
    use super::Fields;

    /// The cached lookups find what tree-sitter's own do, in both
    /// grammars, and nothing for a name no grammar has.
    #[test]
    fn fields_are_found_as_by_name_in_both_grammars() {
        for lang in [
            tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
            tree_sitter_typescript::LANGUAGE_TSX,
        ] {
            let mut p = tree_sitter::Parser::new();
            p.set_language(&lang.into()).unwrap();
            let t = p.parse("f<T>(a, b); const x: number = 1", None).unwrap();
            let mut stack = vec![t.root_node()];
            while let Some(n) = stack.pop() {
                for name in [
                    "function",
                    "arguments",
                    "type_arguments",
                    "name",
                    "type",
                    "value",
                ] {
                    assert_eq!(n.field(name), n.child_by_field_name(name), "{name}");
                }
                assert_eq!(n.field("no_such_field"), None);
                let mut c = n.walk();
                stack.extend(n.children(&mut c));
            }
        }
    }
}
