//! The scenario file format (docs/scenario.md), scenario name resolution (docs/cli.md: the
//! user's directories, then the built-ins), semantic validation (errors located at
//! file:line:col, see [`locate`]), the target-neutral `[models]` ([`models`]), a `--target FILE`
//! in place of the scenario's `[target]` ([`target_file`]) and the `rehearse list` command (`rehearse validate` is
//! [`crate::validate`]: the run's preflight).

pub mod digest;
pub(crate) mod list;
pub(crate) mod field;
pub(crate) mod fleet;
pub(crate) mod format;
pub mod gateway;
pub(crate) mod gateway_setup;
pub(crate) mod locate;
pub(crate) mod models;
pub(crate) mod prometheus;
pub mod resolve;
pub(crate) mod target;
pub mod target_file;
pub mod validate;
pub(crate) mod validate_metrics;
mod validate_drift;
mod validate_alerts;
mod validate_anchors;
mod validate_gateway;
mod validate_reach;
mod validate_target;

pub(crate) use list::list_command;
pub use format::{ScenarioError, ScenarioFile};
