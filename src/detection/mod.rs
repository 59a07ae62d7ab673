//! The detection path in a run (`[prometheus]`, docs/alerts.md): a real Prometheus scraping the
//! system under test and evaluating alerting rules, an Alertmanager whose webhook receiver the
//! harness serves, and what the judge reads back from them. The alert expectations themselves
//! are `crate::verdict::alert` (as written) and `crate::verdict::alert_eval` (the judge).
//!
//! # Layout
//! - `binaries`: the programs on PATH under their Debian and Homebrew names.
//! - `promtool`: `promtool check rules` on a scenario's rule files before a run.
//! - `config`: the configs written for the programs (pure text).
//! - `targets`: what Prometheus scrapes, published arm by arm by every kind of run.
//! - `process`: one started program: its log, its watchdog, its stop by pid.
//! - `receiver`: the webhook receiver recording each notification's arrival.
//! - `api`: the HTTP API queries.
//! - `poll`: what Prometheus says while an arm runs (its rule evaluation counters, its rules'
//!   health, which of its targets are the arm's).
//! - `read`: one arm read back after the run, tied to the targets it published.
//! - `error`: why the path could not be checked, started or read (typed, causes kept).
//! - `stack`: the whole path of one scenario run, started, watched, read and stopped.

pub(crate) mod api;
pub(crate) mod binaries;
pub(crate) mod poll;
pub mod config;
pub mod error;
mod preflight;
pub(crate) mod process;
pub(crate) mod promtool;
pub(crate) mod read;
pub(crate) mod receiver;
pub mod stack;
pub mod targets;

pub use config::Target;
pub use error::DetectionError;
pub(crate) use preflight::preflight;
pub use stack::Detection;
pub use targets::Targets;
