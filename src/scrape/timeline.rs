//! The breaker timeline derived from successive scrapes: per-dep transitions (from
//! `breaker_transitions_total` deltas, timed by `breaker_last_transition_timestamp_seconds`
//! when it falls inside the scrape interval, else by the scrape time), the state of every
//! breaker over time, and the request and error rates per scrape interval. [`Builder`] derives
//! it one scrape at a time in memory that does not grow with the number of scrapes (the run
//! keeps no scrape but the last); [`derive`] is the same over a slice of scrapes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::parse::{Exposition, Sample};
use super::rates::Rates;
pub use super::rates::{MAX_RATE_POINTS, RatePoint};
use crate::engine::breaker::TripReason;
use crate::engine::events::BreakerState;

/// Slack (ms) allowed between a transition timestamp and the scrape interval it was seen in.
const STAMP_SLACK_MS: i64 = 250;
/// Cap on transitions derived from one counter delta (a counter reset to garbage stays bounded).
const MAX_PER_INTERVAL: u64 = 10_000;

/// How an observed transition's time was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// The engine's own event (events.jsonl): the exact instant of the change.
    Event,
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
    /// For transitions to open, which rule tripped the breaker (only the event log knows it;
    /// transitions derived from scrapes have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<TripReason>,
}

/// A breaker's state from `t_ms` on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StatePoint {
    /// Milliseconds since the run start.
    pub t_ms: u64,
    /// The state from then on.
    pub state: BreakerState,
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
pub(crate) fn state_from_label(s: &str) -> Option<BreakerState> {
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
/// The same as feeding every scrape to a [`Builder`] in order.
pub fn derive(scrapes: &[(u64, &Exposition)], start_unix_s: f64) -> Timeline {
    let mut b = Builder::new(start_unix_s);
    for &(t_ms, e) in scrapes {
        b.push(t_ms, e);
    }
    b.timeline()
}

/// The previous scrape, reduced to what the next [`Builder::push`] reads of it.
#[derive(Debug, Clone, Default)]
struct Prev {
    t_ms: u64,
    /// `breaker_transitions_total` by label set (the first sample of each).
    transitions: BTreeMap<BTreeMap<String, String>, f64>,
    /// The first `breaker_state` sample of each dep, raw.
    state: BTreeMap<String, f64>,
    /// Sum of every `requests_total` series.
    requests: f64,
    /// Sum of the `requests_total` series with an outcome other than `ok`.
    errors: f64,
}

impl Prev {
    fn of(t_ms: u64, e: &Exposition) -> Self {
        let mut p = Prev {
            t_ms,
            ..Prev::default()
        };
        for s in e.samples() {
            match s.name.as_str() {
                "breaker_transitions_total" => {
                    p.transitions.entry(s.labels.clone()).or_insert(s.value);
                }
                "breaker_state" => {
                    if let Some(dep) = s.labels.get("dep") {
                        p.state.entry(dep.clone()).or_insert(s.value);
                    }
                }
                _ => {}
            }
        }
        p.requests = total(Some(e), "requests_total", |_| true);
        p.errors = total(Some(e), "requests_total", |s: &Sample| {
            s.labels.get("outcome").is_some_and(|o| o != "ok")
        });
        p
    }
}

/// The timeline derived one scrape at a time, keeping only what later scrapes and the result
/// need: the previous scrape's transition counters, state gauges and request sums, every
/// transition (a state change is never dropped), the first state seen of every dep, and at most
/// [`MAX_RATE_POINTS`] rate points. Its size does not grow with the number of scrapes, only with
/// the number of transitions.
#[derive(Debug, Clone)]
pub(crate) struct Builder {
    start_unix_s: f64,
    transitions: Vec<Transition>,
    current: BTreeMap<String, BreakerState>,
    first_state: BTreeMap<String, BreakerState>,
    prev: Option<Prev>,
    rates: Rates,
}

impl Builder {
    /// An empty timeline of a run that started at `start_unix_s` (Unix seconds).
    pub(crate) fn new(start_unix_s: f64) -> Self {
        Self {
            start_unix_s,
            transitions: Vec::new(),
            current: BTreeMap::new(),
            first_state: BTreeMap::new(),
            prev: None,
            rates: Rates::default(),
        }
    }

    /// Adds the next parsed scrape, taken `t_cur` ms after the run start (times in order).
    pub(crate) fn push(&mut self, t_cur: u64, cur: &Exposition) {
        let prev = self.prev.as_ref();
        let t_prev = prev.map_or(0, |p| p.t_ms);
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
                .and_then(|p| p.transitions.get(&s.labels))
                .copied()
                .unwrap_or(0.0);
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
                .map(|ts| ((ts.value - self.start_unix_s) * 1000.0).round())
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
                    reason: None,
                });
            }
            list.push(Transition {
                dep: dep.clone(),
                from,
                to,
                t_ms: last_t,
                timing,
                reason: None,
            });
        }
        for (dep, events) in fresh {
            let start = self.current.get(&dep).copied().or_else(|| {
                prev.and_then(|p| p.state.get(&dep))
                    .and_then(|&v| state_from_gauge(v))
            });
            let ordered = causal_order(events, start);
            if let Some(last) = ordered.last() {
                self.current.insert(dep.clone(), last.to);
            }
            self.transitions.extend(ordered);
        }
        let next = Prev::of(t_cur, cur);
        let dt_ms = t_cur.saturating_sub(t_prev);
        if dt_ms > 0 {
            let dt = dt_ms as f64 / 1000.0;
            let (all, bad) = prev.map_or((0.0, 0.0), |p| (p.requests, p.errors));
            let point = RatePoint {
                t_ms: t_cur,
                requests_per_s: (next.requests - all).max(0.0) / dt,
                errors_per_s: (next.errors - bad).max(0.0) / dt,
            };
            self.rates.push(point, dt_ms);
        }
        // Deps that never transition get their gauge when first seen (see `states`).
        for s in cur.samples().filter(|s| s.name == "breaker_state") {
            if let (Some(dep), Some(state)) = (s.labels.get("dep"), state_from_gauge(s.value)) {
                self.first_state.entry(dep.clone()).or_insert(state);
            }
        }
        self.prev = Some(next);
    }

    /// The timeline so far.
    /// Per dep, its `breaker_state` when a scrape first showed it.
    pub(crate) fn first_states(&self) -> &BTreeMap<String, BreakerState> {
        &self.first_state
    }

    pub(crate) fn timeline(&self) -> Timeline {
        let mut transitions = self.transitions.clone();
        transitions.sort_by_key(|t| t.t_ms); // stable: per-dep causal order is kept on ties
        let states = states(&transitions, &self.first_state);
        Timeline {
            transitions,
            states,
            rates: self.rates.points(),
        }
    }
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

/// Per dep, the state as a step function from t = 0 through `transitions` (time-ordered); deps
/// that never transitioned get their gauge from the first scrape that shows them.
pub(crate) fn states(
    transitions: &[Transition],
    first_state: &BTreeMap<String, BreakerState>,
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
    for (dep, &state) in first_state {
        out.entry(dep.clone())
            .or_insert_with(|| vec![StatePoint { t_ms: 0, state }]);
    }
    out
}

#[cfg(test)]
mod tests;
