//! The registry of languages: the one place outside a language's folder
//! that names it. The pipeline, the servers and the CLI find a file's
//! language here and talk to it through [`Language`].
//!
//! To add a language: a folder beside `rust/` implementing [`Language`],
//! and a line in [`ALL`] (its place there is its [`LanguageId`]).

use super::lang::Language;
use super::python;
use super::rust;
use crate::model::LanguageId;

/// Every language, in claiming order; a language's place is its id.
static ALL: [&'static dyn Language; 2] = [&rust::Rust, &python::Python];

/// Every language the index reads.
pub fn all() -> &'static [&'static dyn Language] {
    &ALL
}

/// The language with this id (ids come from the registry, so every id
/// names one; the first stands in otherwise).
pub fn get(id: LanguageId) -> &'static dyn Language {
    ALL.get(usize::from(id.0)).copied().unwrap_or(ALL[0])
}

/// The language that claims a file of this path (its last component
/// decides), if any.
pub fn of_file(path: &str) -> Option<&'static dyn Language> {
    let name = path.rsplit('/').next().unwrap_or(path);
    ALL.iter().copied().find(|l| l.claims(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_s_id_is_its_place() {
        for (i, lang) in all().iter().enumerate() {
            assert_eq!(usize::from(lang.id().0), i, "{}", lang.name());
            assert_eq!(get(lang.id()).name(), lang.name());
        }
        assert_eq!(of_file("src/a/b.rs").map(|l| l.name()), Some("rust"));
        assert_eq!(of_file("src/a/b.py").map(|l| l.name()), Some("python"));
        assert_eq!(of_file("src/a/b.pyi").map(|l| l.name()), Some("python"));
        assert!(of_file("README.md").is_none());
    }
}
