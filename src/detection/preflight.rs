//! What a run with `[prometheus]` checks before it starts anything (bad input, exit 2): speed 1
//! only (Prometheus's `for:`, scrape and evaluation timers run on the wall clock), the programs
//! on PATH, and `promtool check rules` on the scenario's rule files.

use std::path::Path;

use super::binaries::{Program, find};
use super::promtool::check_rules;
use crate::scenario::prometheus::PrometheusSpec;
use crate::util::speed::Speed;

/// Checks a run of `spec` (from the scenario file `scenario`) at `speed`.
pub(crate) fn preflight(
    spec: &PrometheusSpec,
    scenario: &Path,
    speed: Speed,
) -> Result<(), String> {
    if speed != Speed::ONE {
        return Err(format!(
            "--speed {speed}: a scenario with [prometheus] runs at speed 1 only: Prometheus's own \
             timers (the rules' `for:`, the scrape and evaluation intervals) run on the wall \
             clock and cannot be compressed, so alerts at another speed would judge a different \
             detection path"
        ));
    }
    if !spec.spawn {
        return Ok(());
    }
    find(Program::Prometheus).map_err(|e| e.to_string())?;
    if spec.alertmanager {
        find(Program::Alertmanager).map_err(|e| e.to_string())?;
    }
    let files = spec.rule_paths(scenario);
    if !files.is_empty() {
        let promtool = find(Program::Promtool).map_err(|e| e.to_string())?;
        check_rules(&promtool, &files).map_err(|e| e.to_string())?;
    }
    Ok(())
}
