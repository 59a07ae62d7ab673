//! The perturbations of the rows judged on the engine's or a gateway's timeline and its alerts:
//! a transition, a metric, no transition, probe spacing, recovery, a dashboard, an alert.

use std::time::Duration;

use super::{Cx, NO_SUCH_DEP, Perturbs, count, ms};

/// `transition`.
pub(super) fn transition(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, b, .. } = *cx;
        // Its own entry among its dep-mates.
        let idx = cx.nth;
        if idx >= base.transition.len() {
            return;
        }
        if let Some(t) = b.observed_ms {
            let tol = base.transition[idx]
                .tolerance
                .unwrap_or(crate::verdict::expect::DEFAULT_TOLERANCE);
            let moved = ms(t) + tol + Duration::from_secs(1);
            p.with(
                format!("at {}ms (off its event by its tolerance + 1s)", moved.as_millis()),
                &mut |e| {
                    e.transition[idx].at = Some(moved);
                    e.transition[idx].after = None;
                },
            );
        }
        p.with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
            e.transition[idx].dep = NO_SUCH_DEP.into();
        });
}

/// `metric`.
pub(super) fn metric(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, b, .. } = *cx;
        let v: f64 = b.observed.trim().parse().unwrap_or(f64::NAN);
        if v.is_finite() {
            let m = &base.metric[0];
            if m.equals.is_some() {
                p.with(format!("equals {}", v + 1.0), &mut |e| {
                    e.metric[0].equals = Some(v + 1.0);
                    e.metric[0].at_least = None;
                    e.metric[0].at_most = None;
                });
            }
            if m.at_least.is_some() {
                p.with(format!("at_least {}", v + 1.0), &mut |e| {
                    e.metric[0].at_least = Some(v + 1.0);
                    e.metric[0].equals = None;
                    e.metric[0].at_most = None;
                });
            }
            if m.at_most.is_some() {
                p.with(format!("at_most {}", v - 1.0), &mut |e| {
                    e.metric[0].at_most = Some(v - 1.0);
                    e.metric[0].equals = None;
                    e.metric[0].at_least = None;
                });
            }
        }
}

/// `no_transition`.
pub(super) fn no_transition(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, o, .. } = *cx;
        let moved = o.engine.as_ref().and_then(|e| {
            e.transitions
                .iter()
                .map(|t| t.dep.clone())
                .find(|d| *d != base.no_transition[0].dep)
        });
        match moved {
            Some(dep) => p.with(format!("dep {dep} (it transitioned)"), &mut |e| {
                e.no_transition[0].dep = dep.clone();
            }),
            None => p.with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
                e.no_transition[0].dep = NO_SUCH_DEP.into();
            }),
        }
}

/// `probe_spacing`.
pub(super) fn probe_spacing(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { b, .. } = *cx;
        if let Some(g) = b.observed_ms {
            let min = ms(g) + Duration::from_secs(1);
            p.with(format!("min {}ms (its smallest gap + 1s)", min.as_millis()), &mut |e| {
                e.probe_spacing[0].min = min;
                e.probe_spacing[0].tolerance = None;
            });
        }
        p.with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
            e.probe_spacing[0].dep = NO_SUCH_DEP.into();
        });
}

/// `recovered`.
pub(super) fn recovered(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { b, .. } = *cx;
        if let Some(n) = count(&b.observed) {
            p.with(format!("requests {}", n + 1), &mut |e| {
                e.recovered[0].requests = Some(n + 1);
                e.recovered[0].within = None;
            });
        }
}

/// `dashboard`.
pub(super) fn dashboard(p: &mut Perturbs<'_>, _cx: &Cx<'_>) {
        p.with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
            e.dashboard[0].dep = Some(NO_SUCH_DEP.into());
        });
}

/// `alert`.
pub(super) fn alert(p: &mut Perturbs<'_>, cx: &Cx<'_>) {
    let Cx { base, duration, .. } = *cx;
        let a = &base.alert[0];
        if a.never {
            p.with(format!("fires within {}ms", duration.as_millis()), &mut |e| {
                let x = &mut e.alert[0];
                x.never = false;
                x.fires_within = Some(duration);
                x.resolves_within = None;
                x.notified_within = None;
            });
        } else {
            p.with("never".into(), &mut |e| {
                let x = &mut e.alert[0];
                x.never = true;
                x.fires_within = None;
                x.resolves_within = None;
                x.notified_within = None;
                x.fault = None;
                x.after = None;
            });
        }
}
