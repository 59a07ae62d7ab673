//! The seam between failover and the breakers: before each attempt the engine asks an
//! `Admission` whether the dependency may be called, and afterwards tells it what happened.
//! The breaker registry implements it; `AlwaysAllow` is the no-breaker default. The engine calls
//! the `*_async` forms: they are the sync ones unless a coordinated breaker has to ask the fleet
//! (a half-open probe lease, a trip, a probe result), and stay allocation-free otherwise. A
//! coordinated admission also carries the fleet's profile cooldowns (`publish_cooldown`,
//! `fleet_cooldown`).

use std::future::{Ready, ready};
use std::time::Duration;

use futures_util::future::{BoxFuture, Either};
use tokio::time::Instant;

use super::clock::Now;
use super::coordinator::{CooldownWrite, FleetCooldown};
use super::outcome::AttemptResult;

/// The answer to "may this worker call this dependency now?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Go ahead.
    Allow {
        /// This call is a half-open probe (it carries `X-Breaker-Probe`).
        probe: bool,
        /// A tighter deadline for this call (the probe timeout), if any.
        timeout: Option<Duration>,
    },
    /// Rejected at once: the dependency's breaker is open until `until`.
    Reject {
        /// When the breaker may admit again (at the earliest).
        until: Instant,
    },
}

/// A decision that is either ready or waits for the fleet coordinator.
pub type Pending<'a, T> = Either<Ready<T>, BoxFuture<'a, T>>;

/// A ready [`Pending`].
pub fn settled<'a, T>(value: T) -> Pending<'a, T> {
    Either::Left(ready(value))
}

/// Admission control per dependency (breakers). `now` is always passed in; a result is
/// recorded with its end on both clocks ([`Now`]).
pub trait Admission: Send + Sync {
    /// Decides whether `worker` may call `dep` now.
    fn admit(&self, dep: &str, worker: usize, now: Instant) -> Admit;
    /// Records the result of an admitted call.
    fn record(&self, dep: &str, worker: usize, probe: bool, result: &AttemptResult, now: Now);
    /// True while `dep` rejects every call (failover skips such model endpoints).
    fn is_open(&self, dep: &str, now: Instant) -> bool;
    /// [`Admission::admit`], waiting for the fleet coordinator where a coordinated breaker must.
    fn admit_async<'a>(&'a self, dep: &'a str, worker: usize, now: Instant) -> Pending<'a, Admit> {
        settled(self.admit(dep, worker, now))
    }
    /// [`Admission::record`], telling the fleet coordinator where a coordinated breaker must.
    fn record_async<'a>(
        &'a self,
        dep: &'a str,
        worker: usize,
        probe: bool,
        result: &'a AttemptResult,
        now: Now,
    ) -> Pending<'a, ()> {
        self.record(dep, worker, probe, result, now);
        settled(())
    }
    /// Shares a profile cooldown the engine just wrote with the fleet (nothing alone).
    fn publish_cooldown<'a>(
        &'a self,
        _profile: &'a str,
        _write: &'a CooldownWrite,
    ) -> Pending<'a, ()> {
        settled(())
    }
    /// Follows the fleet's cooldowns of `profiles` from now on (the engine's configured ones;
    /// nothing alone).
    fn follow_profiles(&self, _profiles: &[String]) {}
    /// The fleet's running cooldown of `profile` at `now` as last followed, never a round trip
    /// (`None` alone). Asking starts following the profile.
    fn fleet_cooldown(&self, _profile: &str, _now: Instant) -> Option<FleetCooldown> {
        None
    }
}

/// Admits everything: the engine without breakers.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysAllow;

impl Admission for AlwaysAllow {
    fn admit(&self, _dep: &str, _worker: usize, _now: Instant) -> Admit {
        Admit::Allow {
            probe: false,
            timeout: None,
        }
    }

    fn record(&self, _: &str, _: usize, _: bool, _: &AttemptResult, _: Now) {}

    fn is_open(&self, _dep: &str, _now: Instant) -> bool {
        false
    }
}
