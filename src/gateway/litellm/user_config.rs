//! The user's own LiteLLM `config.yaml` (`[target] config`), read as JSON values with the line
//! and column of every mapping key (so a key the release does not know is refused at
//! `file:line:col`). A small event receiver over `yaml-rust2`'s marked parser: plain scalars
//! resolved as YAML 1.2 core (null, booleans, integers, floats), quoted ones strings; anchors
//! and aliases refused (a config that needs them can inline the values).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// The user's LiteLLM config, read.
#[derive(Debug, Clone, PartialEq)]
pub struct UserConfig {
    /// The file.
    pub path: PathBuf,
    /// Its content (a mapping).
    pub value: Value,
    /// Where each mapping key is (`router_settings.num_retries` → line, column; 1-based), for
    /// keys of mappings nested in mappings (not inside lists).
    pub at: BTreeMap<String, (usize, usize)>,
}

/// Why the file could not be read as a LiteLLM config.
#[derive(Debug, thiserror::Error)]
pub enum UserConfigError {
    /// Unreadable.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not YAML, or YAML this reader refuses (an alias, a non-mapping top level).
    #[error("{}:{line}:{col}: {msg}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// What is wrong.
        msg: String,
    },
}

impl UserConfig {
    /// Reads `path`.
    pub(crate) fn load(path: &Path) -> Result<Self, UserConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| UserConfigError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Reads `text` (named `path` in errors).
    pub(crate) fn parse(text: &str, path: &Path) -> Result<Self, UserConfigError> {
        let syntax = |line: usize, col: usize, msg: String| UserConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            col,
            msg,
        };
        let mut b = Builder::default();
        let mut parser = Parser::new_from_str(text);
        if let Err(e) = parser.load(&mut b, false) {
            let m = e.marker();
            return Err(syntax(m.line(), m.col() + 1, e.info().to_string()));
        }
        if let Some((line, col, msg)) = b.refused {
            return Err(syntax(line, col, msg));
        }
        let value = b.done.unwrap_or(Value::Object(Map::new()));
        if !value.is_object() {
            return Err(syntax(1, 1, "a LiteLLM config is a mapping (model_list:, router_settings:, …)".into()));
        }
        Ok(Self {
            path: path.to_path_buf(),
            value,
            at: b.at,
        })
    }

    /// Where `key` (`router_settings.num_retries`) is, else the file's start.
    pub(crate) fn position(&self, key: &str) -> (usize, usize) {
        self.at.get(key).copied().unwrap_or((1, 1))
    }
}

/// An open node while the events come.
#[derive(Debug)]
enum Open {
    Seq(Vec<Value>),
    /// A mapping, its entries, the key waiting for its value, and its key path (`None` inside a list).
    Map(Map<String, Value>, Option<String>, Option<String>),
}

#[derive(Debug, Default)]
struct Builder {
    stack: Vec<Open>,
    done: Option<Value>,
    at: BTreeMap<String, (usize, usize)>,
    refused: Option<(usize, usize, String)>,
}

impl Builder {
    /// The key path a mapping opened now gets (under the key waiting in the enclosing mapping).
    fn child_path(&self) -> Option<String> {
        match self.stack.last() {
            None => Some(String::new()),
            Some(Open::Map(_, Some(k), Some(p))) => {
                Some(if p.is_empty() { k.clone() } else { format!("{p}.{k}") })
            }
            _ => None,
        }
    }

    fn put(&mut self, v: Value, mark: Marker) {
        match self.stack.last_mut() {
            None => self.done = Some(v),
            Some(Open::Seq(items)) => items.push(v),
            Some(Open::Map(m, key, path)) => match key.take() {
                Some(k) => {
                    m.insert(k, v);
                }
                None => {
                    let k = match v {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    if let Some(p) = path {
                        let full = if p.is_empty() { k.clone() } else { format!("{p}.{k}") };
                        self.at.insert(full, (mark.line(), mark.col() + 1));
                    }
                    *key = Some(k);
                }
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if self.refused.is_some() {
            return;
        }
        match ev {
            Event::Scalar(s, style, _, _) => {
                let v = if style == TScalarStyle::Plain {
                    plain(&s)
                } else {
                    Value::String(s)
                };
                self.put(v, mark);
            }
            Event::SequenceStart(..) => self.stack.push(Open::Seq(Vec::new())),
            Event::MappingStart(..) => {
                let path = self.child_path();
                self.stack.push(Open::Map(Map::new(), None, path));
            }
            Event::SequenceEnd => {
                if let Some(Open::Seq(items)) = self.stack.pop() {
                    self.put(Value::Array(items), mark);
                }
            }
            Event::MappingEnd => {
                if let Some(Open::Map(m, _, _)) = self.stack.pop() {
                    self.put(Value::Object(m), mark);
                }
            }
            Event::Alias(_) => {
                self.refused = Some((
                    mark.line(),
                    mark.col() + 1,
                    "an alias (`*name`): write the value out".into(),
                ));
            }
            _ => {}
        }
    }
}

/// A plain scalar as YAML 1.2's core schema reads it.
fn plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    if s.chars().any(|c| c.is_ascii_digit())
        && let Ok(f) = s.parse::<f64>()
        && f.is_finite()
        && let Some(n) = serde_json::Number::from_f64(f)
    {
        return Value::Number(n);
    }
    Value::String(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_positions_and_scalars_their_types() {
        let text = "model_list:\n  - model_name: x\n    litellm_params: {model: openai/x}\nrouter_settings:\n  num_retries: 2\n  cooldown_time: 2.5\n  fallbacks: [{\"a\": [\"b\"]}]\nlitellm_settings:\n  drop_params: true\n  set_verbose: 'false'\n";
        let c = UserConfig::parse(text, Path::new("c.yaml")).unwrap();
        assert_eq!(c.value["router_settings"]["num_retries"], 2);
        assert_eq!(c.value["router_settings"]["cooldown_time"], 2.5);
        assert_eq!(c.value["router_settings"]["fallbacks"][0]["a"][0], "b");
        assert_eq!(c.value["litellm_settings"]["drop_params"], true);
        assert_eq!(c.value["litellm_settings"]["set_verbose"], "false");
        assert_eq!(c.value["model_list"][0]["litellm_params"]["model"], "openai/x");
        assert_eq!(c.position("router_settings.num_retries"), (5, 3));
        assert_eq!(c.position("litellm_settings"), (8, 1));
        // Keys inside a list are not tracked.
        assert!(!c.at.keys().any(|k| k.contains("model_name")), "{:?}", c.at);
    }

    #[test]
    fn bad_yaml_aliases_and_a_list_at_the_top_are_refused_with_their_position() {
        let e = UserConfig::parse("a: [1, 2\nb: 3\n", Path::new("c.yaml")).unwrap_err();
        assert!(matches!(e, UserConfigError::Syntax { .. }), "{e}");
        let e = UserConfig::parse("a: &x 1\nb: *x\n", Path::new("c.yaml")).unwrap_err();
        assert!(e.to_string().starts_with("c.yaml:2:4: an alias"), "{e}");
        let e = UserConfig::parse("- 1\n", Path::new("c.yaml")).unwrap_err();
        assert!(e.to_string().contains("is a mapping"), "{e}");
    }
}
