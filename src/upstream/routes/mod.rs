//! Request routing and what the three upstream routes share: header parsing (bearer, probe,
//! idempotency key), bounded body reads, JSON answers and the pre-response part of faults
//! (answer instead, delay, stall, reset) with the fault's extra headers.

mod chat;
mod control;
mod sse;
mod tools;
mod ws;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, Limited};

use super::conn::{ConnCtl, Cut};
use super::serving::ServedBody;
use super::faults::{Action, CutAt, CutMode, InjectThen, RouteKind};
use super::{Decision, Incoming, Upstream};
use crate::wire::{self, route};

/// Errors a handler or body returns; any error makes hyper drop the connection.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The response body of every route.
pub(crate) type Body = UnsyncBoxBody<Bytes, BoxError>;

/// Largest request body read.
const MAX_BODY: usize = 1 << 20;

/// Routes one request; its response body ends the serving its admission began
/// ([`super::serving`]), and a handler that fails (a reset, a stall whose client left) ends it
/// as it returns.
pub(crate) async fn handle(
    req: Request<hyper::body::Incoming>,
    up: Arc<Upstream>,
    ctl: Arc<ConnCtl>,
) -> Result<Response<Body>, BoxError> {
    let answer = route(req, &up, &ctl).await;
    let serving = ctl.take_serving();
    match answer {
        Ok(r) => Ok(r.map(|b| ServedBody::wrap(b, serving).boxed_unsync())),
        Err(e) => {
            drop(serving);
            Err(e)
        }
    }
}

/// The route's handler.
async fn route(
    req: Request<hyper::body::Incoming>,
    up: &Arc<Upstream>,
    ctl: &Arc<ConnCtl>,
) -> Result<Response<Body>, BoxError> {
    let path = req.uri().path();
    if path == route::CHAT {
        if req.method() != Method::POST {
            return Ok(method_not_allowed("POST"));
        }
        return chat::handle(req, up, ctl).await;
    }
    if path.starts_with(route::TOOLS_PREFIX) {
        if req.method() != Method::POST {
            return Ok(method_not_allowed("POST"));
        }
        // The name is percent-decoded: `/tools/a%2Fb` is the tool (and dep) `a/b`.
        let Some(name) = wire::tool_of_path(path) else {
            return Ok(error_json(StatusCode::NOT_FOUND, "no such tool route"));
        };
        return tools::handle(req, name, up, ctl).await;
    }
    if path == route::WS {
        if req.method() != Method::GET {
            return Ok(method_not_allowed("GET"));
        }
        return ws::handle(req, up, ctl).await;
    }
    if path.starts_with(route::CONTROL_PREFIX) {
        return Ok(control::handle(req, up).await);
    }
    Ok(error_json(StatusCode::NOT_FOUND, "no such route"))
}

/// The headers scoping and stats look at.
#[derive(Debug, Default)]
pub(crate) struct Meta {
    /// `Authorization: Bearer X` (or `x-api-key` / `api-key`).
    pub bearer: Option<String>,
    /// `X-Breaker-Probe`.
    pub probe: Option<String>,
    /// `X-Rehearse-Canary` present: a synthetic health check.
    pub canary: bool,
    /// `Idempotency-Key`.
    pub idempotency_key: Option<String>,
    /// `X-Rehearse-Host` (fleet mode).
    pub host: Option<String>,
    /// `X-Rehearse-Turn`: the turn our own transport marked (`wire::turn`).
    pub turn: Option<u64>,
}

