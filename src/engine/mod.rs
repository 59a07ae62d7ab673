//! The embedded failover and breaker engine. Pure decisions take `now` (tokio's clock) as an
//! argument; async code lives only at the edges (the executor and the `Transport`). Nothing here
//! imports hyper, clap or the harness.
//!
//! Vocabulary (classic, not linkerd's reversed one): a breaker is **closed** when traffic flows,
//! **open** when it rejects at once, **half-open** when it admits paced probes.

pub mod breaker;
pub mod breakers;
pub mod events;
pub mod health;
pub mod metrics;
pub mod outcome;

pub use events::{AttemptOutcome, BreakerState, Event, EventKind, EventSink, OpClass};
pub use outcome::{AttemptResult, Reason, TimeoutPhase, TransportFailure};
