//! A gateway arm planned once ([`GatewayPlan`]): for an external target, one per arm — the one
//! run, or one per OpenClaw version side by side — built from what the scenario's `[target]`
//! asks ([`crate::scenario::target::External`]) before anything starts. It holds the gateway the
//! plan picked ([`crate::gateway::Supervisor`]: OpenClaw with its found install, or the user's
//! by URL with its token, each with its turn and ready timeouts — one match arm per kind,
//! [`plan_gateways`]), its configuration (the user's `[target] config` as the base, checked here
//! by the release: [`super::user_config::check_release`]), the turns, the warm-up, the metrics
//! endpoint and the profile tokens. The one thing it cannot know is where the arm's mock
//! upstream listens: the configuration names [`UPSTREAM_SLOT`] until the arm, once bound, asks
//! for its own ([`GatewayPlan::config_for`]). The run (`rehearsal::gateway`) and the report read
//! this, never the scenario's `[target]` table.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use crate::gateway::by_url::ByUrl;
use crate::gateway::openclaw::{GatewayConfig, GatewayOptions, Install, Openclaw};
use crate::gateway::Supervisor;
use crate::gateway::portkey::{Install as PortkeyInstall, Portkey};
use crate::scenario::field::FieldError;
use crate::scenario::gateway::{
    PlannedTurn, UPSTREAM_SLOT, base_config, gateway_config, gateway_config_with, planned_turns,
    primary_model,
};
use crate::scenario::target::{Asked, External, TargetKind, WarmupSpec};
use crate::scenario::validate::Checked;
use crate::util::secrets::Scrubber;

use super::Refused;

/// One gateway arm of an external target, planned.
#[derive(Debug, Clone)]
pub struct GatewayPlan {
    /// The arm's name: the target's kind (`openclaw`, `http`), or the version it runs.
    pub arm: String,
    /// The target's kind.
    pub kind: TargetKind,
    /// The version asked for (`[target] versions`, `--gateway-version`), when one was: its
    /// kept files carry it.
    pub pinned: Option<String>,
    /// The gateway the plan picked, with what it starts with (the turn and ready timeouts; for
    /// OpenClaw the user's config as the base); a test may put a stand-in of its own here.
    pub gateway: Arc<dyn Supervisor>,
    /// Its configuration, its providers at [`UPSTREAM_SLOT`]; why the scenario cannot configure
    /// one (only ever for a gateway the user configures: its provider block is then a note).
    config: Result<GatewayConfig, FieldError>,
    /// The turns, at their recorded times (the model calls before `duration`).
    pub(crate) turns: Vec<PlannedTurn>,
    /// The warm-up before the run's clock starts.
    pub warmup: WarmupSpec,
    /// Its Prometheus endpoint, scraped like the engine's.
    pub metrics_url: Option<http::Uri>,
    /// The bearer token sent to it (`metrics_token_env`), to its origin only.
    pub metrics_token: Option<crate::scrape::Bearer>,
    /// `http`: the health path waited for before the warm-up.
    pub health_path: Option<String>,
    /// `http`: the fingerprint of the bearer token sent (`token_env`).
    pub token_fp: Option<String>,
    /// `http`: `[target] model`, the model its turns name when the scenario says.
    pub model: Option<String>,
    /// The scenario's profile tokens.
    pub tokens: Tokens,
}

impl GatewayPlan {
    /// The configuration the arm's gateway gets: the planned one with every provider at the
    /// mock upstream the arm bound at `upstream` (`http://ADDR/v1`), the slot filled.
    pub fn config_for(&self, upstream: SocketAddr) -> Result<GatewayConfig, FieldError> {
        let mut config = self.config.clone()?;
        for p in &mut config.providers {
            p.base_url = format!("http://{upstream}/v1");
        }
        Ok(config)
    }

    /// The planned configuration, its providers at the slot.
    #[cfg(test)]
    pub(crate) fn planned_config(&self) -> Result<&GatewayConfig, &FieldError> {
        self.config.as_ref()
    }
}

/// The scenario's profile tokens: what a gateway's output is scrubbed of, and which profile a
/// token's fingerprint names. Shown by fingerprint only.
#[derive(Clone, Default)]
pub struct Tokens(Vec<Token>);

/// One profile's token.
#[derive(Clone)]
struct Token {
    profile: String,
    secret: String,
    fp: String,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|t| (&t.profile, &t.fp)))
            .finish()
    }
}

