//! The scenario's system under test (`[target]`, docs/scenario.md) and where its mock upstream
//! listens (`[upstream]`): the embedded engine (default), a real OpenClaw gateway the harness
//! runs, or any OpenAI-compatible gateway by URL. Pure data and checks; what the plan reads of
//! it is [`External`] (`external.rs`, with the accessors asked where no plan exists); the run
//! path lives in `rehearsal::gateway`.

use super::field::FieldError;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod external;
mod router;

pub use router::RouterSpec;
pub(crate) use external::{Asked, External};

/// Which system the scenario rehearses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// The in-process failover + breaker engine.
    #[default]
    Embedded,
    /// A real OpenClaw gateway, started and stopped by the harness.
    Openclaw,
    /// An OpenAI-compatible gateway the user runs, by URL.
    Http,
    /// Portkey's open-source AI gateway, started and stopped by the harness.
    Portkey,
    /// A real LiteLLM proxy, started and stopped by the harness.
    Litellm,
}

impl TargetKind {
    /// `embedded`, `openclaw`, `http`, `portkey` or `litellm`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Embedded => "embedded",
            Self::Openclaw => "openclaw",
            Self::Http => "http",
            Self::Portkey => "portkey",
            Self::Litellm => "litellm",
        }
    }

    /// True for a gateway the harness installs, configures, starts and stops.
    pub(crate) fn is_supervised(self) -> bool {
        matches!(self, Self::Openclaw | Self::Litellm | Self::Portkey)
    }

    /// True for a gateway outside the harness's process (its timers cannot be compressed).
    pub(crate) fn is_external(self) -> bool {
        self != Self::Embedded
    }
}

/// `[target]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// `embedded` (default) | `openclaw` | `http` | `litellm`.
    #[serde(default)]
    pub kind: TargetKind,
    /// `openclaw`: the executable (else `$REHEARSE_OPENCLAW`, else `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<PathBuf>,
    /// `http`: the gateway's base URL (`http://127.0.0.1:18789`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `http`: its Prometheus endpoint, scraped like the engine's (optional); redirects on the
    /// same origin are followed (`crate::scrape::fetch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_url: Option<String>,
    /// `http`: the environment variable holding the bearer token sent to `metrics_url`
    /// (optional; sent to its origin only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_token_env: Option<String>,
    /// `http`: the environment variable holding its bearer token (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
    /// `http`: the `model` each turn asks the gateway for (default: the traffic's model calls'
    /// one `PROVIDER/MODEL`, the primary; an OpenClaw gateway by URL wants `openclaw/default`,
    /// a LiteLLM proxy its `model_name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `openclaw`: every provider's `timeoutSeconds` (whole seconds; default 30 s).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_timeout: Option<Duration>,
    /// `openclaw`: `agents.defaults.timeoutSeconds`, the whole turn (default 600 s).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub agent_timeout: Option<Duration>,
    /// `openclaw`: how long it may take to become healthy after its keys are seeded (default
    /// 300 s: 6–14 s on an idle 2-core machine, minutes on a busy one).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub ready_timeout: Option<Duration>,
    /// How long the harness waits for one turn's answer (default 600 s); for the embedded
    /// engine, the bound its client's turns are judged by (scenario time): a call that ends
    /// later is `timed_out`.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub turn_timeout: Option<Duration>,
    /// `openclaw`: the user's own OpenClaw configuration (JSON or JSON5; relative to the
    /// scenario file), the base of the gateway's `openclaw.json` (docs/openclaw.md, "Your own
    /// config"); `portkey`: the user's own Portkey config (JSON), the base of each turn's
    /// `x-portkey-config`; `litellm`: the user's own LiteLLM `config.yaml`, the base of the
    /// proxy's (docs/gateways.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
    /// `http`: the gateway's health path (`/healthz`), waited for (a 2xx answer, up to
    /// `ready_timeout`) before the warm-up; not checked when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_path: Option<String>,
    /// `openclaw` | `http`: the warm-up before the run's clock starts (`[target.warmup]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<WarmupSpec>,
    /// `openclaw` | `litellm` | `portkey`: the versions to run side by side (`["2026.9.2", "2026.9.6"]`),
    /// one arm each, every one the same traffic and faults; each found by
    /// [`crate::gateway::openclaw::Install::find_version`] (LiteLLM's by
    /// [`crate::gateway::litellm::Install::find_version`]). Empty: the one install
    /// `command`/`$REHEARSE_OPENCLAW`/`PATH` names (`$REHEARSE_LITELLM`, else the pinned one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<String>,
    /// `litellm` | `portkey`: the router settings of the generated config (`[target.router]`);
    /// unset ones stay the gateway's own. Portkey takes `retries` only (it has no breaker).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router: Option<RouterSpec>,
}


