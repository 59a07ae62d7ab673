//! `rehearse run` / `rehearse --scenario`: the one pipeline every kind of run goes through,
//! and the top of the module graph (it alone depends on both [`crate::run`] and
//! [`crate::fleet`]):
//!
//! scenario → plan ([`crate::run::plan`]) → system under test ([`sut::SystemUnderTest`]:
//! embedded | gateway | fleet, each recording the upstream with [`crate::run::recorder`]) →
//! what it observed, one [`crate::run::observation::Observation`] per arm → one section per arm
//! and one report ([`crate::run::assemble`]) with the one judge ([`crate::report::judge`]) →
//! the report, finished and written alike for every kind ([`cmd`]).
//!
//! # Layout
//! - `cmd`: the CLI edge (anyhow, exit codes, the run lock, a suite's index).
//! - `sut`: the system under test, one type with one variant per kind.
//! - `after`: what a run does once its report is written: batch-job metrics, retention,
//!   `--on-fail` (docs/weekly.md).

mod after;
mod cmd;
pub mod sut;

pub(crate) use cmd::command;
