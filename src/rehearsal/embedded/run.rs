//! One policy run of one scenario, in process: a fresh mock upstream and a fresh engine (with
//! its breakers, metrics registry and `/metrics` endpoint) on ephemeral loopback ports, the
//! replayer driving the engine over the real transport (its pacer on a thread of its own, the
//! requests on the engine's runtime), the scraper, progress, and — at `duration` or on a stop
//! request — a final scrape and an orderly shutdown. Alongside the
//! replay, the synthetic health checks ([`crate::rehearsal::embedded::health`]) call every dep every
//! `[engine.health] interval` (speed-scaled) over the same transport; their `HealthCheck` events
//! feed `health_breaker_disagreement_seconds{dep}`, events.jsonl and the report's tally, and the
//! upstream records them as canaries, which the probe-spacing arrivals leave out.
//!
//! The steps every arm shares (upstream and recorder, targets, scrapers, the stops, the stop
//! order) are [`crate::rehearsal::arm`]'s; this file plugs in the engine, its `/metrics`, the replay and the
//! canaries.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::rehearsal::arm::RunFiles;
use crate::rehearsal::arm::{
    Arm, BindError, Clock as ArmClock, LOOPBACK, SHUTDOWN_GRACE, Scrape, UpstreamSpec, bind,
};
use crate::rehearsal::embedded::dispatch::Counters;
use crate::rehearsal::embedded::health::{CanaryCount, HealthTally};
use crate::rehearsal::observe::{FaultHits, Observed};
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::embedded::progress::{Progress, Snapshot, Ticking};
use crate::rehearsal::arm::recorder::KeptRecords;
use crate::rehearsal::embedded::rig::{Rig, RigSpec};
use crate::rehearsal::arm::sinks::{EventsWriter, TransitionLog};
use crate::engine::clock::Clock;
use crate::engine::{BreakerState, Policy};
use crate::replay::replayer::ReplaySummary;
use crate::scrape::{CompactScrapes, metrics_url};
use crate::transport::Diagnostics;
use crate::transport::SocketsReport;
use crate::upstream::Stats;
use crate::util::shutdown::Shutdown;
use crate::verdict::ProbeArrival;

/// A harness failure (exit 3).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A loopback listener could not be bound.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// The engine could not be built or could not replay.
    #[error(transparent)]
    Rig(#[from] crate::rehearsal::embedded::rig::RigError),
}

/// Everything one policy run observed.
#[derive(Debug)]
pub struct PolicyRun {
    /// The policy.
    pub policy: Policy,
    /// Unix seconds of the run start (engine timestamps are relative to it).
    pub start_unix_s: f64,
    /// Wall time the run took, ms.
    pub elapsed_ms: u64,
    /// What the run kept of its scrapes (they went to scrapes.prom.gz as they came).
    pub scrapes: CompactScrapes,
    /// The scrape interval at the run's speed, ms.
    pub scrape_interval_ms: u64,
    /// Every breaker transition from the engine's events (as in events.jsonl), time-ordered.
    pub transitions: Vec<crate::scrape::Transition>,
    /// Transitions left out of `transitions` beyond its cap.
    pub transitions_dropped: u64,
    /// The replayer's summary.
    pub replay: ReplaySummary,
    /// Live counters (user-visible errors, fallbacks).
    pub counters: Arc<Counters>,
    /// Upstream arrivals of breaker probes, for probe-spacing checks (canaries left out; other
    /// calls are in upstream.jsonl only, so this grows with half-open periods, not traffic).
    pub arrivals: Vec<ProbeArrival>,
    /// Canary calls and failures per dep.
    pub health: BTreeMap<String, CanaryCount>,
    /// The upstream's statistics at the end.
    pub upstream_stats: Stats,
    /// Read-failure diagnostics per dep.
    pub diagnostics: Arc<Diagnostics>,
    /// The `[tcp]` tuning of the upstream connections and what the kernel read back.
    pub sockets: SocketsReport,
    /// Set when a stop request (or the harness failure below) cut the run short.
    pub stopped: Option<String>,
    /// Set when the harness failed mid-run (the mock upstream stopped): the run ended there.
    pub failed: Option<String>,
    /// Attempt latencies and the picture's marks, from the engine's events.
    pub observed: Arc<Observed>,
    /// Which user requests each fault applied to.
    pub fault_hits: Arc<FaultHits>,
    /// Model requests at the upstream (kept only for ground-truth expectations, up to the
    /// recorder's cap).
    pub upstream_records: KeptRecords,
    /// Each model call of the traffic as the engine's client saw it end (kept when the
    /// scenario has `[[expect.turn]]` rows), in traffic order; answers not yet checked
    /// against the upstream's record.
    pub turns: Option<Vec<crate::report::model::TurnRow>>,
}

