//! `[[expect.retry_gaps]]` and `[[expect.recovered]]`: the spacing of a subject's retries (per
//! host), and its recovery after a fault.

use super::*;

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

