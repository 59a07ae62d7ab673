//! `kind = "reset"`: a TCP RST before any response byte (zero linger, then close).

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault};

/// A `reset` fault has no attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetFault {}

impl Fault for ResetFault {
    fn name(&self) -> &'static str {
        "reset"
    }

    fn answers_over_http(&self) -> bool {
        false
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        Action::Reset
    }
}
