//! One dependency's breaker in the registry: [`Dep`], the machine with its RNG and counters,
//! behind a lock of its own, and [`Breaker`], that lock (`cell.rs`) with the successes recorded
//! without it (`successes.rs`).
//!
//! # A closed breaker's success
//!
//! Almost every record is a success of a closed breaker, and most of those cannot change its
//! state ([`QuietSuccess`]: the breaker is closed and its window holds few enough failures).
//! Such a success is pushed onto its thread's log of the dependency with no lock and no atomic
//! read-modify-write; whoever takes the lock next — any other record, a non-closed admit, a
//! read of the state, a scrape's tick, or this thread once its log is full — first replays the
//! logs into the machine ([`Breaker::lock`]): while the breaker is still quiet, as a batch
//! ([`Machine::record_quiet_successes`](crate::engine::breaker::Machine::record_quiet_successes):
//! what recording them one by one does, without the trip check that cannot fire), otherwise
//! one by one through [`Machine::record`](crate::engine::breaker::Machine::record). So every
//! decision and every reading is made on a machine that has seen every success logged before
//! it; the order of two threads' records that ran at the same time is the order the drain
//! replays them in, as it was the order they took the lock in before. A success whose flag was
//! read just before another thread changed the breaker is replayed with everything a record
//! does (a trip included): it is a record that came after that change.

use std::time::Duration;

use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

use super::cell::{Cell, CellGuard, Flags};
use super::successes::Successes;
use crate::engine::breaker::trip::QuietSuccess;
use crate::engine::breaker::{BreakerConfig, Machine, Note, Phase, Signal};

/// One dependency's breaker with its RNG and counters.
#[derive(Debug)]
pub(crate) struct Dep {
    pub(crate) machine: Machine,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) rejections: u64,
    /// What it follows of the fleet's shared state (unused alone).
    pub(crate) sync: DepSync,
    /// When a success cannot change the machine's state (from the registry's configuration:
    /// the fleet's deferred closing changes no trip rule).
    pub(crate) quiet: QuietSuccess,
}

/// What one dependency follows of the fleet's shared record.
#[derive(Debug, Default, Clone)]
pub(crate) struct DepSync {
    /// The epoch of the record last adopted.
    pub(crate) epoch: u64,
    /// The coordinator generation (rejoins) it was adopted in.
    pub(crate) generation: u64,
    /// When the latest adopted answer was asked for (older answers are ignored).
    pub(crate) issued: Option<Instant>,
}

impl Flags for Dep {
    #[inline]
    fn is_closed(&self) -> bool {
        matches!(self.machine.phase(), Phase::Closed)
    }

    #[inline]
    fn success_is_quiet(&self) -> bool {
        self.machine.success_is_quiet(self.quiet)
    }
}

/// One dependency's breaker: its [`Dep`] behind a lock with its flags, and the successes
/// recorded without the lock. `repr(C)`: the flags, which a closed admit reads first, first.
#[repr(C)]
pub(crate) struct Breaker {
    cell: Cell<Dep>,
    successes: Successes,
}

impl Breaker {
    /// A closed breaker.
    pub(crate) fn new(dep: Dep) -> Self {
        Self {
            cell: Cell::new(dep),
            successes: Successes::default(),
        }
    }

    /// True when its phase is closed, as of the last change (no lock taken).
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.cell.is_closed()
    }

    /// Records a success ended at `at` without the lock, when it cannot change the breaker's
    /// state; false when it was not recorded (the breaker is not quiet, this thread has no log
    /// slot or a full log): the caller records it under the lock.
    #[inline]
    pub(crate) fn record_quiet_success(&self, at: Instant, latency: Duration) -> bool {
        self.cell.success_is_quiet() && self.successes.push(at, latency)
    }

    /// Pushes a success onto this thread's log, for a caller that holds the lock and saw the
    /// breaker quiet; false without a log slot or room.
    pub(crate) fn log_success(&self, at: Instant, latency: Duration) -> bool {
        self.successes.push(at, latency)
    }

    /// Takes the lock and replays the logged successes into the machine (with `cfg`, noting in
    /// `notes` what they changed): the guard of a [`Dep`] that has seen every record so far.
    #[inline]
    pub(crate) fn lock(&self, cfg: &BreakerConfig, notes: &mut Vec<Note>) -> CellGuard<'_, Dep> {
        let mut d = self.cell.lock();
        // Quiet now, quiet after any number of successes: the check is made once.
        let quiet = d.success_is_quiet();
        self.successes.drain(|batch| {
            if quiet {
                d.machine.record_quiet_successes(&batch.at, &batch.latency);
                return;
            }
            // Successes logged just before another thread changed the breaker: records like
            // any other. `probe: false`: the worker is not read (a closed or open breaker
            // ignores it, a half-open one ignores a record not its probe's).
            for (at, latency) in batch.iter() {
                let signal = Signal::Success { latency };
                d.machine.record(cfg, 0, false, signal, at, notes);
            }
        });
        d
    }
}
