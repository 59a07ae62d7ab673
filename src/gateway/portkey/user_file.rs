//! The user's own Portkey config (`[target] config` of a `portkey` target, JSON): checked
//! against a key list of the harness's own — Portkey's config schema drops a key it does not
//! know without a word, so a misspelt `atempts` would change nothing and say nothing; here it
//! is refused at its file:line:col — and laid under what the harness owns ([`overlay`]): every
//! target that sends gets the key of the `[[profile]]` it names (`"profile": "mockai:a"`, the
//! harness's own key, removed before sending), the mock upstream as its `custom_host` and
//! `provider = "openai"`; a `cache` is removed (a cached answer never reaches the upstream).
//! Every change is listed for the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::config::{Leaf, Routing, RoutingError, host_of, split_model};
use crate::gateway::openclaw::GatewayConfig;

/// The keys a config node (the top, or one of its `targets`) may carry in a rehearsal.
const NODE_KEYS: [&str; 12] = [
    "strategy",
    "targets",
    "retry",
    "weight",
    "on_status_codes",
    "request_timeout",
    "override_params",
    "provider",
    "api_key",
    "custom_host",
    "cache",
    "profile",
];
/// The keys of `strategy`.
const STRATEGY_KEYS: [&str; 2] = ["mode", "on_status_codes"];
/// The strategies a rehearsal can run (`conditional` routes on request metadata the turns do
/// not carry).
const MODES: [&str; 3] = ["fallback", "loadbalance", "single"];
/// The keys of `retry`.
const RETRY_KEYS: [&str; 3] = ["attempts", "on_status_codes", "use_retry_after_header"];
/// The keys of `cache` (removed by the overlay, but a misspelt one is still refused).
const CACHE_KEYS: [&str; 2] = ["mode", "max_age"];

/// The user's Portkey config, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct UserFile {
    /// The file.
    pub path: PathBuf,
    /// Its text (to locate what the scenario refuses in it).
    pub text: String,
    /// Its content.
    pub value: Value,
}

/// Why the user's Portkey config cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UserFileError {
    /// Unreadable.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not JSON, or a key or value the harness refuses, at a position.
    #[error("{path}:{line}:{col}: {msg}")]
    At {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong.
        msg: String,
    },
}

impl UserFile {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Self, UserFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| UserFileError::Io {
            path: shown.clone(),
            source,
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            let (line, col) = crate::util::textpos::json_position(&text, &e);
            UserFileError::At {
                path: shown.clone(),
                line,
                col,
                msg: crate::util::textpos::json_message(&e),
            }
        })?;
        let file = Self {
            path: path.to_path_buf(),
            text,
            value,
        };
        if let Err((key, msg)) = check_node(&file.value, "config") {
            return Err(file.at(&key, msg));
        }
        Ok(file)
    }

    /// An error at the first place `"key"` is written as a key (else the file's start).
    pub fn at(&self, key: &str, msg: String) -> UserFileError {
        let needle = format!("\"{key}\"");
        let at = self
            .text
            .match_indices(&needle)
            .map(|(i, _)| i)
            .find(|&i| self.text[i + needle.len()..].trim_start().starts_with(':'))
            .unwrap_or(0);
        let (line, col) = crate::util::textpos::line_col(&self.text, at);
        UserFileError::At {
            path: self.path.display().to_string(),
            line,
            col,
            msg,
        }
    }

    /// Every `profile` it names, with where (`config.targets[0]`).
    pub fn profiles(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        walk_leaves(&self.value, "config", &mut |path, node| {
            if let Some(p) = node.get("profile").and_then(Value::as_str) {
                out.push((path.to_string(), p.to_string()));
            }
        });
        out
    }
}

/// Calls `f` on every node without `targets` (a target that sends).
fn walk_leaves(v: &Value, path: &str, f: &mut dyn FnMut(&str, &Value)) {
    match v.get("targets").and_then(Value::as_array) {
        Some(ts) => {
            for (i, t) in ts.iter().enumerate() {
                walk_leaves(t, &format!("{path}.targets[{i}]"), f);
            }
        }
        None => f(path, v),
    }
}

/// The first key or value of `v` (at `path`) a rehearsal refuses: the key to locate and why.
fn check_node(v: &Value, path: &str) -> Result<(), (String, String)> {
    let Some(m) = v.as_object() else {
        return Err((String::new(), format!("{path}: must be a JSON object")));
    };
    known(m, &NODE_KEYS, path)?;
    if let Some(s) = m.get("strategy") {
        let sm = s
            .as_object()
            .ok_or_else(|| ("strategy".to_string(), format!("{path}.strategy: must be an object")))?;
        known(sm, &STRATEGY_KEYS, &format!("{path}.strategy"))?;
        match sm.get("mode").and_then(Value::as_str) {
            Some(mode) if MODES.contains(&mode) => {}
            _ => {
                return Err((
                    "mode".into(),
                    format!(
                        "{path}.strategy.mode: must be one of {} (`conditional` routes on \
                         metadata the harness's turns do not carry)",
                        MODES.join(", ")
                    ),
                ));
            }
        }
    }
    for (key, keys) in [("retry", &RETRY_KEYS[..]), ("cache", &CACHE_KEYS[..])] {
        if let Some(x) = m.get(key) {
            let xm = x
                .as_object()
                .ok_or_else(|| (key.to_string(), format!("{path}.{key}: must be an object")))?;
            known(xm, keys, &format!("{path}.{key}"))?;
        }
    }
    if let Some(o) = m.get("override_params")
        && !o.is_object()
    {
        return Err(("override_params".into(), format!("{path}.override_params: must be an object")));
    }
    if let Some(p) = m.get("profile")
        && !p.is_string()
    {
        return Err(("profile".into(), format!("{path}.profile: must be a [[profile]] id")));
    }
    match m.get("targets") {
        Some(Value::Array(ts)) if !ts.is_empty() => {
            if m.contains_key("profile") {
                return Err((
                    "profile".into(),
                    format!("{path}.profile: only a target that sends (one without `targets`) names a profile"),
                ));
            }
            for (i, t) in ts.iter().enumerate() {
                check_node(t, &format!("{path}.targets[{i}]"))?;
            }
        }
        Some(_) => {
            return Err(("targets".into(), format!("{path}.targets: must be a non-empty array of targets")));
        }
        None if !m.contains_key("profile") => {
            return Err((
                String::new(),
                format!(
                    "{path}: a target that sends must name the [[profile]] whose key it uses \
                     (`\"profile\": \"mockai:a\"`): the harness owns the keys"
                ),
            ));
        }
        None => {}
    }
    Ok(())
}

