//! `kind = "stall_stream"`: the body or token stream stops after `after_fraction` and the
//! connection stays open (the client's inter-token timeout must fire). `cut` as for
//! `reset_mid_stream`: `frame` (default), `mid_frame`, or `no_terminal` (a clean end, no silence).
//! With `resume_after = "D"` the silence ends after D and the stream resumes where it stopped and
//! completes normally (the 30 s stall that then resumes); `no_terminal` takes no `resume_after`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{
    Action, ActionCtx, CutAt, CutMode, Fault, InvalidFault, RouteKind, check_fraction,
    check_nonzero,
};

/// Attributes of a `stall_stream` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StallStreamFault {
    /// Fraction (0..=1) of the body or tokens sent before the silence.
    pub after_fraction: f64,
    /// Where the cut falls: `frame` (default), `mid_frame` or `no_terminal` (see [`CutAt`]).
    #[serde(default, skip_serializing_if = "CutAt::is_frame")]
    pub cut: CutAt,
    /// The silence lasts this long, then the rest follows (divided by the speed factor).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub resume_after: Option<Duration>,
}

impl Fault for StallStreamFault {
    fn name(&self) -> &'static str {
        "stall_stream"
    }

    fn applies_to(&self, route: RouteKind) -> bool {
        route != RouteKind::Ws
    }

    fn validate(&self) -> Result<(), InvalidFault> {
        check_fraction("after_fraction", self.after_fraction)?;
        if let Some(d) = self.resume_after {
            check_nonzero("resume_after", d)?;
            if self.cut == CutAt::NoTerminal {
                return Err(InvalidFault(
                    "`resume_after` cannot follow `cut = \"no_terminal\"` (that cut ends the body)"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    fn action(&self, ctx: &mut ActionCtx<'_>) -> Action {
        match self.resume_after {
            Some(d) => Action::Pause {
                after_fraction: self.after_fraction,
                at: self.cut,
                resume: ctx.scale(d),
            },
            None => Action::Cut {
                after_fraction: self.after_fraction,
                mode: CutMode::Stall,
                at: self.cut,
            },
        }
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
    fn resume_after_pauses_then_resumes_scaled_and_is_refused_with_no_terminal() {
        let specs = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\nresume_after='30s'\n",
            "f",
        )
        .unwrap();
        let FaultKind::StallStream(f) = &specs[0].kind else { panic!() };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut ctx = ActionCtx { speed: sp(10.0), wall_now: std::time::UNIX_EPOCH, rng: &mut rng };
        assert_eq!(
            f.action(&mut ctx),
            Action::Pause { after_fraction: 0.5, at: CutAt::Frame, resume: Duration::from_secs(3) }
        );
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\ncut='no_terminal'\nresume_after='1s'\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("`resume_after` cannot follow"), "{e}");
        assert_eq!((e.line, e.col), (Some(6), Some(1)), "{e}");
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\nresume_after='0s'\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("`resume_after` must be greater than 0"), "{e}");
        // Without it, the silence lasts.
        let specs =
            parse_fault_file("[[fault]]\nroute='llm'\nkind='stall_stream'\nafter_fraction=0.5\n", "f")
                .unwrap();
        let FaultKind::StallStream(f) = &specs[0].kind else { panic!() };
        assert!(matches!(f.action(&mut ctx), Action::Cut { mode: CutMode::Stall, .. }));
    }
}
