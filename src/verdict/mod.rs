//! The diff of expected against observed behaviour (pure, no I/O): expected breaker transitions
//! per dep in order with tolerances, metric bounds on the final scrape, deps that must never
//! transition, and half-open probe spacing at the upstream. Every result carries one line that
//! says what was expected, what was observed and the delta, and a status: pass, fail, or — in a
//! run stopped early — not_reached ([`reach`]). A row's times may count from a fault's start or
//! end instead of the run start ([`anchor`]). A gateway's answers are judged against what the
//! upstream served for each turn ([`answers`], [`answer_rows`]). A profile's cooldowns
//! ([`cooldown`]) and what each turn cost ([`per_turn`]) are judged on the upstream's turns
//! ([`turns`], [`turn_facts`]).
//!
//! Time base: the checks compare wall-clock times (ms since the run start at `--speed`, what the
//! harness measured, against the scenario's times divided by the speed), but every string and
//! number a result carries is *scenario time* (what the scenario file says): the verdict does not
//! depend on the base the report speaks in.

pub(crate) mod alert;
pub(crate) mod anchor;
pub mod answers;
pub(crate) mod answer_rows;
pub(crate) mod alert_rules;
pub(crate) mod cooldown;
pub mod alert_eval;
pub mod baseline;
pub mod diff;
pub mod drift;
pub(crate) mod expect;
mod expect_validate;
pub(crate) mod explain;
pub(crate) mod gateway_eval;
pub(crate) mod per_turn;
pub(crate) mod ground;
pub(crate) mod ground_eval;
mod ground_validate;
pub mod probe_spacing;
pub mod reach;
pub(crate) mod turn;
pub(crate) mod turn_facts;
pub mod turns;
pub mod witness;

use serde::{Deserialize, Serialize};

pub use diff::{diff, diff_until};
pub use expect::{
    ExpectFleet, ExpectMetric, ExpectNoTransition, ExpectProbeSpacing, ExpectTransition,
    Expectations,
};
pub use expect_validate::ExpectError;
pub use probe_spacing::ProbeArrival;
pub use witness::Witness;

/// Which kind of expectation a result is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectKind {
    /// `[[expect.transition]]` (and unexpected extra transitions of a dep that has some).
    Transition,
    /// `[[expect.metric]]`.
    Metric,
    /// `[[expect.no_transition]]`.
    NoTransition,
    /// `[[expect.probe_spacing]]`.
    ProbeSpacing,
    /// `[[expect.fleet]]` (fleet mode).
    Fleet,
    /// `[[expect.attempts]]` (upstream ground truth).
    Attempts,
    /// `[[expect.first_request]]` (upstream ground truth).
    FirstRequest,
    /// `[[expect.no_request]]` (upstream ground truth).
    NoRequest,
    /// `[[expect.retry_gaps]]` (upstream ground truth).
    RetryGaps,
    /// `[[expect.recovered]]` (upstream ground truth).
    Recovered,
    /// `[[expect.openclaw_decision]]` (an OpenClaw target's log).
    #[serde(rename = "openclaw_decision")]
    GatewayDecision,
    /// `[[expect.openclaw_cooldown]]` (an OpenClaw target's auth state).
    #[serde(rename = "openclaw_cooldown")]
    GatewayCooldown,
    /// A `[[fault]]` that no run of the scenario applied (and that is not `optional`).
    FaultApplied,
    /// `[[expect.turn]]` (an external target's turns).
    Turn,
    /// `[[expect.cooldown]]` (a profile's cooldowns in the upstream's turns).
    Cooldown,
    /// `[[expect.per_turn]]` (each turn's requests and answer in the upstream's turns).
    PerTurn,
    /// `[[expect.drift]]` (a key figure against the median of the runs before).
    Drift,
    /// `[[expect.alert]]` (Prometheus's `ALERTS` and the receiver's log).
    Alert,
    /// `[[expect.dashboard]]` (a breaker transition queryable in Prometheus).
    Dashboard,
}