/// Runs `plan` under `policy`, writing into `files`.
pub async fn run_policy(
    plan: &ScenarioPlan,
    policy: Policy,
    run_dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
    plain_progress: bool,
) -> Result<PolicyRun, HarnessError> {
    let file = &plan.checked.file;
    let speed = plan.speed;
    let pname = policy.as_str();
    // The run's one reading of both clocks: the engine, its store and the canaries follow it.
    let clock = ArmClock::now();
    let (start, start_unix_s) = (clock.start, clock.unix_s());
    // The engine's metrics first: the upstream log feeds duplicate executions into them.
    let metrics = crate::rehearsal::embedded::rig::metrics(start, start_unix_s);
    let mut arm = Arm::open(
        UpstreamSpec {
            plan,
            arm: pname,
            listen: LOOPBACK,
            speed,
            keep_records: file.expect.has_ground(),
            duplicates: Some(metrics.clone()),
        },
        files,
        stop,
    )
    .await?;
    arm.upstream().set_run_start(start);
    // The upstream stopping before the run does is a harness failure: the run ends there.
    arm.watch_upstream(start, speed);

    // The engine, its breakers, transport and canaries; then /metrics.
    let transition_log = Arc::new(TransitionLog::default());
    let observed = Arc::new(Observed::new(speed));
    let tally = Arc::new(HealthTally::default());
    let mut rig = Rig::build(RigSpec {
        file,
        traffic: plan.checked.traffic.as_slice(),
        policy,
        seed: plan.seed,
        speed,
        clock: Clock::new(start, clock.wall),
        upstream: arm.upstream_addr(),
        host: None,
        store_path: run_dir.join(format!("auth-profiles-{pname}.json")),
        metrics: metrics.clone(),
        sinks: vec![
            Arc::new(EventsWriter::new(files.events.clone(), pname, speed)),
            transition_log.clone(),
            observed.clone(),
        ],
        canary_sinks: vec![tally.clone()],
        coordinate: None,
    })?;
    let m_listener = bind("engine /metrics", LOOPBACK).await?;
    let m_url = metrics_url(m_listener.local_addr().unwrap_or(LOOPBACK));
    let stopped = arm.servers().clone();
    arm.adopt(tokio::spawn(async move {
        crate::exporter::serve_metrics(m_listener, metrics, stopped.requested()).await
    }));
    // Where to look while it runs (curl the upstream's /_rehearse/stats, the engine's /metrics).
    crate::errln!(
        "{}/{pname}: mock upstream http://{}, engine metrics {m_url}",
        file.name,
        arm.upstream_addr()
    );
    if plan.policies.len() > 1 {
        files.scrapes.line(&format!("# policy {pname}"));
    }
    // A [prometheus] of the run scrapes the engine too, from its clock's start; so does the
    // run's own scraper (raw scrapes to scrapes.prom.gz, the compact timeline in memory).
    let target = crate::detection::Target {
        url: m_url.clone(),
        host: "sut".into(),
    };
    let interval = speed.scale(file.scrape_interval);
    arm.go(
        clock,
        &[target],
        vec![Scrape {
            url: m_url,
            interval,
            file: files.scrapes.clone(),
            start_unix_s,
        }],
    );
    let counters = Arc::new(Counters::default());
    // Each model call's end as its client saw it, when a row judges the turns.
    let turns = (!file.expect.turn.is_empty())
        .then(|| Arc::new(crate::rehearsal::embedded::turns::TurnBook::new(start, speed)));
    let run_for = speed.scale(file.duration);
    let ticking = Ticking::start(
        Progress::new(&format!("{}/{pname}", file.name), run_for, plain_progress),
        snapshot(&rig, &counters, start, run_for),
    );

    // Replay until `duration` (or a stop request, or the upstream dying); traffic shorter than
    // `duration` leaves the breakers until `duration` to settle.
    let end = crate::util::speed::after(start, run_for);
    let ends = arm.ends_at(end);
    let summary = rig
        .replay(plan.checked.traffic.clone(), counters.clone(), turns.clone(), move || ends)
        .await?;
    // Read as the replay ended: a call without an end by now never got one in the run.
    let replay_ended = Instant::now();
    arm.until(end).await;
    // A stop that came once `duration` was reached (during the final scrape or shutdown) cut
    // nothing: the run is complete. A dead upstream cut the run short as a stop request does
    // (expectations due later were never reached), and is a harness failure besides.
    let ending = arm.end(|ms| ms < run_for.as_millis() as u64);
    let cut = ending.stopped.is_some() || ending.died.is_some();
    let turns = turns.map(|b| b.rows(replay_ended, file.target.turn_timeout(), cut));
    let scrapes = (arm.final_scrapes().await.pop())
        .unwrap_or_else(|| CompactScrapes::new(start_unix_s));
    ticking.finish();
    rig.stop_canaries(SHUTDOWN_GRACE).await;
    let closed = arm.close().await;
    let (transitions, transitions_dropped) = transition_log.sorted();
    Ok(PolicyRun {
        policy,
        start_unix_s,
        elapsed_ms: ending.elapsed_ms,
        scrapes,
        scrape_interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
        transitions,
        transitions_dropped,
        replay: summary,
        counters,
        arrivals: probe_arrivals(&closed.probes),
        health: tally.counts(),
        upstream_stats: closed.stats,
        diagnostics: rig.diagnostics.clone(),
        sockets: rig.sockets(),
        stopped: ending.stopped,
        failed: ending.died,
        observed,
        fault_hits: closed.fault_hits,
        upstream_records: closed.records,
        turns,
    })
}

/// The progress display's reading of the run now: the breakers' states as a scrape would read
/// them (observing changes no decision), the counters, the time.
fn snapshot(
    rig: &Rig,
    counters: &Arc<Counters>,
    start: Instant,
    run_for: Duration,
) -> impl Fn() -> Snapshot + Send + Sync + 'static {
    let counters = counters.clone();
    let breakers = rig.breakers.clone();
    move || Snapshot {
        open: {
            breakers.tick(Instant::now());
            breakers
                .states()
                .into_iter()
                .filter(|(_, s)| *s != BreakerState::Closed)
                .map(|(d, _)| d)
                .collect()
        },
        elapsed: start.elapsed().min(run_for),
        sent: Counters::get(&counters.sent),
        errors: Counters::get(&counters.failed),
    }
}

/// Breaker probes as the probe-spacing checks read them.
pub(crate) fn probe_arrivals(probes: &[crate::rehearsal::arm::recorder::ProbeSeen]) -> Vec<ProbeArrival> {
    probes
        .iter()
        .map(|p| ProbeArrival {
            dep: p.dep.clone(),
            t_ms: p.t_ms,
            probe: true,
        })
        .collect()
}
