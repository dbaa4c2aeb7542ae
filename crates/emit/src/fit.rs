//! Fitting a selection into a token budget, in seed 004's truncation order:
//!
//! 1. remove priority 3 entities;
//! 2. compress signatures;
//! 3. truncate documentation;
//! 4. keep only the strongest relationships (at most a tenth of the budget);
//!
//! and then, when that is not enough, reduce the lowest-priority entities
//! to their minimal form and drop them, lowest priority first. Entities the
//! caller named explicitly are never dropped: if they do not fit, that is a
//! `context_size_exceeded` error. After the cuts, excluded entities that
//! still fit are added back, so a document that had to be cut uses as much
//! of the budget as it can.
//!
//! Detail is then handed out tier-major ([`refill`]): every entity
//! starts from its minimal form and those the cuts left out come back,
//! best first, while they fit; priority 1 (base entities and their direct
//! dependencies) gets detail first, level by level so every one of them
//! shows location and signature before any shows its doc, and farther
//! entities make room for it — up to [`DETAIL_SHARE`] of the budget, and
//! only while every file the document names stays named (see
//! [`Listing`]), so a cut document still covers what else the change
//! touches; then the relationships, then priority 2 and 3 in turn — no
//! entity of a priority gets more than its minimal form while one of a
//! higher priority lacks its full form.
//!
//! The fitter works on estimates — the sum of per-piece token counts, each
//! counted once and cached — and the emitter then counts the assembled
//! document exactly and, if the estimate was short, [`trim`]s — entities
//! whose files stay named first, then detail, then any entity — and
//! [`fill`]s what that freed beyond the need with minimal entities.

use std::collections::BTreeSet;

use super::entity::{Detail, DETAILS};

/// One entity as the fitter sees it.
#[derive(Debug, Clone)]
pub struct FitItem {
    /// Token count at each [`Detail`].
    pub tokens: [usize; 4],
    pub tier: u8,
    /// Priority for detail: 1 base entities and direct dependencies, 2
    /// entities two hops away, 3 the rest (CodeGraphContext.json's tiers).
    pub class: u8,
    /// A base entity of the query.
    pub base: bool,
    /// Never dropped (explicitly requested base entities).
    pub protected: bool,
    /// The entity's file, as a number shared by the items of one fit and
    /// its [`Listing`].
    pub file: usize,
}

/// What a document's list of left-out entities names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Names {
    /// The first entities left out, each by its key, which names its file
    /// (CodeGraphContext.json's `excluded_entities`).
    Entities,
    /// The first files of left-out entities that no included entity is in
    /// (Format E's `# more in:`).
    Files,
}

/// How a document names what it left out: up to `n` entries of the
/// excluded entities in inclusion order, then of the candidates never
/// loaded (`tail`, their files in inclusion order). Detail may displace an
/// entity only while every file the document names — an included
/// entity's or a listed one's — stays named: Format E lists the file of a
/// displaced entity in a few tokens, so detail costs it little breadth,
/// while JSON's list of keys is mostly taken already and a displaced
/// entity would push another file out of it.
#[derive(Debug, Clone)]
pub struct Listing {
    pub names: Names,
    pub n: usize,
    pub tail: Vec<usize>,
}

impl Listing {
    /// A list of `n` entries of what `names` says, with no tail.
    pub fn new(names: Names, n: usize) -> Listing {
        Listing {
            names,
            n,
            tail: Vec::new(),
        }
    }
}

/// One relationship between two items.
#[derive(Debug, Clone)]
pub struct FitRel {
    pub tokens: usize,
    pub strength: f64,
    pub a: usize,
    pub b: usize,
}

/// A truncation step of the fitter, in the order CodeGraphContext.json's
/// rules apply them; the serde name is what documents and the context
/// cache record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FitStep {
    CappedBaseEntities,
    #[serde(rename = "removed_priority_3")]
    RemovedPriority3,
    CompressedSignatures,
    TruncatedDocumentation,
    LimitedRelationships,
    MinimizedLowPriorityEntities,
    DroppedLowRelevanceEntities,
}

impl FitStep {
    pub const fn name(self) -> &'static str {
        match self {
            FitStep::CappedBaseEntities => "capped_base_entities",
            FitStep::RemovedPriority3 => "removed_priority_3",
            FitStep::CompressedSignatures => "compressed_signatures",
            FitStep::TruncatedDocumentation => "truncated_documentation",
            FitStep::LimitedRelationships => "limited_relationships",
            FitStep::MinimizedLowPriorityEntities => "minimized_low_priority_entities",
            FitStep::DroppedLowRelevanceEntities => "dropped_low_relevance_entities",
        }
    }

    /// The names of `steps`, comma-separated, for human-readable reports.
    pub fn join(steps: &[FitStep]) -> String {
        steps
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub included: Vec<bool>,
    pub detail: Vec<Detail>,
    pub rel_kept: Vec<bool>,
    /// Names of the steps applied, in order.
    pub steps: Vec<FitStep>,
}

