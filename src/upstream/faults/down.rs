//! `kind = "down"`: only for `route = "coordinator"` (fleet mode) — the run stops the real
//! redis-server at `from` and starts it again, empty, at `until`. The mock upstream never
//! applies it.

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, RouteKind};

/// A `down` fault has no attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DownFault {}

impl Fault for DownFault {
    fn name(&self) -> &'static str {
        "down"
    }

    fn answers_over_http(&self) -> bool {
        false
    }

    fn applies_to(&self, _route: RouteKind) -> bool {
        false
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        // Never selected: the coordinator route matches no upstream request.
        Action::Reset
    }
}
