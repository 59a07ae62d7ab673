//! What a gateway the user configures (`http`) is shown before its warm-up: the OpenClaw
//! provider block to paste into its configuration, printed at the start and kept in the report
//! (its providers at the mock upstream's address, fixed by `[upstream] listen`). Its token, its
//! health path and its model are the plan's ([`crate::rehearsal::plan::GatewayPlan`]) and its
//! gateway's ([`crate::gateway::by_url::ByUrl`]).

use crate::gateway::openclaw::GatewayConfig;
use crate::report::model::TargetReport;
use crate::scenario::field::FieldError;

/// The provider block of `config` (the arm's, its providers at `upstream`), printed on stdout
/// and kept in the report; a scenario that cannot configure an OpenClaw gateway gets a note
/// instead.
pub(super) fn provider_block(
    scenario: &str,
    config: Result<&GatewayConfig, &FieldError>,
    upstream: &str,
    fixed: bool,
    target: &mut TargetReport,
    notes: &mut Vec<String>,
) {
    match config {
        Ok(c) => {
            let block = crate::scenario::gateway::provider_block(c);
            let pretty = serde_json::to_string_pretty(&block).unwrap_or_default();
            let port_note = if fixed {
                String::new()
            } else {
                " — its port changes every run: set `[upstream] listen` for a fixed address".into()
            };
            crate::outln!(
                "{scenario}/http: providers for your gateway's openclaw.json (the mock upstream at {upstream}{port_note}; seed each profile's key with `openclaw models auth paste-api-key`):\n{pretty}"
            );
            target.provider_block = Some(block);
        }
        Err(e) => notes.push(format!(
            "no provider block to paste: {}: {}",
            e.field, e.message
        )),
    }
}