impl Plan {
    pub fn excluded(&self) -> impl Iterator<Item = usize> + '_ {
        self.included
            .iter()
            .enumerate()
            .filter(|(_, inc)| !**inc)
            .map(|(i, _)| i)
    }
}

/// Estimated size of a plan: fixed overhead + included pieces.
pub fn estimate(items: &[FitItem], rels: &[FitRel], plan: &Plan, overhead: usize) -> usize {
    let e: usize = items
        .iter()
        .enumerate()
        .filter(|(i, _)| plan.included[*i])
        .map(|(i, it)| it.tokens[plan.detail[i] as usize])
        .sum();
    let r: usize = rels
        .iter()
        .enumerate()
        .filter(|(i, r)| plan.rel_kept[*i] && plan.included[r.a] && plan.included[r.b])
        .map(|(_, r)| r.tokens)
        .sum();
    overhead + e + r
}

/// The estimate of a plan, kept up to date as the plan changes, so each
/// step of the fitter costs O(1) (plus the item's relationships) instead
/// of a full recount.
struct Tally<'a> {
    items: &'a [FitItem],
    rels: &'a [FitRel],
    rels_of: Vec<Vec<usize>>,
    total: usize,
}

impl<'a> Tally<'a> {
    fn new(items: &'a [FitItem], rels: &'a [FitRel], plan: &Plan, overhead: usize) -> Tally<'a> {
        let mut rels_of = vec![Vec::new(); items.len()];
        for (r, rel) in rels.iter().enumerate() {
            rels_of[rel.a].push(r);
            if rel.b != rel.a {
                rels_of[rel.b].push(r);
            }
        }
        Tally {
            items,
            rels,
            rels_of,
            total: estimate(items, rels, plan, overhead),
        }
    }

    fn active(&self, plan: &Plan, r: usize) -> bool {
        let rel = &self.rels[r];
        plan.rel_kept[r] && plan.included[rel.a] && plan.included[rel.b]
    }

    fn set_detail(&mut self, plan: &mut Plan, i: usize, d: Detail) {
        if plan.included[i] {
            self.total -= self.items[i].tokens[plan.detail[i] as usize];
            self.total += self.items[i].tokens[d as usize];
        }
        plan.detail[i] = d;
    }

    fn set_included(&mut self, plan: &mut Plan, i: usize, inc: bool) {
        if plan.included[i] == inc {
            return;
        }
        let before: usize = self.rels_of[i]
            .iter()
            .filter(|&&r| self.active(plan, r))
            .map(|&r| self.rels[r].tokens)
            .sum();
        plan.included[i] = inc;
        let after: usize = self.rels_of[i]
            .iter()
            .filter(|&&r| self.active(plan, r))
            .map(|&r| self.rels[r].tokens)
            .sum();
        let cost = self.items[i].tokens[plan.detail[i] as usize];
        if inc {
            self.total += cost;
        } else {
            self.total -= cost;
        }
        self.total = self.total + after - before;
    }

    fn set_rel_kept(&mut self, plan: &mut Plan, r: usize, kept: bool) {
        let was = self.active(plan, r);
        plan.rel_kept[r] = kept;
        let now = self.active(plan, r);
        if was && !now {
            self.total -= self.rels[r].tokens;
        } else if now && !was {
            self.total += self.rels[r].tokens;
        }
    }
}

/// Items are given in priority order (best first). Returns the plan, or the
/// estimated size of the smallest document that keeps every protected item.
pub fn fit(
    items: &[FitItem],
    rels: &[FitRel],
    budget: usize,
    overhead: usize,
    derived_base_share: Option<f64>,
    listing: &Listing,
) -> Result<Plan, usize> {
    let mut plan = cut(items, rels, budget, overhead, derived_base_share)?;
    let base_last = plan.steps.contains(&FitStep::CappedBaseEntities);
    refill(items, rels, budget, overhead, &mut plan, base_last, listing);
    Ok(plan)
}

/// What [`fit`] includes before any detail is handed out: the cuts, then
/// every entity minimal and those left out back while they fit. The
/// loader asks this (`more_to_load`): whether the entities loaded so far
/// already leave some out for want of room — not for detail's sake.
pub fn breadth(items: &[FitItem], budget: usize, derived_base_share: Option<f64>) -> Option<Plan> {
    let mut plan = cut(items, &[], budget, 0, derived_base_share).ok()?;
    let base_last = plan.steps.contains(&FitStep::CappedBaseEntities);
    let mut t = Tally::new(items, &[], &plan, 0);
    let last = widen(&mut t, items, budget, &mut plan, base_last);
    add_back_all(&mut t, budget, &mut plan, &last);
    Some(plan)
}

