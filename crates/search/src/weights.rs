//! The weights that combine a file's signals ([`crate::features`]) into its
//! score: fitted, not set by hand, on pairs of (commit message → the files
//! the commit changed) mined from the histories of many repositories, none
//! of them a repository the ranking is measured on. `scripts/search-fit/`
//! mines the pairs and fits the weights; its `fit.py` writes the block
//! between the `BEGIN fitted` and `END fitted` lines below.

use serde::Serialize;

use crate::features::{
    EntityFeatures, FileFeatures, Role, FILE_FEATURES, N_ENTITY_FEATURES, N_FILE_FEATURES,
};

/// How files are scored from their signals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Scoring {
    /// [`Weights::FITTED`] over the file's features.
    #[default]
    Fitted,
    /// Files scored by the earlier hand-set rules, for comparison: the
    /// file's entities and its source's words mixed half and half,
    /// co-change, location, prior (the candidates, including the files
    /// found by commit messages, and the list's file order are shared).
    Hand,
}

/// How many signals [`Weights::contributions`] names.
pub const CONTRIBUTIONS: usize = 3;

/// One signal's part of a file's score.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Contribution {
    /// The feature's name ([`FILE_FEATURES`]).
    pub signal: &'static str,
    /// Its part of the score, on a scale where the best file scores 1.
    pub part: f64,
}

/// A linear score over the file features times a factor for the file's
/// role.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// One weight per feature, in the order of
    /// [`crate::features::FILE_FEATURES`].
    pub file: [f64; N_FILE_FEATURES],
    /// The factor of test (and benchmark) code.
    pub test: f64,
    /// The factor of documentation and example code.
    pub docs_or_example: f64,
    /// One weight per entity feature, in the order of
    /// [`crate::features::ENTITY_FEATURES`]: which entities of a file come
    /// first.
    pub entity: [f64; N_ENTITY_FEATURES],
    /// In the list, each further entity of a file counts this much less
    /// than the one before it.
    pub same_file_decay: f64,
}

impl Weights {
    /// A file's score.
    pub fn score(&self, features: &FileFeatures, role: Role) -> f64 {
        let linear: f64 = features
            .values()
            .iter()
            .zip(self.file.iter())
            .map(|(x, w)| x * w)
            .sum();
        linear * self.role_factor(role)
    }

    /// An entity's score within its file.
    pub fn score_entity(&self, features: &EntityFeatures) -> f64 {
        features
            .values()
            .iter()
            .zip(self.entity.iter())
            .map(|(x, w)| x * w)
            .sum()
    }

    /// The strongest signals of a file's score (at most
    /// [`CONTRIBUTIONS`], each at least 0.01), each weight times feature
    /// times role factor, divided by `scale` (the best file's score).
    pub fn contributions(
        &self,
        features: &FileFeatures,
        role: Role,
        scale: f64,
    ) -> Vec<Contribution> {
        let factor = self.role_factor(role) / scale;
        let mut parts: Vec<Contribution> = FILE_FEATURES
            .iter()
            .zip(features.values().iter().zip(self.file.iter()))
            .map(|(name, (x, w))| Contribution {
                signal: name,
                part: (x * w * factor * 100.0).round() / 100.0,
            })
            .filter(|c| c.part >= 0.01)
            .collect();
        parts.sort_by(|a, b| {
            b.part
                .total_cmp(&a.part)
                .then_with(|| a.signal.cmp(b.signal))
        });
        parts.truncate(CONTRIBUTIONS);
        parts
    }

    /// The factor of a role.
    pub fn role_factor(&self, role: Role) -> f64 {
        match role {
            Role::Code => 1.0,
            Role::Test => self.test,
            // Not fitted: no language of the fitting histories has them.
            Role::DocsOrExample | Role::Declarations => self.docs_or_example,
        }
    }
}

// BEGIN fitted
impl Weights {
    /// Fitted by `scripts/search-fit/fit.py` on commit messages of
    /// 16 repositories (2244 queries) and
    /// 1122 doc sentences (in the entity order, a 0.6 share);
    /// held out one repository at a time, recall@5 / acc@5 / top-1:
    /// hand rules 0.756 / 0.677 / 0.543, fitted 0.783 / 0.704 / 0.583;
    /// functions changed (Acc@5 / Acc@10 / Recall@10 of the entities):
    /// word and graph order 0.160 / 0.217 / 0.329, fitted 0.283 / 0.371 / 0.496;
    /// a doc sentence's own entity in the first 10: word and graph order
    /// 0.941, fitted 0.941.
    /// Repositories: Textualize+rich, aio-libs+aiohttp, alacritty+alacritty, crossbeam-rs+crossbeam, encode+httpx, hyperium+hyper, pallets+click, pallets+jinja, pmndrs+zustand, psf+black, rust-lang+regex, rustls+rustls, sindresorhus+ky, starship+starship, tokio-rs+axum, tokio-rs+mio.
    pub const FITTED: Weights = Weights {
        file: [
            0.3001, 0.3656, 0.2818, 0.6083, 0.2505, 0.5729, 0.2312, 0.0194, 0.8812, 0.4541, 0.2594,
            1.0000,
        ],
        test: 0.10,
        docs_or_example: 0.70,
        entity: [
            0.9384, 0.4110, 0.4540, 0.0000, 1.1932, 0.5169, -2.0362, 0.1793, -1.2555, 0.6298,
            0.7027, 0.6127, 1.8798, 1.7259,
        ],
        same_file_decay: 0.90,
    };
}
// END fitted
