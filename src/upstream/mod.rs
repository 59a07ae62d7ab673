//! The fault-injecting mock upstream (docs/faults.md): OpenAI-shaped chat completions (JSON or
//! SSE), tool calls and a WebSocket echo on one listener, with faults scoped by route, profile,
//! model, time window, probability and count, a control API, stats and per-request records.
//!
//! - [`faults`]: the fault specs (one kind per file), scoping and the fault-file parser.
//! - [`serve`]: the server; takes a bound listener and a shutdown future, so the run harness
//!   embeds it in-process. `rehearse upstream` ([`command`]) wraps it for the command line.
//! - [`Upstream`]: the shared state (faults, seeded RNG, stats, record sinks).
//! - `serving`: when the upstream finished serving a request (a record's `done_ms` and
//!   `whole`): the guard its admission begins and its response body ends.
//!
//! Requests carrying `X-Rehearse-Canary` are the engine's synthetic health checks: faults apply
//! to them too (their point is to see the upstream's health), but they never count towards a
//! fault's `first` and draw probabilities from their own RNG stream, and they are recorded with
//! `canary: true` so the probe-spacing check can leave them out.
//!
//! Every timing decision takes `now`; the clock is `tokio::time::Instant`.

mod cmd;
mod conn;
pub mod faults;
mod owners;
mod record;
mod routes;
mod server;
mod serving;
mod stats;
pub mod turn;

use crate::util::sync::{Locked, RwLocked};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, SystemTime};

use tokio::time::Instant;

pub(crate) use cmd::command;
pub use faults::RouteKind;
pub use faults::{Action, FaultSpec, parse_fault_file};
pub use owners::{TokenOwner, TokenOwners};
pub use record::{MemoryRecords, RecordSink, RequestRoute, UnknownRoute, UpstreamRecord};
pub use server::serve;
pub(crate) use stats::Stats;

use crate::util::shutdown::Shutdown;
use crate::util::speed::Speed;
use faults::{ActionCtx, FaultTable, RequestScope};
use stats::{Observation, StatsState};

use crate::wire::dep;

/// Default gap between streamed tokens (before the speed factor).
const DEFAULT_TOKEN_INTERVAL: Duration = Duration::from_millis(20);

/// How to build an [`Upstream`].
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// Faults in file order (the first match wins).
    pub faults: Vec<FaultSpec>,
    /// Seed of the fault RNG (probability, jitter).
    pub seed: u64,
    /// Divides fault windows, delays, `Retry-After` and token intervals.
    pub speed: Speed,
    /// Gap between streamed tokens before the speed factor.
    pub token_interval: Duration,
    /// Most arrivals `GET /_rehearse/stats` keeps per dep (later ones are only counted). The
    /// run harness keeps none: its records go to upstream.jsonl, and a long run must not grow.
    pub max_arrivals_per_dep: usize,
    /// The scenario's profiles by token fingerprint (fault `profile` and `model` scopes).
    pub owners: TokenOwners,
}

impl Default for UpstreamConfig {
    fn default() -> Self {
        Self {
            faults: Vec::new(),
            seed: 0,
            speed: Speed::ONE,
            token_interval: DEFAULT_TOKEN_INTERVAL,
            max_arrivals_per_dep: stats::MAX_ARRIVALS_PER_DEP,
            owners: TokenOwners::default(),
        }
    }
}

/// The upstream's shared state. Cheap to share: wrap in `Arc` (which [`Upstream::new`] does).
pub struct Upstream {
    speed: Speed,
    token_interval: Duration,
    start: Mutex<Instant>,
    inner: Mutex<Inner>,
    sinks: RwLock<Vec<Arc<dyn RecordSink>>>,
    owners: TokenOwners,
    /// Set by `POST /_rehearse/shutdown`: the server stops as if its process had died.
    halted: Shutdown,
    /// The next request's number ([`UpstreamRecord::seq`]).
    next_seq: AtomicU64,
}

struct Inner {
    table: FaultTable,
    stats: StatsState,
    /// False while the system under test warms up (before the run's clock starts): no fault
    /// applies, none is counted, and every record is marked `warmup`.
    armed: bool,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("speed", &self.speed)
            .field("token_interval", &self.token_interval)
            .finish_non_exhaustive()
    }
}