impl Tokens {
    /// The tokens of `checked`'s `[[profile]]`s.
    fn of(checked: &Checked) -> Self {
        Self(
            checked
                .file
                .profile
                .iter()
                .map(|p| Token {
                    profile: p.id.clone(),
                    secret: p.credential().to_string(),
                    fp: crate::util::fingerprint(p.credential()),
                })
                .collect(),
        )
    }

    /// A scrubber replacing each token and each of `more` with its fingerprint.
    pub(crate) fn scrubber_with(&self, more: &[String]) -> Scrubber {
        Scrubber::fingerprinting(
            self.0
                .iter()
                .map(|t| t.secret.clone())
                .chain(more.iter().filter(|s| !s.is_empty()).cloned()),
        )
    }

    /// The id of the profile whose token has fingerprint `fp`.
    pub(crate) fn profile_of(&self, fp: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|t| t.fp == fp)
            .map(|t| t.profile.as_str())
    }
}

/// The gateway arms of `checked` run with `versions` (one, or one per version); none for the
/// embedded engine. Refused, in this order: an OpenClaw install not found (per version, each
/// checked before the next is looked for), the user's config refused by a release, an
/// `http` target's token unset or empty (`token_env`, then `metrics_token_env`).
pub(super) fn plan_gateways(
    checked: &Checked,
    versions: &[String],
) -> Result<Vec<GatewayPlan>, Refused> {
    let Some(asked) = checked.file.external() else {
        return Ok(Vec::new());
    };
    // The one place the plan picks a gateway's implementation.
    match &asked.gateway {
        Asked::Openclaw { command, .. } => {
            openclaw_arms(checked, &asked, command.as_deref(), versions)
        }
        Asked::Portkey { retries } => portkey_arms(checked, &asked, *retries, versions),
        Asked::Litellm { router, .. } => litellm_arms(checked, &asked, router, versions),
        Asked::Http {
            url,
            token_env,
            model,
            health_path,
        } => {
            let bearer = token(token_env.as_deref(), "token_env")?;
            let metrics_token = token(asked.metrics_token_env.as_deref(), "metrics_token_env")?;
            let token = bearer;
            let gateway = ByUrl {
                url: url.clone(),
                token: token.clone(),
                model: match model {
                    Some(m) => m.clone(),
                    None => primary_model(&checked.traffic).unwrap_or_default(),
                },
                health_path: health_path.clone(),
                turn_timeout: asked.turn_timeout,
                ready_timeout: asked.ready_timeout,
            };
            let config = gateway_config(&checked.file, &checked.traffic, UPSTREAM_SLOT);
            let mut arm = planned(checked, &asked, TargetKind::Http, Arc::new(gateway), config);
            arm.health_path = health_path.clone();
            arm.token_fp = token_env.as_ref().map(|_| crate::util::fingerprint(&token));
            arm.model = model.clone();
            arm.metrics_token = asked
                .metrics_token_env
                .as_ref()
                .map(|_| crate::scrape::Bearer::new(metrics_token));
            Ok(vec![arm])
        }
    }
}

/// One OpenClaw arm per version of `versions` (each its install, found by version), else one of
/// the install `command` (else `$REHEARSE_OPENCLAW`, else `PATH`) names; each install's release
/// checks the user's config before the next install is looked for.
fn openclaw_arms(
    checked: &Checked,
    asked: &External,
    command: Option<&Path>,
    versions: &[String],
) -> Result<Vec<GatewayPlan>, Refused> {
    let file = &checked.file;
    let user = checked.user_config.as_ref();
    let config = gateway_config_with(file, &checked.traffic, UPSTREAM_SLOT, user)?;
    let options = GatewayOptions {
        turn_timeout: asked.turn_timeout,
        ready_timeout: asked.ready_timeout,
        base: base_config(file, user),
        ..GatewayOptions::default()
    };
    per_version(versions, |v| {
        let install = match v {
            Some(v) => Install::find_version(v)?,
            None => Install::find(command)?,
        };
        if let Some(b) = &options.base {
            super::user_config::check_release(b, &config, &install)?;
        }
        let gateway = Arc::new(Openclaw::new(install, options.clone()));
        Ok(planned(checked, asked, TargetKind::Openclaw, gateway, Ok(config.clone())))
    })
}

