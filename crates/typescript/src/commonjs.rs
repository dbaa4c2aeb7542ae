//! CommonJS: `require` as imports, `module.exports` and `exports.x` as
//! exports, read at a module's top level.
//!
//! | form | read as |
//! |---|---|
//! | `const x = require('s')` | `import * as x from 's'` |
//! | `const { a, b: c } = require('s')` | `import { a, b as c } from 's'` |
//! | `const { a } = x`, `x` bound to a module above (`require('s')`, `import * as x`) | `import { a } from 's'` |
//! | `require('s')` | `import 's'` |
//! | `module.exports = x` | `export default x` |
//! | `module.exports = require('s')` | `export * from 's'` and its `default` |
//! | `exports = module.exports = x` | as `module.exports = x` |
//! | `module.exports = { a, b: c, d() {} }` | `export { a, c as b }`, and `export function d` |
//! | `module.exports = function f() {}`, `= class A {}` | a function or class exported as `default` |
//! | `exports.a = …`, `module.exports.a = …` | `export function a` when `…` is a function, else `export const a` |
//!
//! A module whose `module.exports` is one value is called, constructed or
//! read through by its `default` (see `resolve::walk`), as `require`
//! gives that value.

use tree_sitter::Node;

use super::extract::{function_signature, Walker};
use super::imports::{local_export, push_use, unquote};
use super::refs;
use super::syntax::Fields;
use crate::model::{EntityKind, Visibility};

/// The specifier of `require('s')`, when `n` is that call.
fn required(w: &Walker<'_>, n: Node<'_>) -> Option<String> {
    if n.kind() != "call_expression" {
        return None;
    }
    let f = n.field("function")?;
    if f.kind() != "identifier" || w.text(f) != "require" {
        return None;
    }
    let arg = n.field("arguments")?.named_child(0)?;
    (arg.kind() == "string").then(|| unquote(w.text(arg)))
}

/// The specifier of the module a top-level name `n` is bound to (by
/// `import * as n` or `const n = require('s')` above it).
fn bound_module(w: &Walker<'_>, n: Node<'_>) -> Option<String> {
    if n.kind() != "identifier" {
        return None;
    }
    let name = w.text(n);
    let from: &str = &w.entities[0].key;
    w.uses
        .iter()
        .rev()
        .find(|u| u.from == from && u.alias.as_deref() == Some(name))
        .filter(|u| u.path.len() == 1 && !u.glob)
        .map(|u| u.path[0].clone())
}

/// A top-level `const`/`let`/`var` declarator bound to `require(…)` or to
/// a module a name above is bound to: its imports. `false` when it is no
/// such declarator.
pub(crate) fn require_binding(w: &mut Walker<'_>, v: Node<'_>) -> bool {
    let (Some(name), Some(value)) = (v.field("name"), v.field("value")) else {
        return false;
    };
    let Some(spec) = required(w, value).or_else(|| bound_module(w, value)) else {
        return false;
    };
    match name.kind() {
        "identifier" => {
            let alias = w.text(name).to_string();
            push_use(w, vec![spec], Some(alias), false, false, v);
        }
        "object_pattern" => {
            let mut cur = name.walk();
            let parts: Vec<Node<'_>> = name.named_children(&mut cur).collect();
            for p in parts {
                let (key, alias) = match p.kind() {
                    "shorthand_property_identifier_pattern" => (p, p),
                    "pair_pattern" => {
                        let (Some(k), Some(a)) = (p.field("key"), p.field("value")) else {
                            continue;
                        };
                        if a.kind() != "identifier" {
                            continue;
                        }
                        (k, a)
                    }
                    _ => continue,
                };
                let key = unquote(w.text(key));
                let alias = w.text(alias).to_string();
                push_use(w, vec![spec.clone(), key], Some(alias), false, false, v);
            }
        }
        _ => return false,
    }
    true
}

