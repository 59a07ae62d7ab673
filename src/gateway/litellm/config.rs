//! The LiteLLM proxy config generated for one arm, from what every gateway is handed
//! ([`GatewayConfig`]: providers at the mock upstream, profiles and their keys, the model
//! chain) and the scenario's router settings ([`RouterSettings`], `[target.router]`). Written
//! as JSON (YAML's superset: LiteLLM's `yaml.safe_load` reads it).
//!
//! - `model_list`: one deployment per model of the chain and profile of its provider, in the
//!   scenario's order: `model_name` the scenario's `PROVIDER/MODEL` (what turns and fallbacks
//!   name), `litellm_params` `model: openai/MODEL` (an OpenAI-compatible endpoint: it sends
//!   `MODEL`), `api_base` the mock upstream's `/v1`, `api_key` the profile's token, `order` the
//!   profile's place among its provider's (1 first: the router tries them in that order, so a
//!   run is reproducible), `timeout` the provider's; `model_info.id` `PROFILE/MODEL`, which its
//!   `x-litellm-model-id` header then names.
//! - `router_settings`: `num_retries`, `allowed_fails`, `cooldown_time` as the scenario says,
//!   `fallbacks` from `[models]`, and always an `allowed_fails_policy` (every error class at
//!   `allowed_fails`, LiteLLM's default 3 when unset): with a policy LiteLLM cools a deployment
//!   on its failures in the minute only, never on the failure share of its 60 s counter, in
//!   which the warm-up's successes would count.
//! - `litellm_settings`: the `prometheus` callback and `/metrics` without auth; nothing else.
//! - `general_settings`: the arm's master key (the turns' bearer token), no database, no spend
//!   logs, no background health checks.

use std::time::Duration;

use serde_json::{Value, json};

use crate::gateway::openclaw::GatewayConfig;

/// LiteLLM's own default of `allowed_fails` (`litellm.allowed_fails`).
const DEFAULT_ALLOWED_FAILS: u32 = 3;

/// The error classes of LiteLLM's `AllowedFailsPolicy`.
const POLICY_CLASSES: [&str; 6] = [
    "BadRequestErrorAllowedFails",
    "AuthenticationErrorAllowedFails",
    "TimeoutErrorAllowedFails",
    "RateLimitErrorAllowedFails",
    "ContentPolicyViolationErrorAllowedFails",
    "InternalServerErrorAllowedFails",
];

/// The router settings the scenario states (`[target.router]`); `None` leaves LiteLLM's own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RouterSettings {
    /// `num_retries`.
    pub retries: Option<u32>,
    /// `allowed_fails`.
    pub allowed_fails: Option<u32>,
    /// `cooldown_time`.
    pub cooldown: Option<Duration>,
}

/// The deployment id of `profile`'s deployment of `model` (`x-litellm-model-id`).
fn deployment_id(profile: &str, model: &str) -> String {
    format!("{profile}/{model}")
}

/// The generated config, its master key `master_key`.
pub(crate) fn generate(c: &GatewayConfig, router: &RouterSettings, master_key: &str) -> Value {
    let mut model_list = Vec::new();
    for model in std::iter::once(&c.primary).chain(&c.fallbacks) {
        let Some((provider, id)) = model.split_once('/') else {
            continue;
        };
        let Some(p) = c.providers.iter().find(|p| p.id == provider) else {
            continue;
        };
        for (i, profile) in c.profiles.iter().filter(|x| x.provider == provider).enumerate() {
            model_list.push(json!({
                "model_name": model,
                "litellm_params": {
                    "model": format!("openai/{id}"),
                    "api_base": p.base_url,
                    "api_key": profile.key,
                    "order": i + 1,
                    "timeout": p.timeout_seconds,
                },
                "model_info": { "id": deployment_id(&profile.id, id) },
            }));
        }
    }
    let mut rs = serde_json::Map::new();
    if let Some(n) = router.retries {
        rs.insert("num_retries".into(), json!(n));
    }
    if let Some(n) = router.allowed_fails {
        rs.insert("allowed_fails".into(), json!(n));
    }
    if let Some(d) = router.cooldown {
        rs.insert("cooldown_time".into(), json!(d.as_secs_f64()));
    }
    if !c.fallbacks.is_empty() {
        rs.insert("fallbacks".into(), json!([{ c.primary.clone(): c.fallbacks }]));
    }
    rs.insert(
        "allowed_fails_policy".into(),
        policy(router.allowed_fails.unwrap_or(DEFAULT_ALLOWED_FAILS)),
    );
    json!({
        "model_list": model_list,
        "router_settings": rs,
        "litellm_settings": {
            "callbacks": ["prometheus"],
            "require_auth_for_metrics_endpoint": false,
        },
        "general_settings": harness_general(master_key),
    })
}

