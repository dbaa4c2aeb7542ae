//! A selection as a graph: the one model every picture is drawn from.
//!
//! `context`, `blast`, `callers`, `callees`, `cycles` and `graph export`
//! each know which entities (or ontology nodes) an answer holds; the
//! builders here turn that answer into a [`DiagramGraph`] — nodes in the
//! order they matter (the first ones survive a budget cut), edges labelled
//! by relationship, cycle edges marked — without choosing anything again
//! (a context's candidates come from [`crate::analyse::select`], its edges
//! from the same relationships the context document lists). Renderers
//! (Mermaid, DOT, the HTML viewer) only draw the model, with the colours of
//! [`super::palette`], and [`fit_to_budget`] cuts it like any answer.
//!
//! Node ids (`n0`, `n1`, …) are generated: a renderer never writes a key
//! or a name where the format expects an identifier, only inside a label
//! it escaped.

pub mod code;
pub mod dot;
pub mod mermaid;

use serde::Serialize;

use crate::support::tokens::TokenCounter;

/// The diagram text formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagramFormat {
    /// A Mermaid flowchart (GitHub, GitLab and most Markdown viewers draw it).
    Mermaid,
    /// Graphviz DOT (`dot -Tsvg`).
    Dot,
}

impl DiagramFormat {
    pub fn name(self) -> &'static str {
        match self {
            DiagramFormat::Mermaid => "mermaid",
            DiagramFormat::Dot => "dot",
        }
    }
}

/// `text` with each line's characters written by `write` (control
/// characters dropped) and the lines joined by `line_break`: how each
/// format escapes a label.
fn escape_lines(text: &str, line_break: &str, write: impl Fn(char, &mut String)) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push_str(line_break);
        }
        for c in line.chars().filter(|c| !c.is_control()) {
            write(c, &mut out);
        }
    }
    out
}

/// The text of `g` in `format`.
pub fn render(g: &DiagramGraph, format: DiagramFormat) -> String {
    match format {
        DiagramFormat::Mermaid => mermaid::render(g),
        DiagramFormat::Dot => dot::render(g),
    }
}

/// A diagram within its budget.
#[derive(Debug, Clone, Serialize)]
pub struct FittedDiagram {
    pub text: String,
    /// The text's exact token count (never above the budget).
    pub token_count: usize,
    /// The graph drawn (what the budget left of the answer).
    pub graph: DiagramGraph,
}

#[derive(Debug, thiserror::Error)]
pub enum DiagramError {
    #[error(
        "a {format} diagram needs at least {needed} tokens, over the {budget}-token budget; \
         raise --budget"
    )]
    BudgetTooSmall {
        format: &'static str,
        needed: usize,
        budget: usize,
    },
}

/// `g` drawn in `format` within `budget` tokens (counted with `counter`,
/// the tokenizer every answer is counted with): all of it when it fits,
/// else the longest prefix of its nodes that fits with the note saying
/// how many were left out — nodes are in order of importance, so the
/// lowest tiers and the least relevant go first.
pub fn fit_to_budget(
    g: &DiagramGraph,
    format: DiagramFormat,
    budget: usize,
    counter: &TokenCounter,
) -> Result<FittedDiagram, DiagramError> {
    let attempt = |keep: usize| {
        let graph = g.truncated(keep, Some(budget));
        let text = render(&graph, format);
        let token_count = counter.count_exact(&text);
        FittedDiagram {
            text,
            token_count,
            graph,
        }
    };
    let whole = attempt(g.nodes.len());
    if whole.token_count <= budget {
        return Ok(whole);
    }
    let least = attempt(0);
    if least.token_count > budget {
        return Err(DiagramError::BudgetTooSmall {
            format: format.name(),
            needed: least.token_count,
            budget,
        });
    }
    // The largest prefix that fits: `fits` always fits, `over` never.
    let (mut fits, mut over) = (least, g.nodes.len());
    let mut kept = 0;
    while over - kept > 1 {
        let mid = kept + (over - kept) / 2;
        let candidate = attempt(mid);
        if candidate.token_count <= budget {
            fits = candidate;
            kept = mid;
        } else {
            over = mid;
        }
    }
    Ok(fits)
}

/// A picture's graph: what it is of, its nodes and edges, and what was
/// left out.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DiagramGraph {
    /// What the picture shows (`context of src/index/keys.rs`).
    pub title: String,
    /// In order of importance: base entities and the nearest first. A
    /// budget cut keeps a prefix.
    pub nodes: Vec<DiagramNode>,
    /// Between nodes of [`DiagramGraph::nodes`] (by [`DiagramNode::id`]).
    pub edges: Vec<DiagramEdge>,
    /// Set when nodes of the answer are not in the picture.
    pub cut: Option<Cut>,
    /// Shown in place of the graph when there are no nodes
    /// (`no dependency cycles`).
    pub empty_note: Option<String>,
}

