//! `[[expect.turn]]`: what came back for the turns a client sent — the harness's turns to an
//! external gateway, or each model call handed to the embedded engine — how many ended in an
//! outcome (`answered`, `error_body`, `http_error`, `timed_out`,
//! `error_event`, `transport_error`, `unfinished`, `truncated`; every turn when no outcome is
//! named), and how long they took; its `reported_model` / `usage` rows are
//! [`super::answer_rows`]. The table as written, its checks, and its pure evaluator over the run's turn
//! rows.
//!
//! A run stopped with turns still out vouches only for what came back: a count that already
//! broke its upper bound, or a turn already slower than allowed, fails; anything else is
//! `not_reached`. A latency bound with no turn to time fails (nothing judged on nothing).
//!
//! A window (`from`, `until`: when the turns were sent, scenario time from the run start or
//! from a fault's start or end with `since`, [`super::anchor`]) narrows a row to the turns sent
//! in it; its witness says how many (`turns_in_window`), and a window no turn was sent in is
//! never a pass.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::anchor::{FaultsSeen, Since, Unanchored, since_text, unanchored_row};
use super::ground::{check_counts, counts_hold, counts_text};
use super::{ExpectKind, ExpectStatus, ExpectationResult, Witness, secs};
use crate::gateway::TurnEnd;

/// One turn as the evaluator sees it: how it ended and how long it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TurnSeen {
    /// How it ended (`None`: unknown, from a report written before outcomes were kept).
    pub outcome: Option<TurnEnd>,
    /// When it was sent, scenario ms since the run start (its due time plus its lag).
    pub sent_ms: u64,
    /// From sending to the end of its answer, ms.
    pub elapsed_ms: u64,
    /// A 2xx answer with no row in the upstream's record (the marker stripped): whether it was
    /// truncated is not known.
    pub unrecorded: bool,
}

/// `[[expect.turn]]`: a bound on the turns of one outcome (all turns when `outcome` is absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectTurn {
    /// Only turns that ended so ([`TurnEnd`]'s names); every turn when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Exactly this many such turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<u64>,
    /// At least this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<u64>,
    /// At most this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<u64>,
    /// Every such turn took at most this long (sent to the end of its answer).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency_at_most: Option<Duration>,
    /// Every such turn took at least this long.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency_at_least: Option<Duration>,
    /// Only turns sent at or after this (scenario time from the run start, or from `since`).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub from: Option<Duration>,
    /// Only turns sent before this.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub until: Option<Duration>,
    /// Count `from` and `until` from a fault's start or end instead of the run start
    /// ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Since>,
    /// Only for this run (the target's kind); all when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// `"served"`: every such 2xx answer named the model the upstream served for its turn
    /// (`super::answer_rows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reported_model: Option<String>,
    /// `"served"`: every such 2xx answer carried the usage the upstream sent for its turn,
    /// where it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
}

impl ExpectTurn {
    pub(crate) fn counts(&self) -> bool {
        self.equals.is_some() || self.at_least.is_some() || self.at_most.is_some()
    }

    pub(crate) fn latency(&self) -> bool {
        self.latency_at_most.is_some() || self.latency_at_least.is_some()
    }

    pub(crate) fn answers(&self) -> bool {
        self.reported_model.is_some() || self.usage.is_some()
    }

    /// True when the row judges only the turns sent in a window.
    fn windowed(&self) -> bool {
        self.from.is_some() || self.until.is_some() || self.since.is_some()
    }

    /// Its window `[from, until)` in scenario ms from the run start, its times counted from
    /// `base` (the run start, or its `since` anchor).
    fn window(&self, base: u64) -> (u64, Option<u64>) {
        let from = base.saturating_add(self.from.map_or(0, ms));
        (from, self.until.map(|u| base.saturating_add(ms(u))))
    }

    /// ` sent in [10.000s, 20.000s) since fault `outage` start` (empty without a window).
    fn window_text(&self, (from, until): (u64, Option<u64>)) -> String {
        if !self.windowed() {
            return String::new();
        }
        let until = until.map_or("the end".to_string(), |u| secs(u as i64));
        format!(
            " sent in [{}, {until}){}",
            secs(from as i64),
            since_text(self.since.as_ref())
        )
    }
}