/// Seed 004's truncation steps, in order, until the estimate fits.
fn cut(
    items: &[FitItem],
    rels: &[FitRel],
    budget: usize,
    overhead: usize,
    derived_base_share: Option<f64>,
) -> Result<Plan, usize> {
    let n = items.len();
    let mut plan = Plan {
        included: vec![true; n],
        detail: vec![Detail::Full; n],
        rel_kept: vec![true; rels.len()],
        steps: vec![],
    };
    let mut t = Tally::new(items, rels, &plan, overhead);
    if let Some(share) = derived_base_share {
        t.cap_derived_base(&mut plan, (budget as f64 * share) as usize);
    }
    if t.total > budget && items.iter().any(|it| it.tier >= 3 && !it.protected) {
        t.remove_priority_3(&mut plan);
    }
    for (detail, step) in [
        (Detail::CompressedSignature, FitStep::CompressedSignatures),
        (Detail::ShortDoc, FitStep::TruncatedDocumentation),
    ] {
        if t.total > budget {
            t.coarsen_all(&mut plan, detail, step);
        }
    }
    if t.total > budget && !rels.is_empty() {
        t.limit_relationships(&mut plan, budget / 10);
    }
    if t.total > budget {
        t.least_relevant_first(&mut plan, budget, |t, plan, i| {
            t.set_detail(plan, i, Detail::Minimal)
        });
        plan.steps.push(FitStep::MinimizedLowPriorityEntities);
    }
    if t.total > budget {
        t.least_relevant_first(&mut plan, budget, |t, plan, i| {
            t.set_included(plan, i, false)
        });
        plan.steps.push(FitStep::DroppedLowRelevanceEntities);
    }
    if t.total > budget {
        // Only protected items are left: try them minimal before giving up.
        for i in 0..n {
            t.set_detail(&mut plan, i, Detail::Minimal);
        }
        if t.total > budget {
            return Err(t.total);
        }
    }
    Ok(plan)
}

/// The steps of [`cut`], each recorded in the plan when taken.
impl Tally<'_> {
    /// A derived base (every entity of a file, a search's hits) may take
    /// only `cap` tokens: the context is about what surrounds it. The
    /// first base entity is kept whatever its size: a context around
    /// nothing answers nothing (the cuts after this still drop it last of
    /// all when even it cannot fit).
    fn cap_derived_base(&mut self, plan: &mut Plan, cap: usize) {
        let items = self.items;
        let mut used = 0usize;
        let mut capped = false;
        let mut first = true;
        for (i, it) in items.iter().enumerate() {
            if it.base && !it.protected {
                used += it.tokens[Detail::ShortDoc as usize];
                let keep_first = std::mem::take(&mut first);
                if used > cap && !keep_first {
                    self.set_included(plan, i, false);
                    capped = true;
                }
            }
        }
        if capped {
            plan.steps.push(FitStep::CappedBaseEntities);
        }
    }

    /// Leave out every unprotected entity of priority 3 and beyond.
    fn remove_priority_3(&mut self, plan: &mut Plan) {
        let items = self.items;
        for (i, it) in items.iter().enumerate() {
            if it.tier >= 3 && !it.protected {
                self.set_included(plan, i, false);
            }
        }
        plan.steps.push(FitStep::RemovedPriority3);
    }

    /// Bring every entity down to at least `detail`.
    fn coarsen_all(&mut self, plan: &mut Plan, detail: Detail, step: FitStep) {
        for i in 0..self.items.len() {
            let d = plan.detail[i].max(detail);
            self.set_detail(plan, i, d);
        }
        plan.steps.push(step);
    }

    /// Keep the strongest relationships within `allowance` tokens.
    fn limit_relationships(&mut self, plan: &mut Plan, allowance: usize) {
        let rels = self.rels;
        let mut order: Vec<usize> = (0..rels.len()).collect();
        order.sort_by(|&a, &b| {
            rels[b]
                .strength
                .total_cmp(&rels[a].strength)
                .then(a.cmp(&b))
        });
        let mut used = 0;
        for r in order {
            let keep = used + rels[r].tokens <= allowance;
            if keep {
                used += rels[r].tokens;
            }
            self.set_rel_kept(plan, r, keep);
        }
        plan.steps.push(FitStep::LimitedRelationships);
    }

    /// Apply `step` to the included unprotected entities from the least
    /// relevant up, until the estimate is within `budget`.
    fn least_relevant_first(
        &mut self,
        plan: &mut Plan,
        budget: usize,
        step: impl Fn(&mut Self, &mut Plan, usize),
    ) {
        for i in (0..self.items.len()).rev() {
            if self.total <= budget {
                break;
            }
            if plan.included[i] && !self.items[i].protected {
                step(self, plan, i);
            }
        }
    }
}

/// Share of the budget priority-1 detail may take from farther entities:
/// the rest keeps room for breadth (what else the change touches), and
/// detail gets what is left after that.
pub const DETAIL_SHARE: f64 = 0.5;

