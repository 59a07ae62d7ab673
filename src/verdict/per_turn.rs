//! `[[expect.per_turn]]`: what each turn cost and who answered it, from the upstream's turns
//! ([`super::turns::TurnRow`]) for any system under test — its upstream requests (at most N:
//! retry amplification), its retries on the same profile, the profile and model that
//! answered, its time to answer. A turn *matches* when every condition given holds; the row
//! holds when every judged turn matches, or, with `turns_at_least`/`turns_at_most`, when that
//! many do. Judged turns: those that sent a model request, first in the window (`from`,
//! `until`, counted from the run start or a `since` anchor); requests with no turn (a
//! gateway's own calls) are counted apart, never judged. A gateway that strips the turn marker
//! leaves nothing to judge: the row fails saying so. The table and its pure judge;
//! docs/scenario.md "Cooldowns and turns".

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::anchor::Since;
use super::ground::counts_text;
use super::turn_facts::{TurnFacts, is_model, is_of, ms, settle, stripped};
use super::turns::TurnRow;
use super::{ExpectKind, ExpectationResult, Witness, secs};

/// `[[expect.per_turn]]` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectPerTurn {
    /// A turn sent at most this many model requests to the upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_at_most: Option<u64>,
    /// A turn sent at least this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_at_least: Option<u64>,
    /// A turn retried the same profile and model at most this many times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_profile_retries_at_most: Option<u64>,
    /// A turn was answered by this profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by_profile: Option<String>,
    /// A turn was answered by this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by_model: Option<String>,
    /// A turn was answered within this long of its first request.
    #[serde(default, with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub answer_within: Option<Duration>,
    /// At least this many turns match (default: every judged turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_at_least: Option<u64>,
    /// At most this many turns match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_at_most: Option<u64>,
    /// Only turns whose first request arrived at or after this (scenario time from the run
    /// start, or from the `since` anchor).
    #[serde(default, with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub from: Option<Duration>,
    /// Only turns whose first request arrived before this.
    #[serde(default, with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub until: Option<Duration>,
    /// Count `from`/`until` from a fault's start or end ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Since>,
    /// Only for this policy run (or target).
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

impl ExpectPerTurn {
    /// Whether it bounds how many turns match (else: every judged turn).
    pub(crate) fn counts(&self) -> bool {
        self.turns_at_least.is_some() || self.turns_at_most.is_some()
    }

