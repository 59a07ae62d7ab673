//! The scenario file format (DESIGN section 4), scenario name resolution (DESIGN section 3),
//! semantic validation (errors located at file:line:col, see [`locate`]) and the `rehearse list` / `rehearse validate` commands.

mod cmd;
pub mod format;
pub mod locate;
pub mod resolve;
pub mod validate;

pub use cmd::{list_command, validate_command};
pub use format::{ScenarioError, ScenarioFile};
