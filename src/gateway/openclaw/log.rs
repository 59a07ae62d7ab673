//! OpenClaw's JSON-lines log (`logging.file`) as typed failover decisions. Each line is an
//! object whose field `"1"` is either text or an object with an `event`; the time is
//! `_meta.date` (RFC 3339, UTC). The lines read here (as 2026.9.6 writes them):
//!
//! - event `embedded_run_failover_decision`: `decision` (`rotate_profile` | `fallback_model`),
//!   `failoverReason`, `retryCount`, `profileId` (`sha256:` + 12 hex of the profile id, see
//!   [`profile_hash`]), `provider`, `model`;
//! - event `auth_profile_failure_state_updated`: `profileId`, `reason`, `cooldownUntil`;
//! - event `model_fallback_decision`: `decision` (`candidate_failed` | `candidate_succeeded`),
//!   `candidateProvider`/`candidateModel`, `reason`;
//! - event `model_fallback_chain_stopped`;
//! - text `transient same-model retry 3/8 for mockai/m1 reason=server_error: delayMs=5057`;
//! - text `transient retry window elapsed for mockai/m1 after 6/8 retries; …`;
//! - text `[idle-timeout-circuit-breaker-tripped] … consecutive=5 cap=5`.
//!
//! Lines that are none of these (or not JSON) are skipped. Profile keys never appear in what is
//! parsed: OpenClaw logs profile ids only as hashes.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// One decision OpenClaw logged, with its wall-clock time (ms since the Unix epoch).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoggedDecision {
    /// `_meta.date` in milliseconds since the Unix epoch (0 if the line had none).
    pub wall_ms: u64,
    /// What was decided.
    pub decision: Decision,
}

/// The decisions the supervisor reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Decision {
    /// `embedded_run_failover_decision`.
    Failover {
        /// `rotate_profile` or `fallback_model`.
        decision: String,
        /// `failoverReason` (`server_error`, `rate_limit`, `timeout`, `auth`, …).
        reason: Option<String>,
        /// `retryCount`.
        retry_count: Option<u64>,
        /// `profileId`: `sha256:` + 12 hex digits (see [`profile_hash`]).
        profile_hash: Option<String>,
        /// `provider`.
        provider: Option<String>,
        /// `model`.
        model: Option<String>,
    },
    /// `auth_profile_failure_state_updated`.
    ProfileFailureState {
        /// `profileId` hash.
        profile_hash: Option<String>,
        /// `reason`.
        reason: Option<String>,
        /// `cooldownUntil` (ms since the epoch).
        cooldown_until_ms: Option<u64>,
    },
    /// `model_fallback_decision`.
    ModelFallback {
        /// `candidate_failed` or `candidate_succeeded`.
        decision: String,
        /// `candidateProvider/candidateModel`.
        candidate: Option<String>,
        /// `reason`.
        reason: Option<String>,
    },
    /// `model_fallback_chain_stopped`.
    FallbackChainStopped {
        /// `reason`, if given.
        reason: Option<String>,
    },
    /// `transient same-model retry I/N for TARGET reason=R: delayMs=D`.
    SameModelRetry {
        /// I.
        attempt: u32,
        /// N.
        of: u32,
        /// `provider/model`.
        target: String,
        /// R.
        reason: Option<String>,
        /// D.
        delay_ms: u64,
    },
    /// `transient retry window elapsed for TARGET after I/N retries`.
    RetryWindowElapsed {
        /// `provider/model`.
        target: String,
        /// Retries done, when stated.
        retries: Option<u32>,
    },
    /// `[idle-timeout-circuit-breaker-tripped] … consecutive=C cap=K`.
    IdleTimeoutBreakerTripped {
        /// C.
        consecutive: Option<u32>,
        /// K.
        cap: Option<u32>,
    },
}

/// How OpenClaw names a profile in its log: `sha256:` + the first 12 hex digits of the SHA-256
/// of the profile id (`mockai:a`).
pub(crate) fn profile_hash(profile_id: &str) -> String {
    let digest = Sha256::digest(profile_id.as_bytes());
    format!("sha256:{}", &hex::encode(digest)[..12])
}

/// Every decision in a log's text, in order.
fn parse_log(text: &str) -> Vec<LoggedDecision> {
    text.lines().filter_map(parse_line).collect()
}

