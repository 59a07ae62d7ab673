//! The perturbations of a gateway's own rows: its logged decisions, its auth state's cooldown,
//! its turns' outcomes and latency.

use super::{Cx, Perturbs, count, ms, past};

/// `gateway_decision`.
pub(super) fn gateway_decision(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, b, .. } = *cx;
        let d = &base.openclaw_decision[0];
        if let Some(n) = count(&b.observed) {
            for (change, (eq, lo, hi)) in past(n, (d.equals, d.at_least, d.at_most)) {
                p.with(change, &mut |e| {
                    let x = &mut e.openclaw_decision[0];
                    (x.equals, x.at_least, x.at_most) = (eq, lo, hi);
                });
            }
        }
}

/// `gateway_cooldown`.
pub(super) fn gateway_cooldown(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, .. } = *cx;
        let c = &base.openclaw_cooldown[0];
        if c.none {
            p.with("a cooldown".into(), &mut |e| {
                e.openclaw_cooldown[0].none = false;
            });
        } else {
            p.with("none".into(), &mut |e| {
                e.openclaw_cooldown[0].none = true;
                e.openclaw_cooldown[0].cooldown = None;
                e.openclaw_cooldown[0].reason = None;
            });
        }
}

/// `turn`.
pub(super) fn turn(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, rows, .. } = *cx;
        let t = &base.turn[0];
        let mut rows_left = rows.iter();
        if t.counts()
            && let Some(n) = rows_left.next().and_then(|r| count(&r.observed))
        {
            for (change, (eq, lo, hi)) in past(n, (t.equals, t.at_least, t.at_most)) {
                p.with(change, &mut |e| {
                    let x = &mut e.turn[0];
                    (x.equals, x.at_least, x.at_most) = (eq, lo, hi);
                    (x.latency_at_least, x.latency_at_most) = (None, None);
                });
            }
        }
        if t.latency()
            && let Some(slowest) = rows_left.next().and_then(|r| r.observed_ms)
            && slowest > 0
        {
            p.with(format!("latency_at_most {}ms", slowest - 1), &mut |e| {
                let x = &mut e.turn[0];
                (x.equals, x.at_least, x.at_most) = (None, None, None);
                (x.latency_at_least, x.latency_at_most) = (None, Some(ms(slowest - 1)));
            });
        }
}
