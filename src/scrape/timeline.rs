//! The breaker timeline derived from successive scrapes: per-dep transitions (from
//! `breaker_transitions_total` deltas, timed by `breaker_last_transition_timestamp_seconds`
//! when it falls inside the scrape interval, else by the scrape time), the state of every
//! breaker over time, and the request and error rates per scrape interval.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::parse::{Exposition, Sample};
use crate::engine::events::BreakerState;

/// Slack (ms) allowed between a transition timestamp and the scrape interval it was seen in.
const STAMP_SLACK_MS: i64 = 250;
/// Cap on transitions derived from one counter delta (a counter reset to garbage stays bounded).
const MAX_PER_INTERVAL: u64 = 10_000;

/// How an observed transition's time was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// From `breaker_last_transition_timestamp_seconds` (ms precision).
    Timestamp,
    /// The time of the scrape that first showed it (late by up to one scrape interval).
    Scrape,
    /// One of several identical transitions inside one scrape interval; spread evenly.
    Interpolated,
}

/// One observed breaker transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// The dep label.
    pub dep: String,
    /// State before.
    pub from: BreakerState,
    /// State after.
    pub to: BreakerState,
    /// Milliseconds since the run start.
    pub t_ms: u64,
    /// Where `t_ms` came from.
    pub timing: Timing,
}

/// A breaker's state from `t_ms` on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StatePoint {
    /// Milliseconds since the run start.
    pub t_ms: u64,
    /// The state from then on.
    pub state: BreakerState,
}

/// Request and error rates over the scrape interval ending at `t_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatePoint {
    /// End of the interval, ms since the run start.
    pub t_ms: u64,
    /// `requests_total` increase per second (written rounded to 3 decimals).
    #[serde(serialize_with = "crate::util::round::ser3")]
    pub requests_per_s: f64,
    /// Increase per second of `requests_total` with an outcome other than `ok`.
    #[serde(serialize_with = "crate::util::round::ser3")]
    pub errors_per_s: f64,
}

/// Everything derived from a run's scrapes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Transitions ordered by time (per dep, in causal order).
    pub transitions: Vec<Transition>,
    /// Per dep, the state as a step function starting at t = 0.
    pub states: BTreeMap<String, Vec<StatePoint>>,
    /// Rates per scrape interval.
    pub rates: Vec<RatePoint>,
}

/// Parses a `from`/`to`/state label value.
pub fn state_from_label(s: &str) -> Option<BreakerState> {
    match s {
        "closed" => Some(BreakerState::Closed),
        "half_open" => Some(BreakerState::HalfOpen),
        "open" => Some(BreakerState::Open),
        _ => None,
    }
}

fn state_from_gauge(v: f64) -> Option<BreakerState> {
    match v {
        0.0 => Some(BreakerState::Closed),
        1.0 => Some(BreakerState::HalfOpen),
        2.0 => Some(BreakerState::Open),
        _ => None,
    }
}

fn find<'a>(e: &'a Exposition, name: &str, like: &Sample) -> Option<&'a Sample> {
    e.samples()
        .find(|s| s.name == name && s.labels == like.labels)
}

fn total(e: Option<&Exposition>, name: &str, keep: impl Fn(&Sample) -> bool) -> f64 {
    e.map_or(0.0, |e| {
        e.samples()
            .filter(|s| s.name == name && keep(s))
            .map(|s| s.value)
            .sum()
    })
}

