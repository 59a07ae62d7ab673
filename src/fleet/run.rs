//! One coordination run of a fleet scenario: the mock upstream (recording each request's
//! `host`), the Redis of the `redis` run (the scenario's `url`, or a `redis-server` this run
//! starts), N host processes (`rehearse __fleet-host`), a scraper per host, the coordinator
//! faults on their schedule; at `duration` a final scrape of every host, then every process
//! stopped by its pid and reaped. Nothing is left running: hosts are killed on drop
//! (`kill_on_drop`) and the spawned redis-server when its guard drops. A little over 400
//! lines: the run is one sequence (start, go, wait, collect, stop) best read in one place.
//!
//! Longer than 400 lines on purpose: one coordination run's start-up and tear-down order (upstream,
//! redis, hosts, scrapes, faults, stop) read top to bottom.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::time::{Instant, sleep_until, timeout};

use super::checks::FleetProbe;
pub(crate) use super::error::FleetError;
use super::faults::{CoordinatorFaults, FaultLog};
use super::launch::start_host;
use super::redis_server::SpawnedRedis;
use super::spec::{HostDone, HostSpec};
use crate::engine::Policy;
use crate::run::harness::RunFiles;
use crate::run::observe::FaultHits;
use crate::run::plan::ScenarioPlan;
use crate::run::recorder::{KeptRecords, UpstreamRecorder};
use crate::run::sinks::{EventsWriter, PromFile};
use crate::scenario::fleet::Coordination;
use crate::scrape::{CompactScrapes, Scraper, ScraperConfig, metrics_url};
use crate::util::shutdown::Shutdown;
use crate::verdict::ProbeArrival;

/// How long a host may take past `duration` to say `done`.
const HOST_DONE_GRACE: Duration = Duration::from_secs(10);
/// Longest one scrape may take.
const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

/// `HOST:PORT` of a `redis://[user[:pass]@]HOST:PORT[/DB]` URL, resolved.
fn redis_addr(url: &str) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    let rest = url.strip_prefix("redis://")?;
    let authority = rest.split('/').next()?;
    let hostport = authority.rsplit('@').next()?;
    let hostport = if hostport.contains(':') {
        hostport.to_string()
    } else {
        format!("{hostport}:6379")
    };
    hostport.to_socket_addrs().ok()?.next()
}

/// What one host did.
#[derive(Debug)]
pub(crate) struct HostRun {
    /// `h0`, `h1`, ...
    pub id: String,
    /// Its wall-clock offset, ms.
    pub skew_ms: i64,
    /// Its scrapes.
    pub scrapes: CompactScrapes,
    /// Its `done` line (`None`: it never said it, see `exit`).
    pub done: Option<HostDone>,
    /// How it ended, when not cleanly (`exit status 101`, `killed after the grace`).
    pub exit: Option<String>,
}

/// Everything one coordination run observed.
#[derive(Debug)]
pub(crate) struct FleetRun {
    /// `none` or `redis`.
    pub coordination: Coordination,
    /// Wall time the run took, ms.
    pub elapsed_ms: u64,
    /// The scrape interval at the run's speed, ms.
    pub scrape_interval_ms: u64,
    /// Per host.
    pub hosts: Vec<HostRun>,
    /// Every breaker probe at the upstream (canaries left out), with its host.
    pub probes: Vec<FleetProbe>,
    /// The same, as the single-engine checks read them.
    pub arrivals: Vec<ProbeArrival>,
    /// Which user requests each upstream fault applied to.
    pub fault_hits: Arc<FaultHits>,
    /// Where the coordinator was (`spawned redis-server on 127.0.0.1:PORT`, or the url).
    pub coordinator: Option<String>,
    /// The coordinator faults as they were applied (run ms, what).
    pub coordinator_log: Vec<(u64, String)>,
    /// The coordinator outages of `down` faults: (down ms, back-up ms).
    pub outages: Vec<(u64, Option<u64>)>,
    /// Set when a stop request cut the run short.
    pub stopped: Option<String>,
    /// The upstream's model-request records (kept only when the scenario has expectations
    /// judged at the upstream, `[[expect.attempts]]` and the like; up to the recorder's cap).
    pub upstream_records: KeptRecords,
}

/// Requests its stop when dropped, so the servers of a run that returns part-way stop with it.
struct StopOnDrop(Shutdown);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.request("the run ended");
    }
}

