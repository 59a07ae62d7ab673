//! Expectations judged from ground truth at the mock upstream (every model request with its
//! time, profile token fingerprint, model and fault), which hold for any target — the embedded
//! engine, a real OpenClaw or any gateway by URL — and two about an OpenClaw gateway's own view
//! (its log decisions and its auth-profile cooldowns). The tables as written; the pure
//! evaluators are in [`super::ground_eval`] and [`super::gateway_eval`].
//!
//! A subject names `profile` (a `[[profile]]` id: requests carrying its token) and/or `model`
//! (requests naming it; `PROVIDER/MODEL` and a bare `MODEL` match the bare id the gateway sends).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `[[expect.attempts]]`: how many requests of a subject reach the upstream in a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectAttempts {
    /// Requests carrying this profile's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Requests naming this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Only requests that got this fault kind (`status`, `stall`, ...; `none` = no fault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// Window start (scenario time; default 0: the run start, or the `since` anchor).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub from: Option<Duration>,
    /// Window end (exclusive; default the end of the run).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub until: Option<Duration>,
    /// Exactly this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<u64>,
    /// At least this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<u64>,
    /// At most this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<u64>,
    /// The matching requests come from at least this many distinct hosts (fleet mode; one run
    /// alone is one host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_at_least: Option<u64>,
    /// The matching requests come from at most this many distinct hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_at_most: Option<u64>,
    /// Count this row's times from a fault's start or end instead of the run start
    /// ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<super::anchor::Since>,
    /// Only for this policy run (or target); all when absent.
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// `[[expect.first_request]]`: when the first request of a subject arrives (a rotation or a
/// fallback reached, and how long it took), or that none does (`never = true`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectFirstRequest {
    /// Requests carrying this profile's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Requests naming this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// No earlier than this (scenario time).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub at_least: Option<Duration>,
    /// No later than this.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub at_most: Option<Duration>,
    /// No request of the subject at all.
    #[serde(default)]
    pub never: bool,
    /// Count `at_least`/`at_most` from the run's first model request at the upstream (any
    /// profile or model) instead of the run start: how long the rotation or fallback took,
    /// without the gateway's own warm-up before its first provider call.
    #[serde(default)]
    pub after_first: bool,
    /// Count this row's times from a fault's start or end instead of the run start
    /// ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<super::anchor::Since>,
    /// Only for this policy run (or target).
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// `[[expect.no_request]]`: no request of a subject during a span (a cooldown or a
/// Retry-After respected).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectNoRequest {
    /// Requests carrying this profile's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Requests naming this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Span start (scenario time from the run start, or from the `since` anchor).
    #[serde(with = "humantime_serde")]
    pub from: Duration,
    /// Span end (exclusive).
    #[serde(with = "humantime_serde")]
    pub until: Duration,
    /// Count this row's times from a fault's start or end instead of the run start
    /// ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<super::anchor::Since>,
    /// Only for this policy run (or target).
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// `[[expect.recovered]]`: after the faults, the system serves again — at least `requests`
/// model requests of the subject at or after `after` met no fault (the `requests`-th within
/// `within` of `after`, when given). Judged at the upstream, in every kind of run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectRecovered {
    /// Requests carrying this profile's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Requests naming this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// From when (scenario time from the run start, or from the `since` anchor): the end of
    /// the last fault window, typically.
    #[serde(with = "humantime_serde")]
    pub after: Duration,
    /// At least this many fault-free requests from `after` on (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    /// The `requests`-th of them at most this long after `after`.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub within: Option<Duration>,
    /// Count this row's times from a fault's start or end instead of the run start
    /// ([`super::anchor`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<super::anchor::Since>,
    /// Only for this policy run (or target).
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// `[[expect.retry_gaps]]`: the gaps between consecutive requests of a subject.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectRetryGaps {
    /// Requests carrying this profile's token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Requests naming this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Every gap at least this long (minus `tolerance`).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub min: Option<Duration>,
    /// Every gap at most this long (plus `tolerance`).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub max: Option<Duration>,
    /// Slack on both bounds (default 0).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance: Option<Duration>,
    /// Only for this policy run (or target).
    /// (`version = "2026.9.2"` is the same key for a run of OpenClaw versions side by side,
    /// whose runs are named after their versions.)
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// `[[expect.openclaw_decision]]` (OpenClaw targets): how many of its log decisions of one
/// kind it made.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectGatewayDecision {
    /// One of [`DECISION_EVENTS`].
    pub event: String,
    /// Only decisions with this reason (`server_error`, `timeout`, `rate_limit`, `auth`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Only decisions about this profile (failover decisions and failure-state updates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Exactly this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<u64>,
    /// At least this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<u64>,
    /// At most this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<u64>,
    /// Only for this run (a version of `[target] versions`); all runs when absent.
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// `[[expect.openclaw_cooldown]]` (OpenClaw targets): a profile's cooldown in its auth state
/// after the run (`cooldownUntil − lastFailureAt`), or that it has none (`none = true`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectGatewayCooldown {
    /// The profile id.
    pub profile: String,
    /// Its cooldown reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The cooldown's length.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub cooldown: Option<Duration>,
    /// Allowed |observed − cooldown| (default 1 s).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance: Option<Duration>,
    /// The profile has no cooldown.
    #[serde(default)]
    pub none: bool,
    /// Only for this run (a version of `[target] versions`); all runs when absent.
    #[serde(default, alias = "version", skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

