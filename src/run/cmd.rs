//! `rehearse run` / `rehearse --scenario`.

use crate::cli::RunArgs;
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse run`.
pub fn command(_args: RunArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse run` is not implemented yet"
    )))
}
