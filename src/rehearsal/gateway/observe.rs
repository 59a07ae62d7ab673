//! What an external target's run gathered ([`ExternalRun`]) → its [`Observed`]: one arm named
//! after the target (`openclaw`, `http`) — its scrapes (when it has a `metrics_url`), the
//! upstream's record, and for OpenClaw its decisions and auth state; no engine events — and the
//! `target` block (version, turns, decisions, cooldowns, files, stop, last log lines) as the
//! kind's part of the report. A harness failure is the run's error (verdict `error`); what was
//! observed before it is still judged (what it never reached is `not_reached`).

use std::time::{Duration, UNIX_EPOCH};

use crate::gateway::openclaw::{AuthState, LoggedDecision};
use crate::rehearsal::arm::recorder::KeptRecords;
use crate::rehearsal::observation::{GatewayObserved, Hits, KindPart, Observation, Observed};
use crate::rehearsal::plan::{GatewayPlan, ScenarioPlan};
use crate::report::model::{Lag, ReplayInfo, TargetReport};
use crate::scrape::{CompactScrapes, Exposition};

/// Everything one external run observed.
#[derive(Debug)]
pub(crate) struct ExternalRun<'a> {
    pub(super) plan: &'a ScenarioPlan,
    /// The arm's gateway, as planned.
    pub(super) gw: &'a GatewayPlan,
    start_unix_s: f64,
    /// The arm's name: the target's kind, or the OpenClaw version it ran.
    pub arm: String,
    /// The OpenClaw version asked for (`[target] versions`), when one was: the kept files
    /// carry it.
    pub pinned: Option<String>,
    /// The `target` block.
    pub target: TargetReport,
    /// Wall ms the run took.
    pub elapsed_ms: u64,
    /// Set when a stop request cut it short.
    pub stopped: Option<String>,
    /// The target's metrics (empty without `metrics_url`).
    pub scrapes: CompactScrapes,
    /// The model requests at the upstream (up to the recorder's cap).
    pub records: KeptRecords,
    /// Per fault table, where it applied.
    pub fault_hits: Hits,
    /// OpenClaw's log decisions.
    pub decisions: Vec<LoggedDecision>,
    /// Why OpenClaw's log could not be read (its decision expectations then fail).
    pub log_error: Option<String>,
    /// Lines in OpenClaw's log (the decisions' witness).
    pub log_lines: u64,
    /// OpenClaw's auth state after the stop.
    pub auth: Option<AuthState>,
    /// Why OpenClaw's auth state could not be read (its cooldown expectations then fail).
    pub auth_error: Option<String>,
    /// Notes for the report's last lines (a retried start, what could not be read or removed).
    pub notes: Vec<String>,
    /// Its metrics at the clock's start (the steady state): counters are judged as increases
    /// since this scrape.
    pub baseline: Option<Exposition>,
}

impl<'a> ExternalRun<'a> {
    /// An empty run of `plan`'s arm `gw` started at `start_unix_s`.
    pub(crate) fn new(plan: &'a ScenarioPlan, gw: &'a GatewayPlan, start_unix_s: f64) -> Self {
        Self {
            plan,
            gw,
            start_unix_s,
            arm: gw.arm.clone(),
            pinned: gw.pinned.clone(),
            target: TargetReport {
                kind: gw.kind.as_str().to_string(),
                ..TargetReport::default()
            },
            elapsed_ms: 0,
            stopped: None,
            scrapes: CompactScrapes::new(start_unix_s),
            records: KeptRecords::default(),
            fault_hits: Default::default(),
            decisions: Vec::new(),
            log_error: None,
            log_lines: 0,
            auth: None,
            auth_error: None,
            notes: Vec::new(),
            baseline: None,
        }
    }

    /// The run's start, Unix seconds.
    pub(crate) fn start_unix_s(&self) -> f64 {
        self.start_unix_s
    }

    /// Moves the run's start (to the gateway's steady state).
    pub(crate) fn set_start(&mut self, start_unix_s: f64) {
        self.start_unix_s = start_unix_s;
        self.scrapes = CompactScrapes::new(start_unix_s);
    }

    /// What a run that ended on a harness failure (`why`) observed.
    pub fn failed(self, why: String) -> Observed {
        self.observed(Some(why))
    }

    /// What a finished (or stopped) run observed.
    pub fn into_observed(self) -> Observed {
        self.observed(None)
    }

    fn observed(self, error: Option<String>) -> Observed {
        let plan = self.plan;
        let file = &plan.checked.file;
        let name = self.arm.as_str();
        let turns = &self.target.turns;
        let failed = turns.iter().filter(|t| !t.ok).count() as u64;
        let mut lags: Vec<u64> = turns.iter().map(|t| t.lag_ms).collect();
        lags.sort_unstable();
        let pct = |q: f64| -> f64 {
            lags.get(((lags.len() as f64 - 1.0) * q).round().max(0.0) as usize)
                .copied()
                .unwrap_or(0) as f64
        };
        let replay = ReplayInfo {
            sent: turns.len() as u64,
            lag_ms: Lag {
                p50: pct(0.5),
                p99: pct(0.99),
                max: lags.last().copied().unwrap_or(0) as f64,
            },
        };
        // Counters as increases since the clock started (the warm-up's left out).
        let final_exposition = match (&self.baseline, self.scrapes.last_parsed()) {
            (Some(base), Some(last)) => Some(last.increase_since(base)),
            _ => None,
        };
        let observation = Observation {
            arm: name.to_string(),
            elapsed_ms: self.elapsed_ms,
            speed: crate::util::speed::Speed::ONE,
            scrape_interval_ms: u64::try_from(file.scrape_interval.as_millis()).unwrap_or(u64::MAX),
            scrapes: self.scrapes,
            final_exposition,
            engine: None,
            arrivals: Vec::new(),
            fault_hits: self.fault_hits,
            replay,
            failed_requests: failed,
            user_visible_errors: failed,
            canaries: Default::default(),
            upstream: self.records,
            client_turns: None,
            gateway: Some(GatewayObserved {
                turns: self.target.turns.clone(),
                decisions: self.decisions,
                log_error: self.log_error,
                log_lines: self.log_lines,
                auth: self.auth,
                auth_error: self.auth_error,
            }),
            kind_rows: Vec::new(),
            read_failures: None,
            stopped: self.stopped,
            failed: error.clone(),
            alerts: None,
        };
        let started = UNIX_EPOCH + Duration::from_secs_f64(self.start_unix_s.max(0.0));
        let mut target = self.target;
        target
            .last_lines
            .extend(self.notes.iter().map(|n| format!("harness: {n}")));
        Observed {
            arm: "target",
            arms: vec![name.to_string()],
            observations: vec![observation],
            error,
            started_at: crate::report::rfc3339(started),
            host: serde_json::to_value(crate::host::fingerprint()).unwrap_or_default(),
            contradictions: Vec::new(),
            speed: crate::util::speed::Speed::ONE,
            part: KindPart::Gateway(Box::new(target)),
        }
    }
}
