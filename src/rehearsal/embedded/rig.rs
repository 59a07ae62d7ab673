//! The one engine rig of the embedded run and of every fleet host: the engine's metrics built
//! with its clock ([`metrics`]), its breakers (coordinated or alone) reading their state at
//! scrape time, the real transport to the mock upstream, the synthetic health checks, the engine
//! itself, and the replay — the pacer on a thread of its own (timer, then OS naps), every
//! request on the calling runtime, at most [`MAX_IN_FLIGHT`] at once. Both kinds of run build it
//! here, so a fleet host paces, counts and scrapes exactly as the embedded run does.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::runtime::Handle;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::rehearsal::embedded::dispatch::{Counters, EngineDispatcher};
use crate::engine::breaker::{Breakers, HostClock};
use crate::engine::clock::Clock;
use crate::engine::coordinator::{Coordinator, HostId};
use crate::engine::events::FanOut;
use crate::engine::metrics::{AtScrape, Metrics, ProfilesAtScrape};
use crate::engine::{Engine, EngineOptions, EventSink, Policy};
use crate::replay::replay_on_pacer_thread;
use crate::replay::replayer::{Pacing, ReplayOptions, ReplaySummary};
use crate::replay::traffic::TrafficLine;
use crate::scenario::ScenarioFile;
use crate::transport::{Diagnostics, HttpTransport, SocketsReport};
use crate::util::shutdown::Shutdown;
use crate::util::speed::Speed;

/// Most requests in flight at once in a run (the replayer counts overflow beyond it).
const MAX_IN_FLIGHT: usize = 4096;

/// Why the rig could not be built or could not replay (a harness failure).
#[derive(Debug, thiserror::Error)]
pub enum RigError {
    /// The engine refused its configuration.
    #[error("starting the engine: {0}")]
    Engine(#[source] crate::engine::ConfigError),
    /// The replay's pacer thread could not start or failed.
    #[error("replaying the traffic: {0}")]
    Pacer(String),
}

/// The engine's metrics registry, tied to the engine's clock: ms 0 is `start`, whose wall-clock
/// time on the exporting host is `start_unix_s`; every render refreshes the disagreement gauge
/// to the render time.
pub(crate) fn metrics(start: Instant, start_unix_s: f64) -> Arc<Metrics> {
    Arc::new(Metrics::new(start_unix_s).with_clock(start))
}

/// A fleet host's coordination: the shared coordinator, the host's id and clock.
pub(crate) struct Coordinate {
    /// The coordinator (Redis).
    pub coordinator: Arc<dyn Coordinator>,
    /// This host.
    pub host: HostId,
    /// This host's clock.
    pub clock: HostClock,
}

impl std::fmt::Debug for Coordinate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coordinate")
            .field("host", &self.host)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

/// What the rig is built from.
pub(crate) struct RigSpec<'a> {
    /// The scenario.
    pub file: &'a ScenarioFile,
    /// The traffic this engine replays (its canaries follow the deps it reaches).
    pub traffic: &'a [TrafficLine],
    /// The engine policy.
    pub policy: Policy,
    /// The seed.
    pub seed: u64,
    /// The `--speed` divisor.
    pub speed: Speed,
    /// The run's one reading of both clocks.
    pub clock: Clock,
    /// The mock upstream.
    pub upstream: SocketAddr,
    /// The host id the transport names in `X-Rehearse-Host` (fleet hosts).
    pub host: Option<&'a str>,
    /// Where the engine keeps its auth-profile store.
    pub store_path: PathBuf,
    /// The metrics from [`metrics`].
    pub metrics: Arc<Metrics>,
    /// Every other sink of the engine's events (events.jsonl, the transition log, ...).
    pub sinks: Vec<Arc<dyn EventSink>>,
    /// Sinks of the canaries' events only (the run's canary tally).
    pub canary_sinks: Vec<Arc<dyn EventSink>>,
    /// The coordination of a fleet host (`None`: the breakers decide alone).
    pub coordinate: Option<Coordinate>,
}

impl std::fmt::Debug for RigSpec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RigSpec")
            .field("policy", &self.policy)
            .field("seed", &self.seed)
            .field("upstream", &self.upstream)
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

/// A built engine with its breakers, transport and running canaries.
pub(crate) struct Rig {
    /// The engine.
    pub engine: Arc<Engine<HttpTransport>>,
    /// Its breakers.
    pub breakers: Arc<Breakers>,
    /// The transport's read-failure diagnostics.
    pub diagnostics: Arc<Diagnostics>,
    transport: HttpTransport,
    seed: u64,
    speed: Speed,
    start: Instant,
    workers: usize,
    canary_stop: Shutdown,
    canaries: JoinHandle<()>,
}

impl std::fmt::Debug for Rig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rig")
            .field("seed", &self.seed)
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

