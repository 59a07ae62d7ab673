//! Turning a proxied request into a traffic line without letting a secret through (pure).
//!
//! The traffic format has no header field, so `Authorization`, `Proxy-Authorization`,
//! `api-key`, `x-api-key` and `Cookie` values never reach the file by construction. What could
//! leak is the body and the strings taken from the request: chat `messages` are not recorded at
//! all (the format has no such field), and a tool body and every recorded string (model, tool
//! name, idempotency key, WebSocket channel, tenant, session) are scrubbed before they are
//! written:
//! - values under secret-looking keys (`password`, `token`, `api_key`, `authorization`, `cookie`,
//!   `secret`, ... compared without case, `-` or `_`) become `"[redacted]"`;
//! - every occurrence of a secret seen in that request's headers (the whole value, the
//!   credential after `Bearer `/`Basic `, each cookie value) is replaced by `[redacted]`, in
//!   string values and object keys alike;
//! - a string that starts with `Bearer ` or `Basic ` becomes `"[redacted]"`.
//!
//! The replacing itself is the one scrubber's ([`crate::util::secrets`]), with the recording's mask.
//!
//! Longer than 400 lines on purpose: every secret-bearing field is redacted in one place, with its
//! tests, so none can be missed.

use http::HeaderMap;
use serde_json::{Map, Value};

use super::traffic::TrafficLine;
use crate::engine::OpClass;
use crate::engine::RequestKind;
use crate::util::secrets::{Mask, Scrubber, is_credential};
use crate::wire::header::{
    BUDGET as H_BUDGET, CLASS as H_CLASS, IDEMPOTENT as H_IDEMPOTENT, SESSION as H_SESSION,
    TENANT as H_TENANT,
};
use crate::wire::{self, header, route};

/// What replaces a removed secret.
pub(crate) const REDACTED: &str = "[redacted]";

/// Headers whose values are secrets.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "api-key",
    "x-api-key",
    "cookie",
];

/// Body keys (lowercase, without `-`/`_`) whose values are replaced.
const SECRET_KEYS: &[&str] = &[
    "authorization",
    "proxyauthorization",
    "apikey",
    "xapikey",
    "cookie",
    "setcookie",
    "password",
    "passwd",
    "secret",
    "clientsecret",
    "apisecret",
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "sessiontoken",
    "bearer",
    "privatekey",
    "credentials",
];

/// Default `max_tokens` recorded when a chat request carries none.
const DEFAULT_MAX_TOKENS: u32 = 1024;

