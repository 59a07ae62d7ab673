//! The report model: exactly what `report.json` holds (`docs/report.schema.json` is its JSON
//! Schema). The Markdown and HTML renderers read only this, so `rehearse report RUN_DIR` can
//! re-render them from the JSON. Measured floats are written rounded to 3 decimals.
//!
//! Time base: every time and duration here is scenario time (ms since the run start as the
//! scenario file counts it, i.e. wall clock × speed) unless its name says `wall`; a report
//! written before that rule has no `time_base` and is read as wall clock.
//!
//! Its parts live beside it and are re-exported here: a run's status and stop (`status.rs`), the
//! A/B numbers of a policy run (`summary.rs`), fault windows (`fault_window.rs`), the target
//! block (`target.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::fault_window::{FaultHit, FaultWindow};
pub(crate) use super::marks::Marks;
pub use super::status::{PolicyStatus, Stopped, TrafficInfo};
pub use super::summary::{DeadlineRange, HealthRow, Latency, Summary};
pub(crate) use super::target::{
    CooldownRow, TargetReport, TurnRow, UserConfigReport, WarmupReport, WarmupTurnRow,
};
use crate::exit::{CmdError, CmdResult, Status};
use crate::scrape::{Disagreement, RatePoint, StatePoint, Transition};
use crate::util::round::ser3;
use crate::util::speed::RecordedSpeed;
pub use crate::verdict::ExpectStatus;
use crate::verdict::ExpectationResult;

/// The report.json schema version; bump on an incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// The overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every expectation held in every policy run.
    Pass,
    /// The rehearsal ran and at least one expectation failed.
    Fail,
    /// The run was stopped early (signal); `reason` says why.
    Incomplete,
    /// The harness failed; `reason` says how.
    Error,
}

impl Verdict {
    /// `pass`, `fail`, `incomplete` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Incomplete => "incomplete",
            Self::Error => "error",
        }
    }

    /// The command result this verdict exits with (docs/cli.md): pass 0, fail 1, incomplete 3, and
    /// error 3 as a harness failure naming `reason`. `rehearse run` and `rehearse report` share it.
    pub fn into_result(self, reason: Option<&str>) -> CmdResult {
        match self {
            Self::Pass => Ok(Status::Pass),
            Self::Fail => Ok(Status::Fail),
            Self::Incomplete => Ok(Status::Incomplete),
            Self::Error => Err(CmdError::harness_said(&format!(
                "the harness failed: {}",
                reason.unwrap_or("unknown error")
            ))),
        }
    }
}

/// The clock a report's times are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeBase {
    /// Scenario time: what the scenario file says (wall clock × speed).
    Scenario,
    /// Wall clock since the run start (reports written before the scenario-time rule).
    Wall,
}

impl TimeBase {
    /// What a report without a `time_base` key was written in.
    pub(crate) fn legacy() -> Self {
        Self::Wall
    }
}

/// One auth profile: its id, the dep its model endpoint is (`PROVIDER/REGION/FP`, the breaker
/// key and lane name) and its provider. The credential itself is never here, only its
/// fingerprint inside `dep`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileInfo {
    /// The profile id (`openai-codex:default`).
    pub id: String,
    /// The dep (`openai-codex/default/06bfb5`).
    pub dep: String,
    /// The provider (`openai-codex`).
    pub provider: String,
    /// The endpoint region.
    pub region: String,
    /// True for a provider's implicit `PROVIDER:default` profile (not in the scenario file).
    #[serde(default)]
    pub implicit: bool,
}

