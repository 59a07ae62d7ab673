//! Serialising a [`TrafficLine`] back to one JSONL line (the recorder's output).

use serde::Serialize;
use serde_json::Value;

use super::traffic::TrafficLine;
use crate::engine::OpClass;
use crate::engine::RequestKind;

/// The serialised shape of a line: fixed key order, optional keys left out.
#[derive(Serialize)]
struct OutLine<'a> {
    at_ms: u64,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idempotent: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    idempotency_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    /// A `ws` line's count, or an `llm` line's conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    class: Option<OpClass>,
}

impl TrafficLine {
    /// The line as one JSON object (no trailing newline), keys in the documented order.
    pub fn to_json(&self) -> String {
        let mut out = OutLine {
            at_ms: self.at_ms,
            kind: self.kind.name(),
            model: None,
            stream: None,
            max_tokens: None,
            tool: None,
            body: None,
            idempotent: None,
            idempotency_key: None,
            channel: None,
            messages: None,
            tenant: self.tenant.as_deref(),
            budget_tokens: self.budget_tokens,
            session: self.session.as_deref(),
            class: self.class,
        };
        match &self.kind {
            RequestKind::Llm {
                model,
                stream,
                max_tokens,
                messages,
            } => {
                out.model = Some(model);
                out.stream = Some(*stream);
                out.max_tokens = *max_tokens;
                out.messages = messages.as_ref().map(|m| serde_json::json!(m));
            }
            RequestKind::Tool {
                name: tool,
                body,
                idempotent,
                idempotency_key,
            } => {
                out.tool = Some(tool);
                out.body = Some(body);
                out.idempotent = Some(*idempotent);
                out.idempotency_key = idempotency_key.as_deref();
            }
            RequestKind::Ws { channel, messages } => {
                out.channel = Some(channel);
                out.messages = Some(Value::from(*messages));
            }
        }
        // ok: a struct of strings, numbers, bools and a serde_json::Value always serialises.
        serde_json::to_string(&out).unwrap_or_default()
    }
}
