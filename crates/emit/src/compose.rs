//! One context document from a selection, in stages: choose how many
//! candidates could matter, load and render them in inclusion order until
//! the budget is surely spent, find the cycles among them, cost the
//! relationships, fit, then assemble and count exactly — trimming or
//! topping up until the exact count is within the budget.

use std::collections::HashSet;

use super::*;
use crate::analyse::cycles::Cycle;

/// Build the document for `selection` (see the module doc).
pub(super) fn emit_selection(
    store: &Store,
    req: &ContextRequest,
    selection: &Selection,
    counter: &TokenCounter,
) -> Result<ContextOutput, ContextError> {
    let chosen = choose(req, selection);
    let staged = load_in_order(store, req, selection, counter, &chosen)?;
    let Staged {
        loaded,
        pieces,
        items,
        not_loaded,
        file_ids,
    } = staged;
    let index_of = loaded_index(&loaded);
    let listing = listing(req.format, selection, &index_of, file_ids);
    let cycles = SelectionCycles::find(&loaded, &index_of);
    if req.fail_on_cycles {
        if let Some(c) = cycles.found.first() {
            return Err(ContextError::Cycle {
                cycle_path: c.cycle_path.clone(),
            });
        }
    }
    let (rel_texts, fit_rels) = cost_relationships(req, &loaded, counter);
    let doc = Assembler {
        req,
        selection,
        loaded: &loaded,
        index_of: &index_of,
        pieces: &pieces,
        rel_texts: &rel_texts,
        cycles: &cycles,
        json: JsonDoc::new(req, selection),
    };
    let assemble = |plan: &Plan, token_count: usize| doc.assemble(plan, token_count);
    let mut fitting = Fitting {
        items: &items,
        rels: &fit_rels,
        budget: req.budget,
        overhead: 0,
        listing: &listing,
        counter,
        assemble: &assemble,
    };
    fitting.overhead = fitting.measure_overhead();
    let mut plan = fitting.first_plan(!selection.explicit)?;
    if not_loaded > 0 && !plan.steps.contains(&FitStep::DroppedLowRelevanceEntities) {
        plan.steps.push(FitStep::DroppedLowRelevanceEntities);
    }
    let (text, n, plan) = fitting.settle(plan)?;
    Ok(finished(selection, &loaded, text, n, &plan, &cycles))
}

/// What fitting a document to its budget works with: the items and
/// relationships with their costs, and the document they assemble into.
struct Fitting<'f> {
    items: &'f [FitItem],
    rels: &'f [FitRel],
    budget: usize,
    /// The document's tokens with nothing in it (see [`Self::measure_overhead`]).
    overhead: usize,
    listing: &'f fit::Listing,
    counter: &'f TokenCounter,
    assemble: &'f dyn Fn(&Plan, usize) -> String,
}

