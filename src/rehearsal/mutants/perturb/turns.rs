//! The perturbations of the per-turn rows read from the upstream's record: a cooldown, a
//! condition on each turn.

use std::time::Duration;

use super::{Cx, NO_SUCH_DEP, Perturbs, count, ms, past};

/// `cooldown`.
pub(super) fn cooldown(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, b, .. } = *cx;
        let c = &base.cooldown[0];
        if c.never {
            p.with("a cooldown (never = false)".into(), &mut |e| {
                e.cooldown[0].never = false;
            });
        } else {
            p.with("never".into(), &mut |e| {
                let x = &mut e.cooldown[0];
                *x = crate::verdict::cooldown::ExpectCooldown {
                    never: true,
                    ..crate::verdict::cooldown::ExpectCooldown {
                        profile: x.profile.clone(),
                        model: x.model.clone(),
                        since: x.since.clone(),
                        policy: x.policy.clone(),
                        ..Default::default()
                    }
                };
            });
            let n = b.witness.get("cooldowns");
            p.with(format!("count_at_least {}", n + 1), &mut |e| {
                let x = &mut e.cooldown[0];
                (x.count, x.count_at_least, x.count_at_most) = (None, Some(n + 1), None);
            });
            if c.bounds_length()
                && let Some(longest) = b.observed_ms
            {
                let lo = ms(longest) + Duration::from_secs(1);
                p.with(format!("at_least {}ms (its longest + 1s)", lo.as_millis()), &mut |e| {
                    let x = &mut e.cooldown[0];
                    (x.cooled, x.tolerance, x.at_most) = (None, None, None);
                    x.until_retry_after = false;
                    x.at_least = Some(lo);
                });
            }
        }
}

/// `per_turn`.
pub(super) fn per_turn(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, b, .. } = *cx;
        let t = &base.per_turn[0];
        let judged = b.witness.get("turns_judged");
        p.with(format!("turns_at_least {} (more than it judged)", judged + 1), &mut |e| {
            let x = &mut e.per_turn[0];
            (x.turns_at_least, x.turns_at_most) = (Some(judged + 1), None);
        });
        if t.counts()
            && let Some(n) = count(&b.observed)
        {
            for (change, (_, lo, hi)) in past(n, (None, t.turns_at_least, t.turns_at_most)) {
                p.with(format!("turns {change}"), &mut |e| {
                    let x = &mut e.per_turn[0];
                    (x.turns_at_least, x.turns_at_most) = (lo, hi);
                });
            }
        }
        let most = b.witness.get("most_requests");
        if t.requests_at_most.is_some() && most > 0 {
            p.with(format!("requests_at_most {} (below its most)", most - 1), &mut |e| {
                let x = &mut e.per_turn[0];
                x.requests_at_most = Some(most - 1);
                x.requests_at_least = None;
                (x.turns_at_least, x.turns_at_most) = (None, None);
            });
        }
        let retries = b.witness.get("most_same_profile_retries");
        if t.same_profile_retries_at_most.is_some() && retries > 0 {
            p.with(format!("same_profile_retries_at_most {}", retries - 1), &mut |e| {
                let x = &mut e.per_turn[0];
                x.same_profile_retries_at_most = Some(retries - 1);
                (x.turns_at_least, x.turns_at_most) = (None, None);
            });
        }
        if t.answered_by_model.is_some() {
            p.with(format!("answered_by_model {NO_SUCH_DEP}"), &mut |e| {
                e.per_turn[0].answered_by_model = Some(NO_SUCH_DEP.into());
                e.per_turn[0].turns_at_most = None;
            });
        }
        if t.answered_by_profile.is_some() {
            p.with(format!("answered_by_profile {NO_SUCH_DEP}"), &mut |e| {
                e.per_turn[0].answered_by_profile = Some(NO_SUCH_DEP.into());
                e.per_turn[0].turns_at_most = None;
            });
        }
        if t.answer_within.is_some()
            && let Some(slowest) = b.observed_ms.filter(|s| *s > 0)
        {
            p.with(format!("answer_within {}ms (below its slowest)", slowest - 1), &mut |e| {
                let x = &mut e.per_turn[0];
                x.answer_within = Some(ms(slowest - 1));
                (x.turns_at_least, x.turns_at_most) = (None, None);
            });
        }
}
