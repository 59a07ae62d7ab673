//! [`Link`]: a host's line to the fleet coordinator — the coordinator, this host's id and
//! clock ([`HostClock`]), whether the coordinator answers (`up`) and how many times it came
//! back (`generation`) — and the two things every coordinated call does with it: fall back to
//! local decisions on a failed call ([`Link::fail`]) and rejoin on the first answer after one
//! ([`Link::mark_up`]), each announced as a coordinator event. `fleet.rs` (breaker records)
//! and `cooldowns.rs` (profile cooldowns) both use it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

use super::state::Core;
use crate::engine::clock::Now;
use crate::engine::coordinator::{CoordError, Coordinator, HostId};
use crate::engine::events::EventKind;

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

/// A host's line to the coordinator.
pub(crate) struct Link {
    pub(crate) c: Arc<dyn Coordinator>,
    pub(crate) host: HostId,
    pub(crate) clock: HostClock,
    /// The coordinator answered the last call (false: deciding locally).
    up: AtomicBool,
    /// Counts rejoins: a dependency synced in an older generation adopts whatever it reads.
    generation: AtomicU64,
}

impl Link {
    /// A link to `c` as `host`, up; announces the coordinator's mode.
    pub(crate) fn new(
        core: &Core,
        c: Arc<dyn Coordinator>,
        host: HostId,
        clock: HostClock,
    ) -> Self {
        let mode = c.mode().into();
        let link = Self {
            c,
            host,
            clock,
            up: AtomicBool::new(true),
            generation: AtomicU64::new(0),
        };
        link.event(core, clock.now(), EventKind::CoordinatorMode { mode });
        link
    }

    /// The coordinator answered the last call.
    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::SeqCst)
    }

    /// Rejoins so far.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The coordinator's mode (`redis`, `in_process`), or `local` while fallen back.
    pub(crate) fn mode(&self) -> &'static str {
        if self.is_up() { self.c.mode() } else { "local" }
    }

    /// Emits a coordinator event with its log line.
    pub(crate) fn event(&self, core: &Core, at: Instant, kind: EventKind) {
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
        core.event(at, kind, log);
    }

    /// A failed call `op`: emits `CoordinatorError` and, the first time, falls back to local.
    pub(crate) fn fail(&self, core: &Core, op: &str, e: &CoordError, at: Instant) {
        let error = e.to_string();
        let op = op.into();
        self.event(core, at, EventKind::CoordinatorError { op, error });
        if self.up.swap(false, Ordering::SeqCst) {
            let mode = "local".into();
            self.event(core, at, EventKind::CoordinatorMode { mode });
        }
    }

    /// An answer: true when the coordinator was down until it (a rejoin, counted).
    pub(crate) fn mark_up(&self, core: &Core, at: Instant) -> bool {
        if self.up.swap(true, Ordering::SeqCst) {
            return false;
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        let mode = self.c.mode().into();
        self.event(core, at, EventKind::CoordinatorMode { mode });
        true
    }
}
