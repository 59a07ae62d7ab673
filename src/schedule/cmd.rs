//! `rehearse schedule`.

use crate::cli::ScheduleArgs;
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse schedule`.
pub fn command(_args: ScheduleArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse schedule` is not implemented yet"
    )))
}
