//! One policy run of one scenario, in process: a fresh mock upstream and a fresh engine (with
//! its breakers, metrics registry and `/metrics` endpoint) on ephemeral loopback ports, the
//! replayer driving the engine over the real transport (its pacer on a thread of its own, the
//! requests on the engine's runtime), the scraper, progress, and — at `duration` or on a stop
//! request — a final scrape and an orderly shutdown. Alongside the
//! replay, the synthetic health checks ([`super::health`]) call every dep every
//! `[engine.health] interval` (speed-scaled) over the same transport; their `HealthCheck` events
//! feed `health_breaker_disagreement_seconds{dep}`, events.jsonl and the report's tally, and the
//! upstream records them as canaries, which the probe-spacing arrivals leave out.
//!
//! Longer than 400 lines on purpose: the run's start-up and tear-down order (upstream, engine,
//! scraper, replayer, canaries, drain) is one sequence read top to bottom; its parts live in the
//! sibling files.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::net::TcpListener;
use tokio::time::{Instant, sleep_until, timeout};

use super::dispatch::Counters;
use super::health::{CanaryCount, HealthTally};
use super::observe::{FaultHits, Observed};
use super::plan::ScenarioPlan;
use super::progress::{Progress, Snapshot};
use super::recorder::{KeptRecords, UpstreamRecorder};
use super::rig::{Rig, RigSpec};
use super::sinks::{EventsWriter, JsonlFile, PromFile, TransitionLog};
use crate::engine::clock::Clock;
use crate::engine::{BreakerState, Policy};
use crate::replay::replayer::ReplaySummary;
use crate::scrape::{CompactScrapes, Scraper, ScraperConfig, metrics_url};
use crate::transport::Diagnostics;
use crate::transport::SocketsReport;
use crate::upstream::Stats;
use crate::util::shutdown::Shutdown;
use crate::verdict::ProbeArrival;

/// How long servers get to shut down after a run.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);
/// Longest one scrape may take.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// The shared output files of a run directory.
#[derive(Debug, Clone)]
pub struct RunFiles {
    /// events.jsonl
    pub events: Arc<JsonlFile>,
    /// upstream.jsonl
    pub upstream: Arc<JsonlFile>,
    /// scrapes.prom.gz (every raw scrape, appended as it comes, one gzip member each)
    pub scrapes: Arc<PromFile>,
    /// What a `[prometheus]` of the run scrapes, published arm by arm (inert without one).
    pub targets: crate::detection::Targets,
}

impl RunFiles {
    /// Opens the append-only files of `dir`.
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        Ok(Self {
            events: JsonlFile::open(&dir.join("events.jsonl"))?,
            upstream: JsonlFile::open(&dir.join("upstream.jsonl"))?,
            scrapes: PromFile::open(&dir.join(crate::scrape::SCRAPES_FILE))?,
            targets: crate::detection::Targets::default(),
        })
    }
}

