//! `entities`, `edges` and `query`: looking at the stored graph.

use super::Outcome;
use anyhow::{bail, Result};
use clap::ValueEnum;
use cozo::DataValue;

use graphctx::graph::{self, Direction, EntityFilter};
use graphctx::model::EntityKind;
use graphctx::store::value::{display, to_json};
use graphctx::store::{Params, Store};

use super::output::{print_json, print_table};
use super::Global;

#[derive(Clone, Copy, ValueEnum)]
pub enum DirectionArg {
    In,
    Out,
    Both,
}

pub fn entities(
    store: &Store,
    graph_name: &str,
    file: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    json: bool,
) -> Result<Outcome> {
    if let Some(k) = &kind {
        if EntityKind::parse(k).is_none() {
            let known: Vec<&str> = EntityKind::ALL.iter().map(|k| k.as_str()).collect();
            bail!(
                "unknown entity kind '{k}'; expected one of {}",
                known.join(", ")
            );
        }
    }
    let rows = graph::list_entities(store, graph_name, &EntityFilter { file, kind, name })?;
    if json {
        print_json(&rows)?;
    } else {
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|e| {
                vec![
                    e.kind.clone(),
                    format!("{}:{}-{}", e.file, e.start_line, e.end_line),
                    e.key.clone(),
                ]
            })
            .collect();
        print_table(&["KIND", "LOCATION", "KEY"], &table)?;
    }
    Ok(Outcome::Done)
}

pub fn edges(
    store: &Store,
    graph_name: &str,
    key: &str,
    direction: DirectionArg,
    json: bool,
) -> Result<Outcome> {
    if !graph::entity_exists(store, graph_name, key)? {
        bail!("no entity with key '{key}' in graph '{graph_name}' (list keys with `graphctx entities`)");
    }
    let dir = match direction {
        DirectionArg::In => Direction::In,
        DirectionArg::Out => Direction::Out,
        DirectionArg::Both => Direction::Both,
    };
    let edges = graph::edges_of(store, graph_name, key, dir)?;
    let unresolved = if dir == Direction::In {
        vec![]
    } else {
        graph::unresolved_of(store, graph_name, key)?
    };
    if json {
        print_json(&serde_json::json!({ "key": key, "edges": edges, "unresolved": unresolved }))?;
    } else {
        let mut table: Vec<Vec<String>> = edges
            .iter()
            .map(|e| {
                if e.src == key {
                    vec!["out".into(), e.rel.clone(), e.dst.clone()]
                } else {
                    vec!["in".into(), e.rel.clone(), e.src.clone()]
                }
            })
            .collect();
        for u in &unresolved {
            table.push(vec![
                "unresolved".into(),
                u.rel.clone(),
                format!("{} (line {})", u.text, u.line),
            ]);
        }
        print_table(&["DIRECTION", "REL", "OTHER"], &table)?;
    }
    Ok(Outcome::Done)
}

pub fn query(
    global: &Global,
    script: &str,
    params: &[String],
    write: bool,
    json: bool,
) -> Result<Outcome> {
    let store = super::open_existing(global)?;
    let mut p = Params::new();
    for param in params {
        let Some((name, value)) = param.split_once('=') else {
            bail!("--param expects NAME=VALUE, got '{param}'");
        };
        let value: DataValue = match serde_json::from_str::<serde_json::Value>(value) {
            Ok(v) => DataValue::from(v),
            Err(_) => DataValue::from(value),
        };
        p.set(name, value);
    }
    let _lock = if write {
        Some(graphctx::store::lock::WriteLock::acquire(store.location())?)
    } else {
        None
    };
    let rows = if write {
        store.write(script, p)?
    } else {
        store.read(script, p)?
    };
    if json {
        let out: Vec<serde_json::Value> = rows
            .rows
            .iter()
            .map(|r| serde_json::Value::Array(r.iter().map(to_json).collect()))
            .collect();
        print_json(&serde_json::json!({ "headers": rows.headers, "rows": out }))?;
    } else {
        let headers: Vec<&str> = rows.headers.iter().map(String::as_str).collect();
        let table: Vec<Vec<String>> = rows
            .rows
            .iter()
            .map(|r| r.iter().map(display).collect())
            .collect();
        print_table(&headers, &table)?;
    }
    Ok(Outcome::Done)
}