/// The `event` names of `[[expect.openclaw_decision]]`.
pub(crate) const DECISION_EVENTS: &[&str] = &[
    "rotate_profile",
    "fallback_model",
    "candidate_failed",
    "candidate_succeeded",
    "chain_stopped",
    "same_model_retry",
    "retry_window_elapsed",
    "idle_timeout_breaker_tripped",
    "profile_failure_state",
];

/// Which filters a decision `event` carries: (`reason`, `profile`). A failover decision
/// (`rotate_profile`, `fallback_model`) and a profile's failure-state update name both; a
/// model-fallback candidate, a stopped chain and a same-model retry only a reason; an elapsed
/// retry window and a tripped idle-timeout breaker neither (`gateway::openclaw::log`).
pub(crate) fn decision_filters(event: &str) -> (bool, bool) {
    match event {
        "rotate_profile" | "fallback_model" | "profile_failure_state" => (true, true),
        "candidate_failed" | "candidate_succeeded" | "chain_stopped" | "same_model_retry" => {
            (true, false)
        }
        _ => (false, false),
    }
}

/// Checks of one subject: at least one of `profile`/`model`.
pub(crate) fn check_subject(
    profile: &Option<String>,
    model: &Option<String>,
) -> Result<(), String> {
    if profile.is_none() && model.is_none() {
        return Err("name a `profile` or a `model`".into());
    }
    Ok(())
}

/// Count bounds present and consistent.
pub(crate) fn check_counts(
    equals: Option<u64>,
    lo: Option<u64>,
    hi: Option<u64>,
) -> Result<(), (&'static str, String)> {
    if equals.is_none() && lo.is_none() && hi.is_none() {
        return Err(("equals", "give `equals`, `at_least` or `at_most`".into()));
    }
    if equals.is_some() && (lo.is_some() || hi.is_some()) {
        return Err(("equals", "`equals` excludes `at_least`/`at_most`".into()));
    }
    if let (Some(lo), Some(hi)) = (lo, hi)
        && lo > hi
    {
        return Err(("at_most", "`at_most` is below `at_least`".into()));
    }
    Ok(())
}

/// `= 5`, `>= 2`, `<= 3`, `2..=3`.
pub(crate) fn counts_text(equals: Option<u64>, lo: Option<u64>, hi: Option<u64>) -> String {
    match (equals, lo, hi) {
        (Some(e), _, _) => format!("= {e}"),
        (None, Some(l), Some(h)) => format!("{l}..={h}"),
        (None, Some(l), None) => format!(">= {l}"),
        (None, None, Some(h)) => format!("<= {h}"),
        (None, None, None) => "any".into(),
    }
}

