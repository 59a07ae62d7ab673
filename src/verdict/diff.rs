//! `diff`: expectations against what a run observed. Pure; all times in ms since the run start.
//!
//! Transitions: per dep, expected transitions are matched in order against that dep's observed
//! transitions (a subsequence match; the first candidate within tolerance wins, else the first
//! candidate). `at` counts from the run start; `after` from the observed time of the previous
//! matched transition of that dep (its expected time if it was missing; the run start for the
//! first). Observed transitions of such a dep that no expectation matched are `unexpected`.
//! The comparison runs on wall-clock times: every expected time and tolerance is divided by
//! `speed`, tolerances never drop below 20 ms of wall clock. What a result says (strings,
//! `expected_ms`, `observed_ms`, `delta_ms`, `tolerance_ms`) is scenario time (× speed).
//! A run stopped early ([`diff_until`]) marks what it never reached `not_reached` (see
//! [`super::reach`]). An `at` with `since` counts from a fault's start or end
//! ([`super::anchor`], resolved against the run's fault applications: [`diff_anchored`]); one
//! whose fault never applied fails (`not_reached` in a run cut short) and still takes its place
//! in the dep's order, the next `after` counting from the transition it matched.

use super::anchor::{Anchored, FaultsSeen, Unanchored, since_text, unanchored_row};
use super::expect::{DEFAULT_TOLERANCE, ExpectMetric, ExpectTransition, Expectations};
use super::probe_spacing::{self, ProbeArrival};
use super::reach::{Decided, settle};
use super::{ExpectKind, ExpectStatus, ExpectationResult, secs, signed_secs};
use crate::engine::families::{SampleTime, TimeBase, sample_time};
use crate::scrape::{Exposition, Transition};
use crate::util::speed::{Speed, nominal_ms};

/// Checks `expect` (already filtered to one policy run, see `Expectations::for_policy`) against
/// the observed `transitions` (time-ordered), the `final_scrape` and the upstream's `arrivals`
/// of a run that reached its `duration`.
pub fn diff(
    expect: &Expectations,
    transitions: &[Transition],
    final_scrape: Option<&Exposition>,
    arrivals: &[ProbeArrival],
    speed: Speed,
) -> Vec<ExpectationResult> {
    diff_until(expect, transitions, final_scrape, arrivals, speed, None)
}

/// [`diff`] of a run stopped at `stop_ms` (run ms; `None` = it reached `duration`): every result's
/// status follows [`reach::status`] — what the stop came before is `not_reached`.
pub fn diff_until(
    expect: &Expectations,
    transitions: &[Transition],
    final_scrape: Option<&Exposition>,
    arrivals: &[ProbeArrival],
    speed: Speed,
    stop_ms: Option<u64>,
) -> Vec<ExpectationResult> {
    let none = FaultsSeen::none();
    diff_anchored(expect, transitions, final_scrape, arrivals, speed, stop_ms, &none)
}

