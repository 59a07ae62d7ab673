//! Scoping: which fault, if any, a request hits. Route, profile (bearer token), model, the
//! `from`/`until` window relative to the run start, `first` N matching requests and a
//! `probability` drawn from a seeded RNG. The first matching fault in file order wins.
//!
//! Everything here is a pure function of its inputs (`now` is passed in).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tokio::time::Instant;

use super::{FaultSpec, scale};

/// The `route` key of a fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteSel {
    /// `llm`: `POST /v1/chat/completions`.
    Llm,
    /// `tool:NAME`: `POST /tools/NAME`.
    Tool(String),
    /// `ws`: `GET /ws`.
    Ws,
    /// `*`: every route.
    Any,
}

impl RouteSel {
    /// Whether a request on `route` (with tool name `tool`) is selected.
    pub fn selects(&self, route: RouteKind, tool: Option<&str>) -> bool {
        match self {
            Self::Any => true,
            Self::Llm => route == RouteKind::Llm,
            Self::Ws => route == RouteKind::Ws,
            Self::Tool(name) => route == RouteKind::Tool && tool == Some(name.as_str()),
        }
    }

    /// The route kind this selects, or `None` for `*`.
    pub fn kind(&self) -> Option<RouteKind> {
        match self {
            Self::Llm => Some(RouteKind::Llm),
            Self::Tool(_) => Some(RouteKind::Tool),
            Self::Ws => Some(RouteKind::Ws),
            Self::Any => None,
        }
    }
}

impl fmt::Display for RouteSel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Llm => f.write_str("llm"),
            Self::Tool(n) => write!(f, "tool:{n}"),
            Self::Ws => f.write_str("ws"),
            Self::Any => f.write_str("*"),
        }
    }
}

impl FromStr for RouteSel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "llm" => Ok(Self::Llm),
            "ws" => Ok(Self::Ws),
            "*" => Ok(Self::Any),
            _ => match s.strip_prefix("tool:") {
                Some(name) if !name.is_empty() && !name.contains('/') => {
                    Ok(Self::Tool(name.to_string()))
                }
                _ => Err(format!(
                    "invalid route `{s}`: expected `llm`, `tool:NAME`, `ws` or `*`"
                )),
            },
        }
    }
}

impl Serialize for RouteSel {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RouteSel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The three upstream routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteKind {
    /// `POST /v1/chat/completions`.
    Llm,
    /// `POST /tools/NAME`.
    Tool,
    /// `GET /ws`.
    Ws,
}

/// What scoping looks at in a request.
#[derive(Debug, Clone, Copy)]
pub struct RequestScope<'a> {
    /// Which route.
    pub route: RouteKind,
    /// The tool name (tool route only).
    pub tool: Option<&'a str>,
    /// The bearer token, compared with a fault's `profile`; never stored.
    pub bearer: Option<&'a str>,
    /// The model of a model call.
    pub model: Option<&'a str>,
}

impl FaultSpec {
    /// Whether the fault's route, profile, model and window select this request at `elapsed`
    /// since the run start (`first` and `probability` are applied by [`FaultTable`]).
    pub fn in_scope(&self, req: &RequestScope<'_>, elapsed: Duration, speed: f64) -> bool {
        if !self.route.selects(req.route, req.tool) || !self.kind.as_fault().applies_to(req.route) {
            return false;
        }
        if let Some(p) = &self.profile
            && req.bearer != Some(p.as_str())
        {
            return false;
        }
        if let Some(m) = &self.model
            && req.model != Some(m.as_str())
        {
            return false;
        }
        if let Some(from) = self.from
            && elapsed < scale(from, speed)
        {
            return false;
        }
        if let Some(until) = self.until
            && elapsed >= scale(until, speed)
        {
            return false;
        }
        true
    }
}

/// The live fault list with its `first` counters and the seeded RNG.
#[derive(Debug, Clone)]
pub struct FaultTable {
    specs: Vec<FaultSpec>,
    /// Matching requests seen so far, per fault (for `first`).
    matched: Vec<u64>,
    rng: ChaCha8Rng,
    /// Canaries draw from their own stream, so user traffic sees the same faults as in a run
    /// without canaries.
    canary_rng: ChaCha8Rng,
}

/// Mixed into the seed of the canaries' RNG stream.
const CANARY_STREAM: u64 = 0x00ca_7a12_ca7a_12ca;

