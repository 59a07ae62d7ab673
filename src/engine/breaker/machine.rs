//! One dependency's breaker as a pure state machine: [`Machine::admit`], [`Machine::record`] and
//! [`Machine::advance`] take `now` and the config, mutate the machine and append what happened
//! ([`Note`]) to a buffer the caller turns into events. No clock, no lock, no I/O.
//! A coordinated breaker (fleet mode) also [`Machine::adopt`]s the shared state of its
//! dependency and gives back a probe slot the fleet-wide lease refused ([`Machine::probe_denied`]).
//!
//! Longer than 400 lines on purpose: the breaker's states and their transitions are one pure state
//! machine; its window, probe and trip rules are in sibling files.

use std::time::Duration;

use rand::Rng;
use tokio::time::Instant;

use super::config::BreakerConfig;
use super::probe::{HalfOpen, Latencies, probe_timeout};
use super::signal::Signal;
use super::trip::{Counters, QuietSuccess, TripReason, should_trip};
use super::window::Window;
use crate::engine::admission::Admit;
use crate::engine::backoff::open_backoff;
use crate::engine::events::BreakerState;

/// Where a breaker is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Traffic flows.
    Closed,
    /// Calls are rejected until `until` (then half-open, unless a Retry-After reaches further).
    Open {
        /// When it may become half-open.
        until: Instant,
    },
    /// Paced probes are admitted.
    HalfOpen(HalfOpen),
}

/// Something the caller should report (as an event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// A state change at `at` (which may be earlier than the `now` that noticed it: an open
    /// breaker becomes half-open exactly when its open time ends).
    Transition {
        /// When it happened.
        at: Instant,
        /// Previous state.
        from: BreakerState,
        /// New state.
        to: BreakerState,
        /// For transitions to open: the breaker's own open time (before any Retry-After).
        open_for: Option<Duration>,
        /// For transitions to open: which rule tripped it.
        reason: Option<TripReason>,
    },
    /// At `at` the breaker would have become half-open, but a Retry-After holds it open until
    /// `until`.
    RetryAfterSkip {
        /// When the half-open transition was due.
        at: Instant,
        /// Until when it stays open.
        until: Instant,
    },
}

/// The shared state of a dependency that a coordinated breaker follows, in this host's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    /// Closed for the whole fleet.
    Closed,
    /// Open until `until` (half-open from then on).
    Open {
        /// When the fleet's open time ends.
        until: Instant,
        /// The open time of the trip (for the transition note).
        open_for: Duration,
        /// Re-opens from half-open since the dependency last closed.
        reopens: u32,
    },
}

/// One dependency's breaker.
#[derive(Debug, Clone)]
pub struct Machine {
    phase: Phase,
    /// Consecutive connection failures while closed.
    consecutive: u32,
    /// Consecutive WebSocket ping timeouts.
    ping_streak: u32,
    window: Window,
    /// Re-opens from half-open since the breaker last closed (open_for doubles per re-open).
    reopens: u32,
    /// The furthest Retry-After received from this dependency.
    retry_after_until: Option<Instant>,
    latencies: Latencies,
    /// The earliest start of this breaker's next probe as its last probe set it, kept across
    /// phases: when a fleet's shared state re-opens the breaker and half-opens it sooner than
    /// its own open time would (a rejoin adopting another host's seed), the host still sends
    /// at most one probe per interval.
    probe_not_before: Option<Instant>,
}

impl Machine {
    /// A closed breaker.
    pub fn new(cfg: &BreakerConfig) -> Self {
        Self {
            phase: Phase::Closed,
            consecutive: 0,
            ping_streak: 0,
            window: Window::new(cfg.window),
            reopens: 0,
            retry_after_until: None,
            latencies: Latencies::default(),
            probe_not_before: None,
        }
    }

    /// The current phase (as of the last call; see [`Machine::advance`]).
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The current state (as of the last call).
    pub fn state(&self) -> BreakerState {
        match self.phase {
            Phase::Closed => BreakerState::Closed,
            Phase::Open { .. } => BreakerState::Open,
            Phase::HalfOpen(_) => BreakerState::HalfOpen,
        }
    }

    /// Consecutive connection failures so far (while closed).
    pub fn consecutive_failures(&self) -> u32 {
        self.consecutive
    }

    /// (calls, 5xx) in the sliding window as of the last record.
    pub fn window_counts(&self) -> (u32, u32) {
        (self.window.calls(), self.window.failures())
    }

    /// True when recording a success cannot change this breaker's state: it is closed and its
    /// window holds few enough failures ([`QuietSuccess`]).
    #[inline]
    pub fn success_is_quiet(&self, bound: QuietSuccess) -> bool {
        matches!(self.phase, Phase::Closed) && bound.holds(self.window.failures())
    }

    /// Re-opens from half-open since the breaker last closed.
    pub fn reopens(&self) -> u32 {
        self.reopens
    }

