//! The integration-test binary: one module per area, sharing `support`.

mod support;

// CLI contract: exit codes and usage errors.
mod cli;

// The failover engine: retry gate, cooldowns, rotation, fallbacks, store, config.
mod engine_failover;

// The engine executor: admission, probes, context fallback, tools, ws, speed.
mod engine_executor;

// The cooldown store: OpenClaw shape, restarts, atomic writes.
mod engine_store;

// Engine configuration errors and the cooldown preset tables.
mod engine_config;
