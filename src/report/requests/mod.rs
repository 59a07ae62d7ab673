//! The request lanes of one arm (report.json `policies[].requests`): what the mock upstream saw,
//! drawn for every kind of run from the one recorder's record — one lane per profile (and per
//! model, so a fallback gets its own), each request marked by what the upstream did to it (its
//! fault, or `ok`); the rotations and fallbacks read from each turn's requests (the rule of the
//! key figures, `verdict::turns::changes`; unknown when no request carried its turn); a gateway's turns as spans from due to answer with their
//! outcome, its own log decisions placed on the lanes they name, and its warm-up before the
//! run's clock apart.
//!
//! Bounded whatever the run's size: up to [`MAX_EXACT`] requests every one is in `requests`;
//! beyond that they are counted into bins of one width per lane and outcome (`bins`, and the
//! picture says so); lanes, arrows, turns and decisions are capped with the count left out
//! stated. Every time is scenario ms since the run's clock started, except the warm-up's (ms
//! since the warm-up began: it ran before the clock). [`tape`] gathers the record during the
//! run, [`build`] turns it into this model.

mod build;
mod moves;
pub(crate) mod tape;

use serde::{Deserialize, Serialize};

pub(crate) use build::{LaneInput, LaneProfile, build};

/// Most requests drawn one by one; past it every request is counted into bins.
pub(crate) const MAX_EXACT: usize = 1_500;
/// Most bins across the axis when binned.
pub(crate) const MAX_BINS: u64 = 200;
/// Most lanes; the requests of the others share one `other` lane.
pub(crate) const MAX_LANES: usize = 16;
/// Most rotation or fallback arrows kept (each kind); the totals stay exact.
pub(crate) const MAX_ARROWS: usize = 200;
/// Most turns drawn as spans; past it turns are counted into the request bins' width.
pub(crate) const MAX_TURN_SPANS: usize = 120;
/// Most gateway decisions kept as marks.
pub(crate) const MAX_DECISIONS: usize = 400;
/// Most warm-up requests kept as marks (the count goes on).
pub(crate) const MAX_WARMUP_MARKS: usize = 400;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// report.json `policies[].requests`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestLanes {
    /// The lanes, in the order drawn: model calls per profile and model (the scenario's
    /// profiles first), then tools and websocket channels per dep.
    pub lanes: Vec<RequestLane>,
    /// Requests the upstream saw on the run's clock (every route; probes and canaries included).
    pub total: u64,
    /// Every request, when `total` ≤ the exact limit and nothing was left out; else empty.
    #[serde(default)]
    pub requests: Vec<RequestMark>,
    /// Set when the requests were too many to draw one by one: their counts per bin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<RequestBins>,
    /// Requests the recorder did not keep (its cap): counted here, drawn nowhere.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_kept: u64,
    /// Scenario ms of the first request not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_kept_from_ms: Option<u64>,
    /// Rotations read per turn: a model request naming the same model as the turn's previous
    /// one, on another profile (at most the arrow cap; the key figures' rule).
    #[serde(default)]
    pub rotations: Vec<SequenceMark>,
    /// Rotations in all (the arrows kept are the first ones).
    #[serde(default)]
    pub rotations_total: u64,
    /// Fallbacks read per turn: a model request naming another model (qualified with its
    /// provider) than the turn's previous one (at most the arrow cap).
    #[serde(default)]
    pub fallbacks: Vec<SequenceMark>,
    /// Fallbacks in all.
    #[serde(default)]
    pub fallbacks_total: u64,
    /// Model requests came and none carried its turn (a gateway that strips the marker, a
    /// recording made before turns): rotations and fallbacks are unknown, none drawn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub moves_unread: bool,
    /// A gateway's turns (absent for an engine of ours: its traffic is the requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<TurnLane>,
    /// A gateway's log decisions on the run's clock, placed on the lane they name.
    #[serde(default)]
    pub decisions: Vec<DecisionMark>,
    /// Decisions left out by the cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub decisions_dropped: u64,
    /// What reached the upstream before the run's clock started (a gateway's warm-up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupBand>,
}

