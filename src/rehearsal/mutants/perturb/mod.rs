//! The perturbations of one expectation entry that should fail it, given its baseline rows (all
//! passing): one function per expectation kind, grouped by what the rows are judged on —
//! `timeline.rs` (transitions, metrics, alerts, dashboards), `upstream.rs` (attempts, first and
//! no request, retry gaps), `gateway.rs` (a gateway's own decisions, cooldown, turns), `turns.rs`
//! (cooldowns and per-turn conditions read from the upstream's record).

mod gateway;
mod timeline;
mod turns;
mod upstream;

use std::time::Duration;

use super::Entry;
use crate::rehearsal::observation::Observation;
use crate::verdict::{ExpectKind, ExpectationResult, Expectations};

/// A dep no scenario has: a subject that cannot have been watched.
const NO_SUCH_DEP: &str = "mutant-no-such-dep";

fn ms(n: i64) -> Duration {
    Duration::from_millis(u64::try_from(n.max(0)).unwrap_or(0))
}

/// The leading number of an `observed` text (`3`, `2 of 5 turns`, `4 (first at 1.2s)`).
fn count(observed: &str) -> Option<u64> {
    observed.split_whitespace().next()?.parse().ok()
}

/// New count bounds that the observed count `n` breaks: `(equals, at_least, at_most)` moved
/// just past it in the direction of each bound given.
fn past(n: u64, bounds: (Option<u64>, Option<u64>, Option<u64>)) -> Vec<(String, Bounds)> {
    let (eq, lo, hi) = bounds;
    let mut out = Vec::new();
    if eq.is_some() {
        out.push((format!("equals {}", n + 1), (Some(n + 1), None, None)));
    }
    if lo.is_some() {
        out.push((format!("at_least {}", n + 1), (None, Some(n + 1), None)));
    }
    if hi.is_some() {
        match n.checked_sub(1) {
            Some(m) => out.push((format!("at_most {m}"), (None, None, Some(m)))),
            None => out.push((format!("at_least {}", n + 1), (None, Some(n + 1), None))),
        }
    }
    out
}

type Bounds = (Option<u64>, Option<u64>, Option<u64>);

/// What a kind's perturbations are made from.
#[derive(Clone, Copy)]
pub(super) struct Cx<'a> {
    /// The entry judged alone.
    base: &'a Expectations,
    /// Its first baseline row.
    b: &'a ExpectationResult,
    /// Every baseline row of the entry.
    rows: &'a [ExpectationResult],
    /// The run's observation.
    o: &'a Observation,
    /// The scenario's duration.
    duration: Duration,
    /// Which of the isolated rows are its own (a transition among its dep-mates).
    nth: usize,
}

/// The perturbations made so far: each a changed copy of the entry alone.
pub(super) struct Perturbs<'a> {
    base: &'a Expectations,
    out: Vec<(String, Expectations)>,
}

impl Perturbs<'_> {
    /// A copy of the entry alone, changed by `f`, described by `change`.
    fn with(&mut self, change: String, f: &mut dyn FnMut(&mut Expectations)) {
        let mut e = self.base.clone();
        f(&mut e);
        self.out.push((change, e));
    }
}

/// The perturbations of `entry` that should fail it, given its baseline `rows` (all passing).
pub(super) fn perturb(
    entry: &Entry,
    rows: &[ExpectationResult],
    o: &Observation,
    duration: Duration,
) -> Vec<(String, Expectations)> {
    let Some(b) = rows.first() else {
        return Vec::new();
    };
    let cx = Cx {
        base: &entry.alone,
        b,
        rows,
        o,
        duration,
        nth: entry.nth,
    };
    let mut p = Perturbs {
        base: &entry.alone,
        out: Vec::new(),
    };
    match entry.kind {
        ExpectKind::Transition => timeline::transition(&mut p, &cx),
        ExpectKind::Metric => timeline::metric(&mut p, &cx),
        ExpectKind::NoTransition => timeline::no_transition(&mut p, &cx),
        ExpectKind::ProbeSpacing => timeline::probe_spacing(&mut p, &cx),
        ExpectKind::Recovered => timeline::recovered(&mut p, &cx),
        ExpectKind::Dashboard => timeline::dashboard(&mut p, &cx),
        ExpectKind::Alert => timeline::alert(&mut p, &cx),
        ExpectKind::Attempts => upstream::attempts(&mut p, &cx),
        ExpectKind::FirstRequest => upstream::first_request(&mut p, &cx),
        ExpectKind::NoRequest => upstream::no_request(&mut p, &cx),
        ExpectKind::RetryGaps => upstream::retry_gaps(&mut p, &cx),
        ExpectKind::GatewayDecision => gateway::gateway_decision(&mut p, &cx),
        ExpectKind::GatewayCooldown => gateway::gateway_cooldown(&mut p, &cx),
        ExpectKind::Turn => gateway::turn(&mut p, &cx),
        ExpectKind::Cooldown => turns::cooldown(&mut p, &cx),
        ExpectKind::PerTurn => turns::per_turn(&mut p, &cx),
        ExpectKind::Fleet | ExpectKind::Drift | ExpectKind::FaultApplied => {}
    }
    p.out
}

#[cfg(test)]
mod tests;
