//! Pure evaluators of the upstream ground-truth expectations ([`super::ground`]) over the
//! upstream's records: model requests only (canaries left out), their times in scenario ms
//! (record ms × speed). A run stopped early leaves an expectation whose window reaches past the
//! stop `not_reached`, unless it already failed for certain (a count above its bound, a request
//! where none may be).
//!
//! The subject matching, the row builders and the dispatch (`evaluate`) are here; the kinds'
//! evaluators in `attempts.rs`, `requests.rs` (first and no request) and `gaps.rs` (retry gaps,
//! recovery); their tests in `tests/` (`anchored.rs`: rows anchored at a fault; `hosts.rs`: a
//! fleet's hosts).

use std::collections::BTreeMap;

use super::ground::{
    ExpectAttempts, ExpectFirstRequest, ExpectNoRequest, ExpectRecovered, ExpectRetryGaps,
    counts_hold, counts_text,
};
use super::anchor::{Anchored, FaultsSeen, Since, Unanchored, since_text};
use super::{ExpectKind, ExpectStatus, ExpectationResult, Witness, secs};
use crate::util::speed::Speed;
use crate::upstream::UpstreamRecord;

/// What the evaluators look at.
#[derive(Debug, Clone, Copy)]
pub(crate) struct UpstreamFacts<'a> {
    /// Every upstream record of the run.
    pub records: &'a [UpstreamRecord],
    /// Profile id → fingerprint of its token (as upstream records name tokens).
    pub profile_fps: &'a BTreeMap<String, String>,
    /// The profile behind each token fingerprint: a request's provider, which qualifies the
    /// bare model id a gateway sends ([`crate::wire::model`]).
    pub owners: &'a crate::upstream::TokenOwners,
    /// The `--speed` divisor the records' times are at.
    pub speed: Speed,
    /// Scenario ms the run observed (without a stop or a cap): a window reaching past it was
    /// not seen to its end, so it is not reached.
    pub end_ms: u64,
    /// Scenario ms of an early stop.
    pub stopped_at_ms: Option<u64>,
    /// Scenario ms where the kept record ends because it reached its cap (`None`: complete).
    /// Like a stop, nothing after it is observed: a window reaching past it is not reached.
    pub truncated_at_ms: Option<u64>,
    /// The scenario's faults and their applications: what a row's `since` resolves against.
    pub faults: FaultsSeen<'a>,
}

impl UpstreamFacts<'_> {
    /// Where a row's times count from: `Ok(None)` the run start, else its `since` resolved
    /// ([`super::anchor::resolve`]).
    fn anchor(&self, since: Option<&Since>) -> Result<Option<Anchored>, Unanchored> {
        self.faults.anchor(since)
    }

    /// Scenario-ms times of the model requests of a subject, in order.
    pub(crate) fn times(&self, profile: Option<&str>, model: Option<&str>) -> Vec<u64> {
        self.matching(profile, model, None)
    }

    fn matching(
        &self,
        profile: Option<&str>,
        model: Option<&str>,
        fault: Option<&str>,
    ) -> Vec<u64> {
        let mut out: Vec<u64> = self
            .matching_records(profile, model, fault)
            .map(|r| self.speed.scenario_ms_u(r.t_ms))
            .collect();
        out.sort_unstable();
        out
    }

    /// The distinct hosts (`-` for a record without one: a single host) of the subject's
    /// requests in `[from, until)`.
    fn hosts(
        &self,
        e: &ExpectAttempts,
        from: u64,
        until: Option<u64>,
    ) -> std::collections::BTreeSet<String> {
        self.matching_records(e.profile.as_deref(), e.model.as_deref(), e.fault.as_deref())
            .filter(|r| {
                let t = self.speed.scenario_ms_u(r.t_ms);
                t >= from && until.is_none_or(|u| t < u)
            })
            .map(|r| r.host.clone().unwrap_or_else(|| "-".into()))
            .collect()
    }

    fn matching_records<'s>(
        &'s self,
        profile: Option<&'s str>,
        model: Option<&'s str>,
        fault: Option<&'s str>,
    ) -> impl Iterator<Item = &'s UpstreamRecord> + 's {
        let fp = profile.map(|p| self.profile_fps.get(p).map(String::as_str));
        self.records
            .iter()
            .filter(|r| r.route == crate::upstream::RouteKind::Llm && !r.canary)
            .filter(move |r| match fp {
                None => true,
                Some(None) => false,
                Some(Some(fp)) => r.profile_fp.as_deref() == Some(fp),
            })
            .filter(move |r| {
                model.is_none_or(|m| {
                    r.model.as_deref().is_some_and(|sent| {
                        let provider = r
                            .profile_fp
                            .as_deref()
                            .and_then(|fp| self.owners.by_fingerprint(fp))
                            .map(|o| o.provider.as_str());
                        crate::wire::model::names_model(m, sent, provider)
                    })
                })
            })
            .filter(move |r| match fault {
                None => true,
                Some("none") => r.fault.is_none(),
                Some(k) => r.fault.as_deref() == Some(k),
            })
    }

    /// How many model requests of any subject reached the upstream in `[from, until)` (scenario
    /// ms; `None` = to the end): a row's witness that the system under test was sending then.
    fn requests_between(&self, from: u64, until: Option<u64>) -> u64 {
        self.matching_records(None, None, None)
            .map(|r| self.speed.scenario_ms_u(r.t_ms))
            .filter(|&t| t >= from && until.is_none_or(|u| t < u))
            .count() as u64
    }

    /// The witness of a row over `[from, until)` whose subject had `subject` requests there.
    fn witness(&self, from: u64, until: Option<u64>, subject: u64) -> Witness {
        Witness::of(&[
            ("requests_observed", self.requests_between(from, until)),
            ("subject_requests", subject),
        ])
    }

    /// Whether a window ending at `until` (scenario ms; `None` = end of run) was fully seen:
    /// without a stop or a cap, when it ends by the end of what the run observed; after one,
    /// when it ends by the cut.
    fn reached(&self, until: Option<u64>) -> bool {
        let end = match (self.stopped_at_ms, self.truncated_at_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match end {
            None => until.is_none_or(|u| u <= self.end_ms),
            Some(stop) => until.is_some_and(|u| u <= stop),
        }
    }
}

