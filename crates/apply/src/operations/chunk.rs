//! Dependency chunking (seed 001 §3): operations into topological levels.
//!
//! An operation depends on the operations its `dependsOn` names and —
//! even when `dependsOn` omits them — on the creates that introduce the
//! tempIds and semantic IDs it references. Chunk k holds the operations
//! whose longest dependency chain has length k: independent operations
//! share a chunk, relationships come after their nodes. Deletes come last
//! (seed rule 4): the operations are split into three phases — everything
//! else, then relationship deletes, then node deletes — and an operation
//! that depends on a later-phase operation joins that phase. Each phase is
//! levelled on its own and its chunks follow the previous phase's.
//!
//! Kahn's algorithm over a compressed (CSR) dependency graph makes this
//! O(operations + dependencies). When Kahn's algorithm stalls, every
//! operation left has an unfinished dependency, so following one from any
//! of them must revisit an operation: that walk gives an actual cycle path
//! for the error, not just "the rest".

use rustc_hash::FxHashMap;

use super::error::{CycleStep, Missing, OperationError};
use super::parse::{NodeRef, OpKind, Operation};

/// The chunked plan of a response.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Operation indices per chunk, in input order inside a chunk.
    pub chunks: Vec<Vec<usize>>,
    /// The chunk of each operation.
    pub chunk_of: Vec<usize>,
    /// tempId → index of the create that introduces it.
    pub temp_ids: FxHashMap<String, usize>,
    /// Proposed semantic ID → index of the create that proposes it.
    pub semantic_ids: FxHashMap<String, usize>,
}

/// Where a dependency comes from (for cycle explanations).
fn via(op: &Operation, dep: &Operation) -> String {
    if op.depends_on.iter().any(|d| d == &dep.id) {
        return "dependsOn".into();
    }
    for r in op.node_refs() {
        match r {
            NodeRef::Temp(t) if dep.temp_id.as_deref() == Some(t) => return format!("tempId {t}"),
            NodeRef::Semantic(s) if dep.semantic_id.as_deref() == Some(s) => {
                return format!("semanticId {s}")
            }
            _ => {}
        }
    }
    "dependency".into()
}

fn phase_of(kind: OpKind) -> u8 {
    match kind {
        OpKind::DeleteRelationship => 1,
        OpKind::Delete => 2,
        _ => 0,
    }
}

/// Chunk `ops`. `graph_has` says whether a semantic ID that no create of
/// the response proposes exists in the graph — or names one node of it
/// ([`super::execute::by_name`]) — references to it then need no
/// ordering; UUID references are not checked here.
pub fn plan(ops: &[Operation], graph_has: &dyn Fn(&str) -> bool) -> Result<Plan, OperationError> {
    let n = ops.len();
    let index = Index::of(ops)?;
    let deps = dependencies(ops, &index, graph_has)?;
    let dependents = deps.reversed(n);
    let (order, indeg) = topological_order(n, &deps, &dependents);
    if order.len() < n {
        return Err(cycle_error(ops, &indeg, &|i| deps.of(i)));
    }
    let (chunks, chunk_of) = chunks_by_phase_and_level(ops, &order, &deps);
    Ok(Plan {
        chunks,
        chunk_of,
        temp_ids: index.temp_ids,
        semantic_ids: index.semantic_ids,
    })
}

/// The operations' ids, tempIds and proposed semantic IDs, each to the
/// index of the operation that holds it.
struct Index<'a> {
    by_id: FxHashMap<&'a str, u32>,
    temp_ids: FxHashMap<String, usize>,
    semantic_ids: FxHashMap<String, usize>,
}

