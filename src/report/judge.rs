//! The one judge of every kind of run (embedded, gateway, fleet): a section's status from its
//! rows ([`settle`]), and the run's verdict with its reason from every arm's section and how the
//! run ended ([`judge`]).
//!
//! The one rule for what cannot be judged: a row the run could not settle — past a cap, past the
//! end of what was observed, after a stop — is `not_reached` and never lets the run pass. A
//! harness error is `error`; a stop request is `incomplete` naming the stop; arms never started
//! make it `incomplete`; otherwise a failed row is `fail`; an arm that ran to its end with
//! nothing to judge (its system under test sent the upstream nothing, or no expectation applies
//! to it: [`PolicyReport::unjudged`]) is `incomplete` naming the arm and why — nothing judged on
//! nothing is never a pass; and a `not_reached` row left in a finished run is `incomplete` with
//! a reason saying which row and why. Before any of that, a row that says `pass` without the
//! witness its kind needs is a `fail` ([`crate::verdict::witness::enforce`]).

use super::model::{PolicyReport, PolicyStatus, Report, Verdict};
use crate::verdict::ExpectStatus;

/// How a run ended, besides what its arms' sections say.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ending<'a> {
    /// A harness error that ended the run.
    pub error: Option<&'a str>,
    /// The stop request that cut an arm short (`SIGTERM`, ...).
    pub stopped: Option<&'a str>,
    /// Arms the run never started (without a stop or an error: it ended before them).
    pub not_started: usize,
    /// What an arm is called in the reason (`policy`, `coordination`).
    pub arm: &'static str,
}

/// Sets a section's status (and `ok`) from its rows, whether its run was stopped and whether it
/// had anything to judge (`unjudged`: a pass on nothing is `incomplete`).
pub(crate) fn settle(section: &mut PolicyReport) {
    // No pass without its witness (an arm with nothing to judge is incomplete below instead).
    if section.unjudged.is_none() {
        crate::verdict::witness::enforce(&mut section.expectations);
    }
    section.status = PolicyStatus::of(&section.expectations, section.stopped_at_ms.is_some());
    if section.status == PolicyStatus::Pass && section.unjudged.is_some() {
        section.status = PolicyStatus::Incomplete;
    }
    section.ok = section.status == PolicyStatus::Pass;
}

/// The verdict of a run and the reason its report opens with.
pub(crate) fn judge(sections: &[PolicyReport], end: &Ending<'_>) -> (Verdict, Option<String>) {
    if let Some(e) = end.error {
        return (Verdict::Error, Some(e.to_string()));
    }
    if let Some(s) = end.stopped {
        return (Verdict::Incomplete, Some(s.to_string()));
    }
    if end.not_started > 0 {
        return (
            Verdict::Incomplete,
            Some(format!("not every {} run finished", end.arm)),
        );
    }
    let rows = || sections.iter().flat_map(|s| s.expectations.iter());
    if rows().any(|e| e.status == ExpectStatus::Fail)
        || sections.iter().any(|s| s.status == PolicyStatus::Fail)
    {
        return (Verdict::Fail, None);
    }
    if let Some((s, why)) = sections
        .iter()
        .find_map(|s| s.unjudged.as_deref().map(|w| (s, w)))
    {
        return (
            Verdict::Incomplete,
            Some(format!("{} `{}`: {why}", end.arm, s.policy)),
        );
    }
    let unsettled: Vec<(&PolicyReport, &crate::verdict::ExpectationResult)> = sections
        .iter()
        .flat_map(|s| s.expectations.iter().map(move |e| (s, e)))
        .filter(|(_, e)| e.status == ExpectStatus::NotReached)
        .collect();
    if let Some((s, first)) = unsettled.first() {
        let n = unsettled.len();
        let total = rows().count();
        let checks = if n == 1 { "check" } else { "checks" };
        return (
            Verdict::Incomplete,
            Some(format!(
                "{n} of {total} {checks} could not be judged (not reached); first, in `{}`: {}",
                s.policy, first.detail
            )),
        );
    }
    if let Some(s) = sections.iter().find(|s| !s.ok) {
        // A section that is neither pass nor fail without a not_reached row (not run, say).
        return (
            Verdict::Incomplete,
            Some(format!("`{}` is {}", s.policy, s.status.as_str())),
        );
    }
    (Verdict::Pass, None)
}

impl Report {
    /// The verdict of a run that finished every arm without a stop or a harness error:
    /// [`judge`]'s rule (fail on a failed row, else incomplete on a row not reached, else pass).
    pub fn verdict_from_policies(policies: &[PolicyReport]) -> Verdict {
        judge(policies, &Ending::default()).0
    }

