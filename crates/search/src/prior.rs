//! The prior for where a change belongs: in the code, before its tests,
//! benchmarks, examples, documentation and build scripts — unless the
//! query names the benchmarks.
//!
//! A report is fixed in the code its tests exercise and its examples
//! show, so files of those kinds rank at [`TEST_FACTOR`] of their score.
//! What a file is there for is its language's to tell
//! ([`Language::file_role`]: Cargo's `build.rs`, a `vite.config.ts`, a
//! story, a `benches/` directory). Reports say "test" and "for example"
//! as a matter of course, so those words lift nothing; a query that
//! speaks of benchmarks (`benches: …`, "the serve bench opens files") is
//! about the benchmark files, and they keep their whole score for it.
//! Type declarations (TypeScript's `.d.ts`) rank with documentation: a
//! report about what code does is fixed where it is done, unless the
//! report speaks of types. So does build output a tree holds (a bundle
//! committed under `dist/`): the fix is made in its source.

use graphctx_index::lang::{default_role, role_of, FileRole, Language};
use graphctx_index::languages;

use crate::features::Role;
use crate::query::Reading;
use crate::support::words::query_words;

/// Test, benchmark, documentation and example code is rarely where a
/// change belongs; it still ranks, lower.
pub(super) const TEST_FACTOR: f64 = 0.5;

/// Query words (their stems) that speak of benchmarks.
const BENCH_WORDS: &[&str] = &["bench", "benchmark"];

/// Query words (their stems) that speak of types and their declarations:
/// these, and what each language calls its own
/// ([`Language::declaration_words`]).
fn type_stems() -> Vec<String> {
    let own = languages::all().iter().map(|l| l.declaration_words());
    std::iter::once("type typing declaration definition")
        .chain(own)
        .flat_map(query_words)
        .map(|t| t.stem)
        .collect()
}

/// The prior of one query.
pub(super) struct Prior {
    /// The query speaks of benchmarks.
    benches: bool,
    /// The query speaks of types.
    types: bool,
}

impl Prior {
    pub(super) fn of(reading: &Reading) -> Prior {
        let speaks_of = |of: &dyn Fn(&str) -> bool| reading.terms.iter().any(|t| of(&t.term.stem));
        let types = type_stems();
        Prior {
            benches: speaks_of(&|s| BENCH_WORDS.contains(&s)),
            types: speaks_of(&|s| types.iter().any(|t| t == s)),
        }
    }

    /// The factor of a file's (or its entity's) score: `is_test` when the
    /// layout calls the file or entity a test (benchmarks included).
    pub(super) fn factor(&self, path: &str, is_test: bool) -> f64 {
        match self.role(path, is_test) {
            Role::Code => 1.0,
            Role::Test | Role::DocsOrExample | Role::Declarations => TEST_FACTOR,
        }
    }

    /// What the file is for this query: benchmarks a query about them asks
    /// for count as code.
    pub(super) fn role(&self, path: &str, is_test: bool) -> Role {
        self.of_role(languages::of_file(path).map_or_else(
            || default_role(path, is_test),
            |l: &dyn Language| role_of(l, path, is_test),
        ))
    }

    /// What a file of a role its language tells is for this query.
    fn of_role(&self, role: FileRole) -> Role {
        match role {
            FileRole::Code => Role::Code,
            FileRole::Bench if self.benches => Role::Code,
            FileRole::Bench | FileRole::Test => Role::Test,
            FileRole::Example | FileRole::Docs | FileRole::Build | FileRole::Generated => {
                Role::DocsOrExample
            }
            FileRole::Declarations if self.types => Role::Code,
            FileRole::Declarations => Role::Declarations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query;

    #[test]
    fn documentation_and_examples_are_told_by_their_directories() {
        let plain = Prior::of(&query::read("the parser drops a trailing comment"));
        let is_docs_or_examples = |p: &str| plain.role(p, false) == Role::DocsOrExample;
        for path in [
            "doc/conf.py",
            "doc/usage/extensions/example_google.py",
            "examples/echo.rs",
            "tokio/examples/chat.rs",
            "docs/src/guide.py",
            "crates/x/example/main.rs",
        ] {
            assert!(is_docs_or_examples(path), "{path}");
        }
        for path in [
            "sphinx/domains/python.py",
            "src/docs.rs",
            "src/example.py",
            "pylint/extensions/docparams.py",
            "lib.rs",
        ] {
            assert!(!is_docs_or_examples(path), "{path}");
        }
    }

    #[test]
    fn declarations_rank_with_docs_unless_the_query_speaks_of_types() {
        let plain = Prior::of(&query::read(
            "dayjs.week() returns 1 at the turn of the year",
        ));
        let types = Prior::of(&query::read(
            "The Typings of defineModel's modifiers are incompatible",
        ));
        let named = Prior::of(&query::read("index.d.ts lacks the TypeScript type of week"));
        for prior in [&plain, &types, &named] {
            assert_eq!(prior.of_role(FileRole::Code), Role::Code);
            assert_eq!(prior.of_role(FileRole::Docs), Role::DocsOrExample);
        }
        assert_eq!(plain.of_role(FileRole::Declarations), Role::Declarations);
        assert_eq!(types.of_role(FileRole::Declarations), Role::Code);
        assert_eq!(named.of_role(FileRole::Declarations), Role::Code);
    }

    #[test]
    fn a_query_about_benchmarks_lifts_the_prior_of_benchmark_files_only() {
        let plain = Prior::of(&query::read("the parser drops a trailing comment"));
        let benches = Prior::of(&query::read("benches: the serve bench opens files first"));
        assert_eq!(plain.factor("benches/serve.rs", true), TEST_FACTOR);
        assert_eq!(benches.factor("benches/serve.rs", true), 1.0);
        assert_eq!(benches.factor("tests/it/serve.rs", true), TEST_FACTOR);
        assert_eq!(benches.factor("examples/serve.rs", false), TEST_FACTOR);
        assert_eq!(plain.factor("src/serve.rs", false), 1.0);
        let tests = Prior::of(&query::read(
            "the test of the serve module fails, for example",
        ));
        assert_eq!(tests.factor("tests/it/serve.rs", true), TEST_FACTOR);
        assert_eq!(tests.factor("examples/serve.rs", false), TEST_FACTOR);
    }
}