/// Spend the room the cuts left, tier-major. Every included entity
/// starts from its minimal form; then, each step only while it fits:
///
/// 1. the entities the cuts left out come back (minimal), best first, so
///    a cut document keeps as many entities as it can;
/// 2. priority-1 entities (base entities and direct dependencies) get
///    detail level by level — location and compressed signature for all
///    of them, then the doc's first words, then the full signature and
///    doc — in inclusion order, up to [`DETAIL_SHARE`] of the budget,
///    dropping lower-priority entities (lowest first) to make that room,
///    but only those whose going leaves every file the document names
///    still named (by an entity or by `listing`);
/// 3. left-out entities come back into any room the drops left over;
/// 4. priority 1 gets the rest of its detail;
/// 5. relationships come back, strongest first;
/// 6. priority 2, then 3, get detail the same way — each only once every
///    entity of the priority before has its full form.
///
/// Base entities cut by the base share (`base_last`) come back last, only
/// into room that nothing else could use.
pub fn refill(
    items: &[FitItem],
    rels: &[FitRel],
    budget: usize,
    overhead: usize,
    plan: &mut Plan,
    base_last: bool,
    listing: &Listing,
) {
    let mut t = Tally::new(items, rels, plan, overhead);
    let last = widen(&mut t, items, budget, plan, base_last);
    let share = (budget as f64 * DETAIL_SHARE) as usize;
    upgrade_with_room(&mut t, items, budget, share, plan, listing);
    let out: Vec<usize> = plan
        .excluded()
        .filter(|&i| !(base_last && items[i].base))
        .collect();
    add_back_all(&mut t, budget, plan, &out);
    let mut all_full = true;
    for class in 1..=3u8 {
        if !all_full {
            break;
        }
        all_full = upgrade(&mut t, items, budget, plan, class);
        if class == 1 {
            restore_relationships(&mut t, rels, budget, plan);
        }
    }
    add_back_all(&mut t, budget, plan, &last);
}

/// Every entity in its minimal form, then those left out back (best
/// first) while they fit — except base entities cut by the base share
/// (`base_last`), which are returned, to come back last.
fn widen(
    t: &mut Tally,
    items: &[FitItem],
    budget: usize,
    plan: &mut Plan,
    base_last: bool,
) -> Vec<usize> {
    for i in 0..items.len() {
        if plan.included[i] {
            t.set_detail(plan, i, Detail::Minimal);
        } else {
            plan.detail[i] = Detail::Minimal;
        }
    }
    let (last, rest): (Vec<usize>, Vec<usize>) =
        plan.excluded().partition(|&i| base_last && items[i].base);
    add_back_all(t, budget, plan, &rest);
    last
}

/// Priority-1 detail up to `share` tokens more than the minimal forms,
/// level by level; when an upgrade does not fit, included entities of
/// lower priority go (lowest first) to make room for it — those whose
/// going would take a file out of the document stay.
fn upgrade_with_room(
    t: &mut Tally,
    items: &[FitItem],
    budget: usize,
    share: usize,
    plan: &mut Plan,
    listing: &Listing,
) {
    let mut spent = 0usize;
    let mut victims: Vec<usize> = (0..items.len())
        .filter(|&i| plan.included[i] && items[i].class > 1 && !items[i].protected)
        .collect();
    let mut named = Named::new(items, plan, listing);
    for level in [Detail::ShortDoc, Detail::CompressedSignature, Detail::Full] {
        for (i, item) in items.iter().enumerate() {
            if !plan.included[i] || item.class != 1 || plan.detail[i] <= level {
                continue;
            }
            let was = plan.detail[i];
            let extra = item.tokens[level as usize].saturating_sub(item.tokens[was as usize]);
            if spent + extra > share {
                continue;
            }
            t.set_detail(plan, i, level);
            // Victims looked at, lowest first, and whether each went.
            let mut tried: Vec<(usize, bool)> = Vec::new();
            while t.total > budget {
                let Some(v) = victims.pop() else { break };
                let goes = named.release(v);
                if goes {
                    t.set_included(plan, v, false);
                }
                tried.push((v, goes));
            }
            if t.total > budget {
                // Not enough room to be had: undo.
                for &(v, went) in tried.iter().rev() {
                    if went {
                        t.set_included(plan, v, true);
                        named.restore(v);
                    }
                    victims.push(v);
                }
                t.set_detail(plan, i, was);
                continue;
            }
            // Those that had to stay may go for a later upgrade, once
            // others have gone.
            victims.extend(
                tried
                    .iter()
                    .rev()
                    .filter(|(_, went)| !went)
                    .map(|&(v, _)| v),
            );
            if tried.iter().any(|&(_, went)| went)
                && !plan.steps.contains(&FitStep::DroppedLowRelevanceEntities)
            {
                plan.steps.push(FitStep::DroppedLowRelevanceEntities);
            }
            spent += extra;
        }
    }
}

