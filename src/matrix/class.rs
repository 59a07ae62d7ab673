//! What one run of a cell was ([`Class`]), decided once from the run's exit code, whether it
//! was refused as not applicable, and what its report.json says ([`classify`], pure).

use serde::{Deserialize, Serialize};

use crate::gateway::TurnEnd;

/// The start of the message a run refuses a case with when it does not apply to the target
/// (`ScenarioError::NotApplicable`, exit 2): what tells `not_applicable` from bad input in a
/// cell's stderr.
pub const NOT_APPLICABLE: &str = "not applicable: ";

/// A clean error is bounded: a turn that ended in an error the client could read (an HTTP
/// error status, an error body) within this many ms of scenario time. Longer, and the client
/// waited as if for a hang.
const CLEAN_ERROR_BOUND_MS: u64 = 15_000;

/// One run's class, and a cell's when every repeat agrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The run passed (exit 0, verdict pass), and no turn's answer was a truncated success.
    Pass,
    /// The run failed a row (exit 1), or it passed while handing a client a truncated answer as
    /// a success; not every failed turn a clean error.
    Fail,
    /// The run failed (exit 1) only on rows that ask for answers, and every turn that was not
    /// answered ended in a bounded clean error (http_error, error_body, an error event in a 200 stream, within
    /// [`CLEAN_ERROR_BOUND_MS`]): no hang, no truncated success. Only where the report has
    /// per-turn client outcomes (`target.turns`, the embedded engine's `client_turns`); without
    /// them a failed run is `fail`.
    CleanError,
    /// The run refused the case as not applicable to the target (exit 2, `not applicable:`).
    NotApplicable,
    /// The run was cut short (exit 3, verdict `incomplete`: stopped, or rows `not_reached`).
    Incomplete,
    /// Bad input (exit 2, not "not applicable"), the harness failed (exit 3, verdict `error` or
    /// no report), the run died of a signal, or its exit code and report disagree.
    Error,
    /// The matrix was stopped before this run started.
    NotRun,
}

impl Class {
    /// Every class, in the order the scorecard lists them.
    pub const ALL: [Class; 7] = [
        Self::Pass,
        Self::Fail,
        Self::CleanError,
        Self::NotApplicable,
        Self::Incomplete,
        Self::Error,
        Self::NotRun,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::CleanError => "clean_error",
            Self::NotApplicable => "not_applicable",
            Self::Incomplete => "incomplete",
            Self::Error => "error",
            Self::NotRun => "not_run",
        }
    }

    /// The class named `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether a matrix file may expect it (`incomplete`, `error`, `not_run` are what a matrix
    /// says of its own runs, never a finding about a gateway).
    pub fn expectable(self) -> bool {
        matches!(
            self,
            Self::Pass | Self::Fail | Self::CleanError | Self::NotApplicable
        )
    }
}

/// One turn as the client got it (report.json `target.turns[]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientTurn {
    /// How it ended (`None`: the report did not say).
    pub end: Option<TurnEnd>,
    /// How long it took, ms.
    pub elapsed_ms: u64,
}

/// What a run left behind, as classification reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunEnd {
    /// The exit code (`None`: killed by a signal).
    pub exit: Option<i32>,
    /// Its stderr refused the case as not applicable.
    pub not_applicable: bool,
    /// The report's verdict (`None`: no report.json).
    pub verdict: Option<String>,
    /// The client's turns, where the report has them (`None`: it has none).
    pub turns: Option<Vec<ClientTurn>>,
    /// Every failed row asks only that turns be answered (the client's `answered` count, the
    /// upstream's `answer_within` over the run): a run that failed a required check — a retry
    /// storm, Retry-After, no hang, no truncated success, serving again after — is never a
    /// clean error ([`super::facts::only_answered_rows_failed`]).
    pub only_answered_failed: bool,
}

/// The class of one run and, when the class is not what the report itself says, why.
pub fn classify(run: &RunEnd) -> (Class, Option<String>) {
    let verdict = run.verdict.as_deref();
    match (run.exit, verdict) {
        (None, _) => (Class::Error, Some("the run died of a signal".into())),
        (Some(2), _) if run.not_applicable => (Class::NotApplicable, None),
        (Some(2), _) => (Class::Error, None),
        (Some(3), Some("incomplete")) => (Class::Incomplete, None),
        (Some(3), _) => (Class::Error, None),
        (Some(0), Some("pass")) => match truncated(run) {
            Some(t) => (
                Class::Fail,
                Some(format!(
                    "{t} turn(s) handed over a truncated answer as a success (the client's turns)"
                )),
            ),
            None => (Class::Pass, None),
        },
        (Some(1), Some("fail")) => match &run.turns {
            Some(turns) if run.only_answered_failed && clean_errors_only(turns) => {
                (Class::CleanError, None)
            }
            _ => (Class::Fail, None),
        },
        (Some(code), v) => (
            Class::Error,
            Some(format!(
                "exit {code} with verdict {}: the exit code and the report disagree",
                v.unwrap_or("none (no report.json)")
            )),
        ),
    }
}

/// How many turns were a truncated success, if any.
fn truncated(run: &RunEnd) -> Option<usize> {
    let n = run
        .turns
        .iter()
        .flatten()
        .filter(|t| t.end == Some(TurnEnd::Truncated))
        .count();
    (n > 0).then_some(n)
}

