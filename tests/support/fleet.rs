//! A simulated fleet in one test process: several `Breakers`, each a host with its own id, clock
//! skew, event collector and coordinator handle, sharing one backend (the in-process room or a
//! real redis-server), with their followers running.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rehearse::engine::admission::{Admission, Admit};
use rehearse::engine::breaker::BreakerConfig;
use rehearse::engine::breaker::{Breakers, HostClock};
use rehearse::engine::coordinator::{
    ChangeArgs, CloseRule, CooldownWrite, CoordFuture, Coordinator, HostId, InProcess, Lease,
    Record, RedisCoordinator, RedisOptions, Seed, SharedCooldown,
};
use rehearse::engine::events::{BreakerState, Collector, Event, EventKind, EventSink, FanOut};
use rehearse::engine::metrics::Metrics;
use rehearse::engine::outcome::AttemptResult;
use tokio::time::Instant;

use super::redis::RedisServer;

/// Poll period of the hosts' followers.
pub const FOLLOW: Duration = Duration::from_millis(25);

/// Where the fleet's shared state lives.
pub enum Backend {
    /// The in-process room (paused time).
    InProcess(InProcess),
    /// A real redis-server (real time).
    Redis(RedisServer),
}

impl Backend {
    /// A fresh room.
    pub fn in_process() -> Self {
        Self::InProcess(InProcess::new())
    }

    /// A fresh redis-server on a free port.
    pub fn redis() -> Self {
        Self::Redis(RedisServer::start())
    }

    /// True for the real-time backend.
    pub fn real_time(&self) -> bool {
        matches!(self, Self::Redis(_))
    }

    /// The mode label hosts report while it answers.
    pub fn mode(&self) -> &'static str {
        match self {
            Self::InProcess(_) => "in_process",
            Self::Redis(_) => "redis",
        }
    }

    /// One host's handle on it (Redis: its own connection manager).
    pub fn coordinator(&self) -> Arc<dyn Coordinator> {
        match self {
            Self::InProcess(room) => Arc::new(room.clone()),
            Self::Redis(server) => Arc::new(
                RedisCoordinator::new(RedisOptions {
                    url: server.url(),
                    ..RedisOptions::default()
                })
                .expect("redis coordinator"),
            ),
        }
    }

    /// Takes it away (Redis: kills the server process).
    pub fn down(&mut self) {
        match self {
            Self::InProcess(room) => room.set_down(true),
            Self::Redis(server) => server.kill(),
        }
    }

    /// Brings it back empty, as a restarted Redis without persistence.
    pub fn restart(&mut self) {
        match self {
            Self::InProcess(room) => {
                room.wipe();
                room.set_down(false);
            }
            Self::Redis(server) => server.restart(),
        }
    }
}

/// Counts every coordinator call, then passes it on.
#[derive(Debug)]
pub struct Counting {
    inner: Arc<dyn Coordinator>,
    /// Calls so far.
    pub calls: AtomicUsize,
}

impl Counting {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Coordinator>) -> Self {
        Self {
            inner,
            calls: AtomicUsize::new(0),
        }
    }

    fn count(&self) {
        self.calls.fetch_add(1, Ordering::SeqCst);
    }
}

impl Coordinator for Counting {
    fn mode(&self) -> &'static str {
        self.inner.mode()
    }
    fn read<'a>(&'a self, deps: &'a [String]) -> CoordFuture<'a, Vec<Option<Record>>> {
        self.count();
        self.inner.read(deps)
    }
    fn change<'a>(&'a self, d: &'a str, h: &'a HostId, a: ChangeArgs) -> CoordFuture<'a, Record> {
        self.count();
        self.inner.change(d, h, a)
    }
    fn lease<'a>(
        &'a self,
        d: &'a str,
        h: &'a HostId,
        e: u64,
        t: Duration,
    ) -> CoordFuture<'a, Lease> {
        self.count();
        self.inner.lease(d, h, e, t)
    }
    fn probe_ok<'a>(
        &'a self,
        d: &'a str,
        h: &'a HostId,
        e: u64,
        r: CloseRule,
    ) -> CoordFuture<'a, Record> {
        self.count();
        self.inner.probe_ok(d, h, e, r)
    }
    fn seed<'a>(&'a self, d: &'a str, h: &'a HostId, s: Seed) -> CoordFuture<'a, Record> {
        self.count();
        self.inner.seed(d, h, s)
    }
    fn put_cooldown<'a>(&'a self, p: &'a str, w: &'a CooldownWrite) -> CoordFuture<'a, Duration> {
        self.count();
        self.inner.put_cooldown(p, w)
    }
    fn cooldown<'a>(&'a self, p: &'a str) -> CoordFuture<'a, Option<SharedCooldown>> {
        self.count();
        self.inner.cooldown(p)
    }
}

/// One simulated host.
pub struct Host {
    /// Its id (`h0`, `h1`, ...).
    pub id: String,
    /// Its breakers.
    pub b: Arc<Breakers>,
    /// Its events.
    pub events: Arc<Collector>,
    /// Its metrics registry (fed by the same events).
    pub metrics: Arc<Metrics>,
    /// Its clocks.
    pub clock: HostClock,
}

