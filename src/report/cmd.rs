//! `rehearse report RUN_DIR`.

use crate::cli::ReportArgs;
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse report`.
pub fn command(_args: ReportArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse report` is not implemented yet"
    )))
}
