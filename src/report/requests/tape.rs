//! What the one upstream recorder keeps for the request lanes, whatever else it keeps: every
//! request in a few bytes (its time, its lane key interned, its fault), at most [`MAX_TAPE`] of
//! them on the run's clock (past it counted, with the time of the first left out), and the
//! warm-up's apart. Also the two clock origins in wall time (the run's and the warm-up's), read
//! off the records, so a gateway's log decisions can be put on the run's clock.

use crate::upstream::{RequestRoute, RouteKind, UpstreamRecord};

/// Most requests on the run's clock a tape keeps (a few bytes each).
const MAX_TAPE: usize = 200_000;
/// Most warm-up requests kept.
const MAX_WARM: usize = 2_000;
/// Most distinct lane keys; the requests of any further one share the last key (lanes past
/// the picture's own cap share its `other` lane anyway).
const MAX_KEYS: usize = 1_024;

/// What makes a lane: route, dep, token fingerprint, model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct LaneKey {
    /// `llm`, `tool:NAME`, `ws`.
    pub route: RequestRoute,
    /// The record's dep.
    pub dep: String,
    /// The token's fingerprint.
    pub profile_fp: Option<String>,
    /// The model named.
    pub model: Option<String>,
}

impl LaneKey {
    /// A model call.
    pub(crate) fn is_llm(&self) -> bool {
        self.route == RouteKind::Llm
    }

    /// The provider of a model call (`mockai` of `mockai/default/FP`).
    pub(crate) fn provider(&self) -> &str {
        self.dep.split('/').next().unwrap_or_default()
    }

    fn matches(&self, r: &UpstreamRecord, model: Option<&str>) -> bool {
        self.dep == r.dep
            && self.profile_fp.as_deref() == r.profile_fp.as_deref()
            && self.model.as_deref() == model
            && self.route == r.route
    }
}

/// One request, compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seen {
    /// Arrival: ms on the run's clock (wall), or since the warm-up began for a warm-up request.
    pub t_ms: u64,
    /// Index into the tape's keys.
    pub key: u32,
    /// Index into the tape's fault kinds, when a fault applied.
    pub kind: Option<u16>,
    /// The `[[fault]]` that applied.
    pub fault: Option<u32>,
    /// A breaker probe.
    pub probe: bool,
    /// A canary.
    pub canary: bool,
    /// The turn it was sent for (`None`: no marker).
    pub turn: Option<u64>,
    /// The fleet host that sent it: an index into the tape's hosts.
    pub host: Option<u16>,
}

/// The recorder's tape (see the module doc).
#[derive(Debug, Clone)]
pub struct RequestTape {
    pub(crate) keys: Vec<LaneKey>,
    pub(crate) kinds: Vec<String>,
    /// Fleet hosts that sent requests, in order of first appearance.
    pub(crate) hosts: Vec<String>,
    /// Requests on the run's clock, in arrival order.
    pub(crate) seen: Vec<Seen>,
    /// Requests on the run's clock in all.
    pub(crate) total: u64,
    /// Left out for the cap.
    pub(crate) dropped: u64,
    /// Wall ms (run clock) of the first left out.
    pub(crate) dropped_from_ms: Option<u64>,
    /// Warm-up requests (the first [`MAX_WARM`]).
    pub(crate) warm: Vec<Seen>,
    /// Warm-up requests in all.
    pub(crate) warm_total: u64,
    /// The run clock's start, Unix ms (read off the first record on it).
    pub(crate) clock_unix_ms: Option<u64>,
    /// The warm-up's start, Unix ms.
    pub(crate) warm_unix_ms: Option<u64>,
    cap: usize,
}

impl Default for RequestTape {
    /// An empty tape keeping at most [`MAX_TAPE`] requests.
    fn default() -> Self {
        Self {
            keys: Vec::new(),
            kinds: Vec::new(),
            hosts: Vec::new(),
            seen: Vec::new(),
            total: 0,
            dropped: 0,
            dropped_from_ms: None,
            warm: Vec::new(),
            warm_total: 0,
            clock_unix_ms: None,
            warm_unix_ms: None,
            cap: MAX_TAPE,
        }
    }
}

impl RequestTape {
    /// An empty tape keeping at most [`MAX_TAPE`] requests.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Keeps at most `cap` requests on the run's clock.
    #[cfg(test)]
    pub(crate) fn with_cap(mut self, cap: usize) -> Self {
        self.cap = cap;
        self
    }

    /// The key of `r`'s lane, interned without allocating when it is known (lanes are few:
    /// a linear scan, most recent first).
    fn key(&mut self, r: &UpstreamRecord) -> u32 {
        let model = (r.route == RouteKind::Llm).then_some(r.model.as_deref()).flatten();
        if let Some(i) = self.keys.iter().rposition(|k| k.matches(r, model)) {
            return u32::try_from(i).unwrap_or(u32::MAX);
        }
        if self.keys.len() >= MAX_KEYS {
            return u32::try_from(self.keys.len() - 1).unwrap_or(u32::MAX);
        }
        self.keys.push(LaneKey {
            route: r.route.clone(),
            dep: r.dep.clone(),
            profile_fp: r.profile_fp.clone(),
            model: model.map(str::to_string),
        });
        u32::try_from(self.keys.len() - 1).unwrap_or(u32::MAX)
    }

    fn kind(&mut self, name: &str) -> u16 {
        match self.kinds.iter().position(|k| k == name) {
            Some(i) => u16::try_from(i).unwrap_or(u16::MAX),
            None => {
                self.kinds.push(name.to_string());
                u16::try_from(self.kinds.len() - 1).unwrap_or(u16::MAX)
            }
        }
    }

    /// Takes one record.
    pub(crate) fn push(&mut self, r: &UpstreamRecord) {
        let origin = r.wall_ms.checked_sub(r.t_ms);
        if r.warmup {
            self.warm_total += 1;
            if self.warm_unix_ms.is_none() {
                self.warm_unix_ms = origin;
            }
            if self.warm.len() >= MAX_WARM {
                return;
            }
        } else {
            self.total += 1;
            if self.clock_unix_ms.is_none() {
                self.clock_unix_ms = origin;
            }
            if self.seen.len() >= self.cap {
                self.dropped += 1;
                self.dropped_from_ms.get_or_insert(r.t_ms);
                return;
            }
        }
        let seen = Seen {
            t_ms: r.t_ms,
            key: self.key(r),
            kind: r.fault.as_deref().map(|k| self.kind(k)),
            fault: r.fault_index.and_then(|i| u32::try_from(i).ok()),
            probe: r.probe && !r.canary,
            canary: r.canary,
            turn: r.turn,
            host: r.host.as_deref().map(|h| self.host(h)),
        };
        if r.warmup {
            self.warm.push(seen);
        } else {
            self.seen.push(seen);
        }
    }

    /// The index of host `h` (hosts are few; past `u16::MAX` they share the last index).
    fn host(&mut self, h: &str) -> u16 {
        if let Some(i) = self.hosts.iter().rposition(|x| x == h) {
            return u16::try_from(i).unwrap_or(u16::MAX);
        }
        if self.hosts.len() <= usize::from(u16::MAX) {
            self.hosts.push(h.to_string());
        }
        u16::try_from(self.hosts.len() - 1).unwrap_or(u16::MAX)
    }

    /// The fault kind of `s` (`ok` when none applied).
    pub(crate) fn outcome(&self, s: &Seen) -> &str {
        s.kind
            .and_then(|k| self.kinds.get(usize::from(k)))
            .map_or("ok", String::as_str)
    }
}