impl FaultTable {
    /// A table of `specs` whose RNG is seeded with `seed`.
    pub fn new(specs: Vec<FaultSpec>, seed: u64) -> Self {
        let matched = vec![0; specs.len()];
        Self {
            specs,
            matched,
            rng: ChaCha8Rng::seed_from_u64(seed),
            canary_rng: ChaCha8Rng::seed_from_u64(seed ^ CANARY_STREAM),
        }
    }

    /// The faults, in file order.
    pub fn specs(&self) -> &[FaultSpec] {
        &self.specs
    }

    /// Replaces the faults and resets their `first` counters (the RNG continues).
    pub fn replace(&mut self, specs: Vec<FaultSpec>) {
        self.matched = vec![0; specs.len()];
        self.specs = specs;
    }

    /// The RNG, for actions that draw (jitter).
    pub fn rng(&mut self) -> &mut ChaCha8Rng {
        &mut self.rng
    }

    /// The RNG for a user request's action, or the canaries' own stream for a canary.
    pub fn rng_for(&mut self, canary: bool) -> &mut ChaCha8Rng {
        if canary {
            &mut self.canary_rng
        } else {
            &mut self.rng
        }
    }

    /// The index of the fault this user request hits, if any. `start` is the run start, `now` the
    /// request's arrival. A fault in scope counts towards its `first` whether or not its
    /// probability then hits; the RNG is drawn only for probabilities strictly between 0 and 1.
    pub fn select(
        &mut self,
        req: &RequestScope<'_>,
        start: Instant,
        now: Instant,
        speed: f64,
    ) -> Option<usize> {
        self.select_for(req, start, now, speed, false)
    }

