//! The catalogue of the engine's metric families (docs/metrics.md): name, help, type, label
//! names and histogram buckets, in docs/metrics.md order, with what each label's values can be
//! ([`LabelValues`]) and what the value measures in time ([`TimeBase`]).
//! [`super::metrics::Metrics`] builds its registry from these definitions, and scenario
//! validation checks `[[expect.metric]]` selectors against them ([`check_selector`]), so a
//! series the engine does not export, a label its family does not have or a value the scenario
//! cannot make it export is caught before a run instead of summing to a vacuous 0; the judge
//! reads a wall-clock quantity in scenario time through [`sample_time`]. The definitions are
//! here; the sample names they export and the selector check are in `samples.rs`.

mod samples;

pub use samples::{
    SelectorProblem, check_selector, family_of, le_values, sample_names, sample_time,
};

/// Buckets of `breaker_probe_latency_seconds` (docs/metrics.md).
pub const PROBE_BUCKETS: [f64; 7] = [0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0];

/// Buckets of `request_latency_seconds` (up to the 120 s llm_inference total deadline).
pub const REQUEST_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// A family's Prometheus type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FamilyType {
    /// A monotonic counter.
    Counter,
    /// A gauge.
    Gauge,
    /// A histogram with these bucket bounds (samples `_bucket{le}`, `_sum`, `_count`).
    Histogram(&'static [f64]),
}

impl FamilyType {
    /// The `# TYPE` word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram(_) => "histogram",
        }
    }
}

/// What a family's value measures in time, for `--speed`: the engine runs on the wall clock,
/// `speed` times faster than the scenario (docs/scenario.md, "Wall-clock quantities").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBase {
    /// Not a time: a count, a state, a number of profiles (the same at every speed).
    NotTime,
    /// Seconds of scenario time (nominal: the same at every speed).
    Scenario,
    /// Seconds measured on the run's clock: at `--speed S` a scenario second reads `1/S`.
    Wall,
    /// A Unix time in seconds: an instant of the wall clock, which no speed converts.
    Unix,
}

/// What one sample name of the catalogue measures in time (a histogram's samples differ: its
/// `_count` is a count, its `_sum` a time, its `_bucket`s counts under time bounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleTime {
    /// As its family's [`TimeBase`].
    Base(TimeBase),
    /// A histogram bucket of wall-clock bounds (`le`): at speed `S` the bound `le="1"` counts
    /// what took up to `S` scenario seconds, so no conversion keeps a bound on it.
    WallBuckets,
}

/// Where the values of a family's label come from: what a scenario can make the engine export
/// under that label (scenario validation derives the scenario-dependent sets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelValues {
    /// A dependency the scenario reaches: a tool, a WebSocket channel, a model endpoint.
    Dep,
    /// A model (`PROVIDER/MODEL`) of the traffic or the engine configuration.
    Model,
    /// A provider of those models or of a `[[profile]]`.
    Provider,
    /// An auth profile id (configured, or a provider's implicit `PROVIDER:default`).
    Profile,
    /// A tenant of the traffic or of `[engine.throttle]`.
    Tenant,
    /// A breaker state ([`super::vocab::BreakerState`]).
    State,
    /// An attempt's outcome ([`super::events::AttemptOutcome`]).
    Outcome,
    /// A failure reason ([`super::outcome::Reason`]).
    Reason,
    /// An operation class ([`super::events::OpClass`]).
    Class,
    /// A timeout phase ([`super::outcome::TimeoutPhase`]).
    Phase,
    /// A fleet coordinator call ([`COORDINATOR_OPS`]).
    CoordinatorOp,
    /// A fleet host's coordination mode ([`COORDINATOR_MODES`]).
    CoordinatorMode,
}

