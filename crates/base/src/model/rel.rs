//! Relationship names, in one place.
//!
//! The code graph's relationships are stored by name in `edge.rel`, written
//! abbreviated in Format E, weighted by the relevance scoring, and some of
//! them mean "depends on" for cycle detection and usage summaries. Each of
//! those facts is a method of [`Rel`], so adding or renaming a relationship
//! is one edit here, not a literal hunted down in five modules.

use serde::{Deserialize, Serialize};

/// A relationship of the code graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rel {
    Calls,
    UsesType,
    Implements,
    Contains,
    Imports,
    Tests,
    References,
}

impl Rel {
    pub const ALL: [Rel; 7] = [
        Rel::Calls,
        Rel::UsesType,
        Rel::Implements,
        Rel::Contains,
        Rel::Imports,
        Rel::Tests,
        Rel::References,
    ];

    /// The name stored in `edge.rel` (and its serde name).
    pub const fn name(self) -> &'static str {
        match self {
            Rel::Calls => "calls",
            Rel::UsesType => "uses_type",
            Rel::Implements => "implements",
            Rel::Contains => "contains",
            Rel::Imports => "imports",
            Rel::Tests => "tests",
            Rel::References => "references",
        }
    }

    /// The two-letter form Format E writes in its edge arrows (`-ca->`).
    pub const fn abbrev(self) -> &'static str {
        match self {
            Rel::Calls => "ca",
            Rel::UsesType => "ty",
            Rel::Implements => "im",
            Rel::Contains => "cn",
            Rel::Imports => "us",
            Rel::Tests => "ts",
            Rel::References => "rf",
        }
    }

    /// How strongly an edge of this relationship ties two entities
    /// together, for the relevance scoring.
    pub const fn weight(self) -> f64 {
        match self {
            Rel::Implements => 0.9,
            Rel::Calls => 0.85,
            Rel::Tests => 0.8,
            Rel::UsesType => 0.75,
            Rel::References => 0.7,
            Rel::Contains => 0.6,
            Rel::Imports => 0.5,
        }
    }

    /// Whether the source depends on the target. `contains` is structure
    /// and `tests` is a test's view of what it exercises: neither makes a
    /// dependency cycle.
    pub const fn is_dependency(self) -> bool {
        !matches!(self, Rel::Contains | Rel::Tests)
    }

    pub fn from_name(name: &str) -> Option<Rel> {
        Rel::ALL.into_iter().find(|r| r.name() == name)
    }

    pub fn from_abbrev(abbrev: &str) -> Option<Rel> {
        Rel::ALL.into_iter().find(|r| r.abbrev() == abbrev)
    }
}

impl std::fmt::Display for Rel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The stored names as constants, for `match` patterns and maps keyed by
/// `&'static str`.
pub mod name {
    use super::Rel;

    pub const CALLS: &str = Rel::Calls.name();
    pub const USES_TYPE: &str = Rel::UsesType.name();
    pub const IMPLEMENTS: &str = Rel::Implements.name();
    pub const CONTAINS: &str = Rel::Contains.name();
    pub const IMPORTS: &str = Rel::Imports.name();
    pub const TESTS: &str = Rel::Tests.name();
    pub const REFERENCES: &str = Rel::References.name();
}

/// Relationships of an ontology graph along which a cycle is a modelling
/// error: a part cannot contain its whole, a requirement cannot derive from
/// itself.
pub const HIERARCHY_RELS: [&str; 4] = ["compose", "allocate", "derive", "refine"];

/// A canvas conversation step: the answer depends on the question.
pub const CANVAS_THREAD: &str = "thread";

/// Relationships that mean "depends on", in every kind of graph: the code
/// graph's dependencies ([`Rel::is_dependency`]), a canvas `thread` and
/// the ontology hierarchy. The names do not overlap between sources, so one
/// list serves every graph.
pub const DEPENDENCY_RELS: [&str; 10] = [
    Rel::Calls.name(),
    Rel::UsesType.name(),
    Rel::Implements.name(),
    Rel::Imports.name(),
    Rel::References.name(),
    CANVAS_THREAD,
    HIERARCHY_RELS[0],
    HIERARCHY_RELS[1],
    HIERARCHY_RELS[2],
    HIERARCHY_RELS[3],
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_abbreviations_round_trip_and_are_unique() {
        for r in Rel::ALL {
            assert_eq!(Rel::from_name(r.name()), Some(r));
            assert_eq!(Rel::from_abbrev(r.abbrev()), Some(r));
            assert_eq!(serde_json::to_value(r).unwrap(), r.name());
        }
        let mut abbrevs: Vec<_> = Rel::ALL.iter().map(|r| r.abbrev()).collect();
        abbrevs.sort();
        abbrevs.dedup();
        assert_eq!(abbrevs.len(), Rel::ALL.len());
    }

    #[test]
    fn dependency_list_is_the_code_dependencies_plus_the_other_graphs() {
        let code: Vec<_> = Rel::ALL
            .into_iter()
            .filter(|r| r.is_dependency())
            .map(Rel::name)
            .collect();
        let listed: Vec<_> = DEPENDENCY_RELS
            .iter()
            .copied()
            .filter(|n| Rel::from_name(n).is_some())
            .collect();
        assert_eq!(code, listed);
        assert!(DEPENDENCY_RELS.contains(&CANVAS_THREAD));
        assert!(HIERARCHY_RELS.iter().all(|h| DEPENDENCY_RELS.contains(h)));
    }
}
