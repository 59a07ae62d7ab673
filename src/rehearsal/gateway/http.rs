//! What a gateway the user configures (`http`) is shown before its warm-up: how to point it at
//! the mock upstream, gateway-neutral (`scenario::gateway_setup`: the base URL, the models, an
//! API key per profile, and that a gateway you run keeps its cooldowns between runs), printed at
//! the start and kept in the report (fingerprints only); for an OpenClaw gateway by URL (its
//! turns ask for `openclaw/…`) OpenClaw's provider block to paste as well. The mock upstream's
//! address is fixed by `[upstream] listen`. Its token, its health path and its model are the
//! plan's ([`crate::rehearsal::plan::GatewayPlan`]) and its gateway's
//! ([`crate::gateway::by_url::ByUrl`]).

use std::io::IsTerminal as _;

use crate::gateway::openclaw::GatewayConfig;
use crate::report::model::TargetReport;
use crate::scenario::field::FieldError;

/// Whether `[target] model` asks an OpenClaw gateway for its agent (`openclaw/default`): only
/// then is OpenClaw's provider block printed.
pub(super) fn is_openclaw_model(model: Option<&str>) -> bool {
    model.is_some_and(|m| m.starts_with("openclaw/"))
}

/// The setup of `config` (the arm's, its providers at `upstream`), printed on stdout (an API
/// key only when stdout is a terminal) and kept in the report; OpenClaw's provider block too
/// when `openclaw`. A scenario that cannot configure a gateway gets a note instead.
pub(super) fn provider_block(
    scenario: &str,
    config: Result<&GatewayConfig, &FieldError>,
    upstream: &str,
    fixed: bool,
    openclaw: bool,
    target: &mut TargetReport,
    notes: &mut Vec<String>,
) {
    let c = match config {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!(
                "no gateway setup to show: {}: {}",
                e.field, e.message
            ));
            return;
        }
    };
    let port_note = if fixed {
        String::new()
    } else {
        " — its port changes every run: set `[upstream] listen` for a fixed address".into()
    };
    let setup = crate::scenario::gateway_setup::text(c, std::io::stdout().is_terminal());
    crate::outln!(
        "{scenario}/http: point your gateway at the mock upstream {upstream}{port_note} (any OpenAI-compatible gateway: docs/gateways.md):\n{setup}"
    );
    target.gateway_setup = Some(crate::scenario::gateway_setup::block(c));
    if openclaw {
        let block = crate::scenario::gateway::provider_block(c);
        let pretty = serde_json::to_string_pretty(&block).unwrap_or_default();
        crate::outln!(
            "{scenario}/http: as OpenClaw's providers for your gateway's openclaw.json (seed each profile's key with `openclaw models auth paste-api-key`):\n{pretty}"
        );
        target.provider_block = Some(block);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_turn_for_openclaws_agent_gets_openclaws_block() {
        assert!(is_openclaw_model(Some("openclaw/default")));
        assert!(!is_openclaw_model(Some("mockai/m1")));
        assert!(!is_openclaw_model(Some("gpt-4o")));
        assert!(!is_openclaw_model(None));
    }
}
