//! Example responses scaled up from the seeds' examples, for tests and
//! benchmarks: seed 001 §6.1's cargo management system and §3.2/§11's
//! order system, repeated `groups` times with distinct names.

use serde_json::{json, Value};

/// Nine operations per group, as an LLM would write them for "a cargo
/// management system whose fleet use case optimises routes from customer
/// orders": five creates (SYS, UC, FUNC, ACTOR, FLOW) and four
/// relationships (`compose` SYS→UC→FUNC, `io` ACTOR→FLOW→FUNC). Half of
/// the relationships list their `dependsOn`, half rely on the implied
/// tempId dependencies. Every fifth group also refines its function with
/// an update that depends on its relationships (a third chunk).
pub fn cargo_response(groups: usize) -> Value {
    let mut ops = Vec::with_capacity(groups * 10);
    for k in 0..groups {
        let id = |i: usize| format!("op-{k}-{i}");
        let t = |s: &str| format!("t-{s}-{k}");
        let create = |i: usize, ty: &str, tmp: &str, name: String, descr: &str| {
            json!({
                "id": id(i), "type": "create", "nodeType": ty, "tempId": t(tmp),
                "data": {"Name": name, "Descr": descr}, "dependsOn": []
            })
        };
        ops.push(create(
            1,
            "SYS",
            "sys",
            format!("CargoManagement{k}"),
            "Central cargo management system",
        ));
        ops.push(create(
            2,
            "UC",
            "uc",
            format!("ManageFleet{k}"),
            "Manage fleet operations",
        ));
        ops.push(create(
            3,
            "FUNC",
            "fn",
            format!("OptimizeRoutes{k}"),
            "Optimize delivery routes",
        ));
        ops.push(create(
            4,
            "ACTOR",
            "ac",
            format!("Customer{k}"),
            "Customer placing orders",
        ));
        ops.push(create(
            5,
            "FLOW",
            "fl",
            format!("OrderRequest{k}"),
            "Order data from customer",
        ));
        let rel = |i: usize, rel: &str, s: &str, d: &str, deps: &[usize]| {
            let mut v = json!({
                "id": id(i), "type": "create-relationship", "relType": rel,
                "sourceTempId": t(s), "targetTempId": t(d)
            });
            if !deps.is_empty() {
                v["dependsOn"] = json!(deps.iter().map(|&j| id(j)).collect::<Vec<_>>());
            }
            v
        };
        ops.push(rel(6, "compose", "sys", "uc", &[1, 2]));
        ops.push(rel(7, "compose", "uc", "fn", &[]));
        ops.push(rel(8, "io", "ac", "fl", &[4, 5]));
        ops.push(rel(9, "io", "fl", "fn", &[]));
        if k % 5 == 0 {
            ops.push(json!({
                "id": id(10), "type": "update", "tempId": t("fn"),
                "data": {"Descr": "Optimize delivery routes from order requests"},
                "dependsOn": [id(7), id(9)]
            }));
        }
    }
    json!({
        "response": format!("Ich habe {groups} Cargo-Management-Systeme modelliert."),
        "operations": ops
    })
}

/// Seed 001 §11's response (the order system), verbatim.
pub const SEED_11: &str = include_str!("../../../../tests/fixtures/operations/seed_11.json");
