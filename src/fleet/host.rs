//! One gateway host of a fleet run, as its own OS process (`rehearse __fleet-host --spec
//! FILE`, hidden): its own engine, breakers (coordinated through Redis or alone), event log
//! and `/metrics` on loopback; it replays its share of the traffic (split by session) against
//! the run's mock upstream, naming itself in `X-Rehearse-Host`, with its canaries (one per dep
//! its share reaches, as a single run has). See [`super::spec`] for the
//! stdio protocol.

use crate::util::sync::Locked;
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Context, anyhow};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::time::{Instant, sleep_until};

use super::spec::{HostDone, HostSpec, share};
use crate::engine::breaker::{Breakers, HostClock};
use crate::engine::coordinator::{HostId, RedisCoordinator, RedisOptions};
use crate::engine::events::FanOut;
use crate::engine::metrics::{AtScrape, Metrics};
use crate::engine::{Engine, EngineOptions, Event, EventKind, EventSink};
use crate::exit::{CmdError, CmdResult};
use crate::replay::replayer::{Pacing, ReplayOptions, replay};
use crate::run::dispatch::{Counters, EngineDispatcher};
use crate::run::sinks::{EventsWriter, JsonlFile, TransitionLog};
use crate::transport::Diagnostics;
use crate::transport::HttpTransport;

/// How often a coordinated host reads the shared records.
pub const FOLLOW_EVERY: Duration = Duration::from_millis(25);

/// Counts `CoordinatorError` events (the host's share of `coordinator_errors_total`) and keeps
/// its `CoordinatorMode` changes (engine ms, mode).
#[derive(Debug, Default)]
struct CoordLog {
    errors: AtomicU64,
    modes: std::sync::Mutex<Vec<(u64, String)>>,
}

