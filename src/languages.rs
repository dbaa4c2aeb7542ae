//! The languages graphctx reads, assembled: the one place outside their
//! crates that names them. The binary installs them before anything
//! else; a program or test using the library calls [`install`] first.
//!
//! To add a language: a crate under `crates/` implementing
//! `index::lang::Language`, a dependency in `Cargo.toml`, and a line in
//! [`install`] (its place there is its `LanguageId`).

/// Installs every language with the index, in claiming order; calling it
/// again does nothing.
pub fn install() {
    graphctx_index::languages::install(vec![
        &graphctx_rust::Rust,
        &graphctx_python::Python,
        &graphctx_typescript::TypeScript,
    ]);
}

#[cfg(test)]
mod tests {
    use graphctx_index::languages::{all, get, of_file};

    #[test]
    fn a_language_s_id_is_its_place() {
        super::install();
        for (i, lang) in all().iter().enumerate() {
            assert_eq!(usize::from(lang.id().0), i, "{}", lang.name());
            assert_eq!(get(lang.id()).name(), lang.name());
        }
        assert_eq!(of_file("src/a/b.rs").map(|l| l.name()), Some("rust"));
        assert_eq!(of_file("src/a/b.py").map(|l| l.name()), Some("python"));
        assert_eq!(of_file("src/a/b.pyi").map(|l| l.name()), Some("python"));
        for f in [
            "src/a.ts",
            "src/a.tsx",
            "src/a.d.ts",
            "src/a.js",
            "src/a.mjs",
        ] {
            assert_eq!(of_file(f).map(|l| l.name()), Some("typescript"), "{f}");
        }
        assert!(of_file("README.md").is_none());
    }
}
