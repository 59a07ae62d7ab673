//! The scenario file format (docs/scenario.md), scenario name resolution (docs/cli.md: the
//! user's directories, then the built-ins),
//! semantic validation (errors located at file:line:col, see [`locate`]) and the `rehearse list` / `rehearse validate` commands.

mod cmd;
pub mod digest;
pub(crate) mod list;
pub(crate) mod field;
pub(crate) mod fleet;
pub(crate) mod format;
pub mod gateway;
pub(crate) mod locate;
pub(crate) mod prometheus;
pub mod resolve;
pub(crate) mod target;
pub mod validate;
mod validate_drift;
mod validate_alerts;
mod validate_reach;
mod validate_target;

pub(crate) use cmd::validate_command;
pub(crate) use list::list_command;
pub use format::{ScenarioError, ScenarioFile};
