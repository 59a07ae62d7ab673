//! The host side of fleet coordination: [`Coordination`], what a `Breakers` with a
//! [`Coordinator`] attached (`Breakers::with_coordinator`) keeps and does. The machines stay
//! pure; the coordinator is consulted at the edges, and never while a breaker is closed and
//! nothing trips:
//!
//! - **admit**: a probe the local machine admits also needs the fleet's probe lease (ttl = the
//!   interval plus this host's jitter); a held lease takes the probe back and rejects the call
//!   until the lease ends.
//! - **record**: a trip, a failed probe (re-open) and a probe success are sent as changes from
//!   the epoch this host follows; the answer is adopted. While the coordinator answers, the
//!   machine never closes on its own: the shared record's rule ([`CloseRule`], distinct hosts)
//!   closes it.
//! - **follow** ([`Coordination::follow`], every few tens of ms from `Breakers::run_follower`):
//!   the records of every known dependency are read and any other epoch adopted, so a trip
//!   anywhere opens the dependency here within one poll; then the profile cooldowns
//!   (`cooldowns.rs`).
//! - **fallback**: a failed call (error, timeout) emits `CoordinatorError{op}`, switches the host
//!   to `local` (`CoordinatorMode`, [`Link::fail`]) and the machines decide alone with the full
//!   local rules (one probe in flight per host, paced by the interval; distinct *workers* close).
//!   Decisions then make no coordinator calls; the follower keeps trying, and its first answer is
//!   the **rejoin**: every record is adopted whatever its epoch, and a dependency the coordinator
//!   has no record of (a restarted Redis) is seeded with this host's state (the first host's seed
//!   wins).
//!
//! Answers carry durations left; this host turns them into instants with its own `now` at the
//! answer (`HostClock` shifts a simulated host's clocks, to prove skew changes nothing).
//!
//! Depends on `state.rs` (the breakers), `link.rs` (the coordinator line) and `cooldowns.rs` (the
//! cooldown mirror it holds), and on nothing that depends on it.

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::Either;
use tokio::time::Instant;

use super::cooldowns::{self, Mirror};
use super::link::Link;
use super::state::{Core, Dep, DepSync};
use crate::engine::admission::{Admit, Pending, settled};
use crate::engine::breaker::{BreakerConfig, Note, Phase, Shared, Signal};
use crate::engine::clock::Now;
use crate::engine::coordinator::{Change, ChangeArgs, CloseRule, Lease, OpenFor, Record, Seed};
use crate::engine::events::BreakerState;
use crate::engine::outcome::AttemptResult;

/// What a coordinated `Breakers` keeps about its coordinator.
pub(crate) struct Coordination {
    pub(crate) link: Link,
    /// The machines' configuration while the coordinator answers: they never close on their own.
    deferred: BreakerConfig,
    rule: CloseRule,
    /// The fleet's profile cooldowns as last read (`cooldowns.rs`).
    pub(crate) cooldowns: Mirror,
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

impl Coordination {
    /// Coordination over `link` for breakers configured with `cfg`: close needs
    /// `probeSuccesses` consecutive probe successes from `probeDistinctWorkers` distinct *hosts*.
    pub(crate) fn new(cfg: &BreakerConfig, link: Link) -> Self {
        Self {
            link,
            deferred: BreakerConfig {
                probe_successes: u32::MAX,
                ..cfg.clone()
            },
            rule: CloseRule {
                successes: cfg.probe_successes,
                distinct: cfg.probe_distinct_workers,
            },
            cooldowns: Mirror::default(),
        }
    }

    /// The machines' configuration now: deferred closing while the coordinator answers, `own`
    /// (the registry's) while fallen back.
    pub(crate) fn machine_cfg<'a>(&'a self, own: &'a BreakerConfig) -> &'a BreakerConfig {
        if self.link.is_up() {
            &self.deferred
        } else {
            own
        }
    }

    fn with_dep<R>(
        &self,
        core: &Core,
        dep: &str,
        f: impl FnOnce(&BreakerConfig, &mut Dep, &mut Vec<Note>) -> R,
    ) -> R {
        core.with_dep(self.machine_cfg(&core.cfg), dep, f)
    }

