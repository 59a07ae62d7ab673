//! [`Metrics`]: the engine's Prometheus registry. It is an [`EventSink`]: every engine event is
//! folded into the series of docs/metrics.md, and [`Metrics::render`] writes them in the text
//! format 0.0.4 (encoded by the `prometheus` crate), every family with `# HELP` and `# TYPE`, in
//! docs/metrics.md order — families without samples yet still get their two header lines, so a scrape
//! always names every series.
//!
//! `requests_total` and `request_latency_seconds` count attempts (half-open probes included;
//! canaries are not attempts). Event times are engine ms; the transition timestamp gauge is
//! `start_unix + t_ms / 1000` (unix seconds, ms precision).
//!
//! `health_breaker_disagreement_seconds` is a duration that grows between events: a registry
//! given its engine clock ([`Metrics::with_clock`]) refreshes it from the live disagreement state
//! with tokio's `now` just before every [`Metrics::render`] (see [`Metrics::render_at`]).
//!
//! Exported state is the state at scrape time: before encoding, [`Metrics::render_at`] brings
//! every registered [`AtScrape`] source (the breakers) up to `now`, so an open breaker whose open
//! time ran out reads half-open in the next scrape whether or not a call arrived. Such a source
//! must only apply what is already due (it may emit events stamped with their exact instant) and
//! never change what a later call sees.
//!
//! `coordinator_errors_total{op}` and `coordinator_mode{mode}` (1 for the current mode, 0 for
//! the others seen) follow a coordinated host (fleet mode); they stay header-only otherwise.
//!
//! `breaker_open_seconds{dep}` and `breaker_open_since_timestamp_seconds{dep}` describe a breaker's
//! current (or last) open period from its transition to open, the open time extended by every
//! Retry-After skip. `provider_profiles{provider}` and `provider_profiles_cooling{provider}` are
//! read at scrape time from every registered [`ProfilesAtScrape`] source (the engine).
//!
//! The [`EventSink`](super::events::EventSink) side, folding events into series, is in `fold.rs`.

mod fold;

use crate::util::sync::Locked;
use std::collections::HashMap;
use std::sync::{Mutex, Weak};

use prometheus::core::Collector;
use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, Opts, TextEncoder,
};
use tokio::time::Instant;

use super::disagreement::Disagreement;
use super::events::BreakerState;
use super::families::{self as fam, Family, FamilyType};

/// Content-Type of [`Metrics::render`]'s output.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

pub use super::families::{PROBE_BUCKETS, REQUEST_BUCKETS};

/// The engine's metrics registry.
pub struct Metrics {
    start_unix: f64,
    breaker_state: GaugeVec,
    transitions: IntCounterVec,
    last_transition: GaugeVec,
    rejections: IntCounterVec,
    probe_latency: HistogramVec,
    retry_after_skips: IntCounterVec,
    requests: IntCounterVec,
    request_latency: HistogramVec,
    cooldowns: IntCounterVec,
    retries: IntCounterVec,
    rotations: IntCounterVec,
    fallbacks: IntCounterVec,
    budget_exhausted: IntCounterVec,
    timeouts: IntCounterVec,
    deadline: GaugeVec,
    duplicates: IntCounterVec,
    disagreement: GaugeVec,
    throttled: IntCounterVec,
    coordinator_errors: IntCounterVec,
    coordinator_mode: GaugeVec,
    cooldowns_adopted: IntCounterVec,
    open_seconds: GaugeVec,
    open_since: GaugeVec,
    profiles: GaugeVec,
    profiles_cooling: GaugeVec,
    health: Mutex<HashMap<String, Disagreement>>,
    /// The engine's start instant (engine ms 0), when known: enables the scrape-time refresh.
    clock: Option<Instant>,
    /// State brought up to `now` before every render (weak: the breakers hold this registry as
    /// their event sink, so a strong reference would be a cycle).
    at_scrape: Mutex<Vec<Weak<dyn AtScrape>>>,
    /// Per-provider profile counts read before every render (weak, as `at_scrape`).
    profile_sources: Mutex<Vec<Weak<dyn ProfilesAtScrape>>>,
}

