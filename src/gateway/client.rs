//! The client every gateway is driven through (the seam's one way to send a turn,
//! [`super::Supervised::client`]): `GET /health` and turns as `POST /v1/chat/completions` with
//! the gateway's bearer token, a stable `user` per session (`conv:ID`) and the model the gateway
//! wants (`openclaw/default` unless told otherwise). It is the replay dispatcher's HTTP client
//! ([`HttpDispatcher::exchange`]), without keep-alive so a gateway being stopped has no idle
//! connection holding its drain open (OpenClaw's SIGTERM otherwise waits up to 315 s for
//! clients).

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Method, header};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::turn_end::TurnEnd;
use crate::engine::request::ChatMessage;
use crate::replay::http::{ExchangeError, HttpDispatcher, TargetError};
use crate::wire::said::{GatewaySaid, SaidBy};
use crate::wire::usage::Usage;

/// The model a turn names: the gateway's default agent.
const GATEWAY_MODEL: &str = "openclaw/default";

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// The session; sent as `user: "conv:SESSION"`, so OpenClaw keeps one session per id.
    pub session: String,
    /// Ask for an SSE answer.
    pub stream: bool,
    /// The user message.
    pub message: String,
    /// The conversation to send instead of the one user message (a traffic row's `messages`):
    /// `message` (with the turn's marker) is added to its last user message, whatever follows
    /// it (an assistant prefill).
    pub messages: Option<Vec<ChatMessage>>,
}

impl Turn {
    /// The `messages` of the request body.
    fn body_messages(&self) -> Value {
        let Some(given) = &self.messages else {
            return json!([{"role": "user", "content": self.message}]);
        };
        let last_user = given.iter().rposition(|m| m.role == "user");
        let list: Vec<Value> = given
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let content = if Some(i) == last_user {
                    format!("{}\n{}", m.content, self.message)
                } else {
                    m.content.clone()
                };
                json!({"role": m.role, "content": content})
            })
            .collect();
        Value::Array(list)
    }
}

/// What came back for a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnOutcome {
    /// The HTTP status, when a response head arrived.
    pub status: Option<u16>,
    /// The assistant text (streamed deltas joined).
    pub text: String,
    /// The last `finish_reason` seen.
    pub finish_reason: Option<String>,
    /// An error: the transport's kind (`timeout`, `reset`, …), an error body's or error
    /// event's message.
    pub error: Option<String>,
    /// Whether a streamed answer ended with `data: [DONE]`.
    pub done: bool,
    /// From sending to the end of the body, in ms.
    pub elapsed_ms: u64,
    /// Whether the body was an SSE stream.
    #[serde(default)]
    pub sse: bool,
    /// The `model` the answer named (a stream's last chunk that named one).
    #[serde(default)]
    pub model: Option<String>,
    /// The `usage` the answer carried (a stream's usage chunk).
    #[serde(default)]
    pub usage: Option<Usage>,
    /// What the gateway said of its decisions in the response's headers, by header name (the
    /// ones its client keeps: Portkey's `x-portkey-last-used-option-index` and
    /// `x-portkey-retry-attempt-count`); empty for a gateway that says nothing there.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl TurnOutcome {
    /// A 2xx with text, a `finish_reason` and no error.
    pub fn is_ok(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
            && self.error.is_none()
            && self.finish_reason.is_some()
    }

    /// How the turn ended: answered; else, without a response, timed out or a transport
    /// failure; a status outside 2xx; an error in a 2xx stream (an error event) or body; a 2xx
    /// without an error or a `finish_reason` (unfinished).
    pub fn end(&self) -> TurnEnd {
        if self.is_ok() {
            return TurnEnd::Answered;
        }
        match (self.status, &self.error) {
            (None, Some(e)) if e == "timeout" => TurnEnd::TimedOut,
            (None, _) => TurnEnd::TransportError,
            (Some(s), _) if !(200..300).contains(&s) => TurnEnd::HttpError,
            (Some(_), Some(_)) if self.sse => TurnEnd::ErrorEvent,
            (Some(_), Some(_)) => TurnEnd::ErrorBody,
            (Some(_), None) => TurnEnd::Unfinished,
        }
    }
}

/// Sends health checks and turns to one gateway.
#[derive(Debug, Clone)]
pub struct TurnClient {
    http: HttpDispatcher,
    model: String,
    /// Whose response headers it keeps in [`TurnOutcome::headers`] and reads as the gateway's
    /// account of a turn ([`TurnClient::said`]).
    said_by: Option<SaidBy>,
    /// The gateway's names of its targets → the scenario's (`config.targets[2]` →
    /// `mockai:c gpt-4o-mini`), for [`TurnClient::said`].
    labels: std::sync::Arc<BTreeMap<String, String>>,
}

