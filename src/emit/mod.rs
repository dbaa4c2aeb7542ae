//! Emitting context: a selection of entities (see [`crate::analyse`]) →
//! CodeGraphContext.json (seed 004) or Format E, within a token budget.
//!
//! Pieces (one entity or relationship per line) are counted once with the
//! real tokenizer and cached by content; the fitter plans with those
//! counts; the assembled document is then counted exactly, and
//! `token_count` is that exact count — never above the budget.

pub mod entity;
pub mod fit;
pub mod format_e;
pub mod line;

use std::collections::HashMap;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::{json, Value};

use crate::analyse::cycles;
use crate::analyse::relevance::{rel_weight, Strategy};
use crate::analyse::select::{self, BaseSpec, Candidate, SelectError, Selection};
use crate::index::usage;
use crate::store::value::{get_int, get_str, get_str_list, str_list};
use crate::store::{queries, Batch, Params, Store, StoreError};
use crate::support::tokens::{Encoding, TokenCounter};
use entity::{Detail, Details, Usage, DETAILS};
use fit::{FitItem, FitRel, FitStep, Plan};

/// Default budget (seed 004: 100k tokens, hard limit).
pub const DEFAULT_BUDGET: usize = 100_000;
/// Share of the budget the base entities of a `--file` query may take.
pub const FILE_BASE_SHARE: f64 = 0.25;
/// Excluded keys listed in `optimization_info` (the count is always given).
const EXCLUDED_LISTED: usize = 20;
/// Stands for the list of included base keys in the pre-rendered query context.
/// Large enough that no selection is cut (for format comparisons).
const UNCUT_BUDGET: usize = 50_000_000;
/// Cycle paths listed in the document (the ones among included entities).
const CYCLES_LISTED: usize = 10;
const BASE_PLACEHOLDER: &str = "\u{1}base\u{1}";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    #[default]
    Json,
    E,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeType {
    #[default]
    Edit,
    Create,
    Delete,
    Refactor,
}

