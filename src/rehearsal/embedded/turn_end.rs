//! How one model call of the traffic ended for the embedded engine's client (pure): the
//! engine's [`EngineResponse`] — after its retries, rotations, fallbacks and degradation ladder
//! — as a turn outcome in the vocabulary of an external gateway's turns ([`TurnEnd`], the one
//! report row [`TurnRow`]), so `[[expect.turn]]` judges both alike.
//!
//! The engine is the client of the upstream here, so its answer is what its call returned:
//! - an answer (`ok`) is `answered`, status 200, its content the tokens the call received; once
//!   the run's record is in, an answer shorter than what the upstream served for the turn is
//!   `truncated` (`verdict::answers`, as for a gateway);
//! - a partial result (the degradation ladder handing back the tokens of a cut stream as the
//!   answer) is `truncated` by the engine's own account, whatever the record says;
//! - the engine giving up is `http_error`: a clean error, with the status a gateway in front of
//!   the engine answers its client ([`status_of`]) and the user-visible error;
//! - an end later than the turn bound, or none before the run's end, is `timed_out` (a hang:
//!   the client got nothing within the bound); a call still in flight when the run was stopped
//!   early is `unfinished` (its rows are `not_reached`, never a pass).
//!
//! The engine never produces `transport_error`, `error_event` or `error_body` for its client:
//! it is in process, and every failure it gives back is an error of its own.

use crate::engine::events::AttemptOutcome;
use crate::engine::request::EngineResponse;
use crate::gateway::TurnEnd;
use crate::report::model::TurnRow;
use crate::verdict::answers::AnswerCheck;

/// One model call of the traffic as it was sent to the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TurnSent {
    /// The traffic line's index (the turn its marker carries).
    pub line: usize,
    /// The traffic line's session (else `line-N`).
    pub session: String,
    /// When it was due, scenario ms since the run start.
    pub at_ms: u64,
    /// How late it reached the engine, scenario ms.
    pub lag_ms: u64,
    /// Streamed.
    pub stream: bool,
}

/// How the call ended, as seen when the turns are read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CallEnd<'a> {
    /// The engine's call returned this, `took_ms` (scenario ms) after it was sent.
    Returned(&'a EngineResponse, u64),
    /// Still in flight at the run's end, `so_far_ms` after it was sent; `stopped`: the run was
    /// cut short (a stop request or a harness failure) rather than reaching its `duration`.
    InFlight { so_far_ms: u64, stopped: bool },
}

/// The status a gateway in front of the engine answers its client when the engine gives up
/// with `outcome`: 429 for a rate limit, 400 for a request the model refuses (content, context
/// length), 503 while its breaker is open, 504 when its own deadline expired, 502 for an
/// upstream that failed (5xx, a reset, a cut stream).
pub(crate) fn status_of(outcome: AttemptOutcome) -> u16 {
    match outcome {
        AttemptOutcome::Ok => 200,
        AttemptOutcome::RateLimited => 429,
        AttemptOutcome::Content | AttemptOutcome::Context => 400,
        AttemptOutcome::Rejected => 503,
        AttemptOutcome::Timeout => 504,
        AttemptOutcome::Http5xx | AttemptOutcome::Transport | AttemptOutcome::StreamCut => 502,
    }
}

fn secs(ms: u64) -> String {
    crate::verdict::secs(i64::try_from(ms).unwrap_or(i64::MAX))
}