/// Most versions one run takes side by side (each is a real gateway run in turn).
pub(crate) const MAX_VERSIONS: usize = 8;

/// Why `v` is not a version `[target] versions` takes: npm-style (`2026.9.2`, `2026.9.1-beta.1`),
/// since it names an install directory and an environment variable.
pub(crate) fn version_problem(v: &str) -> Option<String> {
    let ok_chars = v
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    let starts = v.chars().next().is_some_and(|c| c.is_ascii_digit());
    (v.is_empty() || v.len() > 64 || !ok_chars || !starts || v.contains(".."))
        .then(|| format!("`{v}` is not an OpenClaw version (e.g. `2026.9.2`) or a LiteLLM one (`1.108.7`)"))
}

/// `[target.warmup]`: the healthy turns an external gateway is sent before the run's clock
/// starts, until one turn's first model request reaches the upstream within `prompt` of sending
/// (its steady state); at most `turns` of them, all within `timeout`. A gateway that does not get
/// there is not rehearsed (verdict `error`, exit 3). docs/openclaw.md, "Warm-up".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarmupSpec {
    /// The bound on a warm turn: its first model request at the upstream within this of sending
    /// (default 5 s; OpenClaw 2026.9.6 takes 6–17 s cold, under 1 s warm).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub prompt: Option<Duration>,
    /// Most warm-up turns (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// The whole warm-up's limit (default 900 s: a cold OpenClaw turn took 90–220 s on a
    /// 2-core machine at load 13).
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout: Option<Duration>,
}

/// Default [`WarmupSpec::prompt`].
const DEFAULT_WARMUP_PROMPT: Duration = Duration::from_secs(5);
/// Default [`WarmupSpec::turns`].
const DEFAULT_WARMUP_TURNS: u32 = 5;
/// Default [`WarmupSpec::timeout`].
const DEFAULT_WARMUP_TIMEOUT: Duration = Duration::from_secs(900);

impl WarmupSpec {
    /// The prompt bound.
    pub(crate) fn prompt(&self) -> Duration {
        self.prompt.unwrap_or(DEFAULT_WARMUP_PROMPT)
    }

    /// The most warm-up turns (at least 1).
    pub(crate) fn turns(&self) -> u32 {
        self.turns.unwrap_or(DEFAULT_WARMUP_TURNS).max(1)
    }

    /// The whole warm-up's limit.
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_WARMUP_TIMEOUT)
    }

    fn validate(&self) -> Result<(), FieldError> {
        if let Some(d) = self.prompt
            && (d < Duration::from_millis(100) || d > Duration::from_secs(600))
        {
            return Err(FieldError::new("warmup.prompt", "must be 100ms..=600s".into()));
        }
        if let Some(n) = self.turns
            && !(1..=100).contains(&n)
        {
            return Err(FieldError::new("warmup.turns", "must be 1..=100".into()));
        }
        if let Some(d) = self.timeout
            && (d < Duration::from_secs(1) || d > Duration::from_secs(48 * 3600))
        {
            return Err(FieldError::new("warmup.timeout", "must be 1s..=48h".into()));
        }
        Ok(())
    }
}

/// Default provider timeout of an `openclaw` target.
const DEFAULT_PROVIDER_TIMEOUT: Duration = Duration::from_secs(30);
/// Default whole-turn limit of an `openclaw` target.
const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(600);
/// Default wait for an `openclaw` target to become healthy.
const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(300);
/// Default wait for one turn's answer.
const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(600);

