//! A supervisor for a real OpenClaw gateway (pinned: 2026.9.6) as the system under test.
//!
//! # Using it
//!
//! ```no_run
//! # async fn demo(upstream_url: &str) -> Result<(), Box<dyn std::error::Error>> {
//! use rehearse::gateway::openclaw::*;
//! // 1. The install: `[target] command`, else $REHEARSE_OPENCLAW, else PATH; Node checked.
//! let install = Install::find(None)?;
//! // 2. One provider per scenario provider, pointing at the mock upstream; profiles and keys.
//! let config = GatewayConfig {
//!     providers: vec![ProviderSpec {
//!         id: "mockai".into(),
//!         base_url: format!("{upstream_url}/v1"),
//!         timeout_seconds: 5,
//!         models: vec![ModelSpec::new("m1")],
//!     }],
//!     profiles: vec![
//!         ProfileSpec { id: "mockai:a".into(), provider: "mockai".into(), key: "key-A".into() },
//!         ProfileSpec { id: "mockai:b".into(), provider: "mockai".into(), key: "key-B".into() },
//!     ],
//!     primary: "mockai/m1".into(),
//!     fallbacks: vec![],
//!     agent_timeout_seconds: 600,
//! };
//! // 3. Fresh state in RUN/openclaw/, keys seeded, gateway started, healthy.
//! let gateway = Gateway::start(&install, &config, "run".as_ref(), GatewayOptions::default()).await?;
//! // 4. Turns (a stable `user` per session).
//! let client = gateway.client()?;
//! let outcome = client.send(&rehearse::gateway::Turn { session: "s1".into(), stream: true, message: "hi".into(), messages: None }).await;
//! drop(client);
//! // 5. Stop (SIGTERM, grace, SIGKILL), then read what it decided and what it remembers.
//! let stopped = gateway.stop().await;
//! let decisions = stopped.decisions()?;
//! let auth = stopped.auth_state()?;
//! # let _ = (outcome, decisions, auth); Ok(()) }
//! ```
//!
//! # Modules
//!
//! - [`install`]: find the executable and its Node (≥ 24.16), the version; a missing install
//!   is [`InstallError`], whose message says how to install it (`rehearse gateway install openclaw`).
//! - [`config`]: `openclaw.json` ([`GatewayConfig`]): providers, models, profiles, order.
//! - [`user_config`]: the user's own `openclaw.json` (JSON5) as the base (`[target] config`),
//!   [`overlay`]: what the harness owns laid over it and what talks to the outside turned off,
//!   [`release_check`]: `openclaw config validate` of the release over the result.
//! - [`sandbox`]: the per-run directory layout and environment (HOME, OPENCLAW_HOME,
//!   OPENCLAW_STATE_DIR, OPENCLAW_CONFIG_PATH, TMPDIR, OPENCLAW_NO_AUTO_UPDATE=1, NO_PROXY=*),
//!   the private `/tmp` (and PID) namespace on Linux as root.
//! - [`process`]: [`Gateway`]: seed keys (`seed.rs`), spawn, wait for `/health`, stop;
//!   [`GatewayOptions`] (timeouts) and [`GatewayError`] (which carries the gateway's last log
//!   lines) live in `errors.rs`.
//! - [`procs`]: the process tree, start-time-checked [`procs::SeenProcess`], signals.
//! - [`supervisor`]: [`Openclaw`], OpenClaw behind the harness's gateway seam
//!   ([`crate::gateway::Supervisor`]): the install the plan found and the options it planned;
//!   its start (the steps above), and a started gateway's turns, last lines, effective config
//!   and stop, with its log decisions and auth state read back.
//! - [`log`]: its JSON-lines log as typed [`Decision`]s (failover, fallback, retries, the
//!   idle-timeout breaker; a missing log is an error, never "no decisions");
//!   [`log::profile_hash`] maps profile ids to the hashes it logs.
//! - [`state`]: its `authProfiles.state` row as typed cooldowns ([`AuthState`]); a missing
//!   database is an error, never "no cooldown".
//!
//! Secrets: profile keys go to OpenClaw only through `paste-api-key`'s stdin; they are never in
//! `openclaw.json`, in errors or in `Debug` output (fingerprints instead). OpenClaw's own
//! database in the run directory does hold them (its auth store); the auth-state snapshot read
//! here does not.

pub(crate) mod config;
mod errors;
pub(crate) mod install;
pub(crate) mod log;
pub mod overlay;
pub(crate) mod process;
pub mod procs;
pub mod release_check;
pub mod sandbox;
mod seed;
mod store;
pub(crate) mod state;
pub(crate) mod supervisor;
pub mod user_config;

pub use config::{GatewayConfig, ModelSpec, ProfileSpec, ProviderSpec};
pub use errors::{BaseConfig, GatewayError, GatewayOptions};
pub use install::{Install, InstallError};
pub use log::{Decision, LoggedDecision};
pub use process::{Gateway, Stopped};
pub use sandbox::TmpIsolation;
pub use supervisor::Openclaw;
pub(crate) use state::AuthState;
