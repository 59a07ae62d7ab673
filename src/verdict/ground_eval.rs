//! Pure evaluators of the upstream ground-truth expectations ([`super::ground`]) over the
//! upstream's records: model requests only (canaries left out), their times in scenario ms
//! (record ms × speed). A run stopped early leaves an expectation whose window reaches past the
//! stop `not_reached`, unless it already failed for certain (a count above its bound, a request
//! where none may be).

use std::collections::BTreeMap;

use super::ground::{
    ExpectAttempts, ExpectFirstRequest, ExpectNoRequest, ExpectRetryGaps, counts_hold, counts_text,
};
use super::{ExpectKind, ExpectStatus, ExpectationResult, scenario_ms_u, secs};
use crate::upstream::UpstreamRecord;

/// What the evaluators look at.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamFacts<'a> {
    /// Every upstream record of the run.
    pub records: &'a [UpstreamRecord],
    /// Profile id → fingerprint of its token (as upstream records name tokens).
    pub profile_fps: &'a BTreeMap<String, String>,
    /// The `--speed` divisor the records' times are at.
    pub speed: f64,
    /// Scenario ms the run observed (the end of open windows).
    pub end_ms: u64,
    /// Scenario ms of an early stop.
    pub stopped_at_ms: Option<u64>,
}