impl Meta {
    /// The request as fault selection sees it: its route, what names its target, and these
    /// headers.
    pub(super) fn incoming<'a>(
        &'a self,
        route: RouteKind,
        tool: Option<&'a str>,
        channel: Option<&'a str>,
        model: Option<&'a str>,
    ) -> Incoming<'a> {
        Incoming {
            route,
            tool,
            channel,
            bearer: self.bearer.as_deref(),
            model,
            probe: self.probe.as_deref(),
            canary: self.canary,
            idempotency_key: self.idempotency_key.as_deref(),
            host: self.host.as_deref(),
            turn: self.turn,
            tokens: None,
            usage: None,
            stream: None,
            body: None,
        }
    }

    pub(super) fn from_headers(h: &HeaderMap) -> Self {
        // One pass over the request's few headers instead of a hashed lookup per name (the
        // upstream's hot path); a name's first value counts, as `HeaderMap::get` has it.
        let (mut auth, mut x_api_key, mut api_key) = (None, None, None);
        let (mut probe, mut idempotency_key, mut host, mut turn) = (None, None, None, None);
        let mut canary = false;
        for (name, value) in h {
            let slot = match name.as_str() {
                "authorization" => &mut auth,
                "x-api-key" => &mut x_api_key,
                "api-key" => &mut api_key,
                wire::header::PROBE => &mut probe,
                wire::header::IDEMPOTENCY_KEY => &mut idempotency_key,
                wire::header::HOST => &mut host,
                wire::header::TURN => &mut turn,
                wire::header::CANARY => {
                    canary = true;
                    continue;
                }
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value);
            }
        }
        fn text(v: Option<&HeaderValue>) -> Option<&str> {
            v.and_then(|v| v.to_str().ok()).map(str::trim)
        }
        let bearer = text(auth)
            .and_then(|a| {
                a.strip_prefix("Bearer ")
                    .or_else(|| a.strip_prefix("bearer "))
            })
            .map(str::trim)
            .or_else(|| text(x_api_key))
            .or_else(|| text(api_key))
            .map(str::to_string);
        Self {
            bearer,
            probe: text(probe).map(str::to_string),
            canary,
            idempotency_key: text(idempotency_key).map(str::to_string),
            host: text(host)
                .filter(|h| {
                    h.len() <= 64
                        && h.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
                })
                .map(str::to_string),
            turn: text(turn).and_then(crate::upstream::turn::of_header),
        }
    }
}

/// Reads a request body of at most [`MAX_BODY`] bytes; the error is the answer to send.
pub(crate) async fn read_body(
    req: Request<hyper::body::Incoming>,
) -> Result<Bytes, Response<Body>> {
    match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) => {
            let msg = format!("could not read the request body: {e}");
            Err(error_json(StatusCode::BAD_REQUEST, &msg))
        }
    }
}

/// A body of `bytes`.
pub(crate) fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed_unsync()
}

/// A JSON answer.
pub(crate) fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    r
}

/// `{"error": {"message": ...}}` with `status`.
pub(crate) fn error_json(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({ "error": { "message": message, "type": "invalid_request" } });
    json_response(status, body.to_string())
}

fn method_not_allowed(allow: &'static str) -> Response<Body> {
    let mut r = error_json(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    r.headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static(allow));
    r
}

/// How the normal response goes out after the pre-response faults.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Proceed {
    /// As usual.
    Normal,
    /// Tokens or body pieces at this interval.
    Slow(Duration),
    /// Cut after this fraction of the body or tokens, this way, there.
    Cut(f64, CutMode, CutAt),
    /// A stream's first content token this long after its role chunk; a JSON answer whole
    /// this long late ([`Proceed::settle_json`]).
    FirstToken(Duration),
    /// Silence after this fraction (cut there) for this long, then the rest.
    Pause(f64, CutAt, Duration),
    /// A stream's event after this many content chunks, then what follows it.
    Inject(u64, Bytes, InjectThen),
}

impl Proceed {
    /// How a JSON answer (not a stream) goes out: a first-token delay holds the whole answer
    /// back (it is waited out here), and a stream event has no place in one.
    pub(crate) async fn settle_json(self) -> Self {
        match self {
            Self::FirstToken(d) => {
                tokio::time::sleep(d).await;
                Self::Normal
            }
            Self::Inject(..) => Self::Normal,
            other => other,
        }
    }
}

/// What goes out after the pre-response faults: how the normal response proceeds and the
/// fault's extra headers, to set on it.
pub(crate) type Go = (Proceed, Vec<(String, String)>);