    /// The policies listed as `not_run`.
    pub fn not_run(&self) -> Vec<&str> {
        self.policies
            .iter()
            .filter(|p| p.status == PolicyStatus::NotRun)
            .map(|p| p.policy.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{ExpectKind, ExpectationResult};

    fn row(status: ExpectStatus, detail: &str) -> ExpectationResult {
        ExpectationResult {
            witness: crate::verdict::Witness::of(&[("scrapes", 3), ("series", 1)]),
            kind: ExpectKind::Metric,
            dep: None,
            series: Some("requests_total".into()),
            expected: "≥ 1".into(),
            observed: String::new(),
            ok: status == ExpectStatus::Pass,
            status,
            detail: detail.into(),
            expected_ms: None,
            observed_ms: None,
            delta_ms: None,
            tolerance_ms: None,
        }
    }

    fn section(rows: Vec<ExpectationResult>) -> PolicyReport {
        let mut s = PolicyReport::empty("retry-gate", rows);
        settle(&mut s);
        s
    }

    const FINISHED: Ending<'static> = Ending {
        error: None,
        stopped: None,
        not_started: 0,
        arm: "policy",
    };

    #[test]
    fn a_finished_run_with_a_not_reached_row_is_incomplete_and_says_why() {
        let s = section(vec![
            row(ExpectStatus::Pass, "ok"),
            row(
                ExpectStatus::NotReached,
                "attempts: not reached (upstream record truncated at 12.0s)",
            ),
        ]);
        assert_eq!(s.status, PolicyStatus::Incomplete);
        let (v, why) = judge(&[s], &FINISHED);
        assert_eq!(v, Verdict::Incomplete);
        let why = why.unwrap_or_default();
        assert!(why.contains("1 of 2 check could not be judged"), "{why}");
        assert!(why.contains("truncated at 12.0s"), "{why}");
        assert!(matches!(
            v.into_result(None),
            Ok(crate::exit::Status::Incomplete)
        ));
    }

    #[test]
    fn a_failed_row_fails_the_run_even_beside_a_not_reached_one() {
        let s = section(vec![
            row(ExpectStatus::NotReached, "later"),
            row(ExpectStatus::Fail, "broken"),
        ]);
        let (v, why) = judge(&[s], &FINISHED);
        assert_eq!((v, why), (Verdict::Fail, None));
    }

    #[test]
    fn every_row_settled_and_held_passes() {
        let s = section(vec![row(ExpectStatus::Pass, "ok")]);
        assert_eq!(judge(&[s], &FINISHED), (Verdict::Pass, None));
    }

    #[test]
    fn an_arm_with_nothing_to_judge_is_incomplete_naming_it_unless_a_row_failed() {
        let mut quiet = PolicyReport::empty("http", vec![row(ExpectStatus::Pass, "held")]);
        quiet.unjudged = Some("the system under test sent no request to the upstream".into());
        settle(&mut quiet);
        assert_eq!(quiet.status, PolicyStatus::Incomplete);
        assert!(!quiet.ok);
        let end = Ending {
            arm: "target",
            ..FINISHED
        };
        assert_eq!(
            judge(std::slice::from_ref(&quiet), &end),
            (
                Verdict::Incomplete,
                Some(
                    "target `http`: the system under test sent no request to the upstream".into()
                )
            )
        );
        // Beside a passing arm it still keeps the run from passing.
        let fine = section(vec![row(ExpectStatus::Pass, "ok")]);
        assert_eq!(
            judge(&[fine, quiet.clone()], &FINISHED).0,
            Verdict::Incomplete
        );
        // A judged row that failed decides: fail.
        let mut failed = PolicyReport::empty("http", vec![row(ExpectStatus::Fail, "broken")]);
        failed.unjudged = quiet.unjudged.clone();
        settle(&mut failed);
        assert_eq!(failed.status, PolicyStatus::Fail);
        assert_eq!(judge(&[failed], &end), (Verdict::Fail, None));
    }

    #[test]
    fn an_error_and_a_stop_decide_before_the_rows() {
        let s = section(vec![row(ExpectStatus::Fail, "broken")]);
        let err = Ending {
            error: Some("upstream died"),
            ..FINISHED
        };
        assert_eq!(
            judge(std::slice::from_ref(&s), &err),
            (Verdict::Error, Some("upstream died".into()))
        );
        let stop = Ending {
            stopped: Some("stopped by SIGTERM"),
            ..FINISHED
        };
        assert_eq!(
            judge(std::slice::from_ref(&s), &stop).0,
            Verdict::Incomplete
        );
        let short = Ending {
            not_started: 1,
            arm: "coordination",
            ..FINISHED
        };
        assert_eq!(
            judge(&[s], &short),
            (
                Verdict::Incomplete,
                Some("not every coordination run finished".into())
            )
        );
    }
}