/// Runs `plan` with `coordination`, writing into `run_dir` and `files`.
pub(crate) async fn run_coordination(
    plan: &ScenarioPlan,
    coordination: Coordination,
    run_dir: &Path,
    files: &RunFiles,
    stop: &Shutdown,
) -> Result<FleetRun, FleetError> {
    let file = &plan.checked.file;
    let fleet = &file.fleet;
    let speed = plan.speed;
    let label = coordination.as_str();
    let policy = plan.policies.first().copied().unwrap_or(Policy::RetryGate);
    let start_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    // The upstream stops on this request, or when the run returns early (a host that would not
    // start): the guard requests it on drop.
    let servers = StopOnDrop(Shutdown::new());

    // The upstream every host calls.
    let upstream = crate::run::recorder::scenario_upstream(file, plan.seed, speed);
    let fault_hits = Arc::new(FaultHits::new(speed));
    let log = Arc::new(
        UpstreamRecorder::new(
            EventsWriter::new(files.upstream.clone(), label, speed),
            fault_hits.clone(),
            file.expect.has_ground(),
        )
        .with_cap(plan.record_cap),
    );
    upstream.subscribe(log.clone());
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(FleetError::Bind)?;
    let up_addr = listener.local_addr().map_err(FleetError::Bind)?;
    let up_task = tokio::spawn(crate::upstream::serve(
        listener,
        upstream.clone(),
        servers.0.requested(),
    ));

    // The coordinator.
    let mut spawned: Option<SpawnedRedis> = None;
    let (redis_url, shown) = match coordination {
        Coordination::None => (None, None),
        Coordination::Redis => match file.coordinator.as_ref().and_then(|c| c.url.clone()) {
            Some(url) => {
                // Checked again here: a Redis that went away since the run's own check would
                // make this run local on every host.
                super::coordinator_check::check_url(&url).await?;
                let shown = super::coordinator_check::redacted(&url);
                (Some(url), Some(shown))
            }
            None => {
                let r = SpawnedRedis::start(&run_dir.join("redis"))?;
                let url = r.url();
                let shown = format!(
                    "spawned redis-server (pid {}) on {}",
                    r.pid().unwrap_or(0),
                    url.trim_start_matches("redis://")
                );
                spawned = Some(r);
                (Some(url), Some(shown))
            }
        },
    };
    // A latency fault puts a delaying proxy between the hosts and Redis.
    let faults = CoordinatorFaults::of(&file.fault, speed);
    let mut proxy_task = None;
    let go = Arc::new(std::sync::OnceLock::new());
    let redis_url = match redis_url {
        Some(url) if faults.needs_proxy() => {
            let target = redis_addr(&url).ok_or_else(|| FleetError::Host {
                host: "coordinator".into(),
                why: format!("cannot read host:port from {url} for the latency proxy"),
            })?;
            let (addr, task) = super::faults::latency_proxy(target, faults.clone(), go.clone())
                .await
                .map_err(FleetError::Bind)?;
            proxy_task = Some(task);
            Some(format!("redis://{addr}"))
        }
        other => other,
    };
    let prefix = format!(
        "rehearse:{}:{}",
        run_dir
            .file_name()
            .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned()),
        label
    );

    // The hosts.
    let mut procs = Vec::new();
    for i in 0..fleet.hosts {
        let id = format!("h{i}");
        let dir = run_dir.join("hosts").join(label).join(&id);
        let spec = HostSpec {
            scenario: plan.checked.path.clone(),
            index: i,
            hosts: fleet.hosts,
            id: id.clone(),
            upstream: up_addr,
            redis_url: redis_url.clone(),
            speed,
            seed: plan.seed,
            policy,
            skew_ms: fleet.skew_ms(i),
            dir: dir.clone(),
            label: label.to_string(),
            redis_prefix: Some(prefix.clone()),
        };
        procs.push(start_host(&spec, &dir).await?);
    }
    crate::errln!(
        "{}/{label}: mock upstream http://{up_addr}, {} hosts{}",
        file.name,
        procs.len(),
        shown
            .as_deref()
            .map_or(String::new(), |s| format!(", coordinator {s}"))
    );

    // Go: one instant for the upstream, the scrapers, the faults and every host.
    let start = Instant::now();
    let go_line = format!(
        "go {}\n",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros())
    );
    let _ = go.set(start);
    upstream.set_run_start(start);
    for p in &mut procs {
        if let Some(stdin) = p.stdin.as_mut() {
            let _ = stdin.write_all(go_line.as_bytes()).await;
            let _ = stdin.flush().await;
        }
    }
    if coordination == Coordination::Redis || fleet.hosts > 1 {
        files.scrapes.line(&format!(
            "# coordination {label}: every host's scrapes are in hosts/{label}/HOST/scrapes.prom.gz"
        ));
    }
    let scrape_stop = Shutdown::new();
    let interval = speed.scale(file.scrape_interval);
    let mut scrapers = Vec::new();
    for p in &procs {
        let prom = PromFile::open(
            &run_dir
                .join("hosts")
                .join(label)
                .join(&p.id)
                .join(crate::scrape::SCRAPES_FILE),
        )
        .map_err(|e| FleetError::Host {
            host: p.id.clone(),
            why: format!("opening {}: {e}", crate::scrape::SCRAPES_FILE),
        })?;
        let scraper = Scraper::new(ScraperConfig {
            url: metrics_url(p.metrics),
            interval,
            start,
            timeout: SCRAPE_TIMEOUT,
        });
        let host_unix = start_unix_s + p.skew_ms as f64 / 1000.0;
        let stopped = scrape_stop.requested();
        scrapers.push(tokio::spawn(async move {
            scraper
                .run_into((prom, CompactScrapes::new(host_unix)), stopped)
                .await
                .1
        }));
    }

    // A [prometheus] of the run scrapes every host from the clock's start.
    let prom_targets: Vec<crate::detection::Target> = procs
        .iter()
        .map(|p| crate::detection::Target {
            url: metrics_url(p.metrics),
            host: p.id.clone(),
        })
        .collect();
    // The clock's start (`start`, a moment ago) on the wall clock.
    files
        .targets
        .publish(label, SystemTime::now() - start.elapsed(), &prom_targets);

    // Coordinator faults on their schedule.
    let fault_log = Arc::new(FaultLog::default());
    let fault_task = tokio::spawn(faults.run(spawned, start, fault_log.clone()));

    // Until `duration`, or a stop.
    let run_for = speed.scale(file.duration);
    let end = crate::util::speed::after(start, run_for);
    tokio::select! {
        _ = sleep_until(end) => {}
        _ = stop.requested() => {}
    }
    let elapsed_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    files.targets.withdraw(label);
    let stopped = stop
        .reason()
        .filter(|_| elapsed_ms < u64::try_from(run_for.as_millis()).unwrap_or(u64::MAX));
    if stopped.is_some() {
        // Stdin closing stops a host early.
        for p in &mut procs {
            p.stdin = None;
        }
    }

    // Every host's `done`, then a final scrape of all, then stop them.
    let mut dones = Vec::new();
    let deadline = end + HOST_DONE_GRACE;
    for p in &mut procs {
        let mut done = None;
        while let Ok(Ok(Some(l))) = tokio::time::timeout_at(deadline, p.lines.next_line()).await {
            if let Some(json) = l.strip_prefix("done ") {
                done = serde_json::from_str::<HostDone>(json).ok();
                break;
            }
        }
        dones.push(done);
    }
    scrape_stop.request("the run ended");
    let mut scrapes = Vec::new();
    for s in scrapers {
        scrapes.push(s.await.unwrap_or_else(|e| {
            let mut c = CompactScrapes::new(start_unix_s);
            c.failures += 1;
            c.last_error = Some(format!("the scraper task failed: {e}"));
            c
        }));
    }
    let mut hosts = Vec::new();
    for ((mut p, done), scrapes) in procs.into_iter().zip(dones).zip(scrapes) {
        p.stdin = None;
        let exit = match timeout(Duration::from_secs(3), p.child.wait()).await {
            Ok(Ok(st)) if st.success() => None,
            Ok(Ok(st)) => Some(format!("exit {st}")),
            Ok(Err(e)) => Some(format!("waiting for it: {e}")),
            Err(_) => {
                let _ = p.child.kill().await;
                Some("killed: did not exit 3 s after the run".to_string())
            }
        };
        hosts.push(HostRun {
            id: p.id,
            skew_ms: p.skew_ms,
            scrapes,
            done,
            exit,
        });
    }
    // The fault task owns the spawned redis-server: stopping it stops the server.
    fault_task.abort();
    let _ = fault_task.await;
    if let Some(t) = proxy_task {
        t.abort();
    }
    servers.0.request("the run ended");
    let _ = timeout(Duration::from_millis(500), up_task).await;
    let probes: Vec<FleetProbe> = log
        .probes()
        .into_iter()
        .map(|p| FleetProbe {
            t_ms: p.t_ms,
            dep: p.dep,
            host: p.host.unwrap_or_default(),
            ok: p.ok,
        })
        .collect();
    let arrivals = probes
        .iter()
        .map(|p| ProbeArrival {
            dep: p.dep.clone(),
            t_ms: p.t_ms,
            probe: true,
        })
        .collect();
    Ok(FleetRun {
        coordination,
        elapsed_ms,
        scrape_interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
        hosts,
        probes,
        arrivals,
        fault_hits,
        coordinator: shown,
        coordinator_log: fault_log.entries(),
        outages: fault_log.outages(),
        stopped,
        upstream_records: log.take_records(),
    })
}