impl ChangeType {
    pub fn name(self) -> &'static str {
        match self {
            ChangeType::Edit => "edit",
            ChangeType::Create => "create",
            ChangeType::Delete => "delete",
            ChangeType::Refactor => "refactor",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ContextRequest {
    pub graph: String,
    pub base: BaseSpec,
    pub hops: u32,
    pub budget: usize,
    pub format: Format,
    pub change_type: ChangeType,
    pub encoding: Encoding,
    pub strategy: Strategy,
    pub fail_on_cycles: bool,
    /// Files changed on disk that the index could not be brought current
    /// for (another process holds the write lock); the document names them.
    pub stale_files: Vec<String>,
}

impl ContextRequest {
    pub fn new(graph: &str, base: BaseSpec) -> ContextRequest {
        ContextRequest {
            graph: graph.to_string(),
            base,
            hops: 2,
            budget: DEFAULT_BUDGET,
            format: Format::Json,
            change_type: ChangeType::Edit,
            encoding: Encoding::O200k,
            strategy: Strategy::Blended,
            fail_on_cycles: false,
            stale_files: Vec::new(),
        }
    }

    /// Seed 004's cache key (`ctx_{entities}_{hops}_{change}_{limit}`),
    /// extended with everything else that changes the output.
    pub fn cache_key(&self) -> String {
        let mut base = serde_json::to_string(&self.base).unwrap_or_default();
        if !self.stale_files.is_empty() {
            base.push_str(&serde_json::to_string(&self.stale_files).unwrap_or_default());
        }
        let h = blake3::hash(base.as_bytes()).to_hex();
        format!(
            "ctx_{}_{}_{}_{}_{:?}_{}_{}_{}",
            &h[..16],
            self.hops,
            self.change_type.name(),
            self.budget,
            self.format,
            self.encoding.name(),
            self.strategy.name(),
            self.fail_on_cycles
        )
    }
}

/// Errors in seed 004's shapes; [`ContextError::to_json`] gives the object.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("base entity not found: {}", missing.join(", "))]
    EntityNotFound {
        missing: Vec<String>,
        suggestions: Vec<String>,
        message: String,
    },
    #[error("context needs {attempted_size} tokens, over the {budget}-token limit")]
    SizeExceeded {
        attempted_size: usize,
        budget: usize,
    },
    #[error("dependency cycle: {}", cycle_path.join(" -> "))]
    Cycle { cycle_path: Vec<String> },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ContextError {
    /// The error object of seed 004.
    pub fn to_json(&self) -> Value {
        match self {
            ContextError::EntityNotFound {
                missing,
                suggestions,
                message,
            } => json!({
                "error": "entity_not_found",
                "message": message,
                "missing_entities": missing,
                "suggestions": suggestions,
                "suggestion": "Check ISGL1 key format and entity existence (graphctx entities lists keys)",
            }),
            ContextError::SizeExceeded {
                attempted_size,
                budget,
            } => json!({
                "error": "context_size_exceeded",
                "message": format!("Context generation exceeded {budget} token limit"),
                "attempted_size": attempted_size,
                "size_limit": budget,
                "suggestion": "Reduce hop_depth or limit query scope (fewer base entities), or raise --budget",
            }),
            ContextError::Cycle { cycle_path } => json!({
                "error": "dependency_cycle_detected",
                "message": "Circular dependency detected in relationship graph",
                "cycle_path": cycle_path,
                "suggestion": "Resolve circular dependencies before context generation",
            }),
            ContextError::Store(e) => json!({
                "error": "storage_error",
                "message": e.to_string(),
            }),
        }
    }
}

impl From<SelectError> for ContextError {
    fn from(e: SelectError) -> Self {
        match e {
            SelectError::NotFound {
                missing,
                suggestions,
            } => ContextError::EntityNotFound {
                missing,
                suggestions,
                message: "Base entity not found in codebase".into(),
            },
            SelectError::NoEntities(msg) => ContextError::EntityNotFound {
                missing: vec![],
                suggestions: vec![],
                message: msg,
            },
            SelectError::Store(e) => ContextError::Store(e),
        }
    }
}

/// What came out, with figures for reports and benchmarks.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ContextOutput {
    pub text: String,
    pub token_count: usize,
    pub entities_included: usize,
    pub entities_excluded: usize,
    pub relationships: usize,
    pub steps: Vec<FitStep>,
    pub cycles: usize,
    /// Set when read back from the context cache (never stored as true).
    #[serde(skip_deserializing)]
    pub from_cache: bool,
}

/// Build a context document. `counter` may be shared across calls (it
/// caches piece counts).
pub fn build_context(
    store: &Store,
    req: &ContextRequest,
    counter: &TokenCounter,
) -> Result<ContextOutput, ContextError> {
    // Several scripts make one answer; a change landing between them
    // (another process indexing) would mix two states, so the answer is
    // computed again when the graph's seq moved meanwhile.
    let mut attempts = 0;
    loop {
        let seq = store.graph_seq(&req.graph)?;
        let selection = select::select(store, &req.graph, &req.base, req.hops, req.strategy)?;
        let out = emit_selection(store, req, &selection, counter)?;
        attempts += 1;
        if attempts == CONSISTENT_ATTEMPTS || store.graph_seq(&req.graph)? == seq {
            return Ok(out);
        }
    }
}

/// How often [`build_context`] computes an answer again when the graph
/// changed while it was computed (then the last answer stands: a graph
/// changing that fast has no stable answer to give).
const CONSISTENT_ATTEMPTS: u32 = 3;

/// Like [`build_context`], answered from `context_cache` when a document for
/// the same request was computed at the graph's current change sequence
/// number, and stored there otherwise (when `store_result`).
pub fn cached_context(
    store: &Store,
    req: &ContextRequest,
    counter: &TokenCounter,
    store_result: bool,
) -> Result<ContextOutput, ContextError> {
    let key = req.cache_key();
    let rows = store.read(
        queries::CONTEXT_CACHE_GET,
        Params::new()
            .with("graph", req.graph.as_str())
            .with("key", key.as_str()),
    )?;
    if let Some(row) = rows.rows.first() {
        if let Ok(mut out) = serde_json::from_str::<ContextOutput>(get_str(row, 0)) {
            out.from_cache = true;
            return Ok(out);
        }
    }
    let out = build_context(store, req, counter)?;
    if store_result {
        let seq = store.graph_seq(&req.graph)?;
        let mut batch = Batch::new();
        batch.put(
            "context_cache",
            &["graph", "cache_key", "seq", "output"],
            vec![
                req.graph.as_str().into(),
                key.as_str().into(),
                seq.into(),
                serde_json::to_string(&out).unwrap_or_default().into(),
            ],
        );
        store.apply(batch)?;
    }
    Ok(out)
}

/// A relationship between two selected entities.
#[derive(Debug, Clone)]
pub struct Relationship {
    pub src: usize,
    pub dst: usize,
    pub rel: String,
    pub weight: f64,
    pub origin: String,
}

impl Relationship {
    /// `rel_weight` plus a little per extra reference, at most 1.0.
    pub fn strength(&self) -> f64 {
        let s = rel_weight(&self.rel) + 0.05 * self.weight.max(1.0).ln();
        (s.min(1.0) * 100.0).round() / 100.0
    }
}

/// Everything the renderers need about the selected entities.
#[derive(Default)]
pub struct Loaded {
    pub candidates: Vec<Candidate>,
    pub details: Vec<Details>,
    pub usage: Vec<Usage>,
    pub rels: Vec<Relationship>,
}

/// Entities loaded first; each further chunk is sized by what is missing
/// (see [`more_to_load`]), at least [`MIN_CHUNK`] and at most twice the
/// chunk before.
const FIRST_CHUNK: usize = 128;
const MIN_CHUNK: usize = 16;

/// How many more entities to load, or `None` when those loaded spend the
/// budget with room to spare: the fitter, run on them alone
/// (relationships only add cost), already leaves out non-base entities
/// whose short forms add up to a tenth of the budget — material for the
/// top-up after the exact count. Entities further down the inclusion
/// order would rank below those, so loading them would change nothing but
/// the tail. Otherwise: enough entities to cover what is missing at the
/// loaded ones' average short-form cost, and a quarter more.
fn more_to_load(
    items: &[FitItem],
    budget: usize,
    derived_base_share: Option<f64>,
) -> Option<usize> {
    // Not even the protected entities fit: the real fit reports it.
    let plan = fit::fit(items, &[], budget, 0, derived_base_share).ok()?;
    let short = |i: usize| items[i].tokens[Detail::ShortDoc as usize];
    let others: Vec<usize> = (0..items.len()).filter(|&i| !items[i].base).collect();
    let spare: usize = others
        .iter()
        .copied()
        .filter(|&i| !plan.included[i])
        .map(short)
        .sum();
    let want = budget / 10;
    if spare >= want {
        return None;
    }
    let used = fit::estimate(items, &[], &plan, 0);
    let missing = budget.saturating_sub(used) + want - spare;
    let average = match others.len() {
        0 => 100.0,
        n => others.iter().map(|&i| short(i)).sum::<usize>() as f64 / n as f64,
    };
    Some((1.25 * missing as f64 / average.max(1.0)).ceil() as usize)
}

/// Details and usage of `candidates`, in their order; candidates the store
/// does not know (any more) are left out.
fn load_entities(
    store: &Store,
    graph: &str,
    candidates: &[Candidate],
) -> Result<Vec<(Candidate, Details, Usage)>, StoreError> {
    let params = Params::new()
        .with("graph", graph)
        .with("keys", str_list(candidates.iter().map(|c| c.key.as_str())));
    let mut by_key: HashMap<String, (Details, Usage)> = store
        .read(queries::CONTEXT_ENTITIES, params)?
        .rows
        .iter()
        .map(|r| {
            let d = Details::from_row(r);
            let u = Usage {
                fan_in: 0,
                references: get_int(r, 15).max(0) as usize,
                call_sites: get_str_list(r, 16).into_iter().collect(),
                tests: get_int(r, 17).max(0) as usize,
                tested_members: get_int(r, 18).max(0) as usize,
                out: usage::decode_out(get_str(r, 19)),
            };
            (d.key.clone(), (d, u))
        })
        .collect();
    Ok(candidates
        .iter()
        .filter_map(|c| {
            let (d, mut u) = by_key.remove(&c.key)?;
            u.fan_in = c.fan_in;
            Some((c.clone(), d, u))
        })
        .collect())
}

/// The edges among loaded entities, one per (src, dst, rel) with the
/// weights of all origins summed.
fn relationships(candidates: &[Candidate], usage: &[Usage]) -> Vec<Relationship> {
    let index: HashMap<&str, usize> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.as_str(), i))
        .collect();
    let mut rels: Vec<Relationship> = usage
        .iter()
        .enumerate()
        .flat_map(|(s, u)| {
            let index = &index;
            u.out.iter().filter_map(move |(rel, dst, weight, origin)| {
                Some(Relationship {
                    src: s,
                    dst: *index.get(dst.as_str())?,
                    rel: rel.clone(),
                    weight: *weight,
                    origin: origin.clone(),
                })
            })
        })
        .collect();
    rels.sort_by(|a, b| (a.src, a.dst, &a.rel).cmp(&(b.src, b.dst, &b.rel)));
    // The same edge can come from several origins; keep one, summed.
    let mut merged: Vec<Relationship> = Vec::new();
    for r in rels {
        match merged.last_mut() {
            Some(m) if m.src == r.src && m.dst == r.dst && m.rel == r.rel => m.weight += r.weight,
            _ => merged.push(r),
        }
    }
    merged
}