impl Fitting<'_> {
    /// Overhead: the document with nothing in it, plus room for the
    /// excluded list and the digits of token_count.
    fn measure_overhead(&self) -> usize {
        let empty = Plan {
            included: vec![false; self.items.len()],
            detail: vec![Detail::Full; self.items.len()],
            rel_kept: vec![false; self.rels.len()],
            steps: vec![FitStep::RemovedPriority3; 4],
        };
        self.counter
            .count_lines(&(self.assemble)(&empty, self.budget))
            + 8
    }

    /// The plan the estimates fit into the budget (a derived base — the
    /// entities of a file — takes at most its share of it).
    fn first_plan(&self, derived_base: bool) -> Result<Plan, ContextError> {
        let derived_base_share = derived_base.then_some(FILE_BASE_SHARE);
        fit::fit(
            self.items,
            self.rels,
            self.budget,
            self.overhead,
            derived_base_share,
            self.listing,
        )
        .map_err(|attempted| ContextError::SizeExceeded {
            attempted_size: attempted,
            budget: self.budget,
        })
    }

    /// Exact count of the assembled document: trim if the estimate was
    /// short, top up (calibrated by the measured error) if it was long. A
    /// top-up that comes out over the budget is trimmed like any plan, and
    /// the fullest document that fitted on the way is the answer: trimming
    /// a top-up can end below the document it started from.
    fn settle(&self, mut plan: Plan) -> Result<(String, usize, Plan), ContextError> {
        let mut top_ups = 0;
        let mut trims = 0;
        let mut best: Option<(String, usize, Plan)> = None;
        loop {
            let (text, n) = settle_token_count(self.assemble, &plan, self.counter);
            if n <= self.budget {
                let fuller = best.as_ref().is_none_or(|(_, best_n, _)| n > *best_n);
                if fuller {
                    best = Some((text, n, plan.clone()));
                }
                if top_ups < 2 && self.top_up(&mut plan, n) {
                    top_ups += 1;
                    continue;
                }
                return Ok(best.expect("a document within the budget was just kept"));
            }
            self.trim(&mut plan, n, trims == 0)?;
            trims += 1;
        }
    }

    /// Plan again with the room a plan `n` tokens long left unused, when it
    /// is short of the budget, excluded something and overestimated;
    /// whether the plan changed.
    fn top_up(&self, plan: &mut Plan, n: usize) -> bool {
        let estimate = fit::estimate(self.items, self.rels, plan, self.overhead);
        if (n as f64) >= 0.95 * self.budget as f64
            || estimate <= n
            || plan.excluded().next().is_none()
        {
            return false;
        }
        let before = plan.clone();
        // The plan overestimated by `estimate - n`: plan again with that
        // much more room (first out of the overhead, then on top of the
        // budget; the exact count is what holds).
        let error = estimate - n;
        let (budget, calibrated) = if error <= self.overhead {
            (self.budget, self.overhead - error)
        } else {
            (self.budget + (error - self.overhead), 0)
        };
        let base_last = plan.steps.contains(&FitStep::CappedBaseEntities);
        fit::refill(
            self.items,
            self.rels,
            budget,
            calibrated,
            plan,
            base_last,
            self.listing,
        );
        *plan != before
    }

    /// Over the budget at `n` tokens: take back entities (those whose files
    /// stay named first) and detail until the estimate, corrected by the
    /// error just measured, fits — one exact count per correction rather
    /// than one per step. The first time, minimal entities come back into
    /// what a whole entity's going left over (later, trimming alone, so
    /// the loop ends).
    fn trim(&self, plan: &mut Plan, n: usize, first: bool) -> Result<(), ContextError> {
        let estimate = fit::estimate(self.items, self.rels, plan, self.overhead);
        let short_by = n.saturating_sub(estimate);
        let target = self.budget.saturating_sub(short_by);
        if !fit::trim(
            self.items,
            self.rels,
            plan,
            self.overhead,
            target,
            self.listing,
        ) {
            return Err(ContextError::SizeExceeded {
                attempted_size: n,
                budget: self.budget,
            });
        }
        if first {
            fit::fill(self.items, self.rels, plan, self.overhead, target);
        }
        Ok(())
    }
}

/// The output of a document whose exact count `n` is within the budget.
fn finished(
    selection: &Selection,
    loaded: &Loaded,
    text: String,
    n: usize,
    plan: &Plan,
    cycles: &SelectionCycles,
) -> ContextOutput {
    let included = plan.included.iter().filter(|x| **x).count();
    ContextOutput {
        text,
        token_count: n,
        entities_included: included,
        entities_excluded: selection.candidates.len() - included,
        relationships: kept_relationships(loaded, plan).len(),
        steps: plan.steps.clone(),
        cycles: cycles.found.len(),
        from_cache: false,
    }
}

/// The candidates worth loading. No entity renders in fewer than ~40
/// tokens of JSON (a key, a kind, a file, lines) or ~12 of Format E: never
/// consider more than twice what could fit (twice, so that small entities
/// further down can take the room large excluded ones leave) — base
/// entities and the others counted separately, since a derived base (a
/// whole file) can be larger than the budget on its own. Loading stops
/// much earlier when the budget is spent (`more_to_load`).
fn choose(req: &ContextRequest, selection: &Selection) -> Vec<Candidate> {
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
    selection
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
        .collect()
}

/// How a document of `format` names what it leaves out (see
/// [`fit::Listing`]): JSON lists excluded keys, Format E the files of
/// excluded entities (`# more in:`), each at most [`EXCLUDED_LISTED`] —
/// the loaded entities left out, then the candidates never loaded.
fn listing(
    format: Format,
    selection: &Selection,
    index_of: &HashMap<&str, usize>,
    mut file_ids: HashMap<String, usize>,
) -> fit::Listing {
    let names = match format {
        Format::Json => fit::Names::Entities,
        Format::E => fit::Names::Files,
    };
    let mut listing = fit::Listing::new(names, EXCLUDED_LISTED);
    let mut seen = HashSet::new();
    for c in &selection.candidates {
        if index_of.contains_key(c.key.as_str()) {
            continue;
        }
        // Only the first entries can be listed: the first n entities
        // (JSON), a file once (Format E).
        if names == fit::Names::Entities && listing.tail.len() == listing.n {
            break;
        }
        let f = match file_ids.get(&c.file) {
            Some(&f) => f,
            None => {
                let f = file_ids.len();
                file_ids.insert(c.file.clone(), f);
                f
            }
        };
        if names == fit::Names::Entities || seen.insert(f) {
            listing.tail.push(f);
        }
    }
    listing
}

