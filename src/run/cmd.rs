//! `rehearse run` / `rehearse --scenario` — TEMPORARY stub until the breaker, upstream, verdict
//! and schedule pieces land (the real edge is in `cmd_full.rs`, not yet compiled).

use crate::cli::RunArgs;
use crate::exit::{CmdError, CmdResult};

/// Runs `rehearse run`.
pub fn command(args: RunArgs) -> CmdResult {
    let _plan = super::plan::build(&args).map_err(CmdError::bad_input)?;
    Err(CmdError::harness(anyhow::anyhow!(
        "`rehearse run` is not wired up yet"
    )))
}
