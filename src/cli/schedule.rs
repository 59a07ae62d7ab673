//! Flags of `rehearse schedule` (print, install, uninstall, status a launchd LaunchAgent) and
//! the defaults its plists use: the label, its prefixes, how many runs are kept.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `rehearse schedule ACTION [options]`.
#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    /// print | install | uninstall | status
    #[command(subcommand)]
    pub action: ScheduleAction,
}

/// The actions of `rehearse schedule`, each with only the flags it takes.
#[derive(Debug, Clone, Subcommand)]
pub enum ScheduleAction {
    /// Write the plist to stdout.
    Print(SchedulePlanArgs),
    /// Write the plist and load it with launchctl.
    Install(ScheduleInstallArgs),
    /// Unload it and remove the file.
    Uninstall(ScheduleFileArgs),
    /// Summarise `launchctl print`.
    Status(ScheduleFileArgs),
}

/// What the LaunchAgent runs and when (`schedule print` and `install`).
#[derive(Debug, Clone, Args)]
pub struct SchedulePlanArgs {
    /// Scenarios the scheduled run executes (repeatable); each must resolve now, as
    /// `--scenario` does, and goes into the plist as an absolute path (a built-in as
    /// `builtin:NAME`: the scheduled binary's own).
    #[arg(long = "scenario", value_name = "NAME|PATH")]
    pub scenarios: Vec<String>,
    /// The user's scenario directory a NAME is looked up in before the built-in scenarios.
    #[arg(long, value_name = "DIR", env = "REHEARSE_SCENARIOS")]
    pub scenarios_dir: Option<PathBuf>,
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
    #[arg(long, default_value = DEFAULT_LABEL)]
    pub label: String,
    /// Report directory passed to the scheduled run (default: WORKING_DIR/reports).
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Path of the program the plist runs, made absolute; must exist and be executable
    /// (default: this binary).
    #[arg(long, value_name = "PATH")]
    pub program: Option<PathBuf>,
    /// Working directory of the scheduled run, made absolute; must exist (default: the current
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub working_dir: Option<PathBuf>,
    /// Retention passed to the scheduled run: keep the last N finished runs per scenario.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_KEEP,
          value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "keep_all")]
    pub keep: u32,
    /// Pass no `--keep` to the scheduled run: never remove old runs.
    #[arg(long)]
    pub keep_all: bool,
    /// `--textfile-dir` passed to the scheduled run (made absolute).
    #[arg(long, value_name = "DIR")]
    pub textfile_dir: Option<PathBuf>,
    /// `--pushgateway` passed to the scheduled run.
    #[arg(long, value_name = "URL")]
    pub pushgateway: Option<String>,
    /// `--on-fail` passed to the scheduled run.
    #[arg(long, value_name = "CMD")]
    pub on_fail: Option<String>,
}

/// The default LaunchAgent label.
pub const DEFAULT_LABEL: &str = "dev.rehearse.weekly";
/// The prefix of our labels: `dev.rehearse.NAME`.
pub const LABEL_PREFIX: &str = "dev.rehearse.";
/// The prefix of the labels of earlier versions: `ai.openclaw.rehearse.NAME`, a domain not ours;
/// `schedule install` replaces such an agent.
pub const OLD_LABEL_PREFIX: &str = "ai.openclaw.rehearse.";
/// Runs the scheduled job keeps by default (a quarter of weekly runs).
pub const DEFAULT_KEEP: u32 = 12;

/// Where the plist file lives and whether to call launchctl.
#[derive(Debug, Clone, Args)]
pub struct ScheduleFileArgs {
    /// The LaunchAgent's label.
    #[arg(long, default_value = DEFAULT_LABEL)]
    pub label: String,
    /// Directory of the plist file (default ~/Library/LaunchAgents).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Write or remove the file only; do not call launchctl.
    #[arg(long)]
    pub no_load: bool,
}

/// Flags of `schedule install`: the plan and where the file goes.
#[derive(Debug, Clone, Args)]
pub struct ScheduleInstallArgs {
    /// What runs and when.
    #[command(flatten)]
    pub plan: SchedulePlanArgs,
    /// Directory to write the plist to (default ~/Library/LaunchAgents).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Write the file (and create the log directory) only; do not call launchctl.
    #[arg(long)]
    pub no_load: bool,
}

impl ScheduleInstallArgs {
    /// The file flags (label, dir, no-load) of this install.
    pub fn file(&self) -> ScheduleFileArgs {
        ScheduleFileArgs {
            label: self.plan.label.clone(),
            dir: self.dir.clone(),
            no_load: self.no_load,
        }
    }
}
