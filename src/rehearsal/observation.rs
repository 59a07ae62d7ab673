//! What one system under test observed: the one type every kind of run hands the judge.
//!
//! An [`Observation`] is one arm of the scenario — a policy of the embedded engine, a gateway's
//! one run, a fleet's coordination — and [`Observed`] is the whole run: its arms in order, how
//! it ended and the kind's own report part ([`KindPart`]). Each kind fills these and nothing
//! else ([`crate::rehearsal::embedded::arms`], [`crate::rehearsal::gateway::run`], `crate::rehearsal::fleet::arms`);
//! [`crate::rehearsal::assemble`] then judges every arm once and builds the one report. A new thing every
//! run observes is one field here and its use in [`crate::rehearsal::assemble::section`]; a fourth kind of
//! system is one more producer of `Observed` (and, when it has a report part of its own, one
//! more [`KindPart`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::rehearsal::arm::recorder::KeptRecords;
use crate::gateway::openclaw::{AuthState, LoggedDecision};
use crate::report::fleet_model::FleetSection;
use crate::report::model::{FaultHit, Latency, Marks, ReplayInfo, TargetReport, TurnRow};
use crate::scrape::{CompactScrapes, Exposition, Transition};
use crate::util::speed::Speed;
use crate::verdict::{ExpectationResult, ProbeArrival};

/// Per fault table: how many requests it applied to, and the kept hits.
pub type Hits = BTreeMap<usize, (u64, Vec<FaultHit>)>;

/// Everything one arm (a policy, a coordination or a gateway run) observed.
#[derive(Debug)]
pub struct Observation {
    /// The arm's name: the policy (`retry-gate`), the coordination (`none`, `redis`) or the
    /// gateway kind (`openclaw`, `http`); its section is named after it.
    pub arm: String,
    /// Wall ms the arm ran.
    pub elapsed_ms: u64,
    /// The speed the arm ran at (scenario ms = wall ms × speed).
    pub speed: Speed,
    /// The scrape interval at the run's speed, ms.
    pub scrape_interval_ms: u64,
    /// What was kept of the scrapes (a fleet's: host `h0`'s; a gateway without a metrics
    /// endpoint: none).
    pub scrapes: CompactScrapes,
    /// The exposition the end-of-run checks read in place of the last scrape (a fleet's: every
    /// host's final scrape merged).
    pub final_exposition: Option<Exposition>,
    /// What the engine's events said, when the system has an engine of ours (embedded, fleet
    /// hosts); `None` for a gateway.
    pub engine: Option<EngineObserved>,
    /// Upstream arrivals of breaker probes (canaries left out).
    pub arrivals: Vec<ProbeArrival>,
    /// Where each fault applied.
    pub fault_hits: Hits,
    /// The replay's schedule accuracy (a fleet's: its slowest host's lag).
    pub replay: ReplayInfo,
    /// Replayed requests (or turns) that failed.
    pub failed_requests: u64,
    /// Requests that ended in a user-visible error.
    pub user_visible_errors: u64,
    /// Canary calls and failures per dep.
    pub canaries: BTreeMap<String, (u64, u64)>,
    /// The model requests the one upstream recorder kept (and where its cap cut them).
    pub upstream: KeptRecords,
    /// A gateway's own decisions and state, read after its stop.
    pub gateway: Option<GatewayObserved>,
    /// The embedded engine's turns as its client saw them (each model call of the traffic,
    /// its answer checked against the upstream's record), kept when the scenario has
    /// `[[expect.turn]]` rows; `None` otherwise and for the other kinds (a gateway's turns are
    /// `gateway.turns`; a fleet's hosts report none).
    pub client_turns: Option<Vec<TurnRow>>,
    /// Rows the kind judged from what only it observed (a fleet's `[[expect.fleet]]`).
    pub kind_rows: Vec<ExpectationResult>,
    /// Read-failure diagnostics for the report's config, when the kind counts them.
    pub read_failures: Option<serde_json::Value>,
    /// The stop request (or harness failure) that cut the arm short.
    pub stopped: Option<String>,
    /// The harness failure that ended the arm, when one did.
    pub failed: Option<String>,
    /// What the run's `[prometheus]` held about this arm (its `ALERTS`, `up`, transitions and
    /// the receiver's notifications), read after the run; `Err` says why it could not be
    /// read; `None` without `[prometheus]`.
    pub alerts: Option<Result<crate::verdict::alert_eval::AlertsSeen, String>>,
}

