//! Helpers shared by the benchmarks: finding real code in the cargo
//! registry and copying it somewhere private.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use graphctx::index::{languages, walk};
use graphctx::ontology::format_e;
use graphctx::ontology::store::OntoTx;
use graphctx::ontology::{NodeType, OntoEdge, OntoNode, Position, RelType};
use graphctx::store::{Batch, Store};

/// The allocator the `graphctx` binary uses (see src/main.rs), in every
/// benchmark (each includes this module), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Registry crates indexed together for the ≥ 50k-entity benchmarks
/// (`context`, `serve`).
pub const LARGE_INDEX_CRATES: &[&str] = &[
    "cozo-ce",
    "nalgebra",
    "syn",
    "regex-automata",
    "regex-syntax",
    "clap_builder",
    "serde_json",
    "rayon",
    "tiktoken-rs",
    "ignore",
    "indicatif",
    "tree-sitter",
    "proptest",
    "serde",
    "miette",
    "pest",
    "chrono",
    "itertools",
    "sqlite",
    "crossbeam-channel",
    "smartstring",
    "rand",
    "env_logger",
    "aho-corasick",
    "memchr",
    "jiff",
    "csv",
    "hashbrown",
    "indexmap",
    "regex",
    "clap_derive",
    "serde_derive",
    "blake3",
];

/// `~/.cargo/registry/src/<index>`, where cargo unpacks crate sources.
pub fn registry_src() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.is_dir())
}

/// The newest version directory of a crate in the registry, e.g. `syn` → `.../syn-2.0.119`.
pub fn find_crate(name: &str) -> Option<PathBuf> {
    let src = registry_src()?;
    let mut hits: Vec<PathBuf> = std::fs::read_dir(&src)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(name))
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        })
        .collect();
    hits.sort();
    hits.pop()
}

/// Copy the `.rs` files the walker would index, and the top manifest.
pub fn copy_tree(from: &Path, to: &Path) {
    // The sources, and the manifests of every directory above one: the
    // layouts they make (crate names and targets, packages, path aliases)
    // decide what resolves.
    let mut dirs = std::collections::BTreeSet::new();
    for f in walk::walk(from).files {
        let dst = to.join(&f.ctx.path);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(&f.abs_path, &dst).unwrap();
        let mut dir = Path::new(&f.ctx.path).parent();
        while let Some(d) = dir {
            if !dirs.insert(d.to_path_buf()) {
                break;
            }
            dir = d.parent();
        }
    }
    dirs.insert(PathBuf::new());
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(from.join(&d)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let manifest = name
                .to_str()
                .is_some_and(|n| languages::all().iter().any(|l| l.is_manifest(n)));
            if manifest && e.path().is_file() {
                std::fs::copy(e.path(), to.join(&d).join(&name)).unwrap();
            }
        }
    }
}

/// The value at quantile `p` (0..=1) of an ascending slice; 0 when empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Print one latency line (n, p50, p95, max, in ms) and return (p50, p95).
pub fn stats(label: &str, mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let (p50, p95) = (percentile(&v, 0.5), percentile(&v, 0.95));
    println!(
        "{label:<46} n={:<4} p50 {:>8.3} ms  p95 {:>8.3} ms  max {:>8.3} ms",
        v.len(),
        p50,
        p95,
        v.last().copied().unwrap_or(0.0)
    );
    (p50, p95)
}

/// CPU time of the calling thread, in milliseconds: on a machine shared
/// with other work, wall time counts the waits for a core, this does not.
pub fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill in.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
}

/// Milliseconds since `t`.
pub fn ms(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Crate names from the bench's arguments (cargo's `--bench` dropped), or
/// [`LARGE_INDEX_CRATES`] when none are given.
pub fn crate_names_from_args() -> Vec<String> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.is_empty() {
        LARGE_INDEX_CRATES.iter().map(|s| s.to_string()).collect()
    } else {
        args
    }
}

/// Copy the named registry crates below `root`; the directory names of
/// those found (`syn-2.0.119`, …).
pub fn copy_crates(names: &[String], root: &Path) -> Vec<String> {
    let mut used = vec![];
    for name in names {
        let Some(dir) = find_crate(name) else {
            continue;
        };
        copy_tree(&dir, &root.join(dir.file_name().unwrap()));
        used.push(dir.file_name().unwrap().to_string_lossy().into_owned());
    }
    used
}