/// One provider's auth profiles at a scrape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderProfiles {
    /// The provider.
    pub provider: String,
    /// Profiles it rotates over.
    pub profiles: usize,
    /// Of those, in cooldown (or disabled) now.
    pub cooling: usize,
}

/// A source of `provider_profiles` and `provider_profiles_cooling` (the engine's profile book
/// and cooldown store), read by [`Metrics::render_at`].
pub trait ProfilesAtScrape: Send + Sync {
    /// Every provider's profiles at `now` (reading only).
    fn profiles_at(&self, now: Instant) -> Vec<ProviderProfiles>;
}

/// A source of exported state that can lag the clock (a breaker whose open time ran out is
/// still open until something looks). [`Metrics::render_at`] calls it first.
pub trait AtScrape: Send + Sync {
    /// Applies every state change due at or before `now` (and nothing else: observing must not
    /// change what a later call sees).
    fn advance_to(&self, now: Instant);
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("start_unix", &self.start_unix)
            .finish_non_exhaustive()
    }
}

// The definitions in `families` are fixed at compile time and valid, so building the vectors
// cannot fail; a failure would be a programming error caught by every test.
fn counter(f: &Family) -> IntCounterVec {
    IntCounterVec::new(Opts::new(f.name, f.help), f.labels).expect("static metric definition") // ok: static
}

fn gauge(f: &Family) -> GaugeVec {
    GaugeVec::new(Opts::new(f.name, f.help), f.labels).expect("static metric definition") // ok: static
}

fn histogram(f: &Family) -> HistogramVec {
    let buckets = match f.kind {
        FamilyType::Histogram(b) => b.to_vec(),
        _ => Vec::new(),
    };
    // ok: static, valid definition
    HistogramVec::new(
        HistogramOpts::new(f.name, f.help).buckets(buckets),
        f.labels,
    )
    .expect("static metric definition") // ok: static
}

impl Metrics {
    /// An empty registry; `start_unix_secs` is the wall-clock time of engine ms 0.
    pub fn new(start_unix_secs: f64) -> Self {
        Self {
            start_unix: start_unix_secs,
            breaker_state: gauge(&fam::BREAKER_STATE),
            transitions: counter(&fam::TRANSITIONS),
            last_transition: gauge(&fam::LAST_TRANSITION),
            rejections: counter(&fam::REJECTIONS),
            probe_latency: histogram(&fam::PROBE_LATENCY),
            retry_after_skips: counter(&fam::RETRY_AFTER_SKIPS),
            requests: counter(&fam::REQUESTS),
            request_latency: histogram(&fam::REQUEST_LATENCY),
            cooldowns: counter(&fam::COOLDOWNS),
            retries: counter(&fam::RETRIES),
            rotations: counter(&fam::ROTATIONS),
            fallbacks: counter(&fam::FALLBACKS),
            budget_exhausted: counter(&fam::BUDGET_EXHAUSTED),
            timeouts: counter(&fam::TIMEOUTS),
            deadline: gauge(&fam::DEADLINE),
            duplicates: counter(&fam::DUPLICATES),
            disagreement: gauge(&fam::DISAGREEMENT),
            throttled: counter(&fam::THROTTLED),
            coordinator_errors: counter(&fam::COORDINATOR_ERRORS),
            coordinator_mode: gauge(&fam::COORDINATOR_MODE),
            cooldowns_adopted: counter(&fam::COOLDOWNS_ADOPTED),
            open_seconds: gauge(&fam::OPEN_SECONDS),
            open_since: gauge(&fam::OPEN_SINCE),
            profiles: gauge(&fam::PROFILES),
            profiles_cooling: gauge(&fam::PROFILES_COOLING),
            health: Mutex::new(HashMap::new()),
            clock: None,
            at_scrape: Mutex::new(Vec::new()),
            profile_sources: Mutex::new(Vec::new()),
        }
    }

    /// Ties the registry to the engine's clock: `start` is the tokio instant of engine ms 0 (the
    /// `start` the engine, breakers and canaries count event times from). From then on
    /// [`render`](Self::render) refreshes the disagreement gauge at `Instant::now()`.
    pub fn with_clock(mut self, start: Instant) -> Self {
        self.clock = Some(start);
        self
    }

