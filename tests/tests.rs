//! The integration-test binary: one module per area, sharing `support`.

mod support;

// CLI contract: exit codes and usage errors.
mod cli;

// Mock upstream: healthy routes, control API, stats, records, CLI.
mod upstream;
