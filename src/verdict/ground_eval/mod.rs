//! Pure evaluators of the upstream ground-truth expectations ([`super::ground`]) over the
//! upstream's records: model requests only (canaries left out), their times in scenario ms
//! (record ms × speed). A run stopped early leaves an expectation whose window reaches past the
//! stop `not_reached`, unless it already failed for certain (a count above its bound, a request
//! where none may be).
//!
//! Longer than 400 lines on purpose: the evaluators share the subject matching and the row
//! builders; their tests are in `tests.rs`.

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

/// ` with fault KIND in [FROM, UNTIL)` of an `[[expect.attempts]]` row (each part when given).
fn attempts_scope(e: &ExpectAttempts, from: u64, until: Option<u64>) -> String {
    let fault = e
        .fault
        .as_ref()
        .map(|k| format!(" with fault {k}"))
        .unwrap_or_default();
    let window = match (e.from, e.until) {
        (None, None) if e.since.is_none() => String::new(),
        _ => format!(
            " in [{}, {})",
            secs(from as i64),
            until.map_or("end".into(), |u| secs(u as i64))
        ),
    };
    format!("{fault}{window}")
}

/// `[[expect.attempts]]`'s window `[from, until)` in scenario ms from the run start: its times
/// counted from `base` (the run start, or its `since` anchor).
fn attempts_window(e: &ExpectAttempts, base: u64) -> (u64, Option<u64>) {
    let from = base.saturating_add(e.from.map_or(0, ms));
    (from, e.until.map(|u| base.saturating_add(ms(u))))
}

/// `[[expect.attempts]]`.
pub(crate) fn attempts(e: &ExpectAttempts, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let anchor = match f.anchor(e.since.as_ref()) {
        Ok(a) => a,
        Err(why) => {
            let expected = format!(
                "attempts{}{} {}",
                attempts_scope(e, 0, None),
                since_text(e.since.as_ref()),
                counts_text(e.equals, e.at_least, e.at_most)
            );
            return unanchored(
                ExpectKind::Attempts,
                subject(&e.profile, &e.model),
                expected,
                &why,
                f,
            );
        }
    };
    let (from, until) = attempts_window(e, anchor.as_ref().map_or(0, |a| a.at_ms));
    let n = f
        .matching(e.profile.as_deref(), e.model.as_deref(), e.fault.as_deref())
        .into_iter()
        .filter(|&t| t >= from && until.is_none_or(|u| t < u))
        .count() as u64;
    let expected = format!(
        "attempts{}{} {}",
        attempts_scope(e, from, until),
        since_text(e.since.as_ref()),
        counts_text(e.equals, e.at_least, e.at_most)
    );
    let ok = counts_hold(n, e.equals, e.at_least, e.at_most);
    let over = e.equals.or(e.at_most).is_some_and(|hi| n > hi);
    let mut r = row(
        ExpectKind::Attempts,
        subject(&e.profile, &e.model),
        expected,
        n.to_string(),
    );
    r.witness = f.witness(from, until, n);
    anchored(finish(r, status(ok, over, f.reached(until))), anchor.as_ref())
}

