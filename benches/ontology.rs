//! Canvas context capture latency and Format E's token reduction on
//! ontology graphs built from the seeds' examples, scaled up.
//!
//! The graph: copies of the cargo management system (seed 000 scenarios,
//! tests/fixtures/ontology/cargo.e: SYS, ACTOR, UC, FUNC, REQ) and of the
//! order system (seed 001 §3.2/§11, order.json: FLOW, SCHEMA, properties),
//! joined under one enterprise SYS node, with canvas positions, cut at
//! the wanted node count.
//!
//! Measures (in-memory store, p50 and p95 over the runs):
//! - capture FULL of a 100-node graph and MINIMAL, as cache misses (the
//!   session's zoom toggles between runs, outside the timed region, so the
//!   fingerprint changes) and as cache hits; seed 000 targets < 50 ms and
//!   < 5 ms;
//! - tokens of Format E against the compact JSON of the same 200-node graph
//!   (seed 001 §6.4: 74.2 %), o200k and cl100k.
//!
//! Run: `cargo bench --bench ontology`.

use std::time::Instant;

use graphctx::capture::session::{self, SessionUpdate};
use graphctx::capture::{self, CaptureOptions, Mode};
use graphctx::ontology::io::{self, Format};
use graphctx::ontology::store::load_graph;
use graphctx::store::Store;
use graphctx::support::tokens::{Encoding, TokenCounter};

mod common;
use common::{build_scaled_ontology, stats};

const RUNS: usize = 60;

fn time_capture(store: &Store, graph: &str, mode: Mode, miss: bool) -> Vec<f64> {
    let o = CaptureOptions {
        mode,
        ..CaptureOptions::default()
    };
    let g = load_graph(store, graph).unwrap();
    let mut out = Vec::with_capacity(RUNS);
    for i in 0..RUNS + 3 {
        if miss {
            // Change what the header shows, so the next capture is a miss.
            session::update(
                store,
                &g,
                "bench",
                SessionUpdate {
                    zoom: Some(1.0 + (i % 7) as f64 / 10.0 + i as f64 / 1000.0),
                    ..Default::default()
                },
            )
            .unwrap();
        }
        let t = Instant::now();
        let r = capture::capture(store, graph, "bench", None, &o).unwrap();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if miss {
            assert!(!r.cached);
        } else if i > 0 {
            assert!(r.cached);
        }
        if i >= 3 {
            out.push(ms);
        }
    }
    out
}

