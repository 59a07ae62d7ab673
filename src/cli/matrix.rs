//! Flags of `rehearse matrix FILE` (the scorecard, docs/matrix.md) and its exit codes.

use std::path::PathBuf;

use clap::Args;

/// `rehearse matrix`'s exit codes.
pub const MATRIX_EXIT_CODES: &str = "\
Exit codes:
  0  every cell is what the matrix file expects of it
  1  a cell is not (a failure the file does not expect, a flaky cell without flaky_ok, ...)
  2  bad usage or a bad matrix file (named with line and column)
  3  the matrix was stopped (SIGINT/SIGTERM) or its scorecard could not be written";

/// Flags of `rehearse matrix`.
#[derive(Debug, Clone, Args)]
pub struct MatrixArgs {
    /// The matrix file (TOML: cases, targets, repeats, speed, what each cell is expected to be).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Most runs at once: runs that share no port or gateway and are not judged on timing
    /// tighter than 1 s of wall time may overlap up to N.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub jobs: u32,
    /// Most runs starting at once, of the --jobs: a run is starting from its launch until its
    /// clock starts (a real gateway's boot and warm-up, the CPU-heavy part of its run), so
    /// the runs being judged share the machine with at most N start-ups. Default: the number
    /// of CPUs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub starts: Option<u32>,
    /// Where the scorecard and every run's report dir go (default:
    /// reports/matrix-STAMP-NAME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the per-cell batch-job series to DIR/rehearse_matrix.prom (atomically; other
    /// matrices' series are kept).
    #[arg(long, value_name = "DIR")]
    pub textfile_dir: Option<PathBuf>,
    /// A run still going after this is stopped (SIGTERM, then SIGKILL after 60 s).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = humantime::parse_duration)]
    pub cell_timeout: std::time::Duration,
    /// The user's scenario directory a case NAME is looked up in before the built-ins.
    #[arg(long, value_name = "DIR", env = "REHEARSE_SCENARIOS")]
    pub scenarios_dir: Option<PathBuf>,
}
