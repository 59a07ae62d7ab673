//! report.json `policies[].figures`: the key figures of one arm — what a weekly run compares
//! week over week (`rehearse history`, drift, `rehearse compare`). Computed once per arm from its
//! observation (`rehearsal::figures`); here is only what they are and their flat names.
//!
//! Flat names (what `[[expect.drift]]`, the history and `compare` use): `NAME` for a run-wide
//! figure, `NAME{dep}` / `NAME{provider}` for a dep's or a provider's. Every time is ms of
//! scenario time.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::util::round::ser3;
pub use crate::verdict::drift::{FIGURES, show, split_name};

/// One arm's key figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyFigures {
    /// Per breaker dep the run could watch: every dep of the scenario where the system is an
    /// engine of ours (its events show every breaker), a gateway's deps whose breaker series
    /// its scrapes showed; a dep that never opened has `openings` 0 and no times (reports
    /// written before this listed only the deps with a transition).
    #[serde(default)]
    pub deps: BTreeMap<String, DepFigures>,
    /// Per provider: the scenario's providers, and those the arm sent a model request to or
    /// rotated/fell back/cooled (reports written before this listed only the latter).
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderFigures>,
    /// The replay's schedule lag, 99th percentile, ms (wall clock, as the report's replay lag).
    #[serde(serialize_with = "ser3")]
    pub replay_lag_p99_ms: f64,
    /// Expectations passed.
    pub expectations_passed: u64,
    /// Expectations failed.
    pub expectations_failed: u64,
    /// Expectations not reached.
    pub expectations_not_reached: u64,
}

/// One breaker dep's figures (the first spell where there were several; `null` when the run
/// never got there).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DepFigures {
    /// From the start of the fault that preceded the first opening to that opening, ms.
    #[serde(default)]
    pub time_to_open_ms: Option<u64>,
    /// How long the first opening stayed open (open → half-open), ms.
    #[serde(default)]
    pub open_ms: Option<u64>,
    /// Probes that reached the upstream per half-open spell (mean over the spells).
    #[serde(default, serialize_with = "ser3_opt")]
    pub probes_per_half_open: Option<f64>,
    /// From the first half-open that closed to its closing, ms.
    #[serde(default)]
    pub half_open_to_closed_ms: Option<u64>,
    /// Times it opened.
    #[serde(default)]
    pub openings: u64,
}

/// One provider's figures. A figure the run could not count is `null` ("unknown"), never 0: a
/// gateway's rotations, fallbacks and cooldowns are read per turn from the upstream's record
/// (`verdict::turns::changes`), so a gateway that strips the turn marker has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProviderFigures {
    /// Rotations away from one of its profiles (a change of profile within a model, inside a
    /// turn; an engine of ours: its own marks).
    #[serde(default)]
    pub rotations: Option<u64>,
    /// Cooldowns of its profiles (a gateway: read from the upstream's record per turn; an engine
    /// of ours: its own marks).
    #[serde(default)]
    pub cooldowns: Option<u64>,
    /// Fallbacks away from its models (a change of model inside a turn).
    #[serde(default)]
    pub fallbacks: Option<u64>,
    /// From the first fault's start to its first rotation, ms.
    #[serde(default)]
    pub time_to_first_rotation_ms: Option<u64>,
    /// From the first fault's start to the first fallback away from it, ms.
    #[serde(default)]
    pub time_to_first_fallback_ms: Option<u64>,
    /// A second, labelled source: the profiles OpenClaw's own auth state held cooling at the
    /// run's end (absent where no auth state was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldowns_auth_state: Option<u64>,
}

impl ProviderFigures {
    /// A provider whose counts the run has in full: 0 of each, until counted.
    pub fn counted() -> Self {
        Self {
            rotations: Some(0),
            cooldowns: Some(0),
            fallbacks: Some(0),
            ..Self::default()
        }
    }
}

/// An optional measured float, rounded to 3 decimals.
pub(crate) fn ser3_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_some(&((x * 1000.0).round() / 1000.0)),
        None => s.serialize_none(),
    }
}

impl KeyFigures {
    /// The provider figures the run could not count ("unknown"), by flat name.
    pub fn unknown(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (p, v) in &self.providers {
            for (name, value) in [
                ("rotations", v.rotations),
                ("cooldowns", v.cooldowns),
                ("fallbacks", v.fallbacks),
            ] {
                if value.is_none() {
                    out.push(format!("{name}{{{p}}}"));
                }
            }
        }
        out
    }

    /// Every figure the run has a value for, by flat name.
    pub fn flat(&self) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        let mut put = |name: &str, scope: &str, v: Option<f64>| {
            if let Some(v) = v {
                let key = if scope.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}{{{scope}}}")
                };
                out.insert(key, v);
            }
        };
        let f = |v: Option<u64>| v.map(|v| v as f64);
        for (dep, d) in &self.deps {
            put("openings", dep, Some(d.openings as f64));
            put("time_to_open_ms", dep, f(d.time_to_open_ms));
            put("open_ms", dep, f(d.open_ms));
            put("probes_per_half_open", dep, d.probes_per_half_open);
            put("half_open_to_closed_ms", dep, f(d.half_open_to_closed_ms));
        }
        for (p, v) in &self.providers {
            put("rotations", p, f(v.rotations));
            put("cooldowns", p, f(v.cooldowns));
            put("fallbacks", p, f(v.fallbacks));
            put("time_to_first_rotation_ms", p, f(v.time_to_first_rotation_ms));
            put("time_to_first_fallback_ms", p, f(v.time_to_first_fallback_ms));
        }
        put("replay_lag_p99_ms", "", Some(self.replay_lag_p99_ms));
        put("expectations_passed", "", Some(self.expectations_passed as f64));
        put("expectations_failed", "", Some(self.expectations_failed as f64));
        put(
            "expectations_not_reached",
            "",
            Some(self.expectations_not_reached as f64),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_names_carry_their_scope_and_leave_unknown_values_out() {
        let mut k = KeyFigures {
            replay_lag_p99_ms: 1.5,
            expectations_passed: 3,
            ..Default::default()
        };
        k.deps.insert(
            "crm_search".into(),
            DepFigures {
                open_ms: Some(2000),
                ..Default::default()
            },
        );
        let f = k.flat();
        assert_eq!(f.get("open_ms{crm_search}"), Some(&2000.0));
        assert!(!f.contains_key("time_to_open_ms{crm_search}"));
        assert_eq!(f.get("expectations_passed"), Some(&3.0));
        assert_eq!(split_name("open_ms{crm_search}"), ("open_ms", Some("crm_search")));
        assert_eq!(split_name("replay_lag_p99_ms"), ("replay_lag_p99_ms", None));
        assert_eq!(show("open_ms{x}", 2500.0), "2.500s");
        assert_eq!(show("rotations{x}", 3.0), "3");
        assert_eq!(show("probes_per_half_open{x}", 1.5), "1.50");
    }
}
