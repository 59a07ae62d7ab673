//! What the scenario's `[target]` asks of the gateway an external run drives, its defaults
//! applied ([`External`], kind by kind): what the plan reads (`rehearsal::plan::gateway`) to
//! plan each gateway arm once, so that nothing past the scenario reads the table itself (the
//! small questions asked where no plan exists — `validate`, `doctor` — are `ScenarioFile`'s
//! accessors in `format.rs`).

use std::path::PathBuf;
use std::time::Duration;

use super::{TargetKind, TargetSpec, WarmupSpec};

/// What `[target]` asks of an external gateway.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct External {
    /// The gateway, kind by kind.
    pub gateway: Asked,
    /// How long one turn may take (`turn_timeout`).
    pub turn_timeout: Duration,
    /// How long it may take to become ready (`ready_timeout`).
    pub ready_timeout: Duration,
    /// The warm-up before the run's clock starts (`[target.warmup]`).
    pub warmup: WarmupSpec,
    /// Its Prometheus endpoint (`metrics_url`).
    pub metrics_url: Option<String>,
    /// The variable holding the bearer token sent to it (`metrics_token_env`).
    pub metrics_token_env: Option<String>,
}

/// The gateway `[target]` names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Asked {
    /// `kind = "openclaw"`: one the harness starts.
    Openclaw {
        /// `command`: the executable (else `$REHEARSE_OPENCLAW`, else `PATH`).
        command: Option<PathBuf>,
        /// `versions`: side by side, one arm each (empty: the one install).
        versions: Vec<String>,
    },
    /// `kind = "portkey"`: Portkey's open-source gateway, one the harness starts.
    Portkey {
        /// `retries`: each generated target's `retry.attempts`.
        retries: u32,
    },
    /// `kind = "litellm"`: a LiteLLM proxy the harness starts.
    Litellm {
        /// `versions`: side by side, one arm each (empty: the one install).
        versions: Vec<String>,
        /// `[target.router]`.
        router: super::RouterSpec,
    },
    /// `kind = "http"`: the user's, by URL.
    Http {
        /// `url`.
        url: String,
        /// `token_env`: the variable holding its bearer token.
        token_env: Option<String>,
        /// `model`: the model its turns ask for (else the primary: the traffic's).
        model: Option<String>,
        /// `health_path`: waited for before the warm-up.
        health_path: Option<String>,
    },
}

impl TargetSpec {
    /// What it asks of an external gateway; `None` for the embedded engine.
    pub(crate) fn external(&self) -> Option<External> {
        let gateway = match self.kind {
            TargetKind::Embedded => return None,
            TargetKind::Openclaw => Asked::Openclaw {
                command: self.command.clone(),
                versions: self.versions.clone(),
            },
            TargetKind::Portkey => Asked::Portkey {
                retries: self.router.and_then(|r| r.retries).unwrap_or(0),
            },
            TargetKind::Litellm => Asked::Litellm {
                versions: self.versions.clone(),
                router: self.router.unwrap_or_default(),
            },
            TargetKind::Http => Asked::Http {
                url: self.url.clone().unwrap_or_default(),
                token_env: self.token_env.clone(),
                model: self.model.clone(),
                health_path: self.health_path.clone(),
            },
        };
        Some(External {
            gateway,
            turn_timeout: self.turn_timeout(),
            ready_timeout: self.ready_timeout(),
            warmup: self.warmup(),
            metrics_url: self.metrics_url.clone(),
            metrics_token_env: self.metrics_token_env.clone(),
        })
    }
}
