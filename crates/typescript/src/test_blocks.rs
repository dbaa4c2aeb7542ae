//! Test cases written as calls: `describe('…', () => …)`, `it('…', …)`,
//! `test('…', …)` in a test file (jest, vitest, mocha, `node:test`,
//! Playwright).
//!
//! Such a test has no declaration for the language to name, so the module
//! keeps the references its callbacks make, as TypeScript's own
//! find-references and scip-typescript attribute them. A block becomes a
//! `test` entity on top of that, named by its title and nested in the
//! block around it, and the calls made inside it are its calls too: they
//! become its `calls` and `tests` edges, so what a function's tests are
//! can be answered case by case rather than file by file.
//!
//! A call is a test block when its callee is one of the runners' names
//! (`describe`, `it`, `test`, …), optionally with modifiers (`it.only`,
//! `test.describe.parallel`, `it.each(table)`, `test.skipIf(c)`), its
//! first argument is a title, and a later argument is a function. Inside
//! a block, `t.test('…', fn)` (a `node:test` subtest) is one too.

use tree_sitter::Node;

use super::extract::{first_line, Walker};
use super::syntax::Fields;
use crate::model::{EntityKind, Visibility};

/// Names a runner gives its suites and cases.
const RUNNERS: &[&str] = &[
    "describe",
    "fdescribe",
    "xdescribe",
    "suite",
    "context",
    "it",
    "fit",
    "xit",
    "test",
    "xtest",
    "specify",
];

/// Properties that qualify a runner's call without changing what it is.
const MODIFIERS: &[&str] = &[
    "only",
    "skip",
    "todo",
    "concurrent",
    "sequential",
    "each",
    "failing",
    "fails",
    "fixme",
    "serial",
    "parallel",
    "describe",
    "skipIf",
    "runIf",
    "for",
];

/// Longest title kept, in chars.
const TITLE_CHARS: usize = 120;

/// If `call` (a `call_expression`) is a test block, its new entity: a
/// child of the block around it, else of `from`.
pub(crate) fn block(w: &mut Walker<'_>, call: Node<'_>, from: usize) -> Option<usize> {
    let callee = call.field("function")?;
    if !is_runner(w, callee, w.test_block.is_some(), 0) {
        return None;
    }
    let args = call.field("arguments")?;
    let mut cur = args.walk();
    let mut named = args.named_children(&mut cur);
    let title = title(w, named.next()?)?;
    if !named.any(|a| matches!(a.kind(), "arrow_function" | "function_expression")) {
        return None;
    }
    let parent = w.test_block.unwrap_or(from);
    let i = w.new_entity(parent, EntityKind::Test, &title, call, Visibility::Private);
    w.entities[i].is_test = true;
    w.entities[i].signature.text = first_line(w, call);
    Some(i)
}

/// Whether `f` names a runner: `it`, `it.only`, `it.each(table)`,
/// `test.describe.parallel`; `x.test` inside a block (`node:test`'s
/// subtests).
fn is_runner(w: &Walker<'_>, f: Node<'_>, in_block: bool, depth: u32) -> bool {
    if depth > 4 {
        return false;
    }
    match f.kind() {
        "identifier" => RUNNERS.contains(&w.text(f)),
        "member_expression" => {
            let (Some(object), Some(property)) = (f.field("object"), f.field("property")) else {
                return false;
            };
            let property = w.text(property);
            if MODIFIERS.contains(&property) {
                return is_runner(w, object, in_block, depth + 1);
            }
            in_block && depth == 0 && object.kind() == "identifier" && property == "test"
        }
        // `it.each(table)('adds %i', …)`, `test.skipIf(cond)('…', …)`
        "call_expression" => f.field("function").is_some_and(|g| {
            g.kind() == "member_expression" && is_runner(w, g, in_block, depth + 1)
        }),
        _ => false,
    }
}

/// A block's title: a string's text, a template's text, or a name as
/// written (`describe(Router, …)`); whitespace runs as one space.
fn title(w: &Walker<'_>, arg: Node<'_>) -> Option<String> {
    let text = match arg.kind() {
        "string" => super::imports::unquote(w.text(arg)),
        "template_string" => w.text(arg).trim_matches('`').to_string(),
        "identifier" | "member_expression" => w.text(arg).to_string(),
        _ => return None,
    };
    let words: Vec<&str> = text.split_whitespace().collect();
    let title: String = words.join(" ").chars().take(TITLE_CHARS).collect();
    (!title.is_empty()).then_some(title)
}
