//! Imports and exports as [`UseDecl`]s, from the file's module.
//!
//! The path's first segment is the specifier as written (`./context`,
//! `hono`), empty for a file's own names; the second, when there is one,
//! the name imported or exported. So:
//!
//! | form | path | alias | glob | is_pub |
//! |---|---|---|---|---|
//! | `import { a as b } from 's'` | `s a` | `b` | | |
//! | `import d from 's'` | `s default` | `d` | | |
//! | `import * as ns from 's'`, `import ns = require('s')` | `s` | `ns` | | |
//! | `import 's'` | `s` | | | |
//! | `export { a as b } from 's'` | `s a` | `b` | | yes |
//! | `export * from 's'` | `s` | | yes | yes |
//! | `export * as ns from 's'` | `s` | `ns` | | yes |
//! | `export { a as b }`, `export default a` | `"" a` | `b`, `default` | | yes |
//!
//! `import type` and `export type` read the same; CommonJS's `require`
//! and `module.exports` the same too ([`super::commonjs`]).

use tree_sitter::Node;

use super::extract::Walker;
use super::syntax::Fields;
use crate::model::UseDecl;

/// A string literal's contents.
pub(crate) fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
        .to_string()
}

pub(crate) fn push_use(
    w: &mut Walker<'_>,
    path: Vec<String>,
    alias: Option<String>,
    glob: bool,
    is_pub: bool,
    n: Node<'_>,
) {
    let from = w.entities[0].key.to_string();
    w.uses.push(UseDecl {
        from,
        scope: w.ctx.module_path.clone(),
        path,
        alias,
        glob,
        is_pub,
        line: n.start_position().row as u32 + 1,
    });
}

/// An `import` statement; one inside a namespace is read as the file's.
pub(crate) fn import(w: &mut Walker<'_>, n: Node<'_>, _parent: usize) {
    let mut cur = n.walk();
    let children: Vec<Node<'_>> = n.named_children(&mut cur).collect();
    if let Some(req) = children
        .iter()
        .find(|c| c.kind() == "import_require_clause")
    {
        let (Some(id), Some(src)) = (req.named_child(0), req.field("source")) else {
            return;
        };
        let alias = w.text(id).to_string();
        let spec = unquote(w.text(src));
        push_use(w, vec![spec], Some(alias), false, false, n);
        return;
    }
    let Some(src) = n.field("source") else {
        return;
    };
    let spec = unquote(w.text(src));
    let Some(clause) = children.iter().find(|c| c.kind() == "import_clause") else {
        push_use(w, vec![spec], None, false, false, n);
        return;
    };
    let mut cur = clause.walk();
    for c in clause.named_children(&mut cur) {
        match c.kind() {
            "identifier" => {
                let alias = w.text(c).to_string();
                push_use(
                    w,
                    vec![spec.clone(), "default".into()],
                    Some(alias),
                    false,
                    false,
                    n,
                );
            }
            "namespace_import" => {
                if let Some(id) = c.named_child(0) {
                    let alias = w.text(id).to_string();
                    push_use(w, vec![spec.clone()], Some(alias), false, false, n);
                }
            }
            "named_imports" => {
                let mut cur = c.walk();
                for s in c.named_children(&mut cur) {
                    if s.kind() != "import_specifier" {
                        continue;
                    }
                    let Some(name) = s.field("name") else {
                        continue;
                    };
                    let name = unquote(w.text(name));
                    let alias = s
                        .field("alias")
                        .map_or_else(|| name.clone(), |a| w.text(a).to_string());
                    push_use(w, vec![spec.clone(), name], Some(alias), false, false, n);
                }
            }
            _ => {}
        }
    }
}

/// `export { … } from 's'`, `export * from 's'`, `export * as ns from
/// 's'`, `export { … }`.
pub(crate) fn export(w: &mut Walker<'_>, n: Node<'_>) {
    let spec = n.field("source").map(|s| unquote(w.text(s)));
    let mut cur = n.walk();
    let children: Vec<Node<'_>> = n.named_children(&mut cur).collect();
    let clause = children.iter().find(|c| c.kind() == "export_clause");
    match (clause, spec) {
        (Some(clause), spec) => {
            let mut cur = clause.walk();
            for s in clause.named_children(&mut cur) {
                if s.kind() != "export_specifier" {
                    continue;
                }
                let Some(name) = s.field("name") else {
                    continue;
                };
                let name = unquote(w.text(name));
                let alias = s
                    .field("alias")
                    .map_or_else(|| name.clone(), |a| unquote(w.text(a)));
                let first = spec.clone().unwrap_or_default();
                push_use(w, vec![first, name], Some(alias), false, true, n);
            }
        }
        (None, Some(spec)) => match children.iter().find(|c| c.kind() == "namespace_export") {
            Some(ns) => {
                let alias = ns.named_child(0).map(|id| unquote(w.text(id)));
                push_use(w, vec![spec], alias, false, true, n);
            }
            None => push_use(w, vec![spec], None, true, true, n),
        },
        (None, None) => {}
    }
}

/// A file's own name exported, under `alias` if given.
pub(crate) fn local_export(w: &mut Walker<'_>, name: &str, alias: Option<&str>, n: Node<'_>) {
    push_use(
        w,
        vec![String::new(), name.to_string()],
        Some(alias.unwrap_or(name).to_string()),
        false,
        true,
        n,
    );
}
