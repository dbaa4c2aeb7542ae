//! Diagrams of code-graph answers: a context's selection, a blast radius,
//! callers and callees, dependency cycles.
//!
//! Each builder takes what its command already computes (a
//! [`Selection`], [`Reached`] entities, [`CallLink`]s, [`Cycle`]s) and
//! only reads the stored details of the entities it may draw: at most
//! `max_nodes`, the most important first, since a budget cannot hold
//! more (see [`max_nodes`]).

use std::collections::{BTreeSet, HashMap};

use super::{Cut, DiagramGraph, DiagramNode};
use crate::analyse::blast::{CallLink, Reached};
use crate::analyse::cycles::Cycle;
use crate::analyse::select::{BaseSpec, Selection};
use crate::graph::{self, Details};
use crate::model::rel::name;
use crate::store::{Store, StoreError};
use crate::{load_entities, relationships, Loaded};

/// Fewest tokens a node takes in any diagram (its id, label and class).
const NODE_TOKENS: usize = 6;

/// How many nodes a diagram within `budget` tokens could possibly hold:
/// more are never loaded.
pub fn max_nodes(budget: usize) -> usize {
    budget / NODE_TOKENS + 8
}

/// The tier a distance puts an entity in (seed 004's: base and direct
/// neighbours first).
fn tier_of_distance(distance: u32) -> u8 {
    match distance {
        0 | 1 => 1,
        2 => 2,
        _ => 3,
    }
}

/// What a node shows for an entity: its name, with its owner for a
/// member (`Rect::area`; an impl block's name already names its type).
fn entity_label(d: &Details) -> String {
    match &d.owner {
        Some(owner) if !owner.is_empty() && d.kind != "impl" => format!("{owner}::{}", d.name),
        _ => d.name.clone(),
    }
}

/// A node for an entity (its id is set when pushed).
fn entity_node(d: &Details, tier: u8, base: bool) -> DiagramNode {
    let signature = d.head();
    DiagramNode {
        id: String::new(),
        key: d.key.clone(),
        label: entity_label(d),
        name: d.name.clone(),
        caption: None,
        kind: d.kind.clone(),
        tier,
        base,
        file: Some(d.file.clone()),
        start_line: Some(d.start_line),
        end_line: Some(d.end_line),
        signature: (!signature.is_empty()).then_some(signature),
        doc: (!d.doc.is_empty()).then(|| d.doc.clone()),
    }
}

/// A node for a key the store has no details of (deleted meanwhile).
fn bare_node(key: &str, tier: u8, base: bool) -> DiagramNode {
    DiagramNode {
        key: key.to_string(),
        label: crate::entity::item_name(key),
        name: crate::entity::item_name(key),
        kind: "entity".into(),
        tier,
        base,
        ..DiagramNode::default()
    }
}

/// The cut of an answer of `total` nodes of which `drawn` were taken.
fn cut_of(total: usize, drawn: usize, budget: usize) -> Option<Cut> {
    (drawn < total).then_some(Cut {
        nodes_left_out: total - drawn,
        nodes_total: total,
        budget: Some(budget),
    })
}

/// Nodes for `keys` (with their tier and whether each is a base), in
/// that order; returns each key's node id.
fn push_entities(
    store: &Store,
    graph_name: &str,
    g: &mut DiagramGraph,
    keys: &[(&str, u8, bool)],
) -> Result<HashMap<String, String>, StoreError> {
    let details: HashMap<String, Details> =
        graph::details_of(store, graph_name, keys.iter().map(|(k, _, _)| *k))?
            .into_iter()
            .map(|d| (d.key.clone(), d))
            .collect();
    let mut ids = HashMap::new();
    for &(key, tier, base) in keys {
        if ids.contains_key(key) {
            continue;
        }
        let node = match details.get(key) {
            Some(d) => entity_node(d, tier, base),
            None => bare_node(key, tier, base),
        };
        ids.insert(key.to_string(), g.push_node(node));
    }
    Ok(ids)
}