/// What the server knows about a request when it asks which fault applies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Incoming<'a> {
    pub route: RouteKind,
    pub tool: Option<&'a str>,
    pub channel: Option<&'a str>,
    pub bearer: Option<&'a str>,
    pub model: Option<&'a str>,
    pub probe: Option<&'a str>,
    /// Carried `X-Rehearse-Canary` (a synthetic health check, not user traffic).
    pub canary: bool,
    pub idempotency_key: Option<&'a str>,
    /// `X-Rehearse-Host`: the fleet host that sent it.
    pub host: Option<&'a str>,
    /// The turn it was sent for (`turn`), if marked.
    pub turn: Option<u64>,
    /// A chat completion's content tokens (the answer built for it).
    pub tokens: Option<u64>,
    /// The usage that answer carries, if any.
    pub usage: Option<crate::wire::usage::Usage>,
    /// A chat completion's `stream` (`None`: not a chat completion).
    pub stream: Option<bool>,
    /// A chat completion's body (what a fault's `when` may read).
    pub body: Option<&'a [u8]>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.locked()
}

impl Upstream {
    /// A new upstream whose run start is now.
    pub fn new(cfg: UpstreamConfig) -> Arc<Self> {
        let speed = cfg.speed;
        Arc::new(Self {
            speed,
            token_interval: speed.scale(cfg.token_interval),
            start: Mutex::new(Instant::now()),
            inner: Mutex::new(Inner {
                table: FaultTable::new(cfg.faults, cfg.seed),
                stats: StatsState::with_arrival_cap(cfg.max_arrivals_per_dep),
                armed: true,
            }),
            sinks: RwLock::new(Vec::new()),
            owners: cfg.owners,
            halted: Shutdown::new(),
            next_seq: AtomicU64::new(0),
        })
    }

    /// Asks the server to stop (`POST /_rehearse/shutdown`): its listener closes and its
    /// connections are dropped after a short grace, as when the process dies.
    pub(crate) fn halt(&self) {
        self.halted.request("POST /_rehearse/shutdown");
    }

    /// Resolves once [`Upstream::halt`] was called.
    pub(crate) async fn halted(&self) {
        self.halted.requested().await
    }

    /// Sets the instant fault windows and `t_ms` are measured from.
    pub fn set_run_start(&self, start: Instant) {
        *lock(&self.start) = start;
    }

    /// Holds the faults back for a warm-up starting at `now`: until [`Upstream::arm`], no fault
    /// applies (none draws the RNG or uses up a `first = N`), and every request is recorded as
    /// the warm-up's (`warmup: true`, `t_ms` since `now`).
    pub fn disarm(&self, now: Instant) {
        let mut inner = lock(&self.inner);
        *lock(&self.start) = now;
        inner.armed = false;
    }

    /// Starts the run's clock at `start` and arms the faults: from here on fault windows and
    /// `t_ms` are measured from `start` and the faults apply as the scenario says.
    pub fn arm(&self, start: Instant) {
        let mut inner = lock(&self.inner);
        *lock(&self.start) = start;
        inner.armed = true;
    }

    /// Whether the faults are armed (the run's clock has started).
    pub fn armed(&self) -> bool {
        lock(&self.inner).armed
    }

    /// The instant fault windows and `t_ms` are measured from.
    pub(crate) fn run_start(&self) -> Instant {
        *lock(&self.start)
    }

    /// The speed factor.
    #[cfg(test)]
    pub(crate) fn speed(&self) -> Speed {
        self.speed
    }

    /// The gap between streamed tokens, after the speed factor.
    pub(crate) fn token_interval(&self) -> Duration {
        self.token_interval
    }

    /// A snapshot of the stats.
    pub fn stats(&self) -> Stats {
        lock(&self.inner).stats.stats.clone()
    }

    /// The live faults, in order.
    pub(crate) fn faults(&self) -> Vec<FaultSpec> {
        lock(&self.inner).table.specs().to_vec()
    }

    /// Replaces the live faults (their `first` counters restart; the RNG continues).
    pub fn set_faults(&self, faults: Vec<FaultSpec>) {
        lock(&self.inner).table.replace(faults);
    }

    /// Sends every later record to `sink` as well.
    pub fn subscribe(&self, sink: Arc<dyn RecordSink>) {
        self.sinks.write_locked().push(sink)
    }

    /// [`Upstream::admit_served`] for a request served at once: its serving ends (cut) here.
    #[cfg(test)]
    pub(crate) fn admit(
        &self,
        inc: &Incoming<'_>,
        now: Instant,
        wall: SystemTime,
    ) -> Option<Decision> {
        self.admit_served(inc, now, wall).0
    }

