//! `kind = "ws_close"`: right after the handshake the server sends a close frame with `code`.

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, InvalidFault, RouteKind};

/// Attributes of a `ws_close` fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WsCloseFault {
    /// The close code (1000..=4999, not the reserved 1004-1006 and 1015).
    pub code: u16,
}

impl Fault for WsCloseFault {
    fn name(&self) -> &'static str {
        "ws_close"
    }

    fn answers_over_http(&self) -> bool {
        false
    }

    fn applies_to(&self, route: RouteKind) -> bool {
        route == RouteKind::Ws
    }

    fn validate(&self) -> Result<(), InvalidFault> {
        let ok = (1000..=4999).contains(&self.code) && !matches!(self.code, 1004..=1006 | 1015);
        if ok {
            Ok(())
        } else {
            Err(InvalidFault(format!(
                "`code` must be a sendable close code (1000..=4999, not 1004-1006 or 1015), got {}",
                self.code
            )))
        }
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        Action::WsClose(self.code)
    }
}
