//! The evidence a row was judged on (report.json `expectations[].witness`), and the one rule
//! that keeps a row from passing on nothing.
//!
//! A witness is a set of named counts: what was observed and how much of it (`scrapes`,
//! `series`, `events`, `requests`, `turns_answered`, `rule_evaluations`, `baseline_runs`, ...).
//! Every kind of expectation says, in [`ExpectKind::witness_rule`], which counts a pass needs:
//! each of `all` above zero, at least one of `any` above zero (when it names some), and each of
//! `zero` at zero. The match there has no catch-all arm, so a kind cannot be added without
//! saying what its witness is.
//!
//! [`enforce`] runs in the judge ([`crate::report::judge::settle`]) over every row of every
//! kind of run: a row that says `pass` without the witness its kind needs is turned into a
//! `fail` that says what was missing. The judges of each kind decide first (and better: exit 2
//! for what is known before the run, `not_reached` for what the run did not reach); this is the
//! floor under them, so a judge that forgets a case fails loudly rather than passing on nothing.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{ExpectKind, ExpectStatus, ExpectationResult};

/// What a row was judged on: named counts, in key order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Witness(BTreeMap<String, u64>);

impl Witness {
    /// No evidence (what a report written before witnesses reads as).
    pub fn none() -> Self {
        Self::default()
    }

    /// A witness of these counts.
    pub fn of(counts: &[(&str, u64)]) -> Self {
        let mut w = Self::none();
        for (k, n) in counts {
            w.set(k, *n);
        }
        w
    }

    /// This witness with `key` set to `n`.
    #[must_use]
    pub fn with(mut self, key: &str, n: u64) -> Self {
        self.set(key, n);
        self
    }

    /// Sets `key` to `n`.
    pub fn set(&mut self, key: &str, n: u64) {
        self.0.insert(key.to_string(), n);
    }

    /// Adds the counts of `other` (a sum per key).
    pub fn add(&mut self, other: &Witness) {
        for (k, n) in &other.0 {
            let e = self.0.entry(k.clone()).or_insert(0);
            *e = e.saturating_add(*n);
        }
    }

    /// The count under `key` (0 when absent).
    pub fn get(&self, key: &str) -> u64 {
        self.0.get(key).copied().unwrap_or(0)
    }

    /// True when `key` was counted (even as 0).
    pub fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The counts, in key order.
    pub fn counts(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, n)| (k.as_str(), *n))
    }

    /// The witness as the report says it: `scrapes 118, series 1` (`none` when empty).
    pub fn line(&self) -> String {
        if self.0.is_empty() {
            return "none".to_string();
        }
        let mut s = String::new();
        for (i, (k, n)) in self.0.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            let _ = write!(s, "{} {n}", k.replace('_', " "));
        }
        s
    }
}

/// Which counts a pass of a kind needs (see the module's opening).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WitnessRule {
    /// Each above zero.
    pub all: &'static [&'static str],
    /// At least one above zero (no constraint when empty).
    pub any: &'static [&'static str],
    /// Each zero (absent counts as zero).
    pub zero: &'static [&'static str],
}

impl WitnessRule {
    const fn new(
        all: &'static [&'static str],
        any: &'static [&'static str],
        zero: &'static [&'static str],
    ) -> Self {
        Self { all, any, zero }
    }

    /// A rule no witness meets: a kind whose rows never pass.
    const NEVER_PASSES: Self = Self::new(&["never passes"], &[], &[]);

    /// Why `w` is not enough for a pass, or `None` when it is.
    pub fn missing(&self, w: &Witness) -> Option<String> {
        if w.is_empty() {
            return Some("its witness is empty: nothing was observed to judge it on".into());
        }
        let mut why = Vec::new();
        for k in self.all.iter().filter(|k| w.get(k) == 0) {
            why.push(format!("{} = 0", k.replace('_', " ")));
        }
        if !self.any.is_empty() && self.any.iter().all(|k| w.get(k) == 0) {
            let names: Vec<String> = self.any.iter().map(|k| k.replace('_', " ")).collect();
            why.push(format!("none of {} above 0", names.join(", ")));
        }
        for k in self.zero.iter().filter(|k| w.get(k) > 0) {
            why.push(format!("{} = {}", k.replace('_', " "), w.get(k)));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}

impl ExpectKind {
    /// What a pass of this kind must have been judged on. No catch-all arm: a new kind says
    /// its witness here or does not compile.
    pub fn witness_rule(self) -> WitnessRule {
        const R: fn(
            &'static [&'static str],
            &'static [&'static str],
            &'static [&'static str],
        ) -> WitnessRule = WitnessRule::new;
        match self {
            // A transition timed by the engine's events or by scrapes of its breaker series.
            Self::Transition => R(&["transitions_matched"], &["events", "scrapes"], &[]),
            // A bound on the final scrape: scrapes held, and the selector matched a series or
            // names a family the system under test is known to export (a lazily created
            // counter with no series yet witnesses zero), and none of its label values is one
            // the system under test never exported and cannot export.
            Self::Metric => R(
                &["scrapes"],
                &["series", "known_family"],
                &["label_values_unknown"],
            ),
            // No transition: the dep's breaker was watched (events or scrapes of it).
            Self::NoTransition => R(&["breaker_observed"], &["events", "scrapes"], &[]),
            // Probe spacing: probes reached the upstream (a single probe is a real observation:
            // the breaker probed once).
            Self::ProbeSpacing => R(&["probes"], &[], &[]),
            // A fleet check: probes, closes, half-open spells, states shared by hosts or
            // coordinator outages of the dep were seen.
            Self::Fleet => R(
                &[],
                &["probes", "closes", "spells", "shared_states", "outages"],
                &[],
            ),
            // Judged at the upstream: requests of the run observed in the window judged.
            Self::Attempts
            | Self::FirstRequest
            | Self::RetryGaps
            | Self::Recovered
            | Self::NoRequest => R(&["requests_observed"], &[], &[]),
            // An OpenClaw decision: its log was read and held lines.
            Self::GatewayDecision => R(&["log_lines"], &[], &[]),
            // An OpenClaw cooldown: its auth state was read.
            Self::GatewayCooldown => R(&["auth_state_reads"], &[], &[]),
            // A fault no run applied: never a pass.
            Self::FaultApplied => WitnessRule::NEVER_PASSES,
            // Turns: at least one turn it covers ended.
            Self::Turn => R(&["turns"], &[], &[]),
            // A cooldown: turns that could have used the subject were read (never a pass on
            // turns the gateway made unreadable).
            Self::Cooldown => R(&["turns"], &[], &["unreadable"]),
            // Per turn: turns were judged (never on turns the gateway made unreadable).
            Self::PerTurn => R(&["turns_judged"], &[], &["unreadable"]),
            // Drift: the runs it was compared with.
            Self::Drift => R(&["baseline_runs"], &[], &[]),
            // An alert (a `never` above all): the arm's own targets were scraped up
            // (`target_up_samples`, `up` of the targets it published, never another job's),
            // its rule was evaluated during the arm (`rule_evaluations`, its group's counters)
            // and never failed to (`rule_failures`), and every series selector of its
            // expression names a family the system under test can export
            // (`families_missing`). Its `ALERTS` samples count only when tied to the arm's
            // targets (`alert_samples`; `untied_alert_samples` were left out).
            Self::Alert => R(
                &["rule_evaluations", "target_up_samples"],
                &[],
                &["rule_failures", "families_missing"],
            ),
            // A dashboard query: transitions judged on Prometheus's samples of the arm's own
            // engine target.
            Self::Dashboard => R(&["transitions_judged", "samples"], &[], &[]),
        }
    }
}