impl Rig {
    /// Builds the rig and starts its canaries (on the calling runtime).
    pub(crate) fn build(spec: RigSpec<'_>) -> Result<Self, RigError> {
        let RigSpec {
            file,
            traffic,
            policy,
            seed,
            speed,
            clock,
            upstream,
            host,
            store_path,
            metrics,
            sinks,
            canary_sinks,
            coordinate,
        } = spec;
        let start = clock.start();
        let mut all: Vec<Arc<dyn EventSink>> = vec![metrics.clone()];
        all.extend(sinks);
        let sink: Arc<dyn EventSink> = Arc::new(FanOut(all));
        let mut breakers = Breakers::new(
            file.engine.breaker.clone(),
            speed,
            seed,
            sink.clone(),
            coordinate.as_ref().map_or(start, |c| c.clock.shift(start)),
        );
        if let Some(c) = coordinate {
            breakers = breakers.with_coordinator(c.coordinator, c.host, c.clock);
        }
        let breakers = Arc::new(breakers);
        // Every scrape reads the breakers' state at scrape time (an open breaker whose open
        // time ran out is half-open in the next scrape, call or no call).
        let at_scrape: std::sync::Weak<dyn AtScrape> = Arc::<Breakers>::downgrade(&breakers);
        metrics.advance_at_scrape(at_scrape);
        let diagnostics = Arc::new(Diagnostics::default());
        let mut transport =
            HttpTransport::with_tcp(upstream, diagnostics.clone(), file.tcp.clone())
                .with_pong_deadline(speed.scale(crate::transport::ws::DEFAULT_PONG_DEADLINE));
        if let Some(id) = host {
            transport = transport.with_host(id);
        }
        // Synthetic health checks: one canary per dep the traffic reaches, over the same
        // transport, until they are stopped — before the upstream, so none is failed by the
        // upstream going away.
        let mut canary_sink = vec![sink.clone()];
        canary_sink.extend(canary_sinks);
        let canary_stop = Shutdown::new();
        let canaries = tokio::spawn(crate::engine::health::canary::run_canaries(
            Arc::new(transport.clone()),
            crate::rehearsal::embedded::health::canaries(file, traffic),
            file.engine_config(),
            speed,
            Arc::new(FanOut(canary_sink)),
            clock,
            canary_stop.requested(),
        ));
        let opts = EngineOptions {
            policy,
            seed,
            speed,
            start,
            store_path: Some(store_path),
        };
        let engine = Engine::new(
            file.engine_config(),
            file.profile.clone(),
            opts,
            transport.clone(),
            breakers.clone(),
            sink,
        );
        let engine = match engine {
            Ok(e) => e.with_wall_start(clock.wall(start)),
            Err(e) => {
                canaries.abort();
                return Err(RigError::Engine(e));
            }
        };
        let engine = Arc::new(engine);
        // Every scrape counts each provider's profiles cooling at scrape time.
        let profiles: std::sync::Weak<dyn ProfilesAtScrape> =
            Arc::<Engine<HttpTransport>>::downgrade(&engine);
        metrics.profiles_at_scrape(profiles);
        Ok(Self {
            engine,
            breakers,
            diagnostics,
            transport,
            seed,
            speed,
            start,
            workers: file.workers,
            canary_stop,
            canaries,
        })
    }

    /// The `[tcp]` tuning of the upstream connections and what the kernel read back.
    pub(crate) fn sockets(&self) -> SocketsReport {
        self.transport.connector().report()
    }

    /// Replays `traffic` through the engine until it ends or `until` resolves: the pacer on a
    /// thread of its own, every request on the calling runtime; waits for the summary without
    /// blocking a worker. `counters` tallies what the replay saw.
    pub(crate) async fn replay<F, S>(
        &self,
        traffic: Arc<Vec<TrafficLine>>,
        counters: Arc<Counters>,
        turns: Option<Arc<super::turns::TurnBook>>,
        until: F,
    ) -> Result<ReplaySummary, RigError>
    where
        F: FnOnce() -> S + Send + 'static,
        S: std::future::Future<Output = ()>,
    {
        let dispatcher = Arc::new(EngineDispatcher::new(
            self.engine.clone(),
            self.workers,
            self.seed,
            counters,
        )
        .with_turns(turns));
        let opts = ReplayOptions {
            speed: self.speed,
            max_in_flight: MAX_IN_FLIGHT,
            start: self.start,
            // Timer then OS naps (no spin) on a thread of its own; every request runs here, on
            // the engine's runtime (see `replay_on_pacer_thread`). tokio's timer alone sent
            // 1–2 ms late.
            pacing: Pacing::Nap,
            // The report needs only the lag percentiles and counts: no per-request records.
            keep_records: false,
        };
        // One clone per line as the pacer reaches it, never a second copy of the traffic.
        let lines = (0..traffic.len()).map(move |i| traffic[i].clone());
        let pacer = replay_on_pacer_thread(lines, dispatcher, opts, until, Handle::current())
            .map_err(|e| RigError::Pacer(format!("starting the pacer thread: {e}")))?;
        match tokio::task::spawn_blocking(move || pacer.join()).await {
            Ok(Ok(summary)) => Ok(summary),
            Ok(Err(_)) => Err(RigError::Pacer("the pacer thread panicked".into())),
            Err(e) => Err(RigError::Pacer(format!(
                "waiting for the pacer thread: {e}"
            ))),
        }
    }

    /// Stops the canaries, waiting at most `grace` for them.
    pub(crate) async fn stop_canaries(&mut self, grace: std::time::Duration) {
        self.canary_stop.request("the run ended");
        let _ = tokio::time::timeout(grace, &mut self.canaries).await;
    }
}
