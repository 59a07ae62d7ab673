//! The user's own LiteLLM config as the base (`[target] config`), with what the harness owns
//! laid over it — every change listed for the report:
//!
//! - **owned** (overridden when the user's file has them): `model_list` (the scenario's
//!   deployments at the mock upstream with the profiles' keys: the harness owns addresses and
//!   keys), `router_settings.fallbacks` when `[models]` names fallbacks, the router settings
//!   `[target.router]` states, `litellm_settings.callbacks` (`prometheus` only),
//!   `require_auth_for_metrics_endpoint: false`, and `general_settings`' master key, no
//!   database, no spend logs, no background health checks, no budget resets;
//! - **turned off** (removed: they reach outside or keep state across runs):
//!   `environment_variables`, `router_settings` Redis and caching (`redis_*`, `cache_responses`,
//!   `cache_kwargs`), `litellm_settings` callbacks of other kinds (`success_callback`,
//!   `failure_callback`, `service_callback`, `audit_log_callbacks`), `cache`/`cache_params`,
//!   `general_settings` `database_url`, `alerting`, `alerting_args`;
//! - the user's `allowed_fails_policy` is kept (it already keeps the failure share out); without
//!   one the harness's is added ([`super::config`]).
//!
//! Everything else of the user's stays as written (its keys checked against the release:
//! `super::release_keys`).

use serde_json::{Map, Value};

/// The overlaid config and what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Overlaid {
    /// The config the proxy gets.
    pub config: Value,
    /// Key paths of the user's the harness set to its own value.
    pub overridden: Vec<String>,
    /// Key paths of the user's the harness removed.
    pub turned_off: Vec<String>,
}

/// Removed from each section.
const OFF: [(&str, &[&str]); 3] = [
    (
        "router_settings",
        &["redis_host", "redis_port", "redis_password", "redis_url", "cache_responses", "cache_kwargs"],
    ),
    (
        "litellm_settings",
        &["success_callback", "failure_callback", "service_callback", "audit_log_callbacks", "cache", "cache_params"],
    ),
    ("general_settings", &["database_url", "alerting", "alerting_args"]),
];

/// `generated` (the harness's, [`super::config::generate`]) laid over `user`.
pub(crate) fn overlay(user: &Value, generated: &Value) -> Overlaid {
    let mut out = Overlaid {
        config: match user {
            Value::Object(_) => user.clone(),
            _ => Value::Object(Map::new()),
        },
        overridden: Vec::new(),
        turned_off: Vec::new(),
    };
    let Some(root) = out.config.as_object_mut() else {
        return out;
    };
    if root.remove("environment_variables").is_some() {
        out.turned_off.push("environment_variables".into());
    }
    if root.contains_key("model_list") {
        out.overridden.push("model_list".into());
    }
    root.insert("model_list".into(), generated["model_list"].clone());
    for (section, keys) in OFF {
        let Some(m) = root.get_mut(section).and_then(Value::as_object_mut) else {
            continue;
        };
        for k in keys {
            if m.remove(*k).is_some() {
                out.turned_off.push(format!("{section}.{k}"));
            }
        }
    }
    for section in ["router_settings", "litellm_settings", "general_settings"] {
        let Some(ours) = generated.get(section).and_then(Value::as_object) else {
            continue;
        };
        let theirs = root
            .entry(section)
            .or_insert_with(|| Value::Object(Map::new()));
        if !theirs.is_object() {
            out.overridden.push(section.to_string());
            *theirs = Value::Object(Map::new());
        }
        let Some(theirs) = theirs.as_object_mut() else {
            continue;
        };
        for (k, v) in ours {
            if section == "router_settings" && k == "allowed_fails_policy" {
                theirs.entry(k.clone()).or_insert_with(|| v.clone());
                continue;
            }
            match theirs.insert(k.clone(), v.clone()) {
                Some(old) if &old != v => out.overridden.push(format!("{section}.{k}")),
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_harness_owns_addresses_keys_and_metrics_and_turns_off_what_reaches_outside() {
        let user = json!({
            "model_list": [{"model_name": "gpt-4o", "litellm_params": {"model": "openai/gpt-4o", "api_key": "os.environ/OPENAI_API_KEY"}}],
            "environment_variables": {"OPENAI_API_KEY": "sk-real"},
            "router_settings": {"num_retries": 5, "redis_host": "redis.internal", "routing_strategy": "least-busy"},
            "litellm_settings": {"callbacks": ["langfuse"], "success_callback": ["datadog"], "drop_params": true},
            "general_settings": {"master_key": "sk-theirs", "database_url": "postgres://x"},
        });
        let generated = json!({
            "model_list": [{"model_name": "mockai/gpt-4o"}],
            "router_settings": {"num_retries": 2, "allowed_fails_policy": {"X": 1}},
            "litellm_settings": {"callbacks": ["prometheus"], "require_auth_for_metrics_endpoint": false},
            "general_settings": {"master_key": "sk-ours", "disable_spend_logs": true},
        });
        let o = overlay(&user, &generated);
        let c = &o.config;
        assert_eq!(c["model_list"], generated["model_list"]);
        assert!(c.get("environment_variables").is_none());
        assert_eq!(c["router_settings"]["num_retries"], 2);
        assert_eq!(c["router_settings"]["routing_strategy"], "least-busy", "the user's own stays");
        assert!(c["router_settings"].get("redis_host").is_none());
        assert_eq!(c["router_settings"]["allowed_fails_policy"], json!({"X": 1}));
        assert_eq!(c["litellm_settings"]["callbacks"], json!(["prometheus"]));
        assert!(c["litellm_settings"].get("success_callback").is_none());
        assert_eq!(c["litellm_settings"]["drop_params"], true);
        assert_eq!(c["general_settings"]["master_key"], "sk-ours");
        assert!(c["general_settings"].get("database_url").is_none());
        assert_eq!(
            o.overridden,
            ["model_list", "router_settings.num_retries", "litellm_settings.callbacks", "general_settings.master_key"]
        );
        assert_eq!(
            o.turned_off,
            ["environment_variables", "router_settings.redis_host", "litellm_settings.success_callback", "general_settings.database_url"]
        );
    }

    #[test]
    fn the_user_s_own_allowed_fails_policy_is_kept() {
        let user = json!({"router_settings": {"allowed_fails_policy": {"RateLimitErrorAllowedFails": 9}}});
        let generated = json!({"model_list": [], "router_settings": {"allowed_fails_policy": {"RateLimitErrorAllowedFails": 3}}});
        let o = overlay(&user, &generated);
        assert_eq!(o.config["router_settings"]["allowed_fails_policy"]["RateLimitErrorAllowedFails"], 9);
        assert!(o.overridden.is_empty(), "{:?}", o.overridden);
    }
}