/// [`diff_until`] with the run's faults and their applications, which an `at` with `since`
/// counts from (without them every such row is unanchored: never anchored at 0).
pub(crate) fn diff_anchored(
    expect: &Expectations,
    transitions: &[Transition],
    final_scrape: Option<&Exposition>,
    arrivals: &[ProbeArrival],
    speed: Speed,
    stop_ms: Option<u64>,
    faults: &FaultsSeen<'_>,
) -> Vec<ExpectationResult> {
    let mut out = Vec::new();
    let mut deps: Vec<&str> = Vec::new();
    for e in &expect.transition {
        if !deps.contains(&e.dep.as_str()) {
            deps.push(&e.dep);
        }
    }
    for dep in deps {
        let exp: Vec<&ExpectTransition> =
            expect.transition.iter().filter(|e| e.dep == dep).collect();
        let obs: Vec<&Transition> = transitions.iter().filter(|t| t.dep == dep).collect();
        out.extend(diff_dep(dep, &exp, &obs, speed, stop_ms, faults));
    }
    for m in &expect.metric {
        let mut r = diff_metric(m, final_scrape, speed);
        settle(
            &mut r,
            &m.series.to_string(),
            Decided::EndOfRun,
            (stop_ms, speed),
        );
        out.push(r);
    }
    for n in &expect.no_transition {
        let seen: Vec<&Transition> = transitions.iter().filter(|t| t.dep == n.dep).collect();
        let observed = match seen.first() {
            None => "none".to_string(),
            Some(t) => format!(
                "{} (first {} at {})",
                seen.len(),
                arrow(t),
                secs(speed.scenario_ms(t.t_ms as i64))
            ),
        };
        let detail = format!("{} expected no transition, observed {observed}", n.dep);
        let mut r = ExpectationResult {
            witness: Default::default(),
            kind: ExpectKind::NoTransition,
            dep: Some(n.dep.clone()),
            series: None,
            expected: "no transition".into(),
            observed,
            delta_ms: None,
            expected_ms: None,
            observed_ms: seen.first().map(|t| speed.scenario_ms(t.t_ms as i64)),
            tolerance_ms: None,
            ok: seen.is_empty(),
            status: ExpectStatus::from_ok(seen.is_empty()),
            detail,
        };
        // A transition seen is a failure for good; none seen yet vouches for nothing.
        let decided = if r.ok {
            Decided::EndOfRun
        } else {
            Decided::Now
        };
        settle(&mut r, &n.dep, decided, (stop_ms, speed));
        out.push(r);
    }
    for p in &expect.probe_spacing {
        let mut r = probe_spacing::check(p, arrivals, speed);
        // Two probes too close is a failure for good; a measured gap (or no probe) so far is not.
        let too_close = !r.ok && r.delta_ms.is_some();
        let decided = if too_close {
            Decided::Now
        } else {
            Decided::EndOfRun
        };
        settle(&mut r, &p.dep, decided, (stop_ms, speed));
        out.push(r);
    }
    out
}

fn arrow(t: &Transition) -> String {
    format!("{}→{}", t.from.as_str(), t.to.as_str())
}

/// An `at` counted from `base` (scenario ms since the run start: 0, or a `since` anchor):
/// the due time in wall-clock ms (the check) and scenario ms (what is said).
fn due_at(base: u64, at: std::time::Duration, speed: Speed) -> (i64, i64) {
    let scenario = std::time::Duration::from_millis(base).saturating_add(at);
    (speed.scale_ms(scenario), nominal_ms(scenario))
}

