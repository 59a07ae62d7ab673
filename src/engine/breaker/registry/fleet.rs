//! The host side of fleet coordination: a [`Breakers`] with a [`Coordinator`] attached
//! ([`Breakers::with_coordinator`]). The machines stay pure; the coordinator is consulted at the
//! edges, and never while a breaker is closed and nothing trips:
//!
//! - **admit**: a probe the local machine admits also needs the fleet's probe lease (ttl = the
//!   interval plus this host's jitter); a held lease takes the probe back and rejects the call
//!   until the lease ends.
//! - **record**: a trip, a failed probe (re-open) and a probe success are sent as changes from
//!   the epoch this host follows; the answer is adopted. While the coordinator answers, the
//!   machine never closes on its own: the shared record's rule ([`CloseRule`], distinct hosts)
//!   closes it.
//! - **follow** ([`Breakers::follow`], every few tens of ms from [`Breakers::run_follower`]): the
//!   records of every known dependency are read and any other epoch adopted, so a trip anywhere
//!   opens the dependency here within one poll.
//! - **fallback**: a failed call (error, timeout) emits `CoordinatorError{op}`, switches the host
//!   to `local` (`CoordinatorMode`) and the machines decide alone with the full local rules (one
//!   probe in flight per host, paced by the interval; distinct *workers* close). Decisions then
//!   make no coordinator calls; the follower keeps trying, and its first answer is the **rejoin**:
//!   every record is adopted whatever its epoch, and a dependency the coordinator has no record of
//!   (a restarted Redis) is seeded with this host's state (the first host's seed wins).
//!
//! Answers carry durations left; this host turns them into instants with its own `now` at the
//! answer ([`HostClock`] shifts a simulated host's clocks, to prove skew changes nothing).
//!
//! Longer than 400 lines on purpose: the follower, the lease handling and the fallback to local
//! breakers are one state machine over the coordinator and read the same fields.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use futures_util::FutureExt;
use futures_util::future::Either;
use tokio::time::Instant;

use super::Breakers;
use crate::engine::admission::Admission;
use crate::engine::admission::{Admit, Pending, settled};
use crate::engine::breaker::{BreakerConfig, Note, Phase, Shared, Signal};
use crate::engine::clock::Now;
use crate::engine::coordinator::{
    Change, ChangeArgs, CloseRule, CoordError, Coordinator, HostId, OpenFor, Record, Seed,
};
use crate::engine::events::{BreakerState, Event, EventKind};
use crate::engine::outcome::AttemptResult;

/// A host's clocks: its monotonic `now` and its wall clock, both shifted by `skew_ms` (a
/// simulated host in a test; real hosts use the default, no shift).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostClock {
    /// Milliseconds this host's clocks run ahead (negative: behind).
    pub skew_ms: i64,
    /// Only the wall clock is shifted (a host process: its monotonic clock is the one every
    /// instant the engine passes comes from, so shifting it would only shift it against itself).
    pub wall_only: bool,
}

impl HostClock {
    /// A clock `skew_ms` ahead (or behind, when negative).
    pub fn skewed(skew_ms: i64) -> Self {
        Self {
            skew_ms,
            wall_only: false,
        }
    }

    /// A host whose wall clock alone is `skew_ms` ahead (fleet mode's host processes).
    pub fn wall_skewed(skew_ms: i64) -> Self {
        Self {
            skew_ms,
            wall_only: true,
        }
    }

    /// `at` on this host's clock.
    pub fn shift(&self, at: Instant) -> Instant {
        if self.wall_only {
            return at;
        }
        let d = Duration::from_millis(self.skew_ms.unsigned_abs());
        if self.skew_ms >= 0 {
            at + d
        } else {
            at.checked_sub(d).unwrap_or(at)
        }
    }

    /// This host's `now`.
    pub fn now(&self) -> Instant {
        self.shift(Instant::now())
    }

    /// This host's `now` on both of its clocks (the wall clock shifted alike): what a
    /// simulated host records an attempt's end with.
    pub fn read(&self) -> Now {
        let d = Duration::from_millis(self.skew_ms.unsigned_abs());
        let w = SystemTime::now();
        let wall = if self.skew_ms >= 0 {
            w.checked_add(d).unwrap_or(w)
        } else {
            w.checked_sub(d).unwrap_or(w)
        };
        Now::new(self.now(), wall)
    }
}

