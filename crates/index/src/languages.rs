//! The registry of languages. The index core names none of them: the
//! binary assembles them (`graphctx::languages`) and installs them here
//! once, in claiming order, before the first run; the pipeline, the
//! servers and the CLI find a file's language here and talk to it through
//! [`Language`].

use std::sync::OnceLock;

use super::lang::Language;
use crate::model::LanguageId;

static INSTALLED: OnceLock<Vec<&'static dyn Language>> = OnceLock::new();

/// Installs the languages the index reads, in claiming order; a
/// language's place is its id. Installing the same languages again does
/// nothing.
///
/// # Panics
///
/// When a language's id is not its place, or other languages were
/// installed before: both are mistakes in assembling the program.
pub fn install(languages: Vec<&'static dyn Language>) {
    for (place, lang) in languages.iter().enumerate() {
        assert_eq!(
            usize::from(lang.id().0),
            place,
            "language {} is installed at place {place} but its id is {}",
            lang.name(),
            lang.id().0
        );
    }
    let names = |ls: &[&'static dyn Language]| ls.iter().map(|l| l.name()).collect::<Vec<_>>();
    let wanted = names(&languages);
    let installed = INSTALLED.get_or_init(|| languages);
    assert_eq!(
        names(installed),
        wanted,
        "other languages were installed before"
    );
}

/// Every language the index reads.
///
/// # Panics
///
/// When none were installed ([`install`]): the program was assembled
/// without its languages.
pub fn all() -> &'static [&'static dyn Language] {
    INSTALLED
        .get()
        .expect("no languages installed: call graphctx::languages::install() before indexing")
}

/// The language with this id (ids come from the registry, so every id
/// names one; the first stands in otherwise).
pub fn get(id: LanguageId) -> &'static dyn Language {
    let all = all();
    all.get(usize::from(id.0)).copied().unwrap_or(all[0])
}

/// The language that claims a file of this path (its last component
/// decides), if any.
pub fn of_file(path: &str) -> Option<&'static dyn Language> {
    let name = path.rsplit('/').next().unwrap_or(path);
    all().iter().copied().find(|l| l.claims(name))
}
