//! Expectations as written in a scenario's `[expect]` table (docs/scenario.md): `[[expect.transition]]`,
//! `[[expect.metric]]`, `[[expect.no_transition]]` and `[[expect.probe_spacing]]` (the
//! upstream's and OpenClaw's tables are in [`super::ground`], `[[expect.turn]]` in
//! [`super::turn`]). Unknown keys
//! are rejected; durations are humantime strings (`"22s"`, `"300ms"`). What serde cannot check
//! is [`super::expect_validate`]; the rows that apply to one run are picked here.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::engine::events::BreakerState;
use crate::scrape::Selector;

use super::alert::{ExpectAlert, ExpectDashboard};
use super::ground::{
    ExpectAttempts, ExpectFirstRequest, ExpectGatewayCooldown, ExpectGatewayDecision,
    ExpectNoRequest, ExpectRecovered, ExpectRetryGaps,
};
use super::turn::ExpectTurn;

/// Default tolerance of a transition expectation without `tolerance`.
pub(crate) const DEFAULT_TOLERANCE: Duration = Duration::from_secs(1);

/// The whole `[expect]` table of a scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// `[[expect.transition]]`, in file order (per dep, the expected order).
    #[serde(default)]
    pub transition: Vec<ExpectTransition>,
    /// `[[expect.metric]]`, checked against the final scrape.
    #[serde(default)]
    pub metric: Vec<ExpectMetric>,
    /// `[[expect.no_transition]]`.
    #[serde(default)]
    pub no_transition: Vec<ExpectNoTransition>,
    /// `[[expect.probe_spacing]]`, checked against the upstream's probe arrival times.
    #[serde(default)]
    pub probe_spacing: Vec<ExpectProbeSpacing>,
    /// `[[expect.fleet]]`: fleet mode only, checked against every host and the upstream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fleet: Vec<ExpectFleet>,
    /// `[[expect.attempts]]`, from the upstream's records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<ExpectAttempts>,
    /// `[[expect.first_request]]`, from the upstream's records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_request: Vec<ExpectFirstRequest>,
    /// `[[expect.no_request]]`, from the upstream's records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_request: Vec<ExpectNoRequest>,
    /// `[[expect.retry_gaps]]`, from the upstream's records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retry_gaps: Vec<ExpectRetryGaps>,
    /// `[[expect.recovered]]`, from the upstream's records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<ExpectRecovered>,
    /// `[[expect.openclaw_decision]]`, from an OpenClaw target's log.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub openclaw_decision: Vec<ExpectGatewayDecision>,
    /// `[[expect.openclaw_cooldown]]`, from an OpenClaw target's auth state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub openclaw_cooldown: Vec<ExpectGatewayCooldown>,
    /// `[[expect.turn]]`, from the turns sent to an external target.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turn: Vec<ExpectTurn>,
    /// `[[expect.cooldown]]`, a profile's cooldowns read from the upstream's turns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cooldown: Vec<super::cooldown::ExpectCooldown>,
    /// `[[expect.per_turn]]`, what each turn cost and who answered it, from the upstream's
    /// turns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_turn: Vec<super::per_turn::ExpectPerTurn>,
    /// `[[expect.drift]]`, a key figure against the median of the runs before (judged when the
    /// report is finished, `history::drift`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drift: Vec<super::drift::ExpectDrift>,
    /// `[[expect.alert]]`, from Prometheus's `ALERTS` and the receiver's log.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alert: Vec<ExpectAlert>,
    /// `[[expect.dashboard]]`, from Prometheus's `breaker_transitions_total`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dashboard: Vec<ExpectDashboard>,
}

/// One expected breaker transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectTransition {
    /// The dep (breaker key).
    pub dep: String,
    /// State before.
    pub from: BreakerState,
    /// State after.
    pub to: BreakerState,
    /// Time from run start (at speed 1), or from the `since` anchor.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub at: Option<Duration>,
    /// Count `at` from a fault's start or end instead of the run start ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<super::anchor::Since>,
    /// Time after the previous expected transition of this dep (anchored on its observed time).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub after: Option<Duration>,
    /// Allowed |observed − expected| (at speed 1; default 1 s; never below 20 ms after scaling).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance: Option<Duration>,
    /// Only for this policy run (`legacy`, `retry-gate`); all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// A bound on a metric series (summed by its selector) at the final scrape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectMetric {
    /// The selector, e.g. `profile_cooldowns_total{reason="timeout"}`.
    pub series: Selector,
    /// Exactly this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<f64>,
    /// At least this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    /// At most this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
    /// Only for this policy run; all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// A dep whose breaker must never change state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectNoTransition {
    /// The dep.
    pub dep: String,
    /// Only for this policy run; all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// Half-open probes of a dep (requests carrying `X-Breaker-Probe`) must arrive at least `min`