/// What separates two entity pieces in the document.
fn separator(format: Format) -> &'static str {
    match format {
        Format::Json => ",\n",
        Format::E => "\n",
    }
}

/// The loaded entities with their pieces (one per level of detail) and
/// fitter items, in inclusion order.
struct Staged {
    loaded: Loaded,
    pieces: Vec<[String; 4]>,
    items: Vec<FitItem>,
    /// Candidates of the selection never loaded (the budget was spent).
    not_loaded: usize,
    /// The number of each loaded entity's file (`FitItem::file`).
    file_ids: HashMap<String, usize>,
}

/// One entity's pieces at every level of detail and what each costs.
fn stage(
    req: &ContextRequest,
    selection: &Selection,
    counter: &TokenCounter,
    (c, d, u): (&Candidate, &Details, &Usage),
) -> ([String; 4], FitItem) {
    let sep = separator(req.format);
    let p = DETAILS.map(|level| match req.format {
        Format::Json => entity::render(d, u, c, level),
        Format::E => format_e::node_line(d, u, level),
    });
    // Counted as the line it becomes, separator included, so these counts
    // are the document's (see TokenCounter::count_lines). A base entity
    // also costs its key in query_context.base_entities. The two
    // intermediate forms are estimated from the full form's count by
    // length: counting every form of every candidate would cost four
    // tokenizer runs per candidate, and the exact count of the assembled
    // document corrects any estimate that was short.
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
    // The minimal form is what entities beyond the detailed ones come back
    // in (see fit::refill): counted exactly, so a document of many minimal
    // entities is planned as it will be counted.
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
        // Numbered once staged, in inclusion order.
        file: 0,
    };
    (p, item)
}

/// Load, render and count in inclusion order, a chunk at a time, until
/// the budget is surely spent (see `more_to_load`): around a hub
/// thousands of entities are reachable and a few hundred fit.
fn load_in_order(
    store: &Store,
    req: &ContextRequest,
    selection: &Selection,
    counter: &TokenCounter,
    chosen: &[Candidate],
) -> Result<Staged, ContextError> {
    let mut loaded = Loaded::default();
    let mut pieces: Vec<[String; 4]> = Vec::new();
    let mut items: Vec<FitItem> = Vec::new();
    let mut file_ids: HashMap<String, usize> = HashMap::new();
    let mut next = 0;
    let mut chunk = FIRST_CHUNK;
    let derived_base_share = (!selection.explicit).then_some(FILE_BASE_SHARE);
    while next < chosen.len() {
        let end = (next + chunk).min(chosen.len());
        let rows = load_entities(store, &req.graph, &chosen[next..end])?;
        // Rendering and counting are independent per entity: spread over
        // the cores (the counter's cache is shared).
        let staged: Vec<([String; 4], FitItem)> = rows
            .par_iter()
            .map(|(c, d, u)| stage(req, selection, counter, (c, d, u)))
            .collect();
        for ((c, d, u), (p, mut item)) in rows.into_iter().zip(staged) {
            let n = file_ids.len();
            item.file = *file_ids.entry(c.file.clone()).or_insert(n);
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
    Ok(Staged {
        loaded,
        pieces,
        items,
        not_loaded,
        file_ids,
    })
}

/// Cycles among the selection (every loaded relationship, before any is
/// cut for the budget); a document reports those whose members all made
/// it. A path through a module (`crate::m::f`) is no entity dependency.
struct SelectionCycles {
    found: Vec<Cycle>,
    /// Loaded indexes of each cycle's members.
    members: Vec<Vec<usize>>,
}

impl SelectionCycles {
    fn find(loaded: &Loaded, index_of: &HashMap<&str, usize>) -> SelectionCycles {
        let found = loaded.cycles();
        let members = found
            .iter()
            .map(|c| {
                c.members
                    .iter()
                    .filter_map(|m| index_of.get(m.as_str()).copied())
                    .collect()
            })
            .collect();
        SelectionCycles { found, members }
    }

    fn included(&self, plan: &Plan) -> Vec<&Vec<String>> {
        self.found
            .iter()
            .zip(&self.members)
            .filter(|(_, m)| m.iter().all(|&i| plan.included[i]))
            .map(|(c, _)| &c.cycle_path)
            .take(CYCLES_LISTED)
            .collect()
    }
}

/// Each loaded candidate's index, by key.
fn loaded_index(loaded: &Loaded) -> HashMap<&str, usize> {
    loaded
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.as_str(), i))
        .collect()
}

