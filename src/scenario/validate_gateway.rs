//! What a gateway target brings to a scenario's check: its own configuration file, read the way
//! its kind reads one (OpenClaw's JSON5, Portkey's JSON with the harness's key list, LiteLLM's
//! YAML; each error at its file:line:col), and the traffic it cannot run (a row with its own
//! `messages` through a gateway that keeps only the user message: not applicable).

use std::path::Path;

use super::format::{ScenarioError, ScenarioFile};
use super::target::TargetKind;
use crate::engine::RequestKind;
use crate::gateway::litellm::user_config::{UserConfig as LitellmConfig, UserConfigError as LitellmError};
use crate::gateway::openclaw::user_config::{UserConfig, UserConfigError};
use crate::gateway::portkey::user_file::UserFile;
use crate::replay::traffic::TrafficLine;
use crate::util::suggest::closest;

/// `[target] config`, read by the target's kind (at most one is set).
#[derive(Debug, Default)]
pub(super) struct GatewayFiles {
    /// The user's own OpenClaw configuration (any kind but `portkey` and `litellm`: a kind that
    /// takes no `config` is refused by the target's own check).
    pub openclaw: Option<UserConfig>,
    /// A `portkey` target's Portkey config.
    pub portkey: Option<UserFile>,
    /// A `litellm` target's `config.yaml` (its keys are checked by the plan, against the
    /// release it runs).
    pub litellm: Option<LitellmConfig>,
}

/// The `[target] config` of `file` (at `path`), resolved from the scenario's directory.
pub(super) fn files(
    path: &Path,
    file: &ScenarioFile,
    origin: &str,
) -> Result<GatewayFiles, ScenarioError> {
    let Some(c) = &file.target.config else {
        return Ok(GatewayFiles::default());
    };
    let at = path.parent().map_or_else(|| c.clone(), |d| d.join(c));
    let invalid = |msg: String| ScenarioError::invalid(origin, "target.config", msg);
    Ok(match file.target.kind {
        TargetKind::Portkey => GatewayFiles {
            portkey: Some(portkey_file(&at, file, origin)?),
            ..GatewayFiles::default()
        },
        TargetKind::Litellm => GatewayFiles {
            litellm: Some(LitellmConfig::load(&at).map_err(|e| match e {
                LitellmError::Syntax {
                    path,
                    line,
                    col,
                    msg,
                } => ScenarioError::Syntax {
                    path: path.display().to_string(),
                    line,
                    col,
                    msg,
                },
                other => invalid(other.to_string()),
            })?),
            ..GatewayFiles::default()
        },
        _ => GatewayFiles {
            openclaw: Some(UserConfig::load(&at).map_err(|e| match e {
                UserConfigError::Syntax {
                    path,
                    line,
                    col,
                    msg,
                } => ScenarioError::Syntax {
                    path,
                    line,
                    col,
                    msg,
                },
                other => invalid(other.to_string()),
            })?),
            ..GatewayFiles::default()
        },
    })
}

/// A `portkey` target's `[target] config`: read, its keys checked, every `profile` it names a
/// `[[profile]]` of `file` (each error at its file:line:col).
fn portkey_file(
    path: &Path,
    file: &ScenarioFile,
    origin: &str,
) -> Result<UserFile, ScenarioError> {
    use crate::gateway::portkey::user_file::UserFileError;
    let to_scenario = |e: UserFileError| match e {
        UserFileError::At {
            path,
            line,
            col,
            msg,
        } => ScenarioError::Syntax {
            path,
            line,
            col,
            msg,
        },
        other => ScenarioError::invalid(origin, "target.config", other.to_string()),
    };
    let f = UserFile::load(path).map_err(to_scenario)?;
    for (at, p) in f.profiles() {
        if !file.profile.iter().any(|q| q.id == p) {
            let hint = closest(&p, file.profile.iter().map(|q| q.id.as_str()))
                .map(|c| format!(": did you mean `{c}`?"))
                .unwrap_or_default();
            let needle = format!("\"{p}\"");
            let pos = f.text.find(&needle).unwrap_or(0);
            let (line, col) = crate::util::textpos::line_col(&f.text, pos);
            return Err(ScenarioError::Syntax {
                path: path.display().to_string(),
                line,
                col,
                msg: format!("{at}.profile: `{p}` is not the id of a [[profile]]{hint}"),
            });
        }
    }
    Ok(f)
}

/// A traffic row with its own `messages` (a conversation, e.g. ending with an assistant prefill)
/// cannot be sent through a gateway that keeps only the user message: OpenClaw
/// (`kind = "openclaw"`) builds its own conversation from its session. Such a scenario is not
/// applicable to it ([`ScenarioError::NotApplicable`]), never a fail.
pub(super) fn not_applicable(
    file: &ScenarioFile,
    traffic: &[TrafficLine],
    traffic_path: &Path,
) -> Result<(), ScenarioError> {
    let kind = file.target_kind();
    if kind != TargetKind::Openclaw {
        return Ok(());
    }
    let row = traffic
        .iter()
        .position(|l| matches!(&l.kind, RequestKind::Llm { messages: Some(_), .. }));
    match row {
        None => Ok(()),
        Some(i) => Err(ScenarioError::NotApplicable {
            traffic: crate::builtin::shown(traffic_path),
            line: file_line_of_row(traffic_path, i),
            kind: kind.as_str(),
            reason: "this row sends its own `messages`, and an OpenClaw gateway keeps only the \
                     user message of a turn (it builds the conversation from its session)"
                .to_string(),
        }),
    }
}

/// The 1-based file line of the traffic file's row `row` (0-based; blank lines are not rows),
/// else `row + 1`.
fn file_line_of_row(traffic_path: &Path, row: usize) -> usize {
    std::fs::read_to_string(traffic_path)
        .ok()
        .and_then(|t| {
            t.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .nth(row)
                .map(|(n, _)| n + 1)
        })
        .unwrap_or(row + 1)
}
