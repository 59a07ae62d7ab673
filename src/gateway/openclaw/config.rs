//! `openclaw.json` for one rehearsal: one provider per scenario provider, all pointing at the
//! mock upstream, with the shape that worked against 2026.9.6 — `models.mode = "replace"`,
//! `models.catalogRefresh.enabled = false` (else it fetches its remote catalog even in replace
//! mode), `update.checkOnStart = false`, `api: "openai-completions"`, auth profiles and their
//! order, the agent's primary model and fallbacks, a loopback gateway with a token and the
//! chat-completions endpoint, and `logging.file`.
//!
//! Profile keys are never written here: the supervisor seeds them with
//! `openclaw models auth paste-api-key` ([`super::process`]), which also reorders
//! `auth.order`; [`restore_order`] puts ours back afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A configuration OpenClaw would reject or misread; the message names the profile or model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InvalidConfig(pub String);

/// A provider (one scenario provider) served by the mock upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSpec {
    /// The provider id (`mockai`).
    pub id: String,
    /// Its base URL: the mock upstream's `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
    /// The provider's request timeout (`timeoutSeconds`), whole seconds.
    pub timeout_seconds: u64,
    /// Its models.
    pub models: Vec<ModelSpec>,
}

/// One model of a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    /// The model id (`m1`); the agent names it `PROVIDER/ID`.
    pub id: String,
    /// `contextWindow`.
    pub context_window: u64,
    /// `maxTokens`: what OpenClaw sends as the completion limit, so also how many tokens the
    /// mock upstream streams back (keep it small: 16).
    pub max_tokens: u64,
}

impl ModelSpec {
    /// A model with a 128k context window and 16 completion tokens.
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            context_window: 128_000,
            max_tokens: 16,
        }
    }
}

/// An auth profile and its key.
#[derive(Clone, PartialEq)]
pub struct ProfileSpec {
    /// The profile id (`mockai:a`).
    pub id: String,
    /// Its provider's id.
    pub provider: String,
    /// The API key OpenClaw sends as the bearer token (seeded, never written to the config).
    pub key: String,
}

impl std::fmt::Debug for ProfileSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileSpec")
            .field("id", &self.id)
            .field("provider", &self.provider)
            .field("key_fp", &crate::util::fingerprint(&self.key))
            .finish()
    }
}

/// Everything `openclaw.json` says for one rehearsal.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayConfig {
    /// The providers.
    pub providers: Vec<ProviderSpec>,
    /// The profiles, in the order OpenClaw should try them per provider.
    pub profiles: Vec<ProfileSpec>,
    /// The agent's primary model (`mockai/m1`).
    pub primary: String,
    /// Its fallbacks, in order (`fallback/m2`).
    pub fallbacks: Vec<String>,
    /// `agents.defaults.timeoutSeconds`: the whole turn's limit.
    pub agent_timeout_seconds: u64,
}

/// Where and how the gateway listens, and where it logs (filled in by the supervisor).
#[derive(Clone, PartialEq)]
pub(crate) struct GatewaySettings {
    /// Loopback port.
    pub port: u16,
    /// The gateway's bearer token.
    pub token: String,
    /// `logging.file`.
    pub log_file: PathBuf,
}

impl std::fmt::Debug for GatewaySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewaySettings")
            .field("port", &self.port)
            .field("token_fp", &crate::util::fingerprint(&self.token))
            .field("log_file", &self.log_file)
            .finish()
    }
}

impl GatewayConfig {
    /// `auth.order`: per provider, its profiles in the order given.
    pub(crate) fn order(&self) -> BTreeMap<String, Vec<String>> {
        let mut order: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for p in &self.profiles {
            order
                .entry(p.provider.clone())
                .or_default()
                .push(p.id.clone());
        }
        order
    }

