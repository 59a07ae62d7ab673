//! The checks of an `[expect]` table that serde cannot make (docs/scenario.md): `at` xor
//! `after`, `from` ≠ `to`, metric bounds present and consistent, a fleet row with a bound, each
//! row's `policy` one of the scenario's runs, and each kind's own checks (the ground-truth
//! tables' in [`super::ground_validate`]); the error names the field.

use super::expect::{ExpectFleet, Expectations};

/// A semantic problem in an otherwise well-formed `[expect]` table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {msg}")]
pub struct ExpectError {
    /// The field path, e.g. `expect.transition[2].at`.
    pub field: String,
    /// What is wrong.
    pub msg: String,
}

impl ExpectFleet {
    /// True when no bound is given.
    fn is_vacuous(&self) -> bool {
        self.max_probes_per_interval.is_none()
            && self.max_probes_per_host_per_interval.is_none()
            && self.min_probes_per_interval.is_none()
            && self.min_close_hosts.is_none()
            && self.agree_within.is_none()
            && self.max_probes_per_spell.is_none()
            && self.rejoin_within.is_none()
    }
}

impl Expectations {
    /// Checks what serde cannot: `at` xor `after`, `from` ≠ `to`, metric bounds present and
    /// consistent, policies known. Errors name the field.
    pub fn validate(&self, known_policies: &[&str]) -> Result<(), ExpectError> {
        let err = |field: String, msg: &str| {
            Err(ExpectError {
                field,
                msg: msg.to_string(),
            })
        };
        // Why a `policy` is not one of the runs (with the nearest run's name), or None.
        let policy_bad = |p: &Option<String>| -> Option<String> {
            let p = p.as_deref().filter(|p| !known_policies.contains(p))?;
            let hint = crate::util::suggest::closest(p, known_policies.iter().copied())
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            Some(format!(
                "`{p}` is not one of the scenario's policies or runs ({}){hint}",
                known_policies.join(", ")
            ))
        };
        for (i, t) in self.transition.iter().enumerate() {
            let f = format!("expect.transition[{i}]");
            if t.at.is_some() && t.after.is_some() {
                return err(
                    format!("{f}.after"),
                    "give either `at` or `after`, not both",
                );
            }
            if t.from == t.to {
                return err(format!("{f}.to"), "`to` must differ from `from`");
            }
            if let Some(msg) = policy_bad(&t.policy) {
                return err(format!("{f}.policy"), &msg);
            }
        }
        for (i, m) in self.metric.iter().enumerate() {
            let f = format!("expect.metric[{i}]");
            if m.equals.is_none() && m.at_least.is_none() && m.at_most.is_none() {
                return err(f, "give `equals`, `at_least` or `at_most`");
            }
            if m.equals.is_some() && (m.at_least.is_some() || m.at_most.is_some()) {
                return err(
                    format!("{f}.equals"),
                    "`equals` excludes `at_least`/`at_most`",
                );
            }
            if let (Some(lo), Some(hi)) = (m.at_least, m.at_most)
                && lo > hi
            {
                return err(format!("{f}.at_most"), "`at_most` is below `at_least`");
            }
            if let Some(msg) = policy_bad(&m.policy) {
                return err(format!("{f}.policy"), &msg);
            }
        }
        for (i, n) in self.no_transition.iter().enumerate() {
            if let Some(msg) = policy_bad(&n.policy) {
                return err(format!("expect.no_transition[{i}].policy"), &msg);
            }
        }
        for (i, p) in self.probe_spacing.iter().enumerate() {
            if let Some(msg) = policy_bad(&p.policy) {
                return err(format!("expect.probe_spacing[{i}].policy"), &msg);
            }
        }
        for (i, f) in self.fleet.iter().enumerate() {
            if f.is_vacuous() {
                return err(
                    format!("expect.fleet[{i}]"),
                    "give at least one bound (max_probes_per_interval, min_close_hosts, ...)",
                );
            }
            if let Some(msg) = policy_bad(&f.policy) {
                return err(format!("expect.fleet[{i}].policy"), &msg);
            }
        }
        for (i, a) in self.alert.iter().enumerate() {
            if let Some(msg) = policy_bad(&a.policy) {
                return err(format!("expect.alert[{i}].policy"), &msg);
            }
        }
        for (i, d) in self.dashboard.iter().enumerate() {
            if let Some(msg) = policy_bad(&d.policy) {
                return err(format!("expect.dashboard[{i}].policy"), &msg);
            }
        }
        self.validate_ground(&policy_bad)?;
        for (i, c) in self.cooldown.iter().enumerate() {
            if let Some(msg) = policy_bad(&c.policy) {
                return err(format!("expect.cooldown[{i}].policy"), &msg);
            }
            c.check().map_err(|(k, msg)| ExpectError {
                field: format!("expect.cooldown[{i}].{k}"),
                msg,
            })?;
        }
        for (i, t) in self.per_turn.iter().enumerate() {
            if let Some(msg) = policy_bad(&t.policy) {
                return err(format!("expect.per_turn[{i}].policy"), &msg);
            }
            t.check().map_err(|(k, msg)| ExpectError {
                field: format!("expect.per_turn[{i}].{k}"),
                msg,
            })?;
        }
        let policy_ok = |p: &Option<String>| policy_bad(p).is_none();
        for (i, t) in self.turn.iter().enumerate() {
            if let Some(msg) = policy_bad(&t.policy) {
                return err(format!("expect.turn[{i}].policy"), &msg);
            }
            super::turn::check(t, &policy_ok)
                .and_then(|()| super::answer_rows::check(t))
                .map_err(|(key, msg)| {
                let field = match key {
                    "" => format!("expect.turn[{i}]"),
                    k => format!("expect.turn[{i}].{k}"),
                };
                ExpectError { field, msg }
            })?;
        }
        for (i, d) in self.drift.iter().enumerate() {
            let f = format!("expect.drift[{i}]");
            super::drift::check(d).map_err(|(key, msg)| ExpectError {
                field: format!("{f}.{key}"),
                msg,
            })?;
            if let Some(msg) = policy_bad(&d.policy) {
                return err(format!("{f}.policy"), &msg);
            }
        }
        Ok(())
    }
}
