//! The HTML viewer (`graphctx view`): a [`DiagramGraph`] as one
//! self-contained page.
//!
//! The page is a template with its script and style inline
//! (`page.html`, `page.js`, `page.css`, compiled in) and the graph
//! embedded as JSON in a `<script type="application/json">` element: it
//! opens from disk, offline, and can be mailed or attached to a review.
//! The script draws on one canvas (thousands of nodes stay responsive
//! where as many SVG elements would not), computes its layout once (rings
//! by hop distance around the base), and filters by redrawing only.
//!
//! Source text reaches the page only as JSON data, and the page puts it
//! into the document through `textContent`: [`script_safe_json`] escapes
//! `<`, `>`, `&` and the two JavaScript line terminators, so no name or
//! doc comment can close the data element. On top, the page's Content
//! Security Policy allows no network at all and runs only the page's own
//! script and style (by their SHA-256), so even injected markup could not
//! run or load anything.
//!
//! The colours are [`super::palette`]'s, passed in with the data for the
//! kinds and relationships the graph holds: the viewer and the Mermaid
//! and DOT diagrams always agree.

use std::collections::{BTreeMap, HashMap};

use base64::Engine as _;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::diagram::DiagramGraph;
use super::palette;

const TEMPLATE: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

const CSP_MARK: &str = "/*GRAPHCTX_CSP*/";
const STYLE_MARK: &str = "/*GRAPHCTX_CSS*/";
const SCRIPT_MARK: &str = "/*GRAPHCTX_JS*/";
const DATA_MARK: &str = "/*GRAPHCTX_DATA*/";

/// What the page's script reads (`page.js` names these fields).
#[derive(Serialize)]
struct PageData<'a> {
    title: &'a str,
    /// What the picture leaves out, shown beside it.
    note: Option<String>,
    /// Shown in place of an empty graph.
    empty_text: Option<&'a str>,
    nodes: Vec<PageNode<'a>>,
    edges: Vec<PageEdge<'a>>,
    palette: PagePalette,
}

#[derive(Serialize)]
struct PageNode<'a> {
    key: &'a str,
    name: &'a str,
    caption: Option<&'a str>,
    kind: &'a str,
    tier: u8,
    base: bool,
    file: Option<&'a str>,
    lines: Option<[i64; 2]>,
    signature: Option<&'a str>,
    doc: Option<&'a str>,
}

/// Ends by index into `nodes`.
#[derive(Serialize)]
struct PageEdge<'a> {
    source: usize,
    target: usize,
    rel: &'a str,
    cycle: bool,
}

#[derive(Serialize)]
struct Stroke {
    colour: &'static str,
    width: f32,
}

impl From<(&'static str, f32)> for Stroke {
    fn from((colour, width): (&'static str, f32)) -> Stroke {
        Stroke { colour, width }
    }
}

/// The colours of the kinds and relationships present; `rels["*"]` is
/// the colour of any other relationship.
#[derive(Serialize)]
struct PagePalette {
    kinds: BTreeMap<String, &'static str>,
    tiers: BTreeMap<String, Stroke>,
    base: Stroke,
    rels: BTreeMap<String, &'static str>,
    cycle: &'static str,
}

fn palette_for(g: &DiagramGraph) -> PagePalette {
    let kinds = g
        .nodes
        .iter()
        .map(|n| (n.kind.clone(), palette::kind_fill(&n.kind)))
        .collect();
    let mut rels: BTreeMap<String, &'static str> = g
        .edges
        .iter()
        .map(|e| (e.rel.clone(), palette::rel_colour(&e.rel)))
        .collect();
    rels.insert("*".into(), palette::rel_colour(""));
    PagePalette {
        kinds,
        tiers: (0..=3u8)
            .map(|t| (t.to_string(), palette::tier_stroke(t).into()))
            .collect(),
        base: palette::BASE_STROKE.into(),
        rels,
        cycle: palette::CYCLE_EDGE,
    }
}

fn page_data(g: &DiagramGraph) -> PageData<'_> {
    let index: HashMap<&str, usize> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let nodes = g
        .nodes
        .iter()
        .map(|n| PageNode {
            key: &n.key,
            name: &n.label,
            caption: n.caption.as_deref().filter(|c| *c != n.label),
            kind: &n.kind,
            tier: n.tier,
            base: n.base,
            file: n.file.as_deref(),
            lines: n.start_line.map(|s| [s, n.end_line.unwrap_or(s)]),
            signature: n.signature.as_deref(),
            doc: n.doc.as_deref(),
        })
        .collect();
    let edges = g
        .edges
        .iter()
        .filter_map(|e| {
            Some(PageEdge {
                source: *index.get(e.src.as_str())?,
                target: *index.get(e.dst.as_str())?,
                rel: &e.rel,
                cycle: e.on_cycle,
            })
        })
        .collect();
    PageData {
        title: &g.title,
        note: g.cut.as_ref().map(|c| c.note()),
        empty_text: g.empty_note.as_deref(),
        nodes,
        edges,
        palette: palette_for(g),
    }
}

