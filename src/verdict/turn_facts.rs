//! What the per-turn expectations (`[[expect.cooldown]]` in [`super::cooldown`],
//! `[[expect.per_turn]]` in [`super::per_turn`]) are judged on: one arm's turns in the
//! upstream's record ([`super::turns::TurnsPart`]), where its times count from (a `since`
//! anchor, [`super::anchor`]) and how far the run observed. Pure.

use super::anchor::{Anchored, FaultsSeen, Since, Unanchored};
use super::turns::{TurnRequest, TurnRow, TurnsPart};

/// One arm's turns and how far they were observed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnFacts<'a> {
    /// The arm's turns.
    pub part: &'a TurnsPart,
    /// The scenario's faults and their applications: what a row's `since` resolves against.
    pub faults: FaultsSeen<'a>,
    /// The run was stopped early (scenario ms): its turns after the stop were never seen.
    pub stopped_at_ms: Option<u64>,
}

impl TurnFacts<'_> {
    /// Where a row's times count from: `Ok(None)` the run start, else its `since` resolved.
    pub(crate) fn anchor(&self, since: Option<&Since>) -> Result<Option<Anchored>, Unanchored> {
        since
            .map(|s| super::anchor::resolve(s, &self.faults))
            .transpose()
    }

    /// Whether every turn was seen: the run was not stopped and the recorder dropped none of
    /// its requests.
    pub(crate) fn complete(&self) -> bool {
        self.stopped_at_ms.is_none() && self.part.dropped_requests == 0
    }

    /// The turns that sent a model request, first at or after `from` and before `until`
    /// (scenario ms).
    pub(crate) fn turns_between(&self, from: u64, until: Option<u64>) -> Vec<&TurnRow> {
        self.part
            .rows
            .iter()
            .filter(|r| r.requests.iter().any(is_model))
            .filter(|r| r.first_ms() >= from && until.is_none_or(|u| r.first_ms() < u))
            .collect()
    }
}

/// A model request (`llm` route), what the per-turn rows count.
pub(crate) fn is_model(q: &TurnRequest) -> bool {
    q.route == crate::upstream::RequestRoute::Llm
}

/// Whether request `q` is of the subject `profile` (its id) and `model` (as the ground-truth
/// tables match a model: `PROVIDER/MODEL` or the bare id sent with the token's provider).
pub(crate) fn is_of(q: &TurnRequest, profile: Option<&str>, model: Option<&str>) -> bool {
    is_model(q)
        && profile.is_none_or(|p| q.profile.as_deref() == Some(p))
        && model.is_none_or(|m| {
            q.model
                .as_deref()
                .is_some_and(|sent| crate::wire::model::names_model(m, sent, q.provider.as_deref()))
        })
}

/// The reason a row on unreadable turns is not judged: the gateway stripped the marker.
pub(crate) fn stripped(why: &str) -> String {
    format!("the gateway stripped the turn marker, so no per-turn row can be judged: {why}")
}

pub(crate) fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A per-turn row's status and detail (`subject` opens the detail: the profile, or `turns`): a
/// pass only on a complete record; a failure that more turns could not undo (`certain`) stands in
/// a run cut short; the rest of a cut run is not reached.
pub(crate) fn settle(
    mut r: super::ExpectationResult,
    ok: bool,
    certain: bool,
    f: &TurnFacts<'_>,
    why: &str,
    subject: &str,
) -> super::ExpectationResult {
    use super::ExpectStatus;
    r.status = match (ok, f.complete()) {
        (true, true) => ExpectStatus::Pass,
        (false, true) => ExpectStatus::Fail,
        (false, false) if certain => ExpectStatus::Fail,
        _ => ExpectStatus::NotReached,
    };
    r.ok = r.status == ExpectStatus::Pass;
    r.detail = match r.status {
        ExpectStatus::NotReached => format!(
            "{subject} {}: not reached (the run was cut short or its record capped; observed so far: {})",
            r.expected, r.observed
        ),
        ExpectStatus::Fail if !why.is_empty() => {
            format!("{subject} {}: observed {} — {why}", r.expected, r.observed)
        }
        _ => format!("{subject} {}: observed {}", r.expected, r.observed),
    };
    r
}