/// Acts out the part of a fault that happens before the response: answering instead
/// (`Ok(Err(response))`, with the fault's extra headers), delaying, stalling or resetting
/// (`Err`: hyper drops the connection).
pub(crate) async fn pre_response(
    decision: Option<Decision>,
    ctl: &ConnCtl,
) -> Result<Result<Go, Response<Body>>, BoxError> {
    let Some(Decision {
        action, headers, ..
    }) = decision
    else {
        return Ok(Ok((Proceed::Normal, Vec::new())));
    };
    let proceed = match action {
        Action::Respond {
            status,
            headers: own,
            body,
        } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut r = json_response(status, body);
            for (name, value) in own {
                if let Ok(v) = header::HeaderValue::from_str(&value) {
                    r.headers_mut().insert(name, v);
                }
            }
            set_headers(&mut r, &headers);
            return Ok(Err(r));
        }
        Action::Delay(d) => {
            tokio::time::sleep(d).await;
            Proceed::Normal
        }
        Action::Stall => {
            ctl.hold().await;
            return Err(Box::new(Cut));
        }
        Action::Reset => {
            ctl.arm_reset();
            return Err(Box::new(Cut));
        }
        Action::Cut {
            after_fraction,
            mode,
            at,
        } => Proceed::Cut(after_fraction, mode, at),
        Action::SlowStream(d) => Proceed::Slow(d),
        Action::WsPingTimeout | Action::WsClose(_) => Proceed::Normal,
        Action::FirstToken(d) => Proceed::FirstToken(d),
        Action::Pause {
            after_fraction,
            at,
            resume,
        } => Proceed::Pause(after_fraction, at, resume),
        Action::Inject {
            after_chunks,
            event,
            then,
        } => Proceed::Inject(after_chunks, event, then),
    };
    Ok(Ok((proceed, headers)))
}

/// Sets a fault's extra headers on `r` (validated when the fault was read; one that is not a
/// header after all is left out).
pub(crate) fn set_headers(r: &mut Response<Body>, headers: &[(String, String)]) {
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            header::HeaderValue::from_str(value),
        ) {
            r.headers_mut().insert(n, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Meta::from_headers` as it was, one `HeaderMap::get` per name: the single pass must read
    /// every request the same way.
    fn reference(h: &HeaderMap) -> Meta {
        let text = |name: &str| {
            h.get(name)
                .and_then(|v| v.to_str().ok())
                .map(|s| s.trim().to_string())
        };
        let bearer = text(header::AUTHORIZATION.as_str())
            .and_then(|a| {
                a.strip_prefix("Bearer ")
                    .or_else(|| a.strip_prefix("bearer "))
                    .map(|t| t.trim().to_string())
            })
            .or_else(|| text("x-api-key"))
            .or_else(|| text("api-key"));
        Meta {
            bearer,
            probe: text(wire::header::PROBE),
            canary: h.contains_key(wire::header::CANARY),
            idempotency_key: text(wire::header::IDEMPOTENCY_KEY),
            host: text(wire::header::HOST).filter(|h| {
                h.len() <= 64
                    && h.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            }),
            turn: text(wire::header::TURN)
                .as_deref()
                .and_then(crate::upstream::turn::of_header),
        }
    }

    type Key<'a> = (Option<&'a str>, Option<&'a str>, bool, Option<&'a str>, Option<&'a str>, Option<u64>);

    fn key(m: &Meta) -> Key<'_> {
        (
            m.bearer.as_deref(),
            m.probe.as_deref(),
            m.canary,
            m.idempotency_key.as_deref(),
            m.host.as_deref(),
            m.turn,
        )
    }

    #[test]
    fn one_pass_reads_headers_as_one_lookup_per_name_did() {
        let cases: &[&[(&str, &[u8])]] = &[
            &[],
            &[("authorization", b"Bearer  sk-1 ")],
            &[("authorization", b"bearer sk-2"), ("x-api-key", b"k")],
            &[("authorization", b"Basic abc"), ("x-api-key", b" k2 ")],
            &[("api-key", b"a"), ("x-api-key", b"b")],
            &[
                ("authorization", b"Bearer first"),
                ("authorization", b"Bearer second"),
            ],
            // The first value is not text: `get` saw only it, so no bearer from this header.
            &[
                ("authorization", b"Bearer \xff"),
                ("authorization", b"Bearer ok"),
            ],
            &[
                ("x-breaker-probe", b"openai/default/abc"),
                ("x-rehearse-canary", b""),
                ("idempotency-key", b" k-1 "),
                ("x-rehearse-host", b"host-3.local"),
                ("content-type", b"application/json"),
            ],
            &[("x-rehearse-host", b"bad host!")],
            &[("x-rehearse-host", b"h1"), ("x-rehearse-host", b"h2")],
            &[("x-rehearse-turn", b"rehearse-turn-17-24b4")],
            &[("x-rehearse-turn", b"rehearse-turn-17")],
        ];
        for case in cases {
            let mut h = HeaderMap::new();
            for (name, value) in *case {
                h.append(
                    http::HeaderName::from_static(name),
                    HeaderValue::from_bytes(value).unwrap(),
                );
            }
            let (got, want) = (Meta::from_headers(&h), reference(&h));
            assert_eq!(key(&got), key(&want), "{case:?}");
        }
    }
}
