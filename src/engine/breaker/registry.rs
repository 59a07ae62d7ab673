//! [`Breakers`]: every dependency's breaker behind one lock, the engine's admission gate.
//!
//! It owns the per-dependency [`Machine`]s (created closed on first sight), a seeded RNG per
//! dependency (so one dependency's probe jitter never depends on another's traffic), and turns
//! the machines' [`Note`]s into `BreakerTransition` / `RetryAfterSkip` events, stamped with the
//! instant the change logically happened. The registry is also the metrics registry's
//! [`AtScrape`] source: every render first moves each breaker whose open time ran out to
//! half-open ([`Breakers::tick`]), so a scrape reads the state at scrape time. That changes no
//! decision: [`Machine::advance`] applies only what is due, stamped with the instant it was due,
//! so a breaker observed at any instants makes the same decisions, transitions and RNG draws as
//! one never observed. Received Retry-After values are wall-clock durations
//! from the upstream and are not divided by `speed` (a speed-scaled upstream already scales them).
//! With a fleet coordinator attached (`registry/fleet.rs`) the same registry follows and
//! changes the dependencies' shared state and shares the engine's profile cooldowns
//! (`registry/cooldowns.rs`); without one (the default) it decides alone.

use crate::util::sync::Locked;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::time::Instant;

use futures_util::FutureExt;
use futures_util::future::Either;

use crate::engine::admission::{Admission, Admit, Pending, settled};
use crate::engine::breaker::{BreakerConfig, Machine, Note, Phase, Signal};
use crate::engine::clock::Now;
use crate::engine::coordinator::{CooldownWrite, FleetCooldown};
use crate::engine::events::{BreakerState, Event, EventKind, EventSink};
use crate::engine::metrics::AtScrape;
use crate::engine::outcome::AttemptResult;
use crate::util::speed::Speed;

mod cooldowns;
mod fleet;
pub use fleet::HostClock;

/// One dependency's breaker with its RNG and counters.
#[derive(Debug)]
struct Dep {
    machine: Machine,
    rng: ChaCha8Rng,
    rejections: u64,
    /// What it follows of the fleet's shared state (unused alone).
    sync: fleet::DepSync,
}

/// Every dependency's breaker. Share it as `Arc<Breakers>`.
pub struct Breakers {
    cfg: BreakerConfig,
    seed: u64,
    start: Instant,
    sink: Arc<dyn EventSink>,
    deps: Mutex<BTreeMap<String, Dep>>,
    coord: Option<fleet::Coordination>,
}

impl std::fmt::Debug for Breakers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Breakers")
            .field("cfg", &self.cfg)
            .field("seed", &self.seed)
            .field("deps", &self.states())
            .finish()
    }
}

impl Breakers {
    /// Breakers with `cfg` (durations divided by `speed`), probe jitter seeded from `seed`,
    /// events to `sink`, event times relative to `start`.
    pub fn new(
        cfg: BreakerConfig,
        speed: Speed,
        seed: u64,
        sink: Arc<dyn EventSink>,
        start: Instant,
    ) -> Self {
        Self {
            cfg: cfg.scaled(speed),
            seed,
            start,
            sink,
            deps: Mutex::new(BTreeMap::new()),
            coord: None,
        }
    }

    /// The (speed-scaled) configuration in use.
    pub fn config(&self) -> &BreakerConfig {
        &self.cfg
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Dep>> {
        self.deps.locked()
    }

    fn with_dep<R>(
        &self,
        dep: &str,
        f: impl FnOnce(&BreakerConfig, &mut Dep, &mut Vec<Note>) -> R,
    ) -> R {
        let mut notes = Vec::new();
        let out = {
            let mut deps = self.lock();
            let d = match deps.get_mut(dep) {
                Some(d) => d,
                None => deps.entry(dep.to_string()).or_insert_with(|| Dep {
                    machine: Machine::new(&self.cfg),
                    rng: ChaCha8Rng::seed_from_u64(self.seed ^ fnv1a(dep)),
                    rejections: 0,
                    sync: Default::default(),
                }),
            };
            f(self.machine_cfg(), d, &mut notes)
        };
        self.emit(dep, &notes);
        out
    }

    fn emit(&self, dep: &str, notes: &[Note]) {
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
            self.sink.emit(&Event {
                t_ms: self.ms(at),
                kind,
                log,
            });
        }
    }

