//! `[[expect.cooldown]]`: a profile's (or a model's on a profile) cooldowns as the upstream's
//! turns show them, for any system under test — the quiet period from a failed request of the
//! subject to its next request, counted only while turns that could have used it went
//! elsewhere ([`super::turns::cooldowns_of`]; those turns are its witness). Bounds on each
//! cooldown's length (`cooled` ± `tolerance`, `at_least`, `at_most`, `until_retry_after`: at
//! least the wait the failing response's `Retry-After` told), on how many there were
//! (`count`, `count_at_least`, `count_at_most`; at least one when none is given), or `never`
//! (which needs turns that could have used the subject: none is no pass). The table and its
//! pure judge; docs/scenario.md "Cooldowns and turns".

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::anchor::Since;
use super::ground::{counts_hold, counts_text};
use super::turn_facts::{TurnFacts, is_of, ms, settle, stripped};
use super::turns::{Cooldown, cooldowns_of};
use super::{ExpectKind, ExpectationResult, Witness, secs};

/// `[[expect.cooldown]]` as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectCooldown {
    /// The profile id (a `[[profile]]`).
    pub profile: String,
    /// Only its requests naming this model (a deployment: a model on a key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Each cooldown lasted this long, ± `tolerance`.
    #[serde(default, with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub cooled: Option<Duration>,
    /// Slack around `cooled` and above the Retry-After of `until_retry_after` (default 0).
    #[serde(default, with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Duration>,
    /// Each cooldown at least this long.
    #[serde(default, with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub at_least: Option<Duration>,
    /// Each cooldown at most this long.
    #[serde(default, with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub at_most: Option<Duration>,
    /// Each cooldown lasted at least the wait its failing response's `Retry-After` told (and,
    /// with `tolerance`, at most that plus the tolerance).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub until_retry_after: bool,
    /// Exactly this many cooldowns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// At least this many (default 1 when no count bound is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_at_least: Option<u64>,
    /// At most this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_at_most: Option<u64>,
    /// No cooldown at all, while turns could have used it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub never: bool,
    /// Only cooldowns that began at or after a fault's start or end ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Since>,
    /// Only for this policy run (or target).
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

impl ExpectCooldown {
    /// The subject as a row names it: `key-a` or `key-a openai/gpt-4o`.
    pub(crate) fn subject(&self) -> String {
        match &self.model {
            Some(m) => format!("{} {m}", self.profile),
            None => self.profile.clone(),
        }
    }

    /// Bounds on each cooldown's length, scenario ms, without the Retry-After's: (lowest,
    /// highest).
    fn length_bounds(&self) -> (Option<u64>, Option<u64>) {
        let tol = self.tolerance.map_or(0, ms);
        let lo = [
            self.at_least.map(ms),
            self.cooled.map(|c| ms(c).saturating_sub(tol)),
        ]
        .into_iter()
        .flatten()
        .max();
        let hi = [
            self.at_most.map(ms),
            self.cooled.map(|c| ms(c).saturating_add(tol)),
        ]
        .into_iter()
        .flatten()
        .min();
        (lo, hi)
    }

    /// Whether it bounds lengths at all.
    pub(crate) fn bounds_length(&self) -> bool {
        self.cooled.is_some() || self.at_least.is_some() || self.at_most.is_some() || self.until_retry_after
    }

    /// The count bounds, with the default of at least one.
    fn count_bounds(&self) -> (Option<u64>, Option<u64>, Option<u64>) {
        match (self.count, self.count_at_least, self.count_at_most) {
            (None, None, None) => (None, Some(1), None),
            b => b,
        }
    }