/// `[[expect.attempts]]`'s `hosts_at_least` / `hosts_at_most`: how many distinct hosts sent the
/// subject's requests in the window (the fleet's: did the other hosts stay off a cooled profile?).
pub(crate) fn attempt_hosts(e: &ExpectAttempts, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let anchor = match f.anchor(e.since.as_ref()) {
        Ok(a) => a,
        Err(why) => {
            let expected = format!(
                "hosts sending attempts{}{} {}",
                attempts_scope(e, 0, None),
                since_text(e.since.as_ref()),
                counts_text(None, e.hosts_at_least, e.hosts_at_most)
            );
            return unanchored(
                ExpectKind::Attempts,
                subject(&e.profile, &e.model),
                expected,
                &why,
                f,
            );
        }
    };
    let (from, until) = attempts_window(e, anchor.as_ref().map_or(0, |a| a.at_ms));
    let hosts = f.hosts(e, from, until);
    let n = hosts.len() as u64;
    let expected = format!(
        "hosts sending attempts{}{} {}",
        attempts_scope(e, from, until),
        since_text(e.since.as_ref()),
        counts_text(None, e.hosts_at_least, e.hosts_at_most)
    );
    let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
    let observed = if names.is_empty() {
        "0".to_string()
    } else {
        format!("{n} ({})", names.join(", "))
    };
    let ok = counts_hold(n, None, e.hosts_at_least, e.hosts_at_most);
    let over = e.hosts_at_most.is_some_and(|hi| n > hi);
    let mut r = row(
        ExpectKind::Attempts,
        subject(&e.profile, &e.model),
        expected,
        observed,
    );
    // The subject's own requests in the window, as the count row's witness says them.
    let subject_n = f
        .matching(e.profile.as_deref(), e.model.as_deref(), e.fault.as_deref())
        .into_iter()
        .filter(|&t| t >= from && until.is_none_or(|u| t < u))
        .count() as u64;
    r.witness = f.witness(from, until, subject_n).with("hosts", n);
    anchored(finish(r, status(ok, over, f.reached(until))), anchor.as_ref())
}

/// `[[expect.first_request]]`: the subject's first request, its time counted from the run
/// start, the run's first request (`after_first`) or its `since` anchor — with `since`, the first
/// at or after the anchor (what came before it is not "since").
pub(crate) fn first_request(e: &ExpectFirstRequest, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let (lo, hi) = (e.at_least.map(ms), e.at_most.map(ms));
    let expected = if e.never {
        "first request never".to_string()
    } else {
        match (lo, hi) {
            (Some(l), Some(h)) => {
                format!("first request in [{}, {}]", secs(l as i64), secs(h as i64))
            }
            (Some(l), None) => format!("first request at or after {}", secs(l as i64)),
            (None, Some(h)) => format!("first request by {}", secs(h as i64)),
            (None, None) => "first request at some time".to_string(),
        }
    };
    let since = if e.after_first {
        " after the first request".to_string()
    } else {
        since_text(e.since.as_ref())
    };
    let expected = format!("{expected}{since}");
    let dep = subject(&e.profile, &e.model);
    let anchor = match f.anchor(e.since.as_ref()) {
        Ok(a) => a,
        Err(why) => return unanchored(ExpectKind::FirstRequest, dep, expected, &why, f),
    };
    let origin = match &anchor {
        Some(a) => a.at_ms,
        None if e.after_first => f.times(None, None).first().copied().unwrap_or(0),
        None => 0,
    };
    let times = f.times(e.profile.as_deref(), e.model.as_deref());
    let first = times
        .iter()
        .find(|&&t| anchor.is_none() || t >= origin)
        .map(|t| t.saturating_sub(origin));
    let observed = first.map_or("none".into(), |t| secs(t as i64));
    // Whether the run was seen up to `origin + d` (scenario ms from the run start).
    let seen_until = |d: Option<u64>| f.reached(d.map(|d| origin.saturating_add(d)));
    let (ok, certain, reached) = match first {
        _ if e.never => (first.is_none(), first.is_some(), f.reached(None)),
        None => (false, false, seen_until(hi)),
        Some(t) => {
            let ok = lo.is_none_or(|l| t >= l) && hi.is_none_or(|h| t <= h);
            (ok, !ok, true)
        }
    };
    let mut r = row(ExpectKind::FirstRequest, dep, expected, observed);
    r.observed_ms = first.map(|t| t as i64);
    r.expected_ms = hi.or(lo).map(|t| t as i64);
    let subject_n = times.len() as u64;
    r.witness = f.witness(0, None, subject_n);
    if e.after_first {
        // The run's first request is this row's anchor: its witness says where it fell.
        r.witness.set("anchor_ms", origin);
    }
    anchored(finish(r, status(ok, certain, reached)), anchor.as_ref())
}