/// `allowed_fails_policy` with every error class at `n`.
pub(crate) fn policy(n: u32) -> Value {
    Value::Object(POLICY_CLASSES.iter().map(|k| ((*k).to_string(), json!(n))).collect())
}

/// What the harness sets in `general_settings`, whatever the user's says.
fn harness_general(master_key: &str) -> Value {
    json!({
        "master_key": master_key,
        "disable_spend_logs": true,
        "store_model_in_db": false,
        "background_health_checks": false,
        "disable_reset_budget": true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::openclaw::{ModelSpec, ProfileSpec, ProviderSpec};

    fn three_keys() -> GatewayConfig {
        let provider = |id: &str, m: &str| ProviderSpec {
            id: id.into(),
            base_url: "http://127.0.0.1:18081/v1".into(),
            timeout_seconds: 30,
            models: vec![ModelSpec::new(m)],
        };
        let profile = |id: &str, p: &str, k: &str| ProfileSpec {
            id: id.into(),
            provider: p.into(),
            key: k.into(),
        };
        GatewayConfig {
            providers: vec![provider("mockai", "gpt-4o"), provider("minai", "gpt-4o-mini")],
            profiles: vec![
                profile("mockai:a", "mockai", "sk-A"),
                profile("mockai:b", "mockai", "sk-B"),
                profile("minai:c", "minai", "sk-C"),
            ],
            primary: "mockai/gpt-4o".into(),
            fallbacks: vec!["minai/gpt-4o-mini".into()],
            agent_timeout_seconds: 600,
        }
    }

    #[test]
    fn one_ordered_deployment_per_model_and_profile_with_the_fallbacks_and_a_policy() {
        let router = RouterSettings {
            retries: Some(2),
            allowed_fails: Some(1),
            cooldown: Some(Duration::from_secs(25)),
        };
        let v = generate(&three_keys(), &router, "sk-master");
        let ml = v["model_list"].as_array().unwrap();
        assert_eq!(ml.len(), 3);
        assert_eq!(ml[0]["model_name"], "mockai/gpt-4o");
        assert_eq!(ml[0]["litellm_params"]["model"], "openai/gpt-4o");
        assert_eq!(ml[0]["litellm_params"]["api_key"], "sk-A");
        assert_eq!(ml[0]["litellm_params"]["order"], 1);
        assert_eq!(ml[1]["litellm_params"]["api_key"], "sk-B");
        assert_eq!(ml[1]["litellm_params"]["order"], 2);
        assert_eq!(ml[1]["model_info"]["id"], "mockai:b/gpt-4o");
        assert_eq!(ml[2]["model_name"], "minai/gpt-4o-mini");
        assert_eq!(ml[2]["litellm_params"]["order"], 1);
        assert_eq!(ml[2]["litellm_params"]["api_base"], "http://127.0.0.1:18081/v1");
        let rs = &v["router_settings"];
        assert_eq!(rs["num_retries"], 2);
        assert_eq!(rs["allowed_fails"], 1);
        assert_eq!(rs["cooldown_time"], 25.0);
        assert_eq!(rs["fallbacks"], json!([{"mockai/gpt-4o": ["minai/gpt-4o-mini"]}]));
        assert_eq!(rs["allowed_fails_policy"]["RateLimitErrorAllowedFails"], 1);
        assert_eq!(v["litellm_settings"]["callbacks"], json!(["prometheus"]));
        assert_eq!(v["litellm_settings"]["require_auth_for_metrics_endpoint"], false);
        assert_eq!(v["general_settings"]["master_key"], "sk-master");
    }

    #[test]
    fn unset_router_settings_stay_litellm_s_own_but_the_policy_is_always_there() {
        let mut c = three_keys();
        c.fallbacks.clear();
        let v = generate(&c, &RouterSettings::default(), "k");
        let rs = v["router_settings"].as_object().unwrap();
        assert_eq!(rs.keys().collect::<Vec<_>>(), ["allowed_fails_policy"]);
        assert_eq!(rs["allowed_fails_policy"]["InternalServerErrorAllowedFails"], DEFAULT_ALLOWED_FAILS);
        // Only the primary's deployments.
        assert_eq!(v["model_list"].as_array().unwrap().len(), 2);
    }
}