    /// Its checks before the run (the profile and model are checked against the scenario in
    /// `scenario::validate_reach`): a bare message naming the field.
    pub(crate) fn check(&self) -> Result<(), (&'static str, String)> {
        if self.never
            && (self.bounds_length()
                || self.count.is_some()
                || self.count_at_least.is_some()
                || self.count_at_most.is_some())
        {
            return Err(("never", "`never` excludes the length and count bounds".into()));
        }
        if self.tolerance.is_some() && self.cooled.is_none() && !self.until_retry_after {
            return Err(("tolerance", "`tolerance` applies to `cooled` or `until_retry_after`: give one".into()));
        }
        if self.cooled.is_some() && (self.at_least.is_some() || self.at_most.is_some()) {
            return Err(("cooled", "`cooled` ± `tolerance` excludes `at_least`/`at_most`".into()));
        }
        if let (Some(lo), Some(hi)) = (self.at_least, self.at_most)
            && lo > hi
        {
            return Err(("at_most", "`at_most` is below `at_least`".into()));
        }
        if self.count.or(self.count_at_least).or(self.count_at_most).is_none() {
            return Ok(());
        }
        super::ground::check_counts(self.count, self.count_at_least, self.count_at_most)
            .map_err(|(k, m)| {
                let m = m
                    .replace("`equals`", "`count`")
                    .replace("`at_least`", "`count_at_least`")
                    .replace("`at_most`", "`count_at_most`");
                match k {
                    "equals" => ("count", m),
                    _ => ("count_at_most", m),
                }
            })
    }

    fn expected(&self) -> String {
        if self.never {
            return format!("never cooled{}", since_text(self.since.as_ref()));
        }
        let (eq, lo, hi) = self.count_bounds();
        let mut parts = vec![format!("cooldowns {}", counts_text(eq, lo, hi))];
        let tol = self.tolerance.map_or(0, ms);
        if let Some(c) = self.cooled {
            parts.push(format!("each {} ±{}", secs(ms(c) as i64), secs(tol as i64)));
        }
        if let Some(l) = self.at_least {
            parts.push(format!("each >= {}", secs(ms(l) as i64)));
        }
        if let Some(h) = self.at_most {
            parts.push(format!("each <= {}", secs(ms(h) as i64)));
        }
        if self.until_retry_after {
            let up = if self.tolerance.is_some() {
                format!(" (+{})", secs(tol as i64))
            } else {
                String::new()
            };
            parts.push(format!("each until its Retry-After{up}"));
        }
        format!("{}{}", parts.join(", "), since_text(self.since.as_ref()))
    }
}

fn since_text(since: Option<&Since>) -> String {
    since.map_or(String::new(), |s| format!(" since {}", s.label()))
}

/// Why one cooldown breaks the length bounds of `e`, if it does.
fn length_fault(e: &ExpectCooldown, c: &Cooldown) -> Option<String> {
    let (mut lo, mut hi) = e.length_bounds();
    if e.until_retry_after {
        let Some(ra) = c.retry_after_ms else {
            return Some(format!(
                "the failure at {} sent no Retry-After",
                secs(c.from_ms as i64)
            ));
        };
        lo = lo.max(Some(ra));
        if let Some(t) = e.tolerance {
            hi = Some(hi.map_or(ra.saturating_add(ms(t)), |h| h.min(ra.saturating_add(ms(t)))));
        }
    }
    match c.length_ms() {
        Some(len) => {
            if lo.is_some_and(|l| len < l) || hi.is_some_and(|h| len > h) {
                Some(format!(
                    "the one from {} lasted {}",
                    secs(c.from_ms as i64),
                    secs(len as i64)
                ))
            } else {
                None
            }
        }
        // Still cooling at the record's end: its length is not known, so an upper bound is
        // not shown to hold; a lower bound holds only as far as the turns elsewhere reach.
        None => {
            let seen = c.last_elsewhere_ms.unwrap_or(c.from_ms).saturating_sub(c.from_ms);
            if hi.is_some() || lo.is_some_and(|l| seen < l) {
                Some(format!(
                    "the one from {} had not ended by the record's end",
                    secs(c.from_ms as i64)
                ))
            } else {
                None
            }
        }
    }
}

