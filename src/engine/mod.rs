//! The embedded failover and breaker engine. Pure decisions take `now` (tokio's clock) as an
//! argument; async code lives only at the edges (the executor and the `Transport`). Nothing here
//! imports hyper, clap or the harness.
//!
//! Vocabulary (classic, not linkerd's reversed one): a breaker is **closed** when traffic flows,
//! **open** when it rejects at once, **half-open** when it admits paced probes.
//!
//! # Layout
//!
//! Each room is a folder; its `mod.rs` says what lives where.
//!
//! - [`request`]: what the harness asks (`EngineRequest`) and gets back (`EngineResponse`).
//! - [`transport`]: the `Transport` seam (`Call`, `Endpoint`, `Deadlines`).
//! - [`admission`]: the `Admission` seam the breakers implement (`Admit`, `AlwaysAllow`).
//! - [`clock`]: [`Now`], the monotonic and wall instant every decision is handed (the one
//!   place the engine's clocks are read).
//! - [`outcome`]: attempt results and failure reasons (the transport's contract). Dependency
//!   names (`PROVIDER/REGION/FP`) are wire names: [`crate::wire::dep`].
//! - [`config`], [`timeouts`]: `EngineConfig` (OpenClaw key names), its validation and the
//!   deadlines per operation class; [`adaptive`]: tool-call deadlines from each dependency's
//!   observed p99 (`[engine.timeouts] adaptive`), and [`latency`], the p99 estimator they share
//!   with the half-open probe timeout.
//! - [`breaker`]: per-dependency circuit breakers: the pure machine, what trips it
//!   ([`breaker::trip`], with its [`TripReason`]), half-open probes, the sliding window, what a
//!   result means to a breaker ([`breaker::signal`]) and the registry implementing `Admission`
//!   ([`breaker::registry`], with fleet coordination in `registry/fleet.rs`).
//! - [`coordinator`]: what a fleet of hosts shares about the breakers (the `Coordinator` trait,
//!   in-process and Redis), attached with `Breakers::with_coordinator`.
//! - [`failover`]: the pure failover decision and what it reads: attempt classification into
//!   reasons, auth profiles, policies, cooldown schedules, the `auth-profiles.json`-shaped store,
//!   Retry-After parsing.
//! - [`budget`]: budget-bounded retries, the degradation ladder's rungs, the session ledger and
//!   the per-tenant throttle (pure).
//! - [`executor`]: `Engine`, the async loop around the pure parts: one entry
//!   ([`Engine::handle`]), the model call (`executor/model.rs`: routing and the degradation
//!   ladder; `executor/chain.rs`: the failover chain; `executor/gates.rs`: throttle and budget
//!   gates), tool and WebSocket calls (`executor/simple.rs`).
//! - [`health`]: synthetic canaries (`health/canary.rs`) and the canary/breaker disagreement.
//! - [`vocab`], [`errors`], [`disagreement`], [`backoff`]: leaves the other rooms share (breaker
//!   states and trip reasons, the config and store errors, the canary/breaker disagreement's
//!   state, the open duration's doubling), re-exported where they were first documented, so the
//!   rooms' dependencies run one way (`config` aggregates every room's settings; no room names
//!   it).
//! - [`events`]: the structured events every decision emits; [`families`]: the metric families'
//!   names, labels and buckets (one catalogue for the registry and scenario validation);
//!   [`metrics`]: the Prometheus registry (every render first advances the breakers, so a scrape
//!   reads the state at scrape time).

pub mod adaptive;
pub mod admission;
pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod clock;
pub mod config;
pub mod coordinator;
pub mod disagreement;
pub mod errors;
pub mod events;
pub mod executor;
pub mod failover;
pub mod families;
pub mod health;
pub mod latency;
pub mod metrics;
pub mod outcome;
pub mod request;
pub mod timeouts;
pub mod transport;
pub mod vocab;

pub use admission::{Admission, Admit, AlwaysAllow};
pub use breaker::TripReason;
pub use clock::{Clock, Now};
pub use config::{ConfigError, EngineConfig};
pub use events::{
    AttemptOutcome, BreakerState, DeadlineSource, Event, EventKind, EventSink, LadderRung, OpClass,
};
pub use executor::{Engine, EngineOptions};
pub use failover::policy::Policy;
pub use failover::profiles::Profile;
pub use outcome::{AttemptResult, Reason, TimeoutPhase, TransportFailure};
pub use request::{EngineRequest, EngineResponse, RequestKind};
pub use transport::{Call, Deadlines, Endpoint, Origin, Transport};
// The `--speed` factor the engine's timings are divided by (`EngineOptions::speed`,
// `Breakers::new`, `BreakerConfig::scaled`): shared with the harness, named here for embedders.
pub use crate::util::speed::{Speed, SpeedError};
