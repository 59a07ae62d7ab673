//! The suite's own mutants: every expectation of a finished run re-judged on the run's own
//! observation after a change that should fail it — a bound moved past what was observed, a
//! window moved off its events, `never` on an alert that fired, a dep renamed to one that cannot
//! have been watched. Pure: no second run, the one [`Observed`] the run judged (a ×1 run cannot
//! be repeated). A perturbation whose rows still all pass is a witness bug: the row passed on
//! something that does not depend on what it claims.
//!
//! Each expectation is judged alone (its kind's table holds only it; a transition keeps its
//! dep's others, which anchor `after`), once as written — its baseline, which must pass for it
//! to be perturbed — and once per perturbation. `[[expect.drift]]` (judged against the report
//! directory's history, after the report) and `[[expect.fleet]]` (judged by the fleet run from
//! its hosts' probes) are not re-judged here and are listed as such.
//!
//! Asked for with the hidden `REHEARSE_MUTANTS=1` (the test suite sets it on the runs it makes):
//! the run writes `mutants.json` beside its report.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::rehearsal::observation::Observed;
use crate::rehearsal::plan::ScenarioPlan;
use crate::rehearsal::section::{section, unapplied_faults};
use crate::verdict::{ExpectKind, ExpectStatus, ExpectationResult, Expectations};

/// The environment variable that asks a run for its mutants.
const ENV: &str = "REHEARSE_MUTANTS";

/// One perturbation of one expectation, re-judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mutant {
    /// The arm it was judged in.
    pub arm: String,
    /// The expectation table and its entry (`attempts[2]`).
    pub entry: String,
    /// What was changed.
    pub change: String,
    /// The statuses of the entry's rows after the change.
    pub statuses: Vec<ExpectStatus>,
    /// True when every row still passed: a witness bug.
    pub survived: bool,
    /// The first row's detail after the change.
    pub detail: String,
}

/// An entry that was not perturbed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unperturbed {
    /// The arm.
    pub arm: String,
    /// The entry (`drift[0]`).
    pub entry: String,
    /// Why not.
    pub why: String,
}

/// `mutants.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mutants {
    /// The scenario.
    pub scenario: String,
    /// Every perturbation judged.
    pub mutants: Vec<Mutant>,
    /// Entries left alone.
    pub unperturbed: Vec<Unperturbed>,
}

impl Mutants {
    /// The perturbations that still passed.
    pub fn survivors(&self) -> Vec<&Mutant> {
        self.mutants.iter().filter(|m| m.survived).collect()
    }
}

/// One expectation entry: its table, its index there, and a way to put a changed copy of it
/// into an otherwise empty set of expectations.
struct Entry {
    name: String,
    kind: ExpectKind,
    /// The expectations that judge it alone.
    alone: Expectations,
    /// Which of the isolated rows are its own (a transition's dep-mates are judged beside it).
    nth: usize,
}

/// The mutants of a finished run: every expectation of every arm that ran, judged alone and
/// perturbed. Arms that never ran have nothing to perturb.
pub fn check(plan: &ScenarioPlan, observed: &Observed) -> Mutants {
    let file = &plan.checked.file;
    let hits: Vec<&crate::rehearsal::observation::Hits> =
        observed.observations.iter().map(|o| &o.fault_hits).collect();
    let never = unapplied_faults(&file.fault, &hits);
    let mut out = Mutants {
        scenario: file.name.clone(),
        ..Mutants::default()
    };
    for o in &observed.observations {
        let expect = file.expect_for(&o.arm);
        for (table, n) in [("drift", expect.drift.len()), ("fleet", expect.fleet.len())] {
            for i in 0..n {
                out.unperturbed.push(Unperturbed {
                    arm: o.arm.clone(),
                    entry: format!("{table}[{i}]"),
                    why: format!(
                        "{table} rows are judged outside the arm's section (drift: against the \
                         history; fleet: from every host's probes)"
                    ),
                });
            }
        }
        let judge = |e: &Expectations| -> Vec<ExpectationResult> {
            let mut p = plan.clone();
            p.checked.file.expect = e.clone();
            section(&p, o, &never)
                .expectations
                .into_iter()
                .filter(|r| r.kind != ExpectKind::FaultApplied)
                .collect()
        };
        for entry in entries(&expect) {
            let rows = own_rows(&judge(&entry.alone), &entry, &entry.alone);
            if rows.is_empty() || rows.iter().any(|r| r.status != ExpectStatus::Pass) {
                out.unperturbed.push(Unperturbed {
                    arm: o.arm.clone(),
                    entry: entry.name.clone(),
                    why: format!(
                        "judged alone it does not pass ({}), so there is nothing to perturb",
                        rows.first().map_or("no row".into(), |r| r.detail.clone())
                    ),
                });
                continue;
            }
            let changes = perturb(&entry, &rows, o, file.duration);
            if changes.is_empty() {
                out.unperturbed.push(Unperturbed {
                    arm: o.arm.clone(),
                    entry: entry.name.clone(),
                    why: "no perturbation is known for it".into(),
                });
            }
            for (change, e) in changes {
                let after = own_rows(&judge(&e), &entry, &e);
                let statuses: Vec<ExpectStatus> = after.iter().map(|r| r.status).collect();
                out.mutants.push(Mutant {
                    arm: o.arm.clone(),
                    entry: entry.name.clone(),
                    change,
                    survived: !statuses.is_empty()
                        && statuses.iter().all(|s| *s == ExpectStatus::Pass),
                    detail: after.first().map(|r| r.detail.clone()).unwrap_or_default(),
                    statuses,
                });
            }
        }
    }
    out
}

