//! What an external target's run gathered ([`ExternalRun`]) → its report: one section named
//! after the target (`openclaw`, `http`) with the scraped-metric expectations (when it has a
//! `metrics_url`), the upstream ground-truth expectations and, for OpenClaw, its decisions and
//! cooldowns; the `target` block (version, turns, decisions, cooldowns, files, stop, last log
//! lines). A harness failure is verdict `error` with its reason; what was observed before it is
//! still judged (what it never reached is `not_reached`).

use std::time::{Duration, UNIX_EPOCH};

use super::assemble::{add_results, faults_without_tokens, judge_at_upstream};
use super::fault_scope::fault_windows;
use super::plan::ScenarioPlan;
use super::recorder::KeptRecords;
use crate::report::build::{PolicyRun as BuildInput, build_policy};
use crate::report::judge::{Ending, judge};
use crate::report::model::{
    Lag, ReplayInfo, Report, SCHEMA_VERSION, Stopped, TargetReport, TimeBase, TrafficInfo,
};
use crate::scrape::CompactScrapes;
use crate::target::openclaw::{AuthState, LoggedDecision};
use crate::util::shutdown::cause;

/// Per fault table: how many requests it applied to, and the kept hits.
pub(super) type Hits = std::collections::BTreeMap<usize, (u64, Vec<crate::report::model::FaultHit>)>;

/// Everything one external run observed.
#[derive(Debug)]
pub(crate) struct ExternalRun<'a> {
    plan: &'a ScenarioPlan,
    start_unix_s: f64,
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
    /// OpenClaw's auth state after the stop.
    pub auth: Option<AuthState>,
    /// Problems reading what the gateway left (they fail the expectations that need it).
    pub notes: Vec<String>,
}

impl<'a> ExternalRun<'a> {
    /// An empty run of `plan` started at `start_unix_s`.
    pub(crate) fn new(plan: &'a ScenarioPlan, start_unix_s: f64) -> Self {
        Self {
            plan,
            start_unix_s,
            target: TargetReport::default(),
            elapsed_ms: 0,
            stopped: None,
            scrapes: CompactScrapes::new(start_unix_s),
            records: KeptRecords::default(),
            fault_hits: Default::default(),
            decisions: Vec::new(),
            auth: None,
            notes: Vec::new(),
        }
    }

    /// Moves the run's start (to when the gateway became healthy).
    pub(crate) fn set_start(&mut self, start_unix_s: f64) {
        self.start_unix_s = start_unix_s;
        self.scrapes = CompactScrapes::new(start_unix_s);
    }

    /// The report of a run that ended on a harness failure (`why`).
    pub(crate) fn failed(self, why: String) -> Report {
        self.report(Some(why))
    }

    /// The report of a finished (or stopped) run.
    pub(crate) fn into_report(self) -> Report {
        self.report(None)
    }

    fn report(self, error: Option<String>) -> Report {
        let plan = self.plan;
        let file = &plan.checked.file;
        let name = file.target.kind.as_str();
        let expect = file.expect.for_policy(name);
        let cut = self.stopped.is_some() || error.is_some();
        let stopped_at_ms = cut.then_some(self.elapsed_ms);
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
        let mut section = build_policy(BuildInput {
            policy: name,
            expect: &expect,
            scrapes: &self.scrapes,
            events: None,
            scrape_interval_ms: u64::try_from(file.scrape_interval.as_millis()).unwrap_or(u64::MAX),
            arrivals: &[],
            speed: 1.0,
            fault_windows: fault_windows(&file.fault, &file.profile, self.fault_hits.clone()),
            latency: Default::default(),
            marks: Default::default(),
            replay: Some(replay),
            failed_requests: Some(failed),
            user_visible_errors: Some(failed),
            elapsed_ms: self.elapsed_ms,
            canaries: Default::default(),
            stopped_at_ms,
            final_exposition: None,
        });
        let mut results = judge_at_upstream(&mut section, plan, &expect, &self.records);
        results.extend(crate::verdict::gateway_eval::evaluate(
            &expect,
            &self.decisions,
            self.auth.as_ref(),
            cut,
        ));
        add_results(&mut section, results);
        let policies = vec![section];
        let duration_ms = u64::try_from(file.duration.as_millis()).unwrap_or(u64::MAX);
        let (verdict, reason) = judge(
            &policies,
            &Ending {
                error: error.as_deref(),
                stopped: self.stopped.as_deref(),
                not_started: 0,
                arm: "target",
            },
        );
        let stopped = self.stopped.as_ref().map(|s| Stopped {
            reason: cause(s).to_string(),
            at_ms: self.elapsed_ms,
            of_ms: duration_ms,
            policy: name.to_string(),
        });
        let started = UNIX_EPOCH + Duration::from_secs_f64(self.start_unix_s.max(0.0));
        let mut target = self.target;
        target
            .last_lines
            .extend(self.notes.iter().map(|n| format!("harness: {n}")));
        let config = serde_json::json!({
            "scenario_file": plan.checked.path.display().to_string(),
            "traffic_file": plan.checked.traffic_path.display().to_string(),
            "duration_ms": duration_ms,
            "target": serde_json::to_value(&file.target).unwrap_or_default(),
            "upstream": serde_json::to_value(&file.upstream).unwrap_or_default(),
            "fallbacks": file.engine.model_failover.fallbacks,
            "profiles": file.profile.iter().map(|p| serde_json::json!({
                "provider": p.provider, "id": p.id,
                "token_fp": crate::util::fingerprint(p.credential()),
            })).collect::<Vec<_>>(),
            "faults": faults_without_tokens(&file.fault),
        });
        Report {
            schema_version: SCHEMA_VERSION,
            scenario: file.name.clone(),
            description: (!file.description.is_empty()).then(|| file.description.clone()),
            verdict,
            reason,
            stopped,
            started_at: crate::report::rfc3339(started),
            duration_ms,
            time_base: TimeBase::Scenario,
            profiles: super::assemble::profile_table(&file.profile, &policies),
            speed: 1.0,
            seed: plan.seed,
            host: serde_json::to_value(crate::host::fingerprint()).unwrap_or_default(),
            traffic: Some(TrafficInfo {
                file: plan.checked.traffic_path.display().to_string(),
                requests: plan.checked.traffic.len() as u64,
                beyond_duration: plan.checked.beyond_duration as u64,
            }),
            policies,
            replay,
            contradictions: Vec::new(),
            config,
            target: Some(target),
            fleet: None,
        }
    }
}