/// apart at the upstream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectProbeSpacing {
    /// The dep.
    pub dep: String,
    /// Minimum gap between consecutive probe arrivals (at speed 1).
    #[serde(with = "humantime_serde")]
    pub min: Duration,
    /// Slack subtracted from `min` (scaled, floored at 20 ms when given; none by default).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance: Option<Duration>,
    /// Only for this policy run; all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// What a fleet run must show for one dep (docs/coordinator.md): every bound given is checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectFleet {
    /// The dep.
    pub dep: String,
    /// At most this many probes at the upstream inside any one probe interval, all hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_probes_per_interval: Option<u64>,
    /// At most this many probes from one host inside any one probe interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_probes_per_host_per_interval: Option<u64>,
    /// At least this many probes inside some probe interval (the storm a run must show).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_probes_per_interval: Option<u64>,
    /// Every close comes after probe successes from at least this many distinct hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_close_hosts: Option<u64>,
    /// Hosts enter each breaker state within this of each other (at speed 1).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub agree_within: Option<Duration>,
    /// At most this many probes in one half-open spell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_probes_per_spell: Option<u64>,
    /// After each coordinator outage (`down` fault), every host is back on the coordinator
    /// within this of its return (at speed 1); the outage must have happened.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub rejoin_within: Option<Duration>,
    /// Only for this coordination run; all runs when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

fn applies(policy: &Option<String>, run: &[&str]) -> bool {
    policy.as_deref().is_none_or(|p| run.contains(&p))
}

impl Expectations {
    /// The expectations that apply to the run of `policy`.
    pub fn for_policy(&self, policy: &str) -> Expectations {
        self.for_run(&[policy])
    }

    /// The expectations that apply to a run known by any of `names` (a fleet's coordination
    /// run also runs the scenario's one policy).
    pub(crate) fn for_run(&self, names: &[&str]) -> Expectations {
        let policy = names;
        Expectations {
            transition: self
                .transition
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            metric: self
                .metric
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            no_transition: self
                .no_transition
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            probe_spacing: self
                .probe_spacing
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            fleet: self
                .fleet
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            attempts: self
                .attempts
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            first_request: self
                .first_request
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            no_request: self
                .no_request
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            retry_gaps: self
                .retry_gaps
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            recovered: self
                .recovered
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            openclaw_decision: self
                .openclaw_decision
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            openclaw_cooldown: self
                .openclaw_cooldown
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            turn: self
                .turn
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            cooldown: self
                .cooldown
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            per_turn: self
                .per_turn
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            drift: self
                .drift
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            alert: self
                .alert
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
            dashboard: self
                .dashboard
                .iter()
                .filter(|e| applies(&e.policy, policy))
                .cloned()
                .collect(),
        }
    }

    /// Every run an expectation is scoped to (`policy`, `version`), in no particular order.
    pub(crate) fn scoped_runs(&self) -> Vec<String> {
        let e = self;
        let mut out: Vec<&Option<String>> = Vec::new();
        out.extend(e.transition.iter().map(|x| &x.policy));
        out.extend(e.metric.iter().map(|x| &x.policy));
        out.extend(e.no_transition.iter().map(|x| &x.policy));
        out.extend(e.probe_spacing.iter().map(|x| &x.policy));
        out.extend(e.fleet.iter().map(|x| &x.policy));
        out.extend(e.attempts.iter().map(|x| &x.policy));
        out.extend(e.first_request.iter().map(|x| &x.policy));
        out.extend(e.no_request.iter().map(|x| &x.policy));
        out.extend(e.retry_gaps.iter().map(|x| &x.policy));
        out.extend(e.recovered.iter().map(|x| &x.policy));
        out.extend(e.openclaw_decision.iter().map(|x| &x.policy));
        out.extend(e.openclaw_cooldown.iter().map(|x| &x.policy));
        out.extend(e.turn.iter().map(|x| &x.policy));
        out.extend(e.cooldown.iter().map(|x| &x.policy));
        out.extend(e.per_turn.iter().map(|x| &x.policy));
        out.extend(e.drift.iter().map(|x| &x.policy));
        out.extend(e.alert.iter().map(|x| &x.policy));
        out.extend(e.dashboard.iter().map(|x| &x.policy));
        let mut names: Vec<String> = out.into_iter().flatten().cloned().collect();
        names.sort();
        names.dedup();
        names
    }

    /// How many expectations (tables) there are.
    pub(crate) fn len(&self) -> usize {
        self.transition.len()
            + self.metric.len()
            + self.no_transition.len()
            + self.probe_spacing.len()
            + self.fleet.len()
            + self.attempts.len()
            + self.first_request.len()
            + self.no_request.len()
            + self.retry_gaps.len()
            + self.recovered.len()
            + self.openclaw_decision.len()
            + self.openclaw_cooldown.len()
            + self.turn.len()
            + self.cooldown.len()
            + self.per_turn.len()
            + self.drift.len()
            + self.alert.len()
            + self.dashboard.len()
    }

    /// True when there is nothing to check.
    pub(crate) fn is_empty(&self) -> bool {
        self.transition.is_empty()
            && self.metric.is_empty()
            && self.no_transition.is_empty()
            && self.probe_spacing.is_empty()
            && self.fleet.is_empty()
            && !self.has_ground()
            && !self.has_gateway()
            && self.turn.is_empty()
            && self.cooldown.is_empty()
            && self.per_turn.is_empty()
            && self.drift.is_empty()
            && self.alert.is_empty()
            && self.dashboard.is_empty()
    }
}