fn bare(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

impl UpstreamFacts<'_> {
    /// Scenario-ms times of the model requests of a subject, in order.
    pub fn times(&self, profile: Option<&str>, model: Option<&str>) -> Vec<u64> {
        self.matching(profile, model, None)
    }

    fn matching(
        &self,
        profile: Option<&str>,
        model: Option<&str>,
        fault: Option<&str>,
    ) -> Vec<u64> {
        let fp = profile.map(|p| self.profile_fps.get(p).map(String::as_str));
        let mut out: Vec<u64> = self
            .records
            .iter()
            .filter(|r| r.route == "llm" && !r.canary)
            .filter(|r| match fp {
                None => true,
                Some(None) => false,
                Some(Some(fp)) => r.profile_fp.as_deref() == Some(fp),
            })
            .filter(|r| {
                model.is_none_or(|m| r.model.as_deref().is_some_and(|rm| bare(rm) == bare(m)))
            })
            .filter(|r| match fault {
                None => true,
                Some("none") => r.fault.is_none(),
                Some(k) => r.fault.as_deref() == Some(k),
            })
            .map(|r| scenario_ms_u(r.t_ms, self.speed))
            .collect();
        out.sort_unstable();
        out
    }

    /// Whether a window ending at `until` (scenario ms; `None` = end of run) was fully seen.
    fn reached(&self, until: Option<u64>) -> bool {
        match self.stopped_at_ms {
            None => true,
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
    ExpectationResult {
        kind,
        dep: Some(dep),
        series: None,
        expected,
        observed,
        expected_ms: None,
        observed_ms: None,
        delta_ms: None,
        tolerance_ms: None,
        ok: false,
        status: ExpectStatus::Fail,
        detail: String::new(),
    }
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

/// `[[expect.attempts]]`.
pub fn attempts(e: &ExpectAttempts, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let from = e.from.map_or(0, ms);
    let until = e.until.map(ms);
    let n = f
        .matching(e.profile.as_deref(), e.model.as_deref(), e.fault.as_deref())
        .into_iter()
        .filter(|&t| t >= from && until.is_none_or(|u| t < u))
        .count() as u64;
    let window = match (e.from, e.until) {
        (None, None) => String::new(),
        _ => format!(
            " in [{}, {})",
            secs(from as i64),
            until.map_or("end".into(), |u| secs(u as i64))
        ),
    };
    let fault = e
        .fault
        .as_ref()
        .map(|k| format!(" with fault {k}"))
        .unwrap_or_default();
    let expected = format!(
        "attempts{fault}{window} {}",
        counts_text(e.equals, e.at_least, e.at_most)
    );
    let ok = counts_hold(n, e.equals, e.at_least, e.at_most);
    let over = e.equals.or(e.at_most).is_some_and(|hi| n > hi);
    let r = row(
        ExpectKind::Attempts,
        subject(&e.profile, &e.model),
        expected,
        n.to_string(),
    );
    finish(r, status(ok, over, f.reached(until)))
}

/// `[[expect.first_request]]`.
pub fn first_request(e: &ExpectFirstRequest, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let origin = if e.after_first {
        f.times(None, None).first().copied().unwrap_or(0)
    } else {
        0
    };
    let first = f
        .times(e.profile.as_deref(), e.model.as_deref())
        .first()
        .map(|t| t.saturating_sub(origin));
    let since = if e.after_first {
        " after the first request"
    } else {
        ""
    };
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
    let expected = format!("{expected}{since}");
    let observed = first.map_or("none".into(), |t| secs(t as i64));
    let (ok, certain, reached) = match first {
        _ if e.never => (first.is_none(), first.is_some(), f.reached(None)),
        None => (false, false, f.reached(hi)),
        Some(t) => {
            let ok = lo.is_none_or(|l| t >= l) && hi.is_none_or(|h| t <= h);
            (ok, !ok, true)
        }
    };
    let mut r = row(
        ExpectKind::FirstRequest,
        subject(&e.profile, &e.model),
        expected,
        observed,
    );
    r.observed_ms = first.map(|t| t as i64);
    r.expected_ms = hi.or(lo).map(|t| t as i64);
    finish(r, status(ok, certain, reached))
}

/// `[[expect.no_request]]`.
pub fn no_request(e: &ExpectNoRequest, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let (from, until) = (ms(e.from), ms(e.until));
    let inside: Vec<u64> = f
        .times(e.profile.as_deref(), e.model.as_deref())
        .into_iter()
        .filter(|&t| t >= from && t < until)
        .collect();
    let expected = format!(
        "no request in [{}, {})",
        secs(from as i64),
        secs(until as i64)
    );
    let observed = match inside.first() {
        None => "none".to_string(),
        Some(&t) => format!("{} (first at {})", inside.len(), secs(t as i64)),
    };
    let mut r = row(
        ExpectKind::NoRequest,
        subject(&e.profile, &e.model),
        expected,
        observed,
    );
    r.observed_ms = inside.first().map(|&t| t as i64);
    let ok = inside.is_empty();
    finish(r, status(ok, !ok, f.reached(Some(until))))
}

/// `[[expect.retry_gaps]]`: every gap between consecutive requests of the subject.
pub fn retry_gaps(e: &ExpectRetryGaps, f: &UpstreamFacts<'_>) -> ExpectationResult {
    let times = f.times(e.profile.as_deref(), e.model.as_deref());
    let gaps: Vec<u64> = times
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect();
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
    let (min, max) = (gaps.iter().min().copied(), gaps.iter().max().copied());
    let observed = match (min, max) {
        (Some(a), Some(b)) => format!(
            "{} gaps, {}..{}",
            gaps.len(),
            secs(a as i64),
            secs(b as i64)
        ),
        _ => format!("{} requests, no gap", times.len()),
    };
    let ok = !gaps.is_empty()
        && lo.is_none_or(|l| min.is_some_and(|m| m + tol >= l))
        && hi.is_none_or(|h| max.is_some_and(|m| m <= h.saturating_add(tol)));
    let mut r = row(
        ExpectKind::RetryGaps,
        subject(&e.profile, &e.model),
        expected,
        observed,
    );
    r.observed_ms = min.map(|m| m as i64);
    r.expected_ms = lo.map(|l| l as i64);
    r.tolerance_ms = (tol > 0).then_some(tol as i64);
    let certain = !ok && !gaps.is_empty();
    finish(r, status(ok, certain, f.reached(None)))
}

/// Every ground-truth expectation of `e` (already filtered to the run), in table order.
pub fn evaluate(e: &crate::verdict::Expectations, f: &UpstreamFacts<'_>) -> Vec<ExpectationResult> {
    let mut out: Vec<ExpectationResult> = e.attempts.iter().map(|x| attempts(x, f)).collect();
    out.extend(e.first_request.iter().map(|x| first_request(x, f)));
    out.extend(e.no_request.iter().map(|x| no_request(x, f)));
    out.extend(e.retry_gaps.iter().map(|x| retry_gaps(x, f)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn rec(t_ms: u64, fp: &str, model: &str, fault: Option<&str>) -> UpstreamRecord {
        UpstreamRecord {
            t_ms,
            wall_ms: 0,
            route: "llm".into(),
            dep: format!("mockai/default/{fp}"),
            model: Some(model.into()),
            profile_fp: Some(fp.into()),
            probe: false,
            canary: false,
            fault: fault.map(str::to_string),
            fault_index: None,
            idempotency_key: None,
            duplicate: false,
        }
    }

    fn fps() -> BTreeMap<String, String> {
        [
            ("mockai:a", "fpa"),
            ("mockai:b", "fpb"),
            ("fallback:f", "fpf"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
    }

    /// Key-A gets five stalls 1 s apart and more, key-B answers at 20 s, fallback is never used.
    fn records() -> Vec<UpstreamRecord> {
        let mut v: Vec<UpstreamRecord> = (0..5)
            .map(|i| rec(1000 + i * 1000, "fpa", "m1", Some("stall")))
            .collect();
        v.push(rec(20_000, "fpb", "m1", None));
        let mut canary = rec(2500, "fpa", "m1", None);
        canary.canary = true;
        v.push(canary);
        v
    }

    fn facts<'a>(r: &'a [UpstreamRecord], fps: &'a BTreeMap<String, String>) -> UpstreamFacts<'a> {
        UpstreamFacts {
            records: r,
            profile_fps: fps,
            speed: 1.0,
            end_ms: 30_000,
            stopped_at_ms: None,
        }
    }

    fn secs_d(s: u64) -> Option<Duration> {
        Some(Duration::from_secs(s))
    }

    #[test]
    fn attempts_count_a_profiles_requests_in_a_window_without_canaries() {
        let (r, fps) = (records(), fps());
        let f = facts(&r, &fps);
        let e = ExpectAttempts {
            profile: Some("mockai:a".into()),
            equals: Some(5),
            ..Default::default()
        };
        assert_eq!(attempts(&e, &f).status, ExpectStatus::Pass);
        let wrong = ExpectAttempts {
            equals: Some(4),
            ..e.clone()
        };
        let got = attempts(&wrong, &f);
        assert_eq!(got.status, ExpectStatus::Fail);
        assert!(got.detail.contains("observed 5"), "{}", got.detail);
        let windowed = ExpectAttempts {
            from: secs_d(3),
            until: secs_d(5),
            equals: Some(2),
            ..e.clone()
        };
        assert!(attempts(&windowed, &f).ok);
        let clean = ExpectAttempts {
            fault: Some("none".into()),
            equals: Some(0),
            ..e
        };
        assert!(attempts(&clean, &f).ok);
        let by_model = ExpectAttempts {
            model: Some("mockai/m1".into()),
            equals: Some(6),
            ..Default::default()
        };
        assert!(attempts(&by_model, &f).ok);
    }

    #[test]
    fn first_request_times_a_rotation_and_never_fails_when_one_came() {
        let (r, fps) = (records(), fps());
        let f = facts(&r, &fps);
        let b = ExpectFirstRequest {
            profile: Some("mockai:b".into()),
            at_most: secs_d(25),
            ..Default::default()
        };
        let got = first_request(&b, &f);
        assert!(got.ok, "{got:?}");
        assert_eq!(got.observed_ms, Some(20_000));
        let late = ExpectFirstRequest {
            at_most: secs_d(10),
            ..b.clone()
        };
        assert_eq!(first_request(&late, &f).status, ExpectStatus::Fail);
        let never_b = ExpectFirstRequest {
            never: true,
            ..b.clone()
        };
        assert_eq!(first_request(&never_b, &f).status, ExpectStatus::Fail);
        let after = ExpectFirstRequest {
            at_most: secs_d(19),
            after_first: true,
            ..b.clone()
        };
        let got = first_request(&after, &f);
        assert!(
            got.ok && got.observed_ms == Some(19_000),
            "20 s − the first at 1 s: {got:?}"
        );
        let too_soon = ExpectFirstRequest {
            at_most: secs_d(18),
            ..after
        };
        assert!(!first_request(&too_soon, &f).ok);
        let never_f = ExpectFirstRequest {
            profile: Some("fallback:f".into()),
            never: true,
            ..Default::default()
        };
        assert!(first_request(&never_f, &f).ok);
    }

    #[test]
    fn no_request_fails_on_one_inside_the_span() {
        let (r, fps) = (records(), fps());
        let f = facts(&r, &fps);
        let quiet = ExpectNoRequest {
            profile: Some("mockai:a".into()),
            from: Duration::from_secs(6),
            until: Duration::from_secs(30),
            policy: None,
            model: None,
        };
        assert!(no_request(&quiet, &f).ok);
        let busy = ExpectNoRequest {
            from: Duration::from_secs(4),
            ..quiet
        };
        let got = no_request(&busy, &f);
        assert_eq!(got.status, ExpectStatus::Fail);
        assert!(got.observed.contains("first at 4.000s"), "{}", got.observed);
    }

    #[test]
    fn retry_gaps_hold_every_gap_to_the_bounds() {
        let (r, fps) = (records(), fps());
        let f = facts(&r, &fps);
        let e = ExpectRetryGaps {
            profile: Some("mockai:a".into()),
            min: secs_d(1),
            max: secs_d(1),
            ..Default::default()
        };
        assert!(retry_gaps(&e, &f).ok);
        let wide = ExpectRetryGaps {
            min: secs_d(2),
            ..e.clone()
        };
        assert_eq!(retry_gaps(&wide, &f).status, ExpectStatus::Fail);
        let tol = ExpectRetryGaps {
            tolerance: Some(Duration::from_millis(1000)),
            ..wide
        };
        assert!(retry_gaps(&tol, &f).ok);
        let one = ExpectRetryGaps {
            profile: Some("mockai:b".into()),
            ..e
        };
        assert!(!retry_gaps(&one, &f).ok, "one request has no gap to judge");
    }

    #[test]
    fn a_stop_leaves_open_windows_not_reached_but_keeps_certain_failures() {
        let (r, fps) = (records(), fps());
        let mut f = facts(&r, &fps);
        f.stopped_at_ms = Some(10_000);
        let e = ExpectAttempts {
            profile: Some("mockai:b".into()),
            at_least: Some(1),
            ..Default::default()
        };
        assert_eq!(attempts(&e, &f).status, ExpectStatus::NotReached);
        let over = ExpectAttempts {
            profile: Some("mockai:a".into()),
            at_most: Some(2),
            ..Default::default()
        };
        assert_eq!(attempts(&over, &f).status, ExpectStatus::Fail);
        let speedy = UpstreamFacts {
            speed: 2.0,
            stopped_at_ms: None,
            ..f
        };
        let b = ExpectFirstRequest {
            profile: Some("mockai:b".into()),
            at_least: secs_d(39),
            ..Default::default()
        };
        assert!(
            first_request(&b, &speedy).ok,
            "record ms × speed is scenario time"
        );
    }
}
