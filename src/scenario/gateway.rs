//! A scenario → what an external gateway needs: the OpenClaw gateway's configuration (one
//! provider per scenario provider, all pointing at the mock upstream; the profiles and their
//! tokens; the traffic's model as the primary and the scenario's fallbacks —
//! `[models] fallbacks`, else `[engine.modelFailover] fallbacks` (`super::models`)) and the turns to send (the scenario's model calls, at their recorded times, one
//! stable `user` per traffic session). Used by validation and the plan (with the upstream slot,
//! [`UPSTREAM_SLOT`], which each arm fills with the address its mock upstream bound:
//! `rehearsal::plan::GatewayPlan::config_for`).

use std::collections::BTreeMap;

use crate::engine::RequestKind;
use crate::gateway::openclaw::user_config::UserConfig;
use crate::gateway::openclaw::{GatewayConfig, ModelSpec, ProfileSpec, ProviderSpec};
use crate::replay::traffic::TrafficLine;

pub(crate) use super::field::FieldError;
use super::format::ScenarioFile;

/// The upstream address a configuration is planned with, before any arm has bound its mock
/// upstream (a port nothing listens on); each arm's gateway gets its own address in its place.
pub(crate) const UPSTREAM_SLOT: &str = "http://127.0.0.1:1";

/// One turn of the replay: when, which conversation, streamed or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedTurn {
    /// Offset from the run start, ms.
    pub at_ms: u64,
    /// The traffic line's session (else `line-N`): the `user` of the turn.
    pub session: String,
    /// Streamed answer.
    pub stream: bool,
    /// The traffic line's index in the file.
    pub line: usize,
    /// The traffic line's `messages` (the conversation sent), if it has its own.
    pub messages: Option<Vec<crate::engine::request::ChatMessage>>,
}

