//! Python references into edges, over a [`Table`] of every Python file.
//!
//! Each reference is looked up from its entity's scope ([`Table::path`],
//! [`Table::recv`]); the entity it reaches gets the reference's edge —
//! `calls` for calls (a class called is constructed), `uses_type` for
//! annotations and classes named as values, `implements` for base
//! classes, `references` for variables and attributes read — and every
//! entity the way passed through (an attribute typed to reach a method,
//! a class qualifying a name) gets a `references` edge. Modules are
//! passed through silently: the import that brought them is the edge.
//! A test's calls into code that is not a test are also `tests` edges.
//! What is not found is kept unresolved with its text; Python's builtins
//! are neither edges nor unresolved.

use std::collections::BTreeMap;

use super::table::{Site, Table, Val};
use crate::index::links::{FileLinks, LinksBuilder, RefsApart};
use crate::model::rel::name as rel;
use crate::model::{EntityKind, FileContext, FileExtract, RawRef, RefKind};

/// Resolve the picked files against a table of all.
pub fn resolve_files<'a>(
    files: &[(&'a FileContext, &'a FileExtract)],
    wanted: &dyn Fn(&str) -> bool,
    apart: RefsApart,
) -> BTreeMap<String, FileLinks<'a>> {
    let table = Table::build(files);
    let picked: Vec<_> = files
        .iter()
        .filter(|(_, e)| wanted(&e.path))
        .copied()
        .collect();
    resolve_against(&table, &picked, apart)
}

/// Resolve `files` (whole extracts, or interfaces whose other references
/// `apart` holds) against `table`.
pub fn resolve_against<'a>(
    table: &Table<'a>,
    files: &[(&'a FileContext, &'a FileExtract)],
    apart: RefsApart,
) -> BTreeMap<String, FileLinks<'a>> {
    crate::index::refless::resolve_each(files, apart, |ex, held| resolve_one(table, ex, held))
}

fn resolve_one<'a>(table: &Table<'a>, ex: &'a FileExtract, held: &[RawRef]) -> FileLinks<'a> {
    let mut links = LinksBuilder::default();
    let Some(file) = table.file_of(&ex.path) else {
        return links.seal();
    };
    for e in &ex.entities {
        if let Some(p) = &e.parent {
            links.edge(p, rel::CONTAINS, &e.key);
        }
    }
    // A package's `__init__` contains its submodules' modules.
    if let (Some(m), Some((_, parent))) = (ex.entities.first(), ex.context.module_path.split_last())
    {
        if !parent.is_empty() {
            if let Some(Val::Module(pf)) = table.module(&ex.context.unit, &parent.join(".")) {
                if let Some(pm) = table.module_entity(pf) {
                    if pm.key != m.key {
                        links.edge(&pm.key, rel::CONTAINS, &m.key);
                    }
                }
            }
        }
    }
    for r in ex.refs.iter().chain(held) {
        resolve_ref(table, file, r, &mut links);
    }
    for u in &ex.uses {
        let Some(src) = table.entity(&u.from) else {
            continue;
        };
        if u.path.first().is_some_and(|p| p == "__future__") {
            continue;
        }
        let from_form = u
            .path
            .first()
            .is_some_and(|p| p.is_empty() || p.starts_with('.'));
        let target = if u.glob {
            None
        } else {
            table.import_target(file, u, 0, true)
        };
        match target.and_then(|v| table.entity_of(v)) {
            Some(dst) => links.edge(&src.key, rel::IMPORTS, &dst.key),
            None if u.glob => {}
            None => {
                let text = if from_form {
                    let (name, base) = u
                        .path
                        .split_last()
                        .map_or(("", &[][..]), |(n, b)| (n.as_str(), b));
                    let (dots, rest) = base
                        .split_first()
                        .map_or(("", &[][..]), |(d, r)| (d.as_str(), r));
                    format!("{dots}{}.{name}", rest.join("."))
                } else {
                    u.path.join(".")
                };
                links.unresolved(&src.key, rel::IMPORTS, text, u.line);
            }
        }
    }
    links.seal()
}

