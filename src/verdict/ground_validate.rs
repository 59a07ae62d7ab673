//! The checks of the ground-truth and OpenClaw expectation tables ([`super::ground`]) and what
//! the rest of the crate asks of them: whether a scenario has any, and which profiles they name.

use super::expect::Expectations;
use super::expect_validate::ExpectError;
use super::ground::{DECISION_EVENTS, check_counts, check_subject, decision_filters};

impl Expectations {
    /// The upstream ground-truth and OpenClaw tables: a subject, consistent bounds, known
    /// decision events, known policies.
    pub(super) fn validate_ground(
        &self,
        policy_bad: &dyn Fn(&Option<String>) -> Option<String>,
    ) -> Result<(), ExpectError> {
        let err = |field: String, msg: String| Err(ExpectError { field, msg });
        let policy = |f: &str, p: &Option<String>| match policy_bad(p) {
            None => Ok(()),
            Some(msg) => err(format!("{f}.policy"), msg),
        };
        let subject = |f: &str, p: &Option<String>, m: &Option<String>| {
            check_subject(p, m).or_else(|msg| err(f.to_string(), msg))
        };
        for (i, a) in self.attempts.iter().enumerate() {
            let f = format!("expect.attempts[{i}]");
            subject(&f, &a.profile, &a.model)?;
            let hosts = a.hosts_at_least.is_some() || a.hosts_at_most.is_some();
            let counts = a.equals.is_some() || a.at_least.is_some() || a.at_most.is_some();
            if !hosts && !counts {
                return err(
                    format!("{f}.equals"),
                    "give `equals`, `at_least`, `at_most`, `hosts_at_least` or `hosts_at_most`"
                        .into(),
                );
            }
            if counts {
                check_counts(a.equals, a.at_least, a.at_most)
                    .or_else(|(k, m)| err(format!("{f}.{k}"), m))?;
            }
            if let (Some(lo), Some(hi)) = (a.hosts_at_least, a.hosts_at_most)
                && lo > hi
            {
                return err(
                    format!("{f}.hosts_at_most"),
                    "`hosts_at_most` is below `hosts_at_least`".into(),
                );
            }
            if let (Some(from), Some(until)) = (a.from, a.until)
                && from >= until
            {
                return err(format!("{f}.until"), "`until` must be after `from`".into());
            }
            policy(&f, &a.policy)?;
        }
        for (i, a) in self.first_request.iter().enumerate() {
            let f = format!("expect.first_request[{i}]");
            subject(&f, &a.profile, &a.model)?;
            if a.never && (a.at_least.is_some() || a.at_most.is_some()) {
                return err(
                    format!("{f}.never"),
                    "`never` excludes `at_least`/`at_most`".into(),
                );
            }
            if !a.never && a.at_least.is_none() && a.at_most.is_none() {
                return err(f, "give `at_least`, `at_most` or `never = true`".into());
            }
            policy(&format!("expect.first_request[{i}]"), &a.policy)?;
        }
        for (i, a) in self.no_request.iter().enumerate() {
            let f = format!("expect.no_request[{i}]");
            subject(&f, &a.profile, &a.model)?;
            if a.from >= a.until {
                return err(format!("{f}.until"), "`until` must be after `from`".into());
            }
            policy(&f, &a.policy)?;
        }
        for (i, a) in self.retry_gaps.iter().enumerate() {
            let f = format!("expect.retry_gaps[{i}]");
            subject(&f, &a.profile, &a.model)?;
            if a.min.is_none() && a.max.is_none() {
                return err(f, "give `min` and/or `max`".into());
            }
            policy(&f, &a.policy)?;
        }
        for (i, a) in self.recovered.iter().enumerate() {
            let f = format!("expect.recovered[{i}]");
            subject(&f, &a.profile, &a.model)?;
            if a.requests == Some(0) {
                return err(format!("{f}.requests"), "must be at least 1".into());
            }
            if a.within.is_some_and(|w| w.is_zero()) {
                return err(format!("{f}.within"), "must be greater than 0".into());
            }
            policy(&f, &a.policy)?;
        }
        for (i, d) in self.openclaw_decision.iter().enumerate() {
            let f = format!("expect.openclaw_decision[{i}]");
            if !DECISION_EVENTS.contains(&d.event.as_str()) {
                return err(
                    format!("{f}.event"),
                    format!(
                        "unknown event `{}` (one of: {})",
                        d.event,
                        DECISION_EVENTS.join(", ")
                    ),
                );
            }
            check_counts(d.equals, d.at_least, d.at_most)
                .or_else(|(k, m)| err(format!("{f}.{k}"), m))?;
            let (reason, profile) = decision_filters(&d.event);
            let carried = match (reason, profile) {
                (true, true) => "`reason` and `profile`",
                (true, false) => "`reason` only",
                (false, true) => "`profile` only",
                (false, false) => "no filter",
            };
            for (key, given, ok) in [
                ("reason", d.reason.is_some(), reason),
                ("profile", d.profile.is_some(), profile),
            ] {
                if given && !ok {
                    return err(
                        format!("{f}.{key}"),
                        format!(
                            "a `{}` decision carries no {key}, so this filter would count 0 \
                             whatever the gateway did (it takes {carried})",
                            d.event
                        ),
                    );
                }
            }
            policy(&f, &d.policy)?;
        }
        for (i, c) in self.openclaw_cooldown.iter().enumerate() {
            let f = format!("expect.openclaw_cooldown[{i}]");
            policy(&f, &c.policy)?;
            if c.none && (c.cooldown.is_some() || c.reason.is_some()) {
                return err(
                    format!("{f}.none"),
                    "`none` excludes `cooldown`/`reason`".into(),
                );
            }
            if !c.none && c.cooldown.is_none() && c.reason.is_none() {
                return err(f, "give `cooldown`, `reason` or `none = true`".into());
            }
        }
        Ok(())
    }

