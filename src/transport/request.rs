//! The one request builder: what to call ([`Endpoint`]) plus who asks ([`RequestSpec`]) →
//! an HTTP request or a WebSocket handshake request. The run's transport and `rehearse replay`
//! both build here, so a tool name, a channel, a header or a body cannot differ between them.
//!
//! - Routes come from [`crate::wire`]: a tool name and a channel are percent-encoded there
//!   (`/tools/crm%20search%2Fv2`, `/ws?channel=room%201`).
//! - Headers: `Content-Type: application/json` (HTTP), `Authorization: Bearer` when a
//!   credential is given, `Idempotency-Key`, `X-Breaker-Probe: DEP` on probes,
//!   `X-Rehearse-Canary: 1` on canaries, `X-Rehearse-Turn` with the turn marker of the request
//!   an engine call is an attempt of (`wire::turn`), then any extra headers (a replayed line's metadata, a
//!   gateway's credential).
//! - Bodies: a model call is an OpenAI-shaped completion request with one user message; a tool
//!   call sends its JSON body; a WebSocket handshake has none.
//!
//! A request that cannot be built (a header value with a control character, say) is a
//! [`BuildError`]: the caller reports it as such, never as a transport failure of the upstream.

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request};
use http_body_util::Full;

use crate::engine::transport::{Call, Endpoint, Origin};
use crate::wire::{self, header, route};

/// The one user message of a model call's body.
const PROMPT: &str = "rehearse";

/// Why a request could not be built.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum BuildError {
    /// A header value is not allowed in HTTP (a control character, a newline).
    #[error("header `{name}`: the value is not a valid header value")]
    Header {
        /// The header's name.
        name: String,
    },
    /// The URI did not parse (a base that is not `scheme://authority[/prefix]`).
    #[error("URI `{uri}`: {reason}")]
    Uri {
        /// The URI as built.
        uri: String,
        /// What the parser said.
        reason: String,
    },
}

/// Everything a request carries besides its endpoint.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestSpec<'a> {
    /// Sent as `Authorization: Bearer …` (never logged).
    pub bearer: Option<&'a str>,
    /// Sent as `Idempotency-Key`.
    pub idempotency_key: Option<&'a str>,
    /// Sent as `X-Breaker-Probe` (the dep) when the call is a probe or canary.
    pub probe: Option<&'a str>,
    /// Adds `X-Rehearse-Canary: 1`.
    pub canary: bool,
    /// Sent as `X-Rehearse-Turn` (the marker of this turn, `wire::turn`).
    pub turn: Option<u64>,
    /// More headers, added last in this order (see [`RequestSpec::with`]).
    pub extra: Vec<(HeaderName, HeaderValue)>,
}

impl<'a> RequestSpec<'a> {
    /// The spec of an engine call.
    pub(crate) fn of_call(call: &'a Call) -> Self {
        Self {
            bearer: call.bearer.as_deref(),
            idempotency_key: call.idempotency_key.as_deref(),
            probe: call.probe.as_deref(),
            canary: call.origin == Origin::Canary,
            turn: call.request,
            extra: Vec::new(),
        }
    }

    /// Adds an extra header from text, checked: a value HTTP forbids is a [`BuildError`].
    pub(crate) fn with(&mut self, name: HeaderName, value: &str) -> Result<(), BuildError> {
        let v = header_value(&name, value)?;
        self.extra.push((name, v));
        Ok(())
    }

    /// Adds `X-Rehearse-Host: ID` when `host` names a fleet host (1–64 of `A-Z a-z 0-9 . _ -`,
    /// checked where the id was made; anything else is left out).
    pub(crate) fn with_host(mut self, host: Option<&str>) -> Self {
        if let Some(v) = host.and_then(|h| HeaderValue::from_str(h).ok()) {
            self.extra
                .push((HeaderName::from_static(crate::wire::header::HOST), v));
        }
        self
    }