/// What a coordinated `Breakers` keeps about its coordinator.
pub(super) struct Coordination {
    pub(super) c: std::sync::Arc<dyn Coordinator>,
    host: HostId,
    pub(super) clock: HostClock,
    /// The machines' configuration while the coordinator answers: they never close on their own.
    deferred: BreakerConfig,
    rule: CloseRule,
    pub(super) up: AtomicBool,
    /// Counts rejoins: a dependency synced in an older generation adopts whatever it reads.
    generation: AtomicU64,
    /// The fleet's profile cooldowns as last read (`registry/cooldowns.rs`).
    pub(super) cooldowns: super::cooldowns::Mirror,
}

/// What one dependency follows.
#[derive(Debug, Default, Clone)]
pub(super) struct DepSync {
    epoch: u64,
    generation: u64,
    /// When the latest adopted answer was asked for (older answers are ignored).
    issued: Option<Instant>,
}

enum Push {
    Change(Change),
    ProbeOk,
}

fn shared_of(rec: &Record, at_answer: Instant) -> Shared {
    match rec.open {
        None => Shared::Closed,
        Some(o) => Shared::Open {
            until: at_answer + o.remaining,
            open_for: o.open_for,
            reopens: rec.reopens,
        },
    }
}

impl Breakers {
    /// Attaches `coordinator` as host `host` (with `clock`): from now on this registry follows
    /// and changes the fleet's shared breakers. Close needs `probeSuccesses` consecutive probe
    /// successes from `probeDistinctWorkers` distinct *hosts*. Emits the initial
    /// `CoordinatorMode`. Spawn [`Breakers::run_follower`] next to it.
    pub fn with_coordinator(
        mut self,
        coordinator: std::sync::Arc<dyn Coordinator>,
        host: HostId,
        clock: HostClock,
    ) -> Self {
        let rule = CloseRule {
            successes: self.cfg.probe_successes,
            distinct: self.cfg.probe_distinct_workers,
        };
        let mode = coordinator.mode();
        self.coord = Some(Coordination {
            c: coordinator,
            host,
            clock,
            deferred: BreakerConfig {
                probe_successes: u32::MAX,
                ..self.cfg.clone()
            },
            rule,
            up: AtomicBool::new(true),
            generation: AtomicU64::new(0),
            cooldowns: Default::default(),
        });
        self.coordinator_event(
            clock.now(),
            EventKind::CoordinatorMode { mode: mode.into() },
        );
        self
    }

    /// The machines' configuration now: deferred closing while a coordinator answers.
    pub(super) fn machine_cfg(&self) -> &BreakerConfig {
        match &self.coord {
            Some(co) if co.up.load(Ordering::SeqCst) => &co.deferred,
            _ => &self.cfg,
        }
    }

    /// The host id, when coordinated.
    pub fn host(&self) -> Option<&HostId> {
        self.coord.as_ref().map(|co| &co.host)
    }

