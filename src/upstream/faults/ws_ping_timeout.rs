//! `kind = "ws_ping_timeout"`: the WebSocket handshake succeeds and TCP stays up, but no frame is
//! answered: pings get no pong and data is not echoed (a peer that stopped reading).

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, RouteKind};

/// A `ws_ping_timeout` fault has no attributes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WsPingTimeoutFault {}

impl Fault for WsPingTimeoutFault {
    fn name(&self) -> &'static str {
        "ws_ping_timeout"
    }

    fn answers_over_http(&self) -> bool {
        false
    }

    fn applies_to(&self, route: RouteKind) -> bool {
        route == RouteKind::Ws
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        Action::WsPingTimeout
    }
}
