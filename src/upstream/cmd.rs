//! `rehearse upstream`.

use crate::cli::UpstreamArgs;
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse upstream`.
pub fn command(_args: UpstreamArgs) -> CmdResult {
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse upstream` is not implemented yet"
    )))
}