    /// Its checks before the run (profile and model are checked against the scenario in
    /// `scenario`): a bare message naming the field.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if self.requests_at_most.is_none()
            && self.requests_at_least.is_none()
            && self.same_profile_retries_at_most.is_none()
            && self.answered_by_profile.is_none()
            && self.answered_by_model.is_none()
            && self.answer_within.is_none()
        {
            return Err((
                "requests_at_most",
                "give a condition on each turn: `requests_at_most`, `requests_at_least`, \
                 `same_profile_retries_at_most`, `answered_by_profile`, `answered_by_model` or \
                 `answer_within`"
                    .into(),
            ));
        }
        if let (Some(lo), Some(hi)) = (self.requests_at_least, self.requests_at_most)
            && lo > hi
        {
            return Err(("requests_at_most", "`requests_at_most` is below `requests_at_least`".into()));
        }
        if let (Some(lo), Some(hi)) = (self.turns_at_least, self.turns_at_most)
            && lo > hi
        {
            return Err(("turns_at_most", "`turns_at_most` is below `turns_at_least`".into()));
        }
        if let (Some(from), Some(until)) = (self.from, self.until)
            && from >= until
        {
            return Err(("until", "`until` must be after `from`".into()));
        }
        Ok(())
    }

    /// Whether turn `t` meets every condition.
    fn matches(&self, t: &TurnRow) -> bool {
        self.matches_but_time(t)
            && self
                .answer_within
                .is_none_or(|w| t.answer_ms.is_some_and(|a| a <= ms(w)))
    }

    /// Whether whether turn `t` matches cannot be told: it meets every condition but
    /// `answer_within`, and its answer's end was not recorded (a recording made before
    /// `done_ms`).
    fn undecided(&self, t: &TurnRow) -> bool {
        self.answer_within.is_some() && t.answer_end_unknown() && self.matches_but_time(t)
    }

    /// Whether turn `t` meets every condition but `answer_within`.
    fn matches_but_time(&self, t: &TurnRow) -> bool {
        let n = t.requests.iter().filter(|q| is_model(q)).count() as u64;
        let answer = t.answer();
        self.requests_at_most.is_none_or(|h| n <= h)
            && self.requests_at_least.is_none_or(|l| n >= l)
            && self
                .same_profile_retries_at_most
                .is_none_or(|h| u64::from(t.same_profile_retries) <= h)
            && self.answered_by_profile.as_deref().is_none_or(|p| {
                answer.is_some_and(|a| is_of(a, Some(p), None))
            })
            && self.answered_by_model.as_deref().is_none_or(|m| {
                answer.is_some_and(|a| is_of(a, None, Some(m)))
            })
            && (self.answer_within.is_none() || answer.is_some())
    }

    fn condition(&self) -> String {
        let mut c = Vec::new();
        if let Some(h) = self.requests_at_most {
            c.push(format!("<= {h} requests"));
        }
        if let Some(l) = self.requests_at_least {
            c.push(format!(">= {l} requests"));
        }
        if let Some(h) = self.same_profile_retries_at_most {
            c.push(format!("<= {h} same-profile retries"));
        }
        if let Some(p) = &self.answered_by_profile {
            c.push(format!("answered by {p}"));
        }
        if let Some(m) = &self.answered_by_model {
            c.push(format!("answered by {m}"));
        }
        if let Some(w) = self.answer_within {
            c.push(format!("answered within {}", secs(ms(w) as i64)));
        }
        c.join(", ")
    }

    fn expected(&self, from: u64, until: Option<u64>) -> String {
        let how_many = if self.counts() {
            format!("turns {}", counts_text(None, self.turns_at_least, self.turns_at_most))
        } else {
            "every turn".into()
        };
        let window = if self.from.is_some() || self.until.is_some() || self.since.is_some() {
            format!(
                " in [{}, {})",
                secs(from as i64),
                until.map_or("end".into(), |u| secs(u as i64))
            )
        } else {
            String::new()
        };
        let since = self
            .since
            .as_ref()
            .map_or(String::new(), |s| format!(" since {}", s.label()));
        format!("{how_many}{window}{since}: {}", self.condition())
    }
}

