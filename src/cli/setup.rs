//! Flags of the commands that set a machine up: `init`, `gateway`, `doctor`.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

/// Flags of `rehearse init`.
#[derive(Debug, Clone, Args)]
pub struct InitArgs {
    /// The directory to write the project into (created when missing; default: .).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The system under test the starter scenario rehearses.
    #[arg(long, value_enum, default_value = "http")]
    pub gateway: InitGateway,
}

/// The gateways `rehearse init` writes a starter scenario for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InitGateway {
    /// A real OpenClaw gateway, started and supervised by the run.
    Openclaw,
    /// Any OpenAI-compatible gateway by URL (a stand-in the run starts, until you point it at yours).
    Http,
}

/// `rehearse gateway install|list|remove`.
#[derive(Debug, Clone, Args)]
pub struct GatewayArgs {
    /// install | list | remove
    #[command(subcommand)]
    pub action: GatewayAction,
}

/// The actions of `rehearse gateway`.
#[derive(Debug, Clone, Subcommand)]
pub enum GatewayAction {
    /// Install a gateway (or the OpenAI SDK) into the cache and print its executable's path.
    Install(GatewayInstallArgs),
    /// What is installed in the cache, with versions and sizes.
    List,
    /// Remove an install from the cache.
    Remove(GatewayRemoveArgs),
}

/// What `gateway install` and `gateway remove` act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GatewayKind {
    /// OpenClaw with the Node it runs on (npm; ~840 MB).
    Openclaw,
    /// Portkey's open-source AI gateway with the Node it runs on (npm; ~130 MB).
    Portkey,
    /// The official OpenAI Python SDK in a virtualenv (python3), for the stream-shape check.
    #[value(name = "openai-sdk")]
    OpenaiSdk,
    /// The LiteLLM proxy (`litellm[proxy]` and prometheus_client) in a virtualenv (python3;
    /// ~760 MB).
    Litellm,
}

/// Flags of `gateway install`.
#[derive(Debug, Clone, Args)]
pub struct GatewayInstallArgs {
    /// What to install.
    #[arg(value_enum)]
    pub kind: GatewayKind,
    /// The version (default: the pinned one; `gateway list` shows the pins).
    #[arg(value_name = "VERSION")]
    pub release: Option<String>,
}

/// Flags of `gateway remove`.
#[derive(Debug, Clone, Args)]
pub struct GatewayRemoveArgs {
    /// What to remove.
    #[arg(value_enum)]
    pub kind: GatewayKind,
    /// The version to remove (required when several are installed).
    #[arg(value_name = "VERSION")]
    pub release: Option<String>,
}

/// Flags of `rehearse doctor`.
#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Only these scenarios (NAME|PATH, repeatable): exit 2 when a program one needs is missing.
    #[arg(long = "scenario", value_name = "NAME|PATH")]
    pub scenarios: Vec<String>,
    /// The user's scenario directory, looked at beside the built-in scenarios.
    #[arg(long, value_name = "DIR", env = "REHEARSE_SCENARIOS")]
    pub scenarios_dir: Option<PathBuf>,
}
