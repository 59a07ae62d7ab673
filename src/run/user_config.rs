//! `[target] config` before and after the gateway starts: before the run (bad input, exit 2),
//! the release's own `openclaw config validate` over the configuration the gateway would get
//! (the user's with the harness's overlay, placeholder port and token); once it runs, what the
//! harness overrode and turned off into the report and the effective configuration (every key
//! and token fingerprinted) into the run directory as `openclaw-config.json`.

use std::path::Path;

use crate::gateway::openclaw::config::GatewaySettings;
use crate::gateway::openclaw::overlay::overlay;
use crate::gateway::openclaw::release_check::check_with_release;
use crate::gateway::openclaw::user_config::UserConfig;
use crate::gateway::openclaw::{Gateway, Install};
use crate::report::model::{TargetReport, UserConfigReport};
use crate::scenario::gateway::{base_config, gateway_config_with};
use crate::scenario::validate::Checked;

/// The release refuses the effective configuration: the error names the key and the release.
pub(crate) fn check_release(
    checked: &Checked,
    user: &UserConfig,
    install: &Install,
) -> Result<(), super::plan_error::Refused> {
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
        super::plan_error::Refused::UserConfig {
            path: user.path.clone(),
            source,
        }
    })
}

/// Fills in the report's `user_config` and keeps `openclaw-config.json` in `dir`.
pub(crate) fn record(gw: &Gateway, dir: &Path, user: Option<&UserConfig>, target: &mut TargetReport, notes: &mut Vec<String>) {
    if let (Some(u), Some(o)) = (user, gw.overlaid()) {
        target.user_config = Some(UserConfigReport {
            path: u.path.display().to_string(),
            overridden: o.overridden.clone(),
            turned_off: o.turned_off.clone(),
        });
    }
    let name = "openclaw-config.json";
    let written = gw.effective_config().and_then(|v| {
        let mut text = serde_json::to_vec_pretty(&v).map_err(std::io::Error::other)?;
        text.push(b'\n');
        crate::util::atomic::write_atomic(&dir.join(name), &text)
    });
    match written {
        Ok(()) => target.files.push(name.into()),
        Err(e) => notes.push(format!("keeping the effective configuration {name}: {e}")),
    }
}
