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
pub mod engine;
/// A simulated fleet of hosts sharing one coordinator backend.
pub mod fleet;
/// The degradation-ladder rig (model calls scripted per model).
pub mod ladder;
pub mod metrics;
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
