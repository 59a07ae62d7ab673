//! Half-open probe spacing, measured where it matters: at the upstream, from the arrival times
//! of requests that carried `X-Breaker-Probe` for the dep. Synthetic health checks carry that
//! header too; the run harness leaves them (`X-Rehearse-Canary`) out of the arrivals it passes.

use serde::{Deserialize, Serialize};

use super::expect::ExpectProbeSpacing;
use super::{ExpectKind, ExpectStatus, ExpectationResult, secs, signed_secs};
use crate::util::speed::{Speed, nominal_ms};

/// One request the upstream received (from its records; canaries left out), with whether it
/// was a breaker probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeArrival {
    /// The dep as the upstream names it.
    pub dep: String,
    /// Arrival time, ms since the run start.
    pub t_ms: u64,
    /// True when it carried `X-Breaker-Probe`.
    pub probe: bool,
}

/// Checks that consecutive probe arrivals of `e.dep` are at least `e.min` apart (scaled by
/// `speed`, minus the scaled tolerance when one is given). No probe at all fails; a single
/// probe passes (there is no gap to measure) and says so. Checked on wall-clock gaps, said in
/// scenario time.
pub(crate) fn check(
    e: &ExpectProbeSpacing,
    arrivals: &[ProbeArrival],
    speed: Speed,
) -> ExpectationResult {
    let bound = speed.scale_ms(e.min) - e.tolerance.map_or(0, |t| speed.scaled_tolerance(t));
    let min_ms = nominal_ms(e.min);
    let slack = e.tolerance.map_or(0, |t| speed.shown_tolerance(t));
    let scen = |ms: i64| speed.scenario_ms(ms);
    let mut times: Vec<u64> = arrivals
        .iter()
        .filter(|a| a.probe && a.dep == e.dep)
        .map(|a| a.t_ms)
        .collect();
    times.sort_unstable();
    let expected = if slack > 0 {
        format!(
            "probes ≥ {} apart (−{} tolerance)",
            secs(min_ms),
            secs(slack)
        )
    } else {
        format!("probes ≥ {} apart", secs(min_ms))
    };
    let dep = e.dep.clone();
    let probes = times.len() as u64;
    let result = |observed: String, gap_ms: Option<i64>, ok, detail| ExpectationResult {
        witness: super::Witness::of(&[
            ("probes", probes),
            ("gaps", probes.saturating_sub(1)),
        ]),
        kind: ExpectKind::ProbeSpacing,
        dep: Some(dep.clone()),
        series: None,
        expected: expected.clone(),
        observed,
        expected_ms: Some(min_ms),
        observed_ms: gap_ms,
        delta_ms: gap_ms.map(|g| g - min_ms),
        tolerance_ms: (slack > 0).then_some(slack),
        ok,
        status: ExpectStatus::from_ok(ok),
        detail,
    };
    match times.len() {
        0 => result(
            "no probes".into(),
            None,
            false,
            format!("{dep} expected {expected}, observed no probes at the upstream"),
        ),
        1 => result(
            "1 probe".into(),
            None,
            true,
            format!(
                "{dep} expected {expected}, observed a single probe at {} (no gap to measure)",
                secs(scen(times[0] as i64))
            ),
        ),
        n => {
            let (i, gap) = times
                .windows(2)
                .enumerate()
                .map(|(i, w)| (i, (w[1] - w[0]) as i64))
                .min_by_key(|&(_, g)| g)
                .unwrap_or((0, 0)); // ok: n ≥ 2 so there is at least one window
            let ok = gap >= bound;
            let gap_s = scen(gap);
            let delta = gap_s - min_ms;
            let how = if ok { "ok" } else { "too close" };
            result(
                format!("min gap {}", secs(gap_s)),
                Some(gap_s),
                ok,
                format!(
                    "{dep} expected {expected}, observed min gap {} over {n} probes (between {} and {}; {}), {how}",
                    secs(gap_s),
                    secs(scen(times[i] as i64)),
                    secs(scen(times[i + 1] as i64)),
                    signed_secs(delta)
                ),
            )
        }
    }
}
