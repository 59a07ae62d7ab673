//! Raw command-line flags (clap derive), kept as close to what the user typed as possible.
//! Resolution into validated plans happens in the modules that own each command.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// `rehearse`: rehearse an agent gateway's failover and circuit-breaker behaviour.
#[derive(Debug, Parser)]
#[command(
    name = "rehearse",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// A subcommand; without one, `rehearse --scenario NAME` runs like `rehearse run`.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Flags of the implicit `run`.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Every subcommand of DESIGN section 3.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one or more scenarios (same as `rehearse --scenario ...`).
    Run(RunArgs),
    /// List the scenarios under fixtures/scenarios with their descriptions.
    List(ListArgs),
    /// Parse and check scenario, traffic and fault files without running anything.
    Validate(ValidateArgs),
    /// Serve the fault-injecting mock upstream.
    Upstream(UpstreamArgs),
    /// Replay a traffic file against a target at its recorded times.
    Replay(ReplayArgs),
    /// Record traffic through a reverse proxy into the traffic format.
    Record(RecordArgs),
    /// Print, install, uninstall or inspect the launchd LaunchAgent.
    Schedule(ScheduleArgs),
    /// Re-render report.md and report.html from a run's report.json.
    Report(ReportArgs),
}

/// Flags of `rehearse run` (and of the bare `rehearse --scenario`).
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// Scenario NAME (fixtures/scenarios/NAME.toml) or PATH; repeat for a suite.
    #[arg(long = "scenario", value_name = "NAME|PATH")]
    pub scenarios: Vec<String>,
    /// Divide every duration by F (traffic, faults, engine timers, expectations), 0.01 to 100
    /// (default 1; the weekly job runs at 1).
    #[arg(long, value_name = "F", value_parser = crate::util::speed::parse)]
    pub speed: Option<f64>,
    /// Seed for every random choice (overrides the scenario's seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Where run directories are created (default: reports/).
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Failover policy to run (repeat for an A/B run); overrides the scenario's `policies`.
    #[arg(long = "policy", value_name = "P")]
    pub policies: Vec<String>,
    /// Plain progress lines even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
}

/// Flags of `rehearse list`.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Directory to list (default: fixtures/scenarios).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Flags of `rehearse validate`.
#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    /// Scenario (.toml), traffic (.jsonl) or fault files.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Flags of `rehearse upstream`.
#[derive(Debug, Clone, Args)]
pub struct UpstreamArgs {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    #[arg(long, value_name = "ADDR")]
    pub listen: SocketAddr,
    /// A TOML or JSON file of `[[fault]]` tables.
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// Seed of the fault RNG (probability scoping, jitter).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// Allow binding an address other than loopback.
    #[arg(long)]
    pub allow_non_loopback: bool,
}

/// Flags of `rehearse replay`.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// The traffic file (JSONL, sorted by at_ms).
    #[arg(long, value_name = "FILE")]
    pub traffic: PathBuf,
    /// Base URL of the target (the mock upstream or a gateway speaking its routes).
    #[arg(long, value_name = "URL")]
    pub target: String,
    /// Divide every offset by F, 0.01 to 100.
    #[arg(long, value_name = "F", default_value_t = 1.0, value_parser = crate::util::speed::parse)]
    pub speed: f64,
    /// Write per-request results as JSONL.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Most requests in flight at once; overflow is counted, never silently dropped.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_in_flight: usize,
}

/// Flags of `rehearse record`.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// Address the recording proxy listens on.
    #[arg(long, value_name = "ADDR")]
    pub listen: SocketAddr,
    /// Base URL requests are forwarded to.
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// The traffic file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Allow binding an address other than loopback.
    #[arg(long)]
    pub allow_non_loopback: bool,
}

/// `rehearse schedule ACTION [options]`.
#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    /// print | install | uninstall | status
    #[arg(value_enum)]
    pub action: ScheduleAction,
    /// Scenarios the scheduled run executes (repeatable).
    #[arg(long = "scenario", value_name = "NAME|PATH")]
    pub scenarios: Vec<String>,
    /// Day of week (0 and 7 = Sunday); repeat with --hour/--minute for several entries.
    #[arg(long, value_name = "0-7")]
    pub weekday: Vec<u8>,
    /// Hour of day (0-23).
    #[arg(long, value_name = "0-23")]
    pub hour: Vec<u8>,
    /// Minute (0-59).
    #[arg(long, value_name = "0-59")]
    pub minute: Vec<u8>,
    /// The LaunchAgent's label.
    #[arg(long, default_value = "ai.openclaw.rehearse.weekly")]
    pub label: String,
    /// Report directory passed to the scheduled run.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Directory to write the plist to (default ~/Library/LaunchAgents).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Write or remove the file only; do not call launchctl.
    #[arg(long)]
    pub no_load: bool,
    /// Absolute path of the program the plist runs (default: this binary).
    #[arg(long, value_name = "PATH")]
    pub program: Option<PathBuf>,
    /// Working directory of the scheduled run (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub working_dir: Option<PathBuf>,
}

/// The actions of `rehearse schedule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScheduleAction {
    /// Write the plist to stdout.
    Print,
    /// Write the plist and load it with launchctl.
    Install,
    /// Unload it and remove the file.
    Uninstall,
    /// Summarise `launchctl print`.
    Status,
}

/// Flags of `rehearse report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A run directory holding report.json.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
}
