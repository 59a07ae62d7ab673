//! Classification of what an attempt produced into a failure reason (docs/engine.md,
//! a.5): 429 or a provider rate-limit code → rate_limit (with the wait it announced:
//! `Retry-After` or another throttle header, [`super::throttle`]); 5xx →
//! server_error; our own deadline → timeout (phase kept); reset/refused → transport; a reset
//! after tokens → stream_cut; 401/403 → auth; 402 → billing; `context_length_exceeded` or 413 →
//! context_overflow; other 4xx and content codes → content.

use std::time::{Duration, SystemTime};

use crate::engine::events::AttemptOutcome;
use crate::engine::outcome::{AttemptResult, Reason, TimeoutPhase};

/// An attempt's classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    /// `None` for success.
    pub reason: Option<Reason>,
    /// The timeout phase, for timeouts.
    pub phase: Option<TimeoutPhase>,
    /// A parsed Retry-After, if the response carried one.
    pub retry_after: Option<Duration>,
    /// The `requests_total` outcome label.
    pub outcome: AttemptOutcome,
}

const RATE_LIMIT_CODES: [&str; 4] = [
    "rate_limit_exceeded",
    "rate_limit_error",
    "too_many_requests",
    "throttling_exception",
];
const CONTEXT_CODES: [&str; 2] = ["context_length_exceeded", "prompt_too_long"];
const BILLING_CODES: [&str; 2] = ["insufficient_quota", "billing_hard_limit_reached"];

fn failed(reason: Reason, outcome: AttemptOutcome) -> Classified {
    Classified {
        reason: Some(reason),
        phase: None,
        retry_after: None,
        outcome,
    }
}

/// Classifies `result`; `wall_now` resolves HTTP-date Retry-After values.
pub fn classify(result: &AttemptResult, wall_now: SystemTime) -> Classified {
    match result {
        AttemptResult::Ok { .. } => Classified {
            reason: None,
            phase: None,
            retry_after: None,
            outcome: AttemptOutcome::Ok,
        },
        AttemptResult::Http {
            status,
            provider_code,
            ..
        } => {
            let code = provider_code.as_deref().unwrap_or("").to_ascii_lowercase();
            let is = |list: &[&str]| list.contains(&code.as_str());
            let mut c = if *status == 429 || is(&RATE_LIMIT_CODES) {
                failed(Reason::RateLimit, AttemptOutcome::RateLimited)
            } else if *status == 413 || is(&CONTEXT_CODES) {
                failed(Reason::ContextOverflow, AttemptOutcome::Context)
            } else if *status == 402 || is(&BILLING_CODES) {
                failed(Reason::Billing, AttemptOutcome::Content)
            } else if *status == 401 || *status == 403 {
                failed(Reason::Auth, AttemptOutcome::Content)
            } else if *status >= 500 {
                failed(Reason::ServerError, AttemptOutcome::Http5xx)
            } else if (400..500).contains(status) {
                failed(Reason::Content, AttemptOutcome::Content)
            } else {
                failed(Reason::Unknown, AttemptOutcome::Content)
            };
            c.retry_after = super::throttle::of_result(result, wall_now);
            c
        }
        AttemptResult::Timeout { phase, .. } => Classified {
            phase: Some(*phase),
            ..failed(Reason::Timeout, AttemptOutcome::Timeout)
        },
        AttemptResult::Transport { .. } => failed(Reason::Transport, AttemptOutcome::Transport),
        AttemptResult::StreamCut { .. } => failed(Reason::StreamCut, AttemptOutcome::StreamCut),
        AttemptResult::WsPingTimeout => failed(Reason::Timeout, AttemptOutcome::Timeout),
        // A request that cannot be built will not build on a retry either: permanent.
        AttemptResult::Unsendable { .. } => failed(Reason::Unknown, AttemptOutcome::Transport),
        AttemptResult::WsClosed { .. } => failed(Reason::Transport, AttemptOutcome::Transport),
    }
}

