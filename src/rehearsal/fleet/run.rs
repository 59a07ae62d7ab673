//! One coordination run of a fleet scenario: the mock upstream (recording each request's
//! `host`), the Redis of the `redis` run (the scenario's `url`, or a `redis-server` this run
//! starts), N host processes (`rehearse __fleet-host`), a scraper per host, the coordinator
//! faults on their schedule; at `duration` a final scrape of every host, then every process
//! stopped by its pid and reaped. Nothing is left running: hosts are killed on drop
//! (`kill_on_drop`) and the spawned redis-server when its guard drops. The steps every arm
//! shares (upstream and recorder, targets, scrapers, the stops) are [`crate::rehearsal::arm`]'s; this
//! file plugs in the coordinator, the hosts and the coordinator faults.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use tokio::io::AsyncWriteExt;
use tokio::time::{Instant, timeout};

use crate::rehearsal::fleet::checks::FleetProbe;
pub(crate) use crate::rehearsal::fleet::error::FleetError;
use crate::rehearsal::fleet::faults::{CoordinatorFaults, FaultLog};
use crate::rehearsal::fleet::launch::start_host;
use crate::rehearsal::fleet::redis_server::SpawnedRedis;
use crate::rehearsal::fleet::spec::{HostDone, HostSpec};
use crate::engine::Policy;
use crate::rehearsal::arm::{Arm, Clock, LOOPBACK, RunFiles, Scrape, UpstreamSpec};
use crate::rehearsal::observe::FaultHits;
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::arm::recorder::KeptRecords;
use crate::rehearsal::arm::sinks::PromFile;
use crate::scenario::fleet::Coordination;
use crate::scrape::{CompactScrapes, metrics_url};
use crate::util::shutdown::Shutdown;
use crate::verdict::ProbeArrival;

/// How long a host may take past `duration` to say `done`.
const HOST_DONE_GRACE: Duration = Duration::from_secs(10);

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
    let start_unix_s = Clock::now().unix_s();
    // The upstream every host calls (stopped with the arm, also when this returns early).
    let mut arm = Arm::open(
        UpstreamSpec {
            plan,
            arm: label,
            listen: LOOPBACK,
            speed,
            keep_records: file.expect.has_ground(),
            duplicates: None,
        },
        files,
        stop,
    )
    .await
    .map_err(|e| FleetError::Bind(e.source))?;
    let up_addr = arm.upstream_addr();
    let coordinator = Coordinator::start(plan, coordination, run_dir).await?;
    let mut procs = launch_hosts(plan, coordination, run_dir, up_addr, &coordinator).await?;
    crate::errln!(
        "{}/{label}: mock upstream http://{up_addr}, {} hosts{}",
        file.name,
        procs.len(),
        coordinator
            .shown
            .as_deref()
            .map_or(String::new(), |s| format!(", coordinator {s}"))
    );

    // Go: one instant for the upstream, the scrapers, the faults and every host.
    let clock = Clock::now();
    let go_line = format!(
        "go {}\n",
        clock
            .wall
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros())
    );
    let _ = coordinator.go.set(clock.start);
    arm.upstream().set_run_start(clock.start);
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
    // A scraper per host, and a [prometheus] of the run scraping every host, from the clock's
    // start.
    let interval = speed.scale(file.scrape_interval);
    let mut scrapes = Vec::new();
    for p in &procs {
        let at = run_dir.join("hosts").join(label).join(&p.id);
        let prom = PromFile::open(&at.join(crate::scrape::SCRAPES_FILE)).map_err(|e| {
            FleetError::Host {
                host: p.id.clone(),
                why: format!("opening {}: {e}", crate::scrape::SCRAPES_FILE),
            }
        })?;
        scrapes.push(Scrape {
            url: metrics_url(p.metrics),
            interval,
            file: prom,
            start_unix_s: start_unix_s + p.skew_ms as f64 / 1000.0,
        });
    }
    let targets: Vec<crate::detection::Target> = procs
        .iter()
        .map(|p| crate::detection::Target {
            url: metrics_url(p.metrics),
            host: p.id.clone(),
        })
        .collect();
    arm.go(clock, &targets, scrapes);

    // Coordinator faults on their schedule; until `duration`, or a stop.
    let fault_log = Arc::new(FaultLog::default());
    let fault_task = tokio::spawn(coordinator.faults.run(
        coordinator.spawned,
        clock.start,
        fault_log.clone(),
    ));
    let run_for = speed.scale(file.duration);
    let end = crate::util::speed::after(clock.start, run_for);
    arm.until(end).await;
    let run_for_ms = u64::try_from(run_for.as_millis()).unwrap_or(u64::MAX);
    let ending = arm.end(|ms| ms < run_for_ms);
    if ending.stopped.is_some() {
        // Stdin closing stops a host early.
        for p in &mut procs {
            p.stdin = None;
        }
    }

    // Every host's `done`, then a final scrape of all, then stop them.
    let dones = host_dones(&mut procs, end + HOST_DONE_GRACE).await;
    let scrapes = arm.final_scrapes().await;
    let hosts = stop_hosts(procs, dones, scrapes).await;
    // The fault task owns the spawned redis-server: stopping it stops the server.
    fault_task.abort();
    let _ = fault_task.await;
    if let Some(t) = coordinator.proxy_task {
        t.abort();
    }
    let closed = arm.close().await;
    let arrivals = crate::rehearsal::embedded::run::probe_arrivals(&closed.probes);
    let probes: Vec<FleetProbe> = closed
        .probes
        .into_iter()
        .map(|p| FleetProbe {
            t_ms: p.t_ms,
            dep: p.dep,
            host: p.host.unwrap_or_default(),
            ok: p.ok,
        })
        .collect();
    Ok(FleetRun {
        coordination,
        elapsed_ms: ending.elapsed_ms,
        scrape_interval_ms: u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
        hosts,
        probes,
        arrivals,
        fault_hits: closed.fault_hits,
        coordinator: coordinator.shown,
        coordinator_log: fault_log.entries(),
        outages: fault_log.outages(),
        stopped: ending.stopped,
        upstream_records: closed.records,
    })
}

