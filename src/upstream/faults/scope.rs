//! Scoping: which fault, if any, a request hits. Route, profile (the bearer token or the id of
//! the scenario profile behind it), model (one rule for `PROVIDER/MODEL` and bare ids,
//! [`crate::wire::model`]), the `from`/`until` window relative to the run start, `first` N matching requests and a
//! `probability` drawn from a seeded RNG, and `when` (the request's shape, [`super::When`]; a
//! kind that acts on streams only sees streaming chat completions). The first matching fault in
//! file order wins.
//!
//! Everything here is a pure function of its inputs (`now` is passed in).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tokio::time::Instant;

use super::{FaultSpec, RequestShape};
use crate::util::speed::Speed;

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
    /// `coordinator`: the fleet's Redis, not the upstream (fleet mode: `down`, `latency`).
    Coordinator,
}

impl RouteSel {
    /// Whether a request on `route` (with tool name `tool`) is selected.
    fn selects(&self, route: RouteKind, tool: Option<&str>) -> bool {
        match self {
            Self::Any => true,
            Self::Llm => route == RouteKind::Llm,
            Self::Ws => route == RouteKind::Ws,
            Self::Tool(name) => route == RouteKind::Tool && tool == Some(name.as_str()),
            Self::Coordinator => false,
        }
    }

    /// The route kind this selects, or `None` for `*`.
    pub fn kind(&self) -> Option<RouteKind> {
        match self {
            Self::Llm => Some(RouteKind::Llm),
            Self::Tool(_) => Some(RouteKind::Tool),
            Self::Ws => Some(RouteKind::Ws),
            Self::Any | Self::Coordinator => None,
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
            Self::Coordinator => f.write_str("coordinator"),
        }
    }
}

/// A `route` that is none of `llm`, `tool:NAME`, `ws`, `*`, `coordinator`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid route `{0}`: expected `llm`, `tool:NAME`, `ws`, `*` or `coordinator`")]
pub struct InvalidRoute(pub String);

impl FromStr for RouteSel {
    type Err = InvalidRoute;

    fn from_str(s: &str) -> Result<Self, InvalidRoute> {
        match s {
            "llm" => Ok(Self::Llm),
            "ws" => Ok(Self::Ws),
            "*" => Ok(Self::Any),
            "coordinator" => Ok(Self::Coordinator),
            _ => match s.strip_prefix("tool:") {
                Some(name) if !name.is_empty() && !name.contains('/') => {
                    Ok(Self::Tool(name.to_string()))
                }
                _ => Err(InvalidRoute(s.to_string())),
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
    /// The id of the scenario profile behind the token, if it is one's: a fault's `profile`
    /// may name it in place of the token.
    pub profile_id: Option<&'a str>,
    /// That profile's provider: qualifies a bare model id ([`crate::wire::model`]).
    pub provider: Option<&'a str>,
    /// The model of a model call.
    pub model: Option<&'a str>,
    /// A chat completion's `stream` (`None`: not a chat completion).
    pub stream: Option<bool>,
    /// A chat completion's body, parsed only for a `when` that reads it ([`RequestShape`]).
    pub body: Option<&'a [u8]>,
}

impl FaultSpec {
    /// Whether the fault's route, profile, model and window select this request at `elapsed`
    /// since the run start (`first` and `probability` are applied by [`FaultTable`]).
    fn in_scope(&self, req: &RequestScope<'_>, elapsed: Duration, speed: Speed) -> bool {
        if !self.route.selects(req.route, req.tool) || !self.kind.as_fault().applies_to(req.route) {
            return false;
        }
        if let Some(p) = &self.profile
            && req.bearer != Some(p.as_str())
            && req.profile_id != Some(p.as_str())
        {
            return false;
        }
        if let Some(m) = &self.model
            && !req
                .model
                .is_some_and(|sent| crate::wire::model::names_model(m, sent, req.provider))
        {
            return false;
        }
        if let Some(from) = self.from
            && elapsed < speed.scale(from)
        {
            return false;
        }
        if let Some(until) = self.until
            && elapsed >= speed.scale(until)
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
    pub(crate) fn new(specs: Vec<FaultSpec>, seed: u64) -> Self {
        let matched = vec![0; specs.len()];
        Self {
            specs,
            matched,
            rng: ChaCha8Rng::seed_from_u64(seed),
            canary_rng: ChaCha8Rng::seed_from_u64(seed ^ CANARY_STREAM),
        }
    }

    /// The faults, in file order.
    pub(crate) fn specs(&self) -> &[FaultSpec] {
        &self.specs
    }

    /// Replaces the faults and resets their `first` counters (the RNG continues).
    pub(crate) fn replace(&mut self, specs: Vec<FaultSpec>) {
        self.matched = vec![0; specs.len()];
        self.specs = specs;
    }

    /// The RNG for a user request's action, or the canaries' own stream for a canary.
    pub(crate) fn rng_for(&mut self, canary: bool) -> &mut ChaCha8Rng {
        if canary {
            &mut self.canary_rng
        } else {
            &mut self.rng
        }
    }

    /// The index of the fault this user request hits, if any. `start` is the run start, `now` the
    /// request's arrival. A fault in scope counts towards its `first` whether or not its
    /// probability then hits; the RNG is drawn only for probabilities strictly between 0 and 1.
    #[cfg(test)] // used by the tests only
    pub(crate) fn select(
        &mut self,
        req: &RequestScope<'_>,
        start: Instant,
        now: Instant,
        speed: Speed,
    ) -> Option<usize> {
        self.select_for(req, start, now, speed, false)
    }

    /// Like [`select`](Self::select), for a user request or a canary (`X-Rehearse-Canary`).
    /// A canary sees every fault a user request would see at that instant except `first = N`
    /// faults: those are aimed at N user requests, so a canary neither sees nor uses one up (it
    /// falls through to the next fault in scope). It draws probabilities from its own RNG stream,
    /// so user traffic gets the same faults as in a run without canaries.
    pub(crate) fn select_for(
        &mut self,
        req: &RequestScope<'_>,
        start: Instant,
        now: Instant,
        speed: Speed,
        canary: bool,
    ) -> Option<usize> {
        let elapsed = now.saturating_duration_since(start);
        // The body's shape, parsed at most once and only for a `when` that reads it.
        let mut shape: Option<RequestShape> = None;
        for (i, spec) in self.specs.iter().enumerate() {
            if !spec.in_scope(req, elapsed, speed) {
                continue;
            }
            if spec.kind.as_fault().streams_only() && req.stream != Some(true) {
                continue;
            }
            if let Some(when) = &spec.when {
                let Some(stream) = req.stream else {
                    continue;
                };
                let body = req.body.unwrap_or_default();
                if !when.holds(stream, || *shape.get_or_insert_with(|| RequestShape::of(body))) {
                    continue;
                }
            }
            if let Some(first) = spec.first
                && (canary || self.matched[i] >= first)
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
mod tests;