impl TargetSpec {
    /// `provider_timeout` in whole seconds (at least 1).
    pub(crate) fn provider_timeout_s(&self) -> u64 {
        self.provider_timeout
            .unwrap_or(DEFAULT_PROVIDER_TIMEOUT)
            .as_secs()
            .max(1)
    }

    /// `agent_timeout` in whole seconds (at least 1).
    pub(crate) fn agent_timeout_s(&self) -> u64 {
        self.agent_timeout
            .unwrap_or(DEFAULT_AGENT_TIMEOUT)
            .as_secs()
            .max(1)
    }

    /// The wait for an `openclaw` target to become healthy.
    pub(crate) fn ready_timeout(&self) -> Duration {
        self.ready_timeout.unwrap_or(DEFAULT_READY_TIMEOUT)
    }

    /// The wait for one turn.
    pub(crate) fn turn_timeout(&self) -> Duration {
        self.turn_timeout.unwrap_or(DEFAULT_TURN_TIMEOUT)
    }

    /// The warm-up (its defaults when `[target.warmup]` is absent).
    pub(crate) fn warmup(&self) -> WarmupSpec {
        self.warmup.clone().unwrap_or_default()
    }

    /// Checks what serde cannot; the error names the key under `target`.
    pub(crate) fn validate(&self) -> Result<(), FieldError> {
        let only = |set: bool, key: &'static str, kind: &str| {
            if set {
                Err(FieldError::new(
                    key,
                    format!(
                        "only for `kind = \"{kind}\"` (this target is `{}`)",
                        self.kind.as_str()
                    ),
                ))
            } else {
                Ok(())
            }
        };
        let k = self.kind;
        only(self.command.is_some() && k != TargetKind::Openclaw, "command", "openclaw")?;
        only(
            self.config.is_some() && !k.is_supervised(),
            "config",
            "openclaw\", \"litellm\" or \"portkey",
        )?;
        only(
            self.router.is_some() && !matches!(k, TargetKind::Litellm | TargetKind::Portkey),
            "router",
            "litellm\" or \"portkey",
        )?;
        if let Some(r) = &self.router {
            r.check(k, self.config.is_some())?;
        }
        for (set, key) in [
            (self.url.is_some(), "url"),
            (self.metrics_url.is_some(), "metrics_url"),
            (self.metrics_token_env.is_some(), "metrics_token_env"),
            (self.token_env.is_some(), "token_env"),
            (self.model.is_some(), "model"),
            (self.health_path.is_some(), "health_path"),
        ] {
            only(set && k != TargetKind::Http, key, "http")?;
        }
        for (set, key) in [
            (self.provider_timeout.is_some(), "provider_timeout"),
            (self.agent_timeout.is_some(), "agent_timeout"),
        ] {
            only(set && k != TargetKind::Openclaw, key, "openclaw")?;
        }
        only(
            self.ready_timeout.is_some()
                && !k.is_supervised()
                && !(k == TargetKind::Http && self.health_path.is_some()),
            "ready_timeout",
            "openclaw\", \"litellm\" or \"portkey\" (or \"http\" with `health_path`",
        )?;
        if let Some(p) = &self.health_path {
            check_health_path(p).map_err(|m| FieldError::new("health_path", m))?;
        }
        if let Some(c) = &self.config
            && c.as_os_str().is_empty()
        {
            return Err(FieldError::new("config", "must name a file".into()));
        }
        only(
            self.warmup.is_some() && !k.is_external(),
            "warmup",
            "openclaw\" or \"http",
        )?;
        if let Some(w) = &self.warmup {
            w.validate()?;
        }
        only(
            !self.versions.is_empty() && !k.is_supervised(),
            "versions",
            "openclaw\", \"litellm\" or \"portkey",
        )?;
        self.check_versions()?;
        if k == TargetKind::Http {
            let Some(url) = &self.url else {
                return Err(FieldError::new(
                    "kind",
                    "`kind = \"http\"` needs `url` (the gateway's base URL)".into(),
                ));
            };
            check_url(url).map_err(|m| FieldError::new("url", m.to_string()))?;
            if let Some(m) = &self.metrics_url {
                check_url(m).map_err(|m| FieldError::new("metrics_url", m.to_string()))?;
            }
            for (env, key) in [
                (&self.token_env, "token_env"),
                (&self.metrics_token_env, "metrics_token_env"),
            ] {
                if let Some(env) = env
                    && (env.is_empty() || env.contains(['=', '\0']))
                {
                    return Err(FieldError::new(
                        key,
                        "must name an environment variable".into(),
                    ));
                }
            }
            if self.metrics_token_env.is_some() && self.metrics_url.is_none() {
                return Err(FieldError::new(
                    "metrics_token_env",
                    "is the token sent to `metrics_url`: give `metrics_url` too".into(),
                ));
            }
        }
        for (d, key) in [
            (self.provider_timeout, "provider_timeout"),
            (self.agent_timeout, "agent_timeout"),
            (self.turn_timeout, "turn_timeout"),
            (self.ready_timeout, "ready_timeout"),
        ] {
            if let Some(d) = d
                && (d < Duration::from_secs(1) || d > Duration::from_secs(48 * 3600))
            {
                return Err(FieldError::new(key, "must be 1s..=48h".into()));
            }
        }
        Ok(())
    }
}