/// Whether `n` is within the bounds.
pub(crate) fn counts_hold(n: u64, equals: Option<u64>, lo: Option<u64>, hi: Option<u64>) -> bool {
    equals.is_none_or(|e| n == e) && lo.is_none_or(|l| n >= l) && hi.is_none_or(|h| n <= h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_bounds_are_checked_and_printed() {
        assert!(check_counts(None, None, None).is_err());
        assert!(check_counts(Some(1), Some(1), None).is_err());
        assert_eq!(
            check_counts(None, Some(3), Some(2)).unwrap_err().0,
            "at_most"
        );
        assert!(check_counts(None, Some(2), Some(3)).is_ok());
        assert_eq!(counts_text(None, Some(2), Some(3)), "2..=3");
        assert!(counts_hold(3, None, Some(2), Some(3)));
        assert!(!counts_hold(4, None, Some(2), Some(3)));
        assert!(!counts_hold(4, Some(5), None, None));
    }

    #[test]
    fn tables_parse_with_durations_and_reject_unknown_keys() {
        let a: ExpectAttempts =
            toml::from_str("profile = \"mockai:a\"\nuntil = \"90s\"\nequals = 9").unwrap();
        assert_eq!(a.until, Some(Duration::from_secs(90)));
        assert!(toml::from_str::<ExpectAttempts>("profile = \"a\"\ncount = 1").is_err());
        let f: ExpectFirstRequest =
            toml::from_str("model = \"fallback/m2\"\nnever = true").unwrap();
        assert!(f.never);
        assert!(check_subject(&None, &None).is_err());
    }

    #[test]
    fn a_decision_filter_must_be_a_field_its_event_carries() {
        let e = |t: &str| -> crate::verdict::Expectations {
            toml::from_str(&format!("[[openclaw_decision]]\n{t}")).unwrap()
        };
        let err = e("event = \"same_model_retry\"\nprofile = \"mockai:a\"\nat_least = 1")
            .validate(&[])
            .unwrap_err();
        assert_eq!(err.field, "expect.openclaw_decision[0].profile");
        assert!(err.msg.contains("takes `reason` only"), "{}", err.msg);
        let err = e("event = \"retry_window_elapsed\"\nreason = \"timeout\"\nequals = 0")
            .validate(&[])
            .unwrap_err();
        assert_eq!(err.field, "expect.openclaw_decision[0].reason");
        assert!(err.msg.contains("takes no filter"), "{}", err.msg);
        assert!(
            e("event = \"rotate_profile\"\nreason = \"timeout\"\nprofile = \"mockai:a\"\nat_least = 1")
                .validate(&[])
                .is_ok()
        );
        assert!(
            e("event = \"same_model_retry\"\nreason = \"timeout\"\nat_least = 1")
                .validate(&[])
                .is_ok()
        );
    }

    #[test]
    fn a_policy_that_is_no_run_of_the_scenario_is_refused_with_the_nearest() {
        let e: crate::verdict::Expectations =
            toml::from_str("[[attempts]]\nmodel = \"m1\"\nat_most = 1\npolicy = \"retry-gat\"\n")
                .unwrap();
        let err = e.validate(&["retry-gate", "none", "redis"]).unwrap_err();
        assert_eq!(err.field, "expect.attempts[0].policy");
        assert!(
            err.msg.contains("did you mean `retry-gate`?"),
            "{}",
            err.msg
        );
        assert!(err.msg.contains("(retry-gate, none, redis)"), "{}", err.msg);
        let m: crate::verdict::Expectations =
            toml::from_str("[[metric]]\nseries = \"x\"\nat_most = 1\npolicy = \"redis\"\n")
                .unwrap();
        assert!(m.validate(&["retry-gate", "none", "redis"]).is_ok());
        assert_eq!(
            m.validate(&["retry-gate"]).unwrap_err().field,
            "expect.metric[0].policy"
        );
    }
}
