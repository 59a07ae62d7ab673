//! The one arm lifecycle every kind of run goes through — the embedded engine's policies, a
//! gateway's run (or each version's), a fleet's coordinations. What they share is written here
//! once; a kind plugs in only what it does itself (build the engine, start the gateway and send
//! its turns, launch the hosts):
//!
//! 1. [`Arm::open`]: the mock upstream with the scenario's faults and the one recorder
//!    (upstream.jsonl, probes, fault hits, the kept model requests), bound and serving;
//! 2. the kind starts its system under test against [`Arm::upstream_addr`];
//! 3. [`Arm::go`]: the arm's clock starts — its metrics endpoints published to a
//!    `[prometheus]` of the run, a scraper per endpoint streaming to its `scrapes.prom.gz`, the
//!    sleep watch reading the machine's clocks ([`crate::util::suspend`]), the launcher told
//!    ([`crate::rundir::started`]);
//! 4. [`Arm::until`]: the kind drives until `duration`, a stop request, the upstream's death or
//!    the machine's sleep;
//! 5. [`Arm::end`]: the targets withdrawn, the elapsed time and whether a stop (or a sleep) cut
//!    the arm short;
//! 6. [`Arm::final_scrapes`]: one last scrape of every endpoint, what each scraper kept;
//! 7. [`Arm::close`]: the servers stopped (each within [`SHUTDOWN_GRACE`]) and what the upstream
//!    saw.
//!
//! Dropping an arm part-way (a kind that fails to start returns early) stops its servers and
//! withdraws what it published: nothing of an arm outlives it.

pub mod recorder;
pub mod sinks;
mod supervise;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep_until, timeout};

use crate::rehearsal::observe::FaultHits;
use crate::rehearsal::arm::recorder::{KeptRecords, ProbeSeen, UpstreamRecorder, WarmupSeen};
use crate::rehearsal::arm::sinks::{EventsWriter, JsonlFile, PromFile};
use crate::engine::EventSink;
use crate::scrape::{CompactScrapes, Scraper, ScraperConfig};
use crate::upstream::{Stats, Upstream};
use crate::util::shutdown::Shutdown;
use crate::util::speed::Speed;
use crate::util::suspend::{Sampler, SleepWatch};

/// How long servers get to shut down after an arm.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);
/// Longest one scrape may take.
pub(crate) const SCRAPE_TIMEOUT: Duration = Duration::from_secs(2);

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

/// A loopback server of the arm that could not be bound.
#[derive(Debug, thiserror::Error)]
#[error("binding {addr} for the {what}: {source}")]
pub struct BindError {
    /// Which server.
    pub what: &'static str,
    /// Where.
    pub addr: SocketAddr,
    /// Why.
    pub source: std::io::Error,
}

/// Binds `addr` for `what`.
pub(crate) async fn bind(what: &'static str, addr: SocketAddr) -> Result<TcpListener, BindError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| BindError { what, addr, source })
}

/// An ephemeral loopback port.
pub(crate) const LOOPBACK: SocketAddr = SocketAddr::new(
    std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    0,
);

/// How an arm's mock upstream is set up.
pub(crate) struct UpstreamSpec<'a> {
    /// The scenario, its seed and the run's speed.
    pub plan: &'a crate::rehearsal::plan::ScenarioPlan,
    /// The arm's name in upstream.jsonl and in the targets (policy, version, coordination).
    pub arm: &'a str,
    /// Where the upstream listens (`[upstream] listen`, else [`LOOPBACK`]).
    pub listen: SocketAddr,
    /// The speed its faults' times and the recorder's stamps are divided by.
    pub speed: Speed,
    /// Whether the recorder keeps the model requests in memory (under the plan's cap).
    pub keep_records: bool,
    /// Where duplicate executions are counted (the embedded engine's metrics), if anywhere.
    pub duplicates: Option<Arc<dyn EventSink>>,
}

