//! How one turn sent to a gateway ended ([`TurnEnd`]): the outcome `[[expect.turn]]` counts and
//! report.json's `target.turns[].outcome` names. Decided once, by the client that read the
//! answer ([`super::client::TurnOutcome::end`]).

use serde::{Deserialize, Serialize};

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// A 2xx with a `finish_reason` and no error: a complete answer.
    Answered,
    /// A 2xx whose JSON body is an error (or is not the JSON of an answer).
    ErrorBody,
    /// A status outside 2xx.
    HttpError,
    /// No complete answer within the turn timeout.
    TimedOut,
    /// A 2xx stream (SSE) that carried an error event.
    ErrorEvent,
    /// The connection failed before an answer (refused, reset, ...).
    TransportError,
    /// A 2xx without an error that never gave a `finish_reason` (a stream cut short).
    Unfinished,
    /// A 2xx answer whose content is shorter than the `t1 … tN` the upstream served for the
    /// turn (decided after the run, from the upstream's record: `verdict::answers`).
    Truncated,
}

impl TurnEnd {
    /// Every outcome, in the order the docs list them.
    pub const ALL: [TurnEnd; 8] = [
        Self::Answered,
        Self::ErrorBody,
        Self::HttpError,
        Self::TimedOut,
        Self::ErrorEvent,
        Self::TransportError,
        Self::Unfinished,
        Self::Truncated,
    ];

    /// The snake_case name (`answered`, `error_body`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::ErrorBody => "error_body",
            Self::HttpError => "http_error",
            Self::TimedOut => "timed_out",
            Self::ErrorEvent => "error_event",
            Self::TransportError => "transport_error",
            Self::Unfinished => "unfinished",
            Self::Truncated => "truncated",
        }
    }

    /// The outcome named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_parse() {
        for e in TurnEnd::ALL {
            assert_eq!(TurnEnd::parse(e.as_str()), Some(e));
            let json = serde_json::to_string(&e).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", e.as_str()));
        }
        assert_eq!(TurnEnd::parse("answerd"), None);
    }
}