fn diff_dep(
    dep: &str,
    exp: &[&ExpectTransition],
    obs: &[&Transition],
    speed: Speed,
    stop_ms: Option<u64>,
    faults: &FaultsSeen<'_>,
) -> Vec<ExpectationResult> {
    let mut out = Vec::new();
    let mut used = vec![false; obs.len()];
    let mut cursor = 0;
    // The previous matched transition, wall clock (the check) and scenario time (what is said).
    let mut anchor: Option<(i64, i64)> = Some((0, 0));
    for e in exp {
        let tol_d = e.tolerance.unwrap_or(DEFAULT_TOLERANCE);
        let tol = speed.scaled_tolerance(tol_d);
        let tol_s = speed.shown_tolerance(tol_d);
        let want = format!("{}→{}", e.from.as_str(), e.to.as_str());
        // Its `since` resolved: `Err` when its fault never applied (the row fails below).
        let since = faults.anchor(e.since.as_ref());
        let from_fault = since_text(e.since.as_ref());
        let (exp_t, expected) = match (e.at, e.after) {
            (Some(at), _) => match &since {
                Ok(base) => {
                    let t = due_at(base.as_ref().map_or(0, |a| a.at_ms), at, speed);
                    let shown = match base {
                        Some(_) => format!(" ({}{from_fault})", secs(nominal_ms(at))),
                        None => String::new(),
                    };
                    (
                        Some(t),
                        format!("{want} at {}{shown} ±{}", secs(t.1), secs(tol_s)),
                    )
                }
                Err(_) => (
                    None,
                    format!("{want} at {}{from_fault} ±{}", secs(nominal_ms(at)), secs(tol_s)),
                ),
            },
            (None, Some(after)) => {
                let t = anchor.map(|a| {
                    (
                        a.0.saturating_add(speed.scale_ms(after)),
                        a.1.saturating_add(nominal_ms(after)),
                    )
                });
                let shown = t.map_or("?".into(), |t| secs(t.1));
                let a = secs(nominal_ms(after));
                (
                    t,
                    format!(
                        "{want} at {shown} ({a} after the previous) ±{}",
                        secs(tol_s)
                    ),
                )
            }
            (None, None) => (None, format!("{want} (any time)")),
        };
        let candidates: Vec<usize> = (cursor..obs.len())
            .filter(|&i| obs[i].from == e.from && obs[i].to == e.to)
            .collect();
        let within = |i: &&usize| exp_t.is_none_or(|x| (obs[**i].t_ms as i64 - x.0).abs() <= tol);
        let pick = candidates
            .iter()
            .find(within)
            .or(candidates.first())
            .copied();
        let (expected_ms, tolerance_ms) = (exp_t.map(|t| t.1), exp_t.map(|_| tol_s));
        match pick {
            Some(i) => {
                used[i] = true;
                cursor = i + 1;
                let t = obs[i].t_ms as i64;
                let t_s = speed.scenario_ms(t);
                let ok = exp_t.is_none_or(|x| (t - x.0).abs() <= tol);
                let delta = exp_t.map(|x| t_s - x.1);
                let how = match delta {
                    Some(d) if ok => format!(" ({}, within tolerance)", signed_secs(d)),
                    Some(d) => format!(" ({}, outside tolerance)", signed_secs(d)),
                    None => String::new(),
                };
                let mut r = ExpectationResult {
                    witness: super::Witness::of(&[("transitions_matched", 1)]),
                    kind: ExpectKind::Transition,
                    dep: Some(dep.to_string()),
                    series: None,
                    detail: format!("{dep} {expected}, observed at {}{how}", secs(t_s)),
                    expected,
                    observed: secs(t_s),
                    delta_ms: delta,
                    expected_ms,
                    observed_ms: Some(t_s),
                    tolerance_ms,
                    ok,
                    status: ExpectStatus::from_ok(ok),
                };
                settle(&mut r, dep, due(exp_t.map(|x| x.0), tol), (stop_ms, speed));
                out.push(timed(r, e, &since, exp_t.is_some(), stop_ms.is_some()));
                anchor = Some((t, t_s));
            }
            None => {
                let mut r = ExpectationResult {
                    witness: Default::default(),
                    kind: ExpectKind::Transition,
                    dep: Some(dep.to_string()),
                    series: None,
                    detail: format!("{dep} {expected}, missing (no {want} observed in order)"),
                    expected,
                    observed: "missing".into(),
                    delta_ms: None,
                    expected_ms,
                    observed_ms: None,
                    tolerance_ms,
                    ok: false,
                    status: ExpectStatus::Fail,
                };
                settle(&mut r, dep, due(exp_t.map(|x| x.0), tol), (stop_ms, speed));
                out.push(timed(r, e, &since, exp_t.is_some(), stop_ms.is_some()));
                anchor = exp_t;
            }
        }
    }
    for (t, _) in obs.iter().zip(&used).filter(|(_, u)| !**u) {
        let t_s = speed.scenario_ms(t.t_ms as i64);
        let at = secs(t_s);
        out.push(ExpectationResult {
            witness: Default::default(),
            kind: ExpectKind::Transition,
            dep: Some(dep.to_string()),
            series: None,
            expected: super::UNEXPECTED.into(),
            observed: format!("{} at {at}", arrow(t)),
            delta_ms: None,
            expected_ms: None,
            observed_ms: Some(t_s),
            tolerance_ms: None,
            ok: false,
            status: ExpectStatus::Fail,
            detail: format!(
                "{dep} {} unexpected at {at} (not in the expected sequence)",
                arrow(t)
            ),
        });
    }
    out
}

