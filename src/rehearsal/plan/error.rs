//! Why `run`'s flags and scenario files make no plan: every case is bad input (exit 2). A
//! scenario's problem is wrapped with the scenario argument it came from; causes are kept as
//! `source` and printed once by the CLI edge's `{:#}`.

use std::path::PathBuf;

use crate::detection::DetectionError;
use crate::gateway::openclaw::InstallError;
use crate::gateway::openclaw::release_check::ReleaseCheckError;
use crate::scenario::field::FieldError;
use crate::scenario::resolve::NotFound;
use crate::scenario::format::ScenarioError;
use crate::util::speed::Speed;

/// No plan could be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// `run` without a scenario.
    #[error("give at least one --scenario NAME|PATH")]
    NoScenario,
    /// A scenario name that names no file.
    #[error(transparent)]
    NotFound(#[from] NotFound),
    /// `--target FILE` cannot be used (located in FILE), or two of them clash.
    #[error(transparent)]
    Target(#[from] TargetFlagError),
    /// One scenario cannot be run as asked.
    #[error("scenario `{arg}`")]
    Scenario {
        /// The `--scenario` argument.
        arg: String,
        /// Why (boxed: a located scenario error is large).
        #[source]
        source: Box<Refused>,
    },
}

/// Why `--target` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetFlagError {
    /// The file is wrong (located at FILE:line:col).
    #[error("--target: {0}")]
    File(#[from] ScenarioError),
    /// Two `--target` files whose names give their arms the same label (their stem).
    #[error(
        "--target {second}: its arms would be named `{stem}` as those of --target {first}: rename one of the files"
    )]
    SameStem {
        /// The label both would take.
        stem: String,
        /// The earlier file.
        first: String,
        /// The later file.
        second: String,
    },
}

/// Why one scenario cannot be run as asked.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// The file itself is wrong (located).
    #[error(transparent)]
    File(#[from] ScenarioError),
    /// Its `[prometheus]` cannot run here or at this speed.
    #[error(transparent)]
    Detection(#[from] DetectionError),
    /// An external target at a compressed speed.
    #[error(
        "--speed {speed}: a `{kind}` target runs at speed 1 only: the harness cannot compress a \
         real gateway's own timers (its retries, backoff and cooldowns), so a faster replay would \
         judge a different system"
    )]
    TargetSpeed {
        /// The speed asked for.
        speed: Speed,
        /// The target kind.
        kind: &'static str,
    },
    /// `--policy` with an external target.
    #[error("--policy picks an embedded engine policy; this scenario's target is `{0}`")]
    PolicyWithTarget(&'static str),
    /// No OpenClaw install (or not the version asked for).
    #[error(transparent)]
    Install(#[from] InstallError),
    /// No Portkey install (or not the version asked for).
    #[error(transparent)]
    PortkeyInstall(#[from] crate::gateway::portkey::InstallError),
    /// No LiteLLM install (or not the version asked for).
    #[error(transparent)]
    LitellmInstall(#[from] crate::gateway::litellm::InstallError),
    /// A key of the user's LiteLLM config the release does not take (`file:line:col`).
    #[error(transparent)]
    LitellmKey(#[from] crate::gateway::litellm::release_keys::UnknownKey),
    /// The LiteLLM release could not be asked which keys it takes.
    #[error(transparent)]
    LitellmKeys(#[from] crate::gateway::litellm::release_keys::NoAnswer),
    /// The effective gateway configuration could not be built.
    #[error(transparent)]
    GatewayConfig(#[from] FieldError),
    /// The release refused the effective configuration of the user's `[target] config`.
    #[error("[target] config {}", path.display())]
    UserConfig {
        /// The user's file.
        path: PathBuf,
        /// The release's answer.
        #[source]
        source: ReleaseCheckError,
    },
    /// `[target] token_env` (or `metrics_token_env`, the key) names a variable that is not set.
    #[error("[target] {0} names `{1}`, which is not set")]
    TokenUnset(&'static str, String),
    /// `[target] token_env` (or `metrics_token_env`) names a variable that is empty or not UTF-8.
    #[error("[target] {0} names `{1}`, which is empty or not UTF-8")]
    TokenEmpty(&'static str, String),
    /// `--gateway-version` with a target the harness does not install (the embedded engine,
    /// `http`).
    #[error(
        "--gateway-version runs versions of a gateway the harness installs (openclaw, litellm, portkey) side by side; this scenario's target is `{0}`"
    )]
    VersionsNotOpenclaw(&'static str),
    /// `--gateway-version` with `[target] command`.
    #[error("--gateway-version: the scenario's `[target] command` pins one executable")]
    VersionsWithCommand,
    /// Too many versions.
    #[error("--gateway-version: at most {0} versions side by side")]
    TooManyVersions(usize),
    /// A version that is not one.
    #[error("--gateway-version: {0}")]
    BadVersion(String),
    /// The same version twice.
    #[error("--gateway-version: `{0}` is given twice")]
    VersionTwice(String),
    /// An expectation scoped to a version the run does not run.
    #[error(
        "{}: an expectation is scoped to version `{version}`, which --gateway-version {given} does not run",
        path.display()
    )]
    ScopedVersionNotRun {
        /// The scenario file.
        path: PathBuf,
        /// The version the expectation names.
        version: String,
        /// The versions given, as on the command line.
        given: String,
    },
    /// A fleet scenario (`[fleet] hosts`) with several `--target`s.
    #[error("several --target: a fleet scenario (`[fleet] hosts`) runs only the embedded engine, once")]
    FleetSideBySide,
    /// Several `--target`s: the scenario cannot run against this one.
    #[error("with --target {path}: {why}")]
    WithTarget {
        /// The target file, as given.
        path: String,
        /// Why (boxed: a located scenario error is large), said in the message: `validate`
        /// prints an error's own line, not its chain.
        why: Box<Refused>,
    },
}