    /// Sets every `health_breaker_disagreement_seconds{dep}` to its length at `now_ms` (engine
    /// ms), from the live canary/breaker state ([`Disagreement::seconds_at`]).
    pub fn refresh_disagreement(&self, now_ms: u64) {
        let values: Vec<(String, f64)> = {
            let map = self.health.locked();
            map.iter()
                .map(|(dep, d)| (dep.clone(), d.seconds_at(now_ms)))
                .collect()
        };
        for (dep, v) in values {
            self.disagreement.with_label_values(&[dep.as_str()]).set(v);
        }
    }

    /// Brings `source` up to the render time before every [`render_at`](Self::render_at)
    /// (dropped sources are skipped).
    pub fn advance_at_scrape(&self, source: Weak<dyn AtScrape>) {
        self.at_scrape.locked().push(source)
    }

    /// Reads `provider_profiles` and `provider_profiles_cooling` from `source` before every
    /// [`render_at`](Self::render_at) (dropped sources are skipped).
    pub fn profiles_at_scrape(&self, source: Weak<dyn ProfilesAtScrape>) {
        self.profile_sources.locked().push(source)
    }

    /// Sets the provider gauges from every profile source at `now`.
    fn refresh_profiles(&self, now: Instant) {
        let sources: Vec<_> = self
            .profile_sources
            .locked()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for s in sources {
            for p in s.profiles_at(now) {
                let provider = [p.provider.as_str()];
                self.profiles
                    .with_label_values(&provider)
                    .set(p.profiles as f64);
                self.profiles_cooling
                    .with_label_values(&provider)
                    .set(p.cooling as f64);
            }
        }
    }

    /// [`render`](Self::render) at `now`: every [`AtScrape`] source is advanced to `now` first
    /// (its due transitions land in the series before encoding); with a clock, the disagreement
    /// gauge is refreshed to `now` too, without one it shows its value at the last canary or
    /// transition.
    pub fn render_at(&self, now: Instant) -> String {
        let sources: Vec<_> = self
            .at_scrape
            .locked()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        // No lock of ours is held here: a source's events come back through `emit`.
        for s in sources {
            s.advance_to(now);
        }
        self.refresh_profiles(now);
        if let Some(start) = self.clock {
            let ms = now.saturating_duration_since(start).as_millis();
            self.refresh_disagreement(u64::try_from(ms).unwrap_or(u64::MAX));
        }
        self.encode()
    }

