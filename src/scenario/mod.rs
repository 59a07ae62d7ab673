//! The scenario file format (docs/scenario.md), scenario name resolution (docs/cli.md),
//! semantic validation (errors located at file:line:col, see [`locate`]) and the `rehearse list` / `rehearse validate` commands.

mod cmd;
pub mod field;
pub mod fleet;
pub mod format;
pub mod gateway;
pub mod locate;
pub mod resolve;
pub mod target;
pub mod validate;
mod validate_target;

pub use cmd::{list_command, validate_command};
pub use format::{ScenarioError, ScenarioFile};
