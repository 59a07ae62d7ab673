//! What the harness wrote as a started gateway's configuration ([`crate::gateway::Effective`],
//! asked through the seam), once it runs — `[target] config` was checked before the run by the
//! release in [`crate::rehearsal::plan`]: what the harness overrode and turned off in the user's
//! configuration into the report, and the effective configuration (every key and token
//! fingerprinted) into the run directory (`openclaw-config.json`). A gateway the harness does
//! not configure has none.

use std::path::Path;

use crate::gateway::Supervised;
use crate::report::model::{TargetReport, UserConfigReport};

/// Fills in the report's `user_config` (the user's file `user`) and keeps the effective
/// configuration in `dir`. What the harness sets about a generated configuration's process (its
/// environment, LiteLLM) is a note.
pub(crate) fn record(
    gw: &dyn Supervised,
    dir: &Path,
    user: Option<&Path>,
    target: &mut TargetReport,
    notes: &mut Vec<String>,
) {
    let Some(effective) = gw.effective() else {
        return;
    };
    match (user, effective.over_user) {
        (Some(u), Some((overridden, turned_off))) => {
            target.user_config = Some(UserConfigReport {
                path: u.display().to_string(),
                overridden,
                turned_off,
            });
        }
        (None, Some((_, set))) if !set.is_empty() => {
            notes.push(format!("the harness set: {}", set.join("; ")));
        }
        _ => {}
    }
    let name = effective.name;
    let written = effective.config.and_then(|v| {
        let mut text = serde_json::to_vec_pretty(&v).map_err(std::io::Error::other)?;
        text.push(b'\n');
        crate::util::atomic::write_atomic(&dir.join(name), &text)
    });
    match written {
        Ok(()) => target.files.push(name.into()),
        Err(e) => notes.push(format!("keeping the effective configuration {name}: {e}")),
    }
}