/// The rows of `entry` among the rows judged for it alone (`judged`: the expectations they were
/// judged from): all of them, but for a transition only its own — the diff gives each dep's
/// expected transitions one row each, in table order per dep.
fn own_rows(
    rows: &[ExpectationResult],
    entry: &Entry,
    judged: &Expectations,
) -> Vec<ExpectationResult> {
    if entry.kind != ExpectKind::Transition {
        return rows.to_vec();
    }
    let Some(me) = judged.transition.get(entry.nth) else {
        return Vec::new();
    };
    let pos = judged.transition[..entry.nth]
        .iter()
        .filter(|t| t.dep == me.dep)
        .count();
    rows.iter()
        .filter(|r| r.kind == ExpectKind::Transition && !r.is_unexpected())
        .filter(|r| r.dep.as_deref() == Some(me.dep.as_str()))
        .nth(pos)
        .cloned()
        .into_iter()
        .collect()
}

/// Every entry of `e`, each with the expectations that judge it alone.
fn entries(e: &Expectations) -> Vec<Entry> {
    let mut out = Vec::new();
    macro_rules! alone {
        ($table:ident, $kind:expr) => {
            for (i, x) in e.$table.iter().enumerate() {
                out.push(Entry {
                    name: format!("{}[{i}]", stringify!($table)),
                    kind: $kind,
                    alone: Expectations {
                        $table: vec![x.clone()],
                        ..Default::default()
                    },
                    nth: 0,
                });
            }
        };
    }
    for (i, t) in e.transition.iter().enumerate() {
        let mates: Vec<_> = e.transition.iter().filter(|x| x.dep == t.dep).cloned().collect();
        let nth = e.transition[..i].iter().filter(|x| x.dep == t.dep).count();
        out.push(Entry {
            name: format!("transition[{i}]"),
            kind: ExpectKind::Transition,
            alone: Expectations {
                transition: mates,
                ..Default::default()
            },
            nth,
        });
    }
    alone!(metric, ExpectKind::Metric);
    alone!(no_transition, ExpectKind::NoTransition);
    alone!(probe_spacing, ExpectKind::ProbeSpacing);
    alone!(attempts, ExpectKind::Attempts);
    alone!(first_request, ExpectKind::FirstRequest);
    alone!(no_request, ExpectKind::NoRequest);
    alone!(retry_gaps, ExpectKind::RetryGaps);
    alone!(recovered, ExpectKind::Recovered);
    alone!(openclaw_decision, ExpectKind::GatewayDecision);
    alone!(openclaw_cooldown, ExpectKind::GatewayCooldown);
    alone!(turn, ExpectKind::Turn);
    alone!(cooldown, ExpectKind::Cooldown);
    alone!(per_turn, ExpectKind::PerTurn);
    alone!(alert, ExpectKind::Alert);
    alone!(dashboard, ExpectKind::Dashboard);
    out
}

/// A dep no scenario has: a subject that cannot have been watched.
const NO_SUCH_DEP: &str = "mutant-no-such-dep";

fn ms(n: i64) -> Duration {
    Duration::from_millis(u64::try_from(n.max(0)).unwrap_or(0))
}

/// The leading number of an `observed` text (`3`, `2 of 5 turns`, `4 (first at 1.2s)`).
fn count(observed: &str) -> Option<u64> {
    observed.split_whitespace().next()?.parse().ok()
}

