//! Rust's entity keys: `{file}-{module}-{item}`.
//!
//! * `file` — repository-relative path (`src/models/user.rs`),
//! * `module` — the module path inside the crate joined with `::`
//!   (`models::user`), or `crate` for the crate root,
//! * `item` — the item name; methods carry their owner (`User::new`), trait
//!   impl methods their owner and trait (`<User as Display>::fmt`), impl
//!   blocks read `impl User` / `impl Display for User`.
//!
//! Items declared inside a function body carry the function's key:
//! `{function key}()::{item}`. Twins are numbered by the index's
//! `KeyAllocator`.

/// The module part of a key.
pub fn module_part(module_path: &[String]) -> String {
    if module_path.is_empty() {
        "crate".to_string()
    } else {
        module_path.join("::")
    }
}

/// Key of an ordinary item (fn, struct, const, inline module, macro, ...).
pub fn item_key(file: &str, module_path: &[String], item: &str) -> String {
    format!("{file}-{}-{item}", module_part(module_path))
}

/// Key of an item declared inside a function body: the function's key,
/// `()`, then the item (`src/a.rs-a-outer()::Helper`,
/// `src/a.rs-a-Foo::run()::helper`), so each function's local items are
/// its own and never twins of another function's.
pub fn local_item_key(function_key: &str, item: &str) -> String {
    format!("{function_key}()::{item}")
}

/// Item part for a method or associated item of `owner`, optionally in an
/// impl of `trait_name` (written without generic arguments of the owner,
/// with those of the trait: `<X as From<u8>>::from`).
pub fn method_item(owner: &str, trait_name: Option<&str>, name: &str) -> String {
    match trait_name {
        Some(t) => format!("<{owner} as {t}>::{name}"),
        None => format!("{owner}::{name}"),
    }
}

/// Item part for an impl block.
pub fn impl_item(owner: &str, trait_name: Option<&str>) -> String {
    match trait_name {
        Some(t) => format!("impl {t} for {owner}"),
        None => format!("impl {owner}"),
    }
}

/// Key of a file's own module entity: `src/a/b.rs-a-b`; a crate root
/// (`src/lib.rs`, `src/main.rs`, `src/bin/x.rs`, `tests/t.rs`) is
/// `src/lib.rs-crate-{crate name}`.
pub fn file_module_key(file: &str, module_path: &[String], crate_name: &str) -> String {
    match module_path.split_last() {
        None => item_key(file, &[], crate_name),
        Some((last, parent)) => item_key(file, parent, last),
    }
}

/// A key's tail read back: its module part and its item, without a twin
/// mark (`a::b-Foo::new#2` → `a::b`, `Foo::new`).
pub fn tail_parts(tail: &str) -> (&str, &str) {
    let tail = tail.split('#').next().unwrap_or(tail);
    tail.split_once('-').unwrap_or(("crate", tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keys_follow_isgl1_shape() {
        assert_eq!(
            item_key("src/models/user.rs", &p(&["models", "user"]), "User"),
            "src/models/user.rs-models::user-User"
        );
        assert_eq!(item_key("src/lib.rs", &[], "run"), "src/lib.rs-crate-run");
        assert_eq!(
            file_module_key("src/a/b.rs", &p(&["a", "b"]), "x"),
            "src/a/b.rs-a-b"
        );
        assert_eq!(
            file_module_key("src/lib.rs", &[], "x"),
            "src/lib.rs-crate-x"
        );
        assert_eq!(
            method_item("X", Some("Display"), "fmt"),
            "<X as Display>::fmt"
        );
        assert_eq!(method_item("X", None, "new"), "X::new");
        assert_eq!(impl_item("X", Some("Debug")), "impl Debug for X");
    }
}
