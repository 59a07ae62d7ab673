//! Turns in the upstream's record (pure): the requests a system under test sent the mock upstream
//! grouped by the turn each was sent for (`UpstreamRecord::turn`, the marker of
//! [`crate::wire::turn`]), one [`TurnRow`] per turn — its requests in order with their profiles,
//! models and faults, the one that answered, the retries on the same profile, the time to
//! answer — and what the rows say about the system's routing ([`changes`]: rotations,
//! fallbacks, cooldowns), the same for every kind of system.
//!
//! The rules (docs/report.md "Turns"):
//! - a request *answered* when the upstream served it whole: its record's `whole` (the whole
//!   answer went out to its last byte: no fault, or one that only slows it — `latency`,
//!   `slow_stream`, `first_token_delay`, a `stall_stream` that resumes); in a recording made
//!   before `whole`, by its fault alone (none, or one that only slows the answer). The turn's
//!   *answer* is its last answered request, its *time to answer* from its first request's
//!   arrival to when the upstream finished serving the answer (`done_ms`): a first token 20 s
//!   late or a 30 s stall counts in it. An answer whose record has no `done_ms` (a recording
//!   made before it) has no time to answer: [`TurnRow::answer_end_unknown`], never a pass
//!   of `answer_within` (`verdict::per_turn`);
//! - a *retry on the same profile* is a request of the turn right after a failed one with the
//!   same route, profile and model;
//! - a request with no turn (a gateway's own call: compaction, a title) is counted apart
//!   (`unmarked`), never put in a turn; warm-up requests and canaries are neither;
//! - when a gateway sent requests and none carried a marker, it strips or rewrites the user
//!   message: the rows are not judged and what is read from them is unknown
//!   ([`TurnsPart::unreadable`]).

pub mod changes;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::upstream::{RequestRoute, UpstreamRecord};
use crate::util::speed::Speed;

pub use changes::{Change, Changes, Cooldown, changes, cooldowns_of};

/// How the record's keys are named: a profile's id and provider by its key's fingerprint (the
/// scenario's profiles; another key keeps its fingerprint and the provider its model names).
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Key fingerprint → profile id.
    pub profile_of_fp: BTreeMap<String, String>,
    /// Key fingerprint → provider.
    pub provider_of_fp: BTreeMap<String, String>,
}

/// One upstream request of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRequest {
    /// Arrival, scenario ms.
    pub t_ms: u64,
    /// The route, when not `llm`.
    #[serde(default = "llm", skip_serializing_if = "is_llm")]
    pub route: RequestRoute,
    /// The profile id of its key (the key's fingerprint when no profile holds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The provider of its key's profile, else the one its model names (not written: the
    /// report's reader has the profile).
    #[serde(skip)]
    pub provider: Option<String>,
    /// The model it named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The fault the upstream applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// A breaker probe (`X-Breaker-Probe`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probe: bool,
    /// The content tokens of the answer the upstream built for it (not written: the client's
    /// side of a gateway's turn keeps what it is compared with, `report::target::TurnRow`).
    #[serde(skip)]
    pub tokens: Option<u64>,
    /// The usage that answer carries (not written, as `tokens`).
    #[serde(skip)]
    pub usage: Option<crate::wire::usage::Usage>,
    /// The wait its response's `Retry-After` told the client, scenario ms (the record's
    /// `retry_after_ms`); absent when it sent none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// When the upstream finished serving it, scenario ms (the record's `done_ms`); absent in
    /// recordings made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_ms: Option<u64>,
    /// Whether the upstream wrote its whole answer (the record's `whole`); absent in recordings
    /// made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<bool>,
}

fn llm() -> RequestRoute {
    RequestRoute::Llm
}

fn is_llm(r: &RequestRoute) -> bool {
    *r == RequestRoute::Llm
}

impl TurnRequest {
    /// The upstream served it whole: its record says so (`whole`); a recording made before
    /// `whole`, by its fault: none, or one that only slows the answer.
    pub fn answered(&self) -> bool {
        self.whole
            .unwrap_or_else(|| fault_answers(self.fault.as_deref()))
    }

    /// The upstream was sending its whole answer (no fault, or one that only slows it) and the
    /// client went away before the end (`whole: false`): what it was served is that answer,
    /// though the upstream did not get it all out ([`crate::verdict::answers`]).
    pub fn abandoned(&self) -> bool {
        self.whole == Some(false) && fault_answers(self.fault.as_deref())
    }

    /// Its model qualified with its provider (`PROVIDER/MODEL`), what a fallback changes.
    pub fn qualified_model(&self) -> Option<String> {
        self.model
            .as_deref()
            .map(|m| crate::wire::model::qualified(m, self.provider.as_deref()))
    }
}

/// Whether a request with this fault (`None`: none) got its answer from the upstream, in a
/// recording made before `whole`: none, or one that only slows the answer (a late first token
/// too). A `stall_stream` there is recorded by its kind alone (resumed or not), so it counts as
/// not answered.
fn fault_answers(fault: Option<&str>) -> bool {
    matches!(fault, None | Some("latency" | "slow_stream" | "first_token_delay"))
}

