//! What a run with `[prometheus]` checks before it starts anything (bad input, exit 2): speed 1
//! only (Prometheus's `for:`, scrape and evaluation timers run on the wall clock), the programs
//! on PATH, and `promtool check rules` on the scenario's rule files.

use std::path::Path;

use super::binaries::{Program, find};
use super::error::DetectionError;
use super::promtool::check_rules;
use crate::scenario::prometheus::PrometheusSpec;
use crate::util::speed::Speed;

/// Checks a run of `spec` (from the scenario file `scenario`) at `speed`.
pub(crate) fn preflight(
    spec: &PrometheusSpec,
    scenario: &Path,
    speed: Speed,
) -> Result<(), DetectionError> {
    if speed != Speed::ONE {
        return Err(DetectionError::Speed(speed));
    }
    if !spec.spawn {
        return Ok(());
    }
    find(Program::Prometheus)?;
    if spec.alertmanager {
        find(Program::Alertmanager)?;
    }
    let files = spec.rule_paths(scenario);
    if !files.is_empty() {
        let promtool = find(Program::Promtool)?;
        check_rules(&promtool, &files)?;
    }
    Ok(())
}
