//! The perturbations of the rows judged at the upstream: attempts, a first request, no request,
//! retry gaps.

use std::time::Duration;

use super::{Cx, Perturbs, count, ms, past};

/// `attempts`.
pub(super) fn attempts(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, rows, .. } = *cx;
        let a = &base.attempts[0];
        // Rows in order: the counts row (when it has counts), then the hosts row.
        let mut rows_left = rows.iter();
        if a.equals.or(a.at_least).or(a.at_most).is_some()
            && let Some(n) = rows_left.next().and_then(|r| count(&r.observed))
        {
            for (change, (eq, lo, hi)) in past(n, (a.equals, a.at_least, a.at_most)) {
                p.with(change, &mut |e| {
                    let x = &mut e.attempts[0];
                    (x.equals, x.at_least, x.at_most) = (eq, lo, hi);
                    (x.hosts_at_least, x.hosts_at_most) = (None, None);
                });
            }
        }
        if a.hosts_at_least.or(a.hosts_at_most).is_some()
            && let Some(n) = rows_left.next().and_then(|r| count(&r.observed))
        {
            for (change, (_, lo, hi)) in past(n, (None, a.hosts_at_least, a.hosts_at_most)) {
                p.with(format!("hosts {change}"), &mut |e| {
                    let x = &mut e.attempts[0];
                    (x.equals, x.at_least, x.at_most) = (None, None, None);
                    (x.hosts_at_least, x.hosts_at_most) = (lo, hi);
                });
            }
        }
}

/// `first_request`.
pub(super) fn first_request(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, b, duration, .. } = *cx;
        let f = &base.first_request[0];
        if f.never {
            p.with(format!("a first request by {}ms", duration.as_millis()), &mut |e| {
                e.first_request[0].never = false;
                e.first_request[0].at_most = Some(duration);
                e.first_request[0].at_least = None;
            });
        } else if let Some(t) = b.observed_ms {
            p.with("never".into(), &mut |e| {
                e.first_request[0].never = true;
                e.first_request[0].at_least = None;
                e.first_request[0].at_most = None;
            });
            let moved = match t.checked_sub(1) {
                Some(m) if m >= 0 => (None, Some(ms(m))),
                _ => (Some(ms(t + 1)), None),
            };
            p.with(format!("window {moved:?} (off its first request)"), &mut |e| {
                (e.first_request[0].at_least, e.first_request[0].at_most) = moved;
            });
        }
}

/// `no_request`.
pub(super) fn no_request(p: &mut Perturbs<'_>, _cx: &Cx<'_>) {
        p.with("every subject (its window held requests)".into(), &mut |e| {
            e.no_request[0].profile = None;
            e.no_request[0].model = None;
        });
}

/// `retry_gaps`.
pub(super) fn retry_gaps(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { b, .. } = *cx;
        if let Some(g) = b.observed_ms {
            let change = match u64::try_from(g).ok().and_then(|g| g.checked_sub(1)) {
                Some(m) => (None, Some(Duration::from_millis(m))),
                None => (Some(Duration::from_millis(1)), None),
            };
            p.with(format!("gaps {change:?} (past its smallest gap)"), &mut |e| {
                (e.retry_gaps[0].min, e.retry_gaps[0].max) = change;
                e.retry_gaps[0].tolerance = None;
            });
        }
}
