//! The `x-portkey-config` the harness's client sends with every turn (Portkey's open-source
//! gateway takes its routing per request), generated from the scenario: a `fallback` strategy
//! over one target per (model, profile) — the primary model first, then each fallback, each on
//! every profile of its provider in `[[profile]]` order — each target an OpenAI-compatible
//! `provider` at the mock upstream (`custom_host`), the profile's key as its `api_key`, the
//! model as `override_params.model`, and with `[target] retries` a `retry` on 429 and 5xx.
//! The order is stated, so a run is reproducible; [`Leaf`] names each target by the path
//! Portkey reports it by (`x-portkey-last-used-option-index: config.targets[2]`).

use serde_json::{Value, json};

use crate::gateway::openclaw::GatewayConfig;

/// The statuses a generated target retries on (Portkey's own default list).
const RETRY_ON: [u16; 5] = [429, 500, 502, 503, 504];

/// One target that sends to the upstream, as Portkey names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaf {
    /// Its path in the config (`config.targets[2]`), as the response header says it.
    pub path: String,
    /// The profile whose key it sends.
    pub profile: String,
    /// The model it asks for.
    pub model: String,
}

impl Leaf {
    /// `mockai:b gpt-4o`.
    pub fn label(&self) -> String {
        format!("{} {}", self.profile, self.model)
    }
}

/// A config and its targets, in order.
#[derive(Debug, Clone)]
pub struct Routing {
    /// The config sent (with the keys in it: never shown, see [`Routing::shown`]).
    pub config: Value,
    /// Its targets that send, in the order written.
    pub leaves: Vec<Leaf>,
}

/// The scenario cannot be turned into a Portkey config (a model whose provider has no profile).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RoutingError(pub String);

/// `PROVIDER/MODEL` split.
pub(crate) fn split_model(m: &str) -> (&str, &str) {
    m.split_once('/').unwrap_or(("", m))
}

/// The base URL of `provider` (the mock upstream's `http://ADDR/v1`).
pub(crate) fn host_of<'a>(config: &'a GatewayConfig, provider: &str) -> Option<&'a str> {
    config
        .providers
        .iter()
        .find(|p| p.id == provider)
        .map(|p| p.base_url.as_str())
}

/// One target at the upstream: the profile's key, the model, the retries.
fn leaf_json(host: &str, key: &str, model: &str, retries: u32) -> Value {
    let mut t = json!({
        "provider": "openai",
        "api_key": key,
        "custom_host": host,
        "override_params": { "model": model },
    });
    if retries > 0 {
        t["retry"] = json!({ "attempts": retries, "on_status_codes": RETRY_ON });
    }
    t
}

/// The generated config of `config` (its providers at the upstream), each target with
/// `retries`.
pub fn generated(config: &GatewayConfig, retries: u32) -> Result<Routing, RoutingError> {
    let mut targets = Vec::new();
    let mut leaves = Vec::new();
    for m in std::iter::once(&config.primary).chain(&config.fallbacks) {
        let (provider, model) = split_model(m);
        let host = host_of(config, provider)
            .ok_or_else(|| RoutingError(format!("model `{m}`: no provider `{provider}`")))?;
        let profiles: Vec<_> = config.profiles.iter().filter(|p| p.provider == provider).collect();
        if profiles.is_empty() {
            return Err(RoutingError(format!(
                "model `{m}`: no [[profile]] of provider `{provider}` to send it with"
            )));
        }
        for p in profiles {
            leaves.push(Leaf {
                path: format!("config.targets[{}]", targets.len()),
                profile: p.id.clone(),
                model: model.to_string(),
            });
            targets.push(leaf_json(host, &p.key, model, retries));
        }
    }
    Ok(Routing {
        config: json!({ "strategy": { "mode": "fallback" }, "targets": targets }),
        leaves,
    })
}

impl Routing {
    /// The config with every key replaced by its fingerprint (for the run directory and the
    /// report).
    pub fn shown(&self, keys: &[&str]) -> Value {
        crate::gateway::openclaw::overlay::fingerprinted(&self.config, keys)
    }

    /// The target a response's `x-portkey-last-used-option-index` names.
    #[cfg(test)]
    fn leaf_at(&self, path: &str) -> Option<&Leaf> {
        self.leaves.iter().find(|l| l.path == path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::openclaw::{ProfileSpec, ProviderSpec};

    fn config() -> GatewayConfig {
        let p = |id: &str, key: &str| ProfileSpec {
            id: id.into(),
            provider: "mockai".into(),
            key: key.into(),
        };
        GatewayConfig {
            providers: vec![ProviderSpec {
                id: "mockai".into(),
                base_url: "http://127.0.0.1:9/v1".into(),
                timeout_seconds: 30,
                models: vec![],
            }],
            profiles: vec![p("mockai:a", "sk-A"), p("mockai:b", "sk-B")],
            primary: "mockai/gpt-4o".into(),
            fallbacks: vec!["mockai/gpt-4o-mini".into()],
            agent_timeout_seconds: 600,
        }
    }

    #[test]
    fn the_primary_on_every_profile_comes_first_then_each_fallback() {
        let r = generated(&config(), 2).unwrap();
        let labels: Vec<String> = r.leaves.iter().map(Leaf::label).collect();
        assert_eq!(
            labels,
            ["mockai:a gpt-4o", "mockai:b gpt-4o", "mockai:a gpt-4o-mini", "mockai:b gpt-4o-mini"]
        );
        assert_eq!(r.config["strategy"]["mode"], "fallback");
        let t2 = &r.config["targets"][2];
        assert_eq!(t2["api_key"], "sk-A");
        assert_eq!(t2["custom_host"], "http://127.0.0.1:9/v1");
        assert_eq!(t2["override_params"]["model"], "gpt-4o-mini");
        assert_eq!(t2["retry"]["attempts"], 2);
        assert_eq!(r.leaf_at("config.targets[3]").map(Leaf::label).as_deref(), Some("mockai:b gpt-4o-mini"));
        let shown = r.shown(&["sk-A", "sk-B"]).to_string();
        assert!(!shown.contains("sk-A") && !shown.contains("sk-B"), "{shown}");
        assert!(generated(&config(), 0).unwrap().config["targets"][0].get("retry").is_none());
    }

    #[test]
    fn a_model_whose_provider_has_no_profile_is_refused() {
        let mut c = config();
        c.fallbacks = vec!["other/m".into()];
        assert!(generated(&c, 0).unwrap_err().0.contains("no provider `other`"));
    }
}
