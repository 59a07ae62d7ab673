//! The in-process rehearsal (`rehearse run`). Not built yet.

mod cmd;
pub mod lock;
pub use cmd::command;
