//! A supervisor for a real LiteLLM proxy (PyPI `litellm[proxy]`, pinned in `scripts/pins.env`)
//! as the system under test (`[target] kind = "litellm"`, docs/gateways.md).
//!
//! # Modules (one role each)
//!
//! - [`install`]: find the venv (`$REHEARSE_LITELLM`, `$REHEARSE_LITELLM_<VERSION>`, else the
//!   cache's `litellm-VERSION/`) and its version (the package's metadata).
//! - [`config`]: the config generated from the scenario (deployments in a stated order, router
//!   settings, fallbacks, the allowed-fails policy, `/metrics`, the master key).
//! - [`user_config`]: the user's own `config.yaml` (`[target] config`) with every key's
//!   position; [`release_keys`]: the keys the pinned release takes, asked of its venv, and the
//!   user's checked against them (exit 2 at `file:line:col`); [`overlay`]: what the harness
//!   owns laid over the user's, what it turned off, listed.
//! - [`process`]: the sandboxed process (empty environment, loopback, its own directory), its
//!   readiness, its stop by pid; [`watch`]: the pure "stopped answering" decision its liveness
//!   probes feed.
//! - [`supervisor`]: [`Litellm`] behind the seam ([`crate::gateway::Supervisor`]).
//!
//! Secrets: the profiles' keys are in the config file inside the arm's gateway directory (the
//! run removes it after the stop), never in the report (fingerprints) or the kept log (scrubbed).

pub mod config;
pub mod install;
pub mod overlay;
pub mod process;
pub mod release_keys;
pub mod supervisor;
pub mod user_config;
pub mod watch;

pub use config::RouterSettings;
pub use install::{Install, InstallError};
pub use supervisor::Litellm;
