//! The timing-strict test binary. Cargo runs test binaries one after another, so these tests do
//! not share the machine's two cores with the ~180 tests of the `integration` binary (which run
//! in parallel): what they measure is our code's timing, not the suite's own load.

/// The parts of the integration tests' `support` these tests use.
#[allow(dead_code)]
mod support {
    pub mod replay;
    pub mod upstream;
}

// Record → replay round trip over loopback: routes, order, offsets within 5 ms, no secrets.
mod replay_roundtrip;