/// The files a plan's document names — those of its included entities
/// and those its list of left-out entities names — kept current while
/// detail displaces entities, so that each displacement is checked in
/// O(`listing.n`).
struct Named<'a> {
    items: &'a [FitItem],
    listing: &'a Listing,
    /// Included entities per file.
    shown: Vec<u32>,
    /// Excluded items, in inclusion order.
    excluded: BTreeSet<usize>,
    /// [`Names::Files`]: how many files the list names. While fewer than
    /// `n`, it names every file of a left-out entity that none included
    /// is in.
    listed_files: usize,
}

impl<'a> Named<'a> {
    fn new(items: &'a [FitItem], plan: &Plan, listing: &'a Listing) -> Named<'a> {
        let files = items
            .iter()
            .map(|it| it.file)
            .chain(listing.tail.iter().copied())
            .max()
            .map_or(0, |f| f + 1);
        let mut shown = vec![0u32; files];
        let mut excluded = BTreeSet::new();
        for (i, it) in items.iter().enumerate() {
            if plan.included[i] {
                shown[it.file] += 1;
            } else {
                excluded.insert(i);
            }
        }
        let mut named = Named {
            items,
            listing,
            shown,
            excluded,
            listed_files: 0,
        };
        if listing.names == Names::Files {
            named.listed_files = named.count_listed_files();
        }
        named
    }

    /// [`Names::Files`]: the files the list names, counted.
    fn count_listed_files(&self) -> usize {
        let mut listed: Vec<usize> = Vec::new();
        for f in self.left_out_files() {
            if listed.len() == self.listing.n {
                break;
            }
            if self.shown[f] == 0 && !listed.contains(&f) {
                listed.push(f);
            }
        }
        listed.len()
    }

    /// Files of the left-out entities in list order: the excluded items,
    /// then the candidates never loaded.
    fn left_out_files(&self) -> impl Iterator<Item = usize> + '_ {
        self.excluded
            .iter()
            .map(|&i| self.items[i].file)
            .chain(self.listing.tail.iter().copied())
    }

    /// Exclude the included item `v` if every file the document names
    /// stays named; false (and nothing changes) otherwise.
    fn release(&mut self, v: usize) -> bool {
        let f = self.items[v].file;
        match self.listing.names {
            Names::Files => {
                if self.shown[f] == 1 {
                    // The file leaves the entities for the list: a full
                    // list would lose it or push its last file out.
                    if self.listed_files >= self.listing.n {
                        return false;
                    }
                    self.listed_files += 1;
                }
                self.shown[f] -= 1;
                self.excluded.insert(v);
                true
            }
            Names::Entities => {
                let n = self.listing.n;
                let before: Vec<usize> = self.left_out_files().take(n).collect();
                self.shown[f] -= 1;
                self.excluded.insert(v);
                let after: Vec<usize> = self.left_out_files().take(n).collect();
                let kept = before
                    .iter()
                    .chain([&f])
                    .all(|&g| self.shown[g] > 0 || after.contains(&g));
                if !kept {
                    self.shown[f] += 1;
                    self.excluded.remove(&v);
                }
                kept
            }
        }
    }

    /// Exclude the included item `v` even if a file goes unnamed.
    fn exclude(&mut self, v: usize) {
        self.shown[self.items[v].file] -= 1;
        self.excluded.insert(v);
        if self.listing.names == Names::Files {
            self.listed_files = self.count_listed_files();
        }
    }

    /// Undo [`Named::release`] of `v` (in the reverse order of releases).
    fn restore(&mut self, v: usize) {
        let f = self.items[v].file;
        self.shown[f] += 1;
        self.excluded.remove(&v);
        if self.listing.names == Names::Files && self.shown[f] == 1 {
            self.listed_files -= 1;
        }
    }
}

/// Give each included item of `class` its most detailed form that fits,
/// level by level (every item one level up before any goes further);
/// true when all of them got the full form.
fn upgrade(t: &mut Tally, items: &[FitItem], budget: usize, plan: &mut Plan, class: u8) -> bool {
    for level in [Detail::ShortDoc, Detail::CompressedSignature, Detail::Full] {
        for (i, item) in items.iter().enumerate() {
            if !plan.included[i] || item.class != class || plan.detail[i] <= level {
                continue;
            }
            let was = plan.detail[i];
            t.set_detail(plan, i, level);
            if t.total > budget {
                t.set_detail(plan, i, was);
            }
        }
    }
    items
        .iter()
        .enumerate()
        .all(|(i, it)| !plan.included[i] || it.class != class || plan.detail[i] == Detail::Full)
}

