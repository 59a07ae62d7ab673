//! OpenClaw's auth-profile state: the `config_machine_state` row `authProfiles.state` in
//! `$OPENCLAW_STATE_DIR/state/openclaw.sqlite`, read-only, as typed cooldowns.
//!
//! The database is read with Node's built-in `node:sqlite` through the Node the install runs
//! on, not with a Rust SQLite crate: that Node is always there for an OpenClaw target, it is
//! the SQLite OpenClaw itself writes with, and a bundled C SQLite would need a C cross-compiler
//! for the macOS type-check. Read it after the gateway has stopped: a running gateway keeps
//! cooldowns in memory, and during its shutdown the file can briefly fail to open (it is
//! retried a few times).
//!
//! The row (2026.9.6): `{"version":1,"usageStats":{"mockai:a":{"cooldownUntil":MS,
//! "cooldownReason":"auth","errorCount":1,"failureCounts":{"auth":1},"lastFailureAt":MS,
//! "lastProbeAt":MS}, …}}`. It holds no keys (those live in the row `authProfiles.store`, which
//! is never read here).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Prints `{"found":bool,"value":TEXT}` for the row, opened read-only.
const READ_SCRIPT: &str = r#"
const { DatabaseSync } = require("node:sqlite");
const db = new DatabaseSync(process.argv[1], { readOnly: true });
const row = db
  .prepare("SELECT value_json FROM config_machine_state WHERE state_key = 'authProfiles.state'")
  .get();
db.close();
process.stdout.write(JSON.stringify({ found: !!row, value: row ? row.value_json : null }));
"#;

/// How often a failed read is tried again, and how long apart.
const READ_TRIES: u32 = 5;
const READ_RETRY: Duration = Duration::from_millis(400);

/// One profile's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileState {
    /// The profile id (`mockai:a`).
    pub profile: String,
    /// `cooldownReason`.
    pub cooldown_reason: Option<String>,
    /// `cooldownUntil` (ms since the epoch).
    pub cooldown_until_ms: Option<u64>,
    /// `lastFailureAt` (ms since the epoch).
    pub last_failure_at_ms: Option<u64>,
    /// `cooldownUntil − lastFailureAt` in ms: the cooldown OpenClaw chose (when both are set).
    pub cooldown_ms: Option<u64>,
    /// `disabledUntil` (ms since the epoch), for billing-style disables.
    pub disabled_until_ms: Option<u64>,
    /// `disabledReason`.
    pub disabled_reason: Option<String>,
    /// `errorCount`.
    pub error_count: u64,
}

/// The auth state snapshot.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AuthState {
    /// Whether the row existed (a gateway that recorded nothing writes none).
    pub found: bool,
    /// Every profile in `usageStats`, sorted by id.
    pub profiles: Vec<ProfileState>,
    /// The row as stored (no secrets: see the module doc), for the run directory.
    pub raw: Option<Value>,
}

impl AuthState {
    /// The profiles with a cooldown.
    pub fn cooled(&self) -> impl Iterator<Item = &ProfileState> {
        self.profiles
            .iter()
            .filter(|p| p.cooldown_until_ms.is_some())
    }

    /// One profile's state.
    pub(crate) fn profile(&self, id: &str) -> Option<&ProfileState> {
        self.profiles.iter().find(|p| p.profile == id)
    }
}

