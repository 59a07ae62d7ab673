//! `GET /_rehearse/stats`: per route and profile (fingerprinted) request and fault counts,
//! idempotency keys seen and duplicate executions, and the arrival times of calls per dep
//! (with `probe` marking calls that carried `X-Breaker-Probe` and `canary` the synthetic health
//! checks among them, which also carry `X-Rehearse-Canary`).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

/// Most arrivals kept per dep by default; later ones are only counted in `truncated`.
pub(super) const MAX_ARRIVALS_PER_DEP: usize = 100_000;

/// The upstream's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Every request on the three routes.
    pub requests: u64,
    /// Of those, canaries (`X-Rehearse-Canary`).
    #[serde(default)]
    pub canaries: u64,
    /// Per route (`llm`, `tool:NAME`, `ws`).
    pub routes: BTreeMap<String, RouteStats>,
    /// Per dep, in arrival order.
    pub deps: BTreeMap<String, DepStats>,
}

/// Counters of one route.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteStats {
    /// Requests on this route.
    pub requests: u64,
    /// Faults applied, by kind.
    pub faults: BTreeMap<String, u64>,
    /// Distinct `Idempotency-Key` values seen.
    pub idempotency_keys_seen: u64,
    /// Requests that executed a key already executed before (should be 0).
    pub duplicates_executed: u64,
    /// Per profile: the bearer token's fingerprint, or `none`.
    pub profiles: BTreeMap<String, ProfileStats>,
}

/// Counters of one route and profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileStats {
    /// Requests.
    pub requests: u64,
    /// Faults applied, by kind.
    pub faults: BTreeMap<String, u64>,
}

/// Arrivals of one dep.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DepStats {
    /// Each call's arrival, in order.
    pub arrivals: Vec<Arrival>,
    /// Arrivals beyond the cap ([`MAX_ARRIVALS_PER_DEP`] unless configured; counted, not kept).
    #[serde(default)]
    pub truncated: u64,
}

/// One call's arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrival {
    /// Milliseconds since the run start.
    pub t_ms: u64,
    /// Whether it carried `X-Breaker-Probe`.
    pub probe: bool,
    /// Whether it was a canary (`X-Rehearse-Canary`), not a breaker probe.
    #[serde(default)]
    pub canary: bool,
}

/// What one request contributes to the stats.
#[derive(Debug)]
pub(crate) struct Observation<'a> {
    pub t_ms: u64,
    pub route: &'a str,
    pub dep: &'a str,
    pub profile_fp: Option<&'a str>,
    pub probe: bool,
    pub canary: bool,
    pub fault: Option<&'a str>,
    pub idempotency_key: Option<&'a str>,
    /// Whether the handler runs (no status/rate_limit/stall/reset fault).
    pub executes: bool,
}

/// The stats plus the idempotency-key sets behind them.
#[derive(Debug)]
pub(crate) struct StatsState {
    pub stats: Stats,
    seen: HashSet<(String, String)>,
    executed: HashSet<(String, String)>,
    arrival_cap: usize,
}

impl Default for StatsState {
    fn default() -> Self {
        Self::with_arrival_cap(MAX_ARRIVALS_PER_DEP)
    }
}

impl StatsState {
    /// Empty stats that keep at most `cap` arrivals per dep.
    pub(super) fn with_arrival_cap(cap: usize) -> Self {
        Self {
            stats: Stats::default(),
            seen: HashSet::new(),
            executed: HashSet::new(),
            arrival_cap: cap,
        }
    }

    /// Adds one request; returns whether it was a duplicate execution.
    pub(super) fn observe(&mut self, o: &Observation<'_>) -> bool {
        let s = &mut self.stats;
        s.requests += 1;
        s.canaries += u64::from(o.canary);
        let route = entry(&mut s.routes, o.route);
        route.requests += 1;
        let profile = entry(&mut route.profiles, o.profile_fp.unwrap_or("none"));
        profile.requests += 1;
        if let Some(kind) = o.fault {
            *entry(&mut route.faults, kind) += 1;
            *entry(&mut profile.faults, kind) += 1;
        }
        let mut duplicate = false;
        if let Some(key) = o.idempotency_key {
            let k = (o.route.to_string(), key.to_string());
            if !self.seen.contains(&k) {
                route.idempotency_keys_seen += 1;
                self.seen.insert(k.clone());
            }
            if o.executes && !self.executed.insert(k) {
                route.duplicates_executed += 1;
                duplicate = true;
            }
        }
        let dep = entry(&mut s.deps, o.dep);
        if dep.arrivals.len() < self.arrival_cap {
            dep.arrivals.push(Arrival {
                t_ms: o.t_ms,
                probe: o.probe,
                canary: o.canary,
            });
        } else {
            dep.truncated += 1;
        }
        duplicate
    }
}

/// `map[key]`, inserting a default; allocates the key only the first time (hot path).
fn entry<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_string(), V::default());
    }
    map.get_mut(key).expect("key present") // ok: inserted just above if it was missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs<'a>(key: Option<&'a str>, executes: bool, fault: Option<&'a str>) -> Observation<'a> {
        Observation {
            t_ms: 5,
            route: "tool:ticket_create",
            dep: "ticket_create",
            profile_fp: Some("abc123"),
            probe: false,
            canary: false,
            fault,
            idempotency_key: key,
            executes,
        }
    }

    #[test]
    fn duplicates_count_only_repeated_executions() {
        let mut st = StatsState::default();
        assert!(!st.observe(&obs(Some("k1"), false, Some("status"))));
        assert!(!st.observe(&obs(Some("k1"), true, None)));
        assert!(st.observe(&obs(Some("k1"), true, Some("latency"))));
        assert!(!st.observe(&obs(Some("k2"), true, None)));
        assert!(!st.observe(&obs(None, true, None)));
        let r = &st.stats.routes["tool:ticket_create"];
        assert_eq!(r.requests, 5);
        assert_eq!(r.idempotency_keys_seen, 2);
        assert_eq!(r.duplicates_executed, 1);
        assert_eq!(r.faults["status"], 1);
        assert_eq!(r.profiles["abc123"].requests, 5);
        assert_eq!(st.stats.deps["ticket_create"].arrivals.len(), 5);
    }

    #[test]
    fn arrivals_past_the_cap_are_only_counted() {
        let mut st = StatsState::with_arrival_cap(2);
        for _ in 0..5 {
            st.observe(&obs(None, true, None));
        }
        let dep = &st.stats.deps["ticket_create"];
        assert_eq!((dep.arrivals.len(), dep.truncated), (2, 3));
        assert_eq!(st.stats.requests, 5);
    }
}
