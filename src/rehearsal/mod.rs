//! `rehearse run` / `rehearse --scenario`: the one home of the pipeline every kind of run goes
//! through, and the top of the module graph:
//!
//! scenario → plan ([`plan`]) → system under test ([`sut::SystemUnderTest`]: embedded |
//! gateway | fleet, one room each) → its arms, each on the one arm lifecycle ([`arm`]: the
//! mock upstream and its recorder, targets, scrapers, the stops) → what each arm observed, one
//! [`observation::Observation`] → one section per arm ([`section`]) and one report
//! ([`assemble`]) with the one judge ([`crate::report::judge`]) → the report, finished and
//! written alike for every kind ([`cmd`]).
//!
//! # Layout
//! - `cmd`: the CLI edge (anyhow, exit codes, the run lock, a suite's index); `after`: what a
//!   run does once its report is written (batch-job metrics, retention, `--on-fail`).
//! - `plan`: flags + scenario → a validated run plan (`plan::error`: why none could be made,
//!   typed; `plan::default_dir`: where reports go by default; `plan::gateway`: an external
//!   target's gateway arms, each planned once — the gateway picked, its configuration with the
//!   upstream's address left for the arm to fill in).
//! - `sut`: the system under test, one type with one variant per kind, dispatching to a room.
//! - `arm`: the one arm lifecycle; the upstream recorder of every kind (`arm::recorder`), the
//!   events.jsonl / upstream.jsonl / scrapes writers (`arm::sinks`), the watched upstream
//!   (`arm::supervise`).
//! - The rooms, one per kind, with the same roles (`arms`: the entry, every arm of the
//!   scenario in turn; `run`: one arm on the lifecycle; the kind's own parts beside them):
//!   `embedded` (the engine in process: `rig`, `dispatch`, `health`, `progress`), `gateway`
//!   (a real gateway the harness starts, or the user's by URL, driven through the gateway seam
//!   [`crate::gateway::Supervised`]: `start`, `drive`, `warmup`, `finish`, `http`,
//!   `user_config`, `observe`), `fleet` (N host processes coordinated
//!   through Redis: `host`, `launch`, `spec`, `faults`, `redis_server`, `coordinator_check`,
//!   `checks`, `expect`, `report`).
//! - `observation`: the one [`observation::Observation`] every kind returns per arm, and
//!   [`observation::Observed`], the whole run with its host facts and the kind's report part;
//!   `observe`: exact latencies and the picture's marks from the engine's events, fault hits
//!   from the upstream.
//! - `client_answers`: the turns' answers a client got (a gateway's, the embedded engine's)
//!   checked against what the upstream served for each once the run's record is in
//!   (`truncated`, the model and usage to compare).
//! - `section`: one arm's observation → its section, judged once (every kind alike);
//!   `assemble`: every arm's section + the one judge → the one report; `metric_labels`: what a
//!   metric row's family and label values could have matched; `fault_scope`: which requests a
//!   fault could reach; `contradictions`: the host's facts against the scenario's timings;
//!   `figures`: an arm's key figures; `mutants`: the suite's own mutants
//!   (`REHEARSE_MUTANTS=1` → `mutants.json`).
//! - `targets`: one scenario against several `--target` files side by side (each target a run
//!   of its own in `RUN/LABEL/`, folded into one report with the side-by-side table, the
//!   verdict the worst arm's; `plan::targets` plans them).
//! - `suite`: several scenarios into one run directory (the run directories themselves —
//!   names, ownership marker, lock — are [`crate::rundir`], which the history and retention
//!   read too).

mod after;
pub mod arm;
pub(crate) mod assemble;
pub(crate) mod client_answers;
mod cmd;
pub mod contradictions;
pub mod embedded;
pub(crate) mod fault_scope;
pub(crate) mod figures;
pub mod fleet;
pub mod gateway;
pub(crate) mod metric_labels;
pub mod mutants;
pub mod observation;
pub mod observe;
pub mod plan;
pub mod section;
pub mod suite;
pub mod sut;
pub(crate) mod targets;

pub(crate) use cmd::command;
