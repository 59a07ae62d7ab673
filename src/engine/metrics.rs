//! [`Metrics`]: the engine's Prometheus registry. It is an [`EventSink`]: every engine event is
//! folded into the series of DESIGN section 8, and [`Metrics::render`] writes them in the text
//! format 0.0.4 (encoded by the `prometheus` crate), every family with `# HELP` and `# TYPE`, in
//! DESIGN order — families without samples yet still get their two header lines, so a scrape
//! always names every series.
//!
//! `requests_total` and `request_latency_seconds` count attempts (half-open probes included;
//! canaries are not attempts). Event times are engine ms; the transition timestamp gauge is
//! `start_unix + t_ms / 1000` (unix seconds, ms precision).
//!
//! `coordinator_errors_total{op}` and `coordinator_mode{mode}` (1 for the current mode, 0 for
//! the others seen) follow a coordinated host (fleet mode); they stay header-only otherwise.
//! (Over 400 lines: one registry, one family list, one event fold — splitting them apart would
//! only scatter the DESIGN section 8 contract.)
//!
//! `health_breaker_disagreement_seconds` is a duration that grows between events: a registry
//! given its engine clock ([`Metrics::with_clock`]) refreshes it from the live disagreement state
//! with tokio's `now` just before every [`Metrics::render`] (see [`Metrics::render_at`]).

use std::collections::HashMap;
use std::sync::Mutex;

use prometheus::core::Collector;
use prometheus::{
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, Opts, TextEncoder,
};
use tokio::time::Instant;

use super::events::{AttemptOutcome, BreakerState, Event, EventKind, EventSink};
use super::health::Disagreement;

/// Content-Type of [`Metrics::render`]'s output.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Buckets of `breaker_probe_latency_seconds` (DESIGN section 8).
pub const PROBE_BUCKETS: [f64; 7] = [0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0];

/// Buckets of `request_latency_seconds` (up to the 120 s llm_inference total deadline).
pub const REQUEST_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

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
    duplicates: IntCounterVec,
    disagreement: GaugeVec,
    throttled: IntCounterVec,
    coordinator_errors: IntCounterVec,
    coordinator_mode: GaugeVec,
    health: Mutex<HashMap<String, Disagreement>>,
    /// The engine's start instant (engine ms 0), when known: enables the scrape-time refresh.
    clock: Option<Instant>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("start_unix", &self.start_unix)
            .finish_non_exhaustive()
    }
}

// The names, labels and buckets below are fixed at compile time and valid, so building the
// vectors cannot fail; a failure would be a programming error caught by every test.
fn counter(name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    IntCounterVec::new(Opts::new(name, help), labels).expect("static metric definition") // ok: static
}

fn gauge(name: &str, help: &str, labels: &[&str]) -> GaugeVec {
    GaugeVec::new(Opts::new(name, help), labels).expect("static metric definition") // ok: static
}

fn histogram(name: &str, help: &str, labels: &[&str], buckets: &[f64]) -> HistogramVec {
    // ok: static, valid definition
    HistogramVec::new(
        HistogramOpts::new(name, help).buckets(buckets.to_vec()),
        labels,
    )
    .expect("static metric definition") // ok: static
}