/// The report row of one turn: `sent` ended as `end`; `bound_ms` is the turn bound (scenario
/// ms, `[target] turn_timeout`).
pub(crate) fn turn_row(sent: &TurnSent, end: &CallEnd<'_>, bound_ms: u64) -> TurnRow {
    let mut row = TurnRow {
        line: sent.line,
        session: sent.session.clone(),
        at_ms: sent.at_ms,
        lag_ms: sent.lag_ms,
        stream: sent.stream,
        turn: Some(sent.line as u64),
        ..TurnRow::default()
    };
    let (resp, took_ms) = match *end {
        CallEnd::InFlight { so_far_ms, stopped } => {
            row.elapsed_ms = so_far_ms;
            let (outcome, error) = if stopped && so_far_ms < bound_ms {
                (
                    TurnEnd::Unfinished,
                    format!("in flight when the run was stopped ({} after sending)", secs(so_far_ms)),
                )
            } else {
                (
                    TurnEnd::TimedOut,
                    format!("no end before the run's end ({} after sending)", secs(so_far_ms)),
                )
            };
            row.outcome = Some(outcome);
            row.error = Some(error);
            return row;
        }
        CallEnd::Returned(resp, took_ms) => (resp, took_ms),
    };
    row.elapsed_ms = took_ms;
    row.model = resp.model.clone();
    row.profile = resp.profile.clone();
    if took_ms >= bound_ms {
        // The client stopped waiting at the bound: what came later never reached it.
        row.outcome = Some(TurnEnd::TimedOut);
        row.error = Some(format!(
            "no end within the turn bound ({}): the engine's call ended after {}",
            secs(bound_ms),
            secs(took_ms)
        ));
        return row;
    }
    let answer = || AnswerCheck {
        content_tokens: resp.tokens,
        // The engine relays the upstream's tokens; it writes no text of its own.
        served_shape: true,
        reported_model: resp.model.clone(),
        usage: None,
        recorded: false,
        served: None,
    };
    if resp.is_ok() {
        row.status = Some(200);
        row.ok = true;
        row.finish_reason = Some("stop".into());
        row.outcome = Some(TurnEnd::Answered);
        row.answer = Some(answer());
    } else if resp.partial {
        row.status = Some(200);
        row.outcome = Some(TurnEnd::Truncated);
        row.error = Some(format!(
            "a partial result: the {} tokens a cut stream delivered ({})",
            resp.tokens,
            resp.outcome.as_str()
        ));
        row.answer = Some(answer());
    } else {
        row.status = Some(status_of(resp.outcome));
        row.outcome = Some(TurnEnd::HttpError);
        row.error = Some(
            resp.user_error
                .clone()
                .unwrap_or_else(|| format!("request failed ({})", resp.outcome.as_str())),
        );
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent() -> TurnSent {
        TurnSent {
            line: 7,
            session: "s7".into(),
            at_ms: 13_000,
            lag_ms: 2,
            stream: true,
        }
    }

    fn resp(outcome: AttemptOutcome) -> EngineResponse {
        EngineResponse {
            outcome,
            attempts: 2,
            model: Some("fallback/m2".into()),
            fallback: true,
            profile: Some("fallback:f".into()),
            user_error: None,
            tokens: 16,
            partial: false,
        }
    }

    const BOUND: u64 = 10_000;

    #[test]
    fn an_answer_is_answered_with_its_model_profile_turn_and_tokens() {
        let r = resp(AttemptOutcome::Ok);
        let row = turn_row(&sent(), &CallEnd::Returned(&r, 850), BOUND);
        assert_eq!(row.outcome, Some(TurnEnd::Answered));
        assert!(row.ok);
        assert_eq!((row.status, row.elapsed_ms, row.turn), (Some(200), 850, Some(7)));
        assert_eq!(row.model.as_deref(), Some("fallback/m2"));
        assert_eq!(row.profile.as_deref(), Some("fallback:f"));
        let a = row.answer.unwrap();
        assert_eq!((a.content_tokens, a.served_shape, a.recorded), (16, true, false));
        assert_eq!((row.line, row.at_ms, row.lag_ms, row.stream), (7, 13_000, 2, true));
    }

    #[test]
    fn the_engine_giving_up_is_a_clean_error_with_the_status_a_gateway_would_say() {
        for (outcome, status) in [
            (AttemptOutcome::RateLimited, 429),
            (AttemptOutcome::Context, 400),
            (AttemptOutcome::Content, 400),
            (AttemptOutcome::Rejected, 503),
            (AttemptOutcome::Timeout, 504),
            (AttemptOutcome::Http5xx, 502),
            (AttemptOutcome::Transport, 502),
            (AttemptOutcome::StreamCut, 502),
        ] {
            let mut r = resp(outcome);
            r.tokens = 0;
            r.user_error = Some("API rate limit reached. Please try again later.".into());
            let row = turn_row(&sent(), &CallEnd::Returned(&r, 1_200), BOUND);
            assert_eq!(row.outcome, Some(TurnEnd::HttpError), "{outcome:?}");
            assert_eq!(row.status, Some(status), "{outcome:?}");
            assert!(!row.ok && row.answer.is_none(), "{outcome:?}");
            assert_eq!(row.error.as_deref(), r.user_error.as_deref());
        }
        // No user error given: the outcome names it.
        let r = EngineResponse {
            user_error: None,
            ..resp(AttemptOutcome::Http5xx)
        };
        let row = turn_row(&sent(), &CallEnd::Returned(&r, 5), BOUND);
        assert_eq!(row.error.as_deref(), Some("request failed (http_5xx)"));
    }

    #[test]
    fn a_partial_result_is_truncated_never_answered() {
        let r = EngineResponse {
            partial: true,
            tokens: 40,
            ..resp(AttemptOutcome::StreamCut)
        };
        let row = turn_row(&sent(), &CallEnd::Returned(&r, 900), BOUND);
        assert_eq!(row.outcome, Some(TurnEnd::Truncated));
        assert!(!row.ok);
        assert_eq!(row.answer.map(|a| a.content_tokens), Some(40));
    }

    #[test]
    fn an_end_past_the_bound_or_none_by_the_runs_end_is_a_hang() {
        // Even an answer: the client stopped waiting at the bound.
        let r = resp(AttemptOutcome::Ok);
        let row = turn_row(&sent(), &CallEnd::Returned(&r, BOUND), BOUND);
        assert_eq!(row.outcome, Some(TurnEnd::TimedOut));
        assert!(!row.ok && row.answer.is_none() && row.status.is_none());
        let end = CallEnd::InFlight {
            so_far_ms: 1_500,
            stopped: false,
        };
        let row = turn_row(&sent(), &end, BOUND);
        assert_eq!(row.outcome, Some(TurnEnd::TimedOut));
        assert!(row.error.unwrap().contains("no end before the run's end"));
    }

    #[test]
    fn a_call_in_flight_when_the_run_was_stopped_is_unfinished_never_answered() {
        let end = CallEnd::InFlight {
            so_far_ms: 1_500,
            stopped: true,
        };
        let row = turn_row(&sent(), &end, BOUND);
        assert_eq!(row.outcome, Some(TurnEnd::Unfinished));
        assert!(!row.ok && row.status.is_none());
        // Already past the bound when the stop came: a hang all the same.
        let end = CallEnd::InFlight {
            so_far_ms: BOUND,
            stopped: true,
        };
        assert_eq!(turn_row(&sent(), &end, BOUND).outcome, Some(TurnEnd::TimedOut));
    }
}