    /// Every collector with its definition, in [`fam::FAMILIES`] order (docs/metrics.md order).
    fn families(&self) -> [(&dyn Collector, &'static Family); 25] {
        [
            (&self.breaker_state, &fam::BREAKER_STATE),
            (&self.transitions, &fam::TRANSITIONS),
            (&self.last_transition, &fam::LAST_TRANSITION),
            (&self.rejections, &fam::REJECTIONS),
            (&self.probe_latency, &fam::PROBE_LATENCY),
            (&self.retry_after_skips, &fam::RETRY_AFTER_SKIPS),
            (&self.requests, &fam::REQUESTS),
            (&self.request_latency, &fam::REQUEST_LATENCY),
            (&self.cooldowns, &fam::COOLDOWNS),
            (&self.retries, &fam::RETRIES),
            (&self.rotations, &fam::ROTATIONS),
            (&self.fallbacks, &fam::FALLBACKS),
            (&self.budget_exhausted, &fam::BUDGET_EXHAUSTED),
            (&self.timeouts, &fam::TIMEOUTS),
            (&self.deadline, &fam::DEADLINE),
            (&self.duplicates, &fam::DUPLICATES),
            (&self.disagreement, &fam::DISAGREEMENT),
            (&self.throttled, &fam::THROTTLED),
            (&self.coordinator_errors, &fam::COORDINATOR_ERRORS),
            (&self.coordinator_mode, &fam::COORDINATOR_MODE),
            (&self.cooldowns_adopted, &fam::COOLDOWNS_ADOPTED),
            (&self.open_seconds, &fam::OPEN_SECONDS),
            (&self.open_since, &fam::OPEN_SINCE),
            (&self.profiles, &fam::PROFILES),
            (&self.profiles_cooling, &fam::PROFILES_COOLING),
        ]
    }

    /// The registry in Prometheus text format 0.0.4 ([`CONTENT_TYPE`]), the disagreement gauge
    /// refreshed to tokio's `now` when the registry has a clock.
    pub fn render(&self) -> String {
        self.render_at(Instant::now())
    }

    fn encode(&self) -> String {
        let encoder = TextEncoder::new();
        let mut out = Vec::with_capacity(16 * 1024);
        for (collector, def) in self.families() {
            let kind = def.kind.as_str();
            let mut mfs: Vec<_> = collector
                .collect()
                .into_iter()
                .filter(|mf| !mf.get_metric().is_empty())
                .collect();
            // Stable output (goldens, diffs): samples sorted by their label values.
            for mf in &mut mfs {
                mf.mut_metric().sort_by_cached_key(|m| {
                    m.get_label()
                        .iter()
                        .map(|l| (l.name().to_string(), l.value().to_string()))
                        .collect::<Vec<_>>()
                });
            }
            if mfs.is_empty() {
                for desc in collector.desc() {
                    let help = desc.help.replace('\\', "\\\\").replace('\n', "\\n");
                    let head = format!("# HELP {0} {help}\n# TYPE {0} {kind}\n", desc.fq_name);
                    out.extend_from_slice(head.as_bytes());
                }
            } else if let Err(e) = encoder.encode(&mfs, &mut out) {
                // Only a malformed family can fail; say so in the output rather than panic.
                out.extend_from_slice(format!("# encoding error: {e}\n").as_bytes());
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    fn unix(&self, t_ms: u64) -> f64 {
        ((self.start_unix * 1000.0).round() + t_ms as f64) / 1000.0
    }

    /// First sight of a dependency: its per-dep series exist from here on (at 0).
    fn touch(&self, dep: &str) {
        // `with_label_values` creates a missing series at 0 and leaves an existing one alone.
        self.breaker_state.with_label_values(&[dep]);
        self.rejections.with_label_values(&[dep]);
        self.retry_after_skips.with_label_values(&[dep]);
    }

    fn set_disagreement(&self, dep: &str, f: impl FnOnce(&mut Disagreement) -> f64) {
        let value = {
            let mut map = self.health.locked();
            f(map.entry(dep.to_string()).or_default())
        };
        self.disagreement.with_label_values(&[dep]).set(value);
    }

    fn transition(
        &self,
        dep: &str,
        (from, to): (BreakerState, BreakerState),
        open_for_ms: Option<u64>,
        t_ms: u64,
    ) {
        self.touch(dep);
        if to == BreakerState::Open {
            let since = self.unix(t_ms);
            self.open_since.with_label_values(&[dep]).set(since);
            let open_s = open_for_ms.unwrap_or(0) as f64 / 1000.0;
            self.open_seconds.with_label_values(&[dep]).set(open_s);
        }
        let labels = [dep, from.as_str(), to.as_str()];
        self.breaker_state.with_label_values(&[dep]).set(to.gauge());
        self.transitions.with_label_values(&labels).inc();
        self.last_transition
            .with_label_values(&labels)
            .set(self.unix(t_ms));
        self.set_disagreement(dep, |d| d.breaker(to, t_ms));
    }

    /// A Retry-After kept the breaker open until `until_ms` (engine ms): its open period now
    /// lasts from its start to then.
    fn open_extended(&self, dep: &str, until_ms: u64) {
        let since = self.open_since.with_label_values(&[dep]).get();
        if since == 0.0 {
            // Never opened (a skip only happens while open): no period to extend.
            let _ = self.open_since.remove_label_values(&[dep]);
            return;
        }
        let until = self.unix(until_ms);
        if until > since {
            let open_s = ((until - since) * 1000.0).round() / 1000.0;
            self.open_seconds.with_label_values(&[dep]).set(open_s);
        }
    }
}