    /// Checks what OpenClaw would reject or misread: unknown providers, empty names, a primary
    /// or fallback naming no configured model.
    pub(crate) fn validate(&self) -> Result<(), InvalidConfig> {
        if self.providers.is_empty() {
            return Err(InvalidConfig("no providers".into()));
        }
        for p in &self.profiles {
            if !self.providers.iter().any(|q| q.id == p.provider) {
                return Err(InvalidConfig(format!(
                    "profile `{}` names unknown provider `{}`",
                    p.id, p.provider
                )));
            }
            if p.key.is_empty() || p.key.contains(['\n', '\r']) {
                return Err(InvalidConfig(format!(
                    "profile `{}` needs a one-line, non-empty key",
                    p.id
                )));
            }
        }
        for m in std::iter::once(&self.primary).chain(&self.fallbacks) {
            let known = m.split_once('/').is_some_and(|(prov, id)| {
                self.providers
                    .iter()
                    .any(|p| p.id == prov && p.models.iter().any(|x| x.id == id))
            });
            if !known {
                return Err(InvalidConfig(format!(
                    "model `{m}` is not PROVIDER/MODEL of a configured provider"
                )));
            }
        }
        Ok(())
    }

    /// The whole `openclaw.json`.
    pub(crate) fn to_json(&self, gw: &GatewaySettings) -> Value {
        let providers: serde_json::Map<String, Value> = self
            .providers
            .iter()
            .map(|p| {
                let models: Vec<Value> = p
                    .models
                    .iter()
                    .map(|m| {
                        json!({
                            "id": m.id, "name": m.id, "reasoning": false, "input": ["text"],
                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                            "contextWindow": m.context_window, "maxTokens": m.max_tokens,
                        })
                    })
                    .collect();
                let provider = json!({
                    "baseUrl": p.base_url, "api": "openai-completions",
                    "timeoutSeconds": p.timeout_seconds, "models": models,
                });
                (p.id.clone(), provider)
            })
            .collect();
        let profiles: serde_json::Map<String, Value> = self
            .profiles
            .iter()
            .map(|p| {
                (
                    p.id.clone(),
                    json!({"provider": p.provider, "mode": "api_key"}),
                )
            })
            .collect();
        json!({
            "models": {
                "mode": "replace",
                "catalogRefresh": {"enabled": false},
                "providers": providers,
            },
            "auth": {"profiles": profiles, "order": self.order()},
            "agents": {"defaults": {
                "model": {"primary": self.primary, "fallbacks": self.fallbacks},
                "timeoutSeconds": self.agent_timeout_seconds,
            }},
            "gateway": {
                "mode": "local",
                "port": gw.port,
                "bind": "loopback",
                "auth": {"mode": "token", "token": gw.token},
                "http": {"endpoints": {"chatCompletions": {"enabled": true}}},
            },
            "logging": {"file": gw.log_file},
            "update": {"checkOnStart": false},
        })
    }
}

/// Writes `config` as pretty JSON to `path` (atomically).
pub(crate) fn write_config(path: &Path, config: &Value) -> std::io::Result<()> {
    let mut text = serde_json::to_vec_pretty(config).map_err(std::io::Error::other)?;
    text.push(b'\n');
    crate::util::atomic::write_atomic(path, &text)
}