/// Reads and parses the log file. A missing file is an error like an unreadable one: the
/// gateway wrote no log where it was told to, so its decisions are unknown, not none.
pub(crate) fn read_log(path: &Path) -> std::io::Result<Vec<LoggedDecision>> {
    let bytes = std::fs::read(path)?;
    Ok(parse_log(&String::from_utf8_lossy(&bytes)))
}

/// The last `n` lines of a log as plain messages (`message`, else field `"1"`), for errors.
pub(crate) fn last_messages(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    lines[start..]
        .iter()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(v) => {
                let msg = v
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| v.get("1").map(|f| f.to_string()))
                    .unwrap_or_else(|| l.to_string());
                let level = v
                    .pointer("/_meta/logLevelName")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if level.is_empty() {
                    msg
                } else {
                    format!("{level} {msg}")
                }
            }
            Err(_) => l.to_string(),
        })
        .collect()
}

/// One log line, if it is a decision.
pub(crate) fn parse_line(line: &str) -> Option<LoggedDecision> {
    let v: Value = serde_json::from_str(line).ok()?;
    let wall_ms = v
        .pointer("/_meta/date")
        .and_then(Value::as_str)
        .and_then(|d| humantime::parse_rfc3339_weak(d).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let decision = match v.get("1")? {
        Value::Object(o) => event(o)?,
        Value::String(s) => text(s)?,
        _ => return None,
    };
    Some(LoggedDecision { wall_ms, decision })
}

fn event(o: &serde_json::Map<String, Value>) -> Option<Decision> {
    let s = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_string);
    let n = |k: &str| o.get(k).and_then(Value::as_u64);
    Some(match o.get("event")?.as_str()? {
        "embedded_run_failover_decision" => Decision::Failover {
            decision: s("decision")?,
            reason: s("failoverReason"),
            retry_count: n("retryCount"),
            profile_hash: s("profileId"),
            provider: s("provider"),
            model: s("model"),
        },
        "auth_profile_failure_state_updated" => Decision::ProfileFailureState {
            profile_hash: s("profileId"),
            reason: s("reason"),
            cooldown_until_ms: n("cooldownUntil"),
        },
        "model_fallback_decision" => Decision::ModelFallback {
            decision: s("decision")?,
            candidate: match (s("candidateProvider"), s("candidateModel")) {
                (Some(p), Some(m)) => Some(format!("{p}/{m}")),
                (None, Some(m)) => Some(m),
                _ => None,
            },
            reason: s("reason"),
        },
        "model_fallback_chain_stopped" => Decision::FallbackChainStopped {
            reason: s("reason"),
        },
        _ => return None,
    })
}