/// The secret strings carried by a request's headers (values shorter than 4 bytes are ignored:
/// scrubbing them would mangle ordinary text).
fn header_secrets(headers: &HeaderMap) -> Vec<String> {
    let mut out = Vec::new();
    for name in SECRET_HEADERS {
        for v in headers.get_all(*name) {
            let v = String::from_utf8_lossy(v.as_bytes()).trim().to_string();
            if let Some((_, cred)) = v.split_once(' ') {
                out.push(cred.trim().to_string());
            }
            if *name == "cookie" {
                for pair in v.split(';') {
                    if let Some((_, val)) = pair.split_once('=') {
                        out.push(val.trim().to_string());
                    }
                }
            }
            out.push(v);
        }
    }
    out.retain(|s| s.len() >= 4);
    // Longest first, so a whole value is replaced before its parts.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// Scrubs `value` in place (see the module docs).
pub(crate) fn scrub(value: &mut Value, secrets: &Scrubber) {
    match value {
        Value::String(s) => *s = scrub_str(s, secrets),
        Value::Array(items) => items.iter_mut().for_each(|v| scrub(v, secrets)),
        Value::Object(map) => {
            let old = std::mem::take(map);
            let mut new = Map::new();
            for (k, mut v) in old {
                if is_secret_key(&k) {
                    v = Value::String(REDACTED.to_string());
                } else {
                    scrub(&mut v, secrets);
                }
                new.insert(scrub_str(&k, secrets), v);
            }
            *map = new;
        }
        _ => {}
    }
}

fn is_secret_key(key: &str) -> bool {
    let norm: String = key
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect::<String>()
        .to_ascii_lowercase();
    SECRET_KEYS.contains(&norm.as_str())
}

fn scrub_str(s: &str, secrets: &Scrubber) -> String {
    if is_credential(s) {
        return REDACTED.to_string();
    }
    secrets.scrub(s)
}

/// The scrubber of one recorded request: the secrets of its headers, each `[redacted]`.
fn recording_scrubber(headers: &HeaderMap) -> Scrubber {
    Scrubber::new(header_secrets(headers), Mask::Fixed(REDACTED))
}

/// The traffic line of a `/ws` session (one message so far: the journal counts the rest), or
/// `None` without a `channel`. The channel is scrubbed like every recorded string.
pub fn ws_line(at_ms: u64, query: Option<&str>, headers: &HeaderMap) -> Option<TrafficLine> {
    let channel = ws_channel(query)?;
    Some(with_meta(
        at_ms,
        RequestKind::Ws {
            channel,
            messages: 1,
        },
        headers,
    ))
}

/// The `channel` query parameter of a `/ws` request.
pub fn ws_channel(query: Option<&str>) -> Option<String> {
    wire::channel_of_query(query).filter(|c| !c.is_empty())
}

/// A line with the metadata of the `X-Rehearse-*` headers (invalid values are left out), every
/// string of it scrubbed of the request's header secrets (see the module docs).
fn with_meta(at_ms: u64, kind: RequestKind, headers: &HeaderMap) -> TrafficLine {
    let secrets = recording_scrubber(headers);
    let h = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| scrub_str(v, &secrets))
            .filter(|s| !s.is_empty())
    };
    let kind = match kind {
        // A recording keeps no conversation text (it is the users'): one user message on replay.
        RequestKind::Llm {
            model,
            stream,
            max_tokens,
            ..
        } => RequestKind::Llm {
            model: scrub_str(&model, &secrets),
            stream,
            max_tokens,
            messages: None,
        },
        RequestKind::Tool {
            name: tool,
            mut body,
            idempotent,
            idempotency_key,
        } => {
            scrub(&mut body, &secrets);
            RequestKind::Tool {
                name: scrub_str(&tool, &secrets),
                body,
                idempotent,
                idempotency_key: idempotency_key.map(|k| scrub_str(&k, &secrets)),
            }
        }
        RequestKind::Ws { channel, messages } => RequestKind::Ws {
            channel: scrub_str(&channel, &secrets),
            messages,
        },
    };
    TrafficLine {
        at_ms,
        kind,
        tenant: h(H_TENANT),
        budget_tokens: h(H_BUDGET).and_then(|b| b.parse().ok()),
        session: h(H_SESSION),
        class: h(H_CLASS).and_then(|c| serde_json::from_value::<OpClass>(Value::String(c)).ok()),
    }
}

/// Why a proxied request is not a traffic line.
#[derive(Debug, thiserror::Error)]
pub enum NotRecordable {
    #[error("{method} {path}: not a recorded route")]
    Route { method: http::Method, path: String },
    #[error("POST {path}: body is not JSON ({source})")]
    Body {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("POST {path}: body has no `model`")]
    NoModel { path: String },
}

