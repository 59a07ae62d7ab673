//! `POST /v1/chat/completions`: an OpenAI-shaped answer of `max_tokens` tokens, as one JSON body
//! (with `usage`) or, with `"stream": true`, as SSE `data:` chunks at the token interval followed
//! by `data: [DONE]`.

use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use serde::Deserialize;

use super::sse::{json_body, sse_response};
use super::{Body, BoxError, Meta, error_json, pre_response, read_body};
use crate::upstream::Upstream;
use crate::upstream::conn::ConnCtl;
use crate::upstream::faults::RouteKind;

/// Tokens when the request names no `max_tokens`.
const DEFAULT_TOKENS: u64 = 16;
/// Most tokens one answer streams.
const MAX_TOKENS: u64 = 4096;

#[derive(Debug, Deserialize)]
struct ChatRequest {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    max_completion_tokens: Option<u64>,
}

/// Serves one chat completion.
pub(crate) async fn handle(
    req: Request<hyper::body::Incoming>,
    up: &Upstream,
    ctl: &Arc<ConnCtl>,
) -> Result<Response<Body>, BoxError> {
    let meta = Meta::from_headers(req.headers());
    let body = match read_body(req).await {
        Ok(b) => b,
        Err(r) => return Ok(r),
    };
    let chat: ChatRequest = match serde_json::from_slice(&body) {
        Ok(c) => c,
        Err(e) => {
            let msg = format!("invalid chat completion request: {e}");
            return Ok(error_json(StatusCode::BAD_REQUEST, &msg));
        }
    };
    let tokens = chat
        .max_tokens
        .or(chat.max_completion_tokens)
        .unwrap_or(DEFAULT_TOKENS)
        .clamp(1, MAX_TOKENS) as usize;
    let model = chat.model.as_deref().unwrap_or("unknown");
    let decision = up.admit(
        &meta.incoming(RouteKind::Llm, None, None, chat.model.as_deref()),
        ctl.arrived(),
        SystemTime::now(),
    );
    let proceed = match pre_response(decision.map(|d| d.1), ctl).await? {
        Ok(p) => p,
        Err(r) => return Ok(r),
    };
    let created = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let model_json = serde_json::Value::from(model).to_string();
    if chat.stream {
        let mut events = Vec::with_capacity(tokens + 1);
        for i in 1..=tokens {
            events.push(Bytes::from(format!(
                "data: {{\"id\":\"chatcmpl-rehearse\",\"object\":\"chat.completion.chunk\",\
                 \"created\":{created},\"model\":{model_json},\"choices\":[{{\"index\":0,\
                 \"delta\":{{\"content\":\"t{i} \"}},\"finish_reason\":null}}]}}\n\n"
            )));
        }
        events.push(Bytes::from_static(b"data: [DONE]\n\n"));
        return Ok(sse_response(
            events,
            tokens,
            up.token_interval(),
            proceed,
            ctl.clone(),
        ));
    }
    let content: Vec<String> = (1..=tokens).map(|i| format!("t{i}")).collect();
    let prompt_tokens = (body.len() / 4).max(1);
    let answer = format!(
        "{{\"id\":\"chatcmpl-rehearse\",\"object\":\"chat.completion\",\"created\":{created},\
         \"model\":{model_json},\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\
         \"content\":\"{}\"}},\"finish_reason\":\"stop\"}}],\"usage\":{{\"prompt_tokens\":\
         {prompt_tokens},\"completion_tokens\":{tokens},\"total_tokens\":{}}}}}",
        content.join(" "),
        prompt_tokens + tokens
    );
    Ok(json_body(Bytes::from(answer), tokens, proceed, ctl.clone()))
}
