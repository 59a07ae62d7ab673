//! The failover policies a rehearsal can compare.
//!
//! - `retry-gate` (default): a timeout is a weak signal. It retries the same profile up to
//!   `retrySameProfileOnTimeout` times after a jittered delay, writing no cooldown; only when the
//!   gate is exhausted does the profile cool (reason timeout) and failover rotate. A rate limit is
//!   a strong signal: it cools at once for max(schedule, Retry-After) and rotates.
//! - `legacy`: the bug being rehearsed. Any timeout cools the profile at once with the legacy
//!   schedule (60 s × 5ⁿ⁻¹, cap 1 h, n = the profile's shared `errorCount`) and rotates, logging
//!   `Profile ID timed out (possible rate limit). Trying next account...`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A failover policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Policy {
    /// The reason-aware retry gate (default).
    #[default]
    #[serde(rename = "retry-gate")]
    RetryGate,
    /// The old behaviour: every timeout cools and rotates.
    #[serde(rename = "legacy")]
    Legacy,
}

impl Policy {
    /// The policy's name as written in scenarios and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RetryGate => "retry-gate",
            Self::Legacy => "legacy",
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An unknown policy name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy `{0}` (expected `retry-gate` or `legacy`)")]
pub struct UnknownPolicy(pub String);

impl FromStr for Policy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "retry-gate" => Ok(Self::RetryGate),
            "legacy" => Ok(Self::Legacy),
            other => Err(UnknownPolicy(other.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_both_names() {
        for p in [Policy::RetryGate, Policy::Legacy] {
            assert_eq!(p.as_str().parse::<Policy>().unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{p}\""));
        }
        assert_eq!(Policy::default(), Policy::RetryGate);
        let err = "retrygate".parse::<Policy>().unwrap_err();
        assert!(err.to_string().contains("retrygate"));
    }
}