/// What an endpoint of the system under test is scraped into.
#[derive(Debug)]
pub(crate) struct Scrape {
    /// The scraper (its clock is set to the arm's start by [`Arm::go`]).
    pub url: http::Uri,
    /// The interval, already at the run's speed.
    pub interval: Duration,
    /// The raw scrapes' file.
    pub file: Arc<PromFile>,
    /// Unix seconds its timeline counts from (a fleet host's own clock, skewed).
    pub start_unix_s: f64,
}

/// The moment an arm's clock starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    /// On the monotonic clock.
    pub start: Instant,
    /// On the wall clock.
    pub wall: SystemTime,
}

impl Clock {
    /// Now, read once on both clocks.
    pub(crate) fn now() -> Self {
        Self {
            start: Instant::now(),
            wall: SystemTime::now(),
        }
    }

    /// Unix seconds of the start.
    pub(crate) fn unix_s(&self) -> f64 {
        self.wall
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    }
}

/// How an arm's run ended.
#[derive(Debug, Clone)]
pub(crate) struct Ending {
    /// Wall time from the clock's start, ms.
    pub elapsed_ms: u64,
    /// Set when a stop request cut the arm short, the machine slept during it (`the machine
    /// slept for N s at T`: then `elapsed_ms` ends at the last reading before the sleep), or the
    /// upstream died (see `died`).
    pub stopped: Option<String>,
    /// Set when the mock upstream died mid-run (a harness failure).
    pub died: Option<String>,
}

/// What the upstream saw, once its server stopped.
#[derive(Debug)]
pub(crate) struct Closed {
    /// The recorder's model requests (when kept).
    pub records: KeptRecords,
    /// Which user requests each fault applied to.
    pub fault_hits: Arc<FaultHits>,
    /// The breaker probes that arrived (canaries left out).
    pub probes: Vec<ProbeSeen>,
    /// The upstream's statistics.
    pub stats: Stats,
    /// What arrived before the clock started (a gateway's warm-up).
    pub warmup: WarmupSeen,
}

/// One arm: its upstream, its recorder, its scrapers, its published targets, its stops.
#[derive(Debug)]
pub(crate) struct Arm<'a> {
    name: String,
    files: &'a RunFiles,
    stop: &'a Shutdown,
    /// The upstream's stop, and that of every server the kind adopts.
    servers: Shutdown,
    scrape_stop: Shutdown,
    /// Requested when the watched upstream ended before the arm stopped it.
    died: Shutdown,
    /// Requested when the machine slept after the clock started.
    slept: Shutdown,
    sleep_watch: SleepWatch,
    sampler: Option<Sampler>,
    upstream: Arc<Upstream>,
    recorder: Arc<UpstreamRecorder>,
    fault_hits: Arc<FaultHits>,
    addr: SocketAddr,
    up_task: Option<JoinHandle<std::io::Result<()>>>,
    watched: Option<JoinHandle<()>>,
    others: Vec<JoinHandle<std::io::Result<()>>>,
    scrapers: Vec<(f64, JoinHandle<CompactScrapes>)>,
    clock: Option<Clock>,
    published: bool,
}