/// One Portkey arm per version of `versions` (each its install, found by version), else one of
/// `$REHEARSE_PORTKEY`, else the pinned install in the cache. Its configuration is the
/// scenario's, turned into each turn's `x-portkey-config` when the arm starts (the user's
/// `[target] config` overlaid, checked when the scenario was).
fn portkey_arms(
    checked: &Checked,
    asked: &External,
    retries: u32,
    versions: &[String],
) -> Result<Vec<GatewayPlan>, Refused> {
    let config = gateway_config(&checked.file, &checked.traffic, UPSTREAM_SLOT)?;
    per_version(versions, |v| {
        let install = match v {
            Some(v) => PortkeyInstall::find_version(v)?,
            None => PortkeyInstall::find()?,
        };
        let mut portkey = Portkey::new(install);
        portkey.retries = retries;
        portkey.user = checked.portkey_config.clone();
        portkey.turn_timeout = asked.turn_timeout;
        portkey.ready_timeout = asked.ready_timeout;
        // The routing is refused here, before anything starts, when the scenario cannot make one.
        portkey
            .routing(&config)
            .map_err(|e| FieldError::new("target.config", e))?;
        Ok(planned(checked, asked, TargetKind::Portkey, Arc::new(portkey), Ok(config.clone())))
    })
}

/// One LiteLLM arm per version of `versions` (each its venv, found by version), else one of
/// `$REHEARSE_LITELLM` or the pinned install; the user's `[target] config`, if any, checked
/// against each release's own keys before the next install is looked for.
fn litellm_arms(
    checked: &Checked,
    asked: &External,
    router: &crate::scenario::target::RouterSpec,
    versions: &[String],
) -> Result<Vec<GatewayPlan>, Refused> {
    use crate::gateway::litellm::{Install as LlInstall, Litellm, RouterSettings};
    let file = &checked.file;
    let config = gateway_config(file, &checked.traffic, UPSTREAM_SLOT)?;
    per_version(versions, |v| {
        let install = match v {
            Some(v) => LlInstall::find_version(v)?,
            None => LlInstall::find()?,
        };
        if let Some(user) = &checked.litellm_config {
            let keys = crate::gateway::litellm::release_keys::ReleaseKeys::of(&install)?;
            keys.check(user, &install.version)?;
        }
        let gateway = Arc::new(Litellm {
            install,
            router: RouterSettings {
                retries: router.retries,
                allowed_fails: router.allowed_fails,
                cooldown: router.cooldown,
            },
            user: checked.litellm_config.clone(),
            turn_timeout: asked.turn_timeout,
            ready_timeout: asked.ready_timeout,
        });
        Ok(planned(checked, asked, TargetKind::Litellm, gateway, Ok(config.clone())))
    })
}

/// One arm per version of `versions` by `arm_of(Some(version))`, each named after its version
/// and pinned to it, else the one arm of `arm_of(None)` (the kind's default install); the
/// first refusal stops the rest (an install that is missing, a config its release refuses).
fn per_version(
    versions: &[String],
    mut arm_of: impl FnMut(Option<&String>) -> Result<GatewayPlan, Refused>,
) -> Result<Vec<GatewayPlan>, Refused> {
    if versions.is_empty() {
        return Ok(vec![arm_of(None)?]);
    }
    let mut arms = Vec::with_capacity(versions.len());
    for v in versions {
        let mut arm = arm_of(Some(v))?;
        arm.arm = v.clone();
        arm.pinned = Some(v.clone());
        arms.push(arm);
    }
    Ok(arms)
}

/// An arm of a `kind` target, named after it, of `gateway` with `config`, with what every arm
/// of the target shares (turns, warm-up, metrics endpoint, tokens); a version and
/// the kind's own facts are the caller's to add.
fn planned(
    checked: &Checked,
    asked: &External,
    kind: TargetKind,
    gateway: Arc<dyn Supervisor>,
    config: Result<GatewayConfig, FieldError>,
) -> GatewayPlan {
    let duration_ms = u64::try_from(checked.file.duration.as_millis()).unwrap_or(u64::MAX);
    GatewayPlan {
        arm: kind.as_str().to_string(),
        kind,
        pinned: None,
        gateway,
        config,
        turns: planned_turns(&checked.traffic, duration_ms),
        warmup: asked.warmup.clone(),
        metrics_url: asked
            .metrics_url
            .as_ref()
            .and_then(|u| u.parse::<http::Uri>().ok()),
        metrics_token: None,
        health_path: None,
        token_fp: None,
        model: None,
        tokens: Tokens::of(checked),
    }
}

/// The bearer token in `env` (empty without one), named by `[target] key`: set and not blank,
/// else refused.
fn token(env: Option<&str>, key: &'static str) -> Result<String, Refused> {
    let Some(env) = env else {
        return Ok(String::new());
    };
    if std::env::var_os(env).is_none() {
        return Err(Refused::TokenUnset(key, env.to_string()));
    }
    match std::env::var(env) {
        Ok(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(Refused::TokenEmpty(key, env.to_string())),
    }
}
