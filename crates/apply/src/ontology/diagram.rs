//! Diagrams of ontology graphs (`graph export`): every live node, filled
//! by its type and labelled by its semantic ID (its `Name` under it), in
//! the order exports list them; every edge labelled by its relationship,
//! hierarchy cycles marked. Names and descriptions are sanitised like
//! every export's ([`sanitize::text`]).

use std::collections::HashMap;

use super::{sanitize, OntologyGraph};
use crate::emit::diagram::code::cycle_pairs;
use crate::emit::diagram::{DiagramGraph, DiagramNode};

/// An ontology graph as a diagram graph.
pub fn ontology_graph(g: &OntologyGraph) -> DiagramGraph {
    let mut d = DiagramGraph::new(format!("ontology graph {}", g.name));
    let mut ids: HashMap<&str, String> = HashMap::new();
    for n in g.nodes_ordered() {
        // What leaves the store is sanitised, as in every export.
        let name = sanitize::text(&n.name);
        let descr = sanitize::text(&n.descr);
        let id = d.push_node(DiagramNode {
            key: n.semantic_id.clone(),
            label: n.semantic_id.clone(),
            name: name.clone(),
            caption: Some(name),
            kind: n.node_type.name().to_string(),
            tier: 1,
            doc: (!descr.is_empty()).then_some(descr),
            ..DiagramNode::default()
        });
        ids.insert(n.uuid.as_str(), id);
    }
    let edges: Vec<(String, String, String)> = g
        .edges_ordered()
        .iter()
        .filter_map(|e| {
            Some((
                g.semantic_id_of(&e.src)?.to_string(),
                e.rel.name().to_string(),
                g.semantic_id_of(&e.dst)?.to_string(),
            ))
        })
        .collect();
    let found = crate::analyse::cycles::cycles_in(&edges);
    let on_cycle = cycle_pairs(&found);
    for e in g.edges_ordered() {
        let (Some(a), Some(b)) = (ids.get(e.src.as_str()), ids.get(e.dst.as_str())) else {
            continue;
        };
        let (sa, sb) = (
            g.semantic_id_of(&e.src).unwrap_or_default(),
            g.semantic_id_of(&e.dst).unwrap_or_default(),
        );
        let cyclic = crate::model::rel::HIERARCHY_RELS.contains(&e.rel.name())
            && on_cycle.contains(&(sa, sb));
        d.push_edge(a, e.rel.name(), b, cyclic);
    }
    if d.nodes.is_empty() {
        d.empty_note = Some("the graph has no nodes".into());
    }
    d
}
