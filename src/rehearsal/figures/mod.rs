//! One arm's key figures ([`KeyFigures`]), computed once from its observation and the section
//! built from it (`rehearsal::section`), for every kind of run alike: breaker figures from the
//! transitions (events, or scrapes for a gateway that exports them), probe arrivals at the
//! upstream; rotations, fallbacks and cooldowns from the engine's marks where the system is an
//! engine of ours, else from the upstream's record of what it sent (the sequence of profiles
//! and models after a faulted request) and the gateway's auth state.
//!
//! The rules (pure, `compute`):
//! - a dep's *time to open* runs from the start of the latest applied fault window (touching
//!   that dep when the window names its lanes) at or before its first opening;
//! - *open* is the first open → half-open; *half-open to closed* the first half-open that closed;
//!   *probes per half-open* the dep's probes that reached the upstream over its half-open spells;
//! - a gateway's rotations, fallbacks and cooldowns are read per turn from the upstream's
//!   record (`verdict::turns::changes`: a fallback a change of model inside a turn, a rotation
//!   a change of profile within a model, a cooldown a profile's quiet after a failure while
//!   turns went elsewhere); a gateway that strips the turn marker has them unknown (`None`),
//!   never 0. OpenClaw's auth state is a second, labelled source (`cooldowns_auth_state`).
//!   Times to the first of each run from the first applied fault.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::BreakerState;
use crate::report::figures::{DepFigures, KeyFigures, ProviderFigures};
use crate::report::model::{FaultWindow, Marks, PolicyReport};
use crate::scrape::Transition;
use crate::verdict::turns::TurnsPart;
use crate::verdict::ExpectStatus;

/// What the figures are computed from, every time in scenario ms.
#[derive(Debug, Default)]
pub(crate) struct FigureInput<'a> {
    /// Breaker transitions, time-ordered.
    pub transitions: &'a [Transition],
    /// Fault windows (only those that applied count).
    pub fault_windows: &'a [FaultWindow],
    /// Probe arrivals at the upstream: (dep, t).
    pub probes: Vec<(String, u64)>,
    /// The engine's marks, when the system is an engine of ours.
    pub marks: Option<&'a Marks>,
    /// Otherwise the turns in the upstream's record (`None`: none were observed).
    pub turns: Option<&'a TurnsPart>,
    /// The profiles OpenClaw's auth state held cooling: provider per cooled profile; `None`
    /// when no auth state was read.
    pub cooled_by_state: Option<Vec<String>>,
    /// The breaker deps the run could watch: a dep among them that never opened has
    /// `openings` 0 (a value), one outside them no figures (unknown).
    pub watched_deps: BTreeSet<String>,
    /// The providers whose counts the run has in full: each gets its figures, 0 where nothing
    /// happened.
    pub providers: BTreeSet<String>,
    /// Profile id → provider.
    pub provider_of: BTreeMap<String, String>,
    /// The replay lag p99.
    pub lag_p99_ms: f64,
    /// The arm's rows, judged.
    pub statuses: Vec<ExpectStatus>,
}

