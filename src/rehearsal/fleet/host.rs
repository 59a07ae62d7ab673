//! One gateway host of a fleet run, as its own OS process (`rehearse __fleet-host --spec
//! FILE`, hidden): its own engine, breakers (coordinated through Redis or alone), event log
//! and `/metrics` on loopback; it replays its share of the traffic (split by session) against
//! the run's mock upstream, naming itself in `X-Rehearse-Host`, with its canaries (one per dep
//! its share reaches, as a single run has). Its engine is built by the same rig as the embedded
//! run's ([`crate::rehearsal::embedded::rig`]): the pacer thread, the metrics clock, the in-flight cap. See
//! [`crate::rehearsal::fleet::spec`] for the stdio protocol.

use crate::util::sync::Locked;
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Context, anyhow};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::time::{Instant, sleep_until};

use crate::rehearsal::fleet::spec::{HostDone, HostMode, HostSpec, share};
use crate::engine::breaker::HostClock;
use crate::engine::coordinator::{HostId, RedisCoordinator, RedisOptions};
use crate::engine::{Event, EventKind, EventSink};
use crate::exit::{CmdError, CmdResult};
use crate::rehearsal::embedded::dispatch::Counters;
use crate::rehearsal::embedded::rig::{Coordinate, Rig, RigSpec};
use crate::rehearsal::arm::sinks::{EventsWriter, JsonlFile, TransitionLog};
use crate::util::shutdown::Shutdown;

/// How often a coordinated host reads the shared records.
const FOLLOW_EVERY: Duration = Duration::from_millis(25);

/// Counts `CoordinatorError` events (the host's share of `coordinator_errors_total`) and keeps
/// its `CoordinatorMode` changes (engine ms, mode).
#[derive(Debug, Default)]
struct CoordLog {
    errors: AtomicU64,
    modes: std::sync::Mutex<Vec<(u64, HostMode)>>,
}

impl EventSink for CoordLog {
    fn emit(&self, event: &Event) {
        match &event.kind {
            EventKind::CoordinatorError { .. } => {
                self.errors.fetch_add(1, Ordering::Relaxed);
            }
            EventKind::CoordinatorMode { mode } => {
                self.modes.locked().push((event.t_ms, HostMode::of(mode)))
            }
            _ => {}
        }
    }
}

