//! `rehearse list` and `rehearse validate`.

use crate::cli::{ListArgs, ValidateArgs};
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse list`.
pub fn list_command(_args: ListArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse list` is not implemented yet"
    )))
}

/// Runs `rehearse validate`.
pub fn validate_command(_args: ValidateArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse validate` is not implemented yet"
    )))
}
