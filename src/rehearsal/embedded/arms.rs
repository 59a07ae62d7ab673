//! The embedded engine as the system under test: every policy of the scenario in turn, each a
//! fresh mock upstream and engine in this process ([`crate::rehearsal::embedded::run::run_policy`]), until the
//! last one, a stop request or a harness failure; what each observed is one
//! [`Observation`], handed with the run's host facts to the one assembly
//! ([`crate::rehearsal::assemble::report`]).

use std::path::Path;
use std::time::SystemTime;

use crate::rehearsal::embedded::dispatch::Counters;
use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::embedded::run::{PolicyRun, run_policy};
use crate::rehearsal::observation::{EngineObserved, KindPart, Observation, Observed};
use crate::rehearsal::plan::ScenarioPlan;
use crate::engine::RequestKind;
use crate::report::model::{Lag, ReplayInfo};
use crate::report::rfc3339;
use crate::transport::SocketsReport;
use crate::util::shutdown::Shutdown;

/// Runs every policy of `sp` into `dir` and `files`; what they observed.
pub async fn run_embedded(
    sp: &ScenarioPlan,
    dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
    plain: bool,
) -> Observed {
    let started_at = rfc3339(SystemTime::now());
    let mut runs = Vec::new();
    let mut error = None;
    for &policy in &sp.policies {
        if stop.reason().is_some() {
            break;
        }
        match run_policy(sp, policy, dir, files, stop, plain).await {
            Ok(run) => {
                let failed = run.failed.clone();
                runs.push(run);
                if let Some(why) = failed {
                    error = Some(format!("{policy}: {why}", policy = policy.as_str()));
                    break;
                }
            }
            Err(e) => {
                error = Some(format!("{policy}: {e}", policy = policy.as_str()));
                break;
            }
        }
    }
    let host = crate::host::fingerprint();
    let contradictions = crate::rehearsal::contradictions::check(sp, &host);
    let sockets =
        SocketsReport::merge(runs.iter().map(|r| r.sockets.clone())).unwrap_or_else(|| {
            SocketsReport {
                requested: sp.checked.file.tcp.clone(),
                ..SocketsReport::default()
            }
        });
    let mut host_json = serde_json::to_value(&host).unwrap_or_default();
    if let Some(obj) = host_json.as_object_mut() {
        obj.insert(
            "tcp_tuning".into(),
            serde_json::to_value(&sockets).unwrap_or_default(),
        );
    }
    Observed {
        arm: "policy",
        arms: sp.policies.iter().map(|p| p.as_str().to_string()).collect(),
        observations: runs.into_iter().map(|r| observation(sp, r)).collect(),
        error,
        started_at,
        host: host_json,
        contradictions,
        speed: sp.speed,
        part: KindPart::Embedded,
    }
}

/// What one policy run observed.
fn observation(sp: &ScenarioPlan, run: PolicyRun) -> Observation {
    let ws = sp
        .checked
        .traffic
        .iter()
        .filter_map(|l| match &l.kind {
            RequestKind::Ws { channel, .. } => Some(channel.clone()),
            _ => None,
        })
        .collect();
    Observation {
        arm: run.policy.as_str().to_string(),
        elapsed_ms: run.elapsed_ms,
        speed: sp.speed,
        scrape_interval_ms: run.scrape_interval_ms,
        scrapes: run.scrapes,
        final_exposition: None,
        engine: Some(EngineObserved {
            latency: run.observed.latency(),
            deadlines: run.observed.deadlines(),
            marks: run.observed.marks(),
            transitions: run.transitions,
            transitions_dropped: run.transitions_dropped,
            other_hosts: Vec::new(),
            lanes_of_faults: Some(ws),
        }),
        arrivals: run.arrivals,
        fault_hits: run.fault_hits.snapshot(),
        replay: ReplayInfo {
            sent: run.replay.sent,
            lag_ms: Lag {
                p50: run.replay.lag_p50_ms,
                p99: run.replay.lag_p99_ms,
                max: run.replay.lag_max_ms,
            },
        },
        failed_requests: run.replay.error_count(),
        user_visible_errors: Counters::get(&run.counters.user_errors),
        canaries: run
            .health
            .iter()
            .map(|(dep, c)| (dep.clone(), (c.calls, c.failures)))
            .collect(),
        client_turns: run.turns.map(|mut t| {
            crate::rehearsal::client_answers::check(&mut t, &run.upstream_records.turns.records);
            t
        }),
        upstream: run.upstream_records,
        gateway: None,
        kind_rows: Vec::new(),
        read_failures: Some(serde_json::to_value(run.diagnostics.snapshot()).unwrap_or_default()),
        stopped: run.stopped,
        failed: run.failed,
        alerts: None,
    }
}