    /// Decides the fault for one request arriving at `now` (`wall` for HTTP dates), counts it
    /// and records it. Returns the fault kind and what to do (`None` for a healthy answer), and
    /// the serving that ends its record (`None` when no sink records it): the server ends it
    /// when the response went out or stopped short ([`serving`]).
    pub(crate) fn admit_served(
        &self,
        inc: &Incoming<'_>,
        now: Instant,
        wall: SystemTime,
    ) -> (Option<Decision>, Option<serving::Serving>) {
        let route = RequestRoute::of(inc.route, inc.tool);
        let route_text = route.to_string();
        let profile_fp = inc.bearer.map(crate::util::fingerprint);
        let dep = dep_name(inc, profile_fp.as_deref());
        let owner = profile_fp
            .as_deref()
            .and_then(|fp| self.owners.by_fingerprint(fp));
        let scope = RequestScope {
            route: inc.route,
            tool: inc.tool,
            bearer: inc.bearer,
            profile_id: owner.map(|o| o.id.as_str()),
            provider: owner.map(|o| o.provider.as_str()),
            model: inc.model,
            stream: inc.stream,
            body: inc.body,
        };
        let (decision, duplicate, index, t_ms, warmup, start) = {
            let mut g = lock(&self.inner);
            let inner = &mut *g;
            // Read under the same lock `arm` takes: a request is either the warm-up's or the run's.
            let start = self.run_start();
            let t_ms =
                u64::try_from(now.saturating_duration_since(start).as_millis()).unwrap_or(u64::MAX);
            let warmup = !inner.armed;
            let index = if warmup {
                None
            } else {
                inner
                    .table
                    .select_for(&scope, start, now, self.speed, inc.canary)
            };
            let decision = index
                .and_then(|i| inner.table.specs().get(i))
                .map(|s| {
                    let headers = s
                        .headers
                        .as_ref()
                        .map(|h| faults::headers::scaled(h, self.speed))
                        .unwrap_or_default();
                    (s.kind.clone(), headers)
                })
                .map(|(kind, headers)| {
                    let mut ctx = ActionCtx {
                        speed: self.speed,
                        wall_now: wall,
                        rng: inner.table.rng_for(inc.canary),
                    };
                    Decision {
                        kind: kind.name(),
                        action: kind.as_fault().action(&mut ctx),
                        headers,
                    }
                });
            let duplicate = inner.stats.observe(&Observation {
                t_ms,
                route: &route_text,
                dep: &dep,
                profile_fp: profile_fp.as_deref(),
                probe: inc.probe.is_some(),
                canary: inc.canary,
                fault: decision.as_ref().map(|d| d.kind),
                idempotency_key: inc.idempotency_key,
                executes: decision.as_ref().is_none_or(|d| d.action.executes()),
            });
            (decision, duplicate, index, t_ms, warmup, start)
        };
        let sinks = self.sinks.read_locked();
        let mut served = None;
        if !sinks.is_empty() {
            let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
            let rec = UpstreamRecord {
                t_ms,
                wall_ms: wall
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                route,
                dep,
                model: inc.model.map(str::to_string),
                profile_fp,
                probe: inc.probe.is_some(),
                canary: inc.canary,
                fault: decision.as_ref().map(|d| d.kind.to_string()),
                fault_index: decision.as_ref().and(index),
                idempotency_key: inc.idempotency_key.map(str::to_string),
                duplicate,
                host: inc.host.map(str::to_string),
                warmup,
                retry_after_ms: decision.as_ref().and_then(|d| {
                    faults::announced_wait(&d.action, &d.headers, wall, self.speed)
                }),
                turn: inc.turn,
                tokens: inc.tokens,
                usage: inc.usage,
                done_ms: None,
                whole: None,
                seq: Some(seq),
            };
            for s in sinks.iter() {
                s.record(&rec);
            }
            let whole = decision.as_ref().is_none_or(|d| d.action.answers_whole());
            served = Some(serving::Serving::new(seq, start, whole, sinks.clone()));
        }
        (decision, served)
    }
}

/// What the server does for one faulted request: the fault's kind, its action and its extra
/// headers (`headers`, scaled by the speed factor).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    /// The kind's name.
    pub kind: &'static str,
    /// What to do.
    pub action: Action,
    /// The fault's `headers`, as sent.
    pub headers: Vec<(String, String)>,
}

/// The dep a request belongs to (see [`UpstreamRecord::dep`]).
fn dep_name(inc: &Incoming<'_>, profile_fp: Option<&str>) -> String {
    if let Some(p) = inc.probe {
        return p.to_string();
    }
    match inc.route {
        RouteKind::Tool => inc.tool.unwrap_or_default().to_string(),
        RouteKind::Ws => inc.channel.unwrap_or("default").to_string(),
        RouteKind::Llm => {
            let provider = inc
                .model
                .map(dep::provider_of)
                .filter(|p| !p.is_empty())
                .unwrap_or("unknown");
            let fp = profile_fp.unwrap_or("none");
            dep::model_dep_of_fingerprint(provider, dep::DEFAULT_REGION, fp)
        }
    }
}

#[cfg(test)]
mod tests;