/// How a context's base is described in its title.
pub fn base_title(base: &BaseSpec) -> String {
    match base {
        BaseSpec::Keys(keys) => format!("context of {}", keys.join(", ")),
        BaseSpec::File(f) => format!("context of {f}"),
        BaseSpec::Name(n) => format!("context of the entities named {n}"),
        BaseSpec::Ranked(keys) => match keys.as_slice() {
            [] => "context of a search".to_string(),
            [first] => format!("context of the search hit {first}"),
            [first, rest @ ..] => {
                format!("context of the search hits {first} and {} more", rest.len())
            }
        },
    }
}

/// A context's selection as a graph: its candidates in inclusion order
/// (base entities marked, each in its priority tier), the relationships
/// among them a context document lists, edges on a dependency cycle
/// marked. At most `max_nodes` candidates are loaded; the rest is the cut.
pub fn selection_graph(
    store: &Store,
    graph_name: &str,
    title: &str,
    selection: &Selection,
    max_nodes: usize,
    budget: usize,
) -> Result<DiagramGraph, StoreError> {
    let chosen: Vec<_> = selection
        .candidates
        .iter()
        .take(max_nodes.max(selection.base_keys.len()))
        .cloned()
        .collect();
    let rows = load_entities(store, graph_name, &chosen)?;
    let mut loaded = Loaded::default();
    for (c, d, u) in rows {
        loaded.candidates.push(c);
        loaded.details.push(d);
        loaded.usage.push(u);
    }
    loaded.rels = relationships(&loaded.candidates, &loaded.usage);
    let mut g = DiagramGraph::new(title);
    let ids: Vec<String> = loaded
        .candidates
        .iter()
        .zip(&loaded.details)
        .map(|(c, d)| g.push_node(entity_node(d, c.tier, c.is_base)))
        .collect();
    let found = loaded.cycles();
    let on_cycle = cycle_pairs(&found);
    for r in &loaded.rels {
        let (a, b) = (&loaded.candidates[r.src].key, &loaded.candidates[r.dst].key);
        let cyclic = on_cycle.contains(&(a.as_str(), b.as_str()));
        g.push_edge(&ids[r.src], &r.rel, &ids[r.dst], cyclic);
    }
    g.cut = cut_of(selection.candidates.len(), g.nodes.len(), budget);
    if g.nodes.is_empty() {
        g.empty_note = Some("no entities selected".into());
    }
    Ok(g)
}

/// The `(a, b)` pairs of members of one cycle (an edge between them lies
/// on it), self-loops as `(a, a)`.
pub fn cycle_pairs(found: &[Cycle]) -> BTreeSet<(&str, &str)> {
    let mut pairs = BTreeSet::new();
    for c in found {
        for a in &c.members {
            for b in &c.members {
                pairs.insert((a.as_str(), b.as_str()));
            }
        }
    }
    pairs
}

/// A blast radius as a graph: the base entity, then what was reached by
/// distance, each drawn with the edges it was reached through (`out`: an
/// edge from the layer before to it; `in`: from it to the layer before).
pub fn blast_graph(
    store: &Store,
    graph_name: &str,
    key: &str,
    hops: u32,
    reached: &[Reached],
    max_nodes: usize,
    budget: usize,
) -> Result<DiagramGraph, StoreError> {
    let plural = if hops == 1 { "" } else { "s" };
    let mut g = DiagramGraph::new(format!("blast radius of {key} ({hops} hop{plural})"));
    let keys: Vec<(&str, u8, bool)> = reached
        .iter()
        .take(max_nodes)
        .map(|r| {
            (
                r.key.as_str(),
                tier_of_distance(r.distance),
                r.distance == 0,
            )
        })
        .collect();
    let ids = push_entities(store, graph_name, &mut g, &keys)?;
    for r in reached.iter().take(max_nodes) {
        for v in &r.via {
            let (Some(here), Some(from)) = (ids.get(&r.key), ids.get(&v.from)) else {
                continue;
            };
            match v.direction {
                "out" => g.push_edge(from, &v.rel, here, false),
                _ => g.push_edge(here, &v.rel, from, false),
            }
        }
    }
    g.cut = cut_of(reached.len(), g.nodes.len(), budget);
    Ok(g)
}

