//! `[target] config` once the gateway runs (checked before the run by the release in
//! [`crate::rehearsal::plan`]): what the harness overrode and turned off into the report and the
//! effective configuration (every key and token fingerprinted) into the run directory as
//! `openclaw-config.json`.

use std::path::Path;

use crate::gateway::openclaw::user_config::UserConfig;
use crate::gateway::openclaw::Gateway;
use crate::report::model::{TargetReport, UserConfigReport};

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
