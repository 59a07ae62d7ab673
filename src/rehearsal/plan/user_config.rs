//! `[target] config` before the run (bad input, exit 2): the release's own `openclaw config
//! validate` over the configuration the gateway would get (the user's with the harness's
//! overlay, placeholder port and token).

use crate::gateway::openclaw::Install;
use crate::gateway::openclaw::config::GatewaySettings;
use crate::gateway::openclaw::overlay::overlay;
use crate::gateway::openclaw::release_check::check_with_release;
use crate::gateway::openclaw::user_config::UserConfig;
use crate::scenario::gateway::{base_config, gateway_config_with};
use crate::scenario::validate::Checked;

/// The release refuses the effective configuration: the error names the key and the release.
pub(crate) fn check_release(
    checked: &Checked,
    user: &UserConfig,
    install: &Install,
) -> Result<(), super::Refused> {
    let file = &checked.file;
    let config = gateway_config_with(file, &checked.traffic, "http://127.0.0.1:1", Some(user))?;
    let settings = GatewaySettings {
        port: 18789,
        token: "rehearse-validate".into(),
        log_file: std::env::temp_dir().join("rehearse-validate.log"),
    };
    let Some(base) = base_config(file, Some(user)) else {
        return Ok(());
    };
    let effective = overlay(&user.value, &config.to_json(&settings), base.options);
    check_with_release(install, &effective.config).map_err(|source| {
        super::Refused::UserConfig {
            path: user.path.clone(),
            source,
        }
    })
}

