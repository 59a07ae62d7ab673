//! The seam between failover and the breakers: before each attempt the engine asks an
//! `Admission` whether the dependency may be called, and afterwards tells it what happened.
//! The breaker registry implements it; `AlwaysAllow` is the no-breaker default.

use std::time::Duration;

use tokio::time::Instant;

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

/// Admission control per dependency (breakers). `now` is always passed in.
pub trait Admission: Send + Sync {
    /// Decides whether `worker` may call `dep` now.
    fn admit(&self, dep: &str, worker: usize, now: Instant) -> Admit;
    /// Records the result of an admitted call.
    fn record(&self, dep: &str, worker: usize, probe: bool, result: &AttemptResult, now: Instant);
    /// True while `dep` rejects every call (failover skips such model endpoints).
    fn is_open(&self, dep: &str, now: Instant) -> bool;
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

    fn record(&self, _: &str, _: usize, _: bool, _: &AttemptResult, _: Instant) {}

    fn is_open(&self, _dep: &str, _now: Instant) -> bool {
        false
    }
}