/// report.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Scenario name.
    pub scenario: String,
    /// Scenario description, if any.
    #[serde(default)]
    pub description: Option<String>,
    /// pass | fail | incomplete | error.
    pub verdict: Verdict,
    /// Why the run is incomplete or errored (null otherwise).
    #[serde(default)]
    pub reason: Option<String>,
    /// Set when a signal stopped the run before `duration` (null otherwise).
    #[serde(default)]
    pub stopped: Option<Stopped>,
    /// Run start, RFC 3339 UTC (`2026-11-29T18:55:00.123Z`).
    pub started_at: String,
    /// Planned scenario duration, ms (scenario time).
    #[serde(default)]
    pub duration_ms: u64,
    /// The clock every time in this report is in.
    #[serde(default = "TimeBase::legacy")]
    pub time_base: TimeBase,
    /// The scenario's auth profiles: id → dep → provider.
    #[serde(default)]
    pub profiles: Vec<ProfileInfo>,
    /// The `--speed` divisor, as the run recorded it (a number; a report from before the
    /// bounds may hold one outside them, see [`RecordedSpeed`]).
    pub speed: RecordedSpeed,
    /// The seed.
    pub seed: u64,
    /// Host and TCP stack facts (from `host::fingerprint`).
    pub host: serde_json::Value,
    /// The replayed traffic file and how much of it `duration` cut.
    #[serde(default)]
    pub traffic: Option<TrafficInfo>,
    /// One entry per policy run, in run order; policies that never started are listed with
    /// status `not_run`.
    pub policies: Vec<PolicyReport>,
    /// Replay schedule accuracy over all policy runs.
    pub replay: ReplayInfo,
    /// Host facts that contradict the scenario's timing (e.g. a TCP timer above a tolerance).
    #[serde(default)]
    pub contradictions: Vec<serde_json::Value>,
    /// What the harness says about the run itself, one sentence each (macOS: no no-sleep
    /// assertion because `caffeinate` was missing); absent when there is nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The effective scenario/engine configuration.
    pub config: serde_json::Value,
    /// Fleet mode: per-host lanes, fleet-wide probe arrivals and the fleet checks per
    /// coordination run (absent for a single-engine run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<crate::report::fleet_model::FleetSection>,
    /// The system under test when it is not the embedded engine (`null` for the engine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetReport>,
    /// OpenClaw versions side by side (`[target] versions`): every version's gateway and the
    /// behaviour-diff table; `target` is then the first version's block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<crate::report::versions_model::VersionsSection>,
    /// One scenario against several `--target` files side by side: every arm (its target
    /// file, kind, gateway, version, its target's verdict) and the side-by-side table; `target`
    /// is then the first gateway arm's block (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<crate::report::targets_model::TargetsSection>,
    /// The rehearse version that wrote the report (absent in reports written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rehearse_version: Option<String>,
    /// The scenario's digest (`sha256:…` over the scenario file and the files it names,
    /// `scenario::digest`): drift compares only runs of the same digest (absent in reports
    /// written before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_digest: Option<String>,
    /// The `--target FILE` that replaced the scenario's `[target]`: its path as given and its
    /// digest (absent when the scenario's own target ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_file: Option<crate::scenario::target_file::TargetFileUsed>,
    /// "Since the last runs": the key figures against the previous runs (absent in reports
    /// written before it, and in `rehearse report` re-renders of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<crate::report::drift::DriftSection>,
    /// What the run did after its report: retention, batch-job metrics, `--on-fail`
    /// (absent when none of it was asked for and nothing went wrong).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub housekeeping: Option<crate::report::housekeeping::Housekeeping>,
}

