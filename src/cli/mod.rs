//! Raw command-line flags (clap derive), kept as close to what the user typed as possible.
//! Resolution into validated plans happens in the modules that own each command. Beside the
//! run's and the one-screen commands' flags here: `setup.rs` (init, gateway, doctor),
//! `schedule.rs` (`rehearse schedule` and its launchd defaults), `matrix.rs` (`rehearse matrix`).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::util::speed::Speed;

mod matrix;
mod schedule;
mod setup;
pub use matrix::*;
pub use schedule::*;
pub use setup::*;

/// The exit-code contract (see [`crate::exit`]), shown under `--help` of every command whose
/// exit code carries a verdict.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  pass: every expectation held
  1  the rehearsal ran and an expectation failed
  2  bad usage or bad input (the file is named, with line and column where the format has them)
  3  the harness itself failed (port, I/O, upstream crashed) or the run was interrupted";

/// `rehearse --version`: the crate's version and the commit it was built from (build.rs).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("REHEARSE_COMMIT"),
    ")"
);

/// `rehearse`: rehearse an agent gateway's failover and circuit-breaker behaviour.
#[derive(Debug, Parser)]
#[command(
    name = "rehearse",
    version = VERSION,
    propagate_version = true,
    about,
    after_help = EXIT_CODES,
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

/// Every subcommand of docs/cli.md.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one or more scenarios (same as `rehearse --scenario ...`).
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// List the built-in scenarios and the user's, with their descriptions.
    List(ListArgs),
    /// Parse and check scenario, traffic and fault files without running anything.
    #[command(after_help = EXIT_CODES)]
    Validate(ValidateArgs),
    /// Serve the fault-injecting mock upstream.
    Upstream(UpstreamArgs),
    /// Replay a traffic file against a target at its recorded times.
    Replay(ReplayArgs),
    /// Record traffic through a reverse proxy into the traffic format.
    Record(RecordArgs),
    /// Print, install, uninstall or inspect the launchd LaunchAgent.
    Schedule(ScheduleArgs),
    /// Print the shipped alerting rules, example Alertmanager config or Grafana dashboard.
    Monitoring(MonitoringArgs),
    /// Re-render report.md, report.html and report.junit.xml from a run's report.json; exits
    /// with the report's verdict.
    #[command(after_help = EXIT_CODES)]
    Report(ReportArgs),
    /// List every run under the report dir with its key figures; writes index.html and index.md
    /// there.
    #[command(after_help = EXIT_CODES)]
    History(HistoryArgs),
    /// Two runs' key figures and expectations side by side, with what changed.
    #[command(after_help = EXIT_CODES)]
    Compare(CompareArgs),
    /// Every case of a matrix file against every target it names, repeated: scorecard.json,
    /// .md and .html (docs/matrix.md).
    #[command(after_help = MATRIX_EXIT_CODES)]
    Matrix(MatrixArgs),
    /// Write a starter project: a scenario for a gateway, its traffic, a README.
    #[command(after_help = EXIT_CODES)]
    Init(InitArgs),
    /// Install, list or remove the gateways (and the OpenAI SDK) a run may use, in the cache.
    #[command(after_help = EXIT_CODES)]
    Gateway(GatewayArgs),
    /// What a run may need from PATH, with versions, and which scenarios need which.
    #[command(after_help = EXIT_CODES)]
    Doctor(DoctorArgs),
    /// One host of a fleet run (started by the run itself; not for direct use).
    #[command(name = "__fleet-host", hide = true)]
    FleetHost(FleetHostArgs),
    /// Stops a program the run started if the run dies (started by the run; not for direct use).
    #[command(name = "__watchdog", hide = true)]
    Watchdog(WatchdogArgs),
}

/// Flags of the hidden `__watchdog`.
#[derive(Debug, Clone, Args)]
pub struct WatchdogArgs {
    /// The program's pid.
    #[arg(long)]
    pub pid: u32,
    /// Stop its whole process group (the pid is the group's leader).
    #[arg(long)]
    pub group: bool,
}

