//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::process::Output;

/// Replay tests: receiver, recorder, traffic builders.
pub mod replay;

/// Runs the real `rehearse` binary with `args` and returns its output.
pub fn rehearse(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .output()
        .expect("spawn rehearse binary")
}

pub mod breaker;
/// The catalogue's cheating stand-in gateways and their target files.
pub mod cheats;
pub mod engine;
/// The one scripted fake transport.
pub mod fake;
/// A simulated fleet of hosts sharing one coordinator backend.
pub mod fleet;
/// The degradation-ladder rig (model calls scripted per model).
pub mod ladder;
/// The stand-in gateways' HTTP/1.1 reader and writer.
pub mod loopback;
pub mod metrics;
/// promtool, amtool and a real Prometheus for the shipped monitoring's tests.
pub mod prometheus;
/// What a real run wrote, read back: time bases, fault scope, marks.
pub mod reading;
/// A real redis-server per test (free port, killed on drop).
pub mod redis;
/// The sample report the report tests render.
pub mod report_sample;
/// The run-harness helpers.
pub mod run;

/// The mock-upstream helpers.
pub mod upstream;

/// The wall-clock time the breaker tests pin their start instant to (2027-01-15).
pub fn wall() -> std::time::SystemTime {
    std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000)
}

/// `t` on both clocks, for `Breakers::observe` and `Admission::record` (an HTTP-date
/// Retry-After reads against [`wall`]).
pub fn at(t: tokio::time::Instant) -> rehearse::engine::Now {
    rehearse::engine::Now::new(t, wall())
}

/// A `--speed` for a test (within 0.01..=100).
pub fn speed(v: f64) -> rehearse::util::speed::Speed {
    rehearse::util::speed::Speed::new(v).expect("a test speed within 0.01..=100")
}
