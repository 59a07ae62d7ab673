//! The section of an arm that never ran: every expectation `not_reached`, saying why.

use super::alert_rows;
use crate::rehearsal::fault_scope::fault_windows;
use crate::rehearsal::plan::ScenarioPlan;
use crate::report::model::PolicyReport;
use crate::verdict::anchor::FaultsSeen;
use crate::verdict::diff_until;

/// The section of an arm (a policy, coordination or gateway run) that never started (`why`):
/// listed with status `not_run`, every expectation `not_reached`, nothing observed.
pub fn not_run(plan: &ScenarioPlan, arm: &str, why: &str) -> PolicyReport {
    let file = &plan.checked.file;
    let mut expectations = diff_until(
        &file.expect_for(arm),
        &[],
        None,
        &[],
        plan.speed,
        Some(0),
    );
    let arm_expect = file.expect_for(arm);
    if file.prometheus.is_some() {
        let none = FaultsSeen::none();
        let (rows, _) = alert_rows(plan, &arm_expect, &[], Err(why), Some(0), None, none);
        expectations.extend(rows);
    }
    for e in &mut expectations {
        let subject = e.dep.as_deref().map_or(String::new(), |d| format!("{d} "));
        e.detail = format!(
            "{subject}{}: not reached (policy `{arm}` never ran: {why})",
            e.expected
        );
    }
    PolicyReport {
        fault_windows: fault_windows(&file.fault, &file.profile, Default::default()),
        ..PolicyReport::empty(arm, expectations)
    }
}

