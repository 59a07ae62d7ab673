//! The traffic format of docs/traffic.md: JSONL, one request a line, sorted by `at_ms`.
//!
//! ```json
//! {"at_ms":0,"kind":"llm","model":"openai-codex/gpt-5.2","stream":true,"max_tokens":64,"tenant":"team-a"}
//! {"at_ms":100,"kind":"tool","tool":"crm_search","body":{"q":"acme"},"idempotent":true}
//! {"at_ms":230,"kind":"tool","tool":"ticket_create","body":{},"idempotent":false,"idempotency_key":"k-17"}
//! {"at_ms":250,"kind":"ws","channel":"realtime","messages":5}
//! ```
//!
//! ## Validation rules
//!
//! - Every line is a JSON object; blank lines are skipped (they still count for line numbers).
//! - `at_ms` (integer ≥ 0) and `kind` (`llm`, `tool` or `ws`) are required on every line, and
//!   lines must be sorted by `at_ms` (equal values are allowed).
//! - `llm`: `model` (string) and `max_tokens` (integer ≥ 1) required, `stream` (bool) defaults to
//!   false, `messages` (the conversation sent, `[{"role","content"}, …]`, e.g. ending with an
//!   assistant prefill; with a user message) optional. `tool`: `tool` (string) and `idempotent` (bool) required, `body` (any JSON) defaults
//!   to `{}`, `idempotency_key` (string) optional. `ws`: `channel` (string) and `messages`
//!   (integer ≥ 1) required.
//! - Optional on every kind: `tenant`, `session` (strings), `budget_tokens` (integer),
//!   `class` (`tool_call`, `llm_inference`, `session`: the operation-class override).
//! - **Unknown keys are rejected**, and so are keys of another kind (`model` on a `tool` line):
//!   a typo such as `idempotency-key` would otherwise silently turn a keyed call into an unkeyed
//!   one. Every error names `origin:line` (and the column for bad JSON) and the field.

use std::path::Path;

use serde_json::{Map, Value};

use crate::engine::OpClass;
use crate::engine::RequestKind;
use crate::engine::request::ChatMessage;

/// One request of a traffic file.
#[derive(Debug, Clone, PartialEq)]
pub struct TrafficLine {
    /// Offset from the start of the recording, in milliseconds (divided by `--speed` on replay).
    pub at_ms: u64,
    /// What to send: the engine's request vocabulary, so a line is the same request to the
    /// run's engine and to `rehearse replay` (tool `name` is the format's `tool` key).
    pub kind: RequestKind,
    /// The tenant the request belongs to (per-tenant throttles).
    pub tenant: Option<String>,
    /// Token budget of the whole request, retries included.
    pub budget_tokens: Option<u64>,
    /// A session id grouping requests of one conversation.
    pub session: Option<String>,
    /// Operation-class override (otherwise derived from the kind).
    pub class: Option<OpClass>,
}

