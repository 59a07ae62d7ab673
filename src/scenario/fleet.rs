//! `[fleet]` and `[coordinator]` (docs/coordinator.md): how many gateway hosts a run starts as
//! separate processes, how they coordinate (`none`: each decides alone; `redis`: one shared
//! coordinator), the clock skew between them, and where the Redis coordinator is (`url`, or
//! `spawn = true`: the run starts its own `redis-server` from PATH on a free loopback port).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The most hosts a fleet run may start (each is an OS process with its own engine).
const MAX_HOSTS: usize = 32;
/// The largest `clock_skew`.
const MAX_CLOCK_SKEW: Duration = Duration::from_secs(60);

/// How the hosts of a fleet share breaker decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coordination {
    /// Every host decides alone (the probe storm).
    None,
    /// The hosts share probe leases, breaker state and cooldowns through Redis.
    Redis,
}

impl Coordination {
    /// The name used in scenario files, reports and `policy = ...` filters.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Redis => "redis",
        }
    }
}

/// `[fleet]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetConfig {
    /// Gateway hosts (1: the single in-process engine, as without `[fleet]`).
    #[serde(default = "one")]
    pub hosts: usize,
    /// The coordination runs, in order (A/B when more than one).
    #[serde(default = "default_coordination")]
    pub coordination: Vec<Coordination>,
    /// Host i's wall clock is offset by a fixed amount within ±`clock_skew`.
    #[serde(default, with = "humantime_serde")]
    pub clock_skew: Option<Duration>,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            hosts: 1,
            coordination: default_coordination(),
            clock_skew: None,
        }
    }
}

fn one() -> usize {
    1
}

fn default_coordination() -> Vec<Coordination> {
    vec![Coordination::None]
}

/// `[coordinator]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoordinatorConfig {
    /// `redis://HOST:PORT[/DB]` of a Redis the run uses (and never stops).
    #[serde(default)]
    pub url: Option<String>,
    /// Start a `redis-server` from PATH on a free loopback port for the run, and stop it after.
    #[serde(default)]
    pub spawn: bool,
}

/// A `[fleet]`/`[coordinator]` value that cannot be used: the field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FleetError {
    /// The field path (`fleet.hosts`).
    pub field: String,
    /// What is wrong.
    pub msg: String,
}

fn err(field: &str, msg: impl Into<String>) -> FleetError {
    FleetError {
        field: field.to_string(),
        msg: msg.into(),
    }
}

impl FleetConfig {
    /// True when the run starts host processes (more than one host).
    pub(crate) fn is_fleet(&self) -> bool {
        self.hosts > 1
    }

    /// Host `i`'s clock offset in ms: spread evenly over ±`clock_skew` (host 0 at −skew, the
    /// last at +skew), 0 without skew. Deterministic, so a rerun has the same offsets.
    pub(crate) fn skew_ms(&self, i: usize) -> i64 {
        let Some(skew) = self.clock_skew else {
            return 0;
        };
        let s = i64::try_from(skew.as_millis()).unwrap_or(i64::MAX);
        if self.hosts < 2 {
            return 0;
        }
        let (i, n) = (i as i64, (self.hosts - 1) as i64);
        // −s + 2s·i/n, in i128 so no product overflows.
        let v = -(s as i128) + (2 * s as i128 * i as i128) / n.max(1) as i128;
        i64::try_from(v).unwrap_or(0)
    }