/// Puts `order` back as `auth.order` in the config at `path` (after `paste-api-key` moved the
/// pasted profile first), keeping whatever else OpenClaw added.
pub(crate) fn restore_order(path: &Path, order: &BTreeMap<String, Vec<String>>) -> std::io::Result<()> {
    let text = std::fs::read(path)?;
    let mut v: Value = serde_json::from_slice(&text).map_err(std::io::Error::other)?;
    let auth = v
        .as_object_mut()
        .ok_or_else(|| std::io::Error::other("openclaw.json is not an object"))?
        .entry("auth")
        .or_insert_with(|| json!({}));
    match auth.as_object_mut() {
        Some(a) => {
            a.insert("order".into(), json!(order));
        }
        None => return Err(std::io::Error::other("auth is not an object")),
    }
    write_config(path, &v)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> GatewayConfig {
        GatewayConfig {
            providers: vec![
                ProviderSpec {
                    id: "mockai".into(),
                    base_url: "http://127.0.0.1:9/v1".into(),
                    timeout_seconds: 5,
                    models: vec![ModelSpec::new("m1")],
                },
                ProviderSpec {
                    id: "fallback".into(),
                    base_url: "http://127.0.0.1:9/v1".into(),
                    timeout_seconds: 5,
                    models: vec![ModelSpec::new("m2")],
                },
            ],
            profiles: vec![
                ProfileSpec {
                    id: "mockai:a".into(),
                    provider: "mockai".into(),
                    key: "key-A".into(),
                },
                ProfileSpec {
                    id: "mockai:b".into(),
                    provider: "mockai".into(),
                    key: "key-B".into(),
                },
            ],
            primary: "mockai/m1".into(),
            fallbacks: vec!["fallback/m2".into()],
            agent_timeout_seconds: 600,
        }
    }

    fn settings() -> GatewaySettings {
        GatewaySettings {
            port: 18789,
            token: "gw-secret".into(),
            log_file: "/run/openclaw.log".into(),
        }
    }

    #[test]
    fn the_config_has_the_shape_that_worked() {
        let v = sample().to_json(&settings());
        assert_eq!(v["models"]["mode"], "replace");
        assert_eq!(v["models"]["catalogRefresh"]["enabled"], false);
        assert_eq!(v["update"]["checkOnStart"], false);
        let p = &v["models"]["providers"]["mockai"];
        assert_eq!(p["api"], "openai-completions");
        assert_eq!(p["baseUrl"], "http://127.0.0.1:9/v1");
        assert_eq!(p["timeoutSeconds"], 5);
        assert_eq!(p["models"][0]["id"], "m1");
        assert_eq!(p["models"][0]["maxTokens"], 16);
        assert_eq!(v["auth"]["profiles"]["mockai:b"]["mode"], "api_key");
        assert_eq!(
            v["auth"]["order"]["mockai"],
            json!(["mockai:a", "mockai:b"])
        );
        assert_eq!(v["agents"]["defaults"]["model"]["primary"], "mockai/m1");
        assert_eq!(
            v["agents"]["defaults"]["model"]["fallbacks"],
            json!(["fallback/m2"])
        );
        assert_eq!(v["gateway"]["bind"], "loopback");
        assert_eq!(v["gateway"]["auth"]["token"], "gw-secret");
        let endpoint = &v["gateway"]["http"]["endpoints"]["chatCompletions"]["enabled"];
        assert_eq!(*endpoint, true);
        assert_eq!(v["logging"]["file"], "/run/openclaw.log");
        let text = v.to_string();
        assert!(
            !text.contains("key-A") && !text.contains("key-B"),
            "no keys: {text}"
        );
        assert!(sample().validate().is_ok());
    }

    #[test]
    fn validation_names_what_is_wrong() {
        let mut c = sample();
        c.fallbacks = vec!["fallback/nope".into()];
        assert!(c.validate().unwrap_err().0.contains("fallback/nope"));
        let mut c = sample();
        c.profiles[0].provider = "other".into();
        assert!(
            c.validate()
                .unwrap_err()
                .0
                .contains("unknown provider `other`")
        );
        let mut c = sample();
        c.profiles[1].key = "two\nlines".into();
        assert!(c.validate().unwrap_err().0.contains("mockai:b"));
        let dbg = format!("{:?}", sample());
        assert!(!dbg.contains("key-A"), "{dbg}");
    }

    #[test]
    fn restoring_the_order_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openclaw.json");
        let mut v = sample().to_json(&settings());
        v["auth"]["order"]["mockai"] = json!(["mockai:b", "mockai:a"]);
        v["meta"] = json!({"lastTouchedVersion": "2026.9.6"});
        write_config(&path, &v).unwrap();
        restore_order(&path, &sample().order()).unwrap();
        let back: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(
            back["auth"]["order"]["mockai"],
            json!(["mockai:a", "mockai:b"])
        );
        assert_eq!(back["meta"]["lastTouchedVersion"], "2026.9.6");
        assert_eq!(back["auth"]["profiles"]["mockai:a"]["provider"], "mockai");
    }
}
