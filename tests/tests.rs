//! The integration-test binary: one module per area, sharing `support`.

mod support;

// CLI contract: exit codes and usage errors.
mod cli;

// Replay: traffic CLI errors, `rehearse replay`/`record` binaries.
mod replay;
// Replay: record → replay round trip over loopback, no secrets in recordings.
mod replay_roundtrip;

// Exposition parser, selectors and the prometheus-parse comparison (verdict helper).
mod scrape_parse;
// The pure expectation diff and its mutations (verdict helper).
mod verdict_diff;
// Run lock: held / stale takeover (issue 7.4).
mod lock;

// Host and TCP fingerprint, socket options, contradiction checks (issue 7.5-7.7).
mod host;

// The failover engine: retry gate, cooldowns, rotation, fallbacks, store, config.
mod engine_failover;
