//! What every kind of run (`rehearse run` / `rehearse --scenario`) is built from: the plan, the
//! one upstream recorder, the one engine rig, the sinks, the embedded and the external-target
//! runs, the one `Observation` every kind returns per arm, its section and the report's
//! assembly. The pipeline that drives them is [`crate::rehearsal`].
//!
//! # Layout
//! - `lock`: the run lock (schedule helper).
//! - `plan`: flags + scenario → a validated run plan (the CLI edge is [`crate::rehearsal`]);
//!   `plan_error`: why no plan could be made (bad input, typed).
//! - `observation`: the one [`observation::Observation`] every system under test returns per
//!   arm (upstream record, probes, fault hits, engine events where there is an engine of ours,
//!   scrapes, turns' replay accuracy, a gateway's decisions, the kind's own rows, the stop), and
//!   [`observation::Observed`], the whole run with its host facts and the kind's report part.
//! - `section`: one arm's observation → its section, judged once (every kind alike); `assemble`:
//!   every arm's section + the one judge → the one report; `metric_labels`: what a metric row's
//!   family and label values could have matched (its witness; a value nothing exports fails).
//! - `embedded`: the embedded engine as the system under test (every policy in turn, each one
//!   `Observation`); `rig`: the one engine rig of the embedded run and every fleet host.
//! - `harness`: one policy's run; `health`: its canaries and their tally; `suite`: several scenarios into one run directory.
//! - `supervise`: the mock upstream dying mid-run is a harness failure (exit 3).
//! - The real transport the engine is given lives in [`crate::transport`].
//! - `dispatch`: replayed lines → `Engine::handle` across workers.
//! - `marker`: the ownership marker `.rehearse-run.json` every run directory gets at its start.
//! - `sinks`: events.jsonl / upstream.jsonl line writers; `rundir`: run directory names.
//! - `recorder`: the one upstream recorder of every kind of run (upstream.jsonl, probes, fault
//!   hits, duplicates, the model requests kept under one cap).
//! - `observe`: exact latencies and the picture's marks from the events, fault hits from the upstream.
//! - `external` (+ `external_gateway`, `external_report`): a run against an external target
//!   (`[target] kind = "openclaw" | "http"`): upstream, gateway, turns, stop; its one
//!   `Observation` (no engine events) and the `target` block as its report part;
//!   `external_http`: an `http` target's token, provider block to paste and health path;
//!   `user_config`: `[target] config` checked by the release before the run, and what was
//!   overridden / turned off and the effective config (fingerprinted) after the start.
//!   `external_versions`: the entry of every external run — one such run, or OpenClaw versions
//!   side by side, one per version.
//! - `warmup`: an external gateway's warm-up before the run's clock starts (the steady-state
//!   decision, a pure function of the turns so far, and its driver).
//! - `mutants`: the suite's own mutants — every expectation re-judged on the run's own
//!   observation after a change that should fail it (`REHEARSE_MUTANTS=1` → `mutants.json`).
//! - `figures`: an arm's key figures, computed once from its observation and section.
//! - `progress`: the terminal bar (a stop request, SIGINT/SIGTERM included, is
//!   [`crate::util::shutdown::Shutdown`]).

pub mod arm;
pub(crate) mod assemble;
pub mod contradictions;
pub(crate) mod default_dir;
pub(crate) mod dispatch;
pub mod embedded;
pub(crate) mod figures;
pub(crate) mod external;
mod external_drive;
mod external_gateway;
mod external_http;
mod external_report;
mod external_start;
pub(crate) mod external_versions;
pub(crate) mod fault_scope;
pub mod harness;
pub(crate) mod health;
pub mod lock;
pub(crate) mod marker;
pub(crate) mod metric_labels;
pub mod mutants;
pub mod observation;
pub mod observe;
pub mod plan;
mod plan_error;
pub mod progress;
pub mod recorder;
pub mod rig;
pub mod rundir;
pub mod section;
pub mod sinks;
pub mod suite;
mod supervise;
pub(crate) mod user_config;
pub(crate) mod warmup;
