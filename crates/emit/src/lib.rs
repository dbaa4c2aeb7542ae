//! Emitting context: a selection of entities (see [`crate::analyse`]) →
//! CodeGraphContext.json (seed 004) or Format E, within a token budget.
//!
//! Pieces (one entity or relationship per line) are counted once with the
//! real tokenizer and cached by content; the fitter plans with those
//! counts; the assembled document is then counted exactly, and
//! `token_count` is that exact count — never above the budget.

use graphctx_analyse as analyse;
use graphctx_base::model;
use graphctx_base::support;
use graphctx_graph as graph;
use graphctx_index as index;
use graphctx_store as store;

mod compose;
pub mod diagram;
pub mod entity;
pub mod fit;
pub mod format_e;
pub mod line;
pub mod palette;
pub mod view;

use std::collections::HashMap;

use rayon::prelude::*;
use serde::Serialize;
use serde_json::{json, Value};

use crate::analyse::cycles;
use crate::analyse::relevance::{rel_weight, Strategy};
use crate::analyse::select::{self, BaseSpec, Candidate, SelectError, Selection};
use crate::graph::{EntityDetails, EntityHead};
use crate::index::usage;
use crate::model::rel::name;
use crate::store::rows::{self, query_rows, Bytes, ContextCacheRow, StoredRow, Str};
use crate::store::value::str_list;
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
    /// The free-text query the base entities were found by (`context
    /// --query`), recorded in `query_context.query` of a JSON document.
    pub query: Option<String>,
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
            query: None,
        }
    }

    /// Seed 004's cache key (`ctx_{entities}_{hops}_{change}_{limit}`),
    /// extended with everything else that changes the output.
    pub fn cache_key(&self) -> String {
        let mut base = serde_json::to_string(&self.base).unwrap_or_default();
        if !self.stale_files.is_empty() {
            base.push_str(&serde_json::to_string(&self.stale_files).unwrap_or_default());
        }
        if let Some(q) = &self.query {
            base.push_str(&serde_json::to_string(q).unwrap_or_default());
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
        let out = compose::emit_selection(store, req, &selection, counter)?;
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
    if let Some(row) = rows::decode_first::<ContextCacheGet>(&rows).map_err(StoreError::from)? {
        if let Ok(mut out) = serde_json::from_str::<ContextOutput>(&row.output) {
            out.from_cache = true;
            return Ok(out);
        }
    }
    let out = build_context(store, req, counter)?;
    if store_result {
        let seq = store.graph_seq(&req.graph)?;
        let mut batch = Batch::new();
        batch.put_row(ContextCacheRow {
            graph: req.graph.as_str().into(),
            cache_key: key.as_str().into(),
            seq,
            output: serde_json::to_string(&out).unwrap_or_default().into(),
        });
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

impl Loaded {
    /// Dependency cycles among the loaded entities (every loaded
    /// relationship). A path through a module (`crate::m::f`) is no entity
    /// dependency.
    pub(crate) fn cycles(&self) -> Vec<cycles::Cycle> {
        let edges: Vec<(String, String, String)> = self
            .rels
            .iter()
            .filter(|r| self.candidates[r.dst].kind != "module")
            .map(|r| {
                (
                    self.candidates[r.src].key.clone(),
                    r.rel.clone(),
                    self.candidates[r.dst].key.clone(),
                )
            })
            .collect();
        cycles::cycles_in(&edges)
    }
}

/// Entities loaded first; each further chunk is sized by what is missing
/// (see [`more_to_load`]), at least [`MIN_CHUNK`] and at most twice the
/// chunk before.
const FIRST_CHUNK: usize = 128;
const MIN_CHUNK: usize = 16;

/// How many more entities to load, or `None` when those loaded spend the
/// budget with room to spare: the fitter's breadth ([`fit::breadth`]:
/// the cuts and minimal forms, before detail displaces anything), run on
/// them alone (relationships only add cost), already leaves out non-base
/// entities whose short forms add up to a tenth of the budget — material
/// for the top-up after the exact count. Entities further down the inclusion
/// order would rank below those, so loading them would change nothing but
/// the tail. Otherwise: enough entities to cover what is missing at the
/// loaded ones' average short-form cost, and a quarter more.
fn more_to_load(
    items: &[FitItem],
    budget: usize,
    derived_base_share: Option<f64>,
) -> Option<usize> {
    // Not even the protected entities fit: the real fit reports it.
    let plan = fit::breadth(items, budget, derived_base_share)?;
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

query_rows! {
    /// `queries/context_cache_get.cozo`.
    ContextCacheGet = "context_cache_get" {
        key { output: Str<'a> }
    }
    /// The columns of `queries/context_entities.cozo` after the entity's
    /// ([`EntityHead`], [`EntityDetails`]): its `code_usage` row.
    ContextUsage = "context_entities" {
        key { references: i64 }
        value { call_sites: Vec<Str<'a>>, tests: i64, tested_members: i64, out: Bytes<'a> }
    }
}

/// Details and usage of `candidates`, in their order; candidates the store
/// does not know (any more) are left out.
pub(crate) fn load_entities(
    store: &Store,
    graph: &str,
    candidates: &[Candidate],
) -> Result<Vec<(Candidate, Details, Usage)>, StoreError> {
    let params = Params::new()
        .with("graph", graph)
        .with("keys", str_list(candidates.iter().map(|c| c.key.as_str())));
    let rows = store.read(queries::CONTEXT_ENTITIES, params)?;
    let usages = rows::decode_rows_at::<ContextUsage>(
        &rows,
        EntityHead::COLUMNS.len() + EntityDetails::COLUMNS.len(),
    )?;
    let mut by_key: HashMap<String, (Details, Usage)> = Details::decode(&rows)?
        .into_iter()
        .zip(usages)
        .map(|(d, r)| {
            let u = Usage {
                fan_in: 0,
                references: r.references.max(0) as usize,
                call_sites: r.call_sites.into_iter().map(|s| s.into_owned()).collect(),
                tests: r.tests.max(0) as usize,
                tested_members: r.tested_members.max(0) as usize,
                out: usage::decode_out(&r.out),
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
pub(crate) fn relationships(candidates: &[Candidate], usage: &[Usage]) -> Vec<Relationship> {
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
    if r.rel == name::IMPLEMENTS {
        // The trait's methods among the selection.
        let tr = &loaded.details[r.dst];
        let methods: Vec<&str> = loaded
            .rels
            .iter()
            .filter(|x| x.src == r.dst && x.rel == name::CONTAINS)
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
        let mut query_context = json!({
            "base_entities": BASE_PLACEHOLDER,
            "hop_depth": selection.hops,
            "change_type": req.change_type.name(),
            "focus_areas": focus,
            "size_limit": req.budget,
            "optimization_strategy": "blast_radius",
        });
        if let (Some(q), Some(obj)) = (&req.query, query_context.as_object_mut()) {
            obj.insert("query".into(), json!(q));
        }
        JsonDoc {
            generated_at: crate::support::time::now_rfc3339(),
            query_context,
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
    let json_out = compose::emit_selection(store, &j, &selection, counter)?;
    let e_out = compose::emit_selection(store, &e, &selection, counter)?;
    let reduction = 1.0 - e_out.token_count as f64 / json_out.token_count.max(1) as f64;
    Ok(FormatComparison {
        json_tokens: json_out.token_count,
        format_e_tokens: e_out.token_count,
        reduction,
    })
}

/// The languages, installed before any test of the crate runs.
#[cfg(test)]
#[ctor::ctor]
fn install_languages() {
    index::languages::install(vec![&graphctx_rust::Rust, &graphctx_python::Python]);
}
