//! `kind = "slow_stream"`: tokens (or pieces of a JSON body) dribble at `token_interval`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, InvalidFault, RouteKind, check_nonzero};

/// Attributes of a `slow_stream` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowStreamFault {
    /// Gap between tokens (divided by the speed factor).
    #[serde(with = "humantime_serde")]
    pub token_interval: Duration,
}

impl Fault for SlowStreamFault {
    fn name(&self) -> &'static str {
        "slow_stream"
    }

    fn applies_to(&self, route: RouteKind) -> bool {
        route != RouteKind::Ws
    }

    fn validate(&self) -> Result<(), InvalidFault> {
        check_nonzero("token_interval", self.token_interval)
    }

    fn action(&self, ctx: &mut ActionCtx<'_>) -> Action {
        Action::SlowStream(ctx.scale(self.token_interval))
    }
}
