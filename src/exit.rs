//! The exit-code contract shared by every command (docs/cli.md):
//! 0 pass · 1 the rehearsal ran and an expectation failed · 2 bad usage or bad input ·
//! 3 the harness itself failed (port, I/O, upstream crashed, interrupted).

use std::process::ExitCode;

/// What a command that ran to completion concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Everything expected was observed (exit 0).
    Pass,
    /// The rehearsal ran and at least one expectation failed (exit 1).
    Fail,
    /// The run was stopped early (signal) and wrote an `incomplete` report (exit 3).
    Incomplete,
}

/// Why a command could not do its job. Carries the exit code it maps to.
#[derive(Debug)]
pub struct CmdError {
    /// 2 for bad usage or input, 3 for a failure of the harness itself.
    pub code: u8,
    /// The error chain, printed with `{:#}`.
    pub error: anyhow::Error,
}

impl CmdError {
    /// Bad usage or bad input (exit 2): the message must name the file, line and column.
    pub fn bad_input(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: 2,
            error: error.into(),
        }
    }

    /// The harness itself failed (exit 3).
    pub fn harness(error: impl Into<anyhow::Error>) -> Self {
        Self {
            code: 3,
            error: error.into(),
        }
    }

    /// The harness itself failed (exit 3), said in words (a run's `error` reason).
    pub fn harness_said(why: &str) -> Self {
        Self::harness(anyhow::anyhow!("{why}"))
    }
}

/// A server that could not listen: exit 2 for a refused flag, 3 when the machine refused.
impl From<crate::util::listen::ListenError> for CmdError {
    fn from(e: crate::util::listen::ListenError) -> Self {
        if e.is_usage() {
            CmdError::bad_input(e)
        } else {
            CmdError::harness(e)
        }
    }
}

/// The result every command handler returns.
pub type CmdResult = Result<Status, CmdError>;

/// Maps a command result to the process exit code, printing errors as `error: {:#}` on stderr.
pub fn to_exit_code(result: CmdResult) -> ExitCode {
    match result {
        Ok(Status::Pass) => ExitCode::from(0),
        Ok(Status::Fail) => ExitCode::from(1),
        Ok(Status::Incomplete) => ExitCode::from(3),
        Err(e) => {
            crate::errln!("error: {:#}", e.error);
            ExitCode::from(e.code)
        }
    }
}