/// One policy run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyReport {
    /// `legacy` or `retry-gate`.
    pub policy: String,
    /// True when every expectation of this run held (false when stopped early or not run).
    pub ok: bool,
    /// pass | fail | incomplete | not_run.
    pub status: PolicyStatus,
    /// The checked expectations.
    pub expectations: Vec<ExpectationResult>,
    /// Observed breaker transitions, time-ordered (timed by [`PolicyReport::transition_times`]).
    pub transitions: Vec<Transition>,
    /// The one source of the transitions' times, used by the timeline and the diff alike.
    #[serde(default)]
    pub transition_times: TransitionTimes,
    /// Where events.jsonl and the scrapes disagree (empty when they agree, or when there was no
    /// event log to compare).
    #[serde(default)]
    pub disagreements: Vec<Disagreement>,
    /// The A/B numbers.
    pub summary: Summary,
    /// Per dep, breaker state as a step function from t = 0 (for the timeline).
    #[serde(default)]
    pub breaker_states: BTreeMap<String, Vec<StatePoint>>,
    /// Request and error rate per scrape interval (per second of scenario time).
    #[serde(default)]
    pub rates: Vec<RatePoint>,
    /// Fault windows with their scope and where they applied.
    #[serde(default)]
    pub fault_windows: Vec<FaultWindow>,
    /// This run's replay schedule accuracy.
    #[serde(default)]
    pub replay: Option<ReplayInfo>,
    /// Scrape health.
    #[serde(default)]
    pub scrapes: ScrapeStats,
    /// Run length actually observed, ms (scenario time).
    #[serde(default)]
    pub elapsed_ms: u64,
    /// The same run length on the wall clock, ms.
    #[serde(default)]
    pub wall_elapsed_ms: u64,
    /// Retry-After deadlines, cooldowns, rotations, retries and fallbacks (from the events).
    #[serde(default)]
    pub marks: Marks,
    /// Set when this run was stopped early: run ms (as `elapsed_ms`) of the stop.
    #[serde(default)]
    pub stopped_at_ms: Option<u64>,
    /// Synthetic health checks per dep.
    #[serde(default)]
    pub health: BTreeMap<String, HealthRow>,
    /// Set when the upstream recorder reached its cap: the model requests after it are in
    /// upstream.jsonl only, and the expectations judged at the upstream past it are
    /// `not_reached` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_cap: Option<UpstreamCap>,
    /// Set when this run, though it ran to its end, gave nothing to judge: its system under
    /// test sent no request to the upstream, or no expectation applies to it. It is then
    /// never a pass (`incomplete`, unless a row failed); this says why (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unjudged: Option<String>,
    /// The arm's key figures (`report::figures`; absent in reports written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<crate::report::figures::KeyFigures>,
    /// With `[prometheus]`: the alert table (one row per `[[expect.alert]]`) and the alerts
    /// lane (pending and firing spells, notification arrivals), scenario ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alerts: Option<crate::verdict::alert_eval::AlertsPart>,
    /// What the upstream saw, as the picture's request lanes (`report::requests`; absent in
    /// reports written before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<crate::report::requests::RequestLanes>,
    /// The turns in the upstream's record (`verdict::turns`): each turn's requests, profiles
    /// and models, the one that answered, retries, time to answer; the requests with no turn
    /// (absent in reports written before turns were marked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<crate::verdict::turns::TurnsPart>,
    /// The embedded engine's turns as its client saw them — each model call of the traffic,
    /// how the engine's call ended (`answered`, `http_error`, `truncated`, `timed_out`,
    /// `unfinished`), its latency, model and profile — in the shape of a gateway's
    /// `target.turns`; kept when the scenario has `[[expect.turn]]` rows (absent otherwise, for
    /// the other kinds and in older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_turns: Vec<TurnRow>,
}

impl PolicyReport {
    /// The section of an arm named `arm` with `expectations` and nothing observed (status
    /// `not_run` until judged): a run that never started, and the base every test builds on.
    pub fn empty(arm: &str, expectations: Vec<crate::verdict::ExpectationResult>) -> Self {
        Self {
            policy: arm.to_string(),
            ok: false,
            status: PolicyStatus::NotRun,
            expectations,
            transitions: Vec::new(),
            transition_times: Default::default(),
            disagreements: Vec::new(),
            summary: Default::default(),
            breaker_states: Default::default(),
            rates: Vec::new(),
            fault_windows: Vec::new(),
            replay: None,
            scrapes: Default::default(),
            elapsed_ms: 0,
            wall_elapsed_ms: 0,
            marks: Default::default(),
            stopped_at_ms: None,
            health: Default::default(),
            upstream_cap: None,
            unjudged: None,
            figures: None,
            alerts: None,
            requests: None,
            turns: None,
            client_turns: Vec::new(),
        }
    }
}

