//! The integration-test binary: one module per area, sharing `support`.

mod support;

// CLI contract: exit codes and usage errors.
mod cli;

// The failover engine: retry gate, cooldowns, rotation, fallbacks, store, config.
mod engine_failover;
