//! A gateway as the system under test (`[target] kind = "openclaw" | "portkey" | "http"`): its
//! room of the pipeline. The gateway itself — finding its install, its config, its keys, starting it
//! sandboxed, its turns, its decisions and state, stopping it by pid — is [`crate::gateway`],
//! asked through its seam only ([`crate::gateway::Supervisor`], [`crate::gateway::Supervised`]:
//! no module here names OpenClaw's supervisor or a gateway by URL); what each arm runs is its
//! plan ([`crate::rehearsal::plan::GatewayPlan`], built once before the run). This room is what
//! a run does with them.
//!
//! # Layout (the same roles as `embedded/` and `fleet/`)
//! - `arms`: the entry — one run of the target, or OpenClaw versions side by side, one arm
//!   each.
//! - `run`: one arm on the arm lifecycle ([`crate::rehearsal::arm`]): upstream, start,
//!   warm-up, turns, stop.
//! - `start`: the arm's gateway started against the arm's upstream (its configuration the
//!   plan's with the upstream's address); `http`: the provider block to paste into a gateway
//!   the user configures; `user_config`: the configuration the harness wrote, and what it
//!   overrode in the user's, after the start.
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