impl Metrics {
    /// An empty registry; `start_unix_secs` is the wall-clock time of engine ms 0.
    pub fn new(start_unix_secs: f64) -> Self {
        let dft = ["dep", "from", "to"];
        Self {
            start_unix: start_unix_secs,
            breaker_state: gauge(
                "breaker_state",
                "Breaker state per dependency: 0 closed, 1 half_open, 2 open.",
                &["dep"],
            ),
            transitions: counter(
                "breaker_transitions_total",
                "Breaker state transitions.",
                &dft,
            ),
            last_transition: gauge(
                "breaker_last_transition_timestamp_seconds",
                "Unix time (ms precision) of the latest transition of each kind.",
                &dft,
            ),
            rejections: counter(
                "breaker_rejections_total",
                "Calls rejected at once by an open or pacing half-open breaker.",
                &["dep"],
            ),
            probe_latency: histogram(
                "breaker_probe_latency_seconds",
                "Latency of half-open probes.",
                &["dep"],
                &PROBE_BUCKETS,
            ),
            retry_after_skips: counter(
                "breaker_retry_after_skips_total",
                "Half-open transitions deferred because a Retry-After reached further.",
                &["dep"],
            ),
            requests: counter(
                "requests_total",
                "Attempts at a dependency by outcome (probes included, canaries not).",
                &["dep", "outcome"],
            ),
            request_latency: histogram(
                "request_latency_seconds",
                "Latency of attempts that reached the dependency.",
                &["dep"],
                &REQUEST_BUCKETS,
            ),
            cooldowns: counter(
                "profile_cooldowns_total",
                "Cooldowns written to auth profiles.",
                &["provider", "profile", "reason"],
            ),
            retries: counter(
                "profile_retries_total",
                "Same-profile retries (retry gate).",
                &["provider", "reason"],
            ),
            rotations: counter(
                "profile_rotations_total",
                "Rotations to the next auth profile.",
                &["provider", "reason"],
            ),
            fallbacks: counter(
                "model_fallbacks_total",
                "Requests moved to a fallback model.",
                &["from", "to", "reason"],
            ),
            budget_exhausted: counter(
                "retry_budget_exhausted_total",
                "Retries refused because the request's token budget was spent.",
                &["class"],
            ),
            timeouts: counter(
                "timeouts_total",
                "Deadlines that expired, by operation class and phase.",
                &["class", "phase"],
            ),
            duplicates: counter(
                "idempotent_duplicates_total",
                "Non-idempotent calls executed twice under one Idempotency-Key (must be 0).",
                &["dep"],
            ),
            disagreement: gauge(
                "health_breaker_disagreement_seconds",
                "How long canary and breaker have disagreed (0 while they agree); alert at 180.",
                &["dep"],
            ),
            throttled: counter(
                "throttled_total",
                "Requests of a tenant over its tokens-per-minute budget routed to the cheaper model.",
                &["tenant"],
            ),
            coordinator_errors: counter(
                "coordinator_errors_total",
                "Failed calls to the fleet coordinator (the host decided locally meanwhile).",
                &["op"],
            ),
            coordinator_mode: gauge(
                "coordinator_mode",
                "1 for the host's current coordination mode (redis, in_process, local), 0 for others.",
                &["mode"],
            ),
            health: Mutex::new(HashMap::new()),
            clock: None,
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
            let map = match self.health.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            map.iter()
                .map(|(dep, d)| (dep.clone(), d.seconds_at(now_ms)))
                .collect()
        };
        for (dep, v) in values {
            self.disagreement.with_label_values(&[dep.as_str()]).set(v);
        }
    }

    /// [`render`](Self::render) at `now`: with a clock, the disagreement gauge is refreshed to
    /// `now` first; without one it shows its value at the last canary or transition.
    pub fn render_at(&self, now: Instant) -> String {
        if let Some(start) = self.clock {
            let ms = now.saturating_duration_since(start).as_millis();
            self.refresh_disagreement(u64::try_from(ms).unwrap_or(u64::MAX));
        }
        self.encode()
    }