impl Host {
    /// Admits one call of `worker` at this host's `now`.
    pub async fn admit(&self, dep: &str, worker: usize) -> Admit {
        self.b.admit_async(dep, worker, self.clock.now()).await
    }

    /// Records a result at this host's `now`.
    pub async fn record(&self, dep: &str, worker: usize, probe: bool, r: &AttemptResult) {
        self.b
            .record_async(dep, worker, probe, r, self.clock.read())
            .await
    }

    /// Admits and, if allowed, records `r` at once; the admission.
    pub async fn call(&self, dep: &str, worker: usize, r: &AttemptResult) -> Admit {
        let a = self.admit(dep, worker).await;
        if let Admit::Allow { probe, .. } = a {
            self.record(dep, worker, probe, r).await;
        }
        a
    }

    /// The host's coordinator mode.
    pub fn mode(&self) -> &'static str {
        self.b.coordinator_mode().unwrap_or("alone")
    }

    /// Coordinator events of `kind` (`error`, `mode`) seen so far.
    pub fn coordinator_events(&self) -> Vec<EventKind> {
        self.events
            .events()
            .into_iter()
            .map(|e: Event| e.kind)
            .filter(|k| {
                matches!(
                    k,
                    EventKind::CoordinatorError { .. } | EventKind::CoordinatorMode { .. }
                )
            })
            .collect()
    }
}

/// The fleet.
pub struct Fleet {
    /// Its hosts.
    pub hosts: Vec<Host>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl Fleet {
    /// `n` hosts on `backend` (`None`: every host alone), host i's clocks skewed by
    /// `skews[i % len]` ms, followers polling every [`FOLLOW`].
    pub fn new(backend: Option<&Backend>, n: usize, cfg: &BreakerConfig, skews: &[i64]) -> Self {
        let (stop, rx) = tokio::sync::watch::channel(false);
        let t0 = Instant::now();
        let hosts = (0..n)
            .map(|i| {
                let clock =
                    HostClock::skewed(skews.get(i % skews.len().max(1)).copied().unwrap_or(0));
                let events = Arc::new(Collector::default());
                let metrics = Arc::new(Metrics::new(1_700_000_000.0));
                let sink: Arc<dyn EventSink> =
                    Arc::new(FanOut(vec![events.clone(), metrics.clone()]));
                let b = Breakers::new(
                    cfg.clone(),
                    rehearse::util::speed::Speed::ONE,
                    40 + i as u64,
                    sink,
                    clock.shift(t0),
                );
                let id = format!("h{i}");
                let b = match backend {
                    Some(be) => b.with_coordinator(
                        be.coordinator(),
                        HostId::new(&id).expect("host id"),
                        clock,
                    ),
                    None => b,
                };
                let b = Arc::new(b);
                let mut rx = rx.clone();
                tokio::spawn(b.clone().run_follower(FOLLOW, async move {
                    let _ = rx.wait_for(|s| *s).await;
                }));
                Host {
                    id,
                    b,
                    events,
                    metrics,
                    clock,
                }
            })
            .collect();
        Self { hosts, stop }
    }

    /// Every host's state of `dep` now (each host's breakers advanced to its own `now`, as the
    /// engine's ticker does).
    pub fn states(&self, dep: &str) -> Vec<BreakerState> {
        self.hosts
            .iter()
            .map(|h| {
                h.b.tick(h.clock.now());
                h.b.state(dep)
            })
            .collect()
    }

    /// Waits (polling every 5 ms, at most `limit`) until `f` holds; how long it took.
    pub async fn until(&self, limit: Duration, f: impl Fn(&Self) -> bool) -> Option<Duration> {
        let t = Instant::now();
        while t.elapsed() <= limit {
            if f(self) {
                return Some(t.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        None
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Probe starts seen by the "upstream": (when, host index), on the process's unshifted clock.
pub type Probes = Arc<Mutex<Vec<(Instant, usize)>>>;

/// Every host calls `dep` every 10 ms for `for_` (one worker per host); an admitted probe is
/// noted in `probes` and answered with `probe_result` after 20 ms; other calls with `ok`.
pub async fn drive(
    fleet: &Fleet,
    dep: &str,
    for_: Duration,
    probe_result: AttemptResult,
    probes: &Probes,
) {
    let end = Instant::now() + for_;
    let tasks = fleet.hosts.iter().enumerate().map(|(i, h)| {
        let probe_result = probe_result.clone();
        async move {
            while Instant::now() < end {
                if let Admit::Allow { probe, .. } = h.admit(dep, 0).await {
                    let r = if probe {
                        probes.lock().unwrap().push((Instant::now(), i));
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        probe_result.clone()
                    } else {
                        super::breaker::ok(10)
                    };
                    h.record(dep, 0, probe, &r).await;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    });
    futures_util::future::join_all(tasks).await;
}

/// The gaps between consecutive probe starts (all hosts, or one host).
pub fn gaps(probes: &Probes, host: Option<usize>) -> Vec<Duration> {
    let mut v: Vec<Instant> = probes
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, h)| host.is_none_or(|x| x == *h))
        .map(|(t, _)| *t)
        .collect();
    v.sort();
    v.windows(2).map(|w| w[1] - w[0]).collect()
}
