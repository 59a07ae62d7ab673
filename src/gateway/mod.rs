//! The gateways the harness drives as the external system under test (docs/openclaw.md), behind
//! one seam: [`Supervisor`] (a gateway found at plan time, and how to start one) and
//! [`Supervised`] (one started: where its turns go, whether it still runs, its last lines, its
//! stop). What the pipeline asks of a real gateway it starts — find the install and its version,
//! write its config, seed its keys, start it sandboxed, wait until it is ready, send a turn, read
//! its decisions and state, stop it by pid — is asked through these two traits only
//! (`rehearsal::gateway` names no implementation); the plan (`rehearsal::plan::gateway`) picks
//! the implementation, in one match arm per kind.
//!
//! - [`openclaw`]: a real OpenClaw gateway the harness starts ([`openclaw::Openclaw`]): its
//!   install, config, keys, private mount namespace (its own choice of sandbox), process, log
//!   decisions and auth state.
//! - [`portkey`]: Portkey's open-source gateway the harness starts ([`portkey::Portkey`]):
//!   its install, the `x-portkey-config` each turn carries (generated, or the user's overlaid),
//!   a process bound to loopback, watched by its answers, stopped by pid.
//! - [`litellm`]: a real LiteLLM proxy the harness starts ([`litellm::Litellm`]): its venv,
//!   its config generated from the scenario (or the user's, overlaid), its sandboxed process,
//!   its liveness watched, its stop.
//! - [`by_url`]: the user's gateway by URL (`kind = "http"`, [`by_url::ByUrl`]): the same seam
//!   with nothing to start — its health path waited for, nothing stopped, no log read.
//! - [`client`]: [`TurnClient`], how every gateway is sent its turns (OpenAI chat completions)
//!   and how each turn ended ([`TurnEnd`], in `turn_end`).
//!
//! A new gateway is one folder here implementing both traits, and one match arm in the plan.
//! What every gateway is handed is [`openclaw::GatewayConfig`] (providers at the mock upstream,
//! profiles and their keys, the model chain), which each writes its own way; the decisions and
//! auth state a stopped gateway gives back are OpenClaw's vocabulary
//! ([`openclaw::LoggedDecision`], `openclaw::AuthState`) — a gateway that keeps neither gives
//! back `None`. What the scenario asks of a gateway (the `[target]` table, its configuration
//! and turns) is `scenario::target` and `scenario::gateway`; the run path `rehearsal::gateway`.

pub mod by_url;
pub mod client;
pub mod litellm;
pub mod openclaw;
pub mod portkey;
mod turn_end;

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::future::BoxFuture;

pub use client::{Turn, TurnClient, TurnOutcome};
pub use crate::wire::said::GatewaySaid;
pub use turn_end::TurnEnd;
/// Why a [`TurnClient`] could not be made (a gateway's URL or token unusable).
pub use crate::replay::http::TargetError;
use openclaw::{AuthState, GatewayConfig, LoggedDecision};

/// A gateway the plan found (its install and version, or its URL), and how to start one. Held
/// by the plan, one per arm, shared by reference: each [`Supervisor::start`] is a fresh gateway.
pub trait Supervisor: std::fmt::Debug + Send + Sync {
    /// What is known of it before it starts (for the run's lines and the report).
    fn facts(&self) -> Facts;

    /// Starts a fresh gateway in `dir` (created if missing; the run removes it after the stop)
    /// with `config`, its providers at the arm's mock upstream: its config written, its keys
    /// seeded, started in the sandbox of its choice, waited for until it is ready. `config` is
    /// `None` only for a gateway the harness does not configure ([`Facts::configured`]) when
    /// the scenario cannot configure one. On an error nothing of it is left running.
    fn start<'a>(
        &'a self,
        config: Option<&'a GatewayConfig>,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Supervised>, StartError>>;

    /// The version its executable says it is, asked once one runs (`openclaw --version`);
    /// `None` when it cannot say.
    fn says(&self) -> Option<String>;
}

/// A started gateway.
pub trait Supervised: Send {
    /// Where its turns go (`http://127.0.0.1:PORT`).
    fn url(&self) -> String;

    /// A client for its turns (its bearer token, the model its turns name, the turn timeout).
    fn client(&self) -> Result<TurnClient, TargetError>;

    /// Whether it still runs (one the harness did not start always does).
    fn alive(&mut self) -> bool;

    /// Why it is no longer a working gateway, asked while the turns run: by default that its
    /// process exited; a gateway whose liveness the harness watches (LiteLLM: its liveness
    /// path; Portkey: its answers, since its process outlives a broken gateway) also says when it
    /// stopped answering — a harness failure, whatever its process says.
    fn down(&mut self) -> Option<String> {
        (!self.alive()).then(|| "exited mid-run".to_string())
    }

    /// The targets of the routing its turns carry, in order, as the scenario names them (only
    /// a gateway routed per request has them: Portkey).
    fn routing(&self) -> Vec<String> {
        Vec::new()
    }