impl<'a> Arm<'a> {
    /// Step 1: the mock upstream and its recorder, bound and serving.
    pub(crate) async fn open(
        spec: UpstreamSpec<'_>,
        files: &'a RunFiles,
        stop: &'a Shutdown,
    ) -> Result<Arm<'a>, BindError> {
        let file = &spec.plan.checked.file;
        let upstream = crate::rehearsal::arm::recorder::scenario_upstream(file, spec.plan.seed, spec.speed);
        let fault_hits = Arc::new(FaultHits::new(spec.speed));
        let mut recorder = UpstreamRecorder::new(
            EventsWriter::new(files.upstream.clone(), spec.arm, spec.speed),
            fault_hits.clone(),
            spec.keep_records,
        )
        .with_cap(spec.plan.record_cap);
        if let Some(sink) = spec.duplicates {
            recorder = recorder.with_duplicates(sink);
        }
        let recorder = Arc::new(recorder);
        upstream.subscribe(recorder.clone());
        let listener = bind("mock upstream", spec.listen).await?;
        let addr = listener.local_addr().unwrap_or(spec.listen);
        let servers = Shutdown::new();
        let up_task = tokio::spawn(crate::upstream::serve(
            listener,
            upstream.clone(),
            servers.requested(),
        ));
        Ok(Arm {
            name: spec.arm.to_string(),
            files,
            stop,
            servers,
            scrape_stop: Shutdown::new(),
            died: Shutdown::new(),
            slept: Shutdown::new(),
            sleep_watch: spec.plan.sleep_watch.clone(),
            sampler: None,
            upstream,
            recorder,
            fault_hits,
            addr,
            up_task: Some(up_task),
            watched: None,
            others: Vec::new(),
            scrapers: Vec::new(),
            clock: None,
            published: false,
        })
    }

    /// The arm's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Where the upstream listens.
    pub(crate) fn upstream_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The mock upstream (to arm or disarm its faults, set its run start).
    pub(crate) fn upstream(&self) -> &Arc<Upstream> {
        &self.upstream
    }

    /// The one recorder.
    pub(crate) fn recorder(&self) -> &Arc<UpstreamRecorder> {
        &self.recorder
    }

    /// The run's user stop (SIGINT/SIGTERM, the run's own deadline).
    pub(crate) fn stop(&self) -> &'a Shutdown {
        self.stop
    }

    /// The stop every server of the arm serves until (for a server the kind starts itself and
    /// hands to [`Arm::adopt`]).
    pub(crate) fn servers(&self) -> &Shutdown {
        &self.servers
    }

    /// A server of the kind's (the engine's `/metrics`) stopped with the upstream.
    pub(crate) fn adopt(&mut self, task: JoinHandle<std::io::Result<()>>) {
        self.others.push(task);
    }

    /// The upstream's server ending before [`Arm::close`] is a harness failure: the arm ends
    /// there ([`Arm::until`] returns) and [`Ending::died`] says why and when (scenario time from
    /// `start` at `speed`).
    pub(crate) fn watch_upstream(&mut self, start: Instant, speed: Speed) {
        if let Some(task) = self.up_task.take() {
            let (watched, died) =
                crate::rehearsal::arm::supervise::watch_upstream(task, self.servers.clone(), start, speed);
            self.watched = Some(watched);
            self.died = died;
        }
    }

    /// Step 3: the clock starts — `targets` published to a `[prometheus]` of the run (from the
    /// clock's wall start), a scraper started per `scrapes`, the machine's clocks read for a
    /// sleep (about every second) until the arm ends.
    pub(crate) fn go(
        &mut self,
        clock: Clock,
        targets: &[crate::detection::Target],
        scrapes: Vec<Scrape>,
    ) {
        self.clock = Some(clock);
        crate::rundir::started::mark(clock.wall);
        self.sampler = Some(Sampler::start(&self.sleep_watch, self.slept.clone()));
        self.files.targets.publish(&self.name, clock.wall, targets);
        self.published = true;
        for s in scrapes {
            let scraper = Scraper::new(ScraperConfig {
                url: s.url,
                interval: s.interval,
                start: clock.start,
                timeout: SCRAPE_TIMEOUT,
            });
            self.scraper(scraper, s.file, s.start_unix_s);
        }
    }

    /// A scraper the kind built itself (a gateway's, which took the baseline at the steady
    /// state), started on the arm's scrape stop.
    pub(crate) fn scraper(&mut self, scraper: Scraper, file: Arc<PromFile>, start_unix_s: f64) {
        let stopped = self.scrape_stop.requested();
        let sink = (file, CompactScrapes::new(start_unix_s));
        let task = tokio::spawn(async move { scraper.run_into(sink, stopped).await.1 });
        self.scrapers.push((start_unix_s, task));
    }

    /// Step 4: until `end`, a stop request, the watched upstream's death or the machine's
    /// sleep, whichever is first.
    pub(crate) async fn until(&self, end: Instant) {
        self.ends_at(end).await
    }

    /// [`Arm::until`] as a future of its own (for the replayer's pacer, which outlives borrows).
    pub(crate) fn ends_at(&self, end: Instant) -> impl Future<Output = ()> + Send + 'static {
        let cut = self.cut_short();
        async move {
            tokio::select! {
                _ = sleep_until(end) => {}
                _ = cut => {}
            }
        }
    }

    /// Resolves once anything but the time ends the arm: a stop request, the watched upstream's
    /// death, the machine's sleep (for a kind that waits on more than [`Arm::until`], a
    /// gateway's turns).
    pub(crate) fn cut_short(&self) -> impl Future<Output = ()> + Send + 'static {
        let (stop, died, slept) = (self.stop.clone(), self.died.clone(), self.slept.clone());
        async move {
            tokio::select! {
                _ = stop.requested() => {}
                _ = died.requested() => {}
                _ = slept.requested() => {}
            }
        }
    }

    /// Step 5: the targets withdrawn, the sleep watch stopped; the elapsed time since the
    /// clock's start; a stop request counts as cutting the arm short when `cut` says so of the
    /// elapsed ms (usually: before `duration`), and a dead upstream always does. So does a sleep
    /// of the machine, first: the arm then ends at the last reading before it, so nothing
    /// across the gap is judged.
    pub(crate) fn end(&mut self, cut: impl FnOnce(u64) -> bool) -> Ending {
        let gap = self.sampler.take().and_then(|s| s.gap());
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let elapsed_ms = self.clock.map_or(0, |c| match gap {
            Some(g) => ms(g.before.saturating_duration_since(c.start)),
            None => ms(c.start.elapsed()),
        });
        self.withdraw();
        let died = self.died.reason();
        let stop = || self.stop.reason().filter(|_| cut(elapsed_ms));
        Ending {
            elapsed_ms,
            stopped: gap
                .map(|g| g.slept.reason())
                .or_else(stop)
                .or_else(|| died.clone()),
            died,
        }
    }

    fn withdraw(&mut self) {
        if std::mem::take(&mut self.published) {
            self.files.targets.withdraw(&self.name);
        }
    }

    /// Step 6: a final scrape of every endpoint, then what each scraper kept (in the order
    /// they were started; a scraper task that failed is one failed scrape, said).
    pub(crate) async fn final_scrapes(&mut self) -> Vec<CompactScrapes> {
        self.scrape_stop.request("the run ended");
        let mut out = Vec::new();
        for (start_unix_s, task) in self.scrapers.drain(..) {
            out.push(task.await.unwrap_or_else(|e| {
                let mut compact = CompactScrapes::new(start_unix_s);
                compact.failures += 1;
                compact.last_error = Some(format!("the scraper task failed: {e}"));
                compact
            }));
        }
        out
    }

    /// Step 7: every server stopped (each given [`SHUTDOWN_GRACE`]); what the upstream saw.
    pub(crate) async fn close(mut self) -> Closed {
        self.stop_servers().await;
        Closed {
            records: self.recorder.take_records(),
            fault_hits: self.fault_hits.clone(),
            probes: self.recorder.probes(),
            stats: self.upstream.stats(),
            warmup: self.recorder.warmup(),
        }
    }

    async fn stop_servers(&mut self) {
        self.servers.request("the run ended");
        if let Some(t) = self.up_task.take() {
            let _ = timeout(SHUTDOWN_GRACE, t).await;
        }
        if let Some(t) = self.watched.take() {
            let _ = timeout(SHUTDOWN_GRACE, t).await;
        }
        for t in self.others.drain(..) {
            let _ = timeout(SHUTDOWN_GRACE, t).await;
        }
    }
}

impl Drop for Arm<'_> {
    fn drop(&mut self) {
        self.withdraw();
        self.scrape_stop.request("the run ended");
        self.servers.request("the run ended");
    }
}

#[cfg(test)]
mod tests;