/// The floor of every judge: a `pass` row whose witness its kind's rule does not accept becomes
/// a `fail` saying what was missing. Returns how many rows it turned.
pub fn enforce(rows: &mut [ExpectationResult]) -> usize {
    let mut turned = 0;
    for r in rows.iter_mut().filter(|r| r.status == ExpectStatus::Pass) {
        let Some(why) = r.kind.witness_rule().missing(&r.witness) else {
            continue;
        };
        r.ok = false;
        r.status = ExpectStatus::Fail;
        r.detail = format!(
            "{}; not a pass: it was judged on nothing that could show it ({why})",
            r.detail
        );
        turned += 1;
    }
    turned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: ExpectKind, w: Witness) -> ExpectationResult {
        let mut r = ExpectationResult::counted(kind, "crm".into(), "= 0".into(), "0".into());
        r.ok = true;
        r.status = ExpectStatus::Pass;
        r.detail = "held".into();
        r.witness = w;
        r
    }

    #[test]
    fn a_pass_on_an_empty_witness_fails_saying_so() {
        let mut rows = vec![row(ExpectKind::NoRequest, Witness::none())];
        assert_eq!(enforce(&mut rows), 1);
        assert_eq!(rows[0].status, ExpectStatus::Fail);
        assert!(!rows[0].ok);
        assert!(rows[0].detail.contains("witness is empty"), "{}", rows[0].detail);
    }

    #[test]
    fn each_part_of_a_rule_is_checked() {
        let alert = ExpectKind::Alert.witness_rule();
        let good = Witness::of(&[
            ("rule_evaluations", 57),
            ("rule_failures", 0),
            ("target_up_samples", 60),
        ]);
        assert_eq!(alert.missing(&good), None);
        let failing = good.clone().with("rule_failures", 57);
        assert_eq!(alert.missing(&failing).as_deref(), Some("rule failures = 57"));
        let never = good.clone().with("target_up_samples", 0);
        assert_eq!(alert.missing(&never).as_deref(), Some("target up samples = 0"));
        let metric = ExpectKind::Metric.witness_rule();
        let bare = Witness::of(&[("scrapes", 10)]);
        assert_eq!(
            metric.missing(&bare).as_deref(),
            Some("none of series, known family above 0")
        );
        assert_eq!(metric.missing(&bare.clone().with("known_family", 1)), None);
        let unknown = bare.with("known_family", 1).with("label_values_unknown", 1);
        assert_eq!(
            metric.missing(&unknown).as_deref(),
            Some("label values unknown = 1")
        );
    }

    #[test]
    fn a_fault_row_never_passes_and_other_statuses_are_left_alone() {
        let mut rows = vec![
            row(ExpectKind::FaultApplied, Witness::of(&[("requests", 3)])),
            row(ExpectKind::Drift, Witness::of(&[("baseline_runs", 2)])),
        ];
        rows[1].status = ExpectStatus::NoBaseline;
        assert_eq!(enforce(&mut rows), 1);
        assert_eq!(rows[0].status, ExpectStatus::Fail);
        assert_eq!(rows[1].status, ExpectStatus::NoBaseline);
    }

    #[test]
    fn the_line_names_every_count_and_the_json_is_a_plain_object() {
        let w = Witness::of(&[("scrapes", 118), ("series", 1)]);
        assert_eq!(w.line(), "scrapes 118, series 1");
        assert_eq!(
            serde_json::to_string(&w).unwrap_or_default(),
            r#"{"scrapes":118,"series":1}"#
        );
        assert_eq!(Witness::none().line(), "none");
    }
}