/// The coordinator of one coordination run: none, the scenario's Redis, or a redis-server
/// started here; behind a delaying proxy when a latency fault needs one.
struct Coordinator {
    /// The URL the hosts are given.
    url: Option<String>,
    /// Where it is, as the report says it.
    shown: Option<String>,
    /// The redis-server this run started (its faults stop and start it).
    spawned: Option<SpawnedRedis>,
    faults: CoordinatorFaults,
    proxy_task: Option<tokio::task::JoinHandle<()>>,
    /// The clock's start, for the proxy's fault windows.
    go: Arc<std::sync::OnceLock<Instant>>,
    /// The keys' prefix of this run and coordination.
    prefix: String,
}

impl Coordinator {
    async fn start(
        plan: &ScenarioPlan,
        coordination: Coordination,
        run_dir: &Path,
    ) -> Result<Self, FleetError> {
        let file = &plan.checked.file;
        let mut spawned: Option<SpawnedRedis> = None;
        let (url, shown) = match coordination {
            Coordination::None => (None, None),
            Coordination::Redis => match file.coordinator.as_ref().and_then(|c| c.url.clone()) {
                Some(url) => {
                    // Checked again here: a Redis that went away since the run's own check
                    // would make this run local on every host.
                    crate::rehearsal::fleet::coordinator_check::check_url(&url).await?;
                    let shown = crate::rehearsal::fleet::coordinator_check::redacted(&url);
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
        let faults = CoordinatorFaults::of(&file.fault, plan.speed);
        let go = Arc::new(std::sync::OnceLock::new());
        let mut proxy_task = None;
        let url = match url {
            Some(url) if faults.needs_proxy() => {
                let target = redis_addr(&url).ok_or_else(|| FleetError::Host {
                    host: "coordinator".into(),
                    why: format!("cannot read host:port from {url} for the latency proxy"),
                })?;
                let (addr, task) = crate::rehearsal::fleet::faults::latency_proxy(target, faults.clone(), go.clone())
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
            coordination.as_str()
        );
        Ok(Self {
            url,
            shown,
            spawned,
            faults,
            proxy_task,
            go,
            prefix,
        })
    }
}

/// Starts every host process (`rehearse __fleet-host`), waiting for the clock.
async fn launch_hosts(
    plan: &ScenarioPlan,
    coordination: Coordination,
    run_dir: &Path,
    upstream: SocketAddr,
    coordinator: &Coordinator,
) -> Result<Vec<crate::rehearsal::fleet::launch::Proc>, FleetError> {
    let file = &plan.checked.file;
    let fleet = &file.fleet;
    let label = coordination.as_str();
    let policy = plan.policies.first().copied().unwrap_or(Policy::RetryGate);
    let mut procs = Vec::new();
    for i in 0..fleet.hosts {
        let id = format!("h{i}");
        let dir = run_dir.join("hosts").join(label).join(&id);
        let spec = HostSpec {
            scenario: plan.checked.path.clone(),
            index: i,
            hosts: fleet.hosts,
            id: id.clone(),
            upstream,
            redis_url: coordinator.url.clone(),
            speed: plan.speed,
            seed: plan.seed,
            policy,
            skew_ms: fleet.skew_ms(i),
            dir: dir.clone(),
            label: label.to_string(),
            redis_prefix: Some(coordinator.prefix.clone()),
        };
        procs.push(start_host(&spec, &dir).await?);
    }
    Ok(procs)
}

/// Every host's `done` line, read until `deadline`.
async fn host_dones(
    procs: &mut [crate::rehearsal::fleet::launch::Proc],
    deadline: Instant,
) -> Vec<Option<HostDone>> {
    let mut dones = Vec::new();
    for p in procs {
        let mut done = None;
        while let Ok(Ok(Some(l))) = tokio::time::timeout_at(deadline, p.lines.next_line()).await {
            if let Some(json) = l.strip_prefix("done ") {
                done = serde_json::from_str::<HostDone>(json).ok();
                break;
            }
        }
        dones.push(done);
    }
    dones
}

/// Every host stopped (its stdin closed, then killed 3 s later) and reaped, with what it did.
async fn stop_hosts(
    procs: Vec<crate::rehearsal::fleet::launch::Proc>,
    dones: Vec<Option<HostDone>>,
    scrapes: Vec<CompactScrapes>,
) -> Vec<HostRun> {
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
    hosts
}