/// The page for `g`: one HTML document with everything inline.
pub fn render(g: &DiagramGraph) -> String {
    let data = script_safe_json(&page_data(g));
    let csp = format!(
        "default-src 'none'; script-src 'sha256-{}'; style-src 'sha256-{}'; \
         img-src data:; base-uri 'none'; form-action 'none'",
        sha256_base64(SCRIPT),
        sha256_base64(STYLE)
    );
    // The data goes in last: nothing it holds is ever taken for a mark.
    TEMPLATE
        .replacen(CSP_MARK, &csp, 1)
        .replacen(STYLE_MARK, STYLE, 1)
        .replacen(SCRIPT_MARK, SCRIPT, 1)
        .replacen(DATA_MARK, &data, 1)
}

/// JSON that can stand inside a `<script>` element of an HTML page:
/// `<`, `>` and `&` as `\u` escapes (no `</script>`, `<!--` or character
/// reference can form), and U+2028/U+2029, which JavaScript once took for
/// line ends. All of them only ever occur inside JSON strings, where the
/// escapes mean the same characters.
pub fn script_safe_json<T: Serialize>(value: &T) -> String {
    let json = serde_json::to_string(value).expect("page data serialises");
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn sha256_base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagram::DiagramNode;

    fn node(key: &str, label: &str) -> DiagramNode {
        DiagramNode {
            key: key.into(),
            label: label.into(),
            name: label.into(),
            kind: "function".into(),
            tier: 1,
            ..DiagramNode::default()
        }
    }

    /// The text between `<script type="application/json" ...>` and the
    /// next `</script>`.
    fn embedded(page: &str) -> &str {
        let start = page.find("id=\"graph-data\">").unwrap() + "id=\"graph-data\">".len();
        let len = page[start..].find("</script>").unwrap();
        &page[start..start + len]
    }

    #[test]
    fn source_text_cannot_close_the_data_element() {
        let hostile = "</script><script>alert(1)</script><!-- & \u{2028}\u{2029} \"q\"";
        let mut g = DiagramGraph::new(hostile);
        let a = g.push_node(node("a", hostile));
        let b = g.push_node(node("b", "plain"));
        g.push_edge(&a, "calls", &b, true);
        let page = render(&g);
        let data = embedded(&page);
        for bad in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            assert!(!data.contains(bad), "{bad:?} left in the data");
        }
        // Two script elements: the data and the page's own.
        assert_eq!(page.matches("<script").count(), 2);
        let back: serde_json::Value = serde_json::from_str(data).unwrap();
        assert_eq!(back["title"], hostile);
        assert_eq!(back["nodes"][0]["name"], hostile);
        assert_eq!(back["edges"][0]["source"], 0);
        assert_eq!(back["edges"][0]["target"], 1);
        assert_eq!(back["edges"][0]["cycle"], true);
    }

    #[test]
    fn the_inline_assets_fit_their_elements_and_the_policy_names_them() {
        assert!(!SCRIPT.contains("</script") && !SCRIPT.contains("<!--"));
        assert!(!STYLE.contains("</style"));
        for mark in [CSP_MARK, STYLE_MARK, SCRIPT_MARK, DATA_MARK] {
            assert_eq!(TEMPLATE.matches(mark).count(), 1, "{mark}");
            assert!(!SCRIPT.contains(mark) && !STYLE.contains(mark), "{mark}");
        }
        let page = render(&DiagramGraph::new("empty"));
        assert!(page.contains(&format!("script-src 'sha256-{}'", sha256_base64(SCRIPT))));
        assert!(page.contains("default-src 'none'"));
        assert!(!page.contains("http://") && !page.contains("https://"));
    }

    #[test]
    fn colours_come_from_the_palette_for_what_the_graph_holds() {
        let mut g = DiagramGraph::new("t");
        let mut s = node("s", "S");
        s.kind = "struct".into();
        let a = g.push_node(node("a", "a"));
        let b = g.push_node(s);
        g.push_edge(&a, "uses_type", &b, false);
        let back: serde_json::Value =
            serde_json::from_str(&script_safe_json(&page_data(&g))).unwrap();
        let p = &back["palette"];
        assert_eq!(p["kinds"]["struct"], palette::kind_fill("struct"));
        assert_eq!(p["kinds"]["function"], palette::kind_fill("function"));
        assert_eq!(p["rels"]["uses_type"], palette::rel_colour("uses_type"));
        assert_eq!(p["cycle"], palette::CYCLE_EDGE);
        assert_eq!(p["base"]["colour"], palette::BASE_STROKE.0);
        assert!(p["rels"].get("calls").is_none());
    }
}
