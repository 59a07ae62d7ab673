//! The fault-injecting mock upstream (DESIGN section 5). Not built yet.

mod cmd;
pub use cmd::command;
