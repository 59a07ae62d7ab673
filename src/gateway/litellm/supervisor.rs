//! LiteLLM behind the harness's gateway seam ([`crate::gateway::Supervisor`]): [`Litellm`] is
//! the install the plan found with the scenario's router settings and the user's config (if
//! any); its start writes the arm's config (generated, or the user's with the harness's
//! overlay), starts a fresh proxy ([`super::process::Proxy`]) with a master key of the arm's
//! own, and a started proxy gives the seam its turns' client (the master key, the primary model
//! group), its failure (exited or silent), its last lines, its `/metrics` (followed to
//! `/metrics/`), its effective config (keys fingerprinted) and its stop, its log kept.

use std::path::Path;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::config::{RouterSettings, generate};
use super::install::Install;
use super::overlay::overlay;
use super::process::{ENV_SET, Proxy};
use super::user_config::UserConfig;
use crate::gateway::openclaw::GatewayConfig;
use crate::gateway::{
    Effective, Ended, Facts, Found, Keep, StartError, Stop, Supervised, Supervisor, TurnClient,
};
use crate::replay::http::TargetError;
use crate::util::secrets::Scrubber;

/// Over the user's config: the key paths the harness overrode, and those it turned off.
type Changed = (Vec<String>, Vec<String>);

/// A LiteLLM install the plan found, and what its proxies start with.
#[derive(Debug, Clone)]
pub struct Litellm {
    /// The install.
    pub install: Install,
    /// `[target.router]`.
    pub router: RouterSettings,
    /// `[target] config`, the base of the generated one.
    pub user: Option<UserConfig>,
    /// How long one turn may take.
    pub turn_timeout: Duration,
    /// How long its liveness path may take to answer after the start.
    pub ready_timeout: Duration,
}

impl Litellm {
    /// The config a proxy of this arm runs with `config` and `master_key`, and (over the user's)
    /// what the harness overrode and turned off.
    pub(crate) fn effective(
        &self,
        config: &GatewayConfig,
        master_key: &str,
    ) -> (Value, Option<Changed>) {
        let generated = generate(config, &self.router, master_key);
        match &self.user {
            None => (generated, None),
            Some(u) => {
                let o = overlay(&u.value, &generated);
                (o.config, Some((o.overridden, o.turned_off)))
            }
        }
    }
}

impl Supervisor for Litellm {
    fn facts(&self) -> Facts {
        Facts {
            name: "LiteLLM".into(),
            found: Some(Found {
                version: self.install.version.clone(),
                executable: self.install.litellm.clone(),
            }),
            url: None,
            configured: true,
        }
    }

    fn start<'a>(
        &'a self,
        config: Option<&'a GatewayConfig>,
        dir: &'a Path,
    ) -> BoxFuture<'a, Result<Box<dyn Supervised>, StartError>> {
        Box::pin(async move {
            let Some(config) = config else {
                return Err(StartError::new("LiteLLM needs a configuration", Vec::new()));
            };
            let master_key = format!("sk-rehearse-{:032x}", rand::random::<u128>());
            let (effective, over_user) = self.effective(config, &master_key);
            let secrets = Scrubber::fingerprinting(
                config
                    .profiles
                    .iter()
                    .map(|p| p.key.clone())
                    .chain([master_key.clone()]),
            );
            let proxy = Proxy::start(
                &self.install.litellm,
                &effective,
                &master_key,
                dir,
                self.ready_timeout,
                secrets,
            )
            .await?;
            let metrics = format!("{}/metrics", proxy.base_url()).parse::<http::Uri>().ok();
            Ok(Box::new(Started {
                proxy,
                model: config.primary.clone(),
                turn_timeout: self.turn_timeout,
                shown: fingerprinted(effective),
                over_user,
                metrics,
            }) as Box<dyn Supervised>)
        })
    }

    fn says(&self) -> Option<String> {
        super::install::package_version(&self.install.python).ok()
    }
}

/// `config` with every `api_key` and the master key replaced by its fingerprint.
pub(crate) fn fingerprinted(mut config: Value) -> Value {
    if let Some(list) = config.get_mut("model_list").and_then(Value::as_array_mut) {
        for d in list {
            if let Some(k) = d.pointer_mut("/litellm_params/api_key")
                && let Some(s) = k.as_str()
            {
                *k = Value::String(format!("fingerprint {}", crate::util::fingerprint(s)));
            }
        }
    }
    if let Some(k) = config.pointer_mut("/general_settings/master_key")
        && let Some(s) = k.as_str()
    {
        *k = Value::String(format!("fingerprint {}", crate::util::fingerprint(s)));
    }
    config
}

/// A started proxy.
#[derive(Debug)]
struct Started {
    proxy: Proxy,
    model: String,
    turn_timeout: Duration,
    shown: Value,
    over_user: Option<Changed>,
    metrics: Option<http::Uri>,
}

impl Supervised for Started {
    fn url(&self) -> String {
        self.proxy.base_url()
    }

    fn client(&self) -> Result<TurnClient, TargetError> {
        Ok(self
            .proxy
            .client(self.turn_timeout)?
            .with_model(&self.model)
            .with_said(crate::wire::said::SaidBy::Litellm))
    }

    fn alive(&mut self) -> bool {
        self.proxy.failure().is_none()
    }

    fn down(&mut self) -> Option<String> {
        self.proxy.failure()
    }

    fn last_lines(&self) -> Vec<String> {
        self.proxy.last_lines()
    }

    fn isolation(&self) -> Option<String> {
        Some("none".into())
    }

    fn effective(&self) -> Option<Effective> {
        // Over the user's config: its keys overridden and turned off, then the process's
        // sandbox; over a generated one, the sandbox alone (a note in the report).
        let (o, mut off) = self.over_user.clone().unwrap_or_default();
        off.extend(ENV_SET.iter().map(|s| (*s).to_string()));
        let over_user = Some((o, off));
        Some(Effective {
            name: "litellm-config.json",
            config: Ok(self.shown.clone()),
            over_user,
        })
    }

    fn metrics_url(&self) -> Option<http::Uri> {
        self.metrics.clone()
    }

    fn stop(self: Box<Self>) -> BoxFuture<'static, Ended> {
        let Started { proxy, .. } = *self;
        let master_key = proxy.master_key().to_string();
        Box::pin(async move {
            let s = proxy.stop().await;
            Ended {
                stop: Some(Stop {
                    graceful: s.graceful,
                    took: s.took,
                    survivors: s.survivors,
                    left_in_tmp: Vec::new(),
                }),
                decisions: None,
                auth: None,
                keep: vec![Keep {
                    from: s.log,
                    stem: "litellm",
                    ext: "log",
                }],
                secrets: vec![master_key],
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_fingerprinted_in_what_the_report_shows() {
        let c = json!({
            "model_list": [{"litellm_params": {"api_key": "sk-secret-A"}}],
            "general_settings": {"master_key": "sk-master"},
        });
        let s = fingerprinted(c).to_string();
        assert!(!s.contains("sk-secret-A") && !s.contains("sk-master"), "{s}");
        assert!(s.contains(&crate::util::fingerprint("sk-secret-A")), "{s}");
    }
}
