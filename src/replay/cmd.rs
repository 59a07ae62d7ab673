//! `rehearse replay` and `rehearse record`.

use crate::cli::{RecordArgs, ReplayArgs};
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse replay`.
pub fn replay_command(_args: ReplayArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse replay` is not implemented yet"
    )))
}

/// Runs `rehearse record`.
pub fn record_command(_args: RecordArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse record` is not implemented yet"
    )))
}