fn emit_selection(
    store: &Store,
    req: &ContextRequest,
    selection: &Selection,
    counter: &TokenCounter,
) -> Result<ContextOutput, ContextError> {
    // No entity renders in fewer than ~40 tokens of JSON (a key, a kind, a
    // file, lines) or ~12 of Format E: never consider more than twice what
    // could fit (twice, so that small entities further down can take the
    // room large excluded ones leave) — base entities and the others
    // counted separately, since a derived base (a whole file) can be larger
    // than the budget on its own. Loading stops much earlier when the
    // budget is spent (`more_to_load`).
    let smallest = match req.format {
        Format::Json => 40,
        Format::E => 12,
    };
    let limit = 2 * (req.budget / smallest) + 8;
    let base_limit = if selection.explicit {
        usize::MAX
    } else {
        limit
    };
    let (mut n_base, mut n_other) = (0usize, 0usize);
    let chosen: Vec<Candidate> = selection
        .candidates
        .iter()
        .filter(|c| {
            let (n, cap) = if c.is_base {
                (&mut n_base, base_limit)
            } else {
                (&mut n_other, limit)
            };
            *n += 1;
            *n <= cap
        })
        .cloned()
        .collect();
    let sep = match req.format {
        Format::Json => ",\n",
        Format::E => "\n",
    };
    // One entity's pieces at every level of detail and what each costs.
    let stage = |c: &Candidate, d: &Details, u: &Usage| -> ([String; 4], FitItem) {
        let p = DETAILS.map(|level| match req.format {
            Format::Json => entity::render(d, u, c, level),
            Format::E => format_e::node_line(d, u, level),
        });
        // Counted as the line it becomes, separator included, so these
        // counts are the document's (see TokenCounter::count_lines). A
        // base entity also costs its key in query_context.base_entities.
        // The two intermediate forms are estimated from the full form's
        // count by length: counting every form of every candidate would
        // cost four tokenizer runs per candidate, and the exact count of
        // the assembled document corrects any estimate that was short.
        let full_line = format!("{}{sep}", p[0]);
        let full = counter.count_lines(&full_line);
        let per_byte = full as f64 / full_line.len().max(1) as f64;
        let key = if c.is_base && req.format == Format::Json {
            counter.count(&c.key) + 2
        } else {
            0
        };
        let mut tokens = [full + key; 4];
        for level in 1..3 {
            let len = p[level].len() + sep.len();
            tokens[level] = (len as f64 * per_byte).ceil() as usize + key;
        }
        // The minimal form is what entities beyond the detailed ones come
        // back in (see fit::refill): counted exactly, so a document of
        // many minimal entities is planned as it will be counted.
        tokens[3] = counter.count_lines(&format!("{}{sep}", p[3])) + key;
        let item = FitItem {
            tokens,
            tier: c.tier,
            class: match c.level {
                _ if c.is_base => 1,
                0 | 1 => 1,
                2 => 2,
                _ => 3,
            },
            base: c.is_base,
            protected: c.is_base && selection.explicit,
        };
        (p, item)
    };
    // Load, render and count in inclusion order, a chunk at a time, until
    // the budget is surely spent (see `more_to_load`):
    // around a hub thousands of entities are reachable and a few hundred
    // fit.
    let mut loaded = Loaded::default();
    let mut pieces: Vec<[String; 4]> = Vec::new();
    let mut items: Vec<FitItem> = Vec::new();
    let mut next = 0;
    let mut chunk = FIRST_CHUNK;
    let derived_base_share = (!selection.explicit).then_some(FILE_BASE_SHARE);
    while next < chosen.len() {
        let end = (next + chunk).min(chosen.len());
        let rows = load_entities(store, &req.graph, &chosen[next..end])?;
        // Rendering and counting are independent per entity: spread over
        // the cores (the counter's cache is shared).
        let staged: Vec<([String; 4], FitItem)> =
            rows.par_iter().map(|(c, d, u)| stage(c, d, u)).collect();
        for ((c, d, u), (p, item)) in rows.into_iter().zip(staged) {
            pieces.push(p);
            items.push(item);
            loaded.candidates.push(c);
            loaded.details.push(d);
            loaded.usage.push(u);
        }
        next = end;
        match more_to_load(&items, req.budget, derived_base_share) {
            None => break,
            Some(n) => chunk = n.clamp(MIN_CHUNK, 2 * chunk),
        }
    }
    loaded.rels = relationships(&loaded.candidates, &loaded.usage);
    let not_loaded = selection.candidates.len() - loaded.candidates.len();

    // Cycles among the selection (every loaded relationship, before any
    // is cut for the budget); reported are those whose members all made it.
    // A path through a module (`crate::m::f`) is no entity dependency.
    let cycle_edges: Vec<(String, String, String)> = loaded
        .rels
        .iter()
        .filter(|r| loaded.candidates[r.dst].kind != "module")
        .map(|r| {
            (
                loaded.candidates[r.src].key.clone(),
                r.rel.clone(),
                loaded.candidates[r.dst].key.clone(),
            )
        })
        .collect();
    let found_cycles = cycles::cycles_in(&cycle_edges);
    if req.fail_on_cycles {
        if let Some(c) = found_cycles.first() {
            return Err(ContextError::Cycle {
                cycle_path: c.cycle_path.clone(),
            });
        }
    }
    let index_of: HashMap<&str, usize> = loaded
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.as_str(), i))
        .collect();
    let cycle_members: Vec<Vec<usize>> = found_cycles
        .iter()
        .map(|c| {
            c.members
                .iter()
                .filter_map(|m| index_of.get(m.as_str()).copied())
                .collect()
        })
        .collect();
    let cycles_included = |plan: &Plan| -> Vec<&Vec<String>> {
        found_cycles
            .iter()
            .zip(&cycle_members)
            .filter(|(_, m)| m.iter().all(|&i| plan.included[i]))
            .map(|(c, _)| &c.cycle_path)
            .take(CYCLES_LISTED)
            .collect()
    };

    let doc = JsonDoc::new(req, selection);
    // JSON writes one line per relationship; Format E groups them by
    // source and type, so a relationship costs its target in the list and
    // a share of the line's head.
    let rel_texts: Vec<String> = match req.format {
        Format::Json => loaded
            .rels
            .iter()
            .map(|r| render_relationship(&loaded, r))
            .collect(),
        Format::E => Vec::new(),
    };
    let rel_tokens = match req.format {
        Format::Json => relationship_tokens(&rel_texts, sep, counter),
        Format::E => format_e::planning_texts(&loaded)
            .par_iter()
            .map(|(head, target, group)| {
                counter.count(target) + counter.count(head).div_ceil(*group)
            })
            .collect(),
    };
    let fit_rels: Vec<FitRel> = loaded
        .rels
        .iter()
        .zip(rel_tokens)
        .map(|(r, tokens)| FitRel {
            tokens,
            strength: r.strength(),
            a: r.src,
            b: r.dst,
        })
        .collect();

    let assemble = |plan: &Plan, token_count: usize| -> String {
        let excluded: Vec<&str> = plan
            .excluded()
            .map(|i| loaded.candidates[i].key.as_str())
            .chain(
                selection
                    .candidates
                    .iter()
                    .filter(|c| !index_of.contains_key(c.key.as_str()))
                    .map(|c| c.key.as_str()),
            )
            .collect();
        let ents: Vec<&str> = (0..pieces.len())
            .filter(|&i| plan.included[i])
            .map(|i| pieces[i][plan.detail[i] as usize].as_str())
            .collect();
        let kept: Vec<usize> = loaded
            .rels
            .iter()
            .enumerate()
            .filter(|(i, r)| plan.rel_kept[*i] && plan.included[r.src] && plan.included[r.dst])
            .map(|(i, _)| i)
            .collect();
        match req.format {
            Format::Json => {
                let rels: Vec<&str> = kept.iter().map(|&i| rel_texts[i].as_str()).collect();
                let bases: Vec<&str> = (0..pieces.len())
                    .filter(|&i| plan.included[i] && loaded.candidates[i].is_base)
                    .map(|i| loaded.candidates[i].key.as_str())
                    .collect();
                doc.assemble(
                    &bases,
                    &ents,
                    &rels,
                    plan,
                    &excluded,
                    &cycles_included(plan),
                    token_count,
                )
            }
            Format::E => {
                let legend =
                    format_e::Legend::new(&loaded, (0..pieces.len()).filter(|&i| plan.included[i]));
                let edges = format_e::edge_lines(&loaded, &legend, &kept);
                format_e::assemble(req, selection, &ents, &edges, plan, &excluded, token_count)
            }
        }
    };

    // Overhead: the document with nothing in it, plus room for the
    // excluded list and the digits of token_count.
    let empty = Plan {
        included: vec![false; items.len()],
        detail: vec![Detail::Full; items.len()],
        rel_kept: vec![false; fit_rels.len()],
        steps: vec![FitStep::RemovedPriority3; 4],
    };
    let overhead = counter.count_lines(&assemble(&empty, req.budget)) + 8;
    let mut plan = match fit::fit(&items, &fit_rels, req.budget, overhead, derived_base_share) {
        Ok(p) => p,
        Err(attempted) => {
            return Err(ContextError::SizeExceeded {
                attempted_size: attempted,
                budget: req.budget,
            })
        }
    };
    if not_loaded > 0 && !plan.steps.contains(&FitStep::DroppedLowRelevanceEntities) {
        plan.steps.push(FitStep::DroppedLowRelevanceEntities);
    }

    // Exact count of the assembled document: trim if the estimate was
    // short, top up (calibrated by the measured error) if it was long.
    let mut top_ups = 0;
    loop {
        let (text, n) = settle_token_count(&assemble, &plan, counter);
        let estimate = fit::estimate(&items, &fit_rels, &plan, overhead);
        if n <= req.budget
            && (n as f64) < 0.95 * req.budget as f64
            && estimate > n
            && top_ups < 2
            && plan.excluded().next().is_some()
        {
            top_ups += 1;
            let before = plan.clone();
            // The plan overestimated by `estimate - n`: plan again with
            // that much more room (first out of the overhead, then on top
            // of the budget; the exact count below is what holds).
            let error = estimate - n;
            let (budget, calibrated) = if error <= overhead {
                (req.budget, overhead - error)
            } else {
                (req.budget + (error - overhead), 0)
            };
            let base_last = plan.steps.contains(&FitStep::CappedBaseEntities);
            fit::refill(&items, &fit_rels, budget, calibrated, &mut plan, base_last);
            if plan != before {
                continue;
            }
        }
        if n <= req.budget {
            let included = plan.included.iter().filter(|x| **x).count();
            let relationships = loaded
                .rels
                .iter()
                .enumerate()
                .filter(|(i, r)| plan.rel_kept[*i] && plan.included[r.src] && plan.included[r.dst])
                .count();
            return Ok(ContextOutput {
                text,
                token_count: n,
                entities_included: included,
                entities_excluded: selection.candidates.len() - included,
                relationships,
                steps: plan.steps.clone(),
                cycles: found_cycles.len(),
                from_cache: false,
            });
        }
        // Over the budget: drop lowest-priority entities until the
        // estimate, corrected by the error just measured, fits — one exact
        // count per correction rather than one per dropped entity.
        let short_by = n.saturating_sub(estimate);
        if !fit::drop_one(&items, &mut plan) {
            return Err(ContextError::SizeExceeded {
                attempted_size: n,
                budget: req.budget,
            });
        }
        while fit::estimate(&items, &fit_rels, &plan, overhead) + short_by > req.budget
            && fit::drop_one(&items, &mut plan)
        {}
    }
}