/// One `[[expect.cooldown]]` row judged on `f`.
pub(crate) fn judge(e: &ExpectCooldown, f: &TurnFacts<'_>) -> ExpectationResult {
    let mut r = ExpectationResult::counted(
        ExpectKind::Cooldown,
        e.subject(),
        e.expected(),
        String::new(),
    );
    if let Some(why) = &f.part.unreadable {
        r.observed = "turns unreadable".into();
        r.witness = Witness::of(&[("unreadable", 1), ("unmarked_requests", f.part.unmarked_requests)]);
        r.detail = format!("{} {}: {}", r.dep.clone().unwrap_or_default(), r.expected, stripped(why));
        return r;
    }
    let anchor = match f.anchor(e.since.as_ref()) {
        Ok(a) => a,
        Err(why) => {
            r.observed = "no anchor".into();
            r.witness = Witness::of(&[("fault_applications", 0)]);
            let dep = r.dep.clone().unwrap_or_default();
            return settle(r, false, false, f, &why.0, &dep);
        }
    };
    let from = anchor.as_ref().map_or(0, |a| a.at_ms);
    let turns = f.turns_between(from, None);
    let (profile, model) = (e.profile.as_str(), e.model.as_deref());
    let subject = |q: &super::turns::TurnRequest| is_of(q, Some(profile), model);
    let found: Vec<Cooldown> = cooldowns_of(&f.part.rows, &subject)
        .into_iter()
        .filter(|c| c.from_ms >= from)
        .collect();
    let subject_requests = turns
        .iter()
        .flat_map(|t| t.requests.iter())
        .filter(|q| subject(q))
        .count() as u64;
    let n = found.len() as u64;
    let elsewhere: u64 = found.iter().map(|c| c.turns_elsewhere).sum();
    let lengths: Vec<String> = found
        .iter()
        .map(|c| {
            let len = c.length_ms().map_or_else(
                || "open".to_string(),
                |l| secs(l as i64),
            );
            let ra = c
                .retry_after_ms
                .map_or(String::new(), |ra| format!(", Retry-After {}", secs(ra as i64)));
            format!("{len} from {} ({} turns elsewhere{ra})", secs(c.from_ms as i64), c.turns_elsewhere)
        })
        .collect();
    r.observed = if found.is_empty() {
        format!("0 cooldowns over {} turns", turns.len())
    } else {
        format!("{n} cooldown{}: {}", if n == 1 { "" } else { "s" }, lengths.join("; "))
    };
    r.observed_ms = found.iter().filter_map(Cooldown::length_ms).max().map(|l| l as i64);
    r.expected_ms = e.length_bounds().0.map(|l| l as i64);
    r.tolerance_ms = e.tolerance.map(|t| ms(t) as i64);
    r.witness = Witness::of(&[
        ("turns", turns.len() as u64),
        ("subject_requests", subject_requests),
        ("cooldowns", n),
        ("turns_elsewhere", elsewhere),
    ]);
    if let Some(a) = &anchor {
        r.witness.set("anchor_ms", a.at_ms);
        r.witness.set("fault_applications", a.applications);
    }
    let (ok, certain, why) = if e.never {
        let why = if turns.is_empty() {
            Some("no turn could have used it: nothing shows it was never cooled".to_string())
        } else if n > 0 {
            Some(format!("it cooled {n} time{}", if n == 1 { "" } else { "s" }))
        } else {
            None
        };
        (why.is_none(), n > 0, why)
    } else {
        let (eq, lo, hi) = e.count_bounds();
        let count_ok = counts_hold(n, eq, lo, hi);
        let bad: Vec<String> = if e.bounds_length() {
            found.iter().filter_map(|c| length_fault(e, c)).collect()
        } else {
            Vec::new()
        };
        let why = if !count_ok {
            Some(format!("{n} cooldowns, expected {}", counts_text(eq, lo, hi)))
        } else {
            bad.first().cloned()
        };
        let certain = !bad.is_empty() || eq.or(hi).is_some_and(|h| n > h);
        (why.is_none() && n > 0, certain, why)
    };
    let why = why.unwrap_or_default();
    let dep = r.dep.clone().unwrap_or_default();
    let r = settle(r, ok, certain, f, &why, &dep);
    match &anchor {
        Some(a) => {
            let mut r = r;
            r.detail = format!("{}; times from {}", r.detail, a.text);
            r
        }
        None => r,
    }
}

#[cfg(test)]
mod tests;
