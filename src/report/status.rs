//! Where a run and its parts stand: each policy's [`PolicyStatus`] (pass, fail, incomplete,
//! not_run), where a stopped run stopped ([`Stopped`]) and how much traffic `duration` cut
//! ([`TrafficInfo`]). Part of the report model (re-exported by [`super::model`]); a leaf: the
//! model and the judge name these, never the other way.

use serde::{Deserialize, Serialize};

use crate::util::speed::RecordedSpeed;
use crate::verdict::{ExpectStatus, ExpectationResult};

/// Where one policy run stands (report.json `policies[].status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyStatus {
    /// The run finished and every expectation held.
    Pass,
    /// At least one expectation failed (finished, or stopped after the failure was certain).
    Fail,
    /// Stopped early with no certain failure: some expectations were never reached.
    Incomplete,
    /// Never started (a stop or a harness error came first); its expectations are all
    /// `not_reached`.
    NotRun,
}

impl PolicyStatus {
    /// The status of a policy run that started: fail when any expectation failed (a failure
    /// seen before a stop is still a failure), else incomplete when it was stopped early (or
    /// anything was not reached), else pass.
    pub(crate) fn of(expectations: &[ExpectationResult], stopped: bool) -> Self {
        if expectations.iter().any(|e| e.status == ExpectStatus::Fail) {
            Self::Fail
        } else if stopped
            || expectations
                .iter()
                .any(|e| e.status == ExpectStatus::NotReached)
        {
            Self::Incomplete
        } else {
            Self::Pass
        }
    }

    /// `pass`, `fail`, `incomplete` or `not_run`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Fail => "fail",
            Self::Incomplete => "incomplete",
            Self::NotRun => "not_run",
        }
    }
}

/// Where and why a run stopped before `duration` (report.json `stopped`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    /// What stopped it (`SIGTERM`, `SIGINT`).
    pub reason: String,
    /// When, ms of scenario time (run time × speed) into the policy run that was cut.
    pub at_ms: u64,
    /// The scenario's `duration`, ms.
    pub of_ms: u64,
    /// The policy run that was cut (later ones are `not_run`).
    pub policy: String,
}

impl Stopped {
    /// The report's first line about the stop: `stopped by SIGTERM at 5.0 s of 300 s`, in
    /// scenario time; at a speed other than 1 the wall time follows in parentheses. A reason
    /// that is a sentence (`the machine slept for 42 s at T`, the upstream's death) follows the
    /// time: `stopped at 5.0 s of 300 s: the machine slept …`.
    pub(crate) fn line(&self, speed: RecordedSpeed) -> String {
        let s = |ms: u64| format!("{:.1} s", ms as f64 / 1000.0);
        let whole = |ms: u64| {
            if ms.is_multiple_of(1000) {
                format!("{} s", ms / 1000)
            } else {
                s(ms)
            }
        };
        let mut at = format!("at {} of {}", s(self.at_ms), whole(self.of_ms));
        if speed.has_wall() {
            let wall = |ms: u64| format!("{:.1} s", speed.to_wall(ms as f64 / 1000.0));
            at.push_str(&format!(
                " (scenario time; {} of {} of wall time at ×{speed})",
                wall(self.at_ms),
                wall(self.of_ms)
            ));
        }
        if self.reason.contains(char::is_whitespace) {
            format!("stopped {at}: {}", self.reason)
        } else {
            format!("stopped by {} {at}", self.reason)
        }
    }
}

/// The traffic file a run replayed (report.json `traffic`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrafficInfo {
    /// The traffic file as the scenario resolved it.
    pub file: String,
    /// Requests in the file.
    pub requests: u64,
    /// Of those, requests at or after `duration`: left out of every policy run.
    pub beyond_duration: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_stops_the_run_by_name_a_sentence_follows_the_time() {
        let mut s = Stopped {
            reason: "SIGTERM".into(),
            at_ms: 5_000,
            of_ms: 300_000,
            policy: "retry-gate".into(),
        };
        let one = RecordedSpeed::from(crate::util::speed::Speed::ONE);
        assert_eq!(s.line(one), "stopped by SIGTERM at 5.0 s of 300 s");
        s.reason = "the machine slept for 42 s at 2026-05-04T03:01:10Z".into();
        assert_eq!(
            s.line(one),
            "stopped at 5.0 s of 300 s: the machine slept for 42 s at 2026-05-04T03:01:10Z"
        );
    }
}