    /// Adopts `rec` (asked for at `issued`, answered at `at_answer` on this host's clock) unless
    /// a newer answer was adopted already; `force` adopts even the epoch this host follows.
    fn adopt(
        &self,
        core: &Core,
        dep: &str,
        rec: &Record,
        issued: Instant,
        at_answer: Instant,
        force: bool,
    ) {
        let generation = self.link.generation();
        self.with_dep(core, dep, |_, d, notes| {
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
    /// Then, while the coordinator answers, shares held cooldowns and reads the followed ones.
    pub(crate) async fn follow(&self, core: &Core) {
        self.follow_records(core).await;
        if self.link.is_up() {
            cooldowns::follow(core, &self.link, &self.cooldowns).await;
        }
    }

    async fn follow_records(&self, core: &Core) {
        let link = &self.link;
        let names = core.names();
        if names.is_empty() {
            return;
        }
        let (issued, now) = (Instant::now(), link.clock.now());
        let recs = match link.c.read(&names).await {
            Ok(r) => r,
            Err(e) => return link.fail(core, "read", &e, now + issued.elapsed()),
        };
        let at = now + issued.elapsed();
        let rejoined = link.mark_up(core, at);
        let generation = link.generation();
        for (dep, rec) in names.iter().zip(recs) {
            if let Some(rec) = rec {
                self.adopt(core, dep, &rec, issued, at, rejoined);
                continue;
            }
            // No record: closed for the fleet, unless the coordinator lost it.
            let seed = self.with_dep(core, dep, |cfg, d, _| {
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
                let (issued, now) = (Instant::now(), link.clock.now());
                match link.c.seed(dep, &link.host, seed).await {
                    Ok(rec) => self.adopt(core, dep, &rec, issued, now + issued.elapsed(), true),
                    Err(e) => return link.fail(core, "seed", &e, now + issued.elapsed()),
                }
            }
        }
    }

    /// `Admission::admit_async` of a coordinated registry.
    pub(crate) fn admit<'a>(
        &'a self,
        core: &'a Core,
        dep: &'a str,
        worker: usize,
        now: Instant,
    ) -> Pending<'a, Admit> {
        let link = &self.link;
        let up = link.is_up();
        let (decision, lease) = self.with_dep(core, dep, |cfg, d, notes| {
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
                match link.c.lease(dep, &link.host, epoch, ttl).await {
                    Ok(Lease::Granted) => allowed,
                    Ok(Lease::Held { remaining, .. }) => {
                        let until = now + issued.elapsed() + remaining;
                        self.with_dep(core, dep, |_, d, _| {
                            d.machine.probe_denied(worker, until);
                            d.rejections += 1;
                        });
                        Admit::Reject { until }
                    }
                    Err(e) => {
                        link.fail(core, "lease", &e, now + issued.elapsed());
                        allowed // the local decision stands: one probe per host per interval
                    }
                }
            }
            .boxed(),
        )
    }

    /// `Admission::record_async` of a coordinated registry.
    pub(crate) fn record<'a>(
        &'a self,
        core: &'a Core,
        dep: &'a str,
        worker: usize,
        probe: bool,
        result: &'a AttemptResult,
        now: Now,
    ) -> Pending<'a, ()> {
        let link = &self.link;
        let signal = Signal::of(result, now.wall);
        let up = link.is_up();
        let push = self.with_dep(core, dep, |cfg, d, notes| {
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
                            base: core.cfg.open_for,
                            cap: core.cfg.open_for_cap,
                        };
                        ("change", link.c.change(dep, &link.host, args).await)
                    }
                    Push::ProbeOk => {
                        let answer = link.c.probe_ok(dep, &link.host, epoch, self.rule).await;
                        ("probe_ok", answer)
                    }
                };
                let at = now.at + issued.elapsed();
                match answer {
                    Ok(rec) => self.adopt(core, dep, &rec, issued, at, false),
                    Err(e) => link.fail(core, op, &e, at),
                }
            }
            .boxed(),
        )
    }
}
