//! [`Breakers`]: every dependency's breaker, the engine's admission gate.
//!
//! It owns the per-dependency [`Machine`](crate::engine::breaker::Machine)s (created closed on first sight), a seeded RNG per
//! dependency (so one dependency's probe jitter never depends on another's traffic), and turns
//! the machines' [`Note`](crate::engine::breaker::Note)s into `BreakerTransition` /
//! `RetryAfterSkip` events, stamped with the instant the change logically happened. The
//! registry is also the metrics registry's [`AtScrape`] source: every render first moves each
//! breaker whose open time ran out to half-open ([`Breakers::tick`]), so a scrape reads the
//! state at scrape time. That changes no decision: [`Machine::advance`](crate::engine::breaker::Machine::advance) applies only what is
//! due, stamped with the instant it was due, so a breaker observed at any instants makes the
//! same decisions, transitions and RNG draws as one never observed. Received Retry-After values
//! are wall-clock durations from the upstream and are not divided by `speed` (a speed-scaled
//! upstream already scales them). With a fleet coordinator attached the same registry follows
//! and changes the dependencies' shared state and shares the engine's profile cooldowns;
//! without one (the default) it decides alone.
//!
//! # The closed path
//!
//! Almost every call meets a closed breaker, and almost every record is its success. Each
//! dependency's breaker is found by name in a table read without a lock (the entry a thread
//! found last is compared first: an admit and its record ask for the same name), and has a
//! lock of its own with two flags beside it: "closed" and "a success cannot trip it"
//! (`registry/cell.rs`). A closed breaker admits with one atomic load (no lock, no RNG, no
//! event). A success of a quiet breaker goes onto the recording thread's log of that
//! dependency with no lock and no atomic read-modify-write (`registry/successes.rs`); whoever
//! takes the lock next replays the logs into the machine first, as a batch
//! (`registry/dep.rs`), so every decision and every reading is made on a machine that has
//! seen every record before it. Every other record, and every decision of a breaker that is
//! not closed, goes through the machine under the lock as before. With a fleet coordinator
//! attached, records take the lock (they may have to reach the fleet). Figures:
//! docs/bench/capacity.md (c).
//!
//! # Layout
//!
//! Files depend one way, each on the ones below it:
//!
//! - this file: [`Breakers`], its public API and the [`Admission`] it implements;
//! - `registry/fleet.rs`: `Coordination`, the breaker records shared with a fleet coordinator
//!   (leases, changes, the follower), holding the cooldown mirror;
//! - `registry/cooldowns.rs`: the fleet's profile cooldowns (the mirror, sharing, following);
//! - `registry/link.rs`: the line to the coordinator (`up`, rejoins, fallback) and [`HostClock`];
//! - `registry/state.rs`: the state all of them share (configuration, event sink, the
//!   breakers) and the one way to change a breaker;
//! - `registry/dep.rs`: one dependency's breaker (its machine behind the lock, its success
//!   logs) and the replay of the logs under the lock;
//! - `registry/cell.rs`: one breaker's lock and flags, in one atomic byte;
//! - `registry/successes.rs`: the per-thread logs of successes recorded without the lock;
//! - `registry/thread_slot.rs`: the small per-thread index the logs are kept by;
//! - `registry/table.rs`: the lock-free-read map from a dependency name to its breaker.

use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::Either;
use tokio::time::Instant;

use crate::engine::admission::{Admission, Admit, Pending, settled};
use crate::engine::breaker::{BreakerConfig, Note, Phase, Signal};
use crate::engine::clock::Now;
use crate::engine::coordinator::{
    CooldownWrite, Coordinator, FleetCooldown, HostId, SharedCooldown,
};
use crate::engine::events::{BreakerState, EventSink};
use crate::engine::metrics::AtScrape;
use crate::engine::outcome::AttemptResult;
use crate::util::speed::Speed;

mod cell;
mod cooldowns;
mod dep;
mod fleet;
mod link;
mod state;
mod successes;
mod table;
mod thread_slot;

use fleet::Coordination;
pub use link::HostClock;
use link::Link;
use state::{Breaker, Core, Dep};

/// What a closed breaker answers.
const ALLOW: Admit = Admit::Allow {
    probe: false,
    timeout: None,
};

/// Every dependency's breaker. Share it as `Arc<Breakers>`.
pub struct Breakers {
    core: Core,
    coord: Option<Coordination>,
}