/// Flags of the hidden `__fleet-host`.
#[derive(Debug, Clone, Args)]
pub struct FleetHostArgs {
    /// The host's spec (JSON, written by the fleet run).
    #[arg(long, value_name = "FILE")]
    pub spec: PathBuf,
}

/// Flags of `rehearse run` (and of the bare `rehearse --scenario`).
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    /// Scenario NAME or PATH; repeat for a suite. A NAME is DIR/NAME.toml of the user's
    /// scenario directory (`--scenarios-dir`, else ./scenarios, ./fixtures/scenarios), else
    /// the built-in of that name; `builtin:NAME` is always the built-in (`rehearse list`).
    #[arg(long = "scenario", value_name = "NAME|PATH")]
    pub scenarios: Vec<String>,
    /// The user's scenario directory, looked at before the built-in scenarios (instead of
    /// ./scenarios and ./fixtures/scenarios).
    #[arg(long, value_name = "DIR", env = "REHEARSE_SCENARIOS")]
    pub scenarios_dir: Option<PathBuf>,
    /// A file holding a `[target]` table (and optionally `[upstream]`) that replaces every
    /// scenario's own: the same scenario against the embedded engine, OpenClaw or a gateway by
    /// URL (docs/scenario.md, "A target of its own"). Repeat it to run each scenario against
    /// every file side by side, one arm per target in one report (its verdict the worst arm's).
    #[arg(long = "target", value_name = "FILE")]
    pub targets: Vec<PathBuf>,
    /// Divide every duration by F (traffic, faults, engine timers, expectations), 0.01 to 100
    /// (the weekly job runs at 1).
    #[arg(long, value_name = "F", default_value = "1", value_parser = crate::util::speed::parse)]
    pub speed: Option<Speed>,
    /// Seed for every random choice (overrides the scenario's seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Where run directories are created (default: ./reports, or ~/rehearse/reports when the
    /// working directory cannot be written, said on stderr).
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Failover policy to run (repeat for an A/B run); overrides the scenario's `policies`.
    #[arg(long = "policy", value_name = "P", value_enum)]
    pub policies: Vec<PolicyArg>,
    /// Gateway version to run (repeat to run versions side by side, one arm each); overrides
    /// the scenario's `[target] versions` (an `openclaw`, `litellm` or `portkey` target). Each
    /// is found at `$REHEARSE_<GATEWAY>_<VERSION>` or in the cache (`rehearse gateway install
    /// openclaw VERSION`, `scripts/install-litellm.sh VERSION`, `scripts/install-portkey.sh VERSION`).
    #[arg(long = "gateway-version", value_name = "V")]
    pub gateway_versions: Vec<String>,
    /// Plain progress lines even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// After the report is written, keep the last N finished run directories of this scenario
    /// (of this set of scenarios for a suite) under the report directory and remove older ones
    /// that rehearse created; a run that never finished goes once N newer ones finished.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub keep: Option<u32>,
    /// Write the batch-job series (last run, last success, verdict, expectations) to
    /// DIR/rehearse.prom for node_exporter's textfile collector (atomically; other scenarios'
    /// series are kept).
    #[arg(long, value_name = "DIR")]
    pub textfile_dir: Option<PathBuf>,
    /// Push the same series to a Pushgateway (job `rehearse`, grouping key `scenario`); a failed
    /// push is a warning, never a verdict.
    #[arg(long, value_name = "URL")]
    pub pushgateway: Option<String>,
    /// Run CMD (with /bin/sh) when the run fails, is incomplete or errors: the report's path is
    /// $1 and REHEARSE_REPORT, with REHEARSE_VERDICT and REHEARSE_SCENARIO set.
    #[arg(long, value_name = "CMD")]
    pub on_fail: Option<String>,
}