/// One `[[expect.per_turn]]` row judged on `f`.
pub(crate) fn judge(e: &ExpectPerTurn, f: &TurnFacts<'_>) -> ExpectationResult {
    let mut r = ExpectationResult::counted(
        ExpectKind::PerTurn,
        "turns".into(),
        e.expected(0, None),
        String::new(),
    );
    if let Some(why) = &f.part.unreadable {
        r.observed = "turns unreadable".into();
        r.witness = Witness::of(&[("unreadable", 1), ("unmarked_requests", f.part.unmarked_requests)]);
        r.detail = format!("turns {}: {}", r.expected, stripped(why));
        return r;
    }
    let anchor = match f.anchor(e.since.as_ref()) {
        Ok(a) => a,
        Err(why) => {
            r.observed = "no anchor".into();
            r.witness = Witness::of(&[("fault_applications", 0)]);
            return settle(r, false, false, f, &why.0, "turns");
        }
    };
    let base = anchor.as_ref().map_or(0, |a| a.at_ms);
    let from = base.saturating_add(e.from.map_or(0, ms));
    let until = e.until.map(|u| base.saturating_add(ms(u)));
    r.expected = e.expected(from, until);
    let all = f.turns_between(0, None);
    let judged = f.turns_between(from, until);
    let matching: Vec<&&TurnRow> = judged.iter().filter(|t| e.matches(t)).collect();
    let (n, total) = (matching.len() as u64, judged.len() as u64);
    let requests = |t: &TurnRow| t.requests.iter().filter(|q| is_model(q)).count() as u64;
    let most = judged.iter().map(|t| requests(t)).max().unwrap_or(0);
    let retries = judged.iter().map(|t| u64::from(t.same_profile_retries)).max().unwrap_or(0);
    let slowest = judged.iter().filter_map(|t| t.answer_ms).max();
    let answered = judged.iter().filter(|t| t.answer().is_some()).count() as u64;
    let undecided = judged.iter().filter(|t| e.undecided(t)).count() as u64;
    let first_miss = judged.iter().find(|t| !e.matches(t) && !e.undecided(t));
    r.observed = format!(
        "{n} of {total} turns (most requests {most}, most same-profile retries {retries}{})",
        slowest.map_or(String::new(), |s| format!(", slowest answer {}", secs(s as i64)))
    );
    r.observed_ms = slowest.map(|s| s as i64);
    r.expected_ms = e.answer_within.map(|w| ms(w) as i64);
    r.witness = Witness::of(&[
        ("turns_judged", total),
        ("turns_matching", n),
        ("turns_answered", answered),
        ("turns_outside_window", all.len() as u64 - total),
        ("unmarked_requests", f.part.unmarked_requests),
        ("most_requests", most),
        ("most_same_profile_retries", retries),
    ]);
    if let Some(s) = slowest {
        r.witness.set("slowest_answer_ms", s);
    }
    if undecided > 0 {
        r.witness.set("answers_without_end", undecided);
    }
    if let Some(a) = &anchor {
        r.witness.set("anchor_ms", a.at_ms);
        r.witness.set("fault_applications", a.applications);
    }
    let (ok, certain, why) = if total == 0 {
        (false, false, "no turn in the window sent a model request: nothing to judge".to_string())
    } else if e.counts() {
        // The undecided turns may match or not: a pass holds either way, a failure too.
        let hold = |k: u64| counts_hold(k, None, e.turns_at_least, e.turns_at_most);
        let ok = hold(n) && hold(n + undecided);
        let over = e.turns_at_most.is_some_and(|h| n > h);
        let under = e.turns_at_least.is_some_and(|l| n + undecided < l);
        (ok, over || (under && undecided > 0), format!("{n} turns match, expected {}", counts_text(None, e.turns_at_least, e.turns_at_most)))
    } else {
        let why = first_miss.map_or(String::new(), |t| miss(t));
        (first_miss.is_none() && undecided == 0, first_miss.is_some(), why)
    };
    let mut r = settle(r, ok, certain, f, &why, "turns");
    if !ok && !certain && undecided > 0 && r.status == super::ExpectStatus::Fail {
        // Not a failure it can stand by: the unknown times might have been within the bound.
        r.status = super::ExpectStatus::NotReached;
        r.detail = format!(
            "turns {}: not judged — {undecided} answered turn{} {} no recorded end of the \
             upstream's answer (`done_ms`: a recording made before it), so {} time to answer \
             is unknown (observed so far: {})",
            r.expected,
            if undecided == 1 { "" } else { "s" },
            if undecided == 1 { "has" } else { "have" },
            if undecided == 1 { "its" } else { "their" },
            r.observed
        );
    }
    match &anchor {
        Some(a) => {
            let mut r = r;
            r.detail = format!("{}; times from {}", r.detail, a.text);
            r
        }
        None => r,
    }
}

use super::ground::counts_hold;

/// What one turn that did not match did: its number, requests and answer.
fn miss(t: &TurnRow) -> String {
    let who = t.answer().map_or("no answer".to_string(), |a| {
        let took = match (t.answer_ms, a.done_ms) {
            (Some(ms), Some(done)) => format!(
                "after {} (its request arrived at {}, the upstream finished serving it at {})",
                secs(ms as i64),
                secs(a.t_ms as i64),
                secs(done as i64)
            ),
            _ => "at an unrecorded end".to_string(),
        };
        format!(
            "answered by {} {} {took}",
            a.profile.as_deref().unwrap_or("?"),
            a.model.as_deref().unwrap_or("?"),
        )
    });
    format!(
        "turn {} at {}: {} requests, {} same-profile retries, {who}",
        t.turn,
        secs(t.first_ms() as i64),
        t.requests.iter().filter(|q| is_model(q)).count(),
        t.same_profile_retries
    )
}

#[cfg(test)]
mod tests;
