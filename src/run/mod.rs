//! The in-process rehearsal (`rehearse run`). Not built yet.

mod cmd;
pub use cmd::command;
