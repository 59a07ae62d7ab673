//! [`Core`]: the state every part of the registry shares — the configuration, the event sink and
//! every dependency's breaker — with the one way to change a breaker ([`Core::with_dep`]) and
//! the one way to report what changed ([`Core::emit`], [`Core::event`]). The coordination files
//! (`link.rs`, `fleet.rs`, `cooldowns.rs`) use this API and nothing else of the registry.
//!
//! Each dependency's breaker sits behind a lock of its own in a [`Breaker`] (`dep.rs`), found
//! through the lock-free [`Table`]; beside the lock a flag says whether its phase is closed, so
//! a closed breaker admits with one atomic load and no lock ([`Core::is_closed`]). The flag is
//! published when the lock is released after every change, so it is always the phase as of the
//! last change: an admit that reads "closed" while another worker is tripping the breaker is
//! the admit that came before the trip, as it would have been had it taken the lock first.
//! Every way to the lock here goes through [`Breaker::lock`], which first replays the successes
//! recorded without it.

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

pub(crate) use super::dep::{Breaker, Dep, DepSync};
use super::table::Table;
use crate::engine::breaker::trip::QuietSuccess;
use crate::engine::breaker::{BreakerConfig, Machine, Note, TripReason};
use crate::engine::events::{BreakerState, Event, EventKind, EventSink};

/// The configuration, the sink and every dependency's breaker.
pub(crate) struct Core {
    pub(crate) cfg: BreakerConfig,
    pub(crate) seed: u64,
    start: Instant,
    sink: Arc<dyn EventSink>,
    deps: Table<Breaker>,
}

impl Core {
    /// A registry with no dependency yet; `cfg` is already speed-scaled.
    pub(crate) fn new(
        cfg: BreakerConfig,
        seed: u64,
        sink: Arc<dyn EventSink>,
        start: Instant,
    ) -> Self {
        Self {
            cfg,
            seed,
            start,
            sink,
            deps: Table::default(),
        }
    }

    /// `dep`'s breaker, created closed on first sight: one lookup, for a caller that reads the
    /// closed flag and only then takes the lock ([`Core::with_breaker`]).
    #[inline]
    pub(crate) fn breaker(&self, dep: &str) -> &Breaker {
        self.deps.get_or_insert(dep, || {
            Breaker::new(Dep {
                machine: Machine::new(&self.cfg),
                rng: ChaCha8Rng::seed_from_u64(self.seed ^ fnv1a(dep)),
                rejections: 0,
                sync: DepSync::default(),
                quiet: QuietSuccess::new(&self.cfg),
            })
        })
    }

    /// True when `dep` is known and its breaker closed (no lock taken).
    pub(crate) fn is_closed(&self, dep: &str) -> bool {
        self.deps.get(dep).is_some_and(Breaker::is_closed)
    }

    /// True when `dep` was ever seen.
    pub(crate) fn knows(&self, dep: &str) -> bool {
        self.deps.get(dep).is_some()
    }

    /// Runs `f` on `dep`'s breaker (created closed on first sight) with the machines'
    /// configuration `cfg`, under its lock; then emits the notes `f` left.
    pub(crate) fn with_dep<R>(
        &self,
        cfg: &BreakerConfig,
        dep: &str,
        f: impl FnOnce(&BreakerConfig, &mut Dep, &mut Vec<Note>) -> R,
    ) -> R {
        self.with_breaker(cfg, dep, self.breaker(dep), f)
    }

    /// [`Core::with_dep`] on `breaker`, `dep`'s breaker already found.
    pub(crate) fn with_breaker<R>(
        &self,
        cfg: &BreakerConfig,
        dep: &str,
        breaker: &Breaker,
        f: impl FnOnce(&BreakerConfig, &mut Dep, &mut Vec<Note>) -> R,
    ) -> R {
        let mut notes = Vec::new();
        // The guard's release publishes the flags.
        let out = {
            let mut d = breaker.lock(cfg, &mut notes);
            f(cfg, &mut d, &mut notes)
        };
        if !notes.is_empty() {
            self.emit(dep, &notes);
        }
        out
    }

    /// Reads `dep`'s breaker, if known, under its lock (after the logged successes, whose
    /// notes it emits).
    pub(crate) fn peek<R>(&self, dep: &str, f: impl FnOnce(&Dep) -> R) -> Option<R> {
        let breaker = self.deps.get(dep)?;
        Some(self.with_breaker(&self.cfg, dep, breaker, |_, d, _| f(d)))
    }

    /// Every known dependency's name, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.deps.iter().map(|(k, _)| k.to_string()).collect();
        names.sort_unstable();
        names
    }

    /// Every known dependency with `f` of its breaker, sorted by name.
    pub(crate) fn each<R>(&self, f: impl Fn(&Dep) -> R) -> Vec<(String, R)> {
        let mut all: Vec<(String, R)> = self
            .deps
            .iter()
            .map(|(k, b)| {
                (
                    k.to_string(),
                    self.with_breaker(&self.cfg, k, b, |_, d, _| f(d)),
                )
            })
            .collect();
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Emits `dep`'s notes as `BreakerTransition` / `RetryAfterSkip` events.
    pub(crate) fn emit(&self, dep: &str, notes: &[Note]) {
        for note in notes {
            let (at, kind, log) = match *note {
                Note::Transition {
                    at,
                    from,
                    to,
                    open_for,
                    reason,
                } => (
                    at,
                    EventKind::BreakerTransition {
                        dep: dep.to_string(),
                        from,
                        to,
                        open_for_ms: open_for.map(|d| d.as_millis() as u64),
                        reason,
                    },
                    Some(transition_line(dep, from, to, reason)),
                ),
                Note::RetryAfterSkip { at, until } => (
                    at,
                    EventKind::RetryAfterSkip {
                        dep: dep.to_string(),
                        until_ms: self.ms(until),
                    },
                    None,
                ),
            };
            self.event(at, kind, log);
        }
    }

    /// Emits one event at `at` (stamped relative to the registry's start).
    pub(crate) fn event(&self, at: Instant, kind: EventKind, log: Option<String>) {
        self.sink.emit(&Event {
            t_ms: self.ms(at),
            kind,
            log,
        });
    }

    fn ms(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_millis() as u64
    }
}

/// The log line of a transition: `Breaker DEP: closed → open (consecutive_failures)`.
fn transition_line(
    dep: &str,
    from: BreakerState,
    to: BreakerState,
    reason: Option<TripReason>,
) -> String {
    let why = reason.map_or(String::new(), |r| format!(" ({})", r.as_str()));
    format!("Breaker {dep}: {} → {}{why}", from.as_str(), to.as_str())
}

/// FNV-1a of a dependency name, to derive its RNG seed.
pub(crate) fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
