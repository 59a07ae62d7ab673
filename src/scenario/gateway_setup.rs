//! What any OpenAI-compatible gateway the user runs (`[target] kind = "http"`) is pointed at,
//! gateway-neutral (docs/gateways.md): the mock upstream's base URL (`http://ADDR/v1`, OpenAI
//! chat completions), the models (`[models]`: primary, fallbacks) and one API key per
//! `[[profile]]` (its `token`: the upstream tells profiles apart by key), from the configuration
//! the scenario plans ([`GatewayConfig`], its providers at the mock upstream). Two forms: the
//! lines printed at the start of a run ([`text`]: a key shown only when asked — on a terminal —
//! else named by its profile and fingerprint) and the report's copy ([`block`]: fingerprints
//! only, never a key). OpenClaw's own form is `super::gateway::provider_block`.

use std::fmt::Write as _;

use crate::gateway::openclaw::GatewayConfig;

/// The API the mock upstream serves at the base URL.
pub(crate) const API: &str = "openai-chat-completions";

/// The line every printed setup ends with: what a gateway the user runs remembers.
pub(crate) const KEEPS_STATE: &str = "a gateway you run keeps its cooldowns and failure counts \
    between runs (LiteLLM's router, OpenClaw's auth state): restart it for a clean run";

/// The base URL of `c`'s providers (all at the mock upstream).
fn base_url(c: &GatewayConfig) -> &str {
    c.providers.first().map_or("", |p| p.base_url.as_str())
}

/// The models of `provider` in `c`, as `PROVIDER/ID`.
fn models_of(c: &GatewayConfig, provider: &str) -> Vec<String> {
    c.providers
        .iter()
        .filter(|p| p.id == provider)
        .flat_map(|p| p.models.iter().map(move |m| format!("{}/{}", p.id, m.id)))
        .collect()
}

/// report.json `target.gateway_setup`: base URL, API, models and, per profile, its provider,
/// models and key fingerprint. No key.
pub(crate) fn block(c: &GatewayConfig) -> serde_json::Value {
    let profiles: Vec<serde_json::Value> = c
        .profiles
        .iter()
        .map(|p| {
            serde_json::json!({
                "id": p.id, "provider": p.provider, "models": models_of(c, &p.provider),
                "key_fp": crate::util::fingerprint(&p.key),
            })
        })
        .collect();
    serde_json::json!({
        "base_url": base_url(c),
        "api": API,
        "primary": c.primary,
        "fallbacks": c.fallbacks,
        "profiles": profiles,
    })
}

/// The lines printed at a run's start, after a first line of the caller's: the base URL, the
/// models, one line per profile with its API key (`show_keys`) or, without, where the key is
/// written and its fingerprint; then [`KEEPS_STATE`].
pub(crate) fn text(c: &GatewayConfig, show_keys: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "  base URL   {} (OpenAI chat completions: POST /chat/completions under it)",
        base_url(c)
    );
    let fallbacks = if c.fallbacks.is_empty() {
        "none".to_string()
    } else {
        c.fallbacks.join(", ")
    };
    let _ = writeln!(o, "  models     primary {} · fallbacks {fallbacks}", c.primary);
    o.push_str("  API key per profile (one deployment per key: the upstream tells profiles apart by key):\n");
    let width = c.profiles.iter().map(|p| p.id.len()).max().unwrap_or(0);
    for p in &c.profiles {
        let key = if show_keys {
            p.key.clone()
        } else {
            format!(
                "the `token` of [[profile]] {} (fingerprint {}; printed on a terminal only)",
                p.id,
                crate::util::fingerprint(&p.key)
            )
        };
        let _ = writeln!(
            o,
            "    {:width$}  {}  api_key {key}",
            p.id,
            models_of(c, &p.provider).join(", ")
        );
    }
    let _ = write!(o, "  {KEEPS_STATE}");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::openclaw::{ModelSpec, ProfileSpec, ProviderSpec};

    fn config() -> GatewayConfig {
        let provider = |id: &str, models: &[&str]| ProviderSpec {
            id: id.into(),
            base_url: "http://127.0.0.1:18081/v1".into(),
            timeout_seconds: 30,
            models: models.iter().map(|m| ModelSpec::new(*m)).collect(),
        };
        let profile = |id: &str, provider: &str, key: &str| ProfileSpec {
            id: id.into(),
            provider: provider.into(),
            key: key.into(),
        };
        GatewayConfig {
            providers: vec![provider("fallback", &["m2"]), provider("mockai", &["m1"])],
            profiles: vec![
                profile("mockai:a", "mockai", "sk-key-A"),
                profile("mockai:b", "mockai", "sk-key-B"),
                profile("fallback:f", "fallback", "sk-key-F"),
            ],
            primary: "mockai/m1".into(),
            fallbacks: vec!["fallback/m2".into()],
            agent_timeout_seconds: 600,
        }
    }

    #[test]
    fn the_setup_names_the_base_url_models_and_a_key_per_profile_without_openclaw() {
        let c = config();
        let shown = text(&c, true);
        assert!(shown.contains("base URL   http://127.0.0.1:18081/v1"), "{shown}");
        assert!(shown.contains("primary mockai/m1 · fallbacks fallback/m2"), "{shown}");
        assert!(shown.contains("mockai:a    mockai/m1  api_key sk-key-A"), "{shown}");
        assert!(shown.contains("fallback:f  fallback/m2  api_key sk-key-F"), "{shown}");
        assert!(shown.contains("restart it for a clean run"), "{shown}");
        assert!(!shown.to_lowercase().contains("openclaw.json"), "{shown}");
        assert!(!shown.contains("paste-api-key"), "{shown}");
    }

    #[test]
    fn without_keys_shown_and_in_the_report_a_key_is_its_fingerprint() {
        let c = config();
        let hidden = text(&c, false);
        let block = block(&c).to_string();
        for key in ["sk-key-A", "sk-key-B", "sk-key-F"] {
            assert!(!hidden.contains(key), "{hidden}");
            assert!(!block.contains(key), "{block}");
            let fp = crate::util::fingerprint(key);
            assert!(hidden.contains(&fp), "{hidden}");
            assert!(block.contains(&fp), "{block}");
        }
        let b = super::block(&c);
        assert_eq!(b["base_url"], "http://127.0.0.1:18081/v1");
        assert_eq!(b["api"], API);
        assert_eq!(b["profiles"][1]["models"][0], "mockai/m1");
        assert_eq!(b["fallbacks"][0], "fallback/m2");
    }
}