/// `[[expect.no_request]]`.
pub(crate) fn no_request(e: &ExpectNoRequest, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let expected_of = |from: u64, until: u64| {
        format!(
            "no request in [{}, {}){}",
            secs(from as i64),
            secs(until as i64),
            since_text(e.since.as_ref())
        )
    };
    let dep = subject(&e.profile, &e.model);
    let anchor = match f.anchor(e.since.as_ref()) {
        Ok(a) => a,
        Err(why) => {
            let expected = expected_of(ms(e.from), ms(e.until));
            return unanchored(ExpectKind::NoRequest, dep, expected, &why, f);
        }
    };
    let base = anchor.as_ref().map_or(0, |a| a.at_ms);
    let (from, until) = (
        base.saturating_add(ms(e.from)),
        base.saturating_add(ms(e.until)),
    );
    let inside: Vec<u64> = f
        .times(e.profile.as_deref(), e.model.as_deref())
        .into_iter()
        .filter(|&t| t >= from && t < until)
        .collect();
    let observed = match inside.first() {
        None => "none".to_string(),
        Some(&t) => format!("{} (first at {})", inside.len(), secs(t as i64)),
    };
    let mut r = row(ExpectKind::NoRequest, dep, expected_of(from, until), observed);
    r.observed_ms = inside.first().map(|&t| t as i64);
    // Silence proves something only while the system under test was sending meanwhile.
    r.witness = f.witness(from, Some(until), inside.len() as u64);
    let ok = inside.is_empty();
    anchored(
        finish(r, status(ok, !ok, f.reached(Some(until)))),
        anchor.as_ref(),
    )
}

/// The gaps between consecutive requests of a subject, per host (a fleet's `X-Rehearse-Host`;
/// records without one, a single system's, are one host `-`), scenario ms, with the host of each.
/// Per host, because a retry gap is one client's wait: merged across a fleet, every host's
/// requests interleave and one host retrying too fast (or too slow) hides among the others.
fn gaps_per_host(
    f: &UpstreamFacts<'_>,
    profile: Option<&str>,
    model: Option<&str>,
) -> (u64, Vec<(String, u64)>) {
    let mut per: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut requests = 0;
    for r in f.matching_records(profile, model, None) {
        requests += 1;
        per.entry(r.host.as_deref().unwrap_or("-"))
            .or_default()
            .push(f.speed.scenario_ms_u(r.t_ms));
    }
    let mut gaps = Vec::new();
    for (host, mut ts) in per {
        ts.sort_unstable();
        gaps.extend(
            ts.windows(2)
                .map(|w| (host.to_string(), w[1].saturating_sub(w[0]))),
        );
    }
    (requests, gaps)
}

