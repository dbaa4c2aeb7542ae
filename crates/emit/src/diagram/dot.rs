//! Graphviz DOT text of a [`DiagramGraph`].
//!
//! Every label is a double-quoted DOT string: `\` and `"` escaped, `&`
//! written as `&amp;` (Graphviz reads entities in labels), line breaks
//! as `\n`, control characters dropped; ids are the generated node ids.

use std::fmt::Write as _;

use super::{escape_lines, DiagramGraph, DiagramNode};
use crate::palette::{self, BASE_STROKE, CYCLE_EDGE, NOTE_FILL, NOTE_STROKE};

/// A quoted DOT string of `text`.
pub fn quoted(text: &str) -> String {
    let inner = escape_lines(text, "\\n", |c, out| match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '&' => out.push_str("&amp;"),
        c => out.push(c),
    });
    format!("\"{inner}\"")
}

fn node_line(n: &DiagramNode) -> String {
    let (stroke, width) = if n.base {
        BASE_STROKE
    } else {
        palette::tier_stroke(n.tier)
    };
    format!(
        "  {} [label={}, fillcolor=\"{}\", color=\"{stroke}\", penwidth={width}];",
        n.id,
        quoted(&n.text()),
        palette::kind_fill(&n.kind)
    )
}

/// The whole diagram.
pub fn render(g: &DiagramGraph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph diagram {{");
    let _ = writeln!(
        out,
        "  graph [rankdir=LR, labelloc=t, fontname=\"Helvetica\", label={}];",
        quoted(&g.title)
    );
    let _ = writeln!(
        out,
        "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=9];");
    for n in &g.nodes {
        let _ = writeln!(out, "{}", node_line(n));
    }
    for e in &g.edges {
        let (colour, width) = if e.on_cycle {
            (CYCLE_EDGE, 2.5)
        } else {
            (palette::rel_colour(&e.rel), 1.0)
        };
        let _ = writeln!(
            out,
            "  {} -> {} [label={}, color=\"{colour}\", fontcolor=\"{colour}\", penwidth={width}];",
            e.src,
            e.dst,
            quoted(&e.rel)
        );
    }
    for (id, text) in g.notes() {
        let _ = writeln!(
            out,
            "  {id} [shape=note, style=\"filled,dashed\", fillcolor=\"{NOTE_FILL}\", color=\"{NOTE_STROKE}\", label={}];",
            quoted(&text)
        );
    }
    out.push_str("}\n");
    out
}
