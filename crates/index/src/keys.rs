//! Entity keys: `{file}-{tail}`, unique in a repository because the
//! file's repository-relative path is part of every key, and stable
//! across edits that do not rename or move an entity (they carry no line
//! numbers). The tail is the language's: Rust's is `{module}-{item}`
//! (`src/models/user.rs-models::user-User`, see the Rust crate's `keys`),
//! Python's `{module}-{qualname}` (`src/flask/app.py-flask.app-Flask.run`,
//! see docs/python.md). A second item with the same key in the same file
//! (cfg-gated twins) gets `#2`, `#3`, … in source order.
//!
//! Shared code reads a key through [`split_key`] and [`key_language`],
//! and asks the language how to show its tail
//! ([`Language::tail_names`](crate::lang::Language::tail_names),
//! [`Language::qualified_name`](crate::lang::Language::qualified_name)).

use std::collections::HashMap;

use crate::lang::Language;
use crate::languages;

/// A key's file and tail: the file is the shortest prefix ending before a
/// `-` whose name a language claims (`crates/graph-x/src/lib.rs-crate-run`
/// → `crates/graph-x/src/lib.rs`, `crate-run`); `None` for a key no
/// language's file starts.
pub fn split_key(key: &str) -> Option<(&str, &str)> {
    key.match_indices('-')
        .map(|(i, _)| i)
        .find(|&i| languages::of_file(&key[..i]).is_some())
        .map(|i| (&key[..i], &key[i + 1..]))
}

/// The language of a key's file, and the key's tail.
pub fn key_language(key: &str) -> Option<(&'static dyn Language, &str)> {
    let (file, tail) = split_key(key)?;
    Some((languages::of_file(file)?, tail))
}

/// Hands out keys for one file, appending `#2`, `#3`, ... to repeats.
#[derive(Default)]
pub struct KeyAllocator {
    seen: HashMap<String, u32>,
}

impl KeyAllocator {
    pub fn allocate(&mut self, key: String) -> String {
        let n = self.seen.entry(key.clone()).or_insert(0);
        *n += 1;
        if *n == 1 {
            key
        } else {
            format!("{key}#{n}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_keys_get_ordinal_suffixes() {
        let mut a = KeyAllocator::default();
        assert_eq!(a.allocate("k".into()), "k");
        assert_eq!(a.allocate("k".into()), "k#2");
        assert_eq!(a.allocate("j".into()), "j");
        assert_eq!(a.allocate("k".into()), "k#3");
    }
}