    /// Like [`select`](Self::select), for a user request or a canary (`X-Rehearse-Canary`).
    /// A canary sees every fault a user request would see at that instant — a `first = N` fault
    /// while it is still armed — but never counts towards `first` (so it cannot eat a fault
    /// meant for user traffic) and draws probabilities from its own RNG stream (so user traffic
    /// gets the same faults as in a run without canaries).
    pub fn select_for(
        &mut self,
        req: &RequestScope<'_>,
        start: Instant,
        now: Instant,
        speed: f64,
        canary: bool,
    ) -> Option<usize> {
        let elapsed = now.saturating_duration_since(start);
        for (i, spec) in self.specs.iter().enumerate() {
            if !spec.in_scope(req, elapsed, speed) {
                continue;
            }
            if let Some(first) = spec.first
                && self.matched[i] >= first
            {
                continue;
            }
            if !canary {
                self.matched[i] += 1;
            }
            let rng = if canary {
                &mut self.canary_rng
            } else {
                &mut self.rng
            };
            let hit = if spec.probability >= 1.0 {
                true
            } else if spec.probability <= 0.0 {
                false
            } else {
                rng.gen_bool(spec.probability)
            };
            if hit {
                return Some(i);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::faults::parse_fault_file;

    fn table(toml: &str, seed: u64) -> FaultTable {
        FaultTable::new(parse_fault_file(toml, "t.toml").unwrap(), seed)
    }

    fn llm<'a>(bearer: Option<&'a str>, model: Option<&'a str>) -> RequestScope<'a> {
        RequestScope {
            route: RouteKind::Llm,
            tool: None,
            bearer,
            model,
        }
    }

    fn tool(name: &str) -> RequestScope<'_> {
        RequestScope {
            route: RouteKind::Tool,
            tool: Some(name),
            bearer: None,
            model: None,
        }
    }

    #[test]
    fn window_opens_and_closes_relative_to_start_and_speed() {
        let mut t = table(
            "[[fault]]\nroute='tool:a'\nkind='status'\nstatus=503\nfrom='20s'\nuntil='60s'\n",
            1,
        );
        let start = Instant::now();
        let at = |s: u64| start + Duration::from_secs(s);
        assert_eq!(t.select(&tool("a"), start, at(19), 1.0), None);
        assert_eq!(t.select(&tool("a"), start, at(20), 1.0), Some(0));
        assert_eq!(t.select(&tool("a"), start, at(59), 1.0), Some(0));
        assert_eq!(t.select(&tool("a"), start, at(60), 1.0), None);
        assert_eq!(t.select(&tool("b"), start, at(30), 1.0), None);
        // speed 10: the window is 2 s .. 6 s
        assert_eq!(t.select(&tool("a"), start, at(1), 10.0), None);
        assert_eq!(t.select(&tool("a"), start, at(2), 10.0), Some(0));
        assert_eq!(t.select(&tool("a"), start, at(6), 10.0), None);
    }

    #[test]
    fn first_n_then_next_fault_in_file_order() {
        let mut t = table(
            "[[fault]]\nroute='llm'\nkind='status'\nstatus=500\nfirst=2\n\
             [[fault]]\nroute='*'\nkind='status'\nstatus=502\n",
            1,
        );
        let s = Instant::now();
        let r = llm(None, None);
        let got: Vec<_> = (0..4).map(|_| t.select(&r, s, s, 1.0)).collect();
        assert_eq!(got, [Some(0), Some(0), Some(1), Some(1)]);
        t.replace(t.specs().to_vec());
        assert_eq!(t.select(&r, s, s, 1.0), Some(0));
    }

    #[test]
    fn profile_and_model_scope() {
        let mut t = table(
            "[[fault]]\nroute='llm'\nprofile='p1'\nmodel='openai/gpt'\nkind='reset'\n",
            1,
        );
        let s = Instant::now();
        assert_eq!(
            t.select(&llm(Some("p1"), Some("openai/gpt")), s, s, 1.0),
            Some(0)
        );
        assert_eq!(
            t.select(&llm(Some("p2"), Some("openai/gpt")), s, s, 1.0),
            None
        );
        assert_eq!(t.select(&llm(Some("p1"), Some("other")), s, s, 1.0), None);
        assert_eq!(t.select(&llm(None, Some("openai/gpt")), s, s, 1.0), None);
    }

    #[test]
    fn probability_is_a_seeded_sequence() {
        let spec = "[[fault]]\nroute='*'\nkind='status'\nstatus=500\nprobability=0.5\n";
        let run = |seed| {
            let mut t = table(spec, seed);
            let s = Instant::now();
            (0..200)
                .map(|_| t.select(&tool("x"), s, s, 1.0).is_some())
                .collect::<Vec<_>>()
        };
        let a = run(42);
        assert_eq!(a, run(42));
        assert_ne!(a, run(43));
        let hits = a.iter().filter(|h| **h).count();
        assert!((70..=130).contains(&hits), "hits {hits}");
    }

    #[test]
    fn ws_kinds_skip_http_routes_under_star() {
        let mut t = table("[[fault]]\nroute='*'\nkind='ws_close'\ncode=4000\n", 1);
        let s = Instant::now();
        assert_eq!(t.select(&tool("x"), s, s, 1.0), None);
        let ws = RequestScope {
            route: RouteKind::Ws,
            tool: None,
            bearer: None,
            model: None,
        };
        assert_eq!(t.select(&ws, s, s, 1.0), Some(0));
    }

    #[test]
    fn canaries_see_an_armed_first_n_fault_but_never_use_it_up() {
        let mut t = table("[[fault]]\nroute='llm'\nkind='stall'\nfirst=1\n", 1);
        let (s, r) = (Instant::now(), llm(Some("p1"), None));
        for _ in 0..3 {
            assert_eq!(
                t.select_for(&r, s, s, 1.0, true),
                Some(0),
                "armed: canary hit"
            );
        }
        assert_eq!(
            t.select(&r, s, s, 1.0),
            Some(0),
            "the user's first call still gets it"
        );
        assert_eq!(
            t.select_for(&r, s, s, 1.0, true),
            None,
            "used up by the user"
        );
        assert_eq!(t.select(&r, s, s, 1.0), None);
    }

    #[test]
    fn canaries_draw_probabilities_from_their_own_stream() {
        let spec = "[[fault]]\nroute='*'\nkind='status'\nstatus=500\nprobability=0.5\n";
        let users = |canary_every: Option<usize>| {
            let mut t = table(spec, 7);
            let s = Instant::now();
            let mut got = Vec::new();
            for i in 0..200 {
                if canary_every.is_some_and(|n| i % n == 0) {
                    t.select_for(&tool("x"), s, s, 1.0, true);
                }
                got.push(t.select(&tool("x"), s, s, 1.0).is_some());
            }
            got
        };
        assert_eq!(
            users(None),
            users(Some(3)),
            "canaries leave user faults unchanged"
        );
        let mut t = table(spec, 7);
        let s = Instant::now();
        let canary_hits = (0..200)
            .filter(|_| t.select_for(&tool("x"), s, s, 1.0, true).is_some())
            .count();
        assert!(
            (70..=130).contains(&canary_hits),
            "canaries are hit too: {canary_hits}"
        );
    }
}
