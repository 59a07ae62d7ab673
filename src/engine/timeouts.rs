//! Deadlines by operation class (docs/engine.md): tool_call 30 s total; llm_inference TTFB
//! 30 s, inter-token 10 s, total 120 s; session 1800 s — `[engine.timeouts]`, speed-scaled. Each
//! phase is reported apart (`timeouts_total{class,phase}`): the transport keeps its own deadline
//! expiry distinct from kernel errors and says which deadline expired.
//!
//! The llm_inference TTFB defaults to OpenClaw's `timeoutSeconds` (the engine's top-level key)
//! unless `llmTtfb` is set here.
//!
//! `adaptive` (off by default) turns the tool-call deadline, and a model call's TTFB and inter-token
//! deadlines, into ones per dependency, from their
//! observed p99 × `factor` clamped to the class's `[floor, cap]`, once `minSamples` successes
//! were seen (the fixed value until then): see [`crate::engine::adaptive`]. The keys live here,
//! in `[engine.timeouts]`, beside the fixed values they replace.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::events::OpClass;
use super::transport::Deadlines;
use crate::util::speed::Speed;

/// `[engine.timeouts]`: nominal deadlines per operation class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TimeoutConfig {
    /// A tool call's whole round trip.
    #[serde(with = "humantime_serde")]
    pub tool_call: Duration,
    /// A model call's time to first byte; `None` = the engine's `timeoutSeconds`.
    #[serde(with = "humantime_serde", skip_serializing_if = "Option::is_none")]
    pub llm_ttfb: Option<Duration>,
    /// Longest silence between two tokens of a model stream.
    #[serde(with = "humantime_serde")]
    pub llm_inter_token: Duration,
    /// A model call's whole duration.
    #[serde(with = "humantime_serde")]
    pub llm_total: Duration,
    /// A WebSocket session's whole duration.
    #[serde(with = "humantime_serde")]
    pub session: Duration,
    /// Adaptive deadlines: `true`, `false` (default), or the policies whose runs use them
    /// (`["retry-gate"]`: an A/B of fixed against adaptive deadlines in one scenario).
    pub adaptive: AdaptiveSwitch,
    /// Adaptive deadline = observed p99 × this (default 1.5).
    pub factor: f64,
    /// Successes of a dependency before its deadline adapts (default 20); the fixed value until then.
    pub min_samples: i64,
    /// Successful latencies kept per dependency and class, the p99's window (default 100).
    pub window: i64,
    /// Lowest adaptive tool-call deadline (default 1 s).
    #[serde(with = "humantime_serde")]
    pub tool_call_floor: Duration,
    /// Highest adaptive tool-call deadline (default 30 s).
    #[serde(with = "humantime_serde")]
    pub tool_call_cap: Duration,
    /// Lowest adaptive model-call TTFB deadline (default 1 s).
    #[serde(with = "humantime_serde")]
    pub llm_ttfb_floor: Duration,
    /// Highest adaptive model-call TTFB deadline (default 30 s).
    #[serde(with = "humantime_serde")]
    pub llm_ttfb_cap: Duration,
    /// Lowest adaptive inter-token deadline of a model stream (default 1 s).
    #[serde(with = "humantime_serde")]
    pub llm_inter_token_floor: Duration,
    /// Highest adaptive inter-token deadline of a model stream (default 10 s).
    #[serde(with = "humantime_serde")]
    pub llm_inter_token_cap: Duration,
}

/// `adaptive = true | false | ["POLICY", ...]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AdaptiveSwitch {
    /// On or off for every run.
    All(bool),
    /// On only in the runs of these policies.
    Policies(Vec<String>),
}

impl Default for AdaptiveSwitch {
    fn default() -> Self {
        Self::All(false)
    }
}

impl AdaptiveSwitch {
    /// True when a run of `policy` uses adaptive deadlines.
    pub fn on_for(&self, policy: &str) -> bool {
        match self {
            Self::All(on) => *on,
            Self::Policies(names) => names.iter().any(|n| n == policy),
        }
    }
}

impl Default for TimeoutConfig {
    fn default() -> Self {
        Self {
            tool_call: Duration::from_secs(30),
            llm_ttfb: None,
            llm_inter_token: Duration::from_secs(10),
            llm_total: Duration::from_secs(120),
            session: Duration::from_secs(1800),
            adaptive: AdaptiveSwitch::default(),
            factor: 1.5,
            min_samples: 20,
            window: 100,
            tool_call_floor: Duration::from_secs(1),
            tool_call_cap: Duration::from_secs(30),
            llm_ttfb_floor: Duration::from_secs(1),
            llm_ttfb_cap: Duration::from_secs(30),
            llm_inter_token_floor: Duration::from_secs(1),
            llm_inter_token_cap: Duration::from_secs(10),
        }
    }
}

/// A timeout setting that cannot work, naming its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("engine.timeouts.{key}: {problem}")]
pub struct TimeoutConfigError {
    /// The key (camelCase).
    pub key: &'static str,
    /// What is wrong.
    pub problem: &'static str,
}

/// Most samples `window` may keep (each dependency keeps one ring per class).
pub const MAX_WINDOW: i64 = 10_000;

