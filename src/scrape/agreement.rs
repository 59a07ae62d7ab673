//! The event log against the scrapes. A run's breaker transitions are timed by the engine's
//! events (events.jsonl: the exact instant of each change); the scrapes are what an operator's
//! Prometheus would have seen. [`crosscheck`] compares the two and lists every disagreement,
//! so none is silently resolved:
//!
//! - **state**: a scrape's `breaker_state{dep}` is a state the events do not give that dep at
//!   any instant the scrape could have been rendered (after the previous scrape was read, up to
//!   this one's read; ±1 ms for rounding). Consecutive scrapes with the same mismatch make one row.
//! - **late**: a transition in the events that a scrape *started after it* still did not count
//!   in `breaker_transitions_total` (so it reached the scrapes more than one scrape interval
//!   after the event); the row says when a scrape first counted it, if one did.
//! - **not_in_events**: the scrapes count more transitions of a kind than the events hold.
//!
//! A transition after the start of the last scrape cannot be checked and is left out. (The
//! harness adds a **truncated** row when it kept fewer transitions than events.jsonl holds.)

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::parse::Exposition;
use super::timeline::{Transition, state_from_label};
use crate::engine::events::BreakerState;
use crate::util::speed::Speed;
use crate::util::units::{num, secs};

/// Most rows reported (a broken exporter must not flood the report); the last row says how
/// many more there were.
const MAX_ROWS: usize = 200;

/// What kind of disagreement a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DisagreementKind {
    /// A scrape's state gauge shows a state the events do not have at that time.
    State,
    /// A transition reached the scrapes more than one scrape interval after the event.
    Late,
    /// The scrapes count a transition the events do not hold.
    NotInEvents,
    /// The run kept fewer transitions than events.jsonl holds (a memory cap).
    Truncated,
}

/// One disagreement between events.jsonl and the scrapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    /// What disagrees.
    pub kind: DisagreementKind,
    /// The dep.
    pub dep: String,
    /// When it starts, ms since the run start (the event's time, or the first scrape's).
    pub t_ms: u64,
    /// One line saying what each side shows.
    pub detail: String,
}

/// The events' state of every dep as a step function (breakers start closed).
struct EventStates<'a> {
    by_dep: BTreeMap<&'a str, Vec<&'a Transition>>,
}

impl<'a> EventStates<'a> {
    fn new(events: &'a [Transition]) -> Self {
        let mut by_dep: BTreeMap<&str, Vec<&Transition>> = BTreeMap::new();
        for t in events {
            by_dep.entry(t.dep.as_str()).or_default().push(t);
        }
        Self { by_dep }
    }

    /// The state after every transition strictly before `t_ms`.
    fn before(&self, dep: &str, t_ms: u64) -> BreakerState {
        self.by_dep
            .get(dep)
            .and_then(|v| v.iter().take_while(|t| t.t_ms < t_ms).last())
            .map_or(BreakerState::Closed, |t| t.to)
    }

    /// Every state `dep` had at some instant of `[from, to]`.
    fn during(&self, dep: &str, from: u64, to: u64) -> Vec<BreakerState> {
        let mut out = vec![self.before(dep, from)];
        if let Some(v) = self.by_dep.get(dep) {
            out.extend(
                v.iter()
                    .filter(|t| t.t_ms >= from && t.t_ms <= to)
                    .map(|t| t.to),
            );
        }
        out
    }
}

fn gauge_state(v: f64) -> Option<BreakerState> {
    match v {
        0.0 => Some(BreakerState::Closed),
        1.0 => Some(BreakerState::HalfOpen),
        2.0 => Some(BreakerState::Open),
        _ => None,
    }
}

/// `breaker_transitions_total` per (dep, from, to) in one scrape.
fn counters(e: &Exposition) -> BTreeMap<(String, BreakerState, BreakerState), f64> {
    let mut out = BTreeMap::new();
    for s in e
        .samples()
        .filter(|s| s.name == "breaker_transitions_total")
    {
        if let (Some(dep), Some(from), Some(to)) = (
            s.labels.get("dep"),
            s.labels.get("from").and_then(|v| state_from_label(v)),
            s.labels.get("to").and_then(|v| state_from_label(v)),
        ) {
            out.insert((dep.clone(), from, to), s.value);
        }
    }
    out
}

fn arrow(from: BreakerState, to: BreakerState) -> String {
    format!("{}→{}", from.as_str(), to.as_str())
}

/// A run time (wall-clock ms) as the report says it: seconds of scenario time (× `speed`).
fn said(ms: u64, speed: Speed) -> String {
    secs(speed.scenario_ms_u(ms) as i64)
}

/// Compares the event-timed `events` (time-ordered) with `scrapes` (`(t_ms, exposition)` in
/// time order); `interval_ms` is the scrape interval at the run's speed (for the wording).
/// Times are compared as given (run ms); the rows' wording says them in scenario time
/// (× `speed`), like the rest of the report (their `t_ms` stays run ms for the caller to
/// convert).
pub fn crosscheck(
    events: &[Transition],
    scrapes: &[(u64, &Exposition)],
    interval_ms: u64,
    speed: Speed,
) -> Vec<Disagreement> {
    let mut out = Vec::new();
    state_rows(events, scrapes, speed, &mut out);
    transition_rows(events, scrapes, (interval_ms, speed), &mut out);
    out.sort_by_key(|d| d.t_ms);
    if out.len() > MAX_ROWS {
        let more = out.len() - MAX_ROWS;
        out.truncate(MAX_ROWS);
        if let Some(last) = out.last_mut() {
            last.detail.push_str(&format!(" (and {more} more rows)"));
        }
    }
    out
}