impl TurnClient {
    /// A client for the gateway at `base_url` (`http://127.0.0.1:PORT`) with bearer `token`;
    /// every exchange is abandoned as `timeout` after `timeout`.
    pub fn new(base_url: &str, token: &str, timeout: Duration) -> Result<Self, TargetError> {
        let bad = |reason: &str| TargetError {
            target: base_url.to_string(),
            reason: reason.to_string(),
        };
        let auth = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| bad("the gateway token is not a valid header value"))?;
        let http = HttpDispatcher::new(base_url, timeout)?
            .without_keep_alive()
            .with_header(header::AUTHORIZATION, auth);
        Ok(Self {
            http,
            model: GATEWAY_MODEL.to_string(),
            said_by: None,
            labels: Default::default(),
        })
    }

    /// A client for a gateway that takes no bearer token (Portkey: its keys are per target in
    /// its config header), `extra` sent with every request (marked sensitive: never in `Debug`).
    pub(crate) fn bare(
        base_url: &str,
        timeout: Duration,
        extra: Vec<(header::HeaderName, HeaderValue)>,
    ) -> Result<Self, TargetError> {
        let mut http = HttpDispatcher::new(base_url, timeout)?.without_keep_alive();
        for (name, mut value) in extra {
            value.set_sensitive(true);
            http = http.with_header(name, value);
        }
        Ok(Self {
            http,
            model: GATEWAY_MODEL.to_string(),
            said_by: None,
            labels: Default::default(),
        })
    }

    /// The same client naming the gateway's targets by `labels` in [`TurnClient::said`].
    pub(crate) fn with_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.labels = std::sync::Arc::new(labels);
        self
    }

    /// The same client keeping `by`'s response headers and reading them as its account of
    /// each turn ([`TurnClient::said`]).
    pub(crate) fn with_said(mut self, by: SaidBy) -> Self {
        self.said_by = Some(by);
        self
    }

    /// What the gateway said of a turn in the headers this client keeps; `None` when it said
    /// nothing (or this client reads no gateway's headers).
    pub(crate) fn said(&self, o: &TurnOutcome) -> Option<GatewaySaid> {
        GatewaySaid::read(self.said_by?, &o.headers, &self.labels)
    }

    /// The same client sending `model` instead of OpenClaw's `openclaw/default` (another
    /// gateway's model name).
    pub(crate) fn with_model(mut self, model: &str) -> Self {
        self.model = model.to_string();
        self
    }

    /// `GET path`: its status, or why no answer came (its kind, `connect`, ..., and cause).
    pub(crate) async fn status_of(&self, path: &str) -> Result<u16, ExchangeError> {
        let (status, _) = self.http.exchange(Method::GET, path, None).await?;
        Ok(status.as_u16())
    }

    /// `GET /health` answered `"ok": true`.
    pub async fn healthy(&self) -> bool {
        match self.http.exchange(Method::GET, "/health", None).await {
            Ok((status, body)) if status.is_success() => serde_json::from_slice::<Value>(&body)
                .is_ok_and(|v| v.get("ok") == Some(&Value::Bool(true))),
            _ => false,
        }
    }

    /// Sends one turn and reads the whole answer.
    pub async fn send(&self, turn: &Turn) -> TurnOutcome {
        let body = json!({
            "model": self.model,
            "user": format!("conv:{}", turn.session),
            "stream": turn.stream,
            "messages": turn.body_messages(),
        });
        let started = Instant::now();
        let got = self
            .http
            .exchange_with_headers(
                Method::POST,
                crate::wire::route::CHAT,
                Some(Bytes::from(body.to_string())),
            )
            .await;
        let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut out = match got {
            Ok((status, headers, body)) => {
                let mut out = read_answer(status.as_u16(), &body, turn.stream);
                for name in self.said_by.map_or(&[][..], SaidBy::headers) {
                    if let Some(v) = headers.get(*name).and_then(|v| v.to_str().ok()) {
                        out.headers.insert((*name).to_string(), v.to_string());
                    }
                }
                out
            }
            Err(kind) => TurnOutcome {
                status: None,
                text: String::new(),
                finish_reason: None,
                error: Some(kind.to_string()),
                done: false,
                elapsed_ms: 0,
                sse: false,
                model: None,
                usage: None,
                headers: BTreeMap::new(),
            },
        };
        out.elapsed_ms = elapsed_ms;
        out
    }
}

/// The outcome a response body says (streamed as SSE or one JSON document).
pub(crate) fn read_answer(status: u16, body: &[u8], stream: bool) -> TurnOutcome {
    let mut out = TurnOutcome {
        status: Some(status),
        text: String::new(),
        finish_reason: None,
        error: None,
        done: false,
        elapsed_ms: 0,
        sse: false,
        model: None,
        usage: None,
        headers: BTreeMap::new(),
    };
    let text = String::from_utf8_lossy(body);
    let is_sse = stream && text.trim_start().starts_with("data:");
    out.sse = is_sse;
    if !is_sse {
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => {
                if let Some(m) = error_message(&v) {
                    out.error = Some(m);
                }
                read_model_and_usage(&v, &mut out);
                let choice = v.pointer("/choices/0");
                if let Some(c) = choice.and_then(|c| c.pointer("/message/content")) {
                    out.text = c.as_str().unwrap_or_default().to_string();
                }
                out.finish_reason = choice
                    .and_then(|c| c.get("finish_reason"))
                    .and_then(Value::as_str)
                    .map(str::to_string);
            }
            Err(e) => out.error = Some(format!("unreadable answer: {e}")),
        }
        if out.error.is_none() && !(200..300).contains(&status) {
            out.error = Some(format!("http_{status}"));
        }
        return out;
    }
    for line in text.lines() {
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            continue;
        };
        if data == "[DONE]" {
            out.done = true;
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if let Some(m) = error_message(&v) {
            out.error = Some(m);
        }
        read_model_and_usage(&v, &mut out);
        for c in v
            .get("choices")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = c.pointer("/delta/content").and_then(Value::as_str) {
                out.text.push_str(t);
            }
            if let Some(f) = c.get("finish_reason").and_then(Value::as_str) {
                out.finish_reason = Some(f.to_string());
            }
        }
    }
    out
}