impl ExpectKind {
    /// The snake_case name used in report.json.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Transition => "transition",
            Self::Metric => "metric",
            Self::NoTransition => "no_transition",
            Self::ProbeSpacing => "probe_spacing",
            Self::Fleet => "fleet",
            Self::Attempts => "attempts",
            Self::FirstRequest => "first_request",
            Self::NoRequest => "no_request",
            Self::RetryGaps => "retry_gaps",
            Self::Recovered => "recovered",
            Self::GatewayDecision => "openclaw_decision",
            Self::GatewayCooldown => "openclaw_cooldown",
            Self::FaultApplied => "fault_applied",
            Self::Turn => "turn",
            Self::Cooldown => "cooldown",
            Self::PerTurn => "per_turn",
            Self::Drift => "drift",
            Self::Alert => "alert",
            Self::Dashboard => "dashboard",
        }
    }
}

/// Where one expectation stands after a run (report.json `expectations[].status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectStatus {
    /// It held.
    Pass,
    /// It did not hold, and the run got far enough to say so.
    Fail,
    /// The run stopped before the expectation was due (its time plus tolerance lies after the
    /// stop, or it is judged at the end of the run): neither a pass nor a failure.
    NotReached,
    /// A `[[expect.drift]]` row with too few earlier runs to compare with: neither a pass nor
    /// a failure, and, unlike `not_reached`, it never keeps a run from passing.
    NoBaseline,
}

impl ExpectStatus {
    /// `pass`, `fail` or `not_reached`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::NotReached => "not_reached",
            Self::NoBaseline => "no_baseline",
        }
    }

    /// The status of a finished run's check: pass when it held, else fail.
    pub(crate) fn from_ok(ok: bool) -> Self {
        if ok { Self::Pass } else { Self::Fail }
    }
}

/// One checked expectation (a row of report.json `expectations[]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpectationResult {
    /// What kind of expectation.
    pub kind: ExpectKind,
    /// The dep it is about (`null` for metrics).
    pub dep: Option<String>,
    /// The metric selector a metric expectation sums (`null` for the other kinds).
    #[serde(default)]
    pub series: Option<String>,
    /// The expectation, short (`closed→open at 22.000s ±3.000s`, `= 0`).
    pub expected: String,
    /// What was observed, short (`26.120s`, `missing`, `3`).
    pub observed: String,
    /// The expected time in ms of scenario time, for kinds with times: a transition's due time
    /// since the run start, a probe spacing's minimum gap (null otherwise, and for a transition
    /// at any time).
    #[serde(default)]
    pub expected_ms: Option<i64>,
    /// The observed time in ms of scenario time: a matched or unexpected transition's time since
    /// the run start, the first transition of a `no_transition` dep, the smallest probe gap (null
    /// otherwise).
    #[serde(default)]
    pub observed_ms: Option<i64>,
    /// observed − expected in ms of scenario time, for timed expectations that matched something.
    pub delta_ms: Option<i64>,
    /// The allowed deviation in ms of scenario time (after the 20 ms wall-clock floor): ± around
    /// a transition's due time, the slack below a probe spacing's minimum (null when there is
    /// none).
    #[serde(default)]
    pub tolerance_ms: Option<i64>,
    /// Whether it held (false for `not_reached`: it was not shown to hold).
    pub ok: bool,
    /// pass | fail | not_reached (an interrupted run never reached its due time).
    pub status: ExpectStatus,
    /// The one-line explanation.
    pub detail: String,
    /// What it was judged on and how much of it ([`witness`]): absent in reports written before
    /// witnesses (read as empty; such a report keeps its verdict when re-rendered).
    #[serde(default)]
    pub witness: Witness,
}

/// `expected` of a row for an observed transition no expectation matched.
pub const UNEXPECTED: &str = "none";

impl ExpectationResult {
    /// A row of `kind` about `dep` with no times, failed until its judge settles it (`ok`,
    /// `status`, `detail`): the rows judged on counts (at the upstream, on turns).
    pub(crate) fn counted(
        kind: ExpectKind,
        dep: String,
        expected: String,
        observed: String,
    ) -> ExpectationResult {
        ExpectationResult {
            witness: Default::default(),
            kind,
            dep: Some(dep),
            series: None,
            expected,
            observed,
            expected_ms: None,
            observed_ms: None,
            delta_ms: None,
            tolerance_ms: None,
            ok: false,
            status: ExpectStatus::Fail,
            detail: String::new(),
        }
    }

    /// True for a row that reports an unexpected observed transition rather than checking an
    /// expectation of the scenario (such rows always fail).
    pub(crate) fn is_unexpected(&self) -> bool {
        self.kind == ExpectKind::Transition && self.expected == UNEXPECTED
    }
}

pub use crate::util::units::{secs, signed_secs};