/// The model calls before `duration_ms`, in order.
pub(crate) fn planned_turns(traffic: &[TrafficLine], duration_ms: u64) -> Vec<PlannedTurn> {
    traffic
        .iter()
        .enumerate()
        .filter(|(_, l)| l.at_ms < duration_ms)
        .filter_map(|(i, l)| match &l.kind {
            RequestKind::Llm {
                stream, messages, ..
            } => Some(PlannedTurn {
                at_ms: l.at_ms,
                session: l.session.clone().unwrap_or_else(|| format!("line-{i}")),
                stream: *stream,
                line: i,
                messages: messages.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// The one `PROVIDER/MODEL` the traffic's model calls name (the gateway's primary).
pub(crate) fn primary_model(traffic: &[TrafficLine]) -> Result<String, FieldError> {
    let mut models: Vec<&str> = traffic
        .iter()
        .filter_map(|l| match &l.kind {
            RequestKind::Llm { model, .. } => Some(model.as_str()),
            _ => None,
        })
        .collect();
    models.sort_unstable();
    models.dedup();
    match models.as_slice() {
        [] => Err(FieldError::new(
            "traffic",
            "an external target is driven by model calls: the traffic has none".into(),
        )),
        [one] if one.contains('/') => Ok(one.to_string()),
        [one] => Err(FieldError::new(
            "traffic",
            format!("model `{one}` must be PROVIDER/MODEL (the gateway's provider id)"),
        )),
        many => Err(FieldError::new(
            "traffic",
            format!(
                "the gateway has one primary model, but the traffic names {}: {}",
                many.len(),
                many.join(", ")
            ),
        )),
    }
}

/// The OpenClaw configuration for `file`, its providers at `upstream_url` (`http://ADDR`).
/// Errors name the scenario field.
pub fn gateway_config(
    file: &ScenarioFile,
    traffic: &[TrafficLine],
    upstream_url: &str,
) -> Result<GatewayConfig, FieldError> {
    gateway_config_with(file, traffic, upstream_url, None)
}

/// [`gateway_config`] over the user's own configuration (`[target] config`): without
/// `[models] fallbacks` or `[engine.modelFailover] fallbacks` in the scenario, the user's
/// `agents.defaults.model.fallbacks` are the fallbacks (each needs a `[[profile]]`).
pub fn gateway_config_with(
    file: &ScenarioFile,
    traffic: &[TrafficLine],
    upstream_url: &str,
    user: Option<&UserConfig>,
) -> Result<GatewayConfig, FieldError> {
    let primary = primary_model(traffic)?;
    let (fallbacks, fallbacks_field) = match (file.gateway_fallbacks(), user.and_then(UserConfig::fallbacks)) {
        (Some((f, field)), _) => (f.to_vec(), field),
        (None, Some(f)) => (f, "target.config: agents.defaults.model.fallbacks"),
        (None, None) => (Vec::new(), "models.fallbacks"),
    };
    let mut providers: BTreeMap<String, ProviderSpec> = BTreeMap::new();
    for (i, m) in std::iter::once(&primary).chain(&fallbacks).enumerate() {
        let Some((provider, id)) = m
            .split_once('/')
            .filter(|(p, id)| !p.is_empty() && !id.is_empty())
        else {
            return Err(FieldError::new(
                format!("{fallbacks_field}[{}]", i.saturating_sub(1)),
                format!("`{m}` must be PROVIDER/MODEL"),
            ));
        };
        let p = providers
            .entry(provider.to_string())
            .or_insert_with(|| ProviderSpec {
                id: provider.to_string(),
                base_url: format!("{upstream_url}/v1"),
                timeout_seconds: file.target.provider_timeout_s(),
                models: Vec::new(),
            });
        if !p.models.iter().any(|x| x.id == id) {
            p.models.push(ModelSpec::new(id));
        }
    }
    let profiles: Vec<ProfileSpec> = file
        .profile
        .iter()
        .filter(|p| providers.contains_key(&p.provider))
        .map(|p| ProfileSpec {
            id: p.id.clone(),
            provider: p.provider.clone(),
            key: p.credential().to_string(),
        })
        .collect();
    for id in providers.keys() {
        if !profiles.iter().any(|p| &p.provider == id) {
            return Err(FieldError::new(
                "profile",
                format!(
                    "provider `{id}` has no [[profile]]: OpenClaw needs a key for each provider"
                ),
            ));
        }
    }
    let config = GatewayConfig {
        providers: providers.into_values().collect(),
        profiles,
        primary,
        fallbacks,
        agent_timeout_seconds: file.target.agent_timeout_s(),
    };
    config
        .validate()
        .map_err(|e| FieldError::new("profile", e.0))?;
    Ok(config)
}

/// The user's configuration as the gateway's base (`[target] config`), with what the
/// scenario's `[target]` sets itself.
pub(crate) fn base_config(
    file: &ScenarioFile,
    user: Option<&UserConfig>,
) -> Option<crate::gateway::openclaw::BaseConfig> {
    user.map(|u| crate::gateway::openclaw::BaseConfig {
        user: u.clone(),
        options: crate::gateway::openclaw::overlay::OverlayOptions {
            provider_timeout: file.target.provider_timeout.is_some(),
            agent_timeout: file.target.agent_timeout.is_some(),
        },
    })
}

/// The OpenClaw provider block an `http` target's user pastes into their gateway's config,
/// from the configuration `c` (its providers at the mock upstream): `models.providers` (OpenAI
/// chat completions), the profiles to seed (their keys are the scenario's `[[profile]]` tokens,
/// never printed) and their order, and the agent's model chain.
pub(crate) fn provider_block(c: &GatewayConfig) -> serde_json::Value {
    let providers: serde_json::Map<String, serde_json::Value> = c
        .providers
        .iter()
        .map(|p| {
            let models: Vec<serde_json::Value> = p
                .models
                .iter()
                .map(|m| {
                    serde_json::json!({
                        "id": m.id, "name": m.id, "contextWindow": m.context_window,
                        "maxTokens": m.max_tokens,
                    })
                })
                .collect();
            (
                p.id.clone(),
                serde_json::json!({
                    "baseUrl": p.base_url, "api": crate::gateway::openclaw::user_config::UPSTREAM_API,
                    "timeoutSeconds": p.timeout_seconds, "models": models,
                }),
            )
        })
        .collect();
    let profiles: serde_json::Map<String, serde_json::Value> = c
        .profiles
        .iter()
        .map(|p| {
            (
                p.id.clone(),
                serde_json::json!({"provider": p.provider, "mode": "api_key"}),
            )
        })
        .collect();
    serde_json::json!({
        "models": {"providers": providers},
        "auth": {"profiles": profiles, "order": c.order()},
        "agents": {"defaults": {"model": {"primary": c.primary, "fallbacks": c.fallbacks}}},
    })
}

/// Profile id → fingerprint of its token (as upstream records name tokens).
pub(crate) fn profile_fingerprints(file: &ScenarioFile) -> BTreeMap<String, String> {
    file.profile
        .iter()
        .map(|p| (p.id.clone(), crate::util::fingerprint(p.credential())))
        .collect()
}

/// The scenario's profiles by token fingerprint, for fault scopes and ground-truth subjects
/// ([`crate::upstream::TokenOwners`]).
pub(crate) fn token_owners(file: &ScenarioFile) -> crate::upstream::TokenOwners {
    crate::upstream::TokenOwners::new(
        file.profile
            .iter()
            .map(|p| (p.credential(), p.id.as_str(), p.provider.as_str())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::traffic::parse_traffic;

    const SCENARIO: &str = r#"
name = "x"
duration = "60s"
traffic = "t.jsonl"
[target]
kind = "openclaw"
provider_timeout = "5s"
[engine.modelFailover]
fallbacks = ["fallback/m2"]
[[profile]]
provider = "mockai"
id = "mockai:a"
token = "key-A"
[[profile]]
provider = "mockai"
id = "mockai:b"
token = "key-B"
[[profile]]
provider = "fallback"
id = "fallback:f"
token = "key-F"
"#;

    fn traffic(text: &str) -> Vec<TrafficLine> {
        parse_traffic(text, "t.jsonl").unwrap()
    }

    #[test]
    fn the_gateway_config_follows_the_scenario() {
        let file = ScenarioFile::parse(SCENARIO, "x.toml").unwrap();
        let t = traffic(
            "{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":true,\"max_tokens\":16,\"session\":\"s1\"}\n\
             {\"at_ms\":70000,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":16}\n",
        );
        let c = gateway_config(&file, &t, "http://127.0.0.1:9").unwrap();
        assert_eq!(c.primary, "mockai/m1");
        assert_eq!(c.fallbacks, ["fallback/m2"]);
        let ids: Vec<&str> = c.providers.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["fallback", "mockai"]);
        assert_eq!(c.providers[1].timeout_seconds, 5);
        assert_eq!(c.providers[1].base_url, "http://127.0.0.1:9/v1");
        assert_eq!(c.order()["mockai"], ["mockai:a", "mockai:b"]);
        assert_eq!(c.profiles[0].key, "key-A");
        let turns = planned_turns(&t, 60_000);
        assert_eq!(turns.len(), 1, "the second call is after `duration`");
        assert_eq!((turns[0].session.as_str(), turns[0].stream), ("s1", true));
        assert_eq!(
            profile_fingerprints(&file)["mockai:b"],
            crate::util::fingerprint("key-B")
        );
    }

    #[test]
    fn the_user_config_gives_the_fallbacks_the_scenario_does_not() {
        let t = traffic("{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":16}\n");
        let user = UserConfig::parse(
            "{agents: {defaults: {model: {fallbacks: ['fallback/m9']}}}}",
            std::path::Path::new("gw.json5"),
        )
        .unwrap();
        let without = SCENARIO.replace("fallbacks = [\"fallback/m2\"]", "fallbacks = []");
        let file = ScenarioFile::parse(&without, "x.toml").unwrap();
        let c = gateway_config_with(&file, &t, "http://127.0.0.1:9", Some(&user)).unwrap();
        assert_eq!(c.fallbacks, ["fallback/m9"]);
        // The scenario's own fallbacks win.
        let file = ScenarioFile::parse(SCENARIO, "x.toml").unwrap();
        let c = gateway_config_with(&file, &t, "http://127.0.0.1:9", Some(&user)).unwrap();
        assert_eq!(c.fallbacks, ["fallback/m2"]);
        // A fallback whose provider has no [[profile]] is named where it came from.
        let user = UserConfig::parse(
            "{agents: {defaults: {model: {fallbacks: ['nokey/m1']}}}}",
            std::path::Path::new("gw.json5"),
        )
        .unwrap();
        let file = ScenarioFile::parse(&without, "x.toml").unwrap();
        let e = gateway_config_with(&file, &t, "u", Some(&user)).unwrap_err();
        assert!(e.message.contains("provider `nokey` has no [[profile]]"), "{e:?}");
    }

    #[test]
    fn models_give_the_generated_config_its_fallbacks_before_the_engine_table_and_the_users() {
        let t = traffic("{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":16}\n");
        let user = UserConfig::parse(
            "{agents: {defaults: {model: {fallbacks: ['fallback/m9']}}}}",
            std::path::Path::new("gw.json5"),
        )
        .unwrap();
        // `[models]` alone, no engine table: the gateway's chain.
        let models_only = SCENARIO.replace(
            "[engine.modelFailover]\nfallbacks = [\"fallback/m2\"]",
            "[models]\nprimary = \"mockai/m1\"\nfallbacks = [\"fallback/m3\", \"mockai/m4\"]",
        );
        let file = ScenarioFile::parse(&models_only, "x.toml").unwrap();
        let c = gateway_config_with(&file, &t, "http://127.0.0.1:9", Some(&user)).unwrap();
        assert_eq!(c.fallbacks, ["fallback/m3", "mockai/m4"]);
        assert_eq!(c.primary, "mockai/m1");
        let mockai = c.providers.iter().find(|p| p.id == "mockai").unwrap();
        let ids: Vec<&str> = mockai.models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["m1", "m4"]);
        // With the engine's override as well, the gateway still reads `[models]`.
        let both = format!("{models_only}\n[engine.modelFailover]\nfallbacks = [\"mockai/m4\"]\n");
        let file = ScenarioFile::parse(&both, "x.toml").unwrap();
        let c = gateway_config(&file, &t, "http://127.0.0.1:9").unwrap();
        assert_eq!(c.fallbacks, ["fallback/m3", "mockai/m4"]);
        assert_eq!(file.engine_fallbacks(), ["mockai/m4"]);
    }

    #[test]
    fn what_openclaw_cannot_be_given_is_named() {
        let file = ScenarioFile::parse(SCENARIO, "x.toml").unwrap();
        let two = traffic(
            "{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":16}\n\
             {\"at_ms\":1,\"kind\":\"llm\",\"model\":\"mockai/m3\",\"max_tokens\":16}\n",
        );
        assert!(
            gateway_config(&file, &two, "u")
                .unwrap_err()
                .message
                .contains("one primary model")
        );
        let none = traffic("{\"at_ms\":0,\"kind\":\"tool\",\"tool\":\"x\",\"idempotent\":true}\n");
        assert_eq!(
            gateway_config(&file, &none, "u").unwrap_err().field,
            "traffic"
        );
        let no_fallback_key = SCENARIO.replace("provider = \"fallback\"", "provider = \"other\"");
        let file = ScenarioFile::parse(&no_fallback_key, "x.toml").unwrap();
        let one =
            traffic("{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":16}\n");
        let e = gateway_config(&file, &one, "u").unwrap_err();
        assert!(
            e.message.contains("provider `fallback` has no [[profile]]"),
            "{e:?}"
        );
    }
}
