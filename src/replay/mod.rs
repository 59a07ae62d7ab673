//! Recorded traffic (docs/traffic.md): the JSONL format, the pure pacer, the open-model
//! replayer and the recording proxy of `rehearse record`.
//!
//! - [`traffic`]: `TrafficLine`, `load_traffic`, `parse_traffic` (errors name line and field).
//! - [`pacer`]: `send_at(start, at_ms, speed)`, the absolute schedule (pure).
//! - [`replayer`]: the `Dispatcher` trait and `replay(...)`, open model, bounded in-flight.
//! - [`precise`]: sub-millisecond waiting (timer, OS naps, bounded spin); [`threaded`]:
//!   `replay_on_own_thread`, the pacer thread of `rehearse replay`; [`pacer_thread`]: that
//!   thread's OS settings (timer slack, priority).
//! - [`summary`]: per-request records, lag and latency percentiles (HDR histograms).
//! - [`http`]: `HttpDispatcher`, the HTTP/WebSocket `Dispatcher` of `rehearse replay`, built
//!   on the run's transport ([`crate::transport`]: the one request builder and error mapping).
//! - [`record`]: the recording reverse proxy; [`redact`]: request → line without secrets;
//!   [`journal`]: ordered, line-flushed output.
//! - `receiver`: a loopback receiver that timestamps arrivals (tests and the benchmark only;
//!   hidden from the API docs).

mod cmd;
pub(crate) mod http;
pub(crate) mod journal;
pub(crate) mod pacer;
pub(crate) mod pacer_thread;
pub(crate) mod precise;
// Test and benchmark support (the integration tests and `examples/replay_receiver.rs` need it
// from outside the crate), kept out of the documented API.
#[doc(hidden)]
pub mod receiver;
pub mod record;
pub mod redact;
pub(crate) mod replayer;
pub(crate) mod summary;
pub(crate) mod threaded;
pub mod traffic;
mod traffic_json;

pub(crate) use cmd::{record_command, replay_command};
pub use http::{HttpDispatcher, TargetError};
pub use precise::Pacing;
pub use replayer::{DispatchOutcome, Dispatcher, ReplayOptions, ReplaySummary, replay};
pub use threaded::{replay_on_own_thread, replay_on_pacer_thread};
pub use traffic::{TrafficError, TrafficLine, load_traffic, parse_traffic};