/// A traffic file could not be read or is invalid.
#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    /// The file could not be read.
    #[error("{origin}: cannot read traffic file: {source}")]
    Io {
        /// The path.
        origin: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not valid JSON.
    #[error("{origin}:{line}:{column}: invalid JSON: {message}")]
    Json {
        /// File name or other origin.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// 1-based column within the line.
        column: usize,
        /// What the JSON parser said.
        message: String,
    },
    /// A field is missing, unknown or has a bad value.
    #[error("{origin}:{line}: field `{field}`: {message}")]
    Field {
        /// File name or other origin.
        origin: String,
        /// 1-based line number.
        line: usize,
        /// The offending key.
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl TrafficError {
    /// The 1-based line number, when the error concerns a line.
    #[cfg(test)] // used by the tests only
    pub(crate) fn line(&self) -> Option<usize> {
        match self {
            Self::Io { .. } => None,
            Self::Json { line, .. } | Self::Field { line, .. } => Some(*line),
        }
    }
}

/// Reads and validates a traffic file; errors name the path, line and field.
pub fn load_traffic(path: &Path) -> Result<Vec<TrafficLine>, TrafficError> {
    // A built-in's traffic is named `builtin:traffic/NAME.jsonl`, not by its place in the cache.
    let origin = crate::builtin::shown(path);
    let text = std::fs::read_to_string(path).map_err(|source| TrafficError::Io {
        origin: origin.clone(),
        source,
    })?;
    parse_traffic(&text, &origin)
}

/// Parses and validates traffic JSONL; `origin` (usually the path) prefixes every error.
pub fn parse_traffic(text: &str, origin: &str) -> Result<Vec<TrafficLine>, TrafficError> {
    let mut lines = Vec::new();
    let mut prev: Option<u64> = None;
    for (idx, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let line = parse_line(raw, origin, idx + 1)?;
        if let Some(p) = prev
            && line.at_ms < p
        {
            return Err(field_err(
                origin,
                idx + 1,
                "at_ms",
                format!(
                    "{} is before the previous line's {p}: lines must be sorted by at_ms",
                    line.at_ms
                ),
            ));
        }
        prev = Some(line.at_ms);
        lines.push(line);
    }
    Ok(lines)
}

const COMMON: &[&str] = &[
    "at_ms",
    "kind",
    "tenant",
    "budget_tokens",
    "session",
    "class",
];
const LLM: &[&str] = &["model", "stream", "max_tokens", "messages"];
const TOOL: &[&str] = &["tool", "body", "idempotent", "idempotency_key"];
const WS: &[&str] = &["channel", "messages"];

/// Parses one non-blank line (`line_no` is 1-based, for errors).
pub fn parse_line(raw: &str, origin: &str, line_no: usize) -> Result<TrafficLine, TrafficError> {
    let value: Value = serde_json::from_str(raw).map_err(|e| TrafficError::Json {
        origin: origin.to_string(),
        line: line_no,
        column: crate::util::textpos::json_position(raw, &e).1,
        message: crate::util::textpos::json_message(&e),
    })?;
    let Value::Object(map) = value else {
        return Err(field_err(
            origin,
            line_no,
            "<line>",
            "expected a JSON object",
        ));
    };
    let f = Fields {
        map: &map,
        origin,
        line: line_no,
    };
    let at_ms = f.u64_req("at_ms")?;
    let kind_name = f.str_req("kind")?;
    let allowed = match kind_name.as_str() {
        "llm" => LLM,
        "tool" => TOOL,
        "ws" => WS,
        other => {
            return Err(f.err(
                "kind",
                format!("unknown kind `{other}` (expected llm, tool or ws)"),
            ));
        }
    };
    for key in map.keys() {
        if COMMON.contains(&key.as_str()) || allowed.contains(&key.as_str()) {
            continue;
        }
        let msg = if [LLM, TOOL, WS].iter().any(|k| k.contains(&key.as_str())) {
            format!("not a field of kind `{kind_name}`")
        } else {
            "unknown field".to_string()
        };
        return Err(f.err(key, msg));
    }
    let kind = match kind_name.as_str() {
        "llm" => RequestKind::Llm {
            model: f.str_req("model")?,
            stream: f.bool_opt("stream")?.unwrap_or(false),
            max_tokens: Some(f.positive_u32("max_tokens")?),
            messages: f.chat_messages("messages")?,
        },
        "tool" => RequestKind::Tool {
            name: f.str_req("tool")?,
            body: map
                .get("body")
                .cloned()
                .unwrap_or_else(|| Value::Object(Map::new())),
            idempotent: f
                .bool_opt("idempotent")?
                .ok_or_else(|| f.err("idempotent", "missing (true or false)"))?,
            idempotency_key: f.str_opt("idempotency_key")?,
        },
        _ => RequestKind::Ws {
            channel: f.str_req("channel")?,
            messages: f.positive_u32("messages")?,
        },
    };
    let class = match f.str_opt("class")? {
        None => None,
        Some(c) => Some(
            serde_json::from_value::<OpClass>(Value::String(c.clone())).map_err(|_| {
                f.err(
                    "class",
                    format!("unknown class `{c}` (expected tool_call, llm_inference or session)"),
                )
            })?,
        ),
    };
    Ok(TrafficLine {
        at_ms,
        kind,
        tenant: f.str_opt("tenant")?,
        budget_tokens: f.u64_opt("budget_tokens")?,
        session: f.str_opt("session")?,
        class,
    })
}

fn field_err(origin: &str, line: usize, field: &str, message: impl Into<String>) -> TrafficError {
    TrafficError::Field {
        origin: origin.to_string(),
        line,
        field: field.to_string(),
        message: message.into(),
    }
}

/// Typed access to one line's keys, producing errors that name the field.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    origin: &'a str,
    line: usize,
}

impl Fields<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> TrafficError {
        field_err(self.origin, self.line, field, message)
    }

    fn u64_opt(&self, key: &str) -> Result<Option<u64>, TrafficError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| self.err(key, format!("expected a non-negative integer, got {v}"))),
        }
    }

    fn u64_req(&self, key: &str) -> Result<u64, TrafficError> {
        self.u64_opt(key)?
            .ok_or_else(|| self.err(key, "missing (required)"))
    }

    fn positive_u32(&self, key: &str) -> Result<u32, TrafficError> {
        let v = self.u64_req(key)?;
        match u32::try_from(v) {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(self.err(
                key,
                format!("expected an integer from 1 to {}, got {v}", u32::MAX),
            )),
        }
    }

    fn str_opt(&self, key: &str) -> Result<Option<String>, TrafficError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.err(key, format!("expected a string, got {v}"))),
        }
    }

    fn str_req(&self, key: &str) -> Result<String, TrafficError> {
        match self.str_opt(key)? {
            Some(s) if !s.is_empty() => Ok(s),
            Some(_) => Err(self.err(key, "must not be empty")),
            None => Err(self.err(key, "missing (required)")),
        }
    }

    /// An `llm` line's `messages`: a non-empty array of `{role, content}` (`role` one of
    /// `system`, `user`, `assistant`; `content` a string), with a user message (the turn's
    /// marker goes into the last one).
    fn chat_messages(&self, key: &str) -> Result<Option<Vec<ChatMessage>>, TrafficError> {
        let Some(v) = self.map.get(key) else {
            return Ok(None);
        };
        let Some(items) = v.as_array().filter(|a| !a.is_empty()) else {
            return Err(self.err(key, format!("expected a non-empty array of {{role, content}}, got {v}")));
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let m: ChatMessage = serde_json::from_value(item.clone())
                .ok()
                .filter(|_| item.as_object().is_some_and(|o| o.len() == 2))
                .ok_or_else(|| {
                    self.err(key, format!("[{i}]: expected {{\"role\": ROLE, \"content\": TEXT}}, got {item}"))
                })?;
            if !matches!(m.role.as_str(), "system" | "user" | "assistant") {
                return Err(self.err(
                    key,
                    format!("[{i}]: unknown role {:?} (expected system, user or assistant)", m.role),
                ));
            }
            out.push(m);
        }
        if !out.iter().any(|m| m.role == "user") {
            return Err(self.err(key, "has no user message (a turn's marker goes into the last one)"));
        }
        Ok(Some(out))
    }

    fn bool_opt(&self, key: &str) -> Result<Option<bool>, TrafficError> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.err(key, format!("expected true or false, got {v}"))),
        }
    }
}

#[cfg(test)]
mod tests;