/// Tokens a result carries (received before success or failure).
pub fn tokens_of(result: &AttemptResult) -> u64 {
    match result {
        AttemptResult::Ok { tokens, .. } => u64::from(*tokens),
        AttemptResult::Timeout {
            tokens_received, ..
        }
        | AttemptResult::StreamCut { tokens_received } => u64::from(*tokens_received),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcome::TransportFailure;

    fn http(status: u16, code: Option<&str>, ra: Option<&str>) -> AttemptResult {
        AttemptResult::Http {
            status,
            retry_after: ra.map(str::to_string),
            throttle: Vec::new(),
            provider_code: code.map(str::to_string),
            latency: Duration::from_millis(5),
        }
    }

    fn reason(r: &AttemptResult) -> Option<Reason> {
        classify(r, SystemTime::UNIX_EPOCH).reason
    }

    #[test]
    fn every_class_of_result_gets_its_reason() {
        let ok = AttemptResult::Ok {
            tokens: 3,
            latency: Duration::ZERO,
            ttfb: None,
            longest_gap: None,
        };
        assert_eq!(reason(&ok), None);
        assert_eq!(reason(&http(429, None, None)), Some(Reason::RateLimit));
        assert_eq!(
            reason(&http(400, Some("rate_limit_exceeded"), None)),
            Some(Reason::RateLimit)
        );
        assert_eq!(reason(&http(503, None, None)), Some(Reason::ServerError));
        assert_eq!(reason(&http(500, None, None)), Some(Reason::ServerError));
        assert_eq!(reason(&http(401, None, None)), Some(Reason::Auth));
        assert_eq!(reason(&http(403, None, None)), Some(Reason::Auth));
        assert_eq!(reason(&http(402, None, None)), Some(Reason::Billing));
        assert_eq!(
            reason(&http(413, None, None)),
            Some(Reason::ContextOverflow)
        );
        assert_eq!(
            reason(&http(400, Some("context_length_exceeded"), None)),
            Some(Reason::ContextOverflow)
        );
        assert_eq!(reason(&http(422, None, None)), Some(Reason::Content));
        let t = AttemptResult::Timeout {
            phase: TimeoutPhase::InterToken,
            tokens_received: 4,
        };
        let c = classify(&t, SystemTime::UNIX_EPOCH);
        assert_eq!(
            (c.reason, c.phase),
            (Some(Reason::Timeout), Some(TimeoutPhase::InterToken))
        );
        assert_eq!(tokens_of(&t), 4);
        let reset = AttemptResult::Transport {
            failure: TransportFailure::Reset,
        };
        assert_eq!(reason(&reset), Some(Reason::Transport));
        let cut = AttemptResult::StreamCut { tokens_received: 9 };
        assert_eq!(reason(&cut), Some(Reason::StreamCut));
        assert_eq!(
            classify(&cut, SystemTime::UNIX_EPOCH).outcome,
            AttemptOutcome::StreamCut
        );
    }

    #[test]
    fn retry_after_is_parsed_and_garbage_ignored() {
        let c = classify(&http(429, None, Some("120")), SystemTime::UNIX_EPOCH);
        assert_eq!(c.retry_after, Some(Duration::from_secs(120)));
        assert_eq!(c.outcome, AttemptOutcome::RateLimited);
        let g = classify(
            &http(429, None, Some("later please")),
            SystemTime::UNIX_EPOCH,
        );
        assert_eq!(g.retry_after, None);
    }

    #[test]
    fn a_429_with_only_retry_after_ms_or_a_reset_header_announces_its_wait() {
        let with = |throttle: &[(&str, &str)]| AttemptResult::Http {
            status: 429,
            retry_after: None,
            throttle: throttle
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            provider_code: None,
            latency: Duration::from_millis(5),
        };
        let c = classify(&with(&[("retry-after-ms", "9000")]), SystemTime::UNIX_EPOCH);
        assert_eq!(
            (c.reason, c.retry_after),
            (Some(Reason::RateLimit), Some(Duration::from_secs(9)))
        );
        let c = classify(
            &with(&[("x-ratelimit-reset-requests", "6m0s")]),
            SystemTime::UNIX_EPOCH,
        );
        assert_eq!(c.retry_after, Some(Duration::from_secs(360)));
        let c = classify(&with(&[("retry-after-ms", "soon")]), SystemTime::UNIX_EPOCH);
        assert_eq!(c.retry_after, None, "garbage is no wait");
    }
}
