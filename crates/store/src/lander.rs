//! Landing a database being built on a thread of its own.
//!
//! A first index lands its rows a chunk at a time as its stages stage them
//! ([`super::Store::land_early`]). Landing is SQLite inserting into one
//! B-tree on one thread; making the next chunk (entity rows, word lists,
//! links, usage) is work for the other core. Done one after the other, a
//! large tree's cold run spent about 40 % of its time with one core idle.
//! The lander takes each chunk as it is handed over and lands it while the
//! stage goes on making the next.
//!
//! Invariants:
//!
//! - Chunks land in the order they were handed over, each in its own
//!   transaction, exactly as they would on the caller's thread: the file
//!   built is the same.
//! - At most one chunk waits while one lands (a hand-over blocks until the
//!   lander has taken the last one), so the rows held are bounded by two
//!   chunks, however large the run.
//! - Nothing reads or writes the database while a chunk is in flight: every
//!   other use of a building store first waits until all handed-over chunks
//!   have landed ([`Lander::settle`]), and gets the first failure of any of
//!   them. A failed landing fails the run: the building file is discarded
//!   by the next one, as when the run is killed.
//! - No landing outlives the store: dropping the lander waits for the
//!   chunk in flight.

use std::collections::BTreeMap;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cozo::NamedRows;

use super::{Result, StoreError};

/// A chunk of rows to land: rows by relation name (`-name` deletes), each
/// relation's in key order.
pub(super) type Chunk = BTreeMap<String, NamedRows>;

/// The thread landing the chunks handed to it, while it runs.
struct Running<C> {
    chunks: SyncSender<C>,
    thread: JoinHandle<Result<()>>,
}

/// How a chunk lands: one transaction of the database being built.
type Land<C> = Arc<dyn Fn(C) -> Result<()> + Send + Sync>;

/// Lands the chunks of a database being built on a thread of its own (see
/// the module docs). Shared by the clones of a building store.
pub(super) struct Lander<C> {
    land: Land<C>,
    running: Mutex<Option<Running<C>>>,
}

impl<C: Send + 'static> Lander<C> {
    /// A lander that lands each chunk with `land`.
    pub(super) fn new(land: impl Fn(C) -> Result<()> + Send + Sync + 'static) -> Lander<C> {
        Lander {
            land: Arc::new(land),
            running: Mutex::new(None),
        }
    }

    /// Hand `chunk` over to be landed on the lander's thread (started on
    /// the first chunk after a settle). Returns how long the caller waited
    /// for the lander to take it: the time the run was held up by writing.
    pub(super) fn hand_over(&self, chunk: C) -> Result<Duration> {
        let started = Instant::now();
        let mut running = self.lock();
        if running.is_none() {
            // Rendezvous: a hand-over waits until the lander is free to
            // take the chunk, so one chunk lands while the next is made.
            let (chunks, landing) = sync_channel::<C>(0);
            let land = Arc::clone(&self.land);
            let spawned = std::thread::Builder::new()
                .name("graphctx-lander".into())
                .spawn(move || landing.into_iter().try_for_each(|c| land(c)));
            match spawned {
                Ok(thread) => *running = Some(Running { chunks, thread }),
                // No thread to be had: the chunk lands here.
                Err(_) => {
                    drop(running);
                    (self.land)(chunk)?;
                    return Ok(started.elapsed());
                }
            }
        }
        let lander = running.as_ref().expect("started above");
        if lander.chunks.send(chunk).is_ok() {
            return Ok(started.elapsed());
        }
        // The lander stopped taking chunks: one failed to land, and its
        // error is the run's.
        let stopped = running.take().expect("checked above");
        drop(running);
        join(stopped)?;
        Err(StoreError::Query(
            "the database being built stopped taking rows".into(),
        ))
    }

    /// Wait until every chunk handed over has landed; the first failure of
    /// any of them, if one failed.
    pub(super) fn settle(&self) -> Result<()> {
        let running = self.lock().take();
        match running {
            Some(running) => join(running),
            None => Ok(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Running<C>>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<C> Drop for Lander<C> {
    /// Wait for the chunk in flight: a store dropped after a failed run
    /// leaves no thread writing behind it (its failure was the run's).
    fn drop(&mut self) {
        let running = self
            .running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(running) = running {
            let _ = join(running);
        }
    }
}

/// Close the lander's queue and wait for it to land what it took.
fn join<C>(running: Running<C>) -> Result<()> {
    let Running { chunks, thread } = running;
    drop(chunks);
    match thread.join() {
        Ok(landed) => landed,
        Err(_) => Err(StoreError::Query(
            "landing rows of the database being built panicked".into(),
        )),
    }
}