    /// The open time the next trip would use: `open_for × 2^reopens`, capped.
    pub fn next_open_for(&self, cfg: &BreakerConfig) -> Duration {
        open_for(cfg, self.reopens)
    }

    /// The worker whose half-open probe is in flight, if any.
    pub fn probe_in_flight(&self) -> Option<usize> {
        match &self.phase {
            Phase::HalfOpen(h) => h.in_flight.map(|p| p.worker),
            _ => None,
        }
    }

    /// Takes back the probe just admitted for `worker` (the fleet-wide lease is held by another
    /// host): no probe is in flight, and the next may start at `retry_at`.
    pub fn probe_denied(&mut self, worker: usize, retry_at: Instant) {
        if let Phase::HalfOpen(h) = &mut self.phase
            && h.finish(worker)
        {
            h.next_probe_at = retry_at;
        }
    }

    /// Follows the fleet's `shared` state at `now`, noting the transition it makes here. An
    /// open-until that has passed leaves a half-open breaker as it is (its probe pacing kept).
    pub fn adopt(&mut self, shared: Shared, now: Instant, notes: &mut Vec<Note>) {
        let from = self.state();
        match shared {
            Shared::Closed => {
                if from != BreakerState::Closed {
                    notes.push(Note::Transition {
                        at: now,
                        from,
                        to: BreakerState::Closed,
                        open_for: None,
                        reason: None,
                    });
                }
                self.phase = Phase::Closed;
                self.reopens = 0;
            }
            Shared::Open {
                until,
                open_for,
                reopens,
            } => {
                self.reopens = reopens;
                match self.phase {
                    Phase::HalfOpen(_) if until <= now => return,
                    Phase::Open { .. } => self.phase = Phase::Open { until },
                    _ => {
                        notes.push(Note::Transition {
                            at: now,
                            from,
                            to: BreakerState::Open,
                            open_for: Some(open_for),
                            reason: Some(TripReason::Fleet),
                        });
                        self.phase = Phase::Open { until };
                    }
                }
                self.advance(now, notes);
            }
        }
        if from != self.state() {
            self.consecutive = 0;
            self.ping_streak = 0;
            self.window.clear();
        }
    }

    /// Moves an open breaker whose time is up to half-open (or defers that to a further
    /// Retry-After, noting the skip).
    #[inline]
    pub fn advance(&mut self, now: Instant, notes: &mut Vec<Note>) {
        // Inline: every admit and record of a closed breaker passes here and leaves at once.
        if let Phase::Open { until } = self.phase
            && now >= until
        {
            self.open_time_up(until, now, notes);
        }
    }

    /// [`Machine::advance`] once `until`, the open time, has passed at `now`.
    fn open_time_up(&mut self, until: Instant, now: Instant, notes: &mut Vec<Note>) {
        if let Some(ra) = self.retry_after_until
            && ra > until
        {
            notes.push(Note::RetryAfterSkip {
                at: until,
                until: ra,
            });
            self.phase = Phase::Open { until: ra };
            return self.advance(now, notes);
        }
        notes.push(Note::Transition {
            at: until,
            from: BreakerState::Open,
            to: BreakerState::HalfOpen,
            open_for: None,
            reason: None,
        });
        let mut h = HalfOpen::new(until);
        if let Some(not_before) = self.probe_not_before {
            h.next_probe_at = h.next_probe_at.max(not_before);
        }
        self.phase = Phase::HalfOpen(h);
    }

    /// Decides whether `worker`'s call may go out at `now`.
    pub fn admit(
        &mut self,
        cfg: &BreakerConfig,
        worker: usize,
        now: Instant,
        rng: &mut impl Rng,
        notes: &mut Vec<Note>,
    ) -> Admit {
        self.advance(now, notes);
        // Only a half-open breaker needs the p99 (a sort of the kept latencies).
        let timeout = match self.phase {
            Phase::HalfOpen(_) => probe_timeout(self.latencies.p99(), cfg),
            _ => Duration::ZERO,
        };
        match &mut self.phase {
            Phase::Closed => Admit::Allow {
                probe: false,
                timeout: None,
            },
            Phase::Open { until } => Admit::Reject { until: *until },
            Phase::HalfOpen(h) => match h.try_admit(worker, now, timeout, cfg, rng) {
                Ok(()) => {
                    self.probe_not_before = Some(h.next_probe_at);
                    Admit::Allow {
                        probe: true,
                        timeout: Some(timeout),
                    }
                }
                Err(until) => Admit::Reject { until },
            },
        }
    }

