//! The integration-test binary: one module per area, sharing `support`.

mod support;

// CLI contract: exit codes and usage errors.
mod cli;

// Run lock: held / stale takeover (issue 7.4).
mod lock;

// Host and TCP fingerprint, socket options, contradiction checks (issue 7.5-7.7).
mod host;

// The failover engine: retry gate, cooldowns, rotation, fallbacks, store, config.
mod engine_failover;

// launchd schedule: plist, launchctl argv, checked-in example drift (issue 7.1-7.2).
mod schedule;