/// The figures of one arm.
pub(crate) fn compute(i: &FigureInput<'_>) -> KeyFigures {
    let applied: Vec<&FaultWindow> = i
        .fault_windows
        .iter()
        .filter(|w| w.applied_count > 0)
        .collect();
    let first_fault = applied.iter().map(|w| w.from_ms).min();
    let mut deps: BTreeMap<String, DepFigures> = BTreeMap::new();
    let mut by_dep: BTreeMap<&str, Vec<&Transition>> = BTreeMap::new();
    for t in i.transitions {
        by_dep.entry(&t.dep).or_default().push(t);
    }
    for (dep, ts) in by_dep {
        deps.insert(dep.to_string(), dep_figures(dep, &ts, &applied, &i.probes));
    }
    for dep in &i.watched_deps {
        deps.entry(dep.clone()).or_default();
    }
    // A provider whose counts the run has: 0 of each until counted; else unknown.
    let turns = i.turns.filter(|t| t.readable());
    let countable = i.marks.is_some() || turns.is_some();
    let fresh = || {
        if countable {
            ProviderFigures::counted()
        } else {
            ProviderFigures::default()
        }
    };
    let mut providers: BTreeMap<String, ProviderFigures> =
        i.providers.iter().map(|p| (p.clone(), fresh())).collect();
    let since = |t: u64| first_fault.map(|f| t.saturating_sub(f));
    if let Some(m) = i.marks {
        let prov = |id: &str| {
            i.provider_of
                .get(id)
                .cloned()
                .unwrap_or_else(|| id.split([':', '/']).next().unwrap_or(id).to_string())
        };
        for r in &m.rotations {
            let p = providers.entry(prov(&r.from)).or_insert_with(fresh);
            bump(&mut p.rotations);
            p.time_to_first_rotation_ms = p.time_to_first_rotation_ms.or(since(r.t_ms));
        }
        for f in &m.fallbacks {
            let p = providers.entry(prov(&f.from)).or_insert_with(fresh);
            bump(&mut p.fallbacks);
            p.time_to_first_fallback_ms = p.time_to_first_fallback_ms.or(since(f.t_ms));
        }
        for c in &m.cooldowns {
            bump(&mut providers.entry(prov(&c.profile)).or_insert_with(fresh).cooldowns);
        }
    } else if let Some(t) = turns {
        let name = |p: &Option<String>| p.clone().unwrap_or_else(|| "unknown".to_string());
        for q in t.rows.iter().flat_map(|r| &r.requests) {
            if q.route == crate::upstream::RequestRoute::Llm {
                providers.entry(name(&q.provider)).or_insert_with(fresh);
            }
        }
        let c = crate::verdict::turns::changes(&t.rows);
        for r in &c.rotations {
            let p = providers.entry(name(&r.provider)).or_insert_with(fresh);
            bump(&mut p.rotations);
            p.time_to_first_rotation_ms = p.time_to_first_rotation_ms.or(since(r.t_ms));
        }
        for f in &c.fallbacks {
            let p = providers.entry(name(&f.provider)).or_insert_with(fresh);
            bump(&mut p.fallbacks);
            p.time_to_first_fallback_ms = p.time_to_first_fallback_ms.or(since(f.t_ms));
        }
        for cd in &c.cooldowns {
            bump(&mut providers.entry(name(&cd.provider)).or_insert_with(fresh).cooldowns);
        }
    }
    if let Some(list) = &i.cooled_by_state {
        for p in list {
            providers.entry(p.clone()).or_insert_with(fresh);
        }
        for (name, p) in &mut providers {
            p.cooldowns_auth_state = Some(list.iter().filter(|c| *c == name).count() as u64);
        }
    }
    let count = |st: ExpectStatus| i.statuses.iter().filter(|s| **s == st).count() as u64;
    KeyFigures {
        deps,
        providers,
        replay_lag_p99_ms: i.lag_p99_ms,
        expectations_passed: count(ExpectStatus::Pass),
        expectations_failed: count(ExpectStatus::Fail),
        expectations_not_reached: count(ExpectStatus::NotReached),
    }
}

/// One more of a count (from 0 when it was not counted yet).
fn bump(v: &mut Option<u64>) {
    *v = Some(v.unwrap_or(0) + 1);
}