/// The relationships' rendered lines (JSON only) and their fitter items.
/// JSON writes one line per relationship; Format E groups them by source
/// and type, so a relationship costs its target in the list and a share of
/// the line's head.
fn cost_relationships(
    req: &ContextRequest,
    loaded: &Loaded,
    counter: &TokenCounter,
) -> (Vec<String>, Vec<FitRel>) {
    let rel_texts: Vec<String> = match req.format {
        Format::Json => loaded
            .rels
            .iter()
            .map(|r| render_relationship(loaded, r))
            .collect(),
        Format::E => Vec::new(),
    };
    let rel_tokens = match req.format {
        Format::Json => relationship_tokens(&rel_texts, separator(req.format), counter),
        Format::E => format_e::planning_texts(loaded)
            .par_iter()
            .map(|(head, target, group)| {
                counter.count(target) + counter.count(head).div_ceil(*group)
            })
            .collect(),
    };
    let fit_rels = loaded
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
    (rel_texts, fit_rels)
}

/// Indexes of the relationships a plan keeps (both ends included).
fn kept_relationships(loaded: &Loaded, plan: &Plan) -> Vec<usize> {
    loaded
        .rels
        .iter()
        .enumerate()
        .filter(|(i, r)| plan.rel_kept[*i] && plan.included[r.src] && plan.included[r.dst])
        .map(|(i, _)| i)
        .collect()
}

/// Everything a plan is assembled from.
struct Assembler<'a> {
    req: &'a ContextRequest,
    selection: &'a Selection,
    loaded: &'a Loaded,
    index_of: &'a HashMap<&'a str, usize>,
    pieces: &'a [[String; 4]],
    rel_texts: &'a [String],
    cycles: &'a SelectionCycles,
    json: JsonDoc,
}

impl Assembler<'_> {
    /// Files of excluded entities that no included entity is in, best
    /// first, at most [`EXCLUDED_LISTED`]: where else to look.
    fn files_left_out(&self, plan: &Plan) -> Vec<&str> {
        let loaded = self.loaded;
        let shown: HashSet<&str> = (0..self.pieces.len())
            .filter(|&i| plan.included[i])
            .map(|i| loaded.candidates[i].file.as_str())
            .collect();
        let mut seen: HashSet<&str> = HashSet::new();
        plan.excluded()
            .map(|i| loaded.candidates[i].file.as_str())
            .chain(
                self.selection
                    .candidates
                    .iter()
                    .filter(|c| !self.index_of.contains_key(c.key.as_str()))
                    .map(|c| c.file.as_str()),
            )
            .filter(|f| !shown.contains(f) && seen.insert(f))
            .take(EXCLUDED_LISTED)
            .collect()
    }

    /// The document of `plan`, stating `token_count` as its size.
    fn assemble(&self, plan: &Plan, token_count: usize) -> String {
        let loaded = self.loaded;
        let index_of = self.index_of;
        let excluded: Vec<&str> = plan
            .excluded()
            .map(|i| loaded.candidates[i].key.as_str())
            .chain(
                self.selection
                    .candidates
                    .iter()
                    .filter(|c| !index_of.contains_key(c.key.as_str()))
                    .map(|c| c.key.as_str()),
            )
            .collect();
        let ents: Vec<&str> = (0..self.pieces.len())
            .filter(|&i| plan.included[i])
            .map(|i| self.pieces[i][plan.detail[i] as usize].as_str())
            .collect();
        let kept = kept_relationships(loaded, plan);
        match self.req.format {
            Format::Json => {
                let rels: Vec<&str> = kept.iter().map(|&i| self.rel_texts[i].as_str()).collect();
                let bases: Vec<&str> = (0..self.pieces.len())
                    .filter(|&i| plan.included[i] && loaded.candidates[i].is_base)
                    .map(|i| loaded.candidates[i].key.as_str())
                    .collect();
                self.json.assemble(
                    &bases,
                    &ents,
                    &rels,
                    plan,
                    &excluded,
                    &self.cycles.included(plan),
                    token_count,
                )
            }
            Format::E => {
                let legend = format_e::Legend::new(
                    loaded,
                    (0..self.pieces.len()).filter(|&i| plan.included[i]),
                );
                let edges = format_e::edge_lines(loaded, &legend, &kept);
                let more_in = self.files_left_out(plan);
                format_e::assemble(
                    self.req,
                    self.selection,
                    &ents,
                    &edges,
                    plan,
                    &excluded,
                    &more_in,
                    token_count,
                )
            }
        }
    }
}
