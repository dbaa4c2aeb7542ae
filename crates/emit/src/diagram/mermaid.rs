//! Mermaid flowchart text of a [`DiagramGraph`].
//!
//! Every label is a quoted string with the characters Mermaid would read
//! as syntax (`"`, `#`, `<`, `>`, `&`, `` ` ``, `|`, `;`, `\`) written as
//! its `#code;` entities, control characters dropped and line breaks as
//! `<br>`; ids are the generated node ids. Styles: one `classDef` per
//! fill and outline in use, `linkStyle` per edge colour.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{escape_lines, DiagramGraph, DiagramNode};
use crate::palette::{self, BASE_STROKE, CYCLE_EDGE, NOTE_FILL, NOTE_STROKE};

/// The text of a label: escaped, lines joined by `<br>`.
pub fn label(text: &str) -> String {
    escape_lines(text, "<br>", |c, out| match c {
        '"' => out.push_str("#quot;"),
        '#' => out.push_str("#35;"),
        '<' => out.push_str("#lt;"),
        '>' => out.push_str("#gt;"),
        '&' => out.push_str("#amp;"),
        '`' | '|' | ';' | '\\' => {
            let _ = write!(out, "#{};", u32::from(c));
        }
        c => out.push(c),
    })
}

/// The style of a node: fill by kind, outline by tier (base entities
/// their own).
fn node_style(n: &DiagramNode) -> String {
    let (stroke, width) = if n.base {
        BASE_STROKE
    } else {
        palette::tier_stroke(n.tier)
    };
    format!(
        "fill:{},stroke:{stroke},stroke-width:{width}px",
        palette::kind_fill(&n.kind)
    )
}

/// The whole diagram.
pub fn render(g: &DiagramGraph) -> String {
    let mut out = String::new();
    // A JSON string is a YAML double-quoted scalar.
    let title = serde_json::to_string(&g.title).unwrap_or_default();
    let _ = writeln!(out, "---\ntitle: {title}\n---\nflowchart LR");
    let mut classes: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for n in &g.nodes {
        let _ = writeln!(out, "  {}[\"{}\"]", n.id, label(&n.text()));
        classes.entry(node_style(n)).or_default().push(&n.id);
    }
    let mut links: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, e) in g.edges.iter().enumerate() {
        let _ = writeln!(out, "  {} -->|\"{}\"| {}", e.src, label(&e.rel), e.dst);
        let style = if e.on_cycle {
            format!("stroke:{CYCLE_EDGE},stroke-width:2.5px")
        } else {
            format!("stroke:{}", palette::rel_colour(&e.rel))
        };
        links.entry(style).or_default().push(i);
    }
    let notes = g.notes();
    for (id, text) in &notes {
        let _ = writeln!(out, "  {id}[\"{}\"]", label(text));
    }
    for (i, (style, ids)) in classes.iter().enumerate() {
        let _ = writeln!(out, "  classDef c{i} {style}");
        let _ = writeln!(out, "  class {} c{i}", ids.join(","));
    }
    let noted: Vec<&str> = notes.iter().map(|(id, _)| *id).collect();
    if !noted.is_empty() {
        let _ = writeln!(
            out,
            "  classDef note fill:{NOTE_FILL},stroke:{NOTE_STROKE},stroke-dasharray:4 2"
        );
        let _ = writeln!(out, "  class {} note", noted.join(","));
    }
    for (style, edges) in &links {
        let list: Vec<String> = edges.iter().map(usize::to_string).collect();
        let _ = writeln!(out, "  linkStyle {} {style}", list.join(","));
    }
    out
}
