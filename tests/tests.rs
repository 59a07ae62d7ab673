//! The integration-test binary: one module per area, sharing `support`.

mod support;

// CLI contract: exit codes and usage errors.
mod cli;

// The run harness's real transport: typed failures from misbehaving loopback servers.
mod run_transport;

// The failover engine: retry gate, cooldowns, rotation, fallbacks, store, config.
mod engine_failover;
