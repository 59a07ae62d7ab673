//! Host facts against the scenario's timing: the breaker's probe timeout and
//! `open_for` (at the run's speed) against dead-peer detection, and every expected-transition
//! tolerance against the TCP timer granularity, with the scenario's `[tcp]` tuning applied (the
//! options the harness's connector sets). The checks themselves are the host module's.

use std::time::Duration;

use crate::rehearsal::plan::ScenarioPlan;
use crate::host::{HostInfo, contradictions};
use crate::verdict::expect::DEFAULT_TOLERANCE;

/// The contradictions of `plan` on `host`, as report JSON values.
pub fn check(plan: &ScenarioPlan, host: &HostInfo) -> Vec<serde_json::Value> {
    let file = &plan.checked.file;
    let breaker = &file.engine.breaker;
    let tolerances: Vec<Duration> = file
        .expect
        .transition
        .iter()
        .map(|t| {
            let tol = t.tolerance.unwrap_or(DEFAULT_TOLERANCE);
            Duration::from_millis(plan.speed.scaled_tolerance(tol).max(0) as u64)
        })
        .collect();
    contradictions(
        host,
        &file.tcp,
        plan.speed.scale(breaker.probe_timeout_cap),
        plan.speed.scale(breaker.open_for),
        &tolerances,
    )
    .into_iter()
    .filter_map(|c| serde_json::to_value(c).ok())
    .collect()
}