/// Relationship lines counted exactly when cached or in the sample.
const REL_SAMPLE: usize = 64;

/// Token counts of relationship lines for planning. Near a hub thousands
/// of relationships join the loaded entities and most will not make it
/// into the document; their lines are uniform (two keys, a type, a
/// strength, an origin), so lines already counted and an even sample of
/// the rest are counted exactly, and the others are estimated from their
/// length at the sample's tokens per byte, rounded up with a token to
/// spare. The document's exact count (which counts every line used)
/// corrects what an estimate missed.
fn relationship_tokens(texts: &[String], sep: &str, counter: &TokenCounter) -> Vec<usize> {
    let lines: Vec<String> = texts.iter().map(|t| format!("{t}{sep}")).collect();
    let step = (lines.len() / REL_SAMPLE).max(1);
    let exact: Vec<Option<usize>> = lines
        .par_iter()
        .enumerate()
        .map(|(i, l)| {
            if i % step == 0 {
                Some(counter.count(l))
            } else {
                counter.cached(l)
            }
        })
        .collect();
    let (tokens, bytes) = lines
        .iter()
        .zip(&exact)
        .filter_map(|(l, n)| n.map(|n| (n, l.len())))
        .fold((0usize, 0usize), |(t, b), (n, l)| (t + n, b + l));
    let per_byte = tokens as f64 / bytes.max(1) as f64;
    lines
        .iter()
        .zip(&exact)
        .map(|(l, n)| n.unwrap_or_else(|| (l.len() as f64 * per_byte).ceil() as usize + 1))
        .collect()
}

