//! Wall-clock time per phase of a run, and the terminal's progress line.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::store::{Batch, Store, StoreError};

/// Wall-clock time per pipeline phase, reported in the summary, and the
/// terminal's progress line: it names the phase running and keeps moving
/// during it (counting files while they are parsed).
pub(super) struct Phases {
    last: Instant,
    pub(super) done: BTreeMap<&'static str, f64>,
    /// Early landings already counted as writing ([`Phases::lap_landing`]).
    landing_seen: std::time::Duration,
    bar: indicatif::ProgressBar,
}

impl Phases {
    pub(super) fn new(progress: bool) -> Phases {
        let bar = if progress {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(Phases::style("{spinner} indexing: {msg} {elapsed}"));
            bar.set_message("walk");
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        } else {
            indicatif::ProgressBar::hidden()
        };
        Phases {
            last: Instant::now(),
            done: BTreeMap::new(),
            landing_seen: std::time::Duration::ZERO,
            bar,
        }
    }

    fn style(template: &str) -> indicatif::ProgressStyle {
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner())
    }

    /// Show `name` as the phase running.
    pub(super) fn show(&self, name: &'static str) {
        self.bar
            .set_style(Phases::style("{spinner} indexing: {msg} {elapsed}"));
        self.bar.set_message(name);
    }

    /// Show `name` as the phase running, counting `len` files: the bar
    /// returned moves with each `inc`.
    pub(super) fn counted(&self, name: &'static str, len: u64) -> indicatif::ProgressBar {
        self.bar.set_style(Phases::style(
            "{spinner} indexing: {msg} {pos}/{len} files {wide_bar}",
        ));
        self.bar.set_length(len);
        self.bar.set_position(0);
        self.bar.set_message(name);
        self.bar.clone()
    }

    pub(super) fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        *self.done.entry(name).or_insert(0.0) += (now - self.last).as_secs_f64() * 1000.0;
        self.last = now;
    }

    /// [`Phases::lap`], with the time `batch` spent landing rows since the
    /// last such lap moved from `name` to `write`.
    pub(super) fn lap_landing(&mut self, name: &'static str, batch: &Batch) {
        self.lap(name);
        let landing = batch.landed_early().time;
        let moved = landing.saturating_sub(self.landing_seen).as_secs_f64() * 1000.0;
        self.landing_seen = landing;
        if let Some(ms) = self.done.get_mut(name) {
            *ms -= moved;
        }
        *self.done.entry("write").or_insert(0.0) += moved;
    }
}

impl Drop for Phases {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// [`Store::land_early`], its time counted as writing, as is the time the
/// stage's writers spent landing full chunks ([`Store::land_when_full`]).
pub(super) fn land_early(
    store: &Store,
    batch: &mut Batch,
    phases: &mut Phases,
    running: &'static str,
) -> Result<(), StoreError> {
    phases.lap_landing(running, batch);
    store.land_early(batch)?;
    phases.lap_landing("write", batch);
    Ok(())
}