    /// True when any expectation is judged from the upstream's records.
    pub(crate) fn has_ground(&self) -> bool {
        !(self.attempts.is_empty()
            && self.first_request.is_empty()
            && self.no_request.is_empty()
            && self.retry_gaps.is_empty()
            && self.recovered.is_empty())
    }

    /// True when any expectation is about an OpenClaw gateway's own log or state.
    pub(crate) fn has_gateway(&self) -> bool {
        !(self.openclaw_decision.is_empty() && self.openclaw_cooldown.is_empty())
    }

    /// Every profile id the ground-truth and OpenClaw tables name, with its field path.
    pub(crate) fn named_profiles(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut add = |kind: &str, i: usize, p: &Option<String>| {
            if let Some(p) = p {
                out.push((format!("expect.{kind}[{i}].profile"), p.clone()));
            }
        };
        for (i, a) in self.attempts.iter().enumerate() {
            add("attempts", i, &a.profile);
        }
        for (i, a) in self.first_request.iter().enumerate() {
            add("first_request", i, &a.profile);
        }
        for (i, a) in self.no_request.iter().enumerate() {
            add("no_request", i, &a.profile);
        }
        for (i, a) in self.retry_gaps.iter().enumerate() {
            add("retry_gaps", i, &a.profile);
        }
        for (i, a) in self.recovered.iter().enumerate() {
            add("recovered", i, &a.profile);
        }
        for (i, a) in self.openclaw_decision.iter().enumerate() {
            add("openclaw_decision", i, &a.profile);
        }
        for (i, a) in self.openclaw_cooldown.iter().enumerate() {
            add("openclaw_cooldown", i, &Some(a.profile.clone()));
        }
        for (i, a) in self.cooldown.iter().enumerate() {
            add("cooldown", i, &Some(a.profile.clone()));
        }
        for (i, a) in self.per_turn.iter().enumerate() {
            if let Some(p) = &a.answered_by_profile {
                out.push((format!("expect.per_turn[{i}].answered_by_profile"), p.clone()));
            }
        }
        out
    }
}