    /// The headers in the order they are sent.
    fn headers(&self) -> Result<Vec<(HeaderName, HeaderValue)>, BuildError> {
        let mut out = Vec::new();
        let mut push = |name: HeaderName, value: &str| {
            let v = header_value(&name, value)?;
            out.push((name, v));
            Ok::<(), BuildError>(())
        };
        if let Some(token) = self.bearer {
            push(http::header::AUTHORIZATION, &format!("Bearer {token}"))?;
        }
        if let Some(key) = self.idempotency_key {
            push(HeaderName::from_static(header::IDEMPOTENCY_KEY), key)?;
        }
        if let Some(dep) = self.probe {
            push(HeaderName::from_static(header::PROBE), dep)?;
        }
        if self.canary {
            push(HeaderName::from_static(header::CANARY), "1")?;
        }
        if let Some(n) = self.turn {
            push(HeaderName::from_static(header::TURN), &wire::turn::marker(n))?;
        }
        out.extend(self.extra.iter().cloned());
        Ok(out)
    }
}

fn header_value(name: &HeaderName, value: &str) -> Result<HeaderValue, BuildError> {
    HeaderValue::from_str(value).map_err(|_| BuildError::Header {
        name: name.as_str().to_string(),
    })
}

/// The path (and query) of an endpoint's route, names percent-encoded.
pub fn path(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Llm { .. } => route::CHAT.to_string(),
        Endpoint::Tool { name, .. } => wire::tool_path(name),
        Endpoint::Ws { channel, .. } => wire::ws_path(channel),
    }
}

/// The JSON body of an HTTP endpoint (`None` for a WebSocket session).
pub fn body(endpoint: &Endpoint) -> Option<serde_json::Value> {
    match endpoint {
        Endpoint::Llm {
            model,
            stream,
            max_tokens,
            messages,
        } => {
            let messages = match messages {
                Some(m) => serde_json::json!(m),
                None => serde_json::json!([{"role": "user", "content": PROMPT}]),
            };
            Some(serde_json::json!({
                "model": model,
                "stream": stream,
                "max_tokens": max_tokens,
                "messages": messages,
            }))
        }
        Endpoint::Tool { body, .. } => Some(body.clone()),
        Endpoint::Ws { .. } => None,
    }
}

/// The HTTP request of a model or tool call to `base` (`http://HOST:PORT[/prefix]`, no
/// trailing slash). A WebSocket endpoint has no HTTP request: see [`ws`].
pub fn http(
    base: &str,
    endpoint: &Endpoint,
    spec: &RequestSpec<'_>,
) -> Result<Request<Full<Bytes>>, BuildError> {
    let uri = format!("{base}{}", path(endpoint));
    let body = body(endpoint).unwrap_or(serde_json::Value::Null);
    let mut b = Request::builder()
        .method(Method::POST)
        .uri(&uri)
        .header(http::header::CONTENT_TYPE, "application/json");
    for (name, value) in spec.headers()? {
        b = b.header(name, value);
    }
    b.body(Full::new(Bytes::from(body.to_string())))
        .map_err(|e| BuildError::Uri {
            uri,
            reason: e.to_string(),
        })
}

