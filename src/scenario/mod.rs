//! The scenario file format (DESIGN section 4) and `rehearse list` / `rehearse validate`. Not built yet.

mod cmd;
pub use cmd::{list_command, validate_command};