fn main() {
    graphctx::languages::install();
    println!("graphctx ontology bench: capture latency and Format E vs JSON tokens");
    let store = Store::memory().unwrap();

    build_scaled_ontology(&store, "g100", 100);
    let g = load_graph(&store, "g100").unwrap();
    println!(
        "\n100-node graph: {} nodes, {} edges (copies of the seed systems)",
        g.nodes.len(),
        g.edges.len()
    );
    session::update(&store, &g, "bench", SessionUpdate::default()).unwrap();
    // Warm the tokenizer (loaded once per process).
    TokenCounter::new(Encoding::O200k).count_exact("warm up");
    let (full_miss, _) = stats(
        "capture FULL, cache miss",
        time_capture(&store, "g100", Mode::Full, true),
    );
    let (min_miss, _) = stats(
        "capture MINIMAL, cache miss",
        time_capture(&store, "g100", Mode::Minimal, true),
    );
    let (full_hit, _) = stats(
        "capture FULL, cache hit",
        time_capture(&store, "g100", Mode::Full, false),
    );
    let (min_hit, _) = stats(
        "capture MINIMAL, cache hit",
        time_capture(&store, "g100", Mode::Minimal, false),
    );
    // What a miss costs beyond reading the graph: render alone.
    let state = session::load(&store, "g100", "bench").unwrap().unwrap();
    let mut v = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let g = load_graph(&store, "g100").unwrap();
        let _ = capture::render(&store, &g, &state, &CaptureOptions::default(), 0).unwrap();
        v.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    stats("load graph + render FULL (no cache I/O)", v);
    let mut v = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let _ = load_graph(&store, "g100").unwrap();
        v.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    stats("load graph alone", v);
    let st = &capture::stats(&store, "g100", Some("bench")).unwrap()[0];
    println!(
        "cache over the runs above: {} hits, {} misses",
        st.hits, st.misses
    );
    println!(
        "targets: FULL < 50 ms (seed) / < 5 ms (goal): miss {full_miss:.3} ms, hit {full_hit:.3} ms; \
         MINIMAL < 5 ms (seed) / < 1 ms (goal): miss {min_miss:.3} ms, hit {min_hit:.3} ms"
    );

    // The seed's stream: 10 identical requests.
    let g = load_graph(&store, "g100").unwrap();
    session::update(&store, &g, "stream", SessionUpdate::default()).unwrap();
    for _ in 0..10 {
        capture::capture(&store, "g100", "stream", None, &CaptureOptions::default()).unwrap();
    }
    let st = &capture::stats(&store, "g100", Some("stream")).unwrap()[0];
    println!(
        "10 identical FULL requests: {} hits, {} misses, hit rate {:.0} % (seed: > 80 %)",
        st.hits,
        st.misses,
        st.hit_rate * 100.0
    );

    build_scaled_ontology(&store, "g200", 200);
    let g = load_graph(&store, "g200").unwrap();
    println!(
        "\n200-node system: {} nodes, {} edges",
        g.nodes.len(),
        g.edges.len()
    );
    let json = serde_json::to_string(&io::export_json(&g)).unwrap();
    let e = io::export(&g, Format::E);
    let mut no_pos = g.clone();
    for n in no_pos.nodes.values_mut() {
        n.position = None;
    }
    let json_np = serde_json::to_string(&io::export_json(&no_pos)).unwrap();
    let e_np = io::export(&no_pos, Format::E);
    // Where the tokens go (o200k, without positions).
    let c = TokenCounter::new(Encoding::O200k);
    let v = io::export_json(&no_pos);
    let jn = c.count_exact(&serde_json::to_string(&v["nodes"]).unwrap());
    let je = c.count_exact(&serde_json::to_string(&v["relationships"]).unwrap());
    let (en, ee) = e_np.split_once("\n## Edges\n").unwrap();
    println!(
        "breakdown (o200k, no positions): JSON nodes {jn} + relationships {je}; Format E node lines {} + edge lines {}",
        c.count_exact(en),
        c.count_exact(ee)
    );
    let uuid_tokens: usize = no_pos.nodes.keys().map(|u| c.count_exact(u)).sum();
    println!(
        "  UUIDs: {uuid_tokens} tokens for the {} node UUIDs alone (each edge repeats two of them)",
        no_pos.nodes.len()
    );
    for enc in [Encoding::O200k, Encoding::Cl100k] {
        let c = TokenCounter::new(enc);
        for (label, j, f) in [
            ("with positions", &json, &e),
            ("without positions", &json_np, &e_np),
        ] {
            let (tj, te) = (c.count_exact(j), c.count_exact(f));
            println!(
                "{:<11} {label:<18} compact JSON {tj:>6} tokens, Format E {te:>6} tokens: reduction {:.1} % (seed 74.2 %, goal >= 80 %)",
                enc.name(),
                100.0 * (1.0 - te as f64 / tj as f64)
            );
        }
    }
    assistant_request_tokens(&store);
}

/// What one `graph ask` request on the 200-node system costs in tokens,
/// by part, and how much of it the cacheable system blocks hold: the
/// rules, the FULL capture (as the assistant sends it), a full history
/// window of six exchanges (each a request and an answer of ten
/// operations, as `operations::sample` writes them) and the request.
fn assistant_request_tokens(store: &Store) {
    use graphctx::assistant::{history::HISTORY_PAIRS, prompt};
    use graphctx::operations::sample::cargo_response;
    let g = load_graph(store, "g200").unwrap();
    session::update(store, &g, "ask", SessionUpdate::default()).unwrap();
    let c = TokenCounter::new(Encoding::O200k);
    let opts = CaptureOptions {
        include_metadata: false,
        ..CaptureOptions::default()
    };
    let cap = capture::capture(store, "g200", "ask", None, &opts).unwrap();
    let state = session::load(store, "g200", "ask").unwrap().unwrap();
    let canvas = prompt::canvas_line(&state, &g);
    let request = prompt::user_turn(&canvas, "Add a payment function under ManageFleet3");
    let rules = c.count_exact(&prompt::rules());
    let context = c.count_exact(&prompt::context_block(&cap));
    let answer = serde_json::to_string_pretty(&cargo_response(1)).unwrap();
    let pair = c.count_exact(&request) + c.count_exact(&answer);
    let history = HISTORY_PAIRS * pair;
    let req = c.count_exact(&request);
    let total = rules + context + history + req;
    println!(
        "\ngraph ask on the 200-node system (o200k): rules {rules}, FULL context {context}, \
         history {history} ({HISTORY_PAIRS} exchanges of {pair}), request {req}; total {total}"
    );
    println!(
        "  cacheable system blocks (rules + context): {} tokens = {:.1} % of the request \
         ({:.1} % without history)",
        rules + context,
        100.0 * (rules + context) as f64 / total as f64,
        100.0 * (rules + context) as f64 / (rules + context + req) as f64
    );
}