impl LabelValues {
    /// The values of a domain that does not depend on the scenario (`None` for one that does).
    pub fn fixed(self) -> Option<Vec<&'static str>> {
        use super::events::{AttemptOutcome, OpClass};
        use super::outcome::{Reason, TimeoutPhase};
        use super::vocab::BreakerState;
        Some(match self {
            Self::Dep | Self::Model | Self::Provider | Self::Profile | Self::Tenant => return None,
            Self::State => BreakerState::ALL.map(BreakerState::as_str).to_vec(),
            Self::Outcome => AttemptOutcome::ALL.map(AttemptOutcome::as_str).to_vec(),
            Self::Reason => Reason::ALL.map(Reason::as_str).to_vec(),
            Self::Class => OpClass::ALL.map(OpClass::as_str).to_vec(),
            Self::Phase => TimeoutPhase::ALL.map(TimeoutPhase::as_str).to_vec(),
            Self::CoordinatorOp => COORDINATOR_OPS.to_vec(),
            Self::CoordinatorMode => COORDINATOR_MODES.to_vec(),
        })
    }
}

/// The calls a fleet host makes to its coordinator (`coordinator_errors_total{op}`).
pub const COORDINATOR_OPS: [&str; 6] = ["read", "change", "lease", "probe_ok", "seed", "cooldown"];
/// A fleet host's coordination modes (`coordinator_mode{mode}`).
pub const COORDINATOR_MODES: [&str; 3] = ["redis", "in_process", "local"];

/// One metric family the engine exports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    /// The family name (for histograms, the base name).
    pub name: &'static str,
    /// `# HELP` text.
    pub help: &'static str,
    /// `# TYPE`.
    pub kind: FamilyType,
    /// Label names, in declaration order.
    pub labels: &'static [&'static str],
    /// What each label's values can be, in the order of `labels`.
    pub values: &'static [LabelValues],
    /// What the value measures in time.
    pub time: TimeBase,
}

impl Family {
    /// What the values of `label` can be (`None` for a label the family lacks).
    pub fn values_of(&self, label: &str) -> Option<LabelValues> {
        let i = self.labels.iter().position(|l| *l == label)?;
        self.values.get(i).copied()
    }
}

const DFT: &[&str] = &["dep", "from", "to"];
const DFT_V: &[LabelValues] = &[LabelValues::Dep, LabelValues::State, LabelValues::State];
const DEP: &[&str] = &["dep"];
const DEP_V: &[LabelValues] = &[LabelValues::Dep];