    /// Every family in DESIGN order, with its help and type (for the header of empty ones).
    fn families(&self) -> [(&dyn Collector, &'static str); 19] {
        [
            (&self.breaker_state, "gauge"),
            (&self.transitions, "counter"),
            (&self.last_transition, "gauge"),
            (&self.rejections, "counter"),
            (&self.probe_latency, "histogram"),
            (&self.retry_after_skips, "counter"),
            (&self.requests, "counter"),
            (&self.request_latency, "histogram"),
            (&self.cooldowns, "counter"),
            (&self.retries, "counter"),
            (&self.rotations, "counter"),
            (&self.fallbacks, "counter"),
            (&self.budget_exhausted, "counter"),
            (&self.timeouts, "counter"),
            (&self.duplicates, "counter"),
            (&self.disagreement, "gauge"),
            (&self.throttled, "counter"),
            (&self.coordinator_errors, "counter"),
            (&self.coordinator_mode, "gauge"),
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
        for (collector, kind) in self.families() {
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
            let mut map = match self.health.lock() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            f(map.entry(dep.to_string()).or_default())
        };
        self.disagreement.with_label_values(&[dep]).set(value);
    }

    fn transition(&self, dep: &str, from: BreakerState, to: BreakerState, t_ms: u64) {
        self.touch(dep);
        let labels = [dep, from.as_str(), to.as_str()];
        self.breaker_state.with_label_values(&[dep]).set(to.gauge());
        self.transitions.with_label_values(&labels).inc();
        self.last_transition
            .with_label_values(&labels)
            .set(self.unix(t_ms));
        self.set_disagreement(dep, |d| d.breaker(to, t_ms));
    }
}

impl EventSink for Metrics {
    fn emit(&self, event: &Event) {
        match &event.kind {
            EventKind::AttemptFinished {
                dep,
                class,
                outcome,
                phase,
                latency_ms,
                probe,
                ..
            } => {
                self.touch(dep);
                self.requests
                    .with_label_values(&[dep.as_str(), outcome.as_str()])
                    .inc();
                let secs = latency_ms / 1000.0;
                if *outcome == AttemptOutcome::Rejected {
                    self.rejections.with_label_values(&[dep]).inc();
                } else {
                    self.request_latency.with_label_values(&[dep]).observe(secs);
                    if *probe {
                        self.probe_latency.with_label_values(&[dep]).observe(secs);
                    }
                }
                if let (AttemptOutcome::Timeout, Some(phase)) = (outcome, phase) {
                    self.timeouts
                        .with_label_values(&[class.as_str(), phase.as_str()])
                        .inc();
                }
            }
            EventKind::SameProfileRetry {
                provider, reason, ..
            } => self
                .retries
                .with_label_values(&[provider.as_str(), reason.as_str()])
                .inc(),
            EventKind::CooldownApplied {
                provider,
                profile,
                reason,
                ..
            } => self
                .cooldowns
                .with_label_values(&[provider.as_str(), profile.as_str(), reason.as_str()])
                .inc(),
            EventKind::ProfileRotated {
                provider, reason, ..
            } => self
                .rotations
                .with_label_values(&[provider.as_str(), reason.as_str()])
                .inc(),
            EventKind::NoProfileAvailable { .. } => {}
            EventKind::ModelFallback { from, to, reason } => self
                .fallbacks
                .with_label_values(&[from.as_str(), to.as_str(), reason.as_str()])
                .inc(),
            EventKind::BreakerTransition { dep, from, to, .. } => {
                self.transition(dep, *from, *to, event.t_ms)
            }
            EventKind::RetryAfterSkip { dep, .. } => {
                self.touch(dep);
                self.retry_after_skips.with_label_values(&[dep]).inc();
            }
            EventKind::RetryBudgetExhausted { class, .. } => self
                .budget_exhausted
                .with_label_values(&[class.as_str()])
                .inc(),
            EventKind::Throttled { tenant, .. } => {
                self.throttled.with_label_values(&[tenant]).inc()
            }
            EventKind::HealthCheck { dep, ok } => {
                self.touch(dep);
                self.set_disagreement(dep, |d| d.canary(*ok, event.t_ms));
            }
            EventKind::IdempotentDuplicate { dep } => {
                self.duplicates.with_label_values(&[dep]).inc()
            }
            EventKind::CoordinatorError { op, .. } => {
                self.coordinator_errors.with_label_values(&[op]).inc()
            }
            EventKind::CoordinatorMode { mode } => {
                for m in ["local", mode.as_str()] {
                    self.coordinator_mode.with_label_values(&[m]).set(0.0);
                }
                for mf in self.coordinator_mode.collect() {
                    for metric in mf.get_metric() {
                        if let Some(l) = metric.get_label().first() {
                            self.coordinator_mode
                                .with_label_values(&[l.value()])
                                .set(0.0);
                        }
                    }
                }
                self.coordinator_mode.with_label_values(&[mode]).set(1.0);
            }
            // No DESIGN 8 series: the ladder's rungs are events only.
            EventKind::RequestFinished { .. } | EventKind::Degraded { .. } => {}
        }
    }
}
