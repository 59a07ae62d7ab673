//! `[[expect.first_request]]` and `[[expect.no_request]]`: when a subject was first asked, and a
//! window where it must not be.

use super::*;

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