/// Runs the host described by the JSON file at `spec_path`.
pub(crate) fn command(spec_path: &std::path::Path) -> CmdResult {
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
    let speed = spec.speed;
    let traffic = share(&checked.traffic, spec.index, spec.hosts);
    let host_clock = HostClock::wall_skewed(spec.skew_ms);
    let seed = spec.seed.wrapping_add(spec.index as u64);
    std::fs::create_dir_all(&spec.dir)
        .with_context(|| format!("creating {}", spec.dir.display()))?;
    let events_file = JsonlFile::open(&spec.dir.join("events.jsonl"))
        .with_context(|| format!("opening events.jsonl in {}", spec.dir.display()))?;

    // /metrics is bound first (the run learns where from the `metrics ADDR` line) and served
    // from `go` on, when the engine's clock is known; the run scrapes it from `go`.
    let m_listener = TcpListener::bind("127.0.0.1:0")
        .await
        .context("binding the host's /metrics")?;
    let m_addr = m_listener.local_addr().context("the /metrics address")?;
    say(&format!("metrics {m_addr}"));

    // Wait for `go`; stdin closing before or after it stops the host.
    let stop = Shutdown::new();
    let go_unix_us = wait_for_go(&spec.id, &stop).await?;
    // The run's start is the parent's `go` instant (the same machine's real wall clock, read
    // by both): every host's ms 0 is the upstream's, however late its `go` line arrived.
    let now = Instant::now();
    let late = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH + Duration::from_micros(go_unix_us))
        .unwrap_or_default()
        .min(Duration::from_secs(5));
    let start = now.checked_sub(late).unwrap_or(now);
    let wall_start = std::time::SystemTime::now()
        .checked_sub(now.saturating_duration_since(start))
        .unwrap_or_else(std::time::SystemTime::now);
    let clock = crate::engine::clock::Clock::new(start, wall_start);
    // Its metrics speak this host's (skewed) wall clock, as the run's scrapes of it expect.
    let skewed_unix_s = host_clock
        .read()
        .wall
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
        - now.saturating_duration_since(start).as_secs_f64();
    let metrics = crate::rehearsal::embedded::rig::metrics(start, skewed_unix_s);
    let servers = Shutdown::new();
    let m_task = tokio::spawn(crate::exporter::serve_metrics(
        m_listener,
        metrics.clone(),
        servers.requested(),
    ));

    let transitions = Arc::new(TransitionLog::default());
    let errors = Arc::new(CoordLog::default());
    let coordinate = coordinate(&spec, host_clock)?;
    // This host's engine, as the embedded run builds it: its canaries are one per dep its
    // share of the traffic reaches, over the same transport (so they name the host too).
    let mut rig = Rig::build(RigSpec {
        file,
        traffic: &traffic,
        policy: spec.policy,
        seed,
        speed,
        clock,
        upstream: spec.upstream,
        host: Some(&spec.id),
        store_path: spec.dir.join("auth-profiles.json"),
        metrics,
        sinks: vec![
            Arc::new(EventsWriter::new(events_file, &spec.label, speed)),
            transitions.clone(),
            errors.clone(),
        ],
        canary_sinks: Vec::new(),
        coordinate,
    })
    .map_err(|e| anyhow!("host {}: {e}", spec.id))?;
    let breakers = rig.breakers.clone();
    let follower = tokio::spawn(
        breakers
            .clone()
            .run_follower(FOLLOW_EVERY, servers.requested()),
    );

    let counters = Arc::new(Counters::default());
    let run_for = speed.scale(file.duration);
    let end = crate::util::speed::after(start, run_for);
    let until_end = {
        let stop = stop.clone();
        move || async move {
            tokio::select! {
                _ = sleep_until(end) => {}
                _ = stop.requested() => {}
            }
        }
    };
    let summary = rig
        .replay(Arc::new(traffic), counters.clone(), None, until_end)
        .await
        .map_err(|e| anyhow!("host {}: {e}", spec.id))?;
    tokio::select! {
        _ = sleep_until(end) => {}
        _ = stop.requested() => {}
    }
    rig.stop_canaries(Duration::from_millis(500)).await;
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
    let _ = tokio::time::timeout(Duration::from_secs(10), stop.requested()).await;
    servers.request("the host stopped");
    let _ = tokio::time::timeout(Duration::from_millis(300), follower).await;
    let _ = tokio::time::timeout(Duration::from_millis(300), m_task).await;
    Ok(())
}

/// Reads stdin until the parent's `go US` line (unix µs of the run's start); stdin closing
/// after it requests `stop`, before it is an error.
async fn wait_for_go(id: &str, stop: &Shutdown) -> anyhow::Result<u64> {
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
            _ => return Err(anyhow!("host {id}: stdin closed before `go`")),
        }
    };
    let stop = stop.clone();
    tokio::spawn(async move {
        while let Ok(Some(_)) = lines.next_line().await {}
        stop.request("stdin closed");
    });
    Ok(go_unix_us)
}

/// The host's coordinator client, when the run has a Redis.
fn coordinate(spec: &HostSpec, host_clock: HostClock) -> anyhow::Result<Option<Coordinate>> {
    let Some(url) = &spec.redis_url else {
        return Ok(None);
    };
    let c = RedisCoordinator::new(RedisOptions {
        url: url.clone(),
        prefix: spec
            .redis_prefix
            .clone()
            .unwrap_or_else(|| RedisOptions::default().prefix),
        ..RedisOptions::default()
    })
    .map_err(|e| anyhow!("host {}: {e}", spec.id))?;
    Ok(Some(Coordinate {
        coordinator: Arc::new(c),
        host: HostId::new(&spec.id).map_err(|e| anyhow!("{e}"))?,
        clock: host_clock,
    }))
}