/// Where a policy run's transition times come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TransitionTimes {
    /// The engine's events (events.jsonl): the exact instant of each change. What runs use; the
    /// scrapes are then checked against it ([`PolicyReport::disagreements`]).
    #[serde(rename = "events.jsonl")]
    EventLog,
    /// Derived from the scrapes (counter deltas, timestamp gauges): only when there is no event
    /// log (reports built from scrapes alone, and report.json files older than this field).
    #[default]
    #[serde(rename = "scrape")]
    Scrape,
}


/// Replay schedule accuracy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayInfo {
    /// Requests sent.
    pub sent: u64,
    /// Send time minus intended time.
    pub lag_ms: Lag,
}

/// Lag quantiles, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Lag {
    /// Median.
    #[serde(serialize_with = "ser3")]
    pub p50: f64,
    /// 99th percentile.
    #[serde(serialize_with = "ser3")]
    pub p99: f64,
    /// Maximum.
    #[serde(serialize_with = "ser3")]
    pub max: f64,
}

/// Where the upstream recorder's cap cut what a run kept in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamCap {
    /// Model requests kept (the cap).
    pub kept: u64,
    /// Model requests left out.
    pub dropped: u64,
    /// Scenario ms of the first request left out.
    pub at_ms: u64,
}

impl UpstreamCap {
    /// The report's line about it.
    pub(crate) fn line(&self) -> String {
        format!(
            "the run kept its first {} model requests at the upstream (its cap) and left {} out \
             from {}: upstream.jsonl holds them all; expectations judged at the upstream past the \
             cut are not reached",
            self.kept,
            self.dropped,
            crate::verdict::secs(i64::try_from(self.at_ms).unwrap_or(i64::MAX))
        )
    }
}

/// Scrape health of one policy run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScrapeStats {
    /// Successful scrapes.
    pub ok: u64,
    /// Failed scrapes (connection, status, parse).
    pub failures: u64,
    /// The last failure, if any.
    pub last_error: Option<String>,
}

impl ReplayInfo {
    /// Combines several runs: sent summed, lags the worst of the runs.
    pub fn combine(runs: &[ReplayInfo]) -> ReplayInfo {
        let mut out = ReplayInfo::default();
        for r in runs {
            out.sent += r.sent;
            out.lag_ms.p50 = out.lag_ms.p50.max(r.lag_ms.p50);
            out.lag_ms.p99 = out.lag_ms.p99.max(r.lag_ms.p99);
            out.lag_ms.max = out.lag_ms.max.max(r.lag_ms.max);
        }
        out
    }
}

impl Report {
    /// Fills in what a report.json written before `status` existed lacks, so `rehearse report`
    /// still re-renders it: each expectation's `status` from its `ok`, each policy's from its
    /// `ok`. Leaves present values alone.
    pub fn upgrade_json(v: &mut serde_json::Value) {
        let Some(policies) = v.get_mut("policies").and_then(|p| p.as_array_mut()) else {
            return;
        };
        let status = |ok: bool| if ok { "pass" } else { "fail" };
        for p in policies.iter_mut().filter_map(|p| p.as_object_mut()) {
            let ok = p.get("ok").and_then(|o| o.as_bool()).unwrap_or(false);
            p.entry("status").or_insert_with(|| status(ok).into());
            let exps = p.get_mut("expectations").and_then(|e| e.as_array_mut());
            for e in exps.into_iter().flatten().filter_map(|e| e.as_object_mut()) {
                let ok = e.get("ok").and_then(|o| o.as_bool()).unwrap_or(false);
                e.entry("status").or_insert_with(|| status(ok).into());
            }
        }
    }
}