/// Include the given excluded items (in order, minimal) while they fit;
/// an item whose relationships do not fit comes back without them.
fn add_back_all(t: &mut Tally, budget: usize, plan: &mut Plan, order: &[usize]) {
    for &i in order {
        if t.total >= budget {
            break;
        }
        if add_back(t, budget, plan, i, Detail::Minimal) {
            continue;
        }
        let touching: Vec<usize> = t.rels_of[i]
            .iter()
            .copied()
            .filter(|&r| plan.rel_kept[r])
            .collect();
        if touching.is_empty() {
            continue;
        }
        for &r in &touching {
            t.set_rel_kept(plan, r, false);
        }
        if add_back(t, budget, plan, i, Detail::Minimal) {
            if !plan.steps.contains(&FitStep::LimitedRelationships) {
                plan.steps.push(FitStep::LimitedRelationships);
            }
        } else {
            for &r in &touching {
                t.set_rel_kept(plan, r, true);
            }
        }
    }
}

/// Relationships back into the plan, strongest first, while they fit.
fn restore_relationships(t: &mut Tally, rels: &[FitRel], budget: usize, plan: &mut Plan) {
    let mut order: Vec<usize> = (0..rels.len()).filter(|&r| !plan.rel_kept[r]).collect();
    order.sort_by(|&a, &b| {
        rels[b]
            .strength
            .total_cmp(&rels[a].strength)
            .then(a.cmp(&b))
    });
    for r in order {
        t.set_rel_kept(plan, r, true);
        if t.total > budget {
            t.set_rel_kept(plan, r, false);
        }
    }
}

/// Include item `i` at the most detailed level (not above `floor`) that fits.
fn add_back(t: &mut Tally, budget: usize, plan: &mut Plan, i: usize, floor: Detail) -> bool {
    for &d in DETAILS.iter().filter(|&&d| d >= floor) {
        t.set_detail(plan, i, d);
        t.set_included(plan, i, true);
        if t.total <= budget {
            return true;
        }
        t.set_included(plan, i, false);
    }
    false
}

/// Bring a plan's estimate down to `target` once its exact count came out
/// over the budget (the estimate was short), one step at a time: the
/// lowest-priority droppable entity whose going leaves every file the
/// document names still named (see [`Listing`]); else detail, the most
/// detailed form of the lowest priority first ([`refill`]'s order
/// reversed); else the lowest-priority droppable entity. At least one
/// step; false when not even one was there to take.
pub fn trim(
    items: &[FitItem],
    rels: &[FitRel],
    plan: &mut Plan,
    overhead: usize,
    target: usize,
    listing: &Listing,
) -> bool {
    let mut t = Tally::new(items, rels, plan, overhead);
    let mut named = Named::new(items, plan, listing);
    let mut droppable: Vec<usize> = (0..items.len())
        .filter(|&i| plan.included[i] && !items[i].protected)
        .collect();
    let mut took = false;
    while !took || t.total > target {
        if let Some(k) = (0..droppable.len())
            .rev()
            .find(|&k| named.release(droppable[k]))
        {
            t.set_included(plan, droppable.remove(k), false);
        } else if let Some(i) = (0..items.len())
            .filter(|&i| plan.included[i] && plan.detail[i] < Detail::Minimal)
            .max_by_key(|&i| (items[i].class, std::cmp::Reverse(plan.detail[i]), i))
        {
            let less = match plan.detail[i] {
                Detail::Full => Detail::CompressedSignature,
                Detail::CompressedSignature => Detail::ShortDoc,
                _ => Detail::Minimal,
            };
            t.set_detail(plan, i, less);
            took = true;
            continue;
        } else if let Some(v) = droppable.pop() {
            named.exclude(v);
            t.set_included(plan, v, false);
        } else {
            return took;
        }
        took = true;
        if !plan.steps.contains(&FitStep::DroppedLowRelevanceEntities) {
            plan.steps.push(FitStep::DroppedLowRelevanceEntities);
        }
    }
    true
}