/// Every key of `m` in `keys`, else the first that is not.
fn known(m: &Map<String, Value>, keys: &[&str], path: &str) -> Result<(), (String, String)> {
    match m.keys().find(|k| !keys.contains(&k.as_str())) {
        None => Ok(()),
        Some(k) => {
            let hint = crate::util::suggest::closest(k, keys.iter().copied())
                .map(|c| format!("did you mean `{c}`? "))
                .unwrap_or_default();
            Err((
                k.clone(),
                format!(
                    "{path}.{k}: not a key the harness knows for a rehearsal ({hint}known here: {}); \
                     Portkey drops keys it does not know without a word, so it would change nothing",
                    keys.join(", ")
                ),
            ))
        }
    }
}

/// `user` with what the harness owns laid over it: each sending target's key (its profile's),
/// host (the upstream), provider (`openai`), its model (`override_params.model`, else one
/// inherited, else the primary's) — and what was changed, for the report.
pub fn overlay(user: &Value, config: &GatewayConfig) -> Result<(Routing, Vec<String>), RoutingError> {
    let keys: BTreeMap<&str, (&str, &str)> = config
        .profiles
        .iter()
        .map(|p| (p.id.as_str(), (p.key.as_str(), p.provider.as_str())))
        .collect();
    let (_, primary_model) = split_model(&config.primary);
    let mut over = Vec::new();
    let mut leaves = Vec::new();
    let mut out = user.clone();
    lay(&mut out, "config", None, &keys, config, primary_model, &mut leaves, &mut over)?;
    Ok((Routing { config: out, leaves }, over))
}

#[allow(clippy::too_many_arguments, reason = "one recursive walk's state")]
fn lay(
    node: &mut Value,
    path: &str,
    inherited_model: Option<String>,
    keys: &BTreeMap<&str, (&str, &str)>,
    config: &GatewayConfig,
    primary_model: &str,
    leaves: &mut Vec<Leaf>,
    over: &mut Vec<String>,
) -> Result<(), RoutingError> {
    let Some(m) = node.as_object_mut() else {
        return Err(RoutingError(format!("{path}: not an object")));
    };
    if m.remove("cache").is_some() {
        over.push(format!("{path}.cache: removed (a cached answer never reaches the upstream)"));
    }
    let model = m
        .get("override_params")
        .and_then(|o| o.get("model"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(inherited_model);
    if let Some(Value::Array(ts)) = m.get_mut("targets") {
        for (i, t) in ts.iter_mut().enumerate() {
            lay(t, &format!("{path}.targets[{i}]"), model.clone(), keys, config, primary_model, leaves, over)?;
        }
        // A parent's would be inherited by the targets the harness keys itself.
        for key in ["api_key", "custom_host", "provider"] {
            if m.remove(key).is_some() {
                over.push(format!("{path}.{key}: removed (the harness sets it on each target that sends)"));
            }
        }
        return Ok(());
    }
    let profile = m
        .remove("profile")
        .and_then(|p| p.as_str().map(str::to_string))
        .ok_or_else(|| RoutingError(format!("{path}: names no profile")))?;
    let (key, provider) = keys
        .get(profile.as_str())
        .copied()
        .ok_or_else(|| RoutingError(format!("{path}.profile: `{profile}` is not a [[profile]] id")))?;
    let host = host_of(config, provider)
        .ok_or_else(|| RoutingError(format!("{path}: no provider `{provider}`")))?;
    let model = match model {
        Some(m) => m,
        None => {
            let o = m.entry("override_params").or_insert_with(|| json!({}));
            o["model"] = json!(primary_model);
            over.push(format!("{path}.override_params.model: `{primary_model}` added (the primary)"));
            primary_model.to_string()
        }
    };
    over.push(format!("{path}.profile: `{profile}` replaced by its key as api_key"));
    for (k, v, why) in [
        ("api_key", json!(key), "the profile's key"),
        ("custom_host", json!(host), "the mock upstream"),
        ("provider", json!("openai"), "the mock upstream speaks OpenAI"),
    ] {
        match m.insert(k.to_string(), v.clone()) {
            Some(old) if old != v && k == "api_key" => over.push(format!("{path}.{k}: yours replaced ({why})")),
            Some(old) if old != v => over.push(format!("{path}.{k}: {old} replaced ({why})")),
            Some(_) => {}
            None if k == "provider" => over.push(format!("{path}.{k}: \"openai\" added ({why})")),
            None => {}
        }
    }
    leaves.push(Leaf {
        path: path.to_string(),
        profile,
        model,
    });
    Ok(())
}

#[cfg(test)]
mod tests;
