//! Traffic format, pacer, replayer and recording proxy (DESIGN section 6). Not built yet.

mod cmd;
pub use cmd::{record_command, replay_command};
