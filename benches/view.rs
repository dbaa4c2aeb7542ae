//! The viewer's pages at 200 and 2,000 nodes: file size, and in headless
//! Chromium the time from navigation to the first full render (the
//! page's own `graphctx:first-render` performance measure), the layout's
//! share of it, and the time of one redraw (what panning and zooming
//! cost per frame).
//!
//! Two kinds of graph: an ontology graph scaled up from the seed systems
//! (benches/common's `build_scaled_ontology`), and context selections from
//! this repository's own code (signatures, doc comments, file locations),
//! cut to the node count by the budget as `graphctx view --budget` does.
//!
//! Run: `cargo bench --bench view` (needs /usr/bin/chromium).

use std::path::Path;

use graphctx::analyse::relevance::Strategy;
use graphctx::analyse::select::BaseSpec;
use graphctx::emit::diagram::code::{context_graph, max_nodes};
use graphctx::emit::diagram::DiagramGraph;
use graphctx::emit::view;
use graphctx::index::{index_repository, IndexOptions};
use graphctx::ontology::diagram::ontology_graph;
use graphctx::ontology::store::load_graph;
use graphctx::store::Store;

mod common;
use common::{build_scaled_ontology, percentile};

#[path = "../tests/it/common/chromium.rs"]
mod chromium;
use chromium::{body_attr, percent_encode, Chromium};

/// Page loads per graph.
const LOADS: usize = 7;

fn main() {
    graphctx::languages::install();
    let chromium = Chromium::find().expect("/usr/bin/chromium (scripts/install-test-clients.sh)");
    let out = tempfile::tempdir().unwrap();
    println!("| graph | nodes | edges | file | first render p50 | layout p50 | redraw p50 |");
    println!("|---|---|---|---|---|---|---|");
    for n in [200, 2000] {
        let store = Store::memory().unwrap();
        let name = format!("onto{n}");
        build_scaled_ontology(&store, &name, n);
        let g = ontology_graph(&load_graph(&store, &name).unwrap());
        measure(&chromium, out.path(), "ontology", &g);
    }
    let store = Store::memory().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    index_repository(&store, root, &IndexOptions::default()).unwrap();
    for n in [200, 2000] {
        // The smallest budget whose diagram may hold n nodes.
        let budget = (0..).map(|b| b * 6).find(|b| max_nodes(*b) >= n).unwrap();
        let base = BaseSpec::File("crates/store/src/lib.rs".into());
        let g = context_graph(&store, "code", &base, 3, Strategy::Blended, budget).unwrap();
        measure(
            &chromium,
            out.path(),
            "context of crates/store/src/lib.rs",
            &g,
        );
    }
}

fn measure(chromium: &Chromium, dir: &Path, what: &str, g: &DiagramGraph) {
    let page = dir.join(format!("{}.html", g.nodes.len()));
    let html = view::render(g);
    std::fs::write(&page, &html).unwrap();
    // A click makes the page draw a second time, with the selection.
    let fragment = format!(
        "click={}",
        percent_encode(&g.nodes[g.nodes.len() / 2].key, "")
    );
    let (mut first, mut layout, mut redraw) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..LOADS {
        let dom = chromium.dump_dom(&page, &fragment);
        let num = |name: &str| -> f64 {
            body_attr(&dom, name)
                .unwrap_or_else(|| panic!("no {name}"))
                .parse()
                .unwrap()
        };
        assert_eq!(num("data-rendered-nodes") as usize, g.nodes.len());
        first.push(num("data-first-render-ms"));
        layout.push(num("data-layout-ms"));
        redraw.push(num("data-draw-ms"));
    }
    for v in [&mut first, &mut layout, &mut redraw] {
        v.sort_by(f64::total_cmp);
    }
    println!(
        "| {what} | {} | {} | {:.0} kB | {:.0} ms | {:.0} ms | {:.1} ms |",
        g.nodes.len(),
        g.edges.len(),
        html.len() as f64 / 1000.0,
        percentile(&first, 0.5),
        percentile(&layout, 0.5),
        percentile(&redraw, 0.5),
    );
}