/// Checks one `[[expect.turn]]`: a known outcome (with the nearest name when misspelt), count
/// bounds and/or latency bounds, consistent, a known policy. The error is the key at fault
/// (`""` for the table itself) and what is wrong.
pub(super) fn check(
    t: &ExpectTurn,
    policy_ok: &dyn Fn(&Option<String>) -> bool,
) -> Result<(), (&'static str, String)> {
    if let Some(o) = &t.outcome
        && TurnEnd::parse(o).is_none()
    {
        let names = TurnEnd::ALL.map(TurnEnd::as_str);
        let hint = crate::util::suggest::closest(o, names)
            .map(|c| format!("did you mean `{c}`? "))
            .unwrap_or_default();
        return Err((
            "outcome",
            format!(
                "unknown outcome `{o}`: {hint}(one of: {})",
                names.join(", ")
            ),
        ));
    }
    if !t.counts() && !t.latency() && !t.answers() {
        return Err((
            "",
            "give `equals`, `at_least`, `at_most`, `latency_at_most`, `latency_at_least`, \
             `reported_model` or `usage`"
                .into(),
        ));
    }
    if t.counts() {
        check_counts(t.equals, t.at_least, t.at_most)?;
    }
    if let (Some(lo), Some(hi)) = (t.latency_at_least, t.latency_at_most)
        && lo > hi
    {
        return Err((
            "latency_at_most",
            "`latency_at_most` is below `latency_at_least`".into(),
        ));
    }
    if let (Some(from), Some(until)) = (t.from, t.until)
        && until <= from
    {
        return Err((
            "until",
            "`until` must come after `from`: the window holds no turn".into(),
        ));
    }
    if !policy_ok(&t.policy) {
        return Err(("policy", "not one of the scenario's policies".into()));
    }
    Ok(())
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(super) fn row(expected: String, observed: String, dep: &str) -> ExpectationResult {
    ExpectationResult::counted(ExpectKind::Turn, dep.to_string(), expected, observed)
}

pub(super) fn finish(
    mut r: ExpectationResult,
    ok: bool,
    certain_fail: bool,
    stopped: bool,
) -> ExpectationResult {
    r.status = match (ok, stopped) {
        (true, false) => ExpectStatus::Pass,
        (false, false) => ExpectStatus::Fail,
        (false, true) if certain_fail => ExpectStatus::Fail,
        _ => ExpectStatus::NotReached,
    };
    r.ok = r.status == ExpectStatus::Pass;
    let dep = r.dep.clone().unwrap_or_default();
    r.detail = if r.status == ExpectStatus::NotReached {
        format!(
            "{dep} {}: not reached (the run stopped with turns still out; observed so far: {})",
            r.expected, r.observed
        )
    } else {
        format!("{dep} {}: observed {}", r.expected, r.observed)
    };
    r
}

/// The rows of `[[expect.turn]]` (already filtered to the run) over the run's `turns`;
/// `stopped`: the run was cut short (turns may still have been out); `faults`: what a window's
/// `since` resolves against.
pub(crate) fn evaluate(
    expect: &[ExpectTurn],
    turns: &[TurnSeen],
    stopped: bool,
    faults: &FaultsSeen<'_>,
) -> Vec<ExpectationResult> {
    let mut out = Vec::new();
    for e in expect {
        let subject = e.outcome.as_deref().unwrap_or("any");
        let dep = format!("turns {subject}");
        let anchor = match faults.anchor(e.since.as_ref()) {
            Ok(a) => a,
            Err(why) => {
                out.extend(unanchored(e, &dep, &why, stopped));
                continue;
            }
        };
        let window = e.window(anchor.as_ref().map_or(0, |a| a.at_ms));
        let in_window: Vec<&TurnSeen> = turns
            .iter()
            .filter(|t| t.sent_ms >= window.0 && window.1.is_none_or(|u| t.sent_ms < u))
            .collect();
        let sent = in_window.len() as u64;
        // A window no turn was sent in judges nothing: never a pass.
        let empty = e.windowed() && sent == 0;
        let scope = e.window_text(window);
        let mark = |mut r: ExpectationResult| {
            if e.windowed() {
                r.witness.set("turns_in_window", sent);
            }
            if empty {
                r.detail = format!("{}; no turn was sent in the window", r.detail);
            }
            if let Some(a) = &anchor {
                a.mark(&mut r);
            }
            r
        };
        let want = e.outcome.as_deref().and_then(TurnEnd::parse);
        let matching: Vec<&TurnSeen> = in_window
            .iter()
            .copied()
            .filter(|t| want.is_none_or(|w| t.outcome == Some(w)))
            .collect();
        if e.counts() {
            let n = matching.len() as u64;
            let ok = counts_hold(n, e.equals, e.at_least, e.at_most) && !empty;
            let over = e.equals.or(e.at_most).is_some_and(|hi| n > hi);
            let expected = format!("{}{scope}", counts_text(e.equals, e.at_least, e.at_most));
            let observed = if e.windowed() {
                format!("{n} of {sent} turns sent in the window ({} in all)", turns.len())
            } else {
                format!("{n} of {} turns", turns.len())
            };
            // Truncation is read from the upstream's record: answers with no row there are
            // not known to be whole, so no count of truncated turns holds over them.
            let unrecorded = in_window.iter().filter(|t| t.unrecorded).count() as u64;
            let blind = want == Some(TurnEnd::Truncated) && unrecorded > 0;
            let observed = if blind {
                format!(
                    "{observed}; {unrecorded} answers with no row in the upstream's record \
                     (the turn marker stripped?): truncation not known"
                )
            } else {
                observed
            };
            let mut r = row(expected, observed, &dep);
            r.witness = Witness::of(&[("turns", turns.len() as u64), ("matching", n)]);
            if want == Some(TurnEnd::Truncated) {
                r.witness.set("turns_unrecorded", unrecorded);
            }
            out.push(mark(finish(r, ok && !blind, over || blind, stopped)));
        }
        if e.latency() {
            let (lo, hi) = (e.latency_at_least.map(ms), e.latency_at_most.map(ms));
            let fastest = matching.iter().map(|t| t.elapsed_ms).min();
            let slowest = matching.iter().map(|t| t.elapsed_ms).max();
            let expected = match (lo, hi) {
                (Some(l), Some(h)) => {
                    format!("latency in [{}, {}]", secs(l as i64), secs(h as i64))
                }
                (Some(l), None) => format!("latency >= {}", secs(l as i64)),
                (None, Some(h)) => format!("latency <= {}", secs(h as i64)),
                (None, None) => "latency".into(),
            };
            let expected = format!("{expected}{scope}");
            let observed = match (fastest, slowest) {
                (Some(a), Some(b)) => format!(
                    "{} turns, {}..{}",
                    matching.len(),
                    secs(a as i64),
                    secs(b as i64)
                ),
                _ => "no such turn to time".into(),
            };
            // A turn cut at the turn timeout has no latency: it took longer than its elapsed
            // time, so no upper bound holds for it, whatever the bound says.
            let cut = matching
                .iter()
                .filter(|t| t.outcome == Some(TurnEnd::TimedOut))
                .count() as u64;
            let timed = matching.len() as u64 - cut;
            let too_slow = hi.is_some_and(|h| cut > 0 || slowest.is_some_and(|s| s > h));
            let too_fast = lo.is_some_and(|l| fastest.is_some_and(|f| f < l));
            let ok = !matching.is_empty() && !too_slow && !too_fast;
            let observed = if cut > 0 {
                format!("{observed}; {cut} cut at the turn timeout (no latency)")
            } else {
                observed
            };
            let mut r = row(expected, observed, &dep);
            r.observed_ms = slowest.map(|s| s as i64);
            r.expected_ms = hi.or(lo).map(|t| t as i64);
            r.witness = Witness::of(&[
                ("turns", matching.len() as u64),
                ("turns_timed", timed),
                ("turns_cut", cut),
            ]);
            out.push(mark(finish(r, ok, too_slow || too_fast, stopped)));
        }
    }
    out
}

/// The rows of `e` whose window's `since` has no instant (its fault never applied): each
/// row it would have given, never a pass ([`unanchored_row`]).
fn unanchored(e: &ExpectTurn, dep: &str, why: &Unanchored, stopped: bool) -> Vec<ExpectationResult> {
    let mut texts = Vec::new();
    let scope = e.window_text(e.window(0));
    if e.counts() {
        texts.push(counts_text(e.equals, e.at_least, e.at_most));
    }
    if e.latency() {
        texts.push("latency".to_string());
    }
    texts
        .into_iter()
        .map(|t| {
            let mut r = row(format!("{t}{scope}"), String::new(), dep);
            unanchored_row(&mut r, dep, why, stopped);
            r
        })
        .collect()
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod window_tests;