impl TimeoutConfig {
    /// Rejects zero deadlines and a TTFB longer than the total.
    pub fn validate(&self) -> Result<(), TimeoutConfigError> {
        let zero = |key, d: Duration| {
            if d.is_zero() {
                Err(TimeoutConfigError {
                    key,
                    problem: "must be longer than 0s",
                })
            } else {
                Ok(())
            }
        };
        zero("toolCall", self.tool_call)?;
        zero("llmInterToken", self.llm_inter_token)?;
        zero("llmTotal", self.llm_total)?;
        zero("session", self.session)?;
        if let Some(t) = self.llm_ttfb {
            zero("llmTtfb", t)?;
            if t > self.llm_total {
                return Err(TimeoutConfigError {
                    key: "llmTtfb",
                    problem: "must not exceed llmTotal",
                });
            }
        }
        self.validate_adaptive()
    }

    /// The adaptive keys: a factor of at least 1, `1 ≤ minSamples ≤ window ≤ 10000`, a floor
    /// above 0 and not above the cap.
    fn validate_adaptive(&self) -> Result<(), TimeoutConfigError> {
        let bad = |key, problem| Err(TimeoutConfigError { key, problem });
        if !(self.factor.is_finite() && self.factor >= 1.0) {
            return bad("factor", "must be a number of at least 1");
        }
        if !(1..=MAX_WINDOW).contains(&self.window) {
            return bad("window", "must be between 1 and 10000 samples");
        }
        if self.min_samples < 1 || self.min_samples > self.window {
            return bad("minSamples", "must be between 1 and `window`");
        }
        for (floor_key, floor, cap_key, cap, problem) in [
            (
                "toolCallFloor",
                self.tool_call_floor,
                "toolCallCap",
                self.tool_call_cap,
                "must not be below toolCallFloor",
            ),
            (
                "llmTtfbFloor",
                self.llm_ttfb_floor,
                "llmTtfbCap",
                self.llm_ttfb_cap,
                "must not be below llmTtfbFloor",
            ),
            (
                "llmInterTokenFloor",
                self.llm_inter_token_floor,
                "llmInterTokenCap",
                self.llm_inter_token_cap,
                "must not be below llmInterTokenFloor",
            ),
        ] {
            if floor.is_zero() {
                return bad(floor_key, "must be longer than 0s");
            }
            if floor > cap {
                return bad(cap_key, problem);
            }
        }
        if let AdaptiveSwitch::Policies(p) = &self.adaptive
            && p.is_empty()
        {
            return bad(
                "adaptive",
                "name at least one policy, or write true or false",
            );
        }
        Ok(())
    }

    /// The deadlines of one attempt of `class`, divided by `speed`. `default_ttfb` is the
    /// engine's `timeoutSeconds`, used when `llmTtfb` is not set; the total is never shorter
    /// than the TTFB.
    pub fn deadlines(&self, class: OpClass, speed: Speed, default_ttfb: Duration) -> Deadlines {
        let s = |d| speed.scale(d);
        match class {
            OpClass::ToolCall => Deadlines {
                ttfb: None,
                inter_token: None,
                total: s(self.tool_call),
            },
            OpClass::LlmInference => {
                let ttfb = self.llm_ttfb.unwrap_or(default_ttfb);
                Deadlines {
                    ttfb: Some(s(ttfb)),
                    inter_token: Some(s(self.llm_inter_token)),
                    total: s(self.llm_total.max(ttfb)),
                }
            }
            OpClass::Session => Deadlines {
                ttfb: None,
                inter_token: None,
                total: s(self.session),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn deadline_table_per_class_and_speed() {
        let t = TimeoutConfig::default();
        let ttfb = secs(30);
        // (class, speed, ttfb, inter_token, total)
        let table = [
            (OpClass::ToolCall, 1.0, None, None, secs(30)),
            (
                OpClass::LlmInference,
                1.0,
                Some(secs(30)),
                Some(secs(10)),
                secs(120),
            ),
            (OpClass::Session, 1.0, None, None, secs(1800)),
            (OpClass::ToolCall, 10.0, None, None, secs(3)),
            (
                OpClass::LlmInference,
                10.0,
                Some(secs(3)),
                Some(secs(1)),
                secs(12),
            ),
            (OpClass::Session, 100.0, None, None, secs(18)),
        ];
        for (class, speed, want_ttfb, want_inter, want_total) in table {
            let d = t.deadlines(class, crate::util::speed::sp(speed), ttfb);
            assert_eq!(
                (d.ttfb, d.inter_token, d.total),
                (want_ttfb, want_inter, want_total),
                "{class:?} at speed {speed}"
            );
        }
    }

    #[test]
    fn llm_ttfb_override_and_validation() {
        let t: TimeoutConfig = toml::from_str("llmTtfb = \"5s\"\ntoolCall = \"2s\"").unwrap();
        let d = t.deadlines(OpClass::LlmInference, Speed::ONE, secs(30));
        assert_eq!(d.ttfb, Some(secs(5)));
        assert!(t.validate().is_ok());
        let bad = TimeoutConfig {
            llm_ttfb: Some(secs(200)),
            ..TimeoutConfig::default()
        };
        assert_eq!(bad.validate().unwrap_err().key, "llmTtfb");
        assert!(toml::from_str::<TimeoutConfig>("tool_call = \"1s\"").is_err());
    }
}