fn state_rows(
    events: &[Transition],
    scrapes: &[(u64, &Exposition)],
    speed: Speed,
    out: &mut Vec<Disagreement>,
) {
    let states = EventStates::new(events);
    // Per dep, the open row: (gauge state, event state, first t, last t, scrapes).
    let mut open: BTreeMap<String, (BreakerState, BreakerState, u64, u64, u64)> = BTreeMap::new();
    let close = |dep: String, row: (BreakerState, BreakerState, u64, u64, u64)| {
        let (shown, had, first, last, n) = row;
        let when = if n == 1 {
            format!("the scrape at {}", said(first, speed))
        } else {
            format!(
                "{n} scrapes from {} to {}",
                said(first, speed),
                said(last, speed)
            )
        };
        Disagreement {
            kind: DisagreementKind::State,
            detail: format!(
                "{when} show {dep} {}; events.jsonl has it {} then",
                shown.as_str(),
                had.as_str()
            ),
            dep,
            t_ms: first,
        }
    };
    let mut prev_t: u64 = 0;
    for &(t, e) in scrapes {
        let mut seen = Vec::new();
        for s in e.samples().filter(|s| s.name == "breaker_state") {
            let (Some(dep), Some(shown)) = (s.labels.get("dep"), gauge_state(s.value)) else {
                continue;
            };
            seen.push(dep.clone());
            let window = states.during(dep, prev_t.saturating_sub(1), t.saturating_add(1));
            if window.contains(&shown) {
                if let Some(row) = open.remove(dep) {
                    out.push(close(dep.clone(), row));
                }
                continue;
            }
            let had = states.before(dep, t.saturating_add(1));
            match open.get_mut(dep) {
                Some(row) if row.0 == shown && row.1 == had => {
                    row.3 = t;
                    row.4 += 1;
                }
                _ => {
                    if let Some(row) = open.insert(dep.clone(), (shown, had, t, t, 1)) {
                        out.push(close(dep.clone(), row));
                    }
                }
            }
        }
        // A dep whose gauge vanished ends its row too.
        let gone: Vec<String> = open.keys().filter(|d| !seen.contains(d)).cloned().collect();
        for dep in gone {
            if let Some(row) = open.remove(&dep) {
                out.push(close(dep, row));
            }
        }
        prev_t = t;
    }
    for (dep, row) in open {
        out.push(close(dep, row));
    }
}

fn transition_rows(
    events: &[Transition],
    scrapes: &[(u64, &Exposition)],
    (interval_ms, speed): (u64, Speed),
    out: &mut Vec<Disagreement>,
) {
    let counts: Vec<(u64, BTreeMap<_, f64>)> =
        scrapes.iter().map(|&(t, e)| (t, counters(e))).collect();
    let mut nth: BTreeMap<(String, BreakerState, BreakerState), u64> = BTreeMap::new();
    for ev in events {
        let key = (ev.dep.clone(), ev.from, ev.to);
        let k = {
            let n = nth.entry(key.clone()).or_default();
            *n += 1;
            *n
        };
        // The first scrape that started after the event (the previous one was read by then).
        let Some(due) = (1..counts.len()).find(|&i| counts[i - 1].0 > ev.t_ms.saturating_add(1))
        else {
            continue; // after the last scrape started: cannot be checked
        };
        let has = |i: usize| counts[i].1.get(&key).is_some_and(|&v| v + 0.5 >= k as f64);
        if has(due) {
            continue;
        }
        let seen = (due..counts.len()).find(|&i| has(i)).map(|i| counts[i].0);
        let what = format!(
            "{} {} at {} in events.jsonl",
            ev.dep,
            arrow(ev.from, ev.to),
            said(ev.t_ms, speed)
        );
        let detail = match seen {
            Some(s) => format!(
                "{what}, first counted by the scrape at {} ({} later; scrape interval {})",
                said(s, speed),
                said(s.saturating_sub(ev.t_ms), speed),
                said(interval_ms, speed)
            ),
            None => format!("{what}, never counted by any scrape"),
        };
        out.push(Disagreement {
            kind: DisagreementKind::Late,
            dep: ev.dep.clone(),
            t_ms: ev.t_ms,
            detail,
        });
    }
    if let Some((t, last)) = counts.last() {
        for ((dep, from, to), v) in last {
            let have = nth.get(&(dep.clone(), *from, *to)).copied().unwrap_or(0);
            if v.is_finite() && *v > have as f64 + 0.5 {
                out.push(Disagreement {
                    kind: DisagreementKind::NotInEvents,
                    dep: dep.clone(),
                    t_ms: *t,
                    detail: format!(
                        "the last scrape counts {} {dep} {} transitions, events.jsonl {have}",
                        num(*v),
                        arrow(*from, *to)
                    ),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