/// Callers (`callers = true`) or callees of `key` as a graph: the entity,
/// then the others by call count, each edge a `calls`.
pub fn calls_graph(
    store: &Store,
    graph_name: &str,
    key: &str,
    links: &[CallLink],
    callers: bool,
    max_nodes: usize,
    budget: usize,
) -> Result<DiagramGraph, StoreError> {
    let what = if callers { "callers" } else { "callees" };
    let mut g = DiagramGraph::new(format!("{what} of {key}"));
    let mut ranked: Vec<&CallLink> = links.iter().collect();
    ranked.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.key.cmp(&b.key)));
    let mut seen = BTreeSet::new();
    ranked.retain(|l| l.key != key && seen.insert(l.key.as_str()));
    let mut keys: Vec<(&str, u8, bool)> = vec![(key, 1, true)];
    keys.extend(
        ranked
            .iter()
            .take(max_nodes.saturating_sub(1))
            .map(|l| (l.key.as_str(), 1, false)),
    );
    let ids = push_entities(store, graph_name, &mut g, &keys)?;
    let centre = &ids[key];
    // A recursive entity calls itself: its own link.
    if links.iter().any(|l| l.key == key) {
        g.push_edge(centre, name::CALLS, centre, true);
    }
    for l in &ranked {
        let Some(other) = ids.get(&l.key) else {
            continue;
        };
        if callers {
            g.push_edge(other, name::CALLS, centre, false);
        } else {
            g.push_edge(centre, name::CALLS, other, false);
        }
    }
    g.cut = cut_of(ranked.len() + 1, g.nodes.len(), budget);
    Ok(g)
}

/// Dependency cycles as a graph: the members of each cycle (the largest
/// first, as `cycles` lists them) and the edges of its cycle path, all
/// marked as cycle edges.
pub fn cycles_graph(
    store: &Store,
    graph_name: &str,
    found: &[Cycle],
    max_nodes: usize,
    budget: usize,
) -> Result<DiagramGraph, StoreError> {
    let mut g = DiagramGraph::new("dependency cycles");
    let mut members: Vec<&str> = Vec::new();
    let mut seen = BTreeSet::new();
    for c in found {
        for m in &c.cycle_path {
            if seen.insert(m.as_str()) {
                members.push(m);
            }
        }
    }
    let keys: Vec<(&str, u8, bool)> = members
        .iter()
        .take(max_nodes)
        .map(|m| (*m, 1, false))
        .collect();
    let ids = push_entities(store, graph_name, &mut g, &keys)?;
    for c in found {
        for (i, pair) in c.cycle_path.windows(2).enumerate() {
            let (Some(a), Some(b)) = (ids.get(&pair[0]), ids.get(&pair[1])) else {
                continue;
            };
            let rel = c.rels.get(i).map_or("depends_on", String::as_str);
            g.push_edge(a, rel, b, true);
        }
    }
    g.cut = cut_of(members.len(), g.nodes.len(), budget);
    if g.nodes.is_empty() {
        g.empty_note = Some("no dependency cycles".into());
    }
    Ok(g)
}

/// The graph of the selection `context` makes for `base` (see
/// [`selection_graph`]); errors are the context's (a key that does not
/// exist, a file without entities).
pub fn context_graph(
    store: &Store,
    graph_name: &str,
    base: &BaseSpec,
    hops: u32,
    strategy: crate::analyse::relevance::Strategy,
    budget: usize,
) -> Result<DiagramGraph, crate::ContextError> {
    let selection = crate::analyse::select::select(store, graph_name, base, hops, strategy)?;
    Ok(selection_graph(
        store,
        graph_name,
        &base_title(base),
        &selection,
        max_nodes(budget),
        budget,
    )?)
}