/// `[[expect.retry_gaps]]`: every gap between consecutive requests of the subject from one
/// host (see [`gaps_per_host`]).
pub(crate) fn retry_gaps(e: &ExpectRetryGaps, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let (requests, per_host) = gaps_per_host(f, e.profile.as_deref(), e.model.as_deref());
    let tol = e.tolerance.map_or(0, ms);
    let (lo, hi) = (e.min.map(ms), e.max.map(ms));
    let expected = match (lo, hi) {
        (Some(l), Some(h)) => format!("gaps in [{}, {}]", secs(l as i64), secs(h as i64)),
        (Some(l), None) => format!("gaps >= {}", secs(l as i64)),
        (None, Some(h)) => format!("gaps <= {}", secs(h as i64)),
        (None, None) => "gaps".into(),
    } + &if tol > 0 {
        format!(" ±{}", secs(tol as i64))
    } else {
        String::new()
    };
    let short = |g: u64| lo.is_some_and(|l| g + tol < l);
    let long = |g: u64| hi.is_some_and(|h| g > h.saturating_add(tol));
    let min = per_host.iter().map(|(_, g)| *g).min();
    let max = per_host.iter().map(|(_, g)| *g).max();
    let hosts: std::collections::BTreeSet<&str> =
        per_host.iter().map(|(h, _)| h.as_str()).collect();
    let named = hosts.len() > 1 || hosts.iter().any(|h| *h != "-");
    let observed = match (min, max) {
        (Some(a), Some(b)) => {
            let over = if named {
                format!(" from {} hosts", hosts.len())
            } else {
                String::new()
            };
            let worst = per_host
                .iter()
                .filter(|(_, g)| short(*g) || long(*g))
                .min_by_key(|(_, g)| if short(*g) { *g } else { u64::MAX - *g });
            let bad = match worst {
                Some((h, g)) if named => format!(" (on {h}: {})", secs(*g as i64)),
                _ => String::new(),
            };
            format!(
                "{} gaps{over}, {}..{}{bad}",
                per_host.len(),
                secs(a as i64),
                secs(b as i64)
            )
        }
        _ => format!("{requests} requests, no gap"),
    };
    let ok = !per_host.is_empty() && !per_host.iter().any(|(_, g)| short(*g) || long(*g));
    let mut r = row(
        ExpectKind::RetryGaps,
        subject(&e.profile, &e.model),
        expected,
        observed,
    );
    r.observed_ms = min.map(|m| m as i64);
    r.expected_ms = lo.map(|l| l as i64);
    r.tolerance_ms = (tol > 0).then_some(tol as i64);
    r.witness = f
        .witness(0, None, requests)
        .with("gaps", per_host.len() as u64);
    let certain = !ok && !per_host.is_empty();
    finish(r, status(ok, certain, f.reached(None)))
}

/// `[[expect.recovered]]`: at least `requests` fault-free requests of the subject from `after`
/// on, the `requests`-th by `after + within` when given.
pub(crate) fn recovered(e: &ExpectRecovered, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let anchor = match f.anchor(e.since.as_ref()) {
        Ok(a) => a,
        Err(why) => {
            let expected = format!(
                "fault-free requests from {}{}",
                secs(ms(e.after) as i64),
                since_text(e.since.as_ref())
            );
            let dep = subject(&e.profile, &e.model);
            return unanchored(ExpectKind::Recovered, dep, expected, &why, f);
        }
    };
    let after = anchor
        .as_ref()
        .map_or(0, |a| a.at_ms)
        .saturating_add(ms(e.after));
    let n = e.requests.unwrap_or(1).max(1);
    let deadline = e.within.map(|w| after.saturating_add(ms(w)));
    let served: Vec<u64> = f
        .matching(e.profile.as_deref(), e.model.as_deref(), Some("none"))
        .into_iter()
        .filter(|&t| t >= after)
        .collect();
    let nth = usize::try_from(n - 1)
        .ok()
        .and_then(|i| served.get(i))
        .copied();
    let ok = nth.is_some_and(|t| deadline.is_none_or(|d| t <= d));
    let expected = format!(
        "≥ {n} fault-free request{} from {}{}{}",
        if n == 1 { "" } else { "s" },
        secs(after as i64),
        deadline.map_or(String::new(), |d| format!(" by {}", secs(d as i64))),
        since_text(e.since.as_ref())
    );
    let observed = match served.first() {
        None => "none".to_string(),
        Some(&t) => format!("{} (first at {})", served.len(), secs(t as i64)),
    };
    let mut r = row(
        ExpectKind::Recovered,
        subject(&e.profile, &e.model),
        expected,
        observed,
    );
    r.observed_ms = nth.map(|t| t as i64);
    r.expected_ms = deadline.map(|d| d as i64);
    r.witness = f.witness(after, deadline, served.len() as u64);
    // Failed for certain once the deadline was seen and passed without them.
    let certain = !ok && deadline.is_some_and(|d| f.reached(Some(d)));
    anchored(
        finish(r, status(ok, certain, f.reached(deadline))),
        anchor.as_ref(),
    )
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

#[cfg(test)]
mod tests;