/// A top-level expression statement that is a `require` or an export:
/// what it imports, exports and declares. `false` when it is neither.
pub(crate) fn statement(w: &mut Walker<'_>, n: Node<'_>, module: usize) -> bool {
    let Some(e) = n.named_child(0) else {
        return false;
    };
    if let Some(spec) = required(w, e) {
        push_use(w, vec![spec], None, false, false, n);
        return true;
    }
    if e.kind() != "assignment_expression" {
        return false;
    }
    let (Some(mut left), Some(mut right)) = (e.field("left"), e.field("right")) else {
        return false;
    };
    // `exports = module.exports = x`: the `module.exports` of the chain.
    while export_target(w, left).is_none() && right.kind() == "assignment_expression" {
        match (right.field("left"), right.field("right")) {
            (Some(l), Some(r)) => (left, right) = (l, r),
            _ => break,
        }
    }
    match export_target(w, left) {
        Some(Target::Whole) => whole(w, n, right, module),
        // A declaration of the module's top level, public: exported.
        Some(Target::Named(name)) => declare(w, n, right, module, &name),
        None => return false,
    }
    true
}

enum Target {
    /// `module.exports`
    Whole,
    /// `exports.x`, `module.exports.x`
    Named(String),
}

fn export_target(w: &Walker<'_>, left: Node<'_>) -> Option<Target> {
    if left.kind() != "member_expression" {
        return None;
    }
    let text: String = w.text(left).split_whitespace().collect();
    if text == "module.exports" {
        return Some(Target::Whole);
    }
    let prop = left.field("property")?;
    let obj: String = w.text(left.field("object")?).split_whitespace().collect();
    (matches!(obj.as_str(), "exports" | "module.exports") && prop.kind() == "property_identifier")
        .then(|| Target::Named(w.text(prop).to_string()))
}

/// `module.exports = …`.
fn whole(w: &mut Walker<'_>, n: Node<'_>, value: Node<'_>, module: usize) {
    // `module.exports = require('./lib/x')`: all of it, its value too.
    if let Some(spec) = required(w, value) {
        push_use(w, vec![spec.clone()], None, true, true, n);
        push_use(
            w,
            vec![spec, "default".into()],
            Some("default".into()),
            false,
            true,
            n,
        );
        return;
    }
    match value.kind() {
        "identifier" => {
            let name = w.text(value).to_string();
            local_export(w, &name, Some("default"), n);
        }
        "object" => {
            let mut cur = value.walk();
            let members: Vec<Node<'_>> = value.named_children(&mut cur).collect();
            for m in members {
                match m.kind() {
                    "shorthand_property_identifier" => {
                        let name = w.text(m).to_string();
                        local_export(w, &name, None, m);
                    }
                    "pair" => {
                        let (Some(k), Some(v)) = (m.field("key"), m.field("value")) else {
                            continue;
                        };
                        let key = unquote(w.text(k));
                        if v.kind() == "identifier" {
                            let name = w.text(v).to_string();
                            local_export(w, &name, Some(&key), m);
                        } else if is_function(v) {
                            declare(w, m, v, module, &key);
                        } else {
                            refs::unit(w, v, module, None);
                        }
                    }
                    "method_definition" => {
                        let Some(k) = m.field("name") else {
                            continue;
                        };
                        let key = unquote(w.text(k));
                        declare(w, m, m, module, &key);
                    }
                    _ => refs::unit(w, m, module, None),
                }
            }
        }
        "function_expression" | "generator_function" | "arrow_function" | "class" => {
            let name = value
                .field("name")
                .map_or("default".to_string(), |x| w.text(x).to_string());
            declare(w, n, value, module, &name);
            local_export(w, &name, Some("default"), n);
        }
        _ => refs::unit(w, value, module, None),
    }
}

fn is_function(v: Node<'_>) -> bool {
    matches!(
        v.kind(),
        "function_expression" | "generator_function" | "arrow_function"
    )
}

/// A declaration `name` of the module made by an export assignment
/// written as `outer`: a function (its parameters its signature, its
/// body its references), a class, or a `const` whose value the module
/// reads.
fn declare(w: &mut Walker<'_>, outer: Node<'_>, value: Node<'_>, module: usize, name: &str) {
    if value.kind() == "class" {
        let i = w.new_entity(module, EntityKind::Class, name, outer, Visibility::Public);
        w.class_body(value, outer, i, 0);
        return;
    }
    let func = is_function(value) || value.kind() == "method_definition";
    let kind = if func {
        EntityKind::Function
    } else {
        EntityKind::Const
    };
    let i = w.new_entity(module, kind, name, outer, Visibility::Public);
    if func {
        w.entities[i].signature = function_signature(w, value, outer);
        refs::unit(w, value, i, None);
    } else {
        w.entities[i].signature.text = super::extract::first_line(w, outer);
        refs::unit(w, value, module, None);
    }
}