    /// What it exports for the harness to read, when it is known to export nothing the
    /// harness could judge (Portkey: no `/metrics`).
    fn exports(&self) -> Option<String> {
        None
    }

    /// Its Prometheus endpoint, when the harness configured one (LiteLLM's `/metrics`); else
    /// the plan's `metrics_url`, if any.
    fn metrics_url(&self) -> Option<http::Uri> {
        None
    }

    /// Its last log lines, keys scrubbed (empty when it keeps no log the harness reads).
    fn last_lines(&self) -> Vec<String>;

    /// How it was sandboxed (`namespace` | `none`), when the harness started it.
    fn isolation(&self) -> Option<String>;

    /// The configuration it runs with, when the harness wrote it.
    fn effective(&self) -> Option<Effective>;

    /// Stops it (its process tree by pid, a grace, then SIGKILL) and reads back what it decided
    /// and remembers. Drop its clients first: a gateway's drain may wait for connected ones.
    fn stop(self: Box<Self>) -> BoxFuture<'static, Ended>;
}

/// What is known of a gateway before it starts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// Its name in lines and errors (`OpenClaw`).
    pub name: String,
    /// The install the plan found, for one the harness starts.
    pub found: Option<Found>,
    /// Its address, when known before it starts (a gateway by URL).
    pub url: Option<String>,
    /// Whether the harness writes its configuration; `false` for one the user configures (the
    /// run prints the provider block to paste instead).
    pub configured: bool,
}

/// An install the plan found.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Its version (`2026.9.6`).
    pub version: String,
    /// The executable.
    pub executable: PathBuf,
}

/// What the harness wrote as a gateway's configuration, for the run directory and the report.
#[derive(Debug)]
pub struct Effective {
    /// The name it is kept under in the run directory (`openclaw-config.json`).
    pub name: &'static str,
    /// The configuration, every key and token replaced by its fingerprint.
    pub config: std::io::Result<serde_json::Value>,
    /// Over the user's own configuration: the key paths the harness overrode and what it turned
    /// off (`None` when the configuration was generated).
    pub over_user: Option<(Vec<String>, Vec<String>)>,
}

/// What a stopped gateway leaves.
#[derive(Debug, Default)]
pub struct Ended {
    /// How the stop went; `None` when the harness started nothing (a gateway by URL).
    pub stop: Option<Stop>,
    /// Its decisions and how many lines its log held; `None` when it keeps no log the harness
    /// reads; `Err` says why the log could not be read.
    pub decisions: Option<Result<(Vec<LoggedDecision>, u64), String>>,
    /// Its auth state (no keys in it); `None` when it keeps none; `Err` says why unreadable.
    pub auth: Option<Result<AuthState, String>>,
    /// Its files the run keeps (keys scrubbed), in order.
    pub keep: Vec<Keep>,
    /// Its own secrets, beside the scenario's profile tokens, that its kept files must not
    /// carry in clear (LiteLLM's per-arm master key, OpenClaw's gateway token): replaced by
    /// their fingerprints when the files are kept.
    pub secrets: Vec<String>,
}

/// How a stop went.
#[derive(Debug, Clone, PartialEq)]
pub struct Stop {
    /// It exited within the grace after SIGTERM.
    pub graceful: bool,
    /// From SIGTERM until it was gone.
    pub took: Duration,
    /// Processes of its tree still alive after the stop (should be none).
    pub survivors: Vec<u32>,
    /// What it left in `/tmp` when it ran without a private namespace.
    pub left_in_tmp: Vec<PathBuf>,
}

/// One of a stopped gateway's files, kept in the run directory as `STEM.EXT` (a version's arm:
/// `STEM-VERSION.EXT`).
#[derive(Debug, Clone, PartialEq)]
pub struct Keep {
    /// The file.
    pub from: PathBuf,
    /// Its kept name's stem (`openclaw`).
    pub stem: &'static str,
    /// Its kept name's extension (`log`).
    pub ext: &'static str,
}

/// Why a gateway did not start. Its message is the cause's.
#[derive(Debug, thiserror::Error)]
#[error("{cause}")]
pub struct StartError {
    cause: Box<dyn std::error::Error + Send + Sync>,
    exited: bool,
    last_lines: Vec<String>,
}

impl StartError {
    /// A start that failed for `cause`, the gateway's `last_lines` quoted.
    pub fn new(cause: impl Into<Box<dyn std::error::Error + Send + Sync>>, last_lines: Vec<String>) -> Self {
        Self {
            cause: cause.into(),
            exited: false,
            last_lines,
        }
    }

    /// The same, when the gateway exited during its own start-up: worth one more try from a
    /// fresh state.
    pub fn exited(mut self) -> Self {
        self.exited = true;
        self
    }

    /// It exited during its own start-up.
    pub fn is_exit(&self) -> bool {
        self.exited
    }

    /// Its last log lines, keys scrubbed.
    pub fn last_lines(&self) -> &[String] {
        &self.last_lines
    }
}