/// `breaker_state`.
pub const BREAKER_STATE: Family = Family {
    name: "breaker_state",
    help: "Breaker state per dependency: 0 closed, 1 half_open, 2 open.",
    kind: FamilyType::Gauge,
    labels: DEP,
    values: DEP_V,
    time: TimeBase::NotTime,
};
/// `breaker_transitions_total`.
pub const TRANSITIONS: Family = Family {
    name: "breaker_transitions_total",
    help: "Breaker state transitions.",
    kind: FamilyType::Counter,
    labels: DFT,
    values: DFT_V,
    time: TimeBase::NotTime,
};
/// `breaker_last_transition_timestamp_seconds`.
pub const LAST_TRANSITION: Family = Family {
    name: "breaker_last_transition_timestamp_seconds",
    help: "Unix time (ms precision) of the latest transition of each kind.",
    kind: FamilyType::Gauge,
    labels: DFT,
    values: DFT_V,
    time: TimeBase::Unix,
};
/// `breaker_rejections_total`.
pub const REJECTIONS: Family = Family {
    name: "breaker_rejections_total",
    help: "Calls rejected at once by an open or pacing half-open breaker.",
    kind: FamilyType::Counter,
    labels: DEP,
    values: DEP_V,
    time: TimeBase::NotTime,
};
/// `breaker_probe_latency_seconds`.
pub const PROBE_LATENCY: Family = Family {
    name: "breaker_probe_latency_seconds",
    help: "Latency of half-open probes.",
    kind: FamilyType::Histogram(&PROBE_BUCKETS),
    labels: DEP,
    values: DEP_V,
    time: TimeBase::Wall,
};
/// `breaker_retry_after_skips_total`.
pub const RETRY_AFTER_SKIPS: Family = Family {
    name: "breaker_retry_after_skips_total",
    help: "Half-open transitions deferred because a Retry-After reached further.",
    kind: FamilyType::Counter,
    labels: DEP,
    values: DEP_V,
    time: TimeBase::NotTime,
};
/// `requests_total`.
pub const REQUESTS: Family = Family {
    name: "requests_total",
    help: "Attempts at a dependency by outcome (probes included, canaries not).",
    kind: FamilyType::Counter,
    labels: &["dep", "outcome"],
    values: &[LabelValues::Dep, LabelValues::Outcome],
    time: TimeBase::NotTime,
};
/// `request_latency_seconds`.
pub const REQUEST_LATENCY: Family = Family {
    name: "request_latency_seconds",
    help: "Latency of attempts that reached the dependency.",
    kind: FamilyType::Histogram(&REQUEST_BUCKETS),
    labels: DEP,
    values: DEP_V,
    time: TimeBase::Wall,
};
/// `profile_cooldowns_total`.
pub const COOLDOWNS: Family = Family {
    name: "profile_cooldowns_total",
    help: "Cooldowns written to auth profiles.",
    kind: FamilyType::Counter,
    labels: &["provider", "profile", "reason"],
    values: &[
        LabelValues::Provider,
        LabelValues::Profile,
        LabelValues::Reason,
    ],
    time: TimeBase::NotTime,
};
/// `profile_retries_total`.
pub const RETRIES: Family = Family {
    name: "profile_retries_total",
    help: "Same-profile retries (retry gate).",
    kind: FamilyType::Counter,
    labels: &["provider", "reason"],
    values: &[LabelValues::Provider, LabelValues::Reason],
    time: TimeBase::NotTime,
};
/// `profile_rotations_total`.
pub const ROTATIONS: Family = Family {
    name: "profile_rotations_total",
    help: "Rotations to the next auth profile.",
    kind: FamilyType::Counter,
    labels: &["provider", "reason"],
    values: &[LabelValues::Provider, LabelValues::Reason],
    time: TimeBase::NotTime,
};
/// `model_fallbacks_total`.
pub const FALLBACKS: Family = Family {
    name: "model_fallbacks_total",
    help: "Requests moved to a fallback model.",
    kind: FamilyType::Counter,
    labels: &["from", "to", "reason"],
    values: &[LabelValues::Model, LabelValues::Model, LabelValues::Reason],
    time: TimeBase::NotTime,
};
/// `retry_budget_exhausted_total`.
pub const BUDGET_EXHAUSTED: Family = Family {
    name: "retry_budget_exhausted_total",
    help: "Retries refused because the request's token budget was spent.",
    kind: FamilyType::Counter,
    labels: &["class"],
    values: &[LabelValues::Class],
    time: TimeBase::NotTime,
};
/// `timeouts_total`.
pub const TIMEOUTS: Family = Family {
    name: "timeouts_total",
    help: "Deadlines that expired, by operation class and phase.",
    kind: FamilyType::Counter,
    labels: &["class", "phase"],
    values: &[LabelValues::Class, LabelValues::Phase],
    time: TimeBase::NotTime,
};
/// `timeout_deadline_seconds`.
pub const DEADLINE: Family = Family {
    name: "timeout_deadline_seconds",
    help: "The deadline a dependency's next call of a class gets, per phase (fixed or adaptive), in seconds.",
    kind: FamilyType::Gauge,
    labels: &["dep", "class", "phase"],
    values: &[LabelValues::Dep, LabelValues::Class, LabelValues::Phase],
    time: TimeBase::Scenario,
};
/// `idempotent_duplicates_total`.
pub const DUPLICATES: Family = Family {
    name: "idempotent_duplicates_total",
    help: "Non-idempotent calls executed twice under one Idempotency-Key (must be 0).",
    kind: FamilyType::Counter,
    labels: DEP,
    values: DEP_V,
    time: TimeBase::NotTime,
};
/// `health_breaker_disagreement_seconds`.
pub const DISAGREEMENT: Family = Family {
    name: "health_breaker_disagreement_seconds",
    help: "How long canary and breaker have disagreed (0 while they agree); alert at 180.",
    kind: FamilyType::Gauge,
    labels: DEP,
    values: DEP_V,
    time: TimeBase::Wall,
};
/// `throttled_total`.
pub const THROTTLED: Family = Family {
    name: "throttled_total",
    help: "Requests of a tenant over its tokens-per-minute budget routed to the cheaper model.",
    kind: FamilyType::Counter,
    labels: &["tenant"],
    values: &[LabelValues::Tenant],
    time: TimeBase::NotTime,
};