/// One entity or ontology node.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DiagramNode {
    /// Generated identifier, unique in the graph (`n0`, `n1`, …): safe as
    /// a Mermaid or DOT node id and as an HTML id.
    pub id: String,
    /// The entity's ISGL1 key, or the ontology node's semantic ID.
    pub key: String,
    /// What the node shows: an entity's name (`Owner::name` for a
    /// method), an ontology node's semantic ID. May hold any character.
    pub label: String,
    /// The entity's or ontology node's own name (`Name`).
    pub name: String,
    /// A second line under the label: an ontology node's `Name`.
    pub caption: Option<String>,
    /// Stored kind (`function`, `struct`, …) or ontology type (`UseCase`):
    /// the fill colour ([`super::palette::kind_fill`]).
    pub kind: String,
    /// Priority tier: 1 = base entities and what is closest … 3 = the
    /// rest: the outline ([`super::palette::tier_stroke`]).
    pub tier: u8,
    /// A base entity: the one the answer is about ([`super::palette::BASE_STROKE`]).
    pub base: bool,
    /// Repository-relative file, for code entities.
    pub file: Option<String>,
    pub start_line: Option<i64>,
    pub end_line: Option<i64>,
    /// The one-line signature head of a code entity.
    pub signature: Option<String>,
    /// Documentation, or an ontology node's description.
    pub doc: Option<String>,
}

impl DiagramNode {
    /// What the node shows: its label, and its caption on a second line.
    pub fn text(&self) -> String {
        match &self.caption {
            Some(c) if !c.is_empty() && *c != self.label => format!("{}\n{c}", self.label),
            _ => self.label.clone(),
        }
    }
}

/// A relationship between two nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiagramEdge {
    /// [`DiagramNode::id`] of the dependent (the edge's origin).
    pub src: String,
    /// Stored relationship name (`calls`, `uses_type`, `composes`, …).
    pub rel: String,
    /// [`DiagramNode::id`] of the dependency.
    pub dst: String,
    /// Both ends lie on one dependency cycle ([`super::palette::CYCLE_EDGE`]).
    pub on_cycle: bool,
}

/// What a picture leaves out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// Nodes of the answer not drawn.
    pub nodes_left_out: usize,
    /// Nodes of the whole answer.
    pub nodes_total: usize,
    /// The budget that cut them, when a budget did.
    pub budget: Option<usize>,
}

impl Cut {
    /// The sentence a picture shows about it.
    pub fn note(&self) -> String {
        let what = format!(
            "{} of {} nodes left out",
            self.nodes_left_out, self.nodes_total
        );
        match self.budget {
            Some(b) => format!("{what} to stay within the {b}-token budget"),
            None => what,
        }
    }
}

impl DiagramGraph {
    /// An empty graph titled `title`.
    pub fn new(title: impl Into<String>) -> DiagramGraph {
        DiagramGraph {
            title: title.into(),
            ..DiagramGraph::default()
        }
    }

    /// The note nodes a picture shows, by their ids (which no generated
    /// node id can be): what a cut left out, why the graph is empty.
    pub fn notes(&self) -> Vec<(&'static str, String)> {
        let mut notes = Vec::new();
        if let Some(c) = &self.cut {
            notes.push(("cut_note", c.note()));
        }
        if let Some(e) = &self.empty_note {
            notes.push(("empty_note", e.clone()));
        }
        notes
    }

    /// Add a node (its id is generated) and return the id.
    pub fn push_node(&mut self, mut node: DiagramNode) -> String {
        node.id = format!("n{}", self.nodes.len());
        let id = node.id.clone();
        self.nodes.push(node);
        id
    }

    /// Add an edge between two node ids; the same `(src, rel, dst)` once.
    pub fn push_edge(&mut self, src: &str, rel: &str, dst: &str, on_cycle: bool) {
        if let Some(e) = self
            .edges
            .iter_mut()
            .find(|e| e.src == src && e.rel == rel && e.dst == dst)
        {
            e.on_cycle |= on_cycle;
            return;
        }
        self.edges.push(DiagramEdge {
            src: src.to_string(),
            rel: rel.to_string(),
            dst: dst.to_string(),
            on_cycle,
        });
    }

    /// The graph with only its first `keep` nodes and the edges between
    /// them; the cut counts what went (on top of what was already left
    /// out before this graph was built).
    pub fn truncated(&self, keep: usize, budget: Option<usize>) -> DiagramGraph {
        let keep = keep.min(self.nodes.len());
        let nodes: Vec<DiagramNode> = self.nodes[..keep].to_vec();
        let kept: std::collections::HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
        let edges = self
            .edges
            .iter()
            .filter(|e| kept.contains(e.src.as_str()) && kept.contains(e.dst.as_str()))
            .cloned()
            .collect();
        let before = self.cut.as_ref().map_or(0, |c| c.nodes_left_out);
        let total = self
            .cut
            .as_ref()
            .map_or(self.nodes.len(), |c| c.nodes_total);
        let left_out = before + (self.nodes.len() - keep);
        DiagramGraph {
            title: self.title.clone(),
            nodes,
            edges,
            cut: (left_out > 0).then(|| Cut {
                nodes_left_out: left_out,
                nodes_total: total,
                budget: if keep < self.nodes.len() {
                    budget
                } else {
                    self.cut.as_ref().and_then(|c| c.budget)
                },
            }),
            empty_note: self.empty_note.clone(),
        }
    }
}