    fn ms(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.start).as_millis() as u64
    }

    /// Folds the result of an attempt admitted by [`Admission::admit`] into `dep`'s breaker.
    /// `now` is when the attempt ended, on both clocks (its wall time reads an HTTP-date
    /// Retry-After, against the same clock the failover classification used).
    pub fn observe(&self, dep: &str, worker: usize, probe: bool, result: &AttemptResult, now: Now) {
        let signal = Signal::of(result, now.wall);
        self.with_dep(dep, |cfg, d, notes| {
            d.machine.record(cfg, worker, probe, signal, now.at, notes)
        });
    }

    /// True when `dep`'s breaker is open at `now` (half-open is not open: it admits probes). A
    /// `now` older than a half-open that a scrape (or another worker) already applied still
    /// reads open, as it would have without that observation.
    pub fn open_at(&self, dep: &str, now: Instant) -> bool {
        if !self.lock().contains_key(dep) {
            return false;
        }
        self.with_dep(dep, |_, d, notes| {
            d.machine.advance(now, notes);
            match d.machine.phase() {
                Phase::Open { .. } => true,
                Phase::HalfOpen(h) => now < h.since,
                Phase::Closed => false,
            }
        })
    }

    /// Moves every breaker whose open time is up to half-open, so the state gauge follows the
    /// clock even when no call arrives. Every render of the metrics registry calls it (see
    /// [`AtScrape`]); [`Breakers::run_ticker`] calls it on a timer.
    pub fn tick(&self, now: Instant) {
        let names: Vec<String> = self.lock().keys().cloned().collect();
        for dep in names {
            self.with_dep(&dep, |_, d, notes| d.machine.advance(now, notes));
        }
    }

    /// Calls [`Breakers::tick`] every `every` until `shutdown` completes.
    pub async fn run_ticker(
        self: Arc<Self>,
        every: std::time::Duration,
        shutdown: impl std::future::Future<Output = ()>,
    ) {
        let mut interval = tokio::time::interval(every.max(std::time::Duration::from_millis(1)));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => return,
                t = interval.tick() => self.tick(t),
            }
        }
    }

    /// Every known dependency and its state (as of the last call or tick), sorted by name.
    pub fn states(&self) -> Vec<(String, BreakerState)> {
        self.lock()
            .iter()
            .map(|(k, d)| (k.clone(), d.machine.state()))
            .collect()
    }

    /// `dep`'s state (closed when unknown).
    pub fn state(&self, dep: &str) -> BreakerState {
        self.lock()
            .get(dep)
            .map_or(BreakerState::Closed, |d| d.machine.state())
    }

    /// Calls to `dep` rejected so far.
    pub fn rejections(&self, dep: &str) -> u64 {
        self.lock().get(dep).map_or(0, |d| d.rejections)
    }

    /// The open time `dep`'s next trip would use (doubles per re-open from half-open).
    pub fn next_open_for(&self, dep: &str) -> std::time::Duration {
        self.lock()
            .get(dep)
            .map_or(self.cfg.open_for, |d| d.machine.next_open_for(&self.cfg))
    }
}

impl AtScrape for Breakers {
    fn advance_to(&self, now: Instant) {
        self.tick(now);
    }
}

impl Admission for Breakers {
    /// May `worker` call `dep` at `now`? A rejection is counted here; the caller reports it as
    /// an `AttemptFinished { outcome: rejected }` event (it knows the class and profile).
    fn admit(&self, dep: &str, worker: usize, now: Instant) -> Admit {
        self.with_dep(dep, |cfg, d, notes| {
            let admit = d.machine.admit(cfg, worker, now, &mut d.rng, notes);
            if matches!(admit, Admit::Reject { .. }) {
                d.rejections += 1;
            }
            admit
        })
    }

    fn record(&self, dep: &str, worker: usize, probe: bool, result: &AttemptResult, now: Now) {
        self.observe(dep, worker, probe, result, now);
    }

    fn is_open(&self, dep: &str, now: Instant) -> bool {
        self.open_at(dep, now)
    }

    fn admit_async<'a>(&'a self, dep: &'a str, worker: usize, now: Instant) -> Pending<'a, Admit> {
        self.admit_coordinated(dep, worker, now)
    }

    fn record_async<'a>(
        &'a self,
        dep: &'a str,
        worker: usize,
        probe: bool,
        result: &'a AttemptResult,
        now: Now,
    ) -> Pending<'a, ()> {
        self.record_coordinated(dep, worker, probe, result, now)
    }

    fn publish_cooldown<'a>(
        &'a self,
        profile: &'a str,
        write: &'a CooldownWrite,
    ) -> Pending<'a, ()> {
        if self.coord.is_none() {
            return settled(());
        }
        Either::Right(
            async move {
                self.share_cooldown(profile, write).await;
            }
            .boxed(),
        )
    }

    fn follow_profiles(&self, profiles: &[String]) {
        if let Some(co) = &self.coord {
            co.cooldowns.follow(profiles);
        }
    }

    fn fleet_cooldown(&self, profile: &str, now: Instant) -> Option<FleetCooldown> {
        self.mirrored_cooldown(profile, now)
    }
}

/// The log line of a transition: `Breaker DEP: closed → open (consecutive_failures)`.
fn transition_line(
    dep: &str,
    from: BreakerState,
    to: BreakerState,
    reason: Option<crate::engine::breaker::TripReason>,
) -> String {
    let why = reason.map_or(String::new(), |r| format!(" ({})", r.as_str()));
    format!("Breaker {dep}: {} → {}{why}", from.as_str(), to.as_str())
}

/// FNV-1a of a dependency name, to derive its RNG seed.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests;