/// One lane.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLane {
    /// Its name in the picture: the profile id (`mockai:a`), else the dep (`crm_search`), else
    /// the token's fingerprint; `other` for the lanes past the cap.
    pub name: String,
    /// `llm`, `tool:NAME`, `ws` (`*` for `other`).
    pub route: String,
    /// The dep of its requests (`mockai/default/1a2b3c`, `crm_search`; a gateway's model calls
    /// name the model where an engine's name the provider: `m1/default/1a2b3c`).
    pub dep: String,
    /// The provider of its model calls: its profile's, else the dep's first part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The profile id, when the token is a scenario profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The model its requests named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Requests in it (on the run's clock).
    pub requests: u64,
    /// Of those, faulted.
    pub faulted: u64,
}

/// One request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestMark {
    /// Arrival, scenario ms.
    pub t_ms: u64,
    /// Its lane (index into `lanes`).
    pub lane: usize,
    /// What the upstream did: `ok`, or the fault kind (`status`, `rate_limit`, `reset`, ...).
    pub outcome: String,
    /// The `[[fault]]` that applied (0-based), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<usize>,
    /// A breaker probe (`X-Breaker-Probe`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub probe: bool,
    /// A synthetic health check (canary).
    #[serde(default, skip_serializing_if = "is_false")]
    pub canary: bool,
}

/// Requests counted per bin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestBins {
    /// The width of one bin, scenario ms (bin `i` is `[i × width, (i + 1) × width)`).
    pub width_ms: u64,
    /// The non-empty counts.
    pub counts: Vec<BinCount>,
}

/// Requests of one lane, bin and outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BinCount {
    /// The lane.
    pub lane: usize,
    /// The bin.
    pub bin: u64,
    /// `ok` or the fault kind.
    pub outcome: String,
    /// The `[[fault]]` that applied, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<usize>,
    /// How many.
    pub n: u64,
}

/// A rotation or a fallback read from a turn's requests: from one request to the turn's next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequenceMark {
    /// The faulted request, scenario ms.
    pub from_ms: u64,
    /// Its lane.
    pub from_lane: usize,
    /// The request that rotated or fell back, scenario ms.
    pub to_ms: u64,
    /// Its lane.
    pub to_lane: usize,
}

/// A gateway's turns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnLane {
    /// Turns sent.
    pub total: u64,
    /// Each turn from due to answer, when at most the span limit were sent; else empty.
    #[serde(default)]
    pub spans: Vec<TurnSpan>,
    /// Else turns counted per bin of the requests' width (by when due, per outcome).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<RequestBins>,
}

/// One turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnSpan {
    /// The traffic line.
    pub line: usize,
    /// Due, scenario ms.
    pub due_ms: u64,
    /// When its answer (or error) came, scenario ms.
    pub end_ms: u64,
    /// How it ended (`answered`, `timed_out`, ...).
    pub outcome: String,
    /// A complete answer.
    pub ok: bool,
}

/// One decision of a gateway's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionMark {
    /// When it was logged, scenario ms.
    pub t_ms: u64,
    /// The lane it names (a profile's, a model's), when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<usize>,
    /// The event (`rotate_profile`, `same_model_retry`, `profile_failure_state`, ...).
    pub event: String,
    /// What it said (reason, retry count, delay, candidate).
    #[serde(default)]
    pub detail: String,
    /// A cooldown's end, scenario ms (`profile_failure_state` with a `cooldownUntil`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ms: Option<u64>,
}

/// The warm-up: what reached the upstream before the run's clock started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmupBand {
    /// From the warm-up's start (the upstream's faults disarmed) to the run clock's start, ms.
    pub before_clock_ms: u64,
    /// Requests before the clock (every route).
    pub total: u64,
    /// The first of them (at most the warm-up cap): ms since the warm-up began.
    #[serde(default)]
    pub requests: Vec<WarmupMark>,
}

/// One warm-up request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarmupMark {
    /// Ms since the warm-up began.
    pub t_ms: u64,
    /// The lane it would be drawn in (its profile and model), when that lane exists on the
    /// run's clock; else its name.
    pub lane: String,
    /// `ok` or the fault kind (the warm-up is never faulted: anything else is the gateway's).
    pub outcome: String,
}

#[cfg(test)]
mod tests;