/// `coordinator_errors_total` (a coordinated host only).
pub const COORDINATOR_ERRORS: Family = Family {
    name: "coordinator_errors_total",
    help: "Failed calls to the fleet coordinator (the host decided locally meanwhile).",
    kind: FamilyType::Counter,
    labels: &["op"],
    values: &[LabelValues::CoordinatorOp],
    time: TimeBase::NotTime,
};
/// `coordinator_mode` (a coordinated host only).
pub const COORDINATOR_MODE: Family = Family {
    name: "coordinator_mode",
    help: "1 for the host's current coordination mode (redis, in_process, local), 0 for others.",
    kind: FamilyType::Gauge,
    labels: &["mode"],
    values: &[LabelValues::CoordinatorMode],
    time: TimeBase::NotTime,
};

/// `cooldowns_adopted_total` (a coordinated host only).
pub const COOLDOWNS_ADOPTED: Family = Family {
    name: "cooldowns_adopted_total",
    help: "Profile cooldowns another fleet host started that this host then honoured.",
    kind: FamilyType::Counter,
    labels: &["profile"],
    values: &[LabelValues::Profile],
    time: TimeBase::NotTime,
};

/// `breaker_open_seconds`: what the shipped `BreakerOpenTooLong` alert compares against.
pub const OPEN_SECONDS: Family = Family {
    name: "breaker_open_seconds",
    help: "Open time of the breaker's current or last open period (extended to a Retry-After).",
    kind: FamilyType::Gauge,
    labels: DEP,
    values: DEP_V,
    time: TimeBase::Wall,
};
/// `breaker_open_since_timestamp_seconds`.
pub const OPEN_SINCE: Family = Family {
    name: "breaker_open_since_timestamp_seconds",
    help: "Unix time (ms precision) the breaker's current or last open period began.",
    kind: FamilyType::Gauge,
    labels: DEP,
    values: DEP_V,
    time: TimeBase::Unix,
};
/// `provider_profiles`.
pub const PROFILES: Family = Family {
    name: "provider_profiles",
    help: "Auth profiles the provider rotates over.",
    kind: FamilyType::Gauge,
    labels: &["provider"],
    values: &[LabelValues::Provider],
    time: TimeBase::NotTime,
};
/// `provider_profiles_cooling`: with `provider_profiles`, the shipped
/// `ProviderAllProfilesCooling` alert.
pub const PROFILES_COOLING: Family = Family {
    name: "provider_profiles_cooling",
    help: "Auth profiles of the provider in cooldown or disabled at scrape time.",
    kind: FamilyType::Gauge,
    labels: &["provider"],
    values: &[LabelValues::Provider],
    time: TimeBase::NotTime,
};

/// Every family, in docs/metrics.md (and `/metrics`) order; the fleet coordinator's three, then
/// the four gauges the shipped alerts need (docs/alerts.md), last.
pub const FAMILIES: [Family; 25] = [
    BREAKER_STATE,
    TRANSITIONS,
    LAST_TRANSITION,
    REJECTIONS,
    PROBE_LATENCY,
    RETRY_AFTER_SKIPS,
    REQUESTS,
    REQUEST_LATENCY,
    COOLDOWNS,
    RETRIES,
    ROTATIONS,
    FALLBACKS,
    BUDGET_EXHAUSTED,
    TIMEOUTS,
    DEADLINE,
    DUPLICATES,
    DISAGREEMENT,
    THROTTLED,
    COORDINATOR_ERRORS,
    COORDINATOR_MODE,
    COOLDOWNS_ADOPTED,
    OPEN_SECONDS,
    OPEN_SINCE,
    PROFILES,
    PROFILES_COOLING,
];

#[cfg(test)]
mod tests;