    /// Checks the table against `coordinator` (which `redis` needs) and the run's policies.
    pub(crate) fn validate(
        &self,
        coordinator: Option<&CoordinatorConfig>,
        policies: usize,
    ) -> Result<(), FleetError> {
        if self.hosts == 0 || self.hosts > MAX_HOSTS {
            return Err(err("fleet.hosts", format!("must be 1..={MAX_HOSTS}")));
        }
        if self.coordination.is_empty() {
            return Err(err(
                "fleet.coordination",
                "name at least one of none, redis",
            ));
        }
        for (i, c) in self.coordination.iter().enumerate() {
            if self.coordination[..i].contains(c) {
                return Err(err(
                    "fleet.coordination",
                    format!("`{}` appears twice", c.as_str()),
                ));
            }
        }
        if let Some(skew) = self.clock_skew
            && skew > MAX_CLOCK_SKEW
        {
            return Err(err("fleet.clock_skew", "must be at most 60s"));
        }
        if !self.is_fleet() {
            if self.coordination != default_coordination() || self.clock_skew.is_some() {
                return Err(err(
                    "fleet.hosts",
                    "coordination and clock_skew need more than one host",
                ));
            }
            return Ok(());
        }
        if policies != 1 {
            return Err(err(
                "policies",
                "a fleet run takes one policy (its A/B is `fleet.coordination`)",
            ));
        }
        let wants_redis = self.coordination.contains(&Coordination::Redis);
        match coordinator {
            None if wants_redis => Err(err(
                "fleet.coordination",
                "`redis` needs a [coordinator] table with `url = \"redis://...\"` or `spawn = true`",
            )),
            None => Ok(()),
            Some(c) => c.validate(),
        }
    }
}

impl CoordinatorConfig {
    /// Exactly one of `url` and `spawn`; a `redis://` URL the client accepts.
    pub(crate) fn validate(&self) -> Result<(), FleetError> {
        match (&self.url, self.spawn) {
            (Some(_), true) => Err(err(
                "coordinator.spawn",
                "give either `url` or `spawn = true`, not both",
            )),
            (None, false) => Err(err(
                "coordinator",
                "give `url = \"redis://HOST:PORT\"` or `spawn = true`",
            )),
            (None, true) => Ok(()),
            (Some(url), false) => {
                if !url.starts_with("redis://") {
                    return Err(err("coordinator.url", "must start with redis://"));
                }
                ::redis::Client::open(url.as_str())
                    .map(|_| ())
                    .map_err(|e| err("coordinator.url", e.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(hosts: usize, c: &[Coordination], skew: Option<u64>) -> FleetConfig {
        FleetConfig {
            hosts,
            coordination: c.to_vec(),
            clock_skew: skew.map(Duration::from_millis),
        }
    }

    #[test]
    fn skew_spreads_over_plus_minus() {
        let f = fleet(5, &[Coordination::None], Some(2000));
        let v: Vec<i64> = (0..5).map(|i| f.skew_ms(i)).collect();
        assert_eq!(v, vec![-2000, -1000, 0, 1000, 2000]);
        assert_eq!(fleet(5, &[Coordination::None], None).skew_ms(3), 0);
    }

    #[test]
    fn redis_needs_a_coordinator_and_one_of_url_or_spawn() {
        let f = fleet(3, &[Coordination::None, Coordination::Redis], None);
        assert_eq!(f.validate(None, 1).unwrap_err().field, "fleet.coordination");
        let spawn = CoordinatorConfig {
            url: None,
            spawn: true,
        };
        assert!(f.validate(Some(&spawn), 1).is_ok());
        let both = CoordinatorConfig {
            url: Some("redis://127.0.0.1:1".into()),
            spawn: true,
        };
        assert_eq!(
            f.validate(Some(&both), 1).unwrap_err().field,
            "coordinator.spawn"
        );
        let bad = CoordinatorConfig {
            url: Some("http://x".into()),
            spawn: false,
        };
        assert_eq!(
            f.validate(Some(&bad), 1).unwrap_err().field,
            "coordinator.url"
        );
        assert_eq!(f.validate(Some(&spawn), 2).unwrap_err().field, "policies");
    }

    #[test]
    fn bounds_and_duplicates() {
        let c = [Coordination::None];
        assert!(fleet(0, &c, None).validate(None, 1).is_err());
        assert!(fleet(MAX_HOSTS + 1, &c, None).validate(None, 1).is_err());
        let dup = fleet(2, &[Coordination::None, Coordination::None], None);
        assert!(dup.validate(None, 1).unwrap_err().msg.contains("twice"));
        assert!(fleet(2, &c, Some(61_000)).validate(None, 1).is_err());
        assert_eq!(
            fleet(1, &c, Some(10)).validate(None, 1).unwrap_err().field,
            "fleet.hosts"
        );
        assert!(fleet(1, &c, None).validate(None, 3).is_ok());
    }
}