/// The `--policy` values (the engine's `Policy`, named as in scenario files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PolicyArg {
    /// Reason-aware retry gate (the default): a timeout retries the same profile first.
    #[value(name = "retry-gate")]
    RetryGate,
    /// The old behaviour: every timeout cools the profile and rotates.
    Legacy,
}

/// Flags of `rehearse list`.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// The user's scenario directory, listed beside the built-in scenarios (instead of
    /// ./scenarios and ./fixtures/scenarios).
    #[arg(
        long,
        visible_alias = "dir",
        value_name = "DIR",
        env = "REHEARSE_SCENARIOS"
    )]
    pub scenarios_dir: Option<PathBuf>,
}

/// Flags of `rehearse validate`: a scenario is checked as `rehearse run` with the same flags
/// would check it before starting anything (the run's own preflight).
#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    /// Scenario (.toml), traffic (.jsonl) or fault files; a bare scenario NAME (or
    /// `builtin:NAME`) resolves as `--scenario NAME` does.
    #[arg(required = true, value_name = "NAME|PATH")]
    pub paths: Vec<PathBuf>,
    /// Check scenarios for a run against this target file (as `run --target FILE`).
    #[arg(long = "target", value_name = "FILE")]
    pub targets: Vec<PathBuf>,
    /// Check scenarios for a run at this speed (as `run --speed F`).
    #[arg(long, value_name = "F", default_value = "1", value_parser = crate::util::speed::parse)]
    pub speed: Option<Speed>,
    /// Check scenarios for a run of these policies (as `run --policy P`).
    #[arg(long = "policy", value_name = "P", value_enum)]
    pub policies: Vec<PolicyArg>,
    /// Check scenarios for a run of these gateway versions (as `run --gateway-version V`).
    #[arg(long = "gateway-version", value_name = "V")]
    pub gateway_versions: Vec<String>,
    /// The user's scenario directory a NAME is looked up in before the built-in scenarios.
    #[arg(long, value_name = "DIR", env = "REHEARSE_SCENARIOS")]
    pub scenarios_dir: Option<PathBuf>,
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
    /// Append every request to FILE as JSONL: wall time, route, model, profile fingerprint
    /// (never the token) and the fault applied.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Print one line per request on stderr.
    #[arg(short, long)]
    pub verbose: bool,
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
    #[arg(long, value_name = "F", default_value = "1", value_parser = crate::util::speed::parse)]
    pub speed: Speed,
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

/// `rehearse monitoring rules|alertmanager|dashboard` (docs/alerts.md).
#[derive(Debug, Clone, Args)]
pub struct MonitoringArgs {
    /// rules | alertmanager | dashboard
    #[command(subcommand)]
    pub action: MonitoringAction,
}

/// What `rehearse monitoring` prints to stdout.
#[derive(Debug, Clone, Subcommand)]
pub enum MonitoringAction {
    /// The Prometheus alerting rules over the engine's series and the weekly job's.
    Rules(MonitoringRulesArgs),
    /// An example Alertmanager config routing them to a webhook receiver.
    Alertmanager,
    /// The Grafana dashboard (JSON).
    Dashboard,
}

/// Flags of `rehearse monitoring rules`.
#[derive(Debug, Clone, Args)]
pub struct MonitoringRulesArgs {
    /// Where your users read this project's docs: every `runbook_url`
    /// (`docs/alerts.md#ALERT`) is prefixed with it.
    #[arg(long, value_name = "URL")]
    pub runbook_base: Option<String>,
}

/// Flags of `rehearse report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// A run directory holding report.json.
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
}

/// Flags of `rehearse history`.
#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// The report dir the runs were written under.
    #[arg(long, value_name = "DIR", default_value = "reports")]
    pub report_dir: PathBuf,
    /// Only this scenario's runs.
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// Print the listing as JSON (for scripts) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Flags of `rehearse compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// The earlier run's directory (holding report.json).
    #[arg(value_name = "RUN_A")]
    pub run_a: PathBuf,
    /// The later run's directory.
    #[arg(value_name = "RUN_B")]
    pub run_b: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}