fn resolve_ref<'a>(table: &Table<'a>, file: usize, r: &RawRef, links: &mut LinksBuilder<'a>) {
    let Some(from) = table.entity(&r.from) else {
        return;
    };
    let site = Site { file, from };
    let src: &'a str = &from.key;
    let mut through: Vec<Val<'a>> = Vec::new();
    let found = match r.kind {
        RefKind::MethodCall | RefKind::Field => {
            let Some(name) = r.path.first() else { return };
            match &r.receiver {
                Some(recv) => table
                    .recv(site, None, recv, 0, &mut |v| through.push(v))
                    .and_then(|base| table.attr(base, name, 0)),
                None => None,
            }
        }
        _ => {
            let segs: Vec<&str> = r.path.iter().map(String::as_str).collect();
            if segs.len() == 1 && is_builtin(segs[0]) && table.lookup(site, segs[0], 0).is_none() {
                return;
            }
            table.path(site, &segs, 0, &mut |v| through.push(v))
        }
    };
    for v in through {
        if let Some(e) = table.entity_of(v) {
            if e.kind != EntityKind::Module && e.key != from.key {
                links.edge(src, rel::REFERENCES, &e.key);
            }
        }
    }
    let dst = found.and_then(|v| table.entity_of(v));
    let Some(dst) = dst else {
        if found.is_some() {
            // A module, or a namespace package: the import is the edge.
            return;
        }
        let text = match r.kind {
            RefKind::MethodCall => format!(".{}()", r.path.join(".")),
            RefKind::Field => format!(".{}", r.path.join(".")),
            RefKind::Call => format!("{}()", r.path.join(".")),
            _ => r.path.join("."),
        };
        let relname = match r.kind {
            RefKind::Call | RefKind::MethodCall => rel::CALLS,
            RefKind::Type => rel::USES_TYPE,
            RefKind::Implements => rel::IMPLEMENTS,
            _ => rel::REFERENCES,
        };
        links.unresolved(src, relname, text, r.line);
        return;
    };
    if dst.kind == EntityKind::Module || dst.key == from.key {
        return;
    }
    let callable = matches!(
        dst.kind,
        EntityKind::Function | EntityKind::Method | EntityKind::Property | EntityKind::Class
    );
    let relname = match r.kind {
        RefKind::Call | RefKind::MethodCall if callable => rel::CALLS,
        RefKind::Implements if dst.kind == EntityKind::Class => rel::IMPLEMENTS,
        RefKind::Type | RefKind::Implements => rel::USES_TYPE,
        _ if dst.kind == EntityKind::Property => rel::CALLS,
        _ if dst.kind == EntityKind::Class => rel::USES_TYPE,
        _ => rel::REFERENCES,
    };
    links.edge(src, relname, &dst.key);
    if relname == rel::CALLS && from.is_test && !dst.is_test {
        links.edge(src, rel::TESTS, &dst.key);
    }
}

/// Python's builtin names: a reference to one that no scope rebinds is
/// neither an edge nor unresolved.
fn is_builtin(name: &str) -> bool {
    BUILTINS.binary_search(&name).is_ok()
}

/// Sorted.
const BUILTINS: &[&str] = &[
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "BaseExceptionGroup",
    "BlockingIOError",
    "BrokenPipeError",
    "BufferError",
    "BytesWarning",
    "ChildProcessError",
    "ConnectionAbortedError",
    "ConnectionError",
    "ConnectionRefusedError",
    "ConnectionResetError",
    "DeprecationWarning",
    "EOFError",
    "Ellipsis",
    "EncodingWarning",
    "EnvironmentError",
    "Exception",
    "ExceptionGroup",
    "False",
    "FileExistsError",
    "FileNotFoundError",
    "FloatingPointError",
    "FutureWarning",
    "GeneratorExit",
    "IOError",
    "ImportError",
    "ImportWarning",
    "IndentationError",
    "IndexError",
    "InterruptedError",
    "IsADirectoryError",
    "KeyError",
    "KeyboardInterrupt",
    "LookupError",
    "MemoryError",
    "ModuleNotFoundError",
    "NameError",
    "None",
    "NotADirectoryError",
    "NotImplemented",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PendingDeprecationWarning",
    "PermissionError",
    "ProcessLookupError",
    "RecursionError",
    "ReferenceError",
    "ResourceWarning",
    "RuntimeError",
    "RuntimeWarning",
    "StopAsyncIteration",
    "StopIteration",
    "SyntaxError",
    "SyntaxWarning",
    "SystemError",
    "SystemExit",
    "TabError",
    "TimeoutError",
    "True",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "UnicodeTranslateError",
    "UnicodeWarning",
    "UserWarning",
    "ValueError",
    "Warning",
    "ZeroDivisionError",
    "__build_class__",
    "__debug__",
    "__doc__",
    "__file__",
    "__import__",
    "__loader__",
    "__name__",
    "__package__",
    "__spec__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "basestring",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "copyright",
    "credits",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "exit",
    "file",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "license",
    "list",
    "locals",
    "long",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "quit",
    "range",
    "raw_input",
    "reduce",
    "repr",
    "reversed",
    "round",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "unichr",
    "unicode",
    "vars",
    "xrange",
    "zip",
];

#[cfg(test)]
mod tests {
    #[test]
    fn builtins_are_sorted() {
        assert!(super::BUILTINS.windows(2).all(|w| w[0] < w[1]));
    }
}
