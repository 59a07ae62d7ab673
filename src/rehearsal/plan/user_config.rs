//! `[target] config` before the run (bad input, exit 2): the release's own `openclaw config
//! validate` over the configuration the gateway would get — the arm's planned configuration
//! ([`super::gateway::GatewayPlan`], its providers at the upstream slot) laid over the user's,
//! with a placeholder port and token.

use crate::gateway::openclaw::config::GatewaySettings;
use crate::gateway::openclaw::overlay::overlay;
use crate::gateway::openclaw::release_check::check_with_release;
use crate::gateway::openclaw::{BaseConfig, GatewayConfig, Install};

/// The release of `install` refuses `config` over the user's `base`: the error names the key
/// and the release.
pub(crate) fn check_release(
    base: &BaseConfig,
    config: &GatewayConfig,
    install: &Install,
) -> Result<(), super::Refused> {
    let settings = GatewaySettings {
        port: 18789,
        token: "rehearse-validate".into(),
        log_file: std::env::temp_dir().join("rehearse-validate.log"),
    };
    let effective = overlay(&base.user.value, &config.to_json(&settings), base.options);
    check_with_release(install, &effective.config).map_err(|source| {
        super::Refused::UserConfig {
            path: base.user.path.clone(),
            source,
        }
    })
}