/// The `model` and `usage` a completion (or chunk) names, kept when it names them.
fn read_model_and_usage(v: &Value, out: &mut TurnOutcome) {
    if let Some(m) = v.get("model").and_then(Value::as_str).filter(|m| !m.is_empty()) {
        out.model = Some(m.to_string());
    }
    if let Some(u) = v.get("usage").and_then(Usage::of_json) {
        out.usage = Some(u);
    }
}

/// `error.message` (or a string `error`) of an OpenAI-shaped error.
fn error_message(v: &Value) -> Option<String> {
    match v.get("error")? {
        Value::String(s) => Some(s.clone()),
        e => Some(
            e.get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), str::to_string),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A traffic row's conversation: the turn's message (with its marker) joins the last user
    /// message, an assistant prefill after it stays last, and the upstream's marker scanner
    /// still reads the turn from the body.
    #[test]
    fn a_conversation_keeps_the_marker_in_its_last_user_message_before_a_prefill() {
        let msg = |role: &str, content: &str| ChatMessage {
            role: role.into(),
            content: content.into(),
        };
        let turn = Turn {
            session: "s1".into(),
            stream: true,
            message: format!("rehearse turn 7 {}", crate::wire::turn::marker(7)),
            messages: Some(vec![
                msg("user", "earlier"),
                msg("assistant", "ok"),
                msg("user", "continue this"),
                msg("assistant", "Sure, here"),
            ]),
        };
        let m = turn.body_messages();
        assert_eq!(m[3], json!({"role": "assistant", "content": "Sure, here"}));
        assert_eq!(m[0]["content"], "earlier", "earlier user messages stay as written");
        let last_user = m[2]["content"].as_str().unwrap();
        assert!(last_user.starts_with("continue this\n") && last_user.ends_with(&crate::wire::turn::marker(7)));
        let body = json!({"model": "x", "messages": m}).to_string();
        assert_eq!(crate::upstream::turn::of_body(body.as_bytes()), Some(7));
        // Without a conversation: the one user message.
        let plain = Turn { messages: None, ..turn };
        assert_eq!(plain.body_messages(), json!([{"role": "user", "content": plain.message}]));
    }

    #[test]
    fn a_streamed_answer_joins_deltas_and_keeps_the_finish_reason() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t1\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" t2\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        );
        let o = read_answer(200, body.as_bytes(), true);
        assert_eq!(o.text, "t1 t2");
        assert_eq!(o.finish_reason.as_deref(), Some("stop"));
        assert!(o.done && o.is_ok());
    }

    #[test]
    fn an_error_event_or_body_is_the_error() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t1\"}}]}\n\n",
            "data: {\"error\":{\"message\":\"internal error\",\"type\":\"api_error\"}}\n\n",
        );
        let o = read_answer(200, body.as_bytes(), true);
        assert_eq!(o.error.as_deref(), Some("internal error"));
        assert!(!o.is_ok());
        assert_eq!(o.end(), TurnEnd::ErrorEvent);
        let o = read_answer(500, br#"{"error":{"message":"internal error"}}"#, false);
        assert_eq!(o.error.as_deref(), Some("internal error"));
        assert_eq!(o.end(), TurnEnd::HttpError);
        let o = read_answer(502, b"", false);
        assert!(o.error.is_some());
        assert_eq!(o.end(), TurnEnd::HttpError);
        let o = read_answer(200, br#"{"error":{"message":"no"}}"#, false);
        assert_eq!(o.end(), TurnEnd::ErrorBody);
        let ok = br#"{"choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}"#;
        let o = read_answer(200, ok, false);
        assert!(o.is_ok() && o.text == "hi", "{o:?}");
        assert_eq!(o.end(), TurnEnd::Answered);
        let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t1\"}}]}\n\n";
        assert_eq!(read_answer(200, cut.as_bytes(), true).end(), TurnEnd::Unfinished);
        let lost = |e: &str| TurnOutcome {
            status: None,
            text: String::new(),
            finish_reason: None,
            error: Some(e.into()),
            done: false,
            elapsed_ms: 0,
            sse: false,
            model: None,
            usage: None,
            headers: BTreeMap::new(),
        };
        assert_eq!(lost("timeout").end(), TurnEnd::TimedOut);
        assert_eq!(lost("reset").end(), TurnEnd::TransportError);
    }
}