impl<'a> Index<'a> {
    /// Index ids, tempIds and proposed semantic IDs; duplicates are errors.
    fn of(ops: &'a [Operation]) -> Result<Index<'a>, OperationError> {
        let mut by_id: FxHashMap<&str, u32> = FxHashMap::default();
        by_id.reserve(ops.len());
        let mut temp_ids: FxHashMap<String, usize> = FxHashMap::default();
        let mut semantic_ids: FxHashMap<String, usize> = FxHashMap::default();
        for (i, op) in ops.iter().enumerate() {
            if let Some(&j) = by_id.get(op.id.as_str()) {
                return Err(OperationError::Duplicate {
                    what: "operation id",
                    value: op.id.clone(),
                    operations: vec![
                        format!("#{}", ops[j as usize].index + 1),
                        format!("#{}", op.index + 1),
                    ],
                });
            }
            by_id.insert(&op.id, i as u32);
            if let Some(t) = &op.temp_id {
                claim(&mut temp_ids, "tempId", t, ops, i)?;
            }
            if let Some(s) = &op.semantic_id {
                claim(&mut semantic_ids, "semanticId", s, ops, i)?;
            }
        }
        Ok(Index {
            by_id,
            temp_ids,
            semantic_ids,
        })
    }
}

/// Record that operation `i` introduces `value`; an error naming both
/// operations when an earlier one already did.
fn claim(
    seen: &mut FxHashMap<String, usize>,
    what: &'static str,
    value: &str,
    ops: &[Operation],
    i: usize,
) -> Result<(), OperationError> {
    if let Some(&j) = seen.get(value) {
        return Err(OperationError::Duplicate {
            what,
            value: value.to_string(),
            operations: vec![ops[j].id.clone(), ops[i].id.clone()],
        });
    }
    seen.insert(value.to_string(), i);
    Ok(())
}

/// A compressed (CSR) adjacency list: the neighbours of `i` are
/// `list[start[i]..start[i + 1]]`.
struct Csr {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Csr {
    /// The neighbours of `i`.
    fn of(&self, i: usize) -> &[u32] {
        &self.list[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// The reverse edges (dependents of dependencies), by counting sort.
    fn reversed(&self, n: usize) -> Csr {
        let mut rev_start = vec![0u32; n + 1];
        for &d in &self.list {
            rev_start[d as usize + 1] += 1;
        }
        for i in 0..n {
            rev_start[i + 1] += rev_start[i];
        }
        let mut fill = rev_start.clone();
        let mut rev_list = vec![0u32; self.list.len()];
        for i in 0..n {
            for &d in self.of(i) {
                rev_list[fill[d as usize] as usize] = i as u32;
                fill[d as usize] += 1;
            }
        }
        Csr {
            start: rev_start,
            list: rev_list,
        }
    }
}

/// Every operation's dependencies in CSR form — what its `dependsOn` names
/// and the creates introducing the tempIds and semantic IDs it references;
/// all the references that resolve to nothing, as one error.
fn dependencies(
    ops: &[Operation],
    index: &Index,
    graph_has: &dyn Fn(&str) -> bool,
) -> Result<Csr, OperationError> {
    let n = ops.len();
    let mut dep_start: Vec<u32> = Vec::with_capacity(n + 1);
    let mut dep_list: Vec<u32> = Vec::with_capacity(n * 2);
    let mut missing: Vec<Missing> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let start = dep_list.len();
        dep_start.push(start as u32);
        let mut add = |d: u32| {
            if !dep_list[start..].contains(&d) {
                dep_list.push(d);
            }
        };
        for d in &op.depends_on {
            match index.by_id.get(d.as_str()) {
                Some(&j) => add(j),
                None => missing.push(Missing {
                    operation: op.id.clone(),
                    kind: "operation",
                    reference: d.clone(),
                }),
            }
        }
        for r in op.node_refs() {
            let (kind, reference, found) = match r {
                NodeRef::Temp(t) => ("tempId", t, index.temp_ids.get(t)),
                NodeRef::Semantic(s) => ("semanticId", s, index.semantic_ids.get(s)),
                NodeRef::Uuid(_) => continue,
            };
            match found {
                Some(&j) if j != i => add(j as u32),
                Some(_) => {}
                None if kind == "semanticId" && graph_has(reference) => {}
                None => missing.push(Missing {
                    operation: op.id.clone(),
                    kind,
                    reference: reference.clone(),
                }),
            }
        }
    }
    dep_start.push(dep_list.len() as u32);
    if !missing.is_empty() {
        return Err(OperationError::MissingDependency { missing });
    }
    Ok(Csr {
        start: dep_start,
        list: dep_list,
    })
}

/// Kahn's algorithm: a topological order, and every operation's count of
/// unfinished dependencies (all zero unless the order is short: a cycle).
fn topological_order(n: usize, deps: &Csr, dependents: &Csr) -> (Vec<u32>, Vec<u32>) {
    let mut indeg: Vec<u32> = (0..n).map(|i| deps.of(i).len() as u32).collect();
    let mut order: Vec<u32> = (0..n as u32).filter(|&i| indeg[i as usize] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        let i = order[head] as usize;
        head += 1;
        for &j in dependents.of(i) {
            indeg[j as usize] -= 1;
            if indeg[j as usize] == 0 {
                order.push(j);
            }
        }
    }
    (order, indeg)
}

/// The chunks (operation indices per chunk, input order inside a chunk)
/// and the chunk of each operation: each phase's levels, phase after phase.
fn chunks_by_phase_and_level(
    ops: &[Operation],
    order: &[u32],
    deps: &Csr,
) -> (Vec<Vec<usize>>, Vec<usize>) {
    let n = ops.len();
    let (phase, level, levels_in_phase, used) = phases_and_levels(ops, order, deps);
    let mut offset = [0u32; 3];
    let mut total = 0;
    for p in 0..3 {
        offset[p] = total;
        if used[p] {
            total += levels_in_phase[p];
        }
    }
    let mut chunks: Vec<Vec<usize>> = vec![Vec::new(); total as usize];
    let mut chunk_of = vec![0usize; n];
    for i in 0..n {
        let c = (offset[phase[i] as usize] + level[i]) as usize;
        chunk_of[i] = c;
        chunks[c].push(i);
    }
    (chunks, chunk_of)
}

/// Phase and level within the phase of every operation, in topological
/// order; the number of levels of each phase, and which phases occur.
fn phases_and_levels(
    ops: &[Operation],
    order: &[u32],
    deps: &Csr,
) -> (Vec<u8>, Vec<u32>, [u32; 3], [bool; 3]) {
    let n = ops.len();
    let mut phase = vec![0u8; n];
    let mut level = vec![0u32; n];
    let mut levels_in_phase = [0u32; 3];
    let mut used = [false; 3];
    for &i in order {
        let i = i as usize;
        let mut p = phase_of(ops[i].kind);
        for &d in deps.of(i) {
            p = p.max(phase[d as usize]);
        }
        let mut l = 0;
        for &d in deps.of(i) {
            if phase[d as usize] == p {
                l = l.max(level[d as usize] + 1);
            }
        }
        phase[i] = p;
        level[i] = l;
        used[p as usize] = true;
        levels_in_phase[p as usize] = levels_in_phase[p as usize].max(l + 1);
    }
    (phase, level, levels_in_phase, used)
}

/// Find the cycles among the operations Kahn's algorithm could not order
/// (`indeg[i] > 0`). Each walk follows an unfinished dependency until it
/// meets its own path (a new cycle) or an operation an earlier walk saw.
fn cycle_error<'a>(
    ops: &[Operation],
    indeg: &[u32],
    deps: &dyn Fn(usize) -> &'a [u32],
) -> OperationError {
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let n = ops.len();
    let mut state = vec![NEW; n];
    let mut on_cycle = vec![false; n];
    let mut cycles = Vec::new();
    let mut path: Vec<usize> = Vec::new();
    for start in 0..n {
        if indeg[start] == 0 || state[start] != NEW {
            continue;
        }
        path.clear();
        let mut cur = start;
        loop {
            state[cur] = ON_PATH;
            path.push(cur);
            // An unfinished operation always has an unfinished dependency.
            let Some(next) = deps(cur)
                .iter()
                .map(|&d| d as usize)
                .find(|&d| indeg[d] > 0)
            else {
                break;
            };
            match state[next] {
                ON_PATH => {
                    let from = path.iter().position(|&p| p == next).unwrap_or(0);
                    let members = &path[from..];
                    let steps = members
                        .iter()
                        .enumerate()
                        .map(|(k, &m)| {
                            let after = members[(k + 1) % members.len()];
                            on_cycle[m] = true;
                            CycleStep {
                                operation: ops[m].id.clone(),
                                description: ops[m].describe(),
                                via: via(&ops[m], &ops[after]),
                            }
                        })
                        .collect();
                    cycles.push(steps);
                    break;
                }
                DONE => break,
                _ => cur = next,
            }
        }
        for &p in &path {
            state[p] = DONE;
        }
    }
    let blocked = (0..n)
        .filter(|&i| indeg[i] > 0 && !on_cycle[i])
        .map(|i| ops[i].id.clone())
        .collect();
    OperationError::CyclicDependency { cycles, blocked }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operations::parse::parse_response;

    fn ids(ops: &[Operation], plan: &Plan) -> Vec<Vec<String>> {
        plan.chunks
            .iter()
            .map(|c| c.iter().map(|&i| ops[i].id.clone()).collect())
            .collect()
    }

    fn chunk(json: &str) -> Result<Vec<Vec<String>>, OperationError> {
        let r = parse_response(json)?;
        let known = |s: &str| s.ends_with(".001");
        plan(&r.operations, &known).map(|p| ids(&r.operations, &p))
    }

    #[test]
    fn seed_3_2_two_chunks() {
        let got = chunk(
            r#"{"operations":[
            {"id":"op-001","type":"create","nodeType":"ACTOR","tempId":"temp-customer","data":{"Name":"Customer"},"dependsOn":[]},
            {"id":"op-002","type":"create","nodeType":"UC","tempId":"temp-placeorder","data":{"Name":"PlaceOrder"},"dependsOn":[]},
            {"id":"op-003","type":"create","nodeType":"FLOW","tempId":"temp-orderrequest","data":{"Name":"OrderRequest"},"dependsOn":[]},
            {"id":"op-004","type":"create-relationship","relType":"io","sourceTempId":"temp-customer","targetTempId":"temp-orderrequest","dependsOn":["op-001","op-003"]},
            {"id":"op-005","type":"create-relationship","relType":"io","sourceTempId":"temp-orderrequest","targetTempId":"temp-placeorder","dependsOn":["op-002","op-003"]}]}"#,
        )
        .unwrap();
        assert_eq!(
            got,
            vec![vec!["op-001", "op-002", "op-003"], vec!["op-004", "op-005"]]
        );
    }

