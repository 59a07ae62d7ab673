//! How many checks a report holds and how many failed, counted one way for report.md,
//! report.html, report.junit.xml and the run's stdout. A check is one expectation of the scenario
//! in one policy run (what `rehearse validate` counts); rows for unexpected observed transitions
//! are counted apart, since no expectation stands behind them.

use super::model::{ExpectStatus, Report};
use crate::util::text::count;

/// The tally of a report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Expectation checks (one expectation in one policy run).
    pub checks: usize,
    /// Of those, failed ones (status `fail`).
    pub failed: usize,
    /// Of those, ones an interrupted run never reached (status `not_reached`: neither passed
    /// nor failed).
    pub not_reached: usize,
    /// Of those, drift rows with no baseline yet (status `no_baseline`: neither passed nor
    /// failed, and never a reason the run did not pass).
    pub no_baseline: usize,
    /// Unexpected observed transitions (each a failure).
    pub unexpected: usize,
}

impl Counts {
    /// Counts every policy run of `r`.
    pub fn of(r: &Report) -> Self {
        let mut c = Counts::default();
        for e in r.policies.iter().flat_map(|p| &p.expectations) {
            if e.is_unexpected() {
                c.unexpected += 1;
            } else {
                c.checks += 1;
                c.failed += usize::from(e.status == ExpectStatus::Fail);
                c.not_reached += usize::from(e.status == ExpectStatus::NotReached);
                c.no_baseline += usize::from(e.status == ExpectStatus::NoBaseline);
            }
        }
        c
    }

    /// `1 of 8 checks failed, 3 not reached, plus 2 unexpected transitions (a check is one
    /// expectation in one policy run)`.
    pub fn sentence(&self) -> String {
        let mut s = format!("{} of {} failed", self.failed, count(self.checks, "check"));
        if self.not_reached > 0 {
            s.push_str(&format!(", {} not reached", self.not_reached));
        }
        if self.no_baseline > 0 {
            s.push_str(&format!(", {} with no baseline yet", self.no_baseline));
        }
        if self.unexpected > 0 {
            s.push_str(&format!(
                ", plus {}",
                count(self.unexpected, "unexpected transition")
            ));
        }
        s.push_str(" (a check is one expectation in one policy run)");
        s
    }
}
