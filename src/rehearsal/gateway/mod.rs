//! A gateway as the system under test (`[target] kind = "openclaw" | "http"`): its room of the
//! pipeline. The gateway itself — finding its install, its config, its keys, starting it
//! sandboxed, its turns, its decisions and state, stopping it by pid — is
//! [`crate::gateway`]; this room is what a run does with it.
//!
//! # Layout (the same roles as `embedded/` and `fleet/`)
//! - `arms`: the entry — one run of the target, or OpenClaw versions side by side, one arm
//!   each.
//! - `run`: one arm on the arm lifecycle ([`crate::rehearsal::arm`]): upstream, start,
//!   warm-up, turns, stop.
//! - `start`: the system under test started against the arm's upstream (an OpenClaw the
//!   harness starts, or the user's by URL); `http`: an `http` target's token, provider block
//!   to paste and health path; `user_config`: `[target] config` checked by the release before
//!   the run, and what was overridden after the start.
//! - `warmup`: the steady-state decision (pure) and its driver; `drive`: the warm-up phase
//!   and the turns at their times.
//! - `finish`: the gateway stopped, its log (keys scrubbed) and auth state kept; a turn's row.
//! - `observe`: what the arm observed → its `Observation`, the `target` block as its report
//!   part.

pub(crate) mod arms;
mod drive;
mod finish;
mod http;
mod observe;
pub(crate) mod run;
mod start;
pub(crate) mod user_config;
pub(crate) mod warmup;
