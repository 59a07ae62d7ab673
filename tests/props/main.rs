//! Property tests (proptest) of every parser a user or the network feeds: no panic on arbitrary
//! input, errors located inside it, and round trips where a writer exists. Each property runs
//! `common::DEFAULT_CASES` cases (`PROPTEST_CASES` overrides; `scripts/fuzz-long.sh` runs many
//! more). A separate test binary, so its CPU-heavy cases never share the cores with the
//! timing-sensitive integration tests.

mod common;

// Scenario TOML: parse and validate.
mod scenario;

// Traffic JSONL: parse, and the writer's output parses back identical.
mod traffic;

// Fault files, the control API body, fault actions and Retry-After.
mod faults;

// The Prometheus exposition parser against the engine's writer; series selectors.
mod exposition;

// The recording proxy's request handling and redaction.
mod record;

// The cooldown store file.
mod store;
