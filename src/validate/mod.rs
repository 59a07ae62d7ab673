//! `rehearse validate` (docs/cli.md): the run's preflight without the run. A scenario is
//! checked by [`crate::rehearsal::plan::preflight`], the one function a run's plan checks every
//! scenario with, so whatever a run refuses before starting anything (exit 2) `validate`
//! refuses the same way; traffic and fault files are checked as the run reads them.

mod cmd;

pub(crate) use cmd::command;
