//! The supervisor's knobs ([`GatewayOptions`]) and its failures ([`GatewayError`]), each of
//! which quotes the gateway's last log lines where it has them.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long things may take.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// Loopback port; 0 picks a free one.
    pub port: u16,
    /// Until `/health` says ok (6–14 s on an idle 2-core machine, a minute on a busy one).
    pub ready_timeout: Duration,
    /// Each `paste-api-key` (15–40 s each on a busy 2-core machine).
    pub seed_timeout: Duration,
    /// Between SIGTERM and SIGKILL.
    pub stop_grace: Duration,
    /// One turn, the whole answer (OpenClaw's own retries can take minutes).
    pub turn_timeout: Duration,
    /// Contain `/tmp` in a private namespace when possible (Linux, root).
    pub isolate_tmp: bool,
    /// Log lines quoted in errors.
    pub error_lines: usize,
    /// The user's own configuration as the base of `openclaw.json` (`[target] config`).
    pub base: Option<BaseConfig>,
}

/// The user's configuration and which of its values the scenario overrides.
#[derive(Debug, Clone)]
pub struct BaseConfig {
    /// The configuration.
    pub user: super::user_config::UserConfig,
    /// What the scenario sets itself.
    pub options: super::overlay::OverlayOptions,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        Self {
            port: 0,
            ready_timeout: Duration::from_secs(120),
            seed_timeout: Duration::from_secs(180),
            stop_grace: Duration::from_secs(10),
            turn_timeout: Duration::from_secs(600),
            isolate_tmp: true,
            error_lines: 20,
            base: None,
        }
    }
}

/// Why a gateway could not be had.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The configuration is unusable (bad input).
    #[error("OpenClaw target configuration: {0}")]
    Config(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A file in the run directory.
    #[error("{what} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A process could not be started.
    #[error("starting `{what}`: {source}")]
    Spawn {
        /// The command.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Seeding a profile's key failed.
    #[error("seeding the key of profile `{profile}`: {problem}; last output:\n{}", .last_lines.join("\n"))]
    Seed {
        /// The profile id.
        profile: String,
        /// Exit status or timeout.
        problem: String,
        /// The command's last output lines (keys scrubbed).
        last_lines: Vec<String>,
    },
    /// The gateway exited before it was healthy.
    #[error("the OpenClaw gateway exited ({status}) before it was healthy; last log lines:\n{}", .last_lines.join("\n"))]
    Exited {
        /// Its exit status.
        status: String,
        /// Its last log lines.
        last_lines: Vec<String>,
    },
    /// `/health` never said ok.
    #[error("the OpenClaw gateway was not healthy within {waited:?}; last log lines:\n{}", .last_lines.join("\n"))]
    NeverHealthy {
        /// How long it was given.
        waited: Duration,
        /// Its last log lines.
        last_lines: Vec<String>,
    },
}

impl GatewayError {
    /// Bad input (exit 2) rather than a harness failure (exit 3).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, Self::Config(_))
    }

    /// The gateway's last log lines, when the error has them.
    pub fn last_lines(&self) -> &[String] {
        match self {
            Self::Seed { last_lines, .. }
            | Self::Exited { last_lines, .. }
            | Self::NeverHealthy { last_lines, .. } => last_lines,
            _ => &[],
        }
    }
}

/// Maps an I/O error on `path` to [`GatewayError::Io`].
pub(super) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> GatewayError {
    let path = path.to_path_buf();
    move |source| GatewayError::Io { what, path, source }
}
