//! `kind = "stall"`: the request is read, the headers never come (TTFB timeout on the client).

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault};

/// A `stall` fault has no attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StallFault {}

impl Fault for StallFault {
    fn name(&self) -> &'static str {
        "stall"
    }

    fn answers_over_http(&self) -> bool {
        false
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        Action::Stall
    }
}