/// Every turn answered or a bounded clean error, and at least one such error.
fn clean_errors_only(turns: &[ClientTurn]) -> bool {
    let clean = |t: &ClientTurn| {
        matches!(
            t.end,
            Some(TurnEnd::HttpError | TurnEnd::ErrorBody | TurnEnd::ErrorEvent)
        )
            && t.elapsed_ms <= CLEAN_ERROR_BOUND_MS
    };
    turns.iter().any(clean)
        && turns
            .iter()
            .all(|t| t.end == Some(TurnEnd::Answered) || clean(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(exit: Option<i32>, verdict: Option<&str>) -> RunEnd {
        RunEnd {
            exit,
            verdict: verdict.map(String::from),
            ..RunEnd::default()
        }
    }

    fn turn(end: TurnEnd, elapsed_ms: u64) -> ClientTurn {
        ClientTurn {
            end: Some(end),
            elapsed_ms,
        }
    }

    #[test]
    fn exit_codes_and_verdicts_make_the_classes() {
        assert_eq!(classify(&run(Some(0), Some("pass"))).0, Class::Pass);
        assert_eq!(classify(&run(Some(1), Some("fail"))).0, Class::Fail);
        assert_eq!(classify(&run(Some(3), Some("incomplete"))).0, Class::Incomplete);
        assert_eq!(classify(&run(Some(3), Some("error"))).0, Class::Error);
        assert_eq!(classify(&run(Some(3), None)).0, Class::Error);
        assert_eq!(classify(&run(Some(2), None)).0, Class::Error);
        let na = RunEnd {
            not_applicable: true,
            ..run(Some(2), None)
        };
        assert_eq!(classify(&na).0, Class::NotApplicable);
        assert_eq!(classify(&run(None, Some("pass"))).0, Class::Error);
        // Exit 0 with a failed report (or no report) is not a pass.
        let (c, why) = classify(&run(Some(0), Some("fail")));
        assert_eq!(c, Class::Error);
        assert!(why.unwrap().contains("disagree"));
        assert_eq!(classify(&run(Some(0), None)).0, Class::Error);
    }

    #[test]
    fn a_truncated_success_is_never_a_pass() {
        let r = RunEnd {
            turns: Some(vec![
                turn(TurnEnd::Answered, 100),
                turn(TurnEnd::Truncated, 100),
            ]),
            ..run(Some(0), Some("pass"))
        };
        let (c, why) = classify(&r);
        assert_eq!(c, Class::Fail);
        assert!(why.unwrap().starts_with("1 turn(s) handed over a truncated answer"));
    }

    #[test]
    fn clean_error_needs_client_turns_every_failure_bounded_and_clean() {
        let fail = |turns: Option<Vec<ClientTurn>>| {
            classify(&RunEnd {
                turns,
                only_answered_failed: true,
                ..run(Some(1), Some("fail"))
            })
            .0
        };
        let ok = turn(TurnEnd::Answered, 500);
        assert_eq!(
            fail(Some(vec![ok, turn(TurnEnd::HttpError, 200), turn(TurnEnd::ErrorBody, 900)])),
            Class::CleanError
        );
        // An error event that ends a 200 stream tells the client plainly that the turn failed.
        assert_eq!(
            fail(Some(vec![ok, turn(TurnEnd::ErrorEvent, 7_900)])),
            Class::CleanError
        );
        // Without the client's turns nothing says how the turns failed.
        assert_eq!(fail(None), Class::Fail);
        // Every turn answered, yet the run failed (a retry storm): not an error the client saw.
        assert_eq!(fail(Some(vec![ok, ok])), Class::Fail);
        // A hang, a truncated success, a cut stream, a late error: not clean.
        for bad in [
            turn(TurnEnd::TimedOut, 120_000),
            turn(TurnEnd::Truncated, 100),
            turn(TurnEnd::Unfinished, 100),
            turn(TurnEnd::TransportError, 100),
            turn(TurnEnd::HttpError, CLEAN_ERROR_BOUND_MS + 1),
            turn(TurnEnd::ErrorEvent, CLEAN_ERROR_BOUND_MS + 1),
        ] {
            assert_eq!(fail(Some(vec![ok, turn(TurnEnd::HttpError, 10), bad])), Class::Fail, "{bad:?}");
        }
        // A required check failed too (a retry storm, Retry-After): not a clean error.
        let storm = RunEnd {
            turns: Some(vec![ok, turn(TurnEnd::HttpError, 10)]),
            only_answered_failed: false,
            ..run(Some(1), Some("fail"))
        };
        assert_eq!(classify(&storm).0, Class::Fail);
        let unsaid = ClientTurn {
            end: None,
            elapsed_ms: 1,
        };
        assert_eq!(fail(Some(vec![turn(TurnEnd::HttpError, 10), unsaid])), Class::Fail);
    }

    #[test]
    fn names_round_trip_and_only_findings_are_expectable() {
        for c in Class::ALL {
            assert_eq!(Class::parse(c.as_str()), Some(c));
            assert_eq!(serde_json::to_string(&c).unwrap(), format!("\"{}\"", c.as_str()));
        }
        let e: Vec<&str> = Class::ALL
            .iter()
            .filter(|c| c.expectable())
            .map(|c| c.as_str())
            .collect();
        assert_eq!(e, ["pass", "fail", "clean_error", "not_applicable"]);
    }

    #[test]
    fn the_not_applicable_marker_is_what_the_scenario_error_says() {
        let e = crate::scenario::format::ScenarioError::NotApplicable {
            traffic: "t.jsonl".into(),
            line: 3,
            kind: "openclaw",
            reason: "why".into(),
        };
        assert!(e.to_string().starts_with(NOT_APPLICABLE), "{e}");
    }
}