fn dep_figures(
    dep: &str,
    ts: &[&Transition],
    applied: &[&FaultWindow],
    probes: &[(String, u64)],
) -> DepFigures {
    let mut d = DepFigures::default();
    let mut open_at: Option<u64> = None;
    let mut half_at: Option<u64> = None;
    let mut spells = 0u32;
    for t in ts {
        match t.to {
            BreakerState::Open => {
                d.openings += 1;
                if d.openings == 1 {
                    d.time_to_open_ms = applied
                        .iter()
                        .filter(|w| w.from_ms <= t.t_ms)
                        .filter(|w| w.lanes.is_empty() || w.lanes.iter().any(|l| l == dep))
                        .map(|w| w.from_ms)
                        .max()
                        .map(|f| t.t_ms - f);
                }
                if half_at.take().is_some() {
                    spells += 1;
                }
                open_at = Some(t.t_ms);
            }
            BreakerState::HalfOpen => {
                if let Some(o) = open_at.take() {
                    d.open_ms = d.open_ms.or(Some(t.t_ms.saturating_sub(o)));
                }
                half_at = Some(t.t_ms);
            }
            BreakerState::Closed => {
                if let Some(h) = half_at.take() {
                    d.half_open_to_closed_ms =
                        d.half_open_to_closed_ms.or(Some(t.t_ms.saturating_sub(h)));
                    spells += 1;
                }
                open_at = None;
            }
        }
    }
    if half_at.is_some() {
        spells += 1;
    }
    if spells > 0 {
        // Every probe of a dep is a half-open probe (canaries are not in the arrivals): counted
        // whole, not by the spell it fell in, so a probe stamped at the upstream a hair before
        // the engine's transition still counts.
        let n = probes.iter().filter(|(p, _)| p == dep).count();
        d.probes_per_half_open = Some(n as f64 / f64::from(spells));
    }
    d
}

/// The figures of a section just built from observation `o` (its transitions, windows and rows
/// already in place), for a run of `plan`.
pub(crate) fn of_section(
    o: &crate::rehearsal::observation::Observation,
    section: &PolicyReport,
    plan: &crate::rehearsal::plan::ScenarioPlan,
) -> KeyFigures {
    let file = &plan.checked.file;
    let profiles = &file.profile;
    // A profile's provider by its id, and by its key's fingerprint (what the upstream saw).
    let provider_of: BTreeMap<String, String> = profiles
        .iter()
        .map(|p| (p.id.clone(), p.provider.clone()))
        .collect();
    let speed = o.speed;
    let probes = o
        .arrivals
        .iter()
        .filter(|a| a.probe)
        .map(|a| (a.dep.clone(), speed.scenario_ms_u(a.t_ms)))
        .collect();
    let marks = o.engine.as_ref().map(|_| &section.marks);
    // An OpenClaw gateway's cooldowns are in its auth state, when it was read; an `http`
    // target has none the harness can see.
    let cooled_by_state = o.gateway.as_ref().and_then(|g| g.auth.as_ref()).map(|a| {
        a.cooled()
            .map(|p| {
                provider_of.get(&p.profile).cloned().unwrap_or_else(|| {
                    p.profile.split(':').next().unwrap_or_default().to_string()
                })
            })
            .collect()
    });
    let (watched_deps, providers) = watched(o, section, plan);
    compute(&FigureInput {
        transitions: &section.transitions,
        fault_windows: &section.fault_windows,
        probes,
        marks,
        turns: section.turns.as_ref(),
        cooled_by_state,
        watched_deps,
        providers,
        provider_of,
        lag_p99_ms: o.replay.lag_ms.p99,
        statuses: section.expectations.iter().map(|e| e.status).collect(),
    })
}

/// What the run could count, whether or not anything happened: the breaker deps it watched
/// (an engine of ours reports every breaker in its events, so every dep the scenario can
/// produce; a gateway only the deps whose breaker series its scrapes showed) and the providers
/// whose rotations and fallbacks it has in full (the scenario's, and those it sent to).
fn watched(
    o: &crate::rehearsal::observation::Observation,
    section: &PolicyReport,
    plan: &crate::rehearsal::plan::ScenarioPlan,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let file = &plan.checked.file;
    let mut deps: BTreeSet<String> = section.breaker_states.keys().cloned().collect();
    deps.extend(section.transitions.iter().map(|t| t.dep.clone()));
    let mut providers: BTreeSet<String> =
        file.profile.iter().map(|p| p.provider.clone()).collect();
    if o.engine.is_some() {
        let book = crate::engine::failover::profiles::ProfileBook::new(file.profile.clone())
            .unwrap_or_default();
        let exercised = crate::scenario::validate::exercised_deps(file, &book, &plan.checked.traffic);
        providers.extend(
            exercised
                .iter()
                .filter(|d| d.matches('/').count() == 2)
                .filter_map(|d| d.split('/').next().map(str::to_string)),
        );
        deps.extend(exercised);
    }
    (deps, providers)
}

#[cfg(test)]
mod tests;
