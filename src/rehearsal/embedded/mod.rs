//! The embedded engine as the system under test: its room of the pipeline.
//!
//! # Layout (the same roles as `gateway/` and `fleet/`)
//! - `arms`: the entry — every policy of the scenario in turn, each one arm, each arm's
//!   [`crate::rehearsal::observation::Observation`] (its report part: the engine's rows).
//! - `run`: one arm — a policy's run on the arm lifecycle ([`crate::rehearsal::arm`]): the
//!   engine, its `/metrics`, the replay, the canaries.
//! - `rig`: the one engine rig of this run and of every fleet host; `dispatch`: replayed
//!   lines → `Engine::handle` across workers; `health`: the canaries and their tally;
//!   `progress`: the terminal bar.
//! - `turns`: each model call's end as its client saw it, noted by the dispatcher; `turn_end`:
//!   the pure mapping of the engine's end to a turn outcome (`answered`, `http_error`,
//!   `truncated`, `timed_out`, `unfinished`) — the rows `[[expect.turn]]` judges.

pub mod arms;
pub(crate) mod dispatch;
pub(crate) mod health;
pub mod progress;
pub mod rig;
pub mod run;
pub(crate) mod turn_end;
pub(crate) mod turns;

pub use arms::run_embedded;
