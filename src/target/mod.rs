//! Systems under test other than the embedded engine (docs/README.md). Today: [`openclaw`], a
//! supervisor for a real OpenClaw gateway — find the install, write its config, seed its keys,
//! start it, drive it, stop it, and read its log and auth state back as typed facts — and
//! [`scenario`]: a scenario's gateway configuration and its turns. The `[target]` table is
//! `scenario::target`; the run path `run::external`.

pub mod openclaw;
pub mod scenario;
