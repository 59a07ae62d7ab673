//! The supervisor of the external system under test (docs/README.md). Today: [`openclaw`], a
//! supervisor for a real OpenClaw gateway — find the install, write its config, seed its keys,
//! start it, drive it, stop it, and read its log and auth state back as typed facts. The
//! supervisor owns the process; what the scenario asks of it (the `[target]` table, its gateway
//! configuration and turns) is `scenario::target` and `scenario::gateway`; the run path
//! `rehearsal::gateway`.

pub mod openclaw;