impl TargetSpec {
    /// `versions`: each a version, none twice, at most [`MAX_VERSIONS`], not with `command`
    /// (which pins one executable).
    fn check_versions(&self) -> Result<(), FieldError> {
        if self.versions.is_empty() {
            return Ok(());
        }
        if self.command.is_some() {
            return Err(FieldError::new(
                "versions",
                "give either `command` (one executable) or `versions`, not both".into(),
            ));
        }
        if self.versions.len() > MAX_VERSIONS {
            return Err(FieldError::new(
                "versions",
                format!("at most {MAX_VERSIONS} versions side by side"),
            ));
        }
        for (i, v) in self.versions.iter().enumerate() {
            if let Some(why) = version_problem(v) {
                return Err(FieldError::new(format!("versions[{i}]"), why));
            }
            if self.versions[..i].contains(v) {
                return Err(FieldError::new(
                    format!("versions[{i}]"),
                    format!("`{v}` appears twice"),
                ));
            }
        }
        Ok(())
    }
}

/// A `url`/`metrics_url` that is not `http://HOST:PORT…`.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UrlError {
    #[error("`{url}` is not a URL: {source}")]
    Parse {
        url: String,
        #[source]
        source: http::uri::InvalidUri,
    },
    #[error("`{0}` must be an http://HOST:PORT URL")]
    NotHttp(String),
}

fn check_url(url: &str) -> Result<(), UrlError> {
    let uri: http::Uri = url.parse().map_err(|source| UrlError::Parse {
        url: url.to_string(),
        source,
    })?;
    if uri.scheme_str() != Some("http") || uri.authority().is_none() {
        return Err(UrlError::NotHttp(url.to_string()));
    }
    Ok(())
}

/// A health path: `/…`, a valid URI path without whitespace, no `//` authority.
fn check_health_path(p: &str) -> Result<(), String> {
    if !p.starts_with('/') || p.starts_with("//") {
        return Err(format!("`{p}` must be a path starting with one `/` (`/healthz`)"));
    }
    if p.chars().any(char::is_whitespace) || p.parse::<http::uri::PathAndQuery>().is_err() {
        return Err(format!("`{p}` is not a valid URL path"));
    }
    Ok(())
}

/// `[upstream]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamSpec {
    /// A fixed loopback address for the mock upstream (an `http` target's providers point at
    /// it); an ephemeral port when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<SocketAddr>,
}

impl UpstreamSpec {
    /// The address must be loopback.
    pub(crate) fn validate(&self) -> Result<(), FieldError> {
        match self.listen {
            Some(a) if !a.ip().is_loopback() => Err(FieldError::new(
                "listen",
                format!(
                    "`{a}` is not a loopback address: the mock upstream binds 127.0.0.1 or ::1 only"
                ),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
