//! The integration-test binary: one module per area, sharing `support`.

mod support;

// CLI contract: exit codes and usage errors.
mod cli;

// Replay: traffic CLI errors, `rehearse replay`/`record` binaries.
mod replay;
// Replay: record → replay round trip over loopback, no secrets in recordings.
mod replay_roundtrip;
