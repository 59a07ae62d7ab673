//! Systems under test other than the embedded engine (docs/README.md). Today: [`openclaw`], a
//! supervisor for a real OpenClaw gateway — find the install, write its config, seed its keys,
//! start it, drive it, stop it, and read its log and auth state back as typed facts. The
//! `[target]` scenario table and the run path that use it build on these modules.

pub mod openclaw;
pub mod scenario;
