//! `POST /tools/{name}`: a JSON answer echoing the call (`{"tool", "ok", "result": {"echo"}}`).

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};

use super::sse::json_body;
use super::{Body, BoxError, Meta, error_json, pre_response, read_body, set_headers};
use crate::upstream::Upstream;
use crate::upstream::conn::ConnCtl;
use crate::upstream::faults::RouteKind;

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
    // Validate without building a tree; the answer splices the body in as is.
    let empty = body.iter().all(u8::is_ascii_whitespace);
    if !empty && let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&body) {
        let msg = format!("tool body is not JSON: {e}");
        return Ok(error_json(StatusCode::BAD_REQUEST, &msg));
    }
    let decision = ctl.admit(
        up,
        &meta.incoming(RouteKind::Tool, Some(&name), None, None),
    );
    let (proceed, headers) = match pre_response(decision, ctl).await? {
        Ok(go) => go,
        Err(r) => return Ok(r),
    };
    let proceed = proceed.settle_json().await;
    let echo: &[u8] = if empty { b"null" } else { &body };
    let name_json = serde_json::Value::from(name.as_str()).to_string();
    let mut answer = Vec::with_capacity(48 + name_json.len() + echo.len());
    answer.extend_from_slice(b"{\"tool\":");
    answer.extend_from_slice(name_json.as_bytes());
    answer.extend_from_slice(b",\"ok\":true,\"result\":{\"echo\":");
    answer.extend_from_slice(echo);
    answer.extend_from_slice(b"}}");
    let mut r = json_body(Bytes::from(answer), SLOW_PIECES, proceed, ctl.clone());
    set_headers(&mut r, &headers);
    Ok(r)
}