    /// `None` alone; the coordinator's mode (`redis`, `in_process`) or `local` (fallen back).
    pub fn coordinator_mode(&self) -> Option<&'static str> {
        self.coord.as_ref().map(|co| {
            if co.up.load(Ordering::SeqCst) {
                co.c.mode()
            } else {
                "local"
            }
        })
    }

    /// The epoch `dep` follows (0 when alone or never changed).
    pub fn epoch(&self, dep: &str) -> u64 {
        self.lock().get(dep).map_or(0, |d| d.sync.epoch)
    }

    pub(super) fn coordinator_event(&self, at: Instant, kind: EventKind) {
        let log = match &kind {
            EventKind::CoordinatorError { op, error } => Some(format!(
                "Coordinator call {op} failed: {error}; deciding locally"
            )),
            EventKind::CoordinatorMode { mode } => Some(format!("Coordinator mode: {mode}")),
            EventKind::CooldownAdopted {
                profile,
                reason,
                remaining_ms,
            } => {
                let why = reason.map_or(String::new(), |r| format!(" ({} reason)", r.as_str()));
                Some(format!(
                    "Cooldown adopted from the fleet: {profile} for {remaining_ms}ms{why}"
                ))
            }
            _ => None,
        };
        self.sink.emit(&Event {
            t_ms: self.ms(at),
            kind,
            log,
        });
    }

    pub(super) fn fail(&self, co: &Coordination, op: &str, e: &CoordError, at: Instant) {
        let error = e.to_string();
        self.coordinator_event(
            at,
            EventKind::CoordinatorError {
                op: op.into(),
                error,
            },
        );
        if co.up.swap(false, Ordering::SeqCst) {
            let mode = "local".into();
            self.coordinator_event(at, EventKind::CoordinatorMode { mode });
        }
    }

    /// True when the coordinator was down until this answer (a rejoin).
    fn mark_up(&self, co: &Coordination, at: Instant) -> bool {
        if co.up.swap(true, Ordering::SeqCst) {
            return false;
        }
        co.generation.fetch_add(1, Ordering::SeqCst);
        let mode = co.c.mode().into();
        self.coordinator_event(at, EventKind::CoordinatorMode { mode });
        true
    }

    /// Adopts `rec` (asked for at `issued`, answered at `at_answer` on this host's clock) unless
    /// a newer answer was adopted already; `force` adopts even the epoch this host follows.
    fn adopt(&self, dep: &str, rec: &Record, issued: Instant, at_answer: Instant, force: bool) {
        let Some(co) = &self.coord else { return };
        let generation = co.generation.load(Ordering::SeqCst);
        self.with_dep(dep, |_, d, notes| {
            if d.sync.issued.is_some_and(|prev| issued < prev) {
                return;
            }
            if force || rec.epoch != d.sync.epoch || d.sync.generation != generation {
                d.machine.adopt(shared_of(rec, at_answer), at_answer, notes);
            }
            d.sync = DepSync {
                epoch: rec.epoch,
                generation,
                issued: Some(issued),
            };
        });
    }

    /// One round of following: reads every known dependency's record and adopts what changed;
    /// on the first answer after an outage, rejoins (adopts all, seeds what the coordinator lost).
    /// Then, while the coordinator answers, reads the followed profiles' shared cooldowns.
    pub async fn follow(&self) {
        let Some(co) = &self.coord else { return };
        self.follow_records(co).await;
        if co.up.load(Ordering::SeqCst) {
            self.share_held(co).await;
            self.follow_cooldowns(co).await;
        }
    }

    async fn follow_records(&self, co: &Coordination) {
        let names: Vec<String> = self.lock().keys().cloned().collect();
        if names.is_empty() {
            return;
        }
        let (issued, now) = (Instant::now(), co.clock.now());
        let recs = match co.c.read(&names).await {
            Ok(r) => r,
            Err(e) => return self.fail(co, "read", &e, now + issued.elapsed()),
        };
        let at = now + issued.elapsed();
        let rejoined = self.mark_up(co, at);
        let generation = co.generation.load(Ordering::SeqCst);
        for (dep, rec) in names.iter().zip(recs) {
            if let Some(rec) = rec {
                self.adopt(dep, &rec, issued, at, rejoined);
                continue;
            }
            // No record: closed for the fleet, unless the coordinator lost it.
            let seed = self.with_dep(dep, |cfg, d, _| {
                let lost = rejoined || d.sync.epoch != 0 || d.sync.generation != generation;
                d.sync.epoch = 0;
                d.sync.generation = generation;
                let open = match *d.machine.phase() {
                    Phase::Closed => return None,
                    Phase::Open { until } => until.saturating_duration_since(at),
                    Phase::HalfOpen(_) => Duration::ZERO,
                };
                lost.then(|| Seed {
                    open: Some(OpenFor {
                        remaining: open,
                        open_for: d.machine.next_open_for(cfg),
                    }),
                    reopens: d.machine.reopens(),
                })
            });
            if let Some(seed) = seed {
                let (issued, now) = (Instant::now(), co.clock.now());
                match co.c.seed(dep, &co.host, seed).await {
                    Ok(rec) => self.adopt(dep, &rec, issued, now + issued.elapsed(), true),
                    Err(e) => return self.fail(co, "seed", &e, now + issued.elapsed()),
                }
            }
        }
    }

    /// Calls [`Breakers::follow`] every `every` until `shutdown` completes (a no-op loop when
    /// no coordinator is attached).
    pub async fn run_follower(
        self: std::sync::Arc<Self>,
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

    /// `Admission::admit_async` of a coordinated registry.
    pub(super) fn admit_coordinated<'a>(
        &'a self,
        dep: &'a str,
        worker: usize,
        now: Instant,
    ) -> Pending<'a, Admit> {
        let Some(co) = &self.coord else {
            return settled(Admission::admit(self, dep, worker, now));
        };
        let up = co.up.load(Ordering::SeqCst);
        let (decision, lease) = self.with_dep(dep, |cfg, d, notes| {
            let decision = d.machine.admit(cfg, worker, now, &mut d.rng, notes);
            if matches!(decision, Admit::Reject { .. }) {
                d.rejections += 1;
            }
            let lease = match (&decision, d.machine.phase()) {
                (Admit::Allow { probe: true, .. }, Phase::HalfOpen(h)) if up => {
                    Some((d.sync.epoch, h.next_probe_at.saturating_duration_since(now)))
                }
                _ => None,
            };
            (decision, lease)
        });
        let allowed = decision;
        let Some((epoch, ttl)) = lease else {
            return settled(allowed);
        };
        Either::Right(
            async move {
                let issued = Instant::now();
                match co.c.lease(dep, &co.host, epoch, ttl).await {
                    Ok(crate::engine::coordinator::Lease::Granted) => allowed,
                    Ok(crate::engine::coordinator::Lease::Held { remaining, .. }) => {
                        let until = now + issued.elapsed() + remaining;
                        self.with_dep(dep, |_, d, _| {
                            d.machine.probe_denied(worker, until);
                            d.rejections += 1;
                        });
                        Admit::Reject { until }
                    }
                    Err(e) => {
                        self.fail(co, "lease", &e, now + issued.elapsed());
                        allowed // the local decision stands: one probe per host per interval
                    }
                }
            }
            .boxed(),
        )
    }

    /// `Admission::record_async` of a coordinated registry.
    pub(super) fn record_coordinated<'a>(
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
        let signal = Signal::of(result, now.wall);
        let up = co.up.load(Ordering::SeqCst);
        let push = self.with_dep(dep, |cfg, d, notes| {
            let owned = probe && d.machine.probe_in_flight() == Some(worker);
            d.machine.record(cfg, worker, probe, signal, now.at, notes);
            if !up {
                return None;
            }
            let change = notes.iter().rev().find_map(|n| match *n {
                Note::Transition {
                    from,
                    to: BreakerState::Open,
                    ..
                } => Some(if from == BreakerState::HalfOpen {
                    Push::Change(Change::Reopen)
                } else {
                    Push::Change(Change::Trip)
                }),
                _ => None,
            });
            let ok = owned
                && matches!(signal, Signal::Success { .. })
                && d.machine.state() == BreakerState::HalfOpen;
            change
                .or(ok.then_some(Push::ProbeOk))
                .map(|p| (p, d.sync.epoch))
        });
        let Some((push, epoch)) = push else {
            return settled(());
        };
        Either::Right(
            async move {
                let issued = Instant::now();
                let (op, answer) = match push {
                    Push::Change(change) => {
                        let args = ChangeArgs {
                            change,
                            from_epoch: epoch,
                            base: self.cfg.open_for,
                            cap: self.cfg.open_for_cap,
                        };
                        ("change", co.c.change(dep, &co.host, args).await)
                    }
                    Push::ProbeOk => {
                        let answer = co.c.probe_ok(dep, &co.host, epoch, co.rule).await;
                        ("probe_ok", answer)
                    }
                };
                let at = now.at + issued.elapsed();
                match answer {
                    Ok(rec) => self.adopt(dep, &rec, issued, at, false),
                    Err(e) => self.fail(co, op, &e, at),
                }
            }
            .boxed(),
        )
    }
}