/// New count bounds that the observed count `n` breaks: `(equals, at_least, at_most)` moved
/// just past it in the direction of each bound given.
fn past(n: u64, bounds: (Option<u64>, Option<u64>, Option<u64>)) -> Vec<(String, Bounds)> {
    let (eq, lo, hi) = bounds;
    let mut out = Vec::new();
    if eq.is_some() {
        out.push((format!("equals {}", n + 1), (Some(n + 1), None, None)));
    }
    if lo.is_some() {
        out.push((format!("at_least {}", n + 1), (None, Some(n + 1), None)));
    }
    if hi.is_some() {
        match n.checked_sub(1) {
            Some(m) => out.push((format!("at_most {m}"), (None, None, Some(m)))),
            None => out.push((format!("at_least {}", n + 1), (None, Some(n + 1), None))),
        }
    }
    out
}

type Bounds = (Option<u64>, Option<u64>, Option<u64>);

/// The perturbations of `entry` that should fail it, given its baseline `rows` (all passing).
fn perturb(
    entry: &Entry,
    rows: &[ExpectationResult],
    o: &crate::rehearsal::observation::Observation,
    duration: Duration,
) -> Vec<(String, Expectations)> {
    let base = &entry.alone;
    let b = &rows[0];
    let mut out: Vec<(String, Expectations)> = Vec::new();
    let mut with = |change: String, f: &mut dyn FnMut(&mut Expectations)| {
        let mut e = base.clone();
        f(&mut e);
        out.push((change, e));
    };
    match entry.kind {
        ExpectKind::Transition => {
            // Its own entry among its dep-mates.
            let idx = entry.nth;
            if idx >= base.transition.len() {
                return out;
            }
            if let Some(t) = b.observed_ms {
                let tol = base.transition[idx]
                    .tolerance
                    .unwrap_or(crate::verdict::expect::DEFAULT_TOLERANCE);
                let moved = ms(t) + tol + Duration::from_secs(1);
                with(
                    format!("at {}ms (off its event by its tolerance + 1s)", moved.as_millis()),
                    &mut |e| {
                        e.transition[idx].at = Some(moved);
                        e.transition[idx].after = None;
                    },
                );
            }
            with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
                e.transition[idx].dep = NO_SUCH_DEP.into();
            });
        }
        ExpectKind::Metric => {
            let v: f64 = b.observed.trim().parse().unwrap_or(f64::NAN);
            if v.is_finite() {
                let m = &base.metric[0];
                if m.equals.is_some() {
                    with(format!("equals {}", v + 1.0), &mut |e| {
                        e.metric[0].equals = Some(v + 1.0);
                        e.metric[0].at_least = None;
                        e.metric[0].at_most = None;
                    });
                }
                if m.at_least.is_some() {
                    with(format!("at_least {}", v + 1.0), &mut |e| {
                        e.metric[0].at_least = Some(v + 1.0);
                        e.metric[0].equals = None;
                        e.metric[0].at_most = None;
                    });
                }
                if m.at_most.is_some() {
                    with(format!("at_most {}", v - 1.0), &mut |e| {
                        e.metric[0].at_most = Some(v - 1.0);
                        e.metric[0].equals = None;
                        e.metric[0].at_least = None;
                    });
                }
            }
        }
        ExpectKind::NoTransition => {
            let moved = o.engine.as_ref().and_then(|e| {
                e.transitions
                    .iter()
                    .map(|t| t.dep.clone())
                    .find(|d| *d != base.no_transition[0].dep)
            });
            match moved {
                Some(dep) => with(format!("dep {dep} (it transitioned)"), &mut |e| {
                    e.no_transition[0].dep = dep.clone();
                }),
                None => with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
                    e.no_transition[0].dep = NO_SUCH_DEP.into();
                }),
            }
        }
        ExpectKind::ProbeSpacing => {
            if let Some(g) = b.observed_ms {
                let min = ms(g) + Duration::from_secs(1);
                with(format!("min {}ms (its smallest gap + 1s)", min.as_millis()), &mut |e| {
                    e.probe_spacing[0].min = min;
                    e.probe_spacing[0].tolerance = None;
                });
            }
            with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
                e.probe_spacing[0].dep = NO_SUCH_DEP.into();
            });
        }
        ExpectKind::Attempts => {
            let a = &base.attempts[0];
            // Rows in order: the counts row (when it has counts), then the hosts row.
            let mut rows_left = rows.iter();
            if a.equals.or(a.at_least).or(a.at_most).is_some()
                && let Some(n) = rows_left.next().and_then(|r| count(&r.observed))
            {
                for (change, (eq, lo, hi)) in past(n, (a.equals, a.at_least, a.at_most)) {
                    with(change, &mut |e| {
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
                    with(format!("hosts {change}"), &mut |e| {
                        let x = &mut e.attempts[0];
                        (x.equals, x.at_least, x.at_most) = (None, None, None);
                        (x.hosts_at_least, x.hosts_at_most) = (lo, hi);
                    });
                }
            }
        }
        ExpectKind::FirstRequest => {
            let f = &base.first_request[0];
            if f.never {
                with(format!("a first request by {}ms", duration.as_millis()), &mut |e| {
                    e.first_request[0].never = false;
                    e.first_request[0].at_most = Some(duration);
                    e.first_request[0].at_least = None;
                });
            } else if let Some(t) = b.observed_ms {
                with("never".into(), &mut |e| {
                    e.first_request[0].never = true;
                    e.first_request[0].at_least = None;
                    e.first_request[0].at_most = None;
                });
                let moved = match t.checked_sub(1) {
                    Some(m) if m >= 0 => (None, Some(ms(m))),
                    _ => (Some(ms(t + 1)), None),
                };
                with(format!("window {moved:?} (off its first request)"), &mut |e| {
                    (e.first_request[0].at_least, e.first_request[0].at_most) = moved;
                });
            }
        }
        ExpectKind::NoRequest => {
            with("every subject (its window held requests)".into(), &mut |e| {
                e.no_request[0].profile = None;
                e.no_request[0].model = None;
            });
        }
        ExpectKind::RetryGaps => {
            if let Some(g) = b.observed_ms {
                let change = match u64::try_from(g).ok().and_then(|g| g.checked_sub(1)) {
                    Some(m) => (None, Some(Duration::from_millis(m))),
                    None => (Some(Duration::from_millis(1)), None),
                };
                with(format!("gaps {change:?} (past its smallest gap)"), &mut |e| {
                    (e.retry_gaps[0].min, e.retry_gaps[0].max) = change;
                    e.retry_gaps[0].tolerance = None;
                });
            }
        }
        ExpectKind::Recovered => {
            if let Some(n) = count(&b.observed) {
                with(format!("requests {}", n + 1), &mut |e| {
                    e.recovered[0].requests = Some(n + 1);
                    e.recovered[0].within = None;
                });
            }
        }
        ExpectKind::GatewayDecision => {
            let d = &base.openclaw_decision[0];
            if let Some(n) = count(&b.observed) {
                for (change, (eq, lo, hi)) in past(n, (d.equals, d.at_least, d.at_most)) {
                    with(change, &mut |e| {
                        let x = &mut e.openclaw_decision[0];
                        (x.equals, x.at_least, x.at_most) = (eq, lo, hi);
                    });
                }
            }
        }
        ExpectKind::GatewayCooldown => {
            let c = &base.openclaw_cooldown[0];
            if c.none {
                with("a cooldown".into(), &mut |e| {
                    e.openclaw_cooldown[0].none = false;
                });
            } else {
                with("none".into(), &mut |e| {
                    e.openclaw_cooldown[0].none = true;
                    e.openclaw_cooldown[0].cooldown = None;
                    e.openclaw_cooldown[0].reason = None;
                });
            }
        }
        ExpectKind::Turn => {
            let t = &base.turn[0];
            let mut rows_left = rows.iter();
            if t.counts()
                && let Some(n) = rows_left.next().and_then(|r| count(&r.observed))
            {
                for (change, (eq, lo, hi)) in past(n, (t.equals, t.at_least, t.at_most)) {
                    with(change, &mut |e| {
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
                with(format!("latency_at_most {}ms", slowest - 1), &mut |e| {
                    let x = &mut e.turn[0];
                    (x.equals, x.at_least, x.at_most) = (None, None, None);
                    (x.latency_at_least, x.latency_at_most) = (None, Some(ms(slowest - 1)));
                });
            }
        }
        ExpectKind::Alert => {
            let a = &base.alert[0];
            if a.never {
                with(format!("fires within {}ms", duration.as_millis()), &mut |e| {
                    let x = &mut e.alert[0];
                    x.never = false;
                    x.fires_within = Some(duration);
                    x.resolves_within = None;
                    x.notified_within = None;
                });
            } else {
                with("never".into(), &mut |e| {
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
        ExpectKind::Dashboard => {
            with(format!("dep renamed to {NO_SUCH_DEP}"), &mut |e| {
                e.dashboard[0].dep = Some(NO_SUCH_DEP.into());
            });
        }
        ExpectKind::Cooldown => {
            let c = &base.cooldown[0];
            if c.never {
                with("a cooldown (never = false)".into(), &mut |e| {
                    e.cooldown[0].never = false;
                });
            } else {
                with("never".into(), &mut |e| {
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
                with(format!("count_at_least {}", n + 1), &mut |e| {
                    let x = &mut e.cooldown[0];
                    (x.count, x.count_at_least, x.count_at_most) = (None, Some(n + 1), None);
                });
                if c.bounds_length()
                    && let Some(longest) = b.observed_ms
                {
                    let lo = ms(longest) + Duration::from_secs(1);
                    with(format!("at_least {}ms (its longest + 1s)", lo.as_millis()), &mut |e| {
                        let x = &mut e.cooldown[0];
                        (x.cooled, x.tolerance, x.at_most) = (None, None, None);
                        x.until_retry_after = false;
                        x.at_least = Some(lo);
                    });
                }
            }
        }
        ExpectKind::PerTurn => {
            let t = &base.per_turn[0];
            let judged = b.witness.get("turns_judged");
            with(format!("turns_at_least {} (more than it judged)", judged + 1), &mut |e| {
                let x = &mut e.per_turn[0];
                (x.turns_at_least, x.turns_at_most) = (Some(judged + 1), None);
            });
            if t.counts()
                && let Some(n) = count(&b.observed)
            {
                for (change, (_, lo, hi)) in past(n, (None, t.turns_at_least, t.turns_at_most)) {
                    with(format!("turns {change}"), &mut |e| {
                        let x = &mut e.per_turn[0];
                        (x.turns_at_least, x.turns_at_most) = (lo, hi);
                    });
                }
            }
            let most = b.witness.get("most_requests");
            if t.requests_at_most.is_some() && most > 0 {
                with(format!("requests_at_most {} (below its most)", most - 1), &mut |e| {
                    let x = &mut e.per_turn[0];
                    x.requests_at_most = Some(most - 1);
                    x.requests_at_least = None;
                    (x.turns_at_least, x.turns_at_most) = (None, None);
                });
            }
            let retries = b.witness.get("most_same_profile_retries");
            if t.same_profile_retries_at_most.is_some() && retries > 0 {
                with(format!("same_profile_retries_at_most {}", retries - 1), &mut |e| {
                    let x = &mut e.per_turn[0];
                    x.same_profile_retries_at_most = Some(retries - 1);
                    (x.turns_at_least, x.turns_at_most) = (None, None);
                });
            }
            if t.answered_by_model.is_some() {
                with(format!("answered_by_model {NO_SUCH_DEP}"), &mut |e| {
                    e.per_turn[0].answered_by_model = Some(NO_SUCH_DEP.into());
                    e.per_turn[0].turns_at_most = None;
                });
            }
            if t.answered_by_profile.is_some() {
                with(format!("answered_by_profile {NO_SUCH_DEP}"), &mut |e| {
                    e.per_turn[0].answered_by_profile = Some(NO_SUCH_DEP.into());
                    e.per_turn[0].turns_at_most = None;
                });
            }
            if t.answer_within.is_some()
                && let Some(slowest) = b.observed_ms.filter(|s| *s > 0)
            {
                with(format!("answer_within {}ms (below its slowest)", slowest - 1), &mut |e| {
                    let x = &mut e.per_turn[0];
                    x.answer_within = Some(ms(slowest - 1));
                    (x.turns_at_least, x.turns_at_most) = (None, None);
                });
            }
        }
        ExpectKind::Fleet | ExpectKind::Drift | ExpectKind::FaultApplied => {}
    }
    out
}

/// Writes `mutants.json` into `dir` when the environment asks for it (see the module's opening).
pub(crate) fn write_if_asked(dir: &std::path::Path, plan: &ScenarioPlan, observed: &Observed) {
    if std::env::var_os(ENV).is_none() {
        return;
    }
    let m = check(plan, observed);
    let text = serde_json::to_string_pretty(&m).unwrap_or_default();
    if let Err(e) = crate::util::atomic::write_atomic(&dir.join("mutants.json"), text.as_bytes()) {
        crate::errln!("writing mutants.json in {}: {e}", dir.display());
    }
}

#[cfg(test)]
mod tests;