/// `key=VALUE` in `text` (the value runs to the next space, `:`, `;` or `,`).
fn kv<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(&format!("{key}="))? + key.len() + 1;
    let rest = &text[at..];
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, ':' | ';' | ','))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// `I/N` at the start of `text`.
fn fraction(text: &str) -> Option<(u32, u32)> {
    let word = text.split_whitespace().next()?;
    let (i, n) = word.split_once('/')?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

fn text(s: &str) -> Option<Decision> {
    if let Some(rest) = s.strip_prefix("transient same-model retry ") {
        let (attempt, of) = fraction(rest)?;
        let target = rest.split(" for ").nth(1)?.split_whitespace().next()?;
        return Some(Decision::SameModelRetry {
            attempt,
            of,
            target: target.to_string(),
            reason: kv(rest, "reason").map(str::to_string),
            delay_ms: kv(rest, "delayMs")?.parse().ok()?,
        });
    }
    if let Some(rest) = s.strip_prefix("transient retry window elapsed for ") {
        let target = rest.split_whitespace().next()?;
        let retries = rest
            .split(" after ")
            .nth(1)
            .and_then(fraction)
            .map(|(i, _)| i);
        return Some(Decision::RetryWindowElapsed {
            target: target.to_string(),
            retries,
        });
    }
    if s.contains("[idle-timeout-circuit-breaker-tripped]") {
        return Some(Decision::IdleTimeoutBreakerTripped {
            consecutive: kv(s, "consecutive").and_then(|v| v.parse().ok()),
            cap: kv(s, "cap").and_then(|v| v.parse().ok()),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(field1: &str) -> String {
        format!(
            "{{\"0\":\"{{\\\"subsystem\\\":\\\"agent/embedded\\\"}}\",\"1\":{field1},\
             \"_meta\":{{\"date\":\"2026-12-01T09:12:47.665Z\",\"logLevelName\":\"WARN\"}},\
             \"time\":\"2026-12-01T09:12:47.665+00:00\",\"message\":\"m\"}}"
        )
    }

    #[test]
    fn profile_hashes_match_openclaws() {
        // Seen in a 2026.9.6 log for the profile `mockai:a`.
        assert_eq!(profile_hash("mockai:a"), "sha256:a1b358201f22");
        assert_eq!(profile_hash("mockai:b"), "sha256:f0d34b75cb0a");
    }

    #[test]
    fn a_failover_decision_is_typed() {
        let l = line(
            "{\"event\":\"embedded_run_failover_decision\",\"decision\":\"rotate_profile\",\
             \"failoverReason\":\"server_error\",\"provider\":\"mockai\",\"model\":\"m1\",\
             \"profileId\":\"sha256:a1b358201f22\",\"retryCount\":6}",
        );
        let d = parse_line(&l).unwrap();
        assert_eq!(d.wall_ms, 1_796_116_367_665);
        assert_eq!(
            d.decision,
            Decision::Failover {
                decision: "rotate_profile".into(),
                reason: Some("server_error".into()),
                retry_count: Some(6),
                profile_hash: Some(profile_hash("mockai:a")),
                provider: Some("mockai".into()),
                model: Some("m1".into()),
            }
        );
    }

    #[test]
    fn fallback_and_failure_state_events_are_typed() {
        let l = line(
            "{\"event\":\"model_fallback_decision\",\"decision\":\"candidate_succeeded\",\
             \"candidateProvider\":\"fallback\",\"candidateModel\":\"m2\"}",
        );
        assert_eq!(
            parse_line(&l).unwrap().decision,
            Decision::ModelFallback {
                decision: "candidate_succeeded".into(),
                candidate: Some("fallback/m2".into()),
                reason: None
            }
        );
        let l = line(
            "{\"event\":\"auth_profile_failure_state_updated\",\"profileId\":\"sha256:x\",\
             \"reason\":\"auth\",\"cooldownUntil\":1796116404516}",
        );
        assert_eq!(
            parse_line(&l).unwrap().decision,
            Decision::ProfileFailureState {
                profile_hash: Some("sha256:x".into()),
                reason: Some("auth".into()),
                cooldown_until_ms: Some(1_796_116_404_516)
            }
        );
        let l = line("{\"event\":\"model_fallback_chain_stopped\",\"reason\":\"timeout\"}");
        assert!(matches!(
            parse_line(&l).unwrap().decision,
            Decision::FallbackChainStopped { reason: Some(r) } if r == "timeout"
        ));
        let other = line("{\"event\":\"embedded_run_agent_end\"}");
        assert_eq!(parse_line(&other), None);
    }

    #[test]
    fn text_lines_are_typed() {
        let l = line(
            "\"transient same-model retry 3/8 for mockai/m1 reason=server_error: delayMs=5057\"",
        );
        assert_eq!(
            parse_line(&l).unwrap().decision,
            Decision::SameModelRetry {
                attempt: 3,
                of: 8,
                target: "mockai/m1".into(),
                reason: Some("server_error".into()),
                delay_ms: 5057
            }
        );
        let l = line(
            "\"transient retry window elapsed for mockai/m1 after 6/8 retries; stopping same-model retries\"",
        );
        assert_eq!(
            parse_line(&l).unwrap().decision,
            Decision::RetryWindowElapsed {
                target: "mockai/m1".into(),
                retries: Some(6)
            }
        );
        let l = line(
            "\"[idle-timeout-circuit-breaker-tripped] provider=mockai model=m1 consecutive=5 cap=5\"",
        );
        assert_eq!(
            parse_line(&l).unwrap().decision,
            Decision::IdleTimeoutBreakerTripped {
                consecutive: Some(5),
                cap: Some(5)
            }
        );
        assert_eq!(parse_line(&line("\"gateway started\"")), None);
        assert_eq!(parse_line("not json"), None);
    }

    #[test]
    fn last_messages_are_plain_text_with_levels() {
        let text = format!("{}\nnot json\n\n{}\n", line("\"a\""), line("\"b\""));
        let last = last_messages(&text, 2);
        assert_eq!(last, ["not json", "WARN m"]);
    }
}