/// The handshake request of a WebSocket session to `ws_base` (`ws://HOST:PORT[/prefix]`).
pub(crate) fn ws(
    ws_base: &str,
    endpoint: &Endpoint,
    spec: &RequestSpec<'_>,
) -> Result<tokio_tungstenite::tungstenite::handshake::client::Request, BuildError> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let uri = format!("{ws_base}{}", path(endpoint));
    let mut req = uri
        .as_str()
        .into_client_request()
        .map_err(|e| BuildError::Uri {
            uri: uri.clone(),
            reason: e.to_string(),
        })?;
    for (name, value) in spec.headers()? {
        req.headers_mut().insert(name, value);
    }
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Endpoint {
        Endpoint::Tool {
            name: name.to_string(),
            body: serde_json::json!({"q": 1}),
        }
    }

    #[test]
    fn a_tool_name_with_a_space_and_a_slash_is_one_encoded_segment() {
        let req = http(
            "http://127.0.0.1:9",
            &tool("crm search/v2"),
            &RequestSpec::default(),
        );
        let req = req.unwrap();
        assert_eq!(req.uri().path(), "/tools/crm%20search%2Fv2");
        assert_eq!(req.method(), Method::POST);
    }

    #[test]
    fn a_channel_with_a_space_and_a_slash_is_one_encoded_query_value() {
        let endpoint = Endpoint::Ws {
            channel: "room 1/a".to_string(),
            messages: 1,
        };
        let req = ws("ws://127.0.0.1:9", &endpoint, &RequestSpec::default()).unwrap();
        assert_eq!(req.uri().path(), "/ws");
        assert_eq!(req.uri().query(), Some("channel=room%201%2Fa"));
    }

    #[test]
    fn probe_canary_idempotency_and_bearer_headers_use_the_wire_names() {
        let spec = RequestSpec {
            bearer: Some("sk-1"),
            idempotency_key: Some("k-7"),
            probe: Some("crm"),
            canary: true,
            turn: Some(17),
            extra: Vec::new(),
        };
        let mut spec = spec;
        spec.with(HeaderName::from_static(header::TENANT), "team-a")
            .unwrap();
        let bad = spec
            .clone()
            .with(HeaderName::from_static(header::TENANT), "a\rb");
        assert_eq!(
            bad,
            Err(BuildError::Header {
                name: header::TENANT.to_string()
            })
        );
        let req = http("http://h:1", &tool("crm"), &spec).unwrap();
        let h = req.headers();
        assert_eq!(h["authorization"], "Bearer sk-1");
        assert_eq!(h[header::IDEMPOTENCY_KEY], "k-7");
        assert_eq!(h[header::PROBE], "crm");
        assert_eq!(h[header::CANARY], "1");
        assert_eq!(h[header::TURN], wire::turn::marker(17));
        assert_eq!(h[header::TENANT], "team-a");
        assert_eq!(h["content-type"], "application/json");
    }

    #[test]
    fn a_header_value_that_http_forbids_is_a_build_error_naming_the_header() {
        let spec = RequestSpec {
            idempotency_key: Some("k\n1"),
            ..RequestSpec::default()
        };
        let err = http("http://h:1", &tool("crm"), &spec).unwrap_err();
        assert_eq!(
            err,
            BuildError::Header {
                name: header::IDEMPOTENCY_KEY.to_string()
            }
        );
        let bad_base = http("not a base", &tool("crm"), &RequestSpec::default());
        assert!(matches!(bad_base, Err(BuildError::Uri { .. })));
    }

    #[test]
    fn a_model_call_body_is_openai_shaped() {
        let endpoint = Endpoint::Llm {
            model: "openai-codex/gpt-5".into(),
            stream: true,
            max_tokens: Some(64),
            messages: None,
        };
        let v = body(&endpoint).unwrap();
        assert_eq!(v["model"], "openai-codex/gpt-5");
        assert_eq!(v["stream"], true);
        assert_eq!(v["max_tokens"], 64);
        assert_eq!(v["messages"][0]["content"], PROMPT);
        assert_eq!(path(&endpoint), route::CHAT);
        // A traffic row's conversation goes out as it is, a prefill last.
        let msg = |role: &str, content: &str| crate::engine::request::ChatMessage {
            role: role.into(),
            content: content.into(),
        };
        let endpoint = Endpoint::Llm {
            model: "m/x".into(),
            stream: false,
            max_tokens: Some(4),
            messages: Some(vec![msg("user", "hi"), msg("assistant", "Sure,")]),
        };
        let v = body(&endpoint).unwrap();
        assert_eq!(
            v["messages"],
            serde_json::json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure,"}])
        );
    }
}