/// One turn as the upstream saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRow {
    /// The turn's number (its traffic line; a fleet host's own line of its share).
    pub turn: u64,
    /// The fleet host that sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Its requests in arrival order.
    pub requests: Vec<TurnRequest>,
    /// The index in `requests` of the one that answered (the last answered), if any.
    #[serde(default)]
    pub answered_by: Option<usize>,
    /// Requests right after a failed one on the same route, profile and model.
    #[serde(default)]
    pub same_profile_retries: u32,
    /// From its first request's arrival to when the upstream finished serving its answer,
    /// scenario ms; `None` without an answer, or when the answer's record has no end
    /// ([`TurnRow::answer_end_unknown`]).
    #[serde(default)]
    pub answer_ms: Option<u64>,
    /// What the gateway said of the turn in its response headers (LiteLLM's), beside this
    /// ground truth; never judged in its place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<crate::wire::said::GatewaySaid>,
}

impl TurnRow {
    /// Its first request's arrival, scenario ms.
    pub fn first_ms(&self) -> u64 {
        self.requests.first().map_or(0, |r| r.t_ms)
    }

    /// Its last request's arrival, scenario ms.
    pub fn last_ms(&self) -> u64 {
        self.requests.last().map_or(0, |r| r.t_ms)
    }

    /// The request that answered.
    pub fn answer(&self) -> Option<&TurnRequest> {
        self.answered_by.and_then(|i| self.requests.get(i))
    }

    /// It was answered, but its answer's record has no `done_ms` (a recording made before it):
    /// its time to answer is unknown.
    pub fn answer_end_unknown(&self) -> bool {
        self.answer().is_some_and(|a| a.done_ms.is_none())
    }

    /// Worth a line in report.md: more than one request, or no answer.
    pub fn eventful(&self) -> bool {
        self.requests.len() > 1 || self.answered_by.is_none()
    }
}

/// The turns of one arm, as report.json `policies[].turns` holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnsPart {
    /// Requests that carried a turn.
    pub marked_requests: u64,
    /// Requests that carried none (a gateway's own calls), counted apart.
    pub unmarked_requests: u64,
    /// Why the rows cannot be read (a gateway that strips the marker); `None` when they can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
    /// Requests past the recorder's cap, in no row.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped_requests: u64,
    /// One row per turn, by its first request's arrival.
    pub rows: Vec<TurnRow>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl TurnsPart {
    /// Whether the rows say what the system did (false: it strips the marker).
    pub fn readable(&self) -> bool {
        self.unreadable.is_none()
    }
}

/// The turns of `records` (any order; warm-up requests and canaries left out), times in
/// scenario ms at `speed`, keys named by `names`.
pub fn rows<'a>(
    records: impl IntoIterator<Item = &'a UpstreamRecord>,
    names: &Names,
    speed: Speed,
) -> TurnsPart {
    let mut by_turn: BTreeMap<(Option<&str>, u64), Vec<TurnRequest>> = BTreeMap::new();
    let mut part = TurnsPart::default();
    for r in records {
        if r.warmup || r.canary {
            continue;
        }
        let Some(turn) = r.turn else {
            part.unmarked_requests += 1;
            continue;
        };
        part.marked_requests += 1;
        let fp = r.profile_fp.as_deref();
        let provider = fp
            .and_then(|fp| names.provider_of_fp.get(fp).cloned())
            .or_else(|| {
                r.model
                    .as_deref()
                    .and_then(|m| m.split_once('/'))
                    .map(|(p, _)| p.to_string())
            });
        by_turn
            .entry((r.host.as_deref(), turn))
            .or_default()
            .push(TurnRequest {
                t_ms: speed.scenario_ms_u(r.t_ms),
                route: r.route.clone(),
                profile: fp.map(|fp| names.profile_of_fp.get(fp).map_or(fp, String::as_str).to_string()),
                provider,
                model: r.model.clone(),
                fault: r.fault.clone(),
                probe: r.probe,
                tokens: r.tokens,
                usage: r.usage,
                retry_after_ms: r.retry_after_ms,
                done_ms: r.done_ms.map(|d| speed.scenario_ms_u(d)),
                whole: r.whole,
            });
    }
    part.rows = by_turn
        .into_iter()
        .map(|((host, turn), mut requests)| {
            requests.sort_by_key(|q| q.t_ms);
            row(turn, host.map(str::to_string), requests)
        })
        .collect();
    part.rows.sort_by_key(|r| (r.first_ms(), r.turn));
    if part.marked_requests == 0 && part.unmarked_requests > 0 {
        part.unreadable = Some(format!(
            "none of the {} requests the upstream received carried a turn marker: the system \
             strips or rewrites the turn's user message, so its turns cannot be told apart \
             (no per-turn row is judged; what is read from them is unknown)",
            part.unmarked_requests
        ));
    }
    part
}

/// One turn's row from its requests in arrival order.
pub fn row(turn: u64, host: Option<String>, requests: Vec<TurnRequest>) -> TurnRow {
    let answered_by = requests.iter().rposition(TurnRequest::answered);
    let same_profile_retries = requests
        .windows(2)
        .filter(|w| {
            !w[0].answered()
                && w[0].route == w[1].route
                && w[0].profile == w[1].profile
                && w[0].model == w[1].model
        })
        .count() as u32;
    let answer_ms = answered_by
        .and_then(|i| requests.get(i))
        .and_then(|a| a.done_ms)
        .zip(requests.first())
        .map(|(done, f)| done.saturating_sub(f.t_ms));
    TurnRow {
        turn,
        host,
        requests,
        answered_by,
        same_profile_retries,
        answer_ms,
        said: None,
    }
}

#[cfg(test)]
mod tests;