impl std::fmt::Debug for Breakers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Breakers")
            .field("cfg", &self.core.cfg)
            .field("seed", &self.core.seed)
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
            core: Core::new(cfg.scaled(speed), seed, sink, start),
            coord: None,
        }
    }

    /// Attaches `coordinator` as host `host` (with `clock`): from now on this registry follows
    /// and changes the fleet's shared breakers. Close needs `probeSuccesses` consecutive probe
    /// successes from `probeDistinctWorkers` distinct *hosts*. Emits the initial
    /// `CoordinatorMode`. Spawn [`Breakers::run_follower`] next to it.
    pub fn with_coordinator(
        mut self,
        coordinator: Arc<dyn Coordinator>,
        host: HostId,
        clock: HostClock,
    ) -> Self {
        let link = Link::new(&self.core, coordinator, host, clock);
        self.coord = Some(Coordination::new(&self.core.cfg, link));
        self
    }

    /// The (speed-scaled) configuration in use.
    pub fn config(&self) -> &BreakerConfig {
        &self.core.cfg
    }

    /// The machines' configuration now: deferred closing while a coordinator answers.
    fn machine_cfg(&self) -> &BreakerConfig {
        match &self.coord {
            Some(co) => co.machine_cfg(&self.core.cfg),
            None => &self.core.cfg,
        }
    }

    fn with_dep<R>(
        &self,
        dep: &str,
        f: impl FnOnce(&BreakerConfig, &mut Dep, &mut Vec<Note>) -> R,
    ) -> R {
        self.core.with_dep(self.machine_cfg(), dep, f)
    }

    /// Folds the result of an attempt admitted by [`Admission::admit`] into `dep`'s breaker.
    /// `now` is when the attempt ended, on both clocks (its wall time reads an HTTP-date
    /// Retry-After, against the same clock the failover classification used).
    #[inline]
    pub fn observe(&self, dep: &str, worker: usize, probe: bool, result: &AttemptResult, now: Now) {
        let signal = Signal::of(result, now.wall);
        let breaker = self.core.breaker(dep);
        // A success that cannot change a closed breaker's state, without its lock (not with a
        // coordinator: its records may have to reach the fleet).
        let loggable = !probe && self.coord.is_none();
        if let Signal::Success { latency } = signal
            && loggable
            && breaker.record_quiet_success(now.at, latency)
        {
            return;
        }
        self.observe_locked(dep, breaker, worker, probe, signal, now.at, loggable);
    }

    /// [`Breakers::observe`] under `dep`'s lock (out of line: the logged success above stays a
    /// short function).
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn observe_locked(
        &self,
        dep: &str,
        breaker: &Breaker,
        worker: usize,
        probe: bool,
        signal: Signal,
        at: Instant,
        loggable: bool,
    ) {
        self.core
            .with_breaker(self.machine_cfg(), dep, breaker, |cfg, d, notes| {
                // This thread's log was full: the lock emptied it, and a success still quiet
                // goes back onto it (the log's batches stay whole).
                if let Signal::Success { latency } = signal
                    && loggable
                    && d.machine.success_is_quiet(d.quiet)
                    && breaker.log_success(at, latency)
                {
                    return;
                }
                d.machine.record(cfg, worker, probe, signal, at, notes)
            });
    }

    /// True when `dep`'s breaker is open at `now` (half-open is not open: it admits probes). A
    /// `now` older than a half-open that a scrape (or another worker) already applied still
    /// reads open, as it would have without that observation.
    pub fn open_at(&self, dep: &str, now: Instant) -> bool {
        if !self.core.knows(dep) || self.core.is_closed(dep) {
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
    /// [`AtScrape`]).
    pub fn tick(&self, now: Instant) {
        for dep in self.core.names() {
            self.with_dep(&dep, |_, d, notes| d.machine.advance(now, notes));
        }
    }

    /// Every known dependency and its state (as of the last call or tick), sorted by name.
    pub fn states(&self) -> Vec<(String, BreakerState)> {
        self.core.each(|d| d.machine.state())
    }

    /// `dep`'s state (closed when unknown).
    pub fn state(&self, dep: &str) -> BreakerState {
        self.core
            .peek(dep, |d| d.machine.state())
            .unwrap_or(BreakerState::Closed)
    }

    /// Calls to `dep` rejected so far.
    pub fn rejections(&self, dep: &str) -> u64 {
        self.core.peek(dep, |d| d.rejections).unwrap_or(0)
    }

    /// The open time `dep`'s next trip would use (doubles per re-open from half-open).
    pub fn next_open_for(&self, dep: &str) -> Duration {
        let cfg = &self.core.cfg;
        self.core
            .peek(dep, |d| d.machine.next_open_for(cfg))
            .unwrap_or(cfg.open_for)
    }

    /// The host id, when coordinated.
    pub fn host(&self) -> Option<&HostId> {
        self.coord.as_ref().map(|co| &co.link.host)
    }

    /// `None` alone; the coordinator's mode (`redis`, `in_process`) or `local` (fallen back).
    pub fn coordinator_mode(&self) -> Option<&'static str> {
        self.coord.as_ref().map(|co| co.link.mode())
    }

    /// The epoch `dep` follows (0 when alone or never changed).
    pub fn epoch(&self, dep: &str) -> u64 {
        self.core.peek(dep, |d| d.sync.epoch).unwrap_or(0)
    }

    /// One round of following: reads every known dependency's record and adopts what changed;
    /// on the first answer after an outage, rejoins (adopts all, seeds what the coordinator lost).
    /// Then, while the coordinator answers, reads the followed profiles' shared cooldowns.
    pub async fn follow(&self) {
        if let Some(co) = &self.coord {
            co.follow(&self.core).await;
        }
    }

    /// Calls [`Breakers::follow`] every `every` until `shutdown` completes (a no-op loop when
    /// no coordinator is attached).
    pub async fn run_follower(
        self: Arc<Self>,
        every: Duration,
        shutdown: impl std::future::Future<Output = ()>,
    ) {
        let mut interval = tokio::time::interval(every.max(Duration::from_millis(1)));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                _ = &mut shutdown => return,
                _ = interval.tick() => self.follow().await,
            }
        }
    }

    /// Shares a cooldown of `profile` through the coordinator and mirrors it; the cooldown left
    /// (a longer running one is kept), or `None` alone, fallen back, or on an error (counted;
    /// the engine's own cooldown still applies).
    pub async fn share_cooldown(&self, profile: &str, write: &CooldownWrite) -> Option<Duration> {
        let co = self.coord.as_ref()?;
        cooldowns::share(&self.core, &co.link, &co.cooldowns, profile, write).await
    }

    /// `profile`'s shared cooldown read straight from the coordinator, and the instant it ends
    /// on this host's clock, if running (the follower's mirror is what failover reads).
    pub async fn shared_cooldown(&self, profile: &str) -> Option<(SharedCooldown, Instant)> {
        let co = self.coord.as_ref()?;
        cooldowns::read(&self.core, &co.link, profile).await
    }

    /// The mirrored fleet cooldown of `profile` at `now` (no round trip); `None` alone.
    pub fn mirrored_cooldown(&self, profile: &str, now: Instant) -> Option<FleetCooldown> {
        self.coord.as_ref()?.cooldowns.get(profile, now)
    }
}

