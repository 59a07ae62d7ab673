//! The open duration's doubling rule, `base × 2^reopens` capped at `cap`: one pure function
//! shared by a host's breaker ([`crate::engine::breaker::open_for`]) and the in-process
//! coordinator that opens a dep for the whole fleet, so both back off alike and the coordinator
//! need not name the breaker.

use std::time::Duration;

/// `base × 2^reopens`, capped at `cap` (saturating: a product past `Duration`'s range is `cap`).
pub fn open_backoff(base: Duration, cap: Duration, reopens: u32) -> Duration {
    let factor = 2u32.saturating_pow(reopens.min(31));
    base.checked_mul(factor).unwrap_or(cap).min(cap)
}