/// A file of tests/fixtures/ontology.
pub fn ontology_fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/ontology")
            .join(name),
    )
    .unwrap()
}

/// Build ontology graph `graph` with `n` nodes from copies of the seed
/// systems: the cargo management system (tests/fixtures/ontology/cargo.e)
/// and the order system (order.json), joined under one enterprise SYS node,
/// with canvas positions.
pub fn build_scaled_ontology(store: &Store, graph: &str, n: usize) {
    let cargo = format_e::parse(&ontology_fixture("cargo.e")).unwrap();
    let order: serde_json::Value = serde_json::from_str(&ontology_fixture("order.json")).unwrap();
    let mut tx = OntoTx::begin(store, graph).unwrap();
    let root = tx
        .upsert_node(OntoNode::new(
            NodeType::Sys,
            "Enterprise",
            "All logistics systems of the group",
        ))
        .unwrap()
        .after;
    let mut count = 1;
    let mut copy = 0;
    'outer: loop {
        copy += 1;
        let mut ids = std::collections::HashMap::new();
        for p in &cargo.nodes {
            if count >= n {
                break 'outer;
            }
            let mut node = OntoNode::new(
                p.node.node_type,
                &format!("{}{copy}", p.node.name),
                &p.node.descr,
            );
            node.position = Some(Position {
                x: (count % 20) as f64 * 180.0,
                y: (count / 20) as f64 * 120.0,
            });
            let after = tx.upsert_node(node).unwrap().after;
            ids.insert(p.node.semantic_id.clone(), after.uuid);
            count += 1;
        }
        for e in &cargo.edges {
            if let (Some(s), Some(d)) = (ids.get(&e.src), ids.get(&e.dst)) {
                tx.upsert_edge(OntoEdge::new(s, e.rel, d)).unwrap();
            }
        }
        if let Some(top) = ids.get("CargoManagement.SY.001") {
            tx.upsert_edge(OntoEdge::new(&root.uuid, RelType::Compose, top))
                .unwrap();
        }
        let mut oids = std::collections::HashMap::new();
        for v in order["nodes"].as_array().unwrap() {
            if count >= n {
                break 'outer;
            }
            let props = v["properties"].as_object().unwrap();
            let mut node = OntoNode::new(
                NodeType::parse(v["type"].as_str().unwrap()).unwrap(),
                &format!("{}{copy}", props["Name"].as_str().unwrap()),
                props["Descr"].as_str().unwrap(),
            );
            for (k, val) in props {
                if !["Name", "Descr", "position"].contains(&k.as_str()) {
                    node.props.insert(k.clone(), val.clone());
                }
            }
            node.position = Some(Position {
                x: (count % 20) as f64 * 180.0,
                y: (count / 20) as f64 * 120.0,
            });
            let after = tx.upsert_node(node).unwrap().after;
            oids.insert(v["uuid"].as_str().unwrap().to_string(), after.uuid);
            count += 1;
        }
        for e in order["relationships"].as_array().unwrap() {
            let (s, d) = (
                &oids[e["source"].as_str().unwrap()],
                &oids[e["target"].as_str().unwrap()],
            );
            let rel = RelType::parse(e["type"].as_str().unwrap()).unwrap();
            tx.upsert_edge(OntoEdge::new(s, rel, d)).unwrap();
        }
        if let (Some(sys), Some(actor)) =
            (ids.get("OrderSystem.SY.003"), ids.get("Customer.AC.001"))
        {
            let order_sys = &oids["uuid-sys-123"];
            tx.upsert_edge(OntoEdge::new(sys, RelType::Compose, order_sys))
                .unwrap();
            tx.upsert_edge(OntoEdge::new(
                actor,
                RelType::Io,
                &oids["7c9e6679-7425-40de-944b-e07fc1f90ae7"],
            ))
            .unwrap();
        }
    }
    let mut batch = Batch::new();
    tx.finish(&mut batch);
    store.apply(batch).unwrap();
}
