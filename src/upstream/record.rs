//! One [`UpstreamRecord`] per request the upstream receives, handed to every subscribed
//! [`RecordSink`] (the run harness appends them to `upstream.jsonl`). Bearer tokens appear only
//! as fingerprints.

use std::fmt;

use crate::util::sync::Locked;
use serde::{Deserialize, Serialize};

use super::faults::RouteKind;

/// The route a request came in on, with the tool's name: written `llm`, `tool:NAME` or `ws` in
/// `upstream.jsonl` (docs/report.md), compared as a type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum RequestRoute {
    /// `POST /v1/chat/completions`.
    Llm,
    /// `POST /tools/NAME`.
    Tool(String),
    /// `GET /ws`.
    Ws,
}

impl RequestRoute {
    /// The route without the tool's name.
    pub fn kind(&self) -> RouteKind {
        match self {
            RequestRoute::Llm => RouteKind::Llm,
            RequestRoute::Tool(_) => RouteKind::Tool,
            RequestRoute::Ws => RouteKind::Ws,
        }
    }

    /// The route of a request of `kind` (`tool` names the tool of a tool call).
    pub fn of(kind: RouteKind, tool: Option<&str>) -> Self {
        match kind {
            RouteKind::Llm => RequestRoute::Llm,
            RouteKind::Tool => RequestRoute::Tool(tool.unwrap_or_default().to_string()),
            RouteKind::Ws => RequestRoute::Ws,
        }
    }
}

impl PartialEq<RouteKind> for RequestRoute {
    fn eq(&self, other: &RouteKind) -> bool {
        self.kind() == *other
    }
}

impl fmt::Display for RequestRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestRoute::Llm => f.write_str("llm"),
            RequestRoute::Tool(name) => write!(f, "tool:{name}"),
            RequestRoute::Ws => f.write_str("ws"),
        }
    }
}

impl From<RequestRoute> for String {
    fn from(r: RequestRoute) -> String {
        r.to_string()
    }
}

/// A route string that is none of `llm`, `tool:NAME`, `ws`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("route `{0}` is not llm, tool:NAME or ws")]
pub struct UnknownRoute(pub String);

impl std::str::FromStr for RequestRoute {
    type Err = UnknownRoute;
    fn from_str(s: &str) -> Result<Self, UnknownRoute> {
        match s {
            "llm" => Ok(RequestRoute::Llm),
            "ws" => Ok(RequestRoute::Ws),
            _ => s
                .strip_prefix("tool:")
                .map(|n| RequestRoute::Tool(n.to_string()))
                .ok_or_else(|| UnknownRoute(s.to_string())),
        }
    }
}

impl TryFrom<String> for RequestRoute {
    type Error = UnknownRoute;
    fn try_from(s: String) -> Result<Self, UnknownRoute> {
        s.parse()
    }
}

/// One request as the upstream saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamRecord {
    /// Milliseconds since the run start (or the upstream's start).
    pub t_ms: u64,
    /// Wall-clock time of the request, milliseconds since the Unix epoch (to line records up
    /// with an external gateway's own log).
    #[serde(default)]
    pub wall_ms: u64,
    /// `llm`, `tool:NAME` or `ws`.
    pub route: RequestRoute,
    /// The dependency: the `X-Breaker-Probe` value when present; else the tool name, the ws
    /// channel, or `PROVIDER/default/FP` for model calls.
    pub dep: String,
    /// The request's `model`, for model calls that named one.
    #[serde(default)]
    pub model: Option<String>,
    /// Fingerprint of the bearer token, if one was sent.
    pub profile_fp: Option<String>,
    /// Whether the request carried `X-Breaker-Probe` (a half-open probe or a canary).
    pub probe: bool,
    /// Whether the request carried `X-Rehearse-Canary`: a synthetic health check, not a breaker
    /// probe and not user traffic.
    #[serde(default)]
    pub canary: bool,
    /// The fault kind applied, if any.
    pub fault: Option<String>,
    /// Which `[[fault]]` table applied (0-based, in file order), if any.
    #[serde(default)]
    pub fault_index: Option<usize>,
    /// The `Idempotency-Key` header, if any.
    #[serde(default)]
    pub idempotency_key: Option<String>,
    /// Whether this request executed a key that had already been executed.
    #[serde(default)]
    pub duplicate: bool,
    /// Fleet mode: the gateway host that sent it (`X-Rehearse-Host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// It arrived before the run's clock started (the faults not yet armed): the warm-up's
    /// request, never judged and never faulted; its `t_ms` is ms since the warm-up began.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
    /// The wait the response's `Retry-After` header told the client, in scenario ms (the
    /// header's seconds, or its HTTP date less the request's wall time, × the speed: the
    /// harness divided the configured wait by it); absent when the response sent none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The turn it was sent for (`wire::turn`): the marker of its `X-Rehearse-Turn` header (the
    /// embedded engine, fleet hosts) or of its body's last run of user messages (a gateway); `null`
    /// when it had none (a gateway's own call: compaction, a title), never guessed. Absent in
    /// recordings made before turns were marked.
    #[serde(default)]
    pub turn: Option<u64>,
    /// A chat completion's content tokens: the `N` of the `t1 … tN` the upstream built for it
    /// (its `fault` says whether it went out whole: a stream fault cuts it, a refusal sends
    /// none of it); absent for other routes and in older recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// The `usage` that answer carries at its end (a JSON answer always; a stream only when
    /// asked, `stream_options.include_usage`); absent when it carries none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::wire::usage::Usage>,
    /// When the upstream finished serving it, ms on `t_ms`'s clock: the last byte of its
    /// response handed to the connection, or the moment serving stopped short (a reset, the
    /// client went away, the server stopped). Absent in recordings made before it, and for a
    /// request still being served when its line was written (the run's record closed first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_ms: Option<u64>,
    /// Whether the upstream wrote its whole answer: a response of every token and its ending
    /// (no fault, or one that only delays or paces it: `latency`, `slow_stream`,
    /// `first_token_delay`, a `stall_stream` that resumes) that went out to its last byte.
    /// `false`: a refusal, a cut, a reset, an injected error, or serving stopped before the end
    /// (the client went away). Absent where `done_ms` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<bool>,
    /// The upstream's own number for the request, in arrival order: what the end of its serving
    /// ([`RecordSink::done`]) names. `None` for a record the upstream will not end (tests, a
    /// record read back); never written.
    #[serde(skip)]
    pub seq: Option<u64>,
}