/// A transition row as its time base leaves it: an anchored `at` says its anchor
/// ([`Anchored::mark`]); one whose fault never applied is never a pass
/// ([`unanchored_row`]); an `after` whose previous transition has no time (it was missing and
/// expected at any time, or unanchored) has nothing to count from and fails the same way. `cut`:
/// the run was stopped early.
fn timed(
    mut r: ExpectationResult,
    e: &ExpectTransition,
    since: &Result<Option<Anchored>, Unanchored>,
    has_due: bool,
    cut: bool,
) -> ExpectationResult {
    let dep = r.dep.clone().unwrap_or_default();
    match since {
        Ok(Some(a)) => a.mark(&mut r),
        Err(why) => unanchored_row(&mut r, &dep, why, cut),
        Ok(None) if e.at.is_none() && e.after.is_some() && !has_due => {
            let why = Unanchored(
                "its previous expected transition has no time to count from (missing, and \
                 expected at any time or at a fault that never applied)"
                    .into(),
            );
            unanchored_row(&mut r, &dep, &why, cut);
        }
        Ok(None) => {}
    }
    r
}

/// When an expected transition is settled: at its expected time plus tolerance, or (expected at
/// any time) only at the end of the run.
fn due(exp_t: Option<i64>, tol: i64) -> Decided {
    exp_t.map_or(Decided::EndOfRun, |t| Decided::At(t.saturating_add(tol)))
}

pub(crate) use crate::util::units::num;

/// A metric row on the final scrape. A wall-clock duration of the engine's catalogue
/// (`health_breaker_disagreement_seconds`, a latency histogram's `_sum`; see
/// [`crate::engine::families::TimeBase`]) is read in scenario time (× `speed`), as every bound
/// of a scenario is; what no conversion keeps (a bucket, a Unix time) is refused before a run
/// at another speed than 1.
fn diff_metric(
    m: &ExpectMetric,
    final_scrape: Option<&Exposition>,
    speed: Speed,
) -> ExpectationResult {
    let eps = |x: f64| 1e-9 * x.abs().max(1.0);
    let mut bounds = Vec::new();
    if let Some(x) = m.equals {
        bounds.push(format!("= {}", num(x)));
    }
    if let Some(x) = m.at_least {
        bounds.push(format!("≥ {}", num(x)));
    }
    if let Some(x) = m.at_most {
        bounds.push(format!("≤ {}", num(x)));
    }
    let expected = bounds.join(" and ");
    let series = m.series.to_string();
    let Some(e) = final_scrape else {
        return ExpectationResult {
            witness: Default::default(),
            kind: ExpectKind::Metric,
            dep: None,
            series: Some(series.clone()),
            detail: format!("{series} expected {expected}, observed nothing (no final scrape)"),
            expected,
            observed: "no final scrape".into(),
            delta_ms: None,
            expected_ms: None,
            observed_ms: None,
            tolerance_ms: None,
            ok: false,
            status: ExpectStatus::Fail,
        };
    };
    let raw = e.sum(&m.series);
    let wall = matches!(
        sample_time(&m.series.name),
        Some(SampleTime::Base(TimeBase::Wall))
    );
    let (v, read) = if wall && speed != Speed::ONE {
        let v = speed.to_scenario(raw);
        let read = format!(
            " (scenario time: {} s on the run's clock × speed {})",
            num(raw),
            num(speed.get())
        );
        (v, read)
    } else {
        (raw, String::new())
    };
    let matched = e.select(&m.series).count() as u64;
    let ok = m.equals.is_none_or(|x| (v - x).abs() <= eps(x))
        && m.at_least.is_none_or(|x| v >= x - eps(x))
        && m.at_most.is_none_or(|x| v <= x + eps(x));
    let reference = m.equals.or(if ok {
        None
    } else {
        m.at_least.filter(|x| v < *x).or(m.at_most)
    });
    let delta = match reference {
        Some(x) if !ok => {
            let d = v - x;
            format!(" ({}{})", if d >= 0.0 { "+" } else { "" }, num(d))
        }
        _ => String::new(),
    };
    let verdict = if ok { "ok" } else { "outside the bound" };
    ExpectationResult {
        witness: super::Witness::of(&[("series", matched)]),
        kind: ExpectKind::Metric,
        dep: None,
        series: Some(series.clone()),
        detail: format!(
            "{series} expected {expected}, observed {}{read}{delta}, {verdict}",
            num(v)
        ),
        expected,
        observed: num(v),
        delta_ms: None,
        expected_ms: None,
        observed_ms: None,
        tolerance_ms: None,
        ok,
        status: ExpectStatus::from_ok(ok),
    }
}

#[cfg(test)]
mod tests;