/// A harness failure (exit 3).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// A loopback listener could not be bound.
    #[error("binding a loopback port for the {what}: {source}")]
    Bind {
        /// Which server.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// The engine could not be built or could not replay.
    #[error(transparent)]
    Rig(#[from] super::rig::RigError),
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
}

async fn bind(what: &'static str) -> Result<TcpListener, HarnessError> {
    TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|source| HarnessError::Bind { what, source })
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
    let start = Instant::now();
    let wall_start = SystemTime::now();
    let clock = Clock::new(start, wall_start);
    let start_unix_s = wall_start
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    // Each part stops on its own request, in order: scraper, canaries, then the upstream and
    // the exporter.
    let servers_stop = Shutdown::new();
    let scrape_stop = Shutdown::new();

    // The engine's metrics first: the upstream log feeds duplicate executions into them.
    let metrics = super::rig::metrics(start, start_unix_s);

    // The mock upstream.
    let upstream = super::recorder::scenario_upstream(file, plan.seed, speed);
    upstream.set_run_start(start);
    let fault_hits = Arc::new(FaultHits::new(speed));
    let up_log = Arc::new(
        UpstreamRecorder::new(
            EventsWriter::new(files.upstream.clone(), pname, speed),
            fault_hits.clone(),
            file.expect.has_ground(),
        )
        .with_cap(plan.record_cap)
        .with_duplicates(metrics.clone()),
    );
    upstream.subscribe(up_log.clone());
    let up_listener = bind("mock upstream").await?;
    let up_addr = up_listener
        .local_addr()
        .map_err(|source| HarnessError::Bind {
            what: "mock upstream",
            source,
        })?;
    let up_task = tokio::spawn(crate::upstream::serve(
        up_listener,
        upstream.clone(),
        servers_stop.requested(),
    ));
    // The upstream stopping before the run does is a harness failure: the run ends there.
    let (up_task, died) =
        super::supervise::watch_upstream(up_task, servers_stop.clone(), start, speed);

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
        clock,
        upstream: up_addr,
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
    let breakers = rig.breakers.clone();
    let diagnostics = rig.diagnostics.clone();
    let m_listener = bind("engine /metrics").await?;
    let m_addr = m_listener
        .local_addr()
        .map_err(|source| HarnessError::Bind {
            what: "engine /metrics",
            source,
        })?;
    let m_task = tokio::spawn(crate::exporter::serve_metrics(
        m_listener,
        metrics.clone(),
        servers_stop.requested(),
    ));

    // Where to look while it runs (curl the upstream's /_rehearse/stats, the engine's /metrics).
    crate::errln!(
        "{}/{pname}: mock upstream http://{up_addr}, engine metrics {}",
        file.name,
        metrics_url(m_addr)
    );

    // A [prometheus] of the run scrapes the engine too, from its clock's start.
    files.targets.publish(
        pname,
        wall_start,
        &[crate::detection::Target {
            url: metrics_url(m_addr),
            host: "sut".into(),
        }],
    );

    // Scraper and progress.
    let scraper = Scraper::new(ScraperConfig {
        url: metrics_url(m_addr),
        interval: speed.scale(file.scrape_interval),
        start,
        timeout: SCRAPE_TIMEOUT,
    });
    if plan.policies.len() > 1 {
        files.scrapes.line(&format!("# policy {pname}"));
    }
    // Raw scrapes stream to scrapes.prom.gz; only the compact timeline stays in memory.
    let sink = (files.scrapes.clone(), CompactScrapes::new(start_unix_s));
    let stopped = scrape_stop.requested();
    let scraper = tokio::spawn(async move { scraper.run_into(sink, stopped).await });
    let counters = Arc::new(Counters::default());
    let run_for = speed.scale(file.duration);
    let progress = Arc::new(Progress::new(
        &format!("{}/{pname}", file.name),
        run_for,
        plain_progress,
    ));
    let snapshot = {
        let counters = counters.clone();
        let breakers = breakers.clone();
        move || Snapshot {
            // The state now, as a scrape would read it (observing changes no decision).
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
    };
    let ticker = {
        let progress = progress.clone();
        let snapshot = snapshot.clone();
        tokio::spawn(async move {
            loop {
                progress.update(&snapshot());
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    };

    // Replay until `duration` (or a stop request, or the upstream dying).
    let end = crate::util::speed::after(start, run_for);
    let stop_at_end = {
        let stop = stop.clone();
        let died = died.clone();
        move || async move {
            tokio::select! {
                _ = sleep_until(end) => {}
                _ = stop.requested() => {}
                _ = died.requested() => {}
            }
        }
    };
    let summary = rig
        .replay(plan.checked.traffic.clone(), counters.clone(), stop_at_end)
        .await?;
    // Traffic shorter than `duration`: the breakers still have until `duration` to settle.
    tokio::select! {
        _ = sleep_until(end) => {}
        _ = stop.requested() => {}
        _ = died.requested() => {}
    }
    let elapsed_ms = start.elapsed().as_millis() as u64;
    files.targets.withdraw(pname);

    // Final scrape, then shut everything down.
    scrape_stop.request("the run ended");
    let scrape_log = match scraper.await {
        Ok((_, compact)) => compact,
        Err(e) => {
            let mut compact = CompactScrapes::new(start_unix_s);
            compact.failures += 1;
            compact.last_error = Some(format!("the scraper task failed: {e}"));
            compact
        }
    };
    ticker.abort();
    progress.finish(&snapshot());
    rig.stop_canaries(SHUTDOWN_GRACE).await;
    servers_stop.request("the run ended");
    let _ = timeout(SHUTDOWN_GRACE, up_task).await;
    let _ = timeout(SHUTDOWN_GRACE, m_task).await;
    let arrivals = up_log
        .probes()
        .into_iter()
        .map(|p| ProbeArrival {
            dep: p.dep,
            t_ms: p.t_ms,
            probe: true,
        })
        .collect();
    let (transitions, transitions_dropped) = transition_log.sorted();
    Ok(PolicyRun {
        policy,
        start_unix_s,
        elapsed_ms,
        scrapes: scrape_log,
        scrape_interval_ms: u64::try_from(speed.scale(file.scrape_interval).as_millis())
            .unwrap_or(u64::MAX),
        transitions,
        transitions_dropped,
        replay: summary,
        counters,
        arrivals,
        health: tally.counts(),
        upstream_stats: upstream.stats(),
        diagnostics,
        sockets: rig.sockets(),
        // A stop that came once `duration` was reached (during the final scrape or shutdown)
        // cut nothing: the run is complete. A dead upstream cut the run short as a stop request
        // does (expectations due later were never reached), and is a harness failure besides.
        stopped: stop
            .reason()
            .filter(|_| elapsed_ms < run_for.as_millis() as u64)
            .or_else(|| died.reason()),
        failed: died.reason(),
        observed,
        fault_hits,
        upstream_records: up_log.take_records(),
    })
}
