//! `rehearse monitoring rules|alertmanager|dashboard` (the CLI edge): prints a shipped file for
//! a user's own Prometheus, Alertmanager or Grafana.

use crate::cli::{MonitoringAction, MonitoringArgs};
use crate::exit::{CmdResult, Status};

/// Runs `rehearse monitoring`.
pub(crate) fn command(args: MonitoringArgs) -> CmdResult {
    let text = match &args.action {
        MonitoringAction::Rules(a) => match &a.runbook_base {
            Some(base) => super::with_runbook_base(super::shipped_rules(), base),
            None => super::shipped_rules().to_string(),
        },
        MonitoringAction::Alertmanager => super::shipped_alertmanager().to_string(),
        MonitoringAction::Dashboard => super::shipped_dashboard().to_string(),
    };
    {
        use std::io::Write as _;
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }
    Ok(Status::Pass)
}