/// The traffic line of a plain HTTP request, or why it is not recordable (unknown route,
/// unparsable body). The body is scrubbed; headers other than the hints are not recorded.
pub fn http_line(
    at_ms: u64,
    method: &http::Method,
    path: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<TrafficLine, NotRecordable> {
    let not_a_route = || NotRecordable::Route {
        method: method.clone(),
        path: path.to_string(),
    };
    if method != http::Method::POST {
        return Err(not_a_route());
    }
    let json = || -> Result<Value, NotRecordable> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Object(Map::new()));
        }
        serde_json::from_slice(body).map_err(|source| NotRecordable::Body {
            path: path.to_string(),
            source,
        })
    };
    let kind = if path == route::CHAT {
        let v = json()?;
        let model = v
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .ok_or_else(|| NotRecordable::NoModel {
                path: path.to_string(),
            })?;
        let max_tokens = ["max_tokens", "max_completion_tokens"]
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_u64))
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n >= 1)
            .unwrap_or(DEFAULT_MAX_TOKENS);
        RequestKind::Llm {
            model: model.to_string(),
            stream: v.get("stream").and_then(Value::as_bool).unwrap_or(false),
            max_tokens: Some(max_tokens),
            messages: None,
        }
    } else if let Some(name) = path.strip_prefix(route::TOOLS_PREFIX)
        && !name.is_empty()
        && !name.contains('/')
    {
        let body = json()?;
        let key = headers
            .get(header::IDEMPOTENCY_KEY)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        RequestKind::Tool {
            name: wire::decode_lossy(name),
            body,
            idempotent: headers
                .get(H_IDEMPOTENT)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true")),
            idempotency_key: key,
        }
    } else {
        return Err(not_a_route());
    };
    Ok(with_meta(at_ms, kind, headers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn secrets_from_headers_include_credentials_and_cookie_values() {
        let h = headers(&[
            ("authorization", "Bearer sk-live-abc123"),
            ("x-api-key", "xk-999"),
            ("cookie", "sid=cookie-val-1; theme=dark"),
        ]);
        let s = header_secrets(&h);
        for want in [
            "sk-live-abc123",
            "Bearer sk-live-abc123",
            "xk-999",
            "cookie-val-1",
        ] {
            assert!(s.contains(&want.to_string()), "{want} in {s:?}");
        }
        assert!(s.contains(&"dark".to_string()));
    }

    #[test]
    fn scrub_removes_secret_keys_header_secrets_and_bearer_strings() {
        let secrets = Scrubber::new(["sk-live-abc123"], Mask::Fixed(REDACTED));
        let mut v = json!({
            "q": "find sk-live-abc123 now",
            "api_key": "anything",
            "Password": 42,
            "nested": [{"X-Api-Key": "k"}, "Bearer zzz", {"sk-live-abc123": 1}],
            "max_tokens": 5
        });
        scrub(&mut v, &secrets);
        let text = v.to_string();
        assert!(!text.contains("sk-live-abc123"), "{text}");
        assert!(
            !text.contains("anything") && !text.contains("zzz"),
            "{text}"
        );
        assert_eq!(v["q"], "find [redacted] now");
        assert_eq!(v["Password"], REDACTED);
        assert_eq!(
            v["max_tokens"], 5,
            "ordinary keys containing `token` are kept"
        );
    }

    #[test]
    fn chat_request_becomes_llm_line_without_messages() {
        let h = headers(&[("authorization", "Bearer sk-1234"), (H_TENANT, "team-b")]);
        let body = br#"{"model":"anthropic/claude-opus","stream":true,"max_tokens":77,"messages":[{"role":"user","content":"sk-1234"}]}"#;
        let line = http_line(5, &http::Method::POST, "/v1/chat/completions", &h, body).unwrap();
        assert_eq!(
            line.kind,
            RequestKind::Llm {
                model: "anthropic/claude-opus".into(),
                stream: true,
                max_tokens: Some(77),
                messages: None,
            }
        );
        assert_eq!(line.tenant.as_deref(), Some("team-b"));
        assert!(!line.to_json().contains("sk-1234"));
    }

    #[test]
    fn tool_request_keeps_key_and_idempotency_hint() {
        let h = headers(&[
            ("idempotency-key", "k-1"),
            (H_IDEMPOTENT, "false"),
            (H_CLASS, "tool_call"),
        ]);
        let line = http_line(
            0,
            &http::Method::POST,
            "/tools/ticket_create",
            &h,
            b"{\"t\":1}",
        )
        .unwrap();
        assert_eq!(
            line.kind,
            RequestKind::Tool {
                name: "ticket_create".into(),
                body: json!({"t": 1}),
                idempotent: false,
                idempotency_key: Some("k-1".into())
            }
        );
        assert_eq!(line.class, Some(OpClass::ToolCall));
        let none = http_line(0, &http::Method::GET, "/tools/x", &h, b"").unwrap_err();
        assert!(none.to_string().contains("not a recorded route"), "{none}");
        assert!(http_line(0, &http::Method::POST, "/tools/x", &h, b"not json").is_err());
    }

    #[test]
    fn ws_channel_is_decoded() {
        assert_eq!(
            ws_channel(Some("a=1&channel=real%20time")).as_deref(),
            Some("real time")
        );
        assert_eq!(ws_channel(Some("a=1")), None);
        assert_eq!(wire::decode_lossy("%zz%41"), "%zzA");
    }

    /// Found by `tests/props/main.rs` (header secrets never reach the recording): a secret repeated
    /// in `X-Rehearse-Tenant`/`X-Rehearse-Session` or a WebSocket `?channel=` was written as is.
    #[test]
    fn tenant_session_and_ws_channel_are_scrubbed() {
        let h = headers(&[
            ("authorization", "Bearer sk-live-abc123"),
            (H_TENANT, "team sk-live-abc123"),
            (H_SESSION, "sk-live-abc123"),
        ]);
        let line = http_line(0, &http::Method::POST, "/tools/t", &h, b"{}").unwrap();
        assert_eq!(line.tenant.as_deref(), Some("team [redacted]"));
        assert_eq!(line.session.as_deref(), Some(REDACTED));
        let ws = ws_line(0, Some("channel=rt-sk-live-abc123"), &h).unwrap();
        assert_eq!(
            ws.kind,
            RequestKind::Ws {
                channel: "rt-[redacted]".into(),
                messages: 1
            }
        );
        assert!(ws_line(0, Some("x=1"), &h).is_none());
    }
}
