//! `kind = "first_token_delay"`: on a stream, the headers and the role chunk go out at once and
//! the first content token only `delay` later (then the rest at the usual interval): the late
//! first token a TTFB deadline on the headers cannot see. A request that does not stream (a JSON
//! completion, a tool call) gets its whole answer `delay` late, headers included.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, InvalidFault, RouteKind, check_nonzero};

/// Attributes of a `first_token_delay` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirstTokenDelayFault {
    /// From the role chunk to the first content token (divided by the speed factor).
    #[serde(with = "humantime_serde")]
    pub delay: Duration,
}

impl Fault for FirstTokenDelayFault {
    fn name(&self) -> &'static str {
        "first_token_delay"
    }

    fn applies_to(&self, route: RouteKind) -> bool {
        route != RouteKind::Ws
    }

    fn validate(&self) -> Result<(), InvalidFault> {
        check_nonzero("delay", self.delay)
    }

    fn action(&self, ctx: &mut ActionCtx<'_>) -> Action {
        Action::FirstToken(ctx.scale(self.delay))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::upstream::faults::{FaultKind, parse_fault_file};
    use crate::util::speed::sp;

    #[test]
    fn the_delay_parses_scales_with_speed_and_is_refused_at_zero_or_on_ws() {
        let specs =
            parse_fault_file("[[fault]]\nroute='llm'\nkind='first_token_delay'\ndelay='8s'\n", "f")
                .unwrap();
        let FaultKind::FirstTokenDelay(f) = &specs[0].kind else {
            panic!("{:?}", specs[0].kind)
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut ctx = ActionCtx {
            speed: sp(4.0),
            wall_now: std::time::UNIX_EPOCH,
            rng: &mut rng,
        };
        assert_eq!(f.action(&mut ctx), Action::FirstToken(Duration::from_secs(2)));
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='first_token_delay'\n\ndelay='0s'\n",
            "f.toml",
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "f.toml:5:1: fault kind `first_token_delay`: `delay` must be greater than 0");
        let e = parse_fault_file("[[fault]]\nroute='ws'\nkind='first_token_delay'\ndelay='1s'\n", "f.toml")
            .unwrap_err();
        assert!(e.message.contains("does not apply to route `ws`"), "{e}");
        let e = parse_fault_file("[[fault]]\nroute='llm'\nkind='first_token_delay'\n", "f.toml")
            .unwrap_err();
        assert!(e.message.contains("missing field `delay`"), "{e}");
    }
}