impl Observation {
    /// True when the arm did not run to its end: stopped, or ended by a harness failure.
    pub fn cut(&self) -> bool {
        self.stopped.is_some() || self.failed.is_some()
    }
}

/// What an engine of ours said through its events.
#[derive(Debug, Default)]
pub struct EngineObserved {
    /// Every breaker transition (a fleet's: host `h0`'s), time-ordered.
    pub transitions: Vec<Transition>,
    /// Transitions left out of `transitions` beyond its cap.
    pub transitions_dropped: u64,
    /// Every other host's transitions (a fleet's `h1`, ...): `[[expect.transition]]` and
    /// `[[expect.no_transition]]` hold on every host.
    pub other_hosts: Vec<(String, Vec<Transition>)>,
    /// Attempt latency per dep from exact samples, scenario time.
    pub latency: BTreeMap<String, Latency>,
    /// Per dep, its tool-call deadline over the run (nominal ms; the "Deadlines" table).
    pub deadlines: BTreeMap<String, crate::report::model::DeadlineRange>,
    /// The picture's marks, scenario time.
    pub marks: Marks,
    /// The websocket channels of the traffic, when the section's fault windows name the lanes
    /// each fault touched (the embedded run's; a fleet's windows leave them empty).
    pub lanes_of_faults: Option<BTreeSet<String>>,
}

/// What a gateway left: the turns it was sent, its log decisions and auth state.
#[derive(Debug, Default)]
pub struct GatewayObserved {
    /// Every turn sent and what came back (`[[expect.turn]]`).
    pub turns: Vec<TurnRow>,
    /// Its log decisions.
    pub decisions: Vec<LoggedDecision>,
    /// Why its log could not be read (missing or unreadable): the expectations on its
    /// decisions then fail saying so.
    pub log_error: Option<String>,
    /// Lines its log held (what its decisions were read from).
    pub log_lines: u64,
    /// Its auth state after the stop.
    pub auth: Option<AuthState>,
    /// Why its auth state could not be read (no database, an unreadable one): the
    /// expectations on its cooldowns then fail saying so.
    pub auth_error: Option<String>,
}

/// The part of the report only one kind has.
#[derive(Debug)]
pub enum KindPart {
    /// The embedded engine: nothing besides the arms.
    Embedded,
    /// A gateway: the `target` block.
    Gateway(Box<TargetReport>),
    /// OpenClaw versions side by side: each version's arm (its `target` block, `None` when it
    /// never ran), in run order.
    Versions(Vec<crate::report::versions::VersionArm>),
    /// A fleet: the `fleet` section.
    Fleet(FleetSection),
}

/// A whole run as its system under test observed it.
#[derive(Debug)]
pub struct Observed {
    /// What an arm is called in the verdict's reason (`policy`, `target`, `coordination`).
    pub arm: &'static str,
    /// Every arm the scenario names, in order (those past `observations` never ran).
    pub arms: Vec<String>,
    /// The arms that ran, in order.
    pub observations: Vec<Observation>,
    /// A harness error that ended the run (verdict `error`).
    pub error: Option<String>,
    /// RFC 3339 start time.
    pub started_at: String,
    /// The host's facts as JSON (`host::fingerprint()`, with the `[tcp]` tuning where the
    /// kind reads it back).
    pub host: serde_json::Value,
    /// Contradictions between the host's facts and the scenario's timing.
    pub contradictions: Vec<serde_json::Value>,
    /// The speed the run went at.
    pub speed: Speed,
    /// The kind's own part of the report.
    pub part: KindPart,
}