/// Why the state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The database is not there: the gateway kept no state where it was told to, so its
    /// cooldowns are unknown, not none.
    #[error("no auth state database at {db}")]
    Missing {
        /// The database.
        db: PathBuf,
    },
    /// Node could not be started.
    #[error("running {node} to read {db}: {source}")]
    Spawn {
        /// The node binary.
        node: PathBuf,
        /// The database.
        db: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The read failed.
    #[error("reading the auth state from {db}: {message}")]
    Read {
        /// The database.
        db: PathBuf,
        /// Node's error output (last line).
        message: String,
    },
    /// The row is not the JSON expected.
    #[error("the auth state in {db} is not valid JSON: {source}")]
    Malformed {
        /// The database.
        db: PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

/// The database inside a state dir.
pub(crate) fn database_path(state_dir: &Path) -> PathBuf {
    state_dir.join("state").join("openclaw.sqlite")
}

/// Reads the auth state from `db` with `node`. A missing database is an error
/// ([`StateError::Missing`]); a database without the row reads as `found = false`.
pub(crate) fn read_auth_state(node: &Path, db: &Path) -> Result<AuthState, StateError> {
    if !db.exists() {
        return Err(StateError::Missing {
            db: db.to_path_buf(),
        });
    }
    let mut last = String::new();
    for attempt in 0..READ_TRIES {
        if attempt > 0 {
            std::thread::sleep(READ_RETRY);
        }
        let out = Command::new(node)
            .args(["--no-warnings", "-e", READ_SCRIPT])
            .arg(db)
            .output()
            .map_err(|source| StateError::Spawn {
                node: node.to_path_buf(),
                db: db.to_path_buf(),
                source,
            })?;
        if out.status.success() {
            let v: Value =
                serde_json::from_slice(&out.stdout).map_err(|source| StateError::Malformed {
                    db: db.to_path_buf(),
                    source,
                })?;
            let text = v.get("value").and_then(Value::as_str);
            return parse_state(text).map_err(|source| StateError::Malformed {
                db: db.to_path_buf(),
                source,
            });
        }
        last = String::from_utf8_lossy(&out.stderr)
            .lines()
            .rev()
            .find(|l| l.contains("Error"))
            .unwrap_or("node exited with an error")
            .trim()
            .to_string();
    }
    Err(StateError::Read {
        db: db.to_path_buf(),
        message: last,
    })
}

/// The state from the row's text (`None`: no row).
pub(crate) fn parse_state(value_json: Option<&str>) -> Result<AuthState, serde_json::Error> {
    let Some(text) = value_json else {
        return Ok(AuthState::default());
    };
    let raw: Value = serde_json::from_str(text)?;
    let mut profiles: Vec<ProfileState> = raw
        .get("usageStats")
        .and_then(Value::as_object)
        .map(|stats| {
            stats
                .iter()
                .map(|(id, s)| {
                    let n = |k: &str| s.get(k).and_then(Value::as_u64);
                    let t = |k: &str| s.get(k).and_then(Value::as_str).map(str::to_string);
                    let (until, last) = (n("cooldownUntil"), n("lastFailureAt"));
                    ProfileState {
                        profile: id.clone(),
                        cooldown_reason: t("cooldownReason"),
                        cooldown_until_ms: until,
                        last_failure_at_ms: last,
                        cooldown_ms: until.zip(last).map(|(u, l)| u.saturating_sub(l)),
                        disabled_until_ms: n("disabledUntil"),
                        disabled_reason: t("disabledReason"),
                        error_count: n("errorCount").unwrap_or(0),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    profiles.sort_by(|a, b| a.profile.cmp(&b.profile));
    Ok(AuthState {
        found: true,
        profiles,
        raw: Some(raw),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row a 2026.9.6 gateway wrote after a 401 on both mockai profiles.
    const ROW: &str = r#"{"version":1,"usageStats":{"mockai:a":{"cooldownUntil":1796116404516,"cooldownReason":"auth","errorCount":1,"failureCounts":{"auth":1},"lastFailureAt":1796116374516,"lastProbeAt":1796116291589},"mockai:b":{"cooldownUntil":1796116416283,"cooldownReason":"auth","errorCount":1,"failureCounts":{"auth":1},"lastFailureAt":1796116386283,"lastProbeAt":1796116368757},"fallback:a":{"errorCount":0,"lastProbeAt":1796116388691}}}"#;

    #[test]
    fn cooldowns_are_until_minus_last_failure() {
        let s = parse_state(Some(ROW)).unwrap();
        assert!(s.found);
        let ids: Vec<&str> = s.profiles.iter().map(|p| p.profile.as_str()).collect();
        assert_eq!(ids, ["fallback:a", "mockai:a", "mockai:b"]);
        let a = s.profile("mockai:a").unwrap();
        assert_eq!(a.cooldown_ms, Some(30_000));
        assert_eq!(a.cooldown_reason.as_deref(), Some("auth"));
        assert_eq!(a.error_count, 1);
        assert_eq!(s.cooled().count(), 2);
        let f = s.profile("fallback:a").unwrap();
        assert_eq!((f.cooldown_ms, f.cooldown_reason.as_deref()), (None, None));
    }

    #[test]
    fn no_row_is_an_empty_state_and_bad_json_an_error() {
        let s = parse_state(None).unwrap();
        assert!(!s.found && s.profiles.is_empty());
        assert!(parse_state(Some("{nope")).is_err());
    }
}