impl Breakers {
    /// [`Admission::admit`] of a breaker that is not closed, under its lock (out of line: the
    /// closed admit stays a short function).
    #[inline(never)]
    fn admit_locked(&self, dep: &str, breaker: &Breaker, worker: usize, now: Instant) -> Admit {
        self.core
            .with_breaker(self.machine_cfg(), dep, breaker, |cfg, d, notes| {
                let admit = d.machine.admit(cfg, worker, now, &mut d.rng, notes);
                if matches!(admit, Admit::Reject { .. }) {
                    d.rejections += 1;
                }
                admit
            })
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
        // One lookup: the closed flag, and the lock only when it is not closed.
        let breaker = self.core.breaker(dep);
        if breaker.is_closed() {
            return ALLOW; // what the machine answers when closed, and it changes nothing
        }
        self.admit_locked(dep, breaker, worker, now)
    }

    fn record(&self, dep: &str, worker: usize, probe: bool, result: &AttemptResult, now: Now) {
        self.observe(dep, worker, probe, result, now);
    }

    fn is_open(&self, dep: &str, now: Instant) -> bool {
        self.open_at(dep, now)
    }

    fn admit_async<'a>(&'a self, dep: &'a str, worker: usize, now: Instant) -> Pending<'a, Admit> {
        match &self.coord {
            // A closed breaker asks the coordinator nothing (no probe, no lease).
            Some(co) if !self.core.is_closed(dep) => co.admit(&self.core, dep, worker, now),
            _ => settled(Admission::admit(self, dep, worker, now)),
        }
    }

    fn record_async<'a>(
        &'a self,
        dep: &'a str,
        worker: usize,
        probe: bool,
        result: &'a AttemptResult,
        now: Now,
    ) -> Pending<'a, ()> {
        let Some(co) = &self.coord else {
            self.observe(dep, worker, probe, result, now);
            return settled(());
        };
        co.record(&self.core, dep, worker, probe, result, now)
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

#[cfg(test)]
mod tests;
