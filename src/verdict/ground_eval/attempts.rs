//! `[[expect.attempts]]`: requests of a subject in a window, counted, and the hosts that sent them.

use super::*;

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