fn subject(profile: &Option<String>, model: &Option<String>) -> String {
    match (profile, model) {
        (Some(p), Some(m)) => format!("{p} {m}"),
        (Some(p), None) => p.clone(),
        (None, Some(m)) => m.clone(),
        (None, None) => "all".into(),
    }
}

fn status(ok: bool, certain_fail: bool, reached: bool) -> ExpectStatus {
    match (ok, reached) {
        (true, true) => ExpectStatus::Pass,
        (false, true) => ExpectStatus::Fail,
        (false, false) if certain_fail => ExpectStatus::Fail,
        _ => ExpectStatus::NotReached,
    }
}

fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn row(kind: ExpectKind, dep: String, expected: String, observed: String) -> ExpectationResult {
    ExpectationResult::counted(kind, dep, expected, observed)
}

fn finish(mut r: ExpectationResult, status: ExpectStatus) -> ExpectationResult {
    r.status = status;
    r.ok = status == ExpectStatus::Pass;
    let dep = r.dep.clone().unwrap_or_default();
    r.detail = match status {
        ExpectStatus::NotReached => {
            format!(
                "{dep} {}: not reached (observed so far: {})",
                r.expected, r.observed
            )
        }
        _ => format!("{dep} {}: observed {}", r.expected, r.observed),
    };
    r
}

/// An anchored row says its anchor's instant ([`Anchored::mark`]). `None`: a row counted from
/// the run start.
fn anchored(mut r: ExpectationResult, a: Option<&Anchored>) -> ExpectationResult {
    if let Some(a) = a {
        a.mark(&mut r);
    }
    r
}

/// The row of an expectation whose anchor has no instant (its fault never applied): never a
/// pass — `fail` once the run was seen to its end, `not_reached` in a run cut short — with the
/// reason.
fn unanchored(
    kind: ExpectKind,
    dep: String,
    expected: String,
    why: &Unanchored,
    f: &UpstreamFacts<'_>,
) -> ExpectationResult {
    let mut r = row(kind, dep.clone(), expected, "no anchor".into());
    r.witness = f.witness(0, None, 0).with("fault_applications", 0);
    let st = status(false, false, f.reached(None));
    r = finish(r, st);
    r.detail = match st {
        ExpectStatus::NotReached => {
            format!("{dep} {}: not reached ({why}; the run was cut short)", r.expected)
        }
        _ => format!("{dep} {}: {why}", r.expected),
    };
    r
}

/// Every ground-truth expectation of `e` (already filtered to the run), in table order.
pub(crate) fn evaluate(
    e: &crate::verdict::Expectations,
    f: &UpstreamFacts<'_>,
) -> Vec<ExpectationResult> {
    let mut out: Vec<ExpectationResult> = Vec::new();
    for x in &e.attempts {
        if x.equals.or(x.at_least).or(x.at_most).is_some() {
            out.push(attempts(x, f));
        }
        if x.hosts_at_least.or(x.hosts_at_most).is_some() {
            out.push(attempt_hosts(x, f));
        }
    }
    out.extend(e.first_request.iter().map(|x| first_request(x, f)));
    out.extend(e.no_request.iter().map(|x| no_request(x, f)));
    out.extend(e.retry_gaps.iter().map(|x| retry_gaps(x, f)));
    out.extend(e.recovered.iter().map(|x| recovered(x, f)));
    if let Some(t) = f.truncated_at_ms {
        for r in out
            .iter_mut()
            .filter(|r| r.status == ExpectStatus::NotReached)
        {
            r.detail = format!(
                "{}; the upstream record was kept only up to {} (its cap)",
                r.detail,
                secs(t as i64)
            );
        }
    }
    out
}

mod attempts;
mod gaps;
mod requests;

pub(crate) use attempts::{attempt_hosts, attempts};
pub(crate) use gaps::{recovered, retry_gaps};
pub(crate) use requests::{first_request, no_request};

#[cfg(test)]
mod tests;