/// After a [`trim`], whose whole entities may have freed more than was
/// needed: left-out entities come back minimal (best first, base
/// entities cut by the base share last) while the estimate stays within
/// `target`.
pub fn fill(items: &[FitItem], rels: &[FitRel], plan: &mut Plan, overhead: usize, target: usize) {
    let mut t = Tally::new(items, rels, plan, overhead);
    let base_last = plan.steps.contains(&FitStep::CappedBaseEntities);
    let (last, rest): (Vec<usize>, Vec<usize>) =
        plan.excluded().partition(|&i| base_last && items[i].base);
    for &i in rest.iter().chain(&last) {
        plan.detail[i] = Detail::Minimal;
    }
    add_back_all(&mut t, target, plan, &rest);
    add_back_all(&mut t, target, plan, &last);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(t: [usize; 4], tier: u8, protected: bool) -> FitItem {
        FitItem {
            tokens: t,
            tier,
            class: tier,
            base: protected,
            protected,
            file: 0,
        }
    }

    fn files() -> Listing {
        Listing::new(Names::Files, 20)
    }

    #[test]
    fn everything_fits_untouched() {
        let items = vec![item([10, 8, 6, 3], 1, true), item([10, 8, 6, 3], 3, false)];
        let plan = fit(&items, &[], 100, 5, None, &files()).unwrap();
        assert!(plan.steps.is_empty());
        assert_eq!(plan.included, vec![true, true]);
    }

    #[test]
    fn steps_follow_the_seed_order() {
        let items = vec![
            item([40, 30, 20, 5], 1, true),
            item([40, 30, 20, 5], 2, false),
            item([40, 30, 20, 5], 3, false),
        ];
        let plan = fit(&items, &[], 50, 0, None, &files()).unwrap();
        assert_eq!(
            &plan.steps[..3],
            &[
                FitStep::RemovedPriority3,
                FitStep::CompressedSignatures,
                FitStep::TruncatedDocumentation
            ]
        );
        assert!(estimate(&items, &[], &plan, 0) <= 50);
    }

    #[test]
    fn a_derived_base_larger_than_its_share_keeps_its_first_entity() {
        // Two search hits of 150 tokens each (at any detail) under a 25 %
        // share of 200: the first stays, the second goes.
        let hit = FitItem {
            tokens: [150, 150, 150, 150],
            tier: 1,
            class: 1,
            base: true,
            protected: false,
            file: 0,
        };
        let items = vec![hit.clone(), FitItem { file: 1, ..hit }];
        let plan = fit(&items, &[], 200, 0, Some(0.25), &files()).unwrap();
        assert_eq!(plan.included, vec![true, false]);
        assert!(plan.steps.contains(&FitStep::CappedBaseEntities));
        assert!(estimate(&items, &[], &plan, 0) <= 200);
    }

    #[test]
    fn protected_items_that_cannot_fit_are_an_error() {
        let items = vec![
            item([40, 30, 20, 15], 1, true),
            item([40, 30, 20, 15], 1, true),
        ];
        assert_eq!(fit(&items, &[], 20, 0, None, &files()), Err(30));
    }

    #[test]
    fn priority_one_gets_full_detail_before_priority_two_gets_more_than_minimal() {
        // Inclusion order puts a 2-hop entity (strong history) before a
        // direct dependency; detail still goes to the direct dependency.
        let items = vec![
            item([40, 30, 20, 5], 1, true),
            FitItem {
                tokens: [40, 30, 20, 5],
                tier: 2,
                class: 2,
                base: false,
                protected: false,
                file: 0,
            },
            FitItem {
                tokens: [40, 30, 20, 5],
                tier: 2,
                class: 1,
                base: false,
                protected: false,
                file: 0,
            },
        ];
        let plan = fit(&items, &[], 90, 0, None, &files()).unwrap();
        assert_eq!(plan.included, vec![true, true, true]);
        assert_eq!(
            plan.detail,
            vec![Detail::Full, Detail::Minimal, Detail::Full]
        );
        // With room for more, the 2-hop entity gets its detail too.
        let plan = fit(&items, &[], 120, 0, None, &files()).unwrap();
        assert_eq!(plan.detail, vec![Detail::Full; 3]);
    }

    #[test]
    fn priority_one_detail_goes_level_by_level_and_displaces_farther_entities() {
        // Two direct dependencies and a far entity: room for both near
        // lines at a compressed level rather than one in full and one
        // minimal, and the far entity goes to make that room.
        let items = vec![
            item([30, 20, 15, 5], 1, true),
            FitItem {
                tokens: [40, 20, 15, 5],
                tier: 1,
                class: 1,
                base: false,
                protected: false,
                file: 0,
            },
            FitItem {
                tokens: [40, 20, 15, 5],
                tier: 1,
                class: 1,
                base: false,
                protected: false,
                file: 0,
            },
            FitItem {
                tokens: [40, 30, 25, 20],
                tier: 2,
                class: 2,
                base: false,
                protected: false,
                file: 0,
            },
        ];
        let plan = fit(&items, &[], 60, 0, None, &files()).unwrap();
        assert_eq!(plan.included, vec![true, true, true, false]);
        assert_eq!(plan.detail[1], plan.detail[2]);
        assert!(plan.detail[1] < Detail::Minimal);
        assert!(estimate(&items, &[], &plan, 0) <= 60);
    }

    /// A base entity with a costly full form and four minimal far
    /// entities in files `far_files`; the budget fits all of them minimal,
    /// or the base in full with two far entities.
    fn base_and_far(far_files: [usize; 4]) -> Vec<FitItem> {
        let mut items = vec![FitItem {
            tokens: [30, 30, 30, 10],
            tier: 1,
            class: 1,
            base: true,
            protected: true,
            file: 0,
        }];
        for f in far_files {
            items.push(FitItem {
                tokens: [10, 10, 10, 10],
                tier: 2,
                class: 2,
                base: false,
                protected: false,
                file: f,
            });
        }
        items
    }

    #[test]
    fn detail_displaces_entities_whose_file_stays_named() {
        // Far entities 3 and 4 share a file with 1 and 2: they make room.
        let items = base_and_far([1, 2, 1, 2]);
        let plan = fit(&items, &[], 50, 0, None, &Listing::new(Names::Entities, 0)).unwrap();
        assert_eq!(plan.included, vec![true, true, true, false, false]);
        assert_eq!(plan.detail[0], Detail::Full);
    }

    #[test]
    fn detail_never_takes_a_file_out_of_the_document() {
        // Every far entity is its file's only one and nothing lists
        // left-out entities: the base stays minimal, all four stay.
        let items = base_and_far([1, 2, 3, 4]);
        let none = Listing::new(Names::Entities, 0);
        let plan = fit(&items, &[], 50, 0, None, &none).unwrap();
        assert_eq!(plan.included, vec![true; 5]);
        assert_eq!(plan.detail[0], Detail::Minimal);
        // A list of left-out files with room names the displaced ones'.
        let plan = fit(&items, &[], 50, 0, None, &Listing::new(Names::Files, 2)).unwrap();
        assert_eq!(plan.included, vec![true, true, true, false, false]);
        assert_eq!(plan.detail[0], Detail::Full);
        // With one place taken by a candidate never loaded, only one of
        // the two files the detail would displace could be listed.
        let mut full = Listing::new(Names::Files, 2);
        full.tail = vec![5];
        let plan = fit(&items, &[], 50, 0, None, &full).unwrap();
        assert_eq!(plan.included, vec![true; 5]);
        assert_eq!(plan.detail[0], Detail::Minimal);
        // A list of keys: the displaced entity's key takes the place of
        // the one it comes before, whose file is then named nowhere.
        let mut keys = Listing::new(Names::Entities, 1);
        keys.tail = vec![5];
        let plan = fit(&items, &[], 50, 0, None, &keys).unwrap();
        assert_eq!(plan.included, vec![true; 5]);
        assert_eq!(plan.detail[0], Detail::Minimal);
    }

    #[test]
    fn trimming_takes_entities_whose_file_stays_named_then_detail() {
        let mut items = base_and_far([1, 2, 1, 3]);
        items[0].tokens = [30, 20, 15, 10];
        items.pop();
        let full = Plan {
            included: vec![true; 4],
            detail: vec![
                Detail::Full,
                Detail::Minimal,
                Detail::Minimal,
                Detail::Minimal,
            ],
            rel_kept: vec![],
            steps: vec![],
        };
        let none = Listing::new(Names::Entities, 0);
        // Over by 10: the third far entity goes, its file is the first's.
        let mut plan = full.clone();
        assert!(trim(&items, &[], &mut plan, 0, 50, &none));
        assert_eq!(plan.included, vec![true, true, true, false]);
        assert_eq!(plan.detail[0], Detail::Full);
        // Over by 25: the other two are their files' only entities, so
        // the base's detail goes instead, a level at a time.
        let mut plan = full.clone();
        assert!(trim(&items, &[], &mut plan, 0, 35, &none));
        assert_eq!(plan.included, vec![true, true, true, false]);
        assert_eq!(plan.detail[0], Detail::ShortDoc);
        // Then entities, lowest first, whatever their files.
        let mut plan = full;
        assert!(trim(&items, &[], &mut plan, 0, 20, &none));
        assert_eq!(plan.included, vec![true, true, false, false]);
        assert_eq!(plan.detail[0], Detail::Minimal);
    }

    #[test]
    fn fill_brings_entities_back_minimal_into_the_room_a_trim_left() {
        let items = base_and_far([1, 2, 3, 4]);
        // The last far entity went whole, with its detail: its minimal
        // form fits again; nothing else is left out.
        let mut plan = Plan {
            included: vec![true, true, true, true, false],
            detail: vec![
                Detail::Full,
                Detail::Minimal,
                Detail::Minimal,
                Detail::Minimal,
                Detail::Full,
            ],
            rel_kept: vec![],
            steps: vec![FitStep::DroppedLowRelevanceEntities],
        };
        fill(&items, &[], &mut plan, 0, 70);
        assert_eq!(plan.included, vec![true; 5]);
        assert_eq!(plan.detail[4], Detail::Minimal);
        assert_eq!(estimate(&items, &[], &plan, 0), 70);
    }

    #[test]
    fn refill_uses_the_room_left() {
        let items = vec![
            item([50, 40, 30, 5], 1, true),
            item([50, 40, 30, 5], 3, false),
            item([50, 40, 30, 5], 3, false),
        ];
        let plan = fit(&items, &[], 70, 0, None, &files()).unwrap();
        // Priority 3 went first; both come back in the room left, minimal.
        assert_eq!(plan.included, vec![true, true, true]);
        assert_eq!(
            plan.detail,
            vec![Detail::Full, Detail::Minimal, Detail::Minimal]
        );
        assert_eq!(estimate(&items, &[], &plan, 0), 60);
    }
}
