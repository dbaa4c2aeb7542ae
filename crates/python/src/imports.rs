//! Python imports as [`UseDecl`]s.
//!
//! The path says which form it is: `import a.b.c [as d]` gives
//! `["a", "b", "c"]` (it binds `a`, or `d` for the whole path); `from
//! M import n [as m]` gives the dots of its level first (`""` for an
//! absolute import, `"."`, `".."`), then `M`'s segments, then `n`
//! (`from ..x import y` → `["..", "x", "y"]`); `from M import *` is a
//! glob with the path of `M`. An import at module level is an attribute
//! of the module (`is_pub`, so re-exports need no marking); one inside a
//! function binds a local of that function (`from` is its key).

use tree_sitter::Node;

use super::extract::{Cx, Walker};
use crate::model::UseDecl;

pub(super) fn import(w: &mut Walker<'_>, n: Node<'_>, cx: &Cx<'_>) {
    let from = w.entities[cx.from].key.to_string();
    let module_level = cx.from == 0;
    let line = n.start_position().row as u32 + 1;
    let push = |w: &mut Walker<'_>, path: Vec<String>, alias: Option<String>, glob: bool| {
        if path.iter().skip(1).any(|s| s.is_empty()) {
            return;
        }
        w.uses.push(UseDecl {
            from: from.clone(),
            scope: w.ctx.module_path.clone(),
            path,
            alias,
            glob,
            is_pub: module_level,
            line,
        });
    };
    match n.kind() {
        "import_statement" => {
            let mut cur = n.walk();
            let names: Vec<Node<'_>> = n.children_by_field_name("name", &mut cur).collect();
            for name in names {
                let (path, alias) = aliased(w, name);
                if !path.is_empty() {
                    push(w, path, alias, false);
                }
            }
        }
        "import_from_statement" => {
            let Some(m) = n.child_by_field_name("module_name") else {
                return;
            };
            let mut base: Vec<String> = Vec::new();
            if m.kind() == "relative_import" {
                let mut cur = m.walk();
                let mut dots = String::new();
                let mut rest = Vec::new();
                for c in m.named_children(&mut cur) {
                    match c.kind() {
                        "import_prefix" => dots = w.text(c).trim().to_string(),
                        "dotted_name" => rest = dotted(w, c),
                        _ => {}
                    }
                }
                base.push(dots);
                base.extend(rest);
            } else {
                base.push(String::new());
                base.extend(dotted(w, m));
            }
            let mut cur = n.walk();
            if n.named_children(&mut cur)
                .any(|c| c.kind() == "wildcard_import")
            {
                push(w, base, None, true);
                return;
            }
            let mut cur = n.walk();
            let names: Vec<Node<'_>> = n.children_by_field_name("name", &mut cur).collect();
            for name in names {
                let (path, alias) = aliased(w, name);
                if path.len() == 1 {
                    let mut p = base.clone();
                    p.extend(path);
                    push(w, p, alias, false);
                }
            }
        }
        _ => {}
    }
}

fn dotted(w: &Walker<'_>, n: Node<'_>) -> Vec<String> {
    let mut cur = n.walk();
    n.named_children(&mut cur)
        .filter(|c| c.kind() == "identifier")
        .map(|c| w.text(c).to_string())
        .collect()
}

fn aliased(w: &Walker<'_>, n: Node<'_>) -> (Vec<String>, Option<String>) {
    match n.kind() {
        "dotted_name" => (dotted(w, n), None),
        "aliased_import" => {
            let path = n
                .child_by_field_name("name")
                .map(|p| dotted(w, p))
                .unwrap_or_default();
            let alias = n
                .child_by_field_name("alias")
                .map(|a| w.text(a).to_string());
            (path, alias)
        }
        _ => (Vec::new(), None),
    }
}
