//! Per-dependency read-failure diagnostics: why reads failed — our deadline,
//! a peer reset, a body that ended early, headers that never arrived, an inter-token stall —
//! classified by the transports from typed errors (hyper predicates, then the innermost
//! `io::Error` kind), never by matching error strings.

use crate::util::sync::Locked;
use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// One read-failure class, as the transport saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadFailure {
    /// Our total deadline expired after the response head had arrived.
    DeadlineExceeded,
    /// The peer reset the connection (before or during the body).
    PeerReset,
    /// The body (or stream) ended before its declared end.
    BodyEndedEarly,
    /// No response head arrived: our TTFB/total deadline expired, or the peer closed first.
    HeadersNeverArrived,
    /// A progressing stream went silent past the inter-token deadline.
    InterTokenStall,
    /// A 200 stream carried an error event (`data: {"error": …}`) or a `data:` line that is not
    /// JSON: the stream is broken, whatever follows.
    StreamError,
    /// Nobody listened (connection refused).
    Refused,
    /// A WebSocket pong did not arrive within its deadline.
    WsPingTimeout,
    /// The WebSocket peer closed abnormally.
    WsClosed,
    /// Any other I/O or protocol error.
    Other,
}

impl ReadFailure {
    /// The snake_case name used in report.json and report.md.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::DeadlineExceeded => "deadline_exceeded",
            Self::PeerReset => "peer_reset",
            Self::BodyEndedEarly => "body_ended_early",
            Self::HeadersNeverArrived => "headers_never_arrived",
            Self::InterTokenStall => "inter_token_stall",
            Self::StreamError => "stream_error",
            Self::Refused => "refused",
            Self::WsPingTimeout => "ws_ping_timeout",
            Self::WsClosed => "ws_closed",
            Self::Other => "other",
        }
    }
}

/// Counts of read failures per dependency, shared by every worker's transport calls.
#[derive(Debug, Default)]
pub struct Diagnostics {
    counts: Mutex<BTreeMap<String, BTreeMap<ReadFailure, u64>>>,
}

impl Diagnostics {
    /// Counts one failure of `dep`.
    pub(crate) fn record(&self, dep: &str, failure: ReadFailure) {
        let mut map = self.counts.locked();
        *map.entry(dep.to_string())
            .or_default()
            .entry(failure)
            .or_default() += 1;
    }

    /// A copy of the counts: dep → class name → count (only non-zero classes).
    pub fn snapshot(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        let map = self.counts.locked();
        map.iter()
            .map(|(dep, by)| {
                let by = by
                    .iter()
                    .map(|(k, v)| (k.as_str().to_string(), *v))
                    .collect();
                (dep.clone(), by)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_dep_and_class() {
        let d = Diagnostics::default();
        d.record("crm_search", ReadFailure::PeerReset);
        d.record("crm_search", ReadFailure::PeerReset);
        d.record("openai-codex/default/abc123", ReadFailure::InterTokenStall);
        let s = d.snapshot();
        assert_eq!(s["crm_search"]["peer_reset"], 2);
        assert_eq!(s["openai-codex/default/abc123"]["inter_token_stall"], 1);
        assert_eq!(s.len(), 2);
    }
}
