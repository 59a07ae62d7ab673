//! launchd LaunchAgent plists and launchctl (DESIGN section 10). Not built yet.

mod cmd;
pub use cmd::command;
