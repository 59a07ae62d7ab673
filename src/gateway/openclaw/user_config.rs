//! The user's own gateway configuration (`[target] config = "PATH"`, OpenClaw's JSON or
//! JSON5): read and checked before a run. A syntax error names the file, line and column; a
//! provider (or model) whose `api` the mock upstream does not speak (it speaks OpenAI chat
//! completions, `openai-completions`) names the provider. What the harness then lays over it is
//! [`super::overlay`].

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The one API the mock upstream speaks.
pub const UPSTREAM_API: &str = "openai-completions";

/// A parsed user configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct UserConfig {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its content (a JSON object).
    pub value: Value,
}

/// Why a user configuration cannot be used (bad input).
#[derive(Debug, thiserror::Error)]
pub enum UserConfigError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// Not JSON5; 1-based line and column (characters).
    #[error("{path}:{line}:{col}: {msg}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong.
        msg: String,
    },
    /// Well-formed, but not usable; `key` is the offending key path.
    #[error("{path}: {key}: {msg}")]
    Invalid {
        /// The file.
        path: String,
        /// The key path (`models.providers.anthropic.api`).
        key: String,
        /// What is wrong.
        msg: String,
    },
}

impl UserConfig {
    /// Reads and checks the configuration at `path`.
    pub fn load(path: &Path) -> Result<Self, UserConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| UserConfigError::Io {
            path: shown.clone(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses and checks `text` (read from `path`).
    pub fn parse(text: &str, path: &Path) -> Result<Self, UserConfigError> {
        let shown = path.display().to_string();
        let value: Value = json5::from_str(text).map_err(|e| {
            let (line, col) = e
                .position()
                .map_or((1, 1), |p| (p.line.saturating_add(1), p.column.saturating_add(1)));
            let msg = e.code().map_or_else(
                || e.to_string().split(" at line ").next().unwrap_or("").to_string(),
                |c| c.to_string(),
            );
            UserConfigError::Syntax {
                path: shown.clone(),
                line,
                col,
                msg,
            }
        })?;
        let invalid = |key: &str, msg: String| UserConfigError::Invalid {
            path: shown.clone(),
            key: key.to_string(),
            msg,
        };
        if !value.is_object() {
            return Err(invalid("(top)", "must be a JSON object".into()));
        }
        if let Some(providers) = value.pointer("/models/providers") {
            let Some(providers) = providers.as_object() else {
                return Err(invalid("models.providers", "must be an object".into()));
            };
            for (id, p) in providers {
                check_api(p, id).map_err(|m| {
                    invalid(&format!("models.providers.{id}.api"), m)
                })?;
                for (i, m) in p
                    .get("models")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    check_api(m, id).map_err(
                        |msg| invalid(&format!("models.providers.{id}.models[{i}].api"), msg),
                    )?;
                }
            }
        }
        if let Some(model) = value.pointer("/agents/defaults/model/fallbacks")
            && !model
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string))
        {
            return Err(invalid(
                "agents.defaults.model.fallbacks",
                "must be a list of PROVIDER/MODEL strings".into(),
            ));
        }
        Ok(Self {
            path: path.to_path_buf(),
            value,
        })
    }

    /// `agents.defaults.model.fallbacks`, when the configuration sets them.
    pub fn fallbacks(&self) -> Option<Vec<String>> {
        self.value
            .pointer("/agents/defaults/model/fallbacks")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
    }
}

/// An `api` other than the upstream's names the provider.
fn check_api(node: &Value, provider: &str) -> Result<(), String> {
    match node.get("api") {
        None => Ok(()),
        Some(Value::String(api)) if api == UPSTREAM_API => Ok(()),
        Some(api) => Err(format!(
            "provider `{provider}` speaks {api}; the mock upstream speaks OpenAI chat completions \
             only (`api: \"{UPSTREAM_API}\"`): this provider cannot be rehearsed"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<UserConfig, UserConfigError> {
        UserConfig::parse(text, Path::new("gw/openclaw.json5"))
    }

    #[test]
    fn json5_is_read_with_comments_and_trailing_commas() {
        let c = parse(
            "// mine\n{\n  models: { providers: { mockai: { api: 'openai-completions', timeoutSeconds: 3, }, }, },\n  agents: { defaults: { model: { primary: 'mockai/m1', fallbacks: ['fallback/m2'] } } },\n}\n",
        )
        .unwrap();
        assert_eq!(c.value["models"]["providers"]["mockai"]["timeoutSeconds"], 3);
        assert_eq!(c.fallbacks(), Some(vec!["fallback/m2".to_string()]));
    }

    #[test]
    fn a_syntax_error_names_file_line_and_column() {
        let e = parse("{\n  models: {\n    mode: 'replace'\n    oops\n  }\n}\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("gw/openclaw.json5:4:5: "), "{msg}");
        assert!(matches!(e, UserConfigError::Syntax { line: 4, col: 5, .. }));
    }

    #[test]
    fn a_provider_the_upstream_does_not_speak_is_named() {
        let e = parse("{models: {providers: {claude: {api: 'anthropic-messages'}}}}").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("models.providers.claude.api"), "{msg}");
        assert!(msg.contains("provider `claude`"), "{msg}");
        let e = parse(
            "{models: {providers: {mix: {api: 'openai-completions', models: [{id: 'a'}, {id: 'b', api: 'ollama'}]}}}}",
        )
        .unwrap_err();
        assert!(e.to_string().contains("models.providers.mix.models[1].api"), "{e}");
        assert!(parse("[1, 2]").unwrap_err().to_string().contains("JSON object"));
        assert!(
            parse("{agents: {defaults: {model: {fallbacks: 'x'}}}}")
                .unwrap_err()
                .to_string()
                .contains("agents.defaults.model.fallbacks")
        );
    }
}
