//! `kind = "stall_stream"`: the body or token stream stops after `after_fraction` and the
//! connection stays open (the client's inter-token timeout must fire). `cut` as for
//! `reset_mid_stream`: `frame` (default), `mid_frame`, or `no_terminal` (a clean end, no silence).

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, CutAt, CutMode, Fault, InvalidFault, RouteKind, check_fraction};

/// Attributes of a `stall_stream` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StallStreamFault {
    /// Fraction (0..=1) of the body or tokens sent before the silence.
    pub after_fraction: f64,
    /// Where the cut falls: `frame` (default), `mid_frame` or `no_terminal` (see [`CutAt`]).
    #[serde(default, skip_serializing_if = "CutAt::is_frame")]
    pub cut: CutAt,
}

impl Fault for StallStreamFault {
    fn name(&self) -> &'static str {
        "stall_stream"
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
            mode: CutMode::Stall,
            at: self.cut,
        }
    }
}
