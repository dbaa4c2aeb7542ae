//! Relevance scores in [0, 1] for the entities of a context.
//!
//! Two strategies:
//!
//! * `seed` — seed 004's formula: base 1.0, direct dependency 0.8, 2-hop
//!   0.6, test interface +0.2, critical path +0.3, capped at 1.0.
//! * `blended` (default) — what the co-change benchmark rewards: a graph
//!   signal (the strongest edge type through which the entity was reached,
//!   decayed by distance, plus a little for each further connection) blended
//!   with the repository's own history (how often the entity's file changed
//!   together with the base files) and the entity's fan-in. The weights are
//!   fixed constants, the same for every repository.

use serde::Serialize;

use crate::model::Rel;

/// An entity's fan-in at or above this makes it "critical path": many
/// other entities depend on it, so a change to it travels far.
pub const CRITICAL_FAN_IN: i64 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    #[default]
    Blended,
    Seed,
}

impl Strategy {
    pub fn parse(s: &str) -> Option<Strategy> {
        match s {
            "blended" | "default" => Some(Strategy::Blended),
            "seed" => Some(Strategy::Seed),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Blended => "blended",
            Strategy::Seed => "seed",
        }
    }
}

/// How strongly an edge type ties two entities together.
pub fn rel_weight(rel: &str) -> f64 {
    Rel::from_name(rel).map(Rel::weight).unwrap_or(0.4)
}

/// Everything a strategy looks at for one entity.
#[derive(Debug, Clone, Default)]
pub struct Signals {
    pub is_base: bool,
    /// Hop distance; `None` when the entity was not reached through the
    /// graph (related by history only).
    pub distance: Option<u32>,
    /// Relationship types of the edges through which it was reached.
    pub via_rels: Vec<String>,
    /// Number of distinct edges through which it was reached.
    pub via_count: usize,
    pub is_test: bool,
    pub fan_in: i64,
    /// Co-change weight of the entity's file with the base files,
    /// normalised to [0, 1] over the candidates.
    pub cochange: f64,
}

impl Signals {
    pub fn critical_path(&self) -> bool {
        self.fan_in >= CRITICAL_FAN_IN
    }
}

pub fn score(strategy: Strategy, s: &Signals) -> f64 {
    match strategy {
        Strategy::Seed => seed_score(s),
        Strategy::Blended => blended_score(s),
    }
}

fn seed_score(s: &Signals) -> f64 {
    let mut score = 0.0;
    if s.is_base {
        score += 1.0;
    }
    match s.distance {
        Some(1) => score += 0.8,
        Some(2) => score += 0.6,
        _ => {}
    }
    if s.is_test {
        score += 0.2;
    }
    if s.critical_path() {
        score += 0.3;
    }
    f64::min(score, 1.0)
}

fn blended_score(s: &Signals) -> f64 {
    if s.is_base {
        return 1.0;
    }
    let decay = match s.distance {
        Some(0) => 1.0,
        Some(1) => 0.8,
        Some(2) => 0.45,
        Some(3) => 0.25,
        _ => 0.0,
    };
    let strongest = s.via_rels.iter().map(|r| rel_weight(r)).fold(0.0, f64::max);
    let extra = (s.via_count.saturating_sub(1) as f64 * 0.04).min(0.15);
    let graph = (decay * strongest + if decay > 0.0 { extra } else { 0.0 }).min(1.0);
    let centrality = ((s.fan_in as f64).ln_1p() / 50f64.ln_1p()).min(1.0);
    let score = 0.5 * graph + 0.4 * s.cochange + 0.1 * centrality;
    score.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_formula_is_capped_at_one() {
        let base = Signals {
            is_base: true,
            distance: Some(0),
            ..Signals::default()
        };
        assert_eq!(score(Strategy::Seed, &base), 1.0);
        let direct = Signals {
            distance: Some(1),
            ..Signals::default()
        };
        assert!((score(Strategy::Seed, &direct) - 0.8).abs() < 1e-9);
        let two_hop_test = Signals {
            distance: Some(2),
            is_test: true,
            ..Signals::default()
        };
        assert!((score(Strategy::Seed, &two_hop_test) - 0.8).abs() < 1e-9);
        let critical_direct = Signals {
            distance: Some(1),
            fan_in: 9,
            ..Signals::default()
        };
        assert_eq!(score(Strategy::Seed, &critical_direct), 1.0);
    }

    #[test]
    fn blended_scores_stay_in_range_and_order_sensibly() {
        let near = Signals {
            distance: Some(1),
            via_rels: vec!["calls".into()],
            via_count: 1,
            ..Signals::default()
        };
        let far = Signals {
            distance: Some(2),
            via_rels: vec!["imports".into()],
            via_count: 1,
            ..Signals::default()
        };
        let history_only = Signals {
            distance: None,
            cochange: 1.0,
            ..Signals::default()
        };
        let (a, b, c) = (
            score(Strategy::Blended, &near),
            score(Strategy::Blended, &far),
            score(Strategy::Blended, &history_only),
        );
        assert!(a > b, "{a} {b}");
        assert!((0.0..=1.0).contains(&c) && c > b);
    }
}