    /// Folds one attempt's result into the breaker.
    pub fn record(
        &mut self,
        cfg: &BreakerConfig,
        worker: usize,
        probe: bool,
        signal: Signal,
        now: Instant,
        notes: &mut Vec<Note>,
    ) {
        self.advance(now, notes);
        match signal {
            Signal::Success { latency }
            | Signal::RateLimited { latency, .. }
            | Signal::ServerError { latency, .. } => self.latencies.observe(latency),
            _ => {}
        }
        if let Signal::RateLimited {
            retry_after: Some(ra),
            ..
        }
        | Signal::ServerError {
            retry_after: Some(ra),
            ..
        } = signal
        {
            let until = now + ra;
            self.retry_after_until = Some(self.retry_after_until.map_or(until, |u| u.max(until)));
        }
        match &mut self.phase {
            Phase::Closed => self.record_closed(cfg, signal, now, notes),
            Phase::Open { .. } => {} // a late answer to a call admitted before the trip
            Phase::HalfOpen(h) => {
                if !probe || !h.finish(worker) {
                    return; // not the probe: it says nothing about recovery
                }
                match signal {
                    Signal::Success { .. } => {
                        self.ping_streak = 0;
                        if h.succeed(worker, cfg) {
                            self.close(now, notes);
                        }
                    }
                    Signal::PingTimeout => {
                        self.ping_streak += 1;
                        if self.ping_streak >= cfg.ws_ping_timeouts {
                            self.reopen(cfg, TripReason::PingTimeouts, now, notes);
                        }
                    }
                    s if s.is_probe_failure() => {
                        self.reopen(cfg, TripReason::ProbeFailed, now, notes)
                    }
                    _ => {} // neutral: the slot is free again, the streak unchanged
                }
            }
        }
    }

    /// [`Machine::record`] of a success ended at each instant of `at` (chunk after chunk) with
    /// the latency at the same position of `latencies`, in order, while
    /// [`Machine::success_is_quiet`] holds: the same changes (each latency kept, both streaks
    /// zeroed, each call in the window), without the trip rules' check, which a success cannot
    /// satisfy then ([`QuietSuccess`]); it still holds afterwards. The registry replays the
    /// successes it logged without its lock through it, a batch at a time.
    pub fn record_quiet_successes(&mut self, at: &[&[Instant]], latencies: &[&[Duration]]) {
        debug_assert!(matches!(self.phase, Phase::Closed));
        if at.iter().all(|c| c.is_empty()) {
            return;
        }
        for chunk in latencies {
            self.latencies.observe_all(chunk);
        }
        self.consecutive = 0;
        self.ping_streak = 0;
        self.window.record_successes(at);
    }

    fn record_closed(
        &mut self,
        cfg: &BreakerConfig,
        signal: Signal,
        now: Instant,
        notes: &mut Vec<Note>,
    ) {
        match signal {
            Signal::Success { .. } | Signal::RateLimited { .. } => {
                self.consecutive = 0;
                self.ping_streak = 0;
                self.window.record(now, false);
            }
            Signal::ServerError { .. } => {
                self.consecutive = 0;
                self.ping_streak = 0;
                self.window.record(now, true);
            }
            Signal::ConnectFailure => {
                self.consecutive += 1;
                self.window.record(now, true);
            }
            Signal::PingTimeout => self.ping_streak += 1,
            Signal::Neutral => {}
        }
        let counters = Counters {
            consecutive: self.consecutive,
            ping_streak: self.ping_streak,
            calls: self.window.calls(),
            failures: self.window.failures(),
        };
        if let Some(reason) = should_trip(counters, cfg) {
            self.trip(cfg, BreakerState::Closed, reason, now, notes);
        }
    }

    fn trip(
        &mut self,
        cfg: &BreakerConfig,
        from: BreakerState,
        reason: TripReason,
        now: Instant,
        notes: &mut Vec<Note>,
    ) {
        let d = open_for(cfg, self.reopens);
        notes.push(Note::Transition {
            at: now,
            from,
            to: BreakerState::Open,
            open_for: Some(d),
            reason: Some(reason),
        });
        self.phase = Phase::Open { until: now + d };
        self.consecutive = 0;
        self.ping_streak = 0;
        self.window.clear();
    }

    fn reopen(
        &mut self,
        cfg: &BreakerConfig,
        reason: TripReason,
        now: Instant,
        notes: &mut Vec<Note>,
    ) {
        self.reopens = self.reopens.saturating_add(1);
        self.trip(cfg, BreakerState::HalfOpen, reason, now, notes);
    }

    fn close(&mut self, now: Instant, notes: &mut Vec<Note>) {
        notes.push(Note::Transition {
            at: now,
            from: BreakerState::HalfOpen,
            to: BreakerState::Closed,
            open_for: None,
            reason: None,
        });
        self.phase = Phase::Closed;
        self.reopens = 0;
        self.consecutive = 0;
        self.ping_streak = 0;
        self.window.clear();
    }
}

/// `cfg.open_for × 2^reopens`, capped at `cfg.open_for_cap`.
pub fn open_for(cfg: &BreakerConfig, reopens: u32) -> Duration {
    open_backoff(cfg.open_for, cfg.open_for_cap, reopens)
}

#[cfg(test)]
mod tests;
