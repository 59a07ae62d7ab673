//! The status rule of an interrupted run: which checks a run stopped at
//! `stop_ms` can still vouch for. Pure; times in run ms, as the diff's.
//!
//! - A check that is certain as soon as it is seen — an unexpected transition, a transition of
//!   a dep that must never transition, probes closer than allowed — keeps pass/fail.
//! - A check due at a time (an expected transition: its expected time plus tolerance) passes if
//!   it held; if it did not, it fails only when that time lies at or before the stop, and is
//!   `not_reached` when the stop came first.
//! - A check judged at the end of the run (metric bounds on the final scrape, "no transition"
//!   and probe spacing that held so far, a transition expected at any time) is `not_reached`.
//!
//! Without a stop every check is pass or fail as its `ok` says.

use super::{ExpectStatus, ExpectationResult, secs};
use crate::util::speed::Speed;

/// When a check's outcome is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decided {
    /// Already: what was observed settles it, whatever comes later.
    Now,
    /// Once the run has passed this time (run ms).
    At(i64),
    /// Only at the end of the run.
    EndOfRun,
}

/// The status of a check that held (`ok`) or not, settled as `decided`, in a run stopped at
/// `stop_ms` (`None`: the run reached `duration`).
pub(crate) fn status(ok: bool, decided: Decided, stop_ms: Option<u64>) -> ExpectStatus {
    let Some(stop) = stop_ms else {
        return ExpectStatus::from_ok(ok);
    };
    match decided {
        Decided::Now => ExpectStatus::from_ok(ok),
        Decided::EndOfRun => ExpectStatus::NotReached,
        Decided::At(_) if ok => ExpectStatus::Pass,
        Decided::At(t) if t > i64::try_from(stop).unwrap_or(i64::MAX) => ExpectStatus::NotReached,
        Decided::At(_) => ExpectStatus::Fail,
    }
}

/// Sets `r.status` by [`status`]; a `not_reached` result is marked as such in `observed` and
/// `detail` (and `ok` is false: it was not shown to hold). `subject` opens the detail line (the
/// dep, or a metric's series). `stop_ms` is run (wall-clock) ms like the diff's times; the
/// detail says the times in scenario time (× `speed`), like the rest of the result.
pub(crate) fn settle(
    r: &mut ExpectationResult,
    subject: &str,
    decided: Decided,
    (stop_ms, speed): (Option<u64>, Speed),
) {
    r.status = status(r.ok, decided, stop_ms);
    if r.status == ExpectStatus::NotReached {
        let scen = |ms: i64| secs(speed.scenario_ms(ms));
        let stop = stop_ms.map_or_else(String::new, |s| scen(i64::try_from(s).unwrap_or(0)));
        let due = match decided {
            Decided::At(t) => format!("due by {}", scen(t)),
            _ => "judged at the end of the run".to_string(),
        };
        r.detail = format!(
            "{subject} {}: not reached ({due}; the run stopped at {stop}, observed so far: {})",
            r.expected, r.observed
        );
        r.observed = "not reached".into();
        r.observed_ms = None;
        r.delta_ms = None;
        r.ok = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ExpectStatus::{Fail, NotReached, Pass};

    #[test]
    fn without_a_stop_ok_decides() {
        for d in [Decided::Now, Decided::At(74_000), Decided::EndOfRun] {
            assert_eq!(status(true, d, None), Pass);
            assert_eq!(status(false, d, None), Fail);
        }
    }

    #[test]
    fn a_stop_before_the_due_time_leaves_it_not_reached() {
        // weekly stopped at 5 s: crm_search closed→open due by 74 s + 3 s.
        let stop = Some(5_000);
        assert_eq!(status(false, Decided::At(77_000), stop), NotReached);
        // Held already (observed within tolerance before the stop): a pass.
        assert_eq!(status(true, Decided::At(77_000), stop), Pass);
        // Due before the stop and missing: a real failure.
        assert_eq!(status(false, Decided::At(4_999), stop), Fail);
        assert_eq!(status(false, Decided::At(5_000), stop), Fail);
        assert_eq!(status(false, Decided::At(5_001), stop), NotReached);
    }

    #[test]
    fn end_of_run_checks_are_not_reached_certain_ones_keep_their_outcome() {
        let stop = Some(5_000);
        assert_eq!(status(true, Decided::EndOfRun, stop), NotReached);
        assert_eq!(status(false, Decided::EndOfRun, stop), NotReached);
        assert_eq!(status(false, Decided::Now, stop), Fail);
        assert_eq!(status(true, Decided::Now, stop), Pass);
        // A stop at 0 (a policy that never ran) reaches nothing that is still due.
        assert_eq!(status(false, Decided::At(1), Some(0)), NotReached);
    }

    #[test]
    fn a_not_reached_result_says_so() {
        let mut r = ExpectationResult {
            witness: Default::default(),
            kind: super::super::ExpectKind::Transition,
            dep: Some("crm_search".into()),
            series: None,
            expected: "closed→open at 74.000s ±3.000s".into(),
            observed: "missing".into(),
            expected_ms: Some(74_000),
            observed_ms: None,
            delta_ms: None,
            tolerance_ms: Some(3_000),
            ok: false,
            status: Fail,
            detail: "crm_search closed→open at 74.000s ±3.000s, missing".into(),
        };
        // At ×4 the rule runs on wall-clock ms (due by 19.25 s, stopped at 1.25 s); the detail
        // says scenario time like the rest of the report.
        settle(
            &mut r,
            "crm_search",
            Decided::At(19_250),
            (Some(1_250), crate::util::speed::sp(4.0)),
        );
        assert_eq!(r.status, NotReached);
        assert_eq!(r.observed, "not reached");
        assert_eq!(
            r.detail,
            "crm_search closed→open at 74.000s ±3.000s: not reached (due by 77.000s; the run \
             stopped at 5.000s, observed so far: missing)"
        );
    }
}
