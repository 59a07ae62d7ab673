//! The embedded failover and breaker engine. Pure decisions take `now` (tokio's clock) as an
//! argument; async code lives only at the edges (the executor and the `Transport`). Nothing here
//! imports hyper, clap or the harness.
//!
//! Vocabulary (classic, not linkerd's reversed one): a breaker is **closed** when traffic flows,
//! **open** when it rejects at once, **half-open** when it admits paced probes.
//!
//! # Layout
//!
//! - [`request`]: what the harness asks (`EngineRequest`) and gets back (`EngineResponse`).
//! - [`transport`]: the `Transport` seam (`Call`, `CallTarget`, `Deadlines`).
//! - [`admission`]: the `Admission` seam the breakers implement (`Admit`, `AlwaysAllow`).
//! - Dependency names (`PROVIDER/REGION/FP`) are wire names: [`crate::wire::dep`].
//! - [`outcome`], [`classify`], [`retry_after`]: attempt results → failure reasons.
//! - [`config`]: `EngineConfig` (OpenClaw key names) and its validation.
//! - [`profiles`], [`policy`], [`cooldown`], [`store`]: auth profiles, policies, schedules, the
//!   `auth-profiles.json`-shaped cooldown store.
//! - [`failover`]: the pure failover decision.
//! - [`executor`]: `Engine`, the async loop around it: the model-call failover chain
//!   (`executor_llm.rs`), the degradation ladder after it (`executor_ladder.rs`: lighter model →
//!   partial result → fail), budget gates and content self-correction retries
//!   (`executor_limits.rs`), tool and WebSocket calls (`executor_simple.rs`).
//! - [`budget`]: error classes, budget-bounded retry decisions and the ladder's rungs (pure).
//! - [`events`]: the structured events every decision emits.
//! - [`breaker`], [`breakers`]: per-dependency circuit breakers (pure machine) and the registry
//!   implementing `Admission`; [`coordinator`]: what a fleet of hosts shares about them (the
//!   `Coordinator` trait, in-process and Redis), attached with `Breakers::with_coordinator`.
//! - [`health`], [`canary`]: synthetic canaries and the canary/breaker disagreement; [`families`]: the metric families'
//!   names, labels and buckets (one catalogue for the registry and scenario validation).
//! - [`metrics`]: the Prometheus registry (every render first advances the breakers, so a scrape
//!   reads the state at scrape time).

pub mod admission;
pub mod breaker;
pub mod breakers;
pub mod budget;
pub mod canary;
pub mod classify;
pub mod config;
pub mod cooldown;
pub mod coordinator;
pub mod events;
pub mod executor;
pub mod failover;
pub mod families;
pub mod health;
pub mod metrics;
pub mod outcome;
pub mod policy;
pub mod profiles;
pub mod request;
pub mod retry_after;
pub mod store;
pub mod throttle;
pub mod timeouts;
pub mod transport;

pub use admission::{Admission, Admit, AlwaysAllow};
pub use config::{ConfigError, EngineConfig};
pub use events::{AttemptOutcome, BreakerState, Event, EventKind, EventSink, LadderRung, OpClass};
pub use executor::{Engine, EngineOptions};
pub use outcome::{AttemptResult, Reason, TimeoutPhase, TransportFailure};
pub use policy::Policy;
pub use profiles::Profile;
pub use request::{EngineRequest, EngineResponse, RequestKind};
pub use transport::{Call, CallTarget, Deadlines, Origin, Transport};