#[cfg(test)]
impl UpstreamRecord {
    /// A model request for tests: at `t_ms` (wall clock `wall_ms`), to dep `dep`, naming
    /// `model`, with the key fingerprint `fp`, faulted by `fault`; the rest off.
    pub(crate) fn llm_for_test(
        t_ms: u64,
        wall_ms: u64,
        dep: String,
        model: Option<&str>,
        fp: Option<&str>,
        fault: Option<&str>,
    ) -> Self {
        Self {
            t_ms,
            wall_ms,
            route: RequestRoute::Llm,
            dep,
            model: model.map(str::to_string),
            profile_fp: fp.map(str::to_string),
            probe: false,
            canary: false,
            fault: fault.map(str::to_string),
            fault_index: None,
            idempotency_key: None,
            duplicate: false,
            host: None,
            warmup: false,
            retry_after_ms: None,
            turn: None,
            tokens: None,
            usage: None,
            done_ms: None,
            whole: None,
            seq: None,
        }
    }
}

/// Receives every [`UpstreamRecord`] when its request arrives, and then the end of its serving.
/// Called on the request path: keep it quick.
pub trait RecordSink: Send + Sync {
    /// Takes one record, at the request's arrival (its `done_ms` and `whole` not known yet).
    fn record(&self, r: &UpstreamRecord);

    /// The upstream finished serving the request numbered `seq` (its record's `seq`) at
    /// `done_ms` (on its `t_ms`'s clock), its whole answer written or not (`whole`). Called
    /// once per record that has a `seq`, after [`RecordSink::record`]. By default ignored.
    fn done(&self, seq: u64, done_ms: u64, whole: bool) {
        let _ = (seq, done_ms, whole);
    }
}

/// A sink that keeps records in memory (tests, small runs).
#[derive(Debug, Default)]
pub struct MemoryRecords {
    records: std::sync::Mutex<Vec<UpstreamRecord>>,
}

impl MemoryRecords {
    /// Everything recorded so far.
    pub fn take(&self) -> Vec<UpstreamRecord> {
        std::mem::take(&mut *self.records.locked())
    }
}

impl RecordSink for MemoryRecords {
    fn record(&self, r: &UpstreamRecord) {
        self.records.locked().push(r.clone())
    }

    fn done(&self, seq: u64, done_ms: u64, whole: bool) {
        let mut records = self.records.locked();
        if let Some(r) = records.iter_mut().rev().find(|r| r.seq == Some(seq)) {
            r.done_ms = Some(done_ms);
            r.whole = Some(whole);
        }
    }
}

#[cfg(test)]
mod route_tests {
    use super::*;

    #[test]
    fn a_route_is_written_as_the_contract_spells_it_and_reads_back() {
        for (r, text) in [
            (RequestRoute::Llm, "\"llm\""),
            (RequestRoute::Ws, "\"ws\""),
            (
                RequestRoute::Tool("crm_search".into()),
                "\"tool:crm_search\"",
            ),
        ] {
            assert_eq!(serde_json::to_string(&r).unwrap(), text);
            assert_eq!(serde_json::from_str::<RequestRoute>(text).unwrap(), r);
        }
        assert!(serde_json::from_str::<RequestRoute>("\"coordinator\"").is_err());
        assert!(RequestRoute::Tool("x".into()) == RouteKind::Tool);
        assert!(RequestRoute::Llm != RouteKind::Ws);
    }
}