/// Render with a `token_count` equal to the document's own exact count.
fn settle_token_count(
    assemble: &dyn Fn(&Plan, usize) -> String,
    plan: &Plan,
    counter: &TokenCounter,
) -> (String, usize) {
    let mut guess = counter.count_lines(&assemble(plan, 0));
    for _ in 0..6 {
        let text = assemble(plan, guess);
        let n = counter.count_lines(&text);
        if n == guess {
            return (text, n);
        }
        guess = n;
    }
    // Oscillating between two digit counts: take the larger, which the
    // smaller document then undercuts by at most a token.
    let text = assemble(plan, guess);
    let n = counter.count_lines(&text);
    let text = assemble(plan, n);
    (text, n)
}

fn render_relationship(loaded: &Loaded, r: &Relationship) -> String {
    let mut context = serde_json::Map::new();
    context.insert("origin".into(), json!(r.origin));
    context.insert("references".into(), json!(r.weight as i64));
    if r.rel == "implements" {
        // The trait's methods among the selection.
        let tr = &loaded.details[r.dst];
        let methods: Vec<&str> = loaded
            .rels
            .iter()
            .filter(|x| x.src == r.dst && x.rel == "contains")
            .map(|x| loaded.details[x.dst].name.as_str())
            .collect();
        context.insert(
            "implementation_location".into(),
            json!(format!(
                "{}:{}-{}",
                loaded.details[r.src].file, tr.start_line, tr.end_line
            )),
        );
        context.insert("trait_methods".into(), json!(methods));
    }
    serde_json::to_string(&json!({
        "dependent": loaded.candidates[r.src].key,
        "dependency": loaded.candidates[r.dst].key,
        "relationship_type": r.rel,
        "strength": r.strength(),
        "context": Value::Object(context),
    }))
    .unwrap_or_default()
}

