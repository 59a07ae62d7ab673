//! `POST /tools/{name}`: a JSON answer echoing the call (`{"tool", "ok", "result": {"echo"}}`).

use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use tokio::time::Instant;

use super::sse::json_body;
use super::{Body, BoxError, Meta, error_json, pre_response, read_body};
use crate::upstream::conn::ConnCtl;
use crate::upstream::faults::RouteKind;
use crate::upstream::{Incoming, Upstream};

/// Pieces a dribbled (slow_stream) tool answer is split into.
const SLOW_PIECES: usize = 8;

/// Serves one tool call.
pub(crate) async fn handle(
    req: Request<hyper::body::Incoming>,
    name: String,
    up: &Upstream,
    ctl: &Arc<ConnCtl>,
) -> Result<Response<Body>, BoxError> {
    let meta = Meta::from_headers(req.headers());
    let body = match read_body(req).await {
        Ok(b) => b,
        Err(r) => return Ok(r),
    };
    let args: serde_json::Value = if body.iter().all(u8::is_ascii_whitespace) {
        serde_json::Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                let msg = format!("tool body is not JSON: {e}");
                return Ok(error_json(StatusCode::BAD_REQUEST, &msg));
            }
        }
    };
    let decision = up.admit(
        &Incoming {
            route: RouteKind::Tool,
            tool: Some(&name),
            channel: None,
            bearer: meta.bearer.as_deref(),
            model: None,
            probe: meta.probe.as_deref(),
            idempotency_key: meta.idempotency_key.as_deref(),
        },
        Instant::now(),
        SystemTime::now(),
    );
    let proceed = match pre_response(decision.map(|d| d.1), ctl).await? {
        Ok(p) => p,
        Err(r) => return Ok(r),
    };
    let answer = serde_json::json!({ "tool": name, "ok": true, "result": { "echo": args } });
    Ok(json_body(
        Bytes::from(answer.to_string()),
        SLOW_PIECES,
        proceed,
        ctl.clone(),
    ))
}
