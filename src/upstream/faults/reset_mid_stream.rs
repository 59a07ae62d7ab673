//! `kind = "reset_mid_stream"`: headers and `after_fraction` of the body or SSE tokens, then RST.
//! `cut` says where the cut falls: on an event boundary (`frame`, the default), inside an event
//! (`mid_frame`), or as a clean end with the terminal chunk and `[DONE]` left out
//! (`no_terminal`, no RST).

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, CutAt, CutMode, Fault, InvalidFault, RouteKind, check_fraction};

/// Attributes of a `reset_mid_stream` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetMidStreamFault {
    /// Fraction (0..=1) of the body or tokens sent before the reset.
    pub after_fraction: f64,
    /// Where the cut falls: `frame` (default), `mid_frame` or `no_terminal` (see [`CutAt`]).
    #[serde(default, skip_serializing_if = "CutAt::is_frame")]
    pub cut: CutAt,
}

impl Fault for ResetMidStreamFault {
    fn name(&self) -> &'static str {
        "reset_mid_stream"
    }

    fn applies_to(&self, route: RouteKind) -> bool {
        route != RouteKind::Ws
    }

    fn validate(&self) -> Result<(), InvalidFault> {
        check_fraction("after_fraction", self.after_fraction)
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        Action::Cut {
            after_fraction: self.after_fraction,
            mode: CutMode::Reset,
            at: self.cut,
        }
    }
}
