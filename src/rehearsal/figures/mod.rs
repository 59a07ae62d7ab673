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
//! - from the upstream record, a *rotation* of provider P is a model request of P whose
//!   profile differs from the one of P's previous request, which was faulted; a *fallback*
//!   away from P is a model request naming another model than the previous model request,
//!   which was P's and faulted. Times to the first of each run from the first applied fault.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::BreakerState;
use crate::report::figures::{DepFigures, KeyFigures, ProviderFigures};
use crate::report::model::{FaultWindow, Marks, PolicyReport};
use crate::scrape::Transition;
use crate::upstream::{RequestRoute, UpstreamRecord};
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
    /// Otherwise the upstream's record of model requests, time-ordered: (t, provider, profile,
    /// model, faulted).
    pub sent: Vec<Sent>,
    /// Profiles put in cooldown by a system without marks (a gateway's auth state): provider
    /// per cooled profile; `None` when the run could not see them (no auth state read).
    pub cooled_providers: Option<Vec<String>>,
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

/// One model request as the upstream recorded it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sent {
    /// Scenario ms.
    pub t_ms: u64,
    /// Its provider.
    pub provider: String,
    /// The token's fingerprint.
    pub profile: Option<String>,
    /// The model it named.
    pub model: Option<String>,
    /// A fault applied to it.
    pub faulted: bool,
}

/// The model requests of an upstream record, scenario time (warm-up, probes and canaries left
/// out). A request's provider is its profile's (`provider_by_fp`: key fingerprint → provider)
/// when its key is one of the scenario's: a gateway may name the model without its provider
/// (OpenClaw sends `m1`, not `mockai/m1`); otherwise the provider its model names.
pub(crate) fn sent_of(
    records: &[UpstreamRecord],
    speed: crate::util::speed::Speed,
    provider_by_fp: &BTreeMap<String, String>,
) -> Vec<Sent> {
    let mut out: Vec<Sent> = records
        .iter()
        .filter(|r| r.route == RequestRoute::Llm && !r.warmup && !r.probe && !r.canary)
        .map(|r| Sent {
            t_ms: speed.scenario_ms_u(r.t_ms),
            provider: r
                .profile_fp
                .as_ref()
                .and_then(|fp| provider_by_fp.get(fp))
                .cloned()
                .unwrap_or_else(|| r.dep.split('/').next().unwrap_or_default().to_string()),
            profile: r.profile_fp.clone(),
            model: r.model.clone(),
            faulted: r.fault.is_some(),
        })
        .collect();
    out.sort_by_key(|s| s.t_ms);
    out
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
    let mut providers: BTreeMap<String, ProviderFigures> = i
        .providers
        .iter()
        .map(|p| (p.clone(), ProviderFigures::default()))
        .collect();
    // Cooldowns per provider, where the run can see them (`None`: it cannot).
    let cooled: Option<BTreeMap<String, u64>>;
    let since = |t: u64| first_fault.map(|f| t.saturating_sub(f));
    match i.marks {
        Some(m) => {
            let prov = |id: &str| {
                i.provider_of
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| id.split([':', '/']).next().unwrap_or(id).to_string())
            };
            for r in &m.rotations {
                let p = providers.entry(prov(&r.from)).or_default();
                p.rotations += 1;
                p.time_to_first_rotation_ms = p.time_to_first_rotation_ms.or(since(r.t_ms));
            }
            for f in &m.fallbacks {
                let p = providers.entry(prov(&f.from)).or_default();
                p.fallbacks += 1;
                p.time_to_first_fallback_ms = p.time_to_first_fallback_ms.or(since(f.t_ms));
            }
            let mut n: BTreeMap<String, u64> = BTreeMap::new();
            for c in &m.cooldowns {
                *n.entry(prov(&c.profile)).or_default() += 1;
            }
            cooled = Some(n);
        }
        None => {
            let mut last_of: BTreeMap<&str, &Sent> = BTreeMap::new();
            let mut last: Option<&Sent> = None;
            for s in &i.sent {
                providers.entry(s.provider.clone()).or_default();
                if let Some(prev) = last_of.get(s.provider.as_str())
                    && prev.faulted
                    && prev.profile != s.profile
                {
                    let p = providers.entry(s.provider.clone()).or_default();
                    p.rotations += 1;
                    p.time_to_first_rotation_ms = p.time_to_first_rotation_ms.or(since(s.t_ms));
                }
                if let Some(prev) = last
                    && prev.faulted
                    && prev.model.is_some()
                    && s.model.is_some()
                    && prev.model != s.model
                {
                    let p = providers.entry(prev.provider.clone()).or_default();
                    p.fallbacks += 1;
                    p.time_to_first_fallback_ms = p.time_to_first_fallback_ms.or(since(s.t_ms));
                }
                last_of.insert(&s.provider, s);
                last = Some(s);
            }
            cooled = i.cooled_providers.as_ref().map(|list| {
                let mut n: BTreeMap<String, u64> = BTreeMap::new();
                for p in list {
                    *n.entry(p.clone()).or_default() += 1;
                }
                n
            });
        }
    }
    if let Some(n) = &cooled {
        for p in n.keys() {
            providers.entry(p.clone()).or_default();
        }
    }
    for (name, p) in &mut providers {
        p.cooldowns = cooled
            .as_ref()
            .map(|n| n.get(name).copied().unwrap_or(0));
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
    let provider_by_fp: BTreeMap<String, String> = profiles
        .iter()
        .map(|p| (crate::util::fingerprint(p.credential()), p.provider.clone()))
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
    let cooled_providers = o.gateway.as_ref().and_then(|g| g.auth.as_ref()).map(|a| {
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
        sent: if marks.is_none() {
            sent_of(&o.upstream.records, speed, &provider_by_fp)
        } else {
            Vec::new()
        },
        cooled_providers,
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
