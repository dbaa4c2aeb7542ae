//! Dependency cycles: strongly connected components (CozoDB's
//! `StronglyConnectedComponents`) over dependency edges, plus self-loops,
//! which SCC reports as components of one. Each cycle is reported with a
//! concrete path that starts and ends at the same entity.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use serde::Serialize;

use crate::store::rows::{self, query_rows, Str};
use crate::store::value::str_list;
use crate::store::{queries, Params, Store, StoreError};

query_rows! {
    /// `queries/cycle_edges.cozo` and `queries/module_cycle_edges.cozo`:
    /// an edge `a -> b` inside strongly connected component `c`.
    CycleEdges = "cycle_edges" {
        key { c: i64, a: Str<'a>, b: Str<'a> }
    }
    /// `queries/self_loops.cozo`.
    SelfLoops = "self_loops" {
        key { a: Str<'a>, rel: Str<'a> }
    }
    /// `queries/edges_from.cozo`.
    EdgesFrom = "edges_from" {
        key { src: Str<'a>, rel: Str<'a>, dst: Str<'a> }
        value { weight: f64, origin: Str<'a> }
    }
}

pub use crate::model::rel::DEPENDENCY_RELS;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cycle {
    /// `self_loop` (an entity depending on itself, e.g. direct recursion),
    /// `component` (a strongly connected component of several entities) or
    /// `module` (modules depending on each other through their items).
    pub kind: &'static str,
    /// Every member of the component, sorted.
    pub members: Vec<String>,
    /// A concrete cycle through the component: `[A, B, C, A]`.
    pub cycle_path: Vec<String>,
    /// Relationship types on that path.
    pub rels: Vec<String>,
}

type Components = BTreeMap<i64, Vec<(String, String)>>;

fn components(rows: &cozo::NamedRows) -> Result<Components, StoreError> {
    let mut comps = Components::new();
    for r in rows::decode_rows::<CycleEdges>(rows)? {
        comps
            .entry(r.c)
            .or_default()
            .push((r.a.into_owned(), r.b.into_owned()));
    }
    Ok(comps)
}

/// All cycles of a graph: entity components (largest first), self-loops,
/// then module cycles.
pub fn find_cycles(store: &Store, graph: &str) -> Result<Vec<Cycle>, StoreError> {
    let params = Params::new()
        .with("graph", graph)
        .with("rels", str_list(DEPENDENCY_RELS));
    let comps = components(&store.read(queries::CYCLE_EDGES, params.clone())?)?;
    let rel_of = edge_rels(store, graph, &comps)?;
    let mut cycles: Vec<Cycle> = comps
        .into_values()
        .map(|edges| component_cycle(&edges, &rel_of))
        .collect();
    cycles.sort_by(|a, b| {
        b.members
            .len()
            .cmp(&a.members.len())
            .then_with(|| a.members.cmp(&b.members))
    });
    let loops = store.read(queries::SELF_LOOPS, params.clone())?;
    let mut self_loops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in rows::decode_rows::<SelfLoops>(&loops)? {
        self_loops
            .entry(r.a.into_owned())
            .or_default()
            .insert(r.rel.into_owned());
    }
    for (key, rels) in self_loops {
        cycles.push(Cycle {
            kind: "self_loop",
            members: vec![key.clone()],
            cycle_path: vec![key.clone(), key],
            rels: rels.into_iter().collect(),
        });
    }
    let modules = components(&store.read(queries::MODULE_CYCLE_EDGES, params)?)?;
    let mut module_cycles: Vec<Cycle> = modules
        .into_values()
        .map(|edges| {
            let mut c = component_cycle(&edges, &HashMap::new());
            c.kind = "module";
            c.rels = vec!["depends_on".to_string(); c.cycle_path.len() - 1];
            c
        })
        .collect();
    module_cycles.sort_by(|a, b| a.members.cmp(&b.members));
    cycles.extend(module_cycles);
    Ok(cycles)
}

fn edge_rels(
    store: &Store,
    graph: &str,
    comps: &BTreeMap<i64, Vec<(String, String)>>,
) -> Result<HashMap<(String, String), String>, StoreError> {
    let keys: BTreeSet<&str> = comps
        .values()
        .flatten()
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    let mut out: HashMap<(String, String), String> = HashMap::new();
    if keys.is_empty() {
        return Ok(out);
    }
    let rows = store.read(
        queries::EDGES_FROM,
        Params::new()
            .with("graph", graph)
            .with("keys", str_list(keys)),
    )?;
    for r in rows::decode_rows::<EdgesFrom>(&rows)? {
        if DEPENDENCY_RELS.contains(&r.rel.as_ref()) {
            out.entry((r.src.into_owned(), r.dst.into_owned()))
                .or_insert_with(|| r.rel.into_owned());
        }
    }
    Ok(out)
}

/// A shortest cycle through the smallest member of a component.
fn component_cycle(
    edges: &[(String, String)],
    rel_of: &HashMap<(String, String), String>,
) -> Cycle {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut members: BTreeSet<&str> = BTreeSet::new();
    for (a, b) in edges {
        adj.entry(a).or_default().push(b);
        members.insert(a);
        members.insert(b);
    }
    for v in adj.values_mut() {
        v.sort();
        v.dedup();
    }
    let start = *members.iter().next().expect("a component has members");
    let path = shortest_cycle(start, &adj);
    let rels = path
        .windows(2)
        .map(|w| {
            rel_of
                .get(&(w[0].to_string(), w[1].to_string()))
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    Cycle {
        kind: "component",
        members: members.into_iter().map(str::to_string).collect(),
        cycle_path: path,
        rels,
    }
}

/// Breadth-first search from `start` back to `start`.
pub fn shortest_cycle(start: &str, adj: &BTreeMap<&str, Vec<&str>>) -> Vec<String> {
    let mut prev: HashMap<&str, &str> = HashMap::new();
    let mut queue: VecDeque<&str> = VecDeque::new();
    queue.push_back(start);
    while let Some(node) = queue.pop_front() {
        for &next in adj.get(node).map(Vec::as_slice).unwrap_or(&[]) {
            if next == start {
                let mut path = vec![start.to_string()];
                let mut cur = node;
                let mut back = vec![];
                while cur != start {
                    back.push(cur.to_string());
                    cur = prev[cur];
                }
                back.reverse();
                path.extend(back);
                path.push(start.to_string());
                return path;
            }
            if next != start && !prev.contains_key(next) {
                prev.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    vec![start.to_string(), start.to_string()]
}

/// Cycles among a given set of entities with the given edges (used to
/// report cycles inside a context selection without another query).
pub fn cycles_in(edges: &[(String, String, String)]) -> Vec<Cycle> {
    // Tarjan-free approach for small selections: a cycle exists through `v`
    // iff BFS from v returns to v. Report one cycle per component found.
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut rel_of: HashMap<(String, String), String> = HashMap::new();
    let mut self_loops: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (a, rel, b) in edges {
        if !DEPENDENCY_RELS.contains(&rel.as_str()) {
            continue;
        }
        if a == b {
            self_loops.entry(a).or_default().insert(rel);
            continue;
        }
        adj.entry(a).or_default().push(b);
        rel_of
            .entry((a.clone(), b.clone()))
            .or_insert_with(|| rel.clone());
    }
    for v in adj.values_mut() {
        v.sort();
        v.dedup();
    }
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    let nodes: Vec<&str> = adj.keys().copied().collect();
    for v in nodes {
        if seen.contains(v) {
            continue;
        }
        let path = shortest_cycle(v, &adj);
        if path.len() > 2 {
            let members: BTreeSet<String> = path.iter().cloned().collect();
            seen.extend(members.iter().cloned());
            let rels = path
                .windows(2)
                .map(|w| {
                    rel_of
                        .get(&(w[0].clone(), w[1].clone()))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            out.push(Cycle {
                kind: "component",
                members: members.into_iter().collect(),
                cycle_path: path,
                rels,
            });
        }
    }
    for (k, rels) in self_loops {
        out.push(Cycle {
            kind: "self_loop",
            members: vec![k.to_string()],
            cycle_path: vec![k.to_string(), k.to_string()],
            rels: rels.into_iter().map(str::to_string).collect(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ontology_hierarchy_relations_are_dependencies() {
        for rel in crate::model::rel::HIERARCHY_RELS {
            assert!(DEPENDENCY_RELS.contains(&rel), "{rel}");
        }
    }

    #[test]
    fn shortest_cycle_walks_back_to_the_start() {
        let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        adj.insert("A", vec!["B"]);
        adj.insert("B", vec!["C", "D"]);
        adj.insert("C", vec!["A"]);
        adj.insert("D", vec!["B"]);
        assert_eq!(shortest_cycle("A", &adj), vec!["A", "B", "C", "A"]);
    }

    #[test]
    fn cycles_in_a_selection() {
        let e = |a: &str, r: &str, b: &str| (a.to_string(), r.to_string(), b.to_string());
        let cycles = cycles_in(&[
            e("a", "calls", "b"),
            e("b", "calls", "a"),
            e("c", "calls", "c"),
            e("m", "contains", "a"),
            e("a", "contains", "m"),
        ]);
        assert_eq!(cycles.len(), 2);
        assert_eq!(cycles[0].cycle_path, vec!["a", "b", "a"]);
        assert_eq!(cycles[1].kind, "self_loop");
    }
}