    #[test]
    fn implied_dependencies_count_without_depends_on() {
        let got = chunk(
            r#"{"operations":[
            {"id":"r","type":"create-relationship","relType":"compose","sourceSemanticId":"ManageFleet.UC.001","targetSemanticId":"ProcessPayment.FN.002"},
            {"id":"f","type":"create","nodeType":"FUNC","data":{"semanticId":"ProcessPayment.FN.002","Name":"ProcessPayment"}},
            {"id":"u","type":"update","tempId":"t","data":{"Descr":"x"}},
            {"id":"c","type":"create","nodeType":"REQ","tempId":"t","data":{"Name":"R"}}]}"#,
        )
        .unwrap();
        assert_eq!(got, vec![vec!["f", "c"], vec!["r", "u"]]);
    }

    #[test]
    fn deletes_come_last_relationship_deletes_first() {
        let got = chunk(
            r#"{"operations":[
            {"id":"d","type":"delete","semanticId":"Old.FN.001"},
            {"id":"dr","type":"delete-relationship","relType":"io","sourceSemanticId":"A.FL.001","targetSemanticId":"Old.FN.001"},
            {"id":"c","type":"create","nodeType":"FUNC","tempId":"n","data":{"Name":"New"}},
            {"id":"r","type":"create-relationship","relType":"io","sourceSemanticId":"A.FL.001","targetTempId":"n"}]}"#,
        )
        .unwrap();
        assert_eq!(got, vec![vec!["c"], vec!["r"], vec!["dr"], vec!["d"]]);
    }

    #[test]
    fn missing_names_every_unknown_reference() {
        let e = chunk(
            r#"{"operations":[
            {"id":"a","type":"create-relationship","relType":"io","sourceTempId":"nope","targetSemanticId":"Ghost.FN.007","dependsOn":["zz"]}]}"#,
        )
        .unwrap_err();
        let OperationError::MissingDependency { missing } = &e else {
            panic!("{e}")
        };
        let refs: Vec<_> = missing
            .iter()
            .map(|m| (m.kind, m.reference.as_str()))
            .collect();
        assert_eq!(
            refs,
            [
                ("operation", "zz"),
                ("tempId", "nope"),
                ("semanticId", "Ghost.FN.007")
            ]
        );
        let j = e.to_json();
        assert_eq!(j["error"], "MissingDependencyError");
        assert_eq!(j["operation"], "a");
    }

    #[test]
    fn cycle_names_the_cycle_not_the_blocked() {
        // x waits on the cycle a -> b -> c -> a but is not part of it.
        let e = chunk(
            r#"{"operations":[
            {"id":"x","type":"create","nodeType":"UC","data":{"Name":"X"},"dependsOn":["a"]},
            {"id":"a","type":"create","nodeType":"UC","data":{"Name":"A"},"dependsOn":["b"]},
            {"id":"b","type":"create","nodeType":"UC","data":{"Name":"B"},"dependsOn":["c"]},
            {"id":"c","type":"create","nodeType":"UC","data":{"Name":"C"},"dependsOn":["a"]},
            {"id":"ok","type":"create","nodeType":"UC","data":{"Name":"Ok"}}]}"#,
        )
        .unwrap_err();
        let j = e.to_json();
        assert_eq!(j["error"], "CyclicDependencyError");
        assert_eq!(j["cycles"], serde_json::json!([["a", "b", "c", "a"]]));
        assert_eq!(j["blocked"], serde_json::json!(["x"]));
        let fb = j["llmFeedback"].as_str().unwrap();
        assert!(
            fb.contains("a (create UC A) depends on b (create UC B)"),
            "{fb}"
        );
    }

    #[test]
    fn self_dependency_is_a_cycle() {
        let e = chunk(
            r#"{"operations":[{"id":"a","type":"create","nodeType":"UC","data":{"Name":"A"},"dependsOn":["a"]}]}"#,
        )
        .unwrap_err();
        assert_eq!(e.to_json()["cycles"], serde_json::json!([["a", "a"]]));
    }

    #[test]
    fn duplicates_are_rejected() {
        let e = chunk(
            r#"{"operations":[
            {"id":"a","type":"create","nodeType":"UC","tempId":"t","data":{"Name":"A"}},
            {"id":"b","type":"create","nodeType":"UC","tempId":"t","data":{"Name":"B"}}]}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("tempId `t`"), "{e}");
    }
}