/// Derives the timeline from scrapes `(t_ms since run start, parsed exposition)` in time order.
/// `start_unix_s` is the run start in Unix seconds (what the engine's timestamps are relative to).
pub fn derive(scrapes: &[(u64, &Exposition)], start_unix_s: f64) -> Timeline {
    let mut tl = Timeline::default();
    let mut current: BTreeMap<String, BreakerState> = BTreeMap::new();
    let mut prev: Option<(u64, &Exposition)> = None;
    for &(t_cur, cur) in scrapes {
        let t_prev = prev.map_or(0, |p| p.0);
        let mut fresh: BTreeMap<String, Vec<Transition>> = BTreeMap::new();
        for s in cur
            .samples()
            .filter(|s| s.name == "breaker_transitions_total")
        {
            let (Some(dep), Some(from), Some(to)) = (
                s.labels.get("dep"),
                s.labels.get("from").and_then(|v| state_from_label(v)),
                s.labels.get("to").and_then(|v| state_from_label(v)),
            ) else {
                continue;
            };
            let before = prev
                .and_then(|p| find(p.1, &s.name, s))
                .map_or(0.0, |p| p.value);
            let delta = if s.value >= before {
                s.value - before
            } else {
                s.value
            };
            if !delta.is_finite() || delta < 0.5 {
                continue;
            }
            let n = (delta.round() as u64).min(MAX_PER_INTERVAL);
            let stamp = find(cur, "breaker_last_transition_timestamp_seconds", s)
                .map(|ts| ((ts.value - start_unix_s) * 1000.0).round())
                .filter(|ms| ms.is_finite())
                .map(|ms| ms as i64)
                .filter(|&ms| {
                    ms >= t_prev as i64 - STAMP_SLACK_MS && ms <= t_cur as i64 + STAMP_SLACK_MS
                });
            let (last_t, timing) = match stamp {
                Some(ms) => (ms.max(0) as u64, Timing::Timestamp),
                None => (t_cur, Timing::Scrape),
            };
            let list = fresh.entry(dep.clone()).or_default();
            for k in 1..n {
                let t = t_prev + (last_t.saturating_sub(t_prev)) * k / n;
                list.push(Transition {
                    dep: dep.clone(),
                    from,
                    to,
                    t_ms: t,
                    timing: Timing::Interpolated,
                });
            }
            list.push(Transition {
                dep: dep.clone(),
                from,
                to,
                t_ms: last_t,
                timing,
            });
        }
        for (dep, events) in fresh {
            let start = current.get(&dep).copied().or_else(|| {
                prev.and_then(|p| {
                    p.1.samples()
                        .find(|s| s.name == "breaker_state" && s.labels.get("dep") == Some(&dep))
                        .and_then(|s| state_from_gauge(s.value))
                })
            });
            let ordered = causal_order(events, start);
            if let Some(last) = ordered.last() {
                current.insert(dep.clone(), last.to);
            }
            tl.transitions.extend(ordered);
        }
        let dt = t_cur.saturating_sub(t_prev) as f64 / 1000.0;
        if dt > 0.0 {
            let p = prev.map(|p| p.1);
            let all = |e| total(e, "requests_total", |_| true);
            let bad = |e| {
                total(e, "requests_total", |s: &Sample| {
                    s.labels.get("outcome").is_some_and(|o| o != "ok")
                })
            };
            tl.rates.push(RatePoint {
                t_ms: t_cur,
                requests_per_s: (all(Some(cur)) - all(p)).max(0.0) / dt,
                errors_per_s: (bad(Some(cur)) - bad(p)).max(0.0) / dt,
            });
        }
        prev = Some((t_cur, cur));
    }
    tl.transitions.sort_by_key(|t| t.t_ms); // stable: per-dep causal order is kept on ties
    tl.states = states(&tl.transitions, scrapes);
    tl
}

/// Orders one interval's transitions of one dep by following the state chain from `start`,
/// earliest first among those that can happen next; times are made non-decreasing.
fn causal_order(mut events: Vec<Transition>, start: Option<BreakerState>) -> Vec<Transition> {
    events.sort_by_key(|t| t.t_ms);
    let mut out: Vec<Transition> = Vec::with_capacity(events.len());
    let mut state = start;
    while !events.is_empty() {
        let i = events
            .iter()
            .position(|e| Some(e.from) == state)
            .unwrap_or(0);
        let mut e = events.remove(i);
        if let Some(last) = out.last() {
            e.t_ms = e.t_ms.max(last.t_ms);
        }
        state = Some(e.to);
        out.push(e);
    }
    out
}

fn states(
    transitions: &[Transition],
    scrapes: &[(u64, &Exposition)],
) -> BTreeMap<String, Vec<StatePoint>> {
    let mut out: BTreeMap<String, Vec<StatePoint>> = BTreeMap::new();
    for t in transitions {
        let v = out.entry(t.dep.clone()).or_insert_with(|| {
            vec![StatePoint {
                t_ms: 0,
                state: t.from,
            }]
        });
        v.push(StatePoint {
            t_ms: t.t_ms,
            state: t.to,
        });
    }
    // Deps that never transitioned: their gauge when first seen (from t = 0: a breaker starts
    // in that state and did not change, or a transition would have been counted).
    for (_, e) in scrapes {
        for s in e.samples().filter(|s| s.name == "breaker_state") {
            if let (Some(dep), Some(state)) = (s.labels.get("dep"), state_from_gauge(s.value)) {
                out.entry(dep.clone())
                    .or_insert_with(|| vec![StatePoint { t_ms: 0, state }]);
            }
        }
    }
    out
}
