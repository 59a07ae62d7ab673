//! Portkey's open-source AI gateway (npm `@portkey-ai/gateway`, pinned in scripts/pins.env) as
//! a supervised system under test (`[target] kind = "portkey"`), behind the harness's gateway
//! seam ([`crate::gateway::Supervisor`]).
//!
//! What it is, measured on 1.15.2: pure Node (`build/start-server.js`), offline; `--port=N`
//! only; listens on every interface; takes its routing, retries and fallbacks per request in
//! the `x-portkey-config` header; drops unknown config keys silently; keeps a broken process
//! alive (an `uncaughtException` handler); has no working circuit breaker and no `/metrics`;
//! says per response which target answered (`x-portkey-last-used-option-index`) and how many
//! retries that target took (`x-portkey-retry-attempt-count`).
//!
//! # Modules
//!
//! - [`install`]: the install (`$REHEARSE_PORTKEY`, else the pinned one in the cache; a
//!   version's `$REHEARSE_PORTKEY_<V>` else `CACHE/portkey-V`) and the pinned Node beside it.
//! - [`config`]: the `x-portkey-config` generated from the scenario ([`config::Routing`]: the
//!   config and its targets in their stated order).
//! - [`user_file`]: the user's own config (`[target] config`), its keys checked against the
//!   harness's list (exit 2 at file:line:col), the harness's keys and hosts laid over it.
//! - `preload.cjs`: loaded with `node --require`, binds every server of the process to
//!   127.0.0.1.
//! - [`process`]: the process — its directory (HOME, TMPDIR, its log), started in a process
//!   group of its own, `GET /` waited for, then watched (a gateway that stops answering is
//!   down, whatever its process says), stopped by pid.
//! - [`supervisor`]: [`Portkey`] behind the seam: start, the turns' client (the config header on
//!   every turn, Portkey's two decision headers kept), liveness, last lines, stop.

pub mod config;
pub mod install;
pub mod process;
pub mod supervisor;
pub mod user_file;

pub use install::{Install, InstallError};
pub use supervisor::Portkey;