/// The fixed parts of a CodeGraphContext.json document.
struct JsonDoc {
    generated_at: String,
    query_context: Value,
    strategy: &'static str,
    stale_files: Vec<String>,
}

impl JsonDoc {
    fn new(req: &ContextRequest, selection: &Selection) -> JsonDoc {
        let focus: Vec<&str> = {
            let tests = selection.candidates.iter().any(|c| c.is_test);
            let non_tests = selection.candidates.iter().any(|c| !c.is_test);
            let mut f = vec![];
            if tests {
                f.push("test_interfaces");
            }
            if non_tests {
                f.push("non_test_interfaces");
            }
            f
        };
        JsonDoc {
            generated_at: crate::support::time::now_rfc3339(),
            query_context: json!({
                "base_entities": BASE_PLACEHOLDER,
                "hop_depth": selection.hops,
                "change_type": req.change_type.name(),
                "focus_areas": focus,
                "size_limit": req.budget,
                "optimization_strategy": "blast_radius",
            }),
            strategy: req.strategy.name(),
            stale_files: req.stale_files.clone(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        &self,
        bases: &[&str],
        ents: &[&str],
        rels: &[&str],
        plan: &Plan,
        excluded: &[&str],
        cycles: &[&Vec<String>],
        token_count: usize,
    ) -> String {
        let size_status = if plan.steps.is_empty() {
            "optimal"
        } else if excluded.is_empty() {
            "compressed"
        } else {
            "truncated"
        };
        let query_context = self.query_context.to_string().replace(
            &json!(BASE_PLACEHOLDER).to_string(),
            &json!(bases).to_string(),
        );
        let mut head = format!(
            "{{\"version\":\"1.0\",\"generated_at\":{},\"token_count\":{},\"size_status\":{},\"query_context\":{},",
            json!(self.generated_at),
            token_count,
            json!(size_status),
            query_context
        );
        if !self.stale_files.is_empty() {
            head.push_str(&format!("\"stale_files\":{},", json!(self.stale_files)));
        }
        let info = json!({
            "excluded_entities": excluded.iter().take(EXCLUDED_LISTED).collect::<Vec<_>>(),
            "excluded_count": excluded.len(),
            "truncation_applied": !plan.steps.is_empty(),
            "truncation_steps": plan.steps,
            "prioritization_strategy": self.strategy,
        });
        let mut out = String::with_capacity(
            head.len() + ents.iter().map(|e| e.len() + 2).sum::<usize>() + 256,
        );
        out.push_str(&head);
        out.push_str("\n\"entities\":[\n");
        out.push_str(&ents.join(",\n"));
        out.push_str("\n],\n\"relationships\":[\n");
        out.push_str(&rels.join(",\n"));
        out.push_str("\n],\n\"optimization_info\":");
        out.push_str(&info.to_string());
        out.push_str(",\"cycles\":");
        out.push_str(&json!(cycles).to_string());
        out.push_str("}\n");
        out
    }
}

/// Token reduction of Format E against the JSON form of the same selection.
#[derive(Debug, Clone, Serialize)]
pub struct FormatComparison {
    pub json_tokens: usize,
    pub format_e_tokens: usize,
    /// 1 - E / JSON.
    pub reduction: f64,
}

/// Emit the whole selection of a request in both formats (no budget cuts,
/// so both carry exactly the same entities and relationships) and compare
/// their sizes.
pub fn compare_formats(
    store: &Store,
    req: &ContextRequest,
    counter: &TokenCounter,
) -> Result<FormatComparison, ContextError> {
    let selection = select::select(store, &req.graph, &req.base, req.hops, req.strategy)?;
    let mut j = req.clone();
    j.format = Format::Json;
    j.budget = UNCUT_BUDGET;
    let mut e = j.clone();
    e.format = Format::E;
    let json_out = emit_selection(store, &j, &selection, counter)?;
    let e_out = emit_selection(store, &e, &selection, counter)?;
    let reduction = 1.0 - e_out.token_count as f64 / json_out.token_count.max(1) as f64;
    Ok(FormatComparison {
        json_tokens: json_out.token_count,
        format_e_tokens: e_out.token_count,
        reduction,
    })
}
