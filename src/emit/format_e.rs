//! Format E for code context: one line per node, one line per edge.
//!
//! ```text
//! # graphctx context · Format E · base 2 · hops 2 · edit · 1234 tokens · blended
//! ## Nodes
//! Name|Kind|Key|short doc
//! ## Edges
//! Key -rel-> Key
//! ```
//!
//! Kinds are abbreviated (`fn`, `method`, `struct`, `enum`, `union`,
//! `trait`, `impl`, `mod`, `const`, `static`, `type`, `macro`) and
//! relationships get two-letter names: `ca` calls, `ty` uses_type,
//! `im` implements, `cn` contains, `us` imports (use), `ts` tests,
//! `rf` references. Selection and budget rules are the JSON form's.

use super::entity::{first_sentence, Detail, Details};
use super::fit::Plan;
use super::{ContextRequest, Loaded, Relationship};
use crate::analyse::select::{Candidate, Selection};

pub fn kind_abbrev(kind: &str) -> &str {
    match kind {
        "function" => "fn",
        "module" => "mod",
        "type_alias" => "type",
        other => other,
    }
}

pub fn rel_abbrev(rel: &str) -> &str {
    match rel {
        "calls" => "ca",
        "uses_type" => "ty",
        "implements" => "im",
        "contains" => "cn",
        "imports" => "us",
        "tests" => "ts",
        "references" => "rf",
        other => other,
    }
}

/// Inverse of [`rel_abbrev`].
pub fn rel_from_abbrev(abbrev: &str) -> Option<&'static str> {
    Some(match abbrev {
        "ca" => "calls",
        "ty" => "uses_type",
        "im" => "implements",
        "cn" => "contains",
        "us" => "imports",
        "ts" => "tests",
        "rf" => "references",
        _ => return None,
    })
}

fn clean(s: &str) -> String {
    s.replace(['|', '\n'], " ")
}

/// `Name|Kind|Key|short doc` at a level of detail.
pub fn node_line(d: &Details, _c: &Candidate, detail: Detail) -> String {
    let doc = match detail {
        Detail::Full | Detail::CompressedSignature => first_sentence(&d.doc, 100),
        Detail::ShortDoc => first_sentence(&d.doc, 40),
        Detail::Minimal => String::new(),
    };
    format!(
        "{}|{}|{}|{}",
        clean(&d.name),
        kind_abbrev(&d.kind),
        d.key,
        clean(&doc)
    )
}

pub fn edge_line(loaded: &Loaded, r: &Relationship) -> String {
    format!(
        "{} -{}-> {}",
        loaded.candidates[r.src].key,
        rel_abbrev(&r.rel),
        loaded.candidates[r.dst].key
    )
}

pub fn assemble(
    req: &ContextRequest,
    selection: &Selection,
    nodes: &[&str],
    edges: &[&str],
    plan: &Plan,
    excluded: &[&str],
    token_count: usize,
) -> String {
    let mut out = format!(
        "# graphctx context · Format E · base {} · hops {} · {} · {} tokens · {}\n## Nodes\n",
        selection.base_keys.len(),
        selection.hops,
        req.change_type.name(),
        token_count,
        req.strategy.name()
    );
    for n in nodes {
        out.push_str(n);
        out.push('\n');
    }
    out.push_str("## Edges\n");
    for e in edges {
        out.push_str(e);
        out.push('\n');
    }
    if !plan.steps.is_empty() {
        out.push_str(&format!(
            "# truncated: {} ({} excluded)\n",
            plan.steps.join(", "),
            excluded.len()
        ));
    }
    out
}
