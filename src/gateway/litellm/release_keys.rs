//! Does this release know these keys? LiteLLM reads its config leniently (an unknown
//! `router_settings` key is dropped or set as a module attribute nobody reads), so the harness
//! asks the pinned venv itself, once per plan, what it takes — no proxy started:
//! the top level: `litellm.proxy._types.ConfigYAML`'s fields; `router_settings`: `Router`'s
//! parameters (`inspect.signature`); `litellm_settings`: the module's attributes (the proxy sets
//! an unknown one with `setattr(litellm, key, value)`) and the keys its `load_config` handles by
//! name; `general_settings`: `ConfigGeneralSettings`' fields. A user key outside them is refused
//! (exit 2) at its `file:line:col`, with the closest known key.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};

use serde::Deserialize;

use super::install::Install;
use super::user_config::UserConfig;

/// The python the venv runs: every key set as JSON.
const SCRIPT: &str = r#"
import inspect, json, re
import litellm
from litellm import Router
from litellm.proxy import _types as t
from litellm.proxy.proxy_server import ProxyConfig
src = inspect.getsource(ProxyConfig.load_config)
print(json.dumps({
  "top": sorted(t.ConfigYAML.model_fields),
  "router_settings": sorted(p for p in inspect.signature(Router.__init__).parameters if p != "self"),
  "litellm_settings": sorted(set(a for a in dir(litellm) if not a.startswith("_")) | set(re.findall(r'key == "(\w+)"', src))),
  "general_settings": sorted(t.ConfigGeneralSettings.model_fields),
}))
"#;

/// The keys a release takes, by section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ReleaseKeys {
    /// Top-level keys.
    pub top: BTreeSet<String>,
    /// `router_settings` keys.
    pub router_settings: BTreeSet<String>,
    /// `litellm_settings` keys.
    pub litellm_settings: BTreeSet<String>,
    /// `general_settings` keys.
    pub general_settings: BTreeSet<String>,
}

/// The release could not be asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("asking LiteLLM {version} ({python}) for the keys it takes: {why}")]
pub struct NoAnswer {
    version: String,
    python: String,
    why: String,
}

/// A key of the user's config the release does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}:{col}: `{key}` is not a key LiteLLM {version} takes{}", .hint.as_deref().map(|h| format!(" (did you mean `{h}`?)")).unwrap_or_default())]
pub struct UnknownKey {
    /// The file.
    pub path: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
    /// The key's path (`router_settings.num_retrie`).
    pub key: String,
    /// The release.
    pub version: String,
    /// The closest known key.
    pub hint: Option<String>,
}

impl ReleaseKeys {
    /// Asks `install`'s python (a few seconds: it imports litellm and its proxy).
    pub(crate) fn of(install: &Install) -> Result<Self, NoAnswer> {
        let no = |why: String| NoAnswer {
            version: install.version.clone(),
            python: install.python.display().to_string(),
            why,
        };
        let scratch = tempfile::Builder::new()
            .prefix("rehearse-litellm-keys-")
            .tempdir()
            .map_err(|e| no(format!("a scratch directory: {e}")))?;
        let mut cmd = Command::new(&install.python);
        cmd.args(["-c", SCRIPT])
            .current_dir(scratch.path())
            .stdin(Stdio::null());
        super::process::sandbox_env(&mut cmd, scratch.path());
        let out = cmd.output().map_err(|e| no(e.to_string()))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(no(err.lines().last().unwrap_or("no output").to_string()));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().rev().find(|l| l.starts_with('{')).unwrap_or("");
        serde_json::from_str(line).map_err(|e| no(format!("its answer: {e}")))
    }

    /// The first key of `user` this release does not take.
    pub(crate) fn check(&self, user: &UserConfig, version: &str) -> Result<(), UnknownKey> {
        let Some(top) = user.value.as_object() else {
            return Ok(());
        };
        let unknown = |key: String, known: &BTreeSet<String>, word: &str| {
            let (line, col) = user.position(&key);
            UnknownKey {
                path: user.path.display().to_string(),
                line,
                col,
                key,
                version: version.to_string(),
                hint: crate::util::suggest::closest(word, known.iter().map(String::as_str))
                    .map(str::to_string),
            }
        };
        for (k, v) in top {
            if !self.top.contains(k) {
                return Err(unknown(k.clone(), &self.top, k));
            }
            let known = match k.as_str() {
                "router_settings" => &self.router_settings,
                "litellm_settings" => &self.litellm_settings,
                "general_settings" => &self.general_settings,
                _ => continue,
            };
            for inner in v.as_object().into_iter().flat_map(|m| m.keys()) {
                if !known.contains(inner) {
                    return Err(unknown(format!("{k}.{inner}"), known, inner));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn keys() -> ReleaseKeys {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        ReleaseKeys {
            top: set(&["model_list", "router_settings", "litellm_settings", "general_settings"]),
            router_settings: set(&["num_retries", "cooldown_time", "allowed_fails"]),
            litellm_settings: set(&["callbacks", "drop_params"]),
            general_settings: set(&["master_key"]),
        }
    }

    #[test]
    fn an_unknown_key_is_named_at_its_position_with_the_closest_known_one() {
        let text = "router_settings:\n  num_retries: 2\n  cooldown_tme: 5\n";
        let u = UserConfig::parse(text, Path::new("ll.yaml")).unwrap();
        let e = keys().check(&u, "1.108.7").unwrap_err();
        assert_eq!(
            e.to_string(),
            "ll.yaml:3:3: `router_settings.cooldown_tme` is not a key LiteLLM 1.108.7 takes (did you mean `cooldown_time`?)"
        );
        let u = UserConfig::parse("router_setings: {}\n", Path::new("ll.yaml")).unwrap();
        assert_eq!(keys().check(&u, "x").unwrap_err().key, "router_setings");
    }

    #[test]
    fn known_keys_pass_and_model_list_entries_are_not_checked_here() {
        let text = "model_list:\n  - model_name: x\n    anything: 1\nlitellm_settings: {drop_params: true}\ngeneral_settings: {master_key: k}\n";
        let u = UserConfig::parse(text, Path::new("ll.yaml")).unwrap();
        keys().check(&u, "x").unwrap();
    }
}