impl EventSink for CoordLog {
    fn emit(&self, event: &Event) {
        match &event.kind {
            EventKind::CoordinatorError { .. } => {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
            EventKind::CoordinatorMode { mode } => {
                self.modes.locked().push((event.t_ms, mode.clone()))
            }
            _ => {}
        }
    }
}

/// Runs the host described by the JSON file at `spec_path`.
pub fn command(spec_path: &std::path::Path) -> CmdResult {
    let text = std::fs::read_to_string(spec_path)
        .with_context(|| format!("reading {}", spec_path.display()))
        .map_err(CmdError::bad_input)?;
    let spec: HostSpec = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a host spec", spec_path.display()))
        .map_err(CmdError::bad_input)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
        .map_err(CmdError::harness)?;
    let result = rt.block_on(host(spec));
    rt.shutdown_timeout(Duration::from_millis(300));
    result
        .map(|()| crate::exit::Status::Pass)
        .map_err(CmdError::harness)
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

async fn host(spec: HostSpec) -> anyhow::Result<()> {
    let checked = crate::scenario::validate::check(&spec.scenario)
        .map_err(|e| anyhow!("host {}: {e}", spec.id))?;
    let file = &checked.file;
    let speed =
        crate::util::speed::Speed::new(spec.speed).map_err(|e| anyhow!("host {}: {e}", spec.id))?;
    let traffic = share(&checked.traffic, spec.index, spec.hosts);
    let clock = HostClock::wall_skewed(spec.skew_ms);
    let wall = clock.read().wall;
    let start_unix_s = wall
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let seed = spec.seed.wrapping_add(spec.index as u64);
    std::fs::create_dir_all(&spec.dir)
        .with_context(|| format!("creating {}", spec.dir.display()))?;
    let events_file = JsonlFile::open(&spec.dir.join("events.jsonl"))
        .with_context(|| format!("opening events.jsonl in {}", spec.dir.display()))?;

    // /metrics first: the run scrapes it from before the start.
    let metrics = Arc::new(Metrics::new(start_unix_s));
    let m_listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding the host's /metrics")?;
    let m_addr = m_listener.local_addr().context("the /metrics address")?;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let shutdown = |rx: watch::Receiver<bool>| async move {
        let mut rx = rx;
        let _ = rx.wait_for(|s| *s).await;
    };
    let m_task = tokio::spawn(crate::exporter::serve_metrics(
        m_listener,
        metrics.clone(),
        shutdown(shutdown_rx.clone()),
    ));
    say(&format!("metrics {m_addr}"));

    // Wait for `go`; stdin closing before or after it stops the host.
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let go_unix_us = loop {
        match lines.next_line().await {
            Ok(Some(l)) => {
                if let Some(us) = l
                    .trim()
                    .strip_prefix("go ")
                    .and_then(|u| u.parse::<u64>().ok())
                {
                    break us;
                }
            }
            _ => return Err(anyhow!("host {}: stdin closed before `go`", spec.id)),
        }
    };
    tokio::spawn(async move {
        while let Ok(Some(_)) = lines.next_line().await {}
        let _ = stop_tx.send(true);
    });
    // The run's start is the parent's `go` instant (the same machine's real wall clock, read
    // by both): every host's ms 0 is the upstream's, however late its `go` line arrived.
    let now = Instant::now();
    let late = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH + Duration::from_micros(go_unix_us))
        .unwrap_or_default()
        .min(Duration::from_secs(5));
    let start = now.checked_sub(late).unwrap_or(now);

    let events: Arc<dyn EventSink> =
        Arc::new(EventsWriter::new(events_file, &spec.label, speed.get()));
    let transitions = Arc::new(TransitionLog::default());
    let errors = Arc::new(CoordLog::default());
    let sink: Arc<dyn EventSink> = Arc::new(FanOut(vec![
        metrics.clone(),
        events,
        transitions.clone(),
        errors.clone(),
    ]));
    let mut breakers = Breakers::new(
        file.engine.breaker.clone(),
        speed,
        seed,
        sink.clone(),
        clock.shift(start),
    );
    if let Some(url) = &spec.redis_url {
        let c = RedisCoordinator::new(RedisOptions {
            url: url.clone(),
            prefix: spec
                .redis_prefix
                .clone()
                .unwrap_or_else(|| RedisOptions::default().prefix),
            ..RedisOptions::default()
        })
        .map_err(|e| anyhow!("host {}: {e}", spec.id))?;
        let id = HostId::new(&spec.id).map_err(|e| anyhow!("{e}"))?;
        breakers = breakers.with_coordinator(Arc::new(c), id, clock);
    }
    let breakers = Arc::new(breakers);
    let at_scrape: std::sync::Weak<dyn AtScrape> = Arc::<Breakers>::downgrade(&breakers);
    metrics.advance_at_scrape(at_scrape);
    let follower = tokio::spawn(
        breakers
            .clone()
            .run_follower(FOLLOW_EVERY, shutdown(shutdown_rx.clone())),
    );

    let diagnostics = Arc::new(Diagnostics::default());
    let transport = HttpTransport::with_tcp(spec.upstream, diagnostics, file.tcp.clone())
        .with_host(&spec.id)
        .with_pong_deadline(speed.scale(crate::transport::ws::DEFAULT_PONG_DEADLINE));
    // This host's synthetic health checks, as a single run has them: one canary per dep its
    // share of the traffic reaches, over the same transport (so they name the host too).
    let wall_start = std::time::SystemTime::now()
        .checked_sub(now.saturating_duration_since(start))
        .unwrap_or_else(std::time::SystemTime::now);
    let canary_stop = crate::util::shutdown::Shutdown::new();
    let canary_task = tokio::spawn(crate::engine::health::canary::run_canaries(
        Arc::new(transport.clone()),
        crate::run::health::canaries(file, &traffic),
        file.engine.clone(),
        speed,
        sink.clone(),
        crate::engine::clock::Clock::new(start, wall_start),
        canary_stop.requested(),
    ));
    let opts = EngineOptions {
        policy: spec.policy,
        seed,
        speed,
        start,
        store_path: Some(spec.dir.join("auth-profiles.json")),
    };
    let engine = Engine::new(
        file.engine.clone(),
        file.profile.clone(),
        opts,
        transport,
        breakers.clone(),
        sink,
    )
    .map_err(|e| anyhow!("host {}: starting the engine: {e}", spec.id))?;
    let counters = Arc::new(Counters::default());
    let dispatcher = Arc::new(EngineDispatcher::new(
        Arc::new(engine),
        file.workers,
        seed,
        counters.clone(),
    ));
    let run_for = speed.scale(file.duration);
    let end = crate::util::speed::after(start, run_for);
    let until_end = {
        let mut stop_rx = stop_rx.clone();
        async move {
            tokio::select! {
                _ = sleep_until(end) => {}
                _ = stop_rx.wait_for(|s| *s) => {}
            }
        }
    };
    let summary = replay(
        traffic,
        dispatcher,
        ReplayOptions {
            speed,
            max_in_flight: 4096,
            start,
            pacing: Pacing::Timer,
            keep_records: false,
        },
        until_end,
    )
    .await;
    let mut stop_rx2 = stop_rx.clone();
    tokio::select! {
        _ = sleep_until(end) => {}
        _ = stop_rx2.wait_for(|s| *s) => {}
    }
    canary_stop.request("the run ended");
    let _ = tokio::time::timeout(Duration::from_millis(500), canary_task).await;
    let lag = crate::report::model::Lag {
        p50: summary.lag_p50_ms,
        p99: summary.lag_p99_ms,
        max: summary.lag_max_ms,
    };
    let done = HostDone {
        replay: crate::report::model::ReplayInfo {
            sent: summary.sent,
            lag_ms: lag,
        },
        sent: summary.sent,
        failed: summary.error_count(),
        user_errors: Counters::get(&counters.user_errors),
        mode: breakers.coordinator_mode().unwrap_or("alone").to_string(),
        elapsed_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
        transitions: transitions.sorted().0,
        coordinator_errors: errors.errors.load(Ordering::Relaxed),
        modes: errors.modes.locked().clone(),
    };
    // The run scrapes once more after `done`: keep /metrics up until stdin closes (bounded).
    say(&format!(
        "done {}",
        serde_json::to_string(&done).unwrap_or_default()
    ));
    let mut stop_rx3 = stop_rx;
    let _ = tokio::time::timeout(Duration::from_secs(10), stop_rx3.wait_for(|s| *s)).await;
    let _ = shutdown_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_millis(300), follower).await;
    let _ = tokio::time::timeout(Duration::from_millis(300), m_task).await;
    Ok(())
}
