//! `POST /v1/chat/completions`: an answer of `max_tokens` tokens in OpenAI's exact shape, the
//! same text either way. As one JSON body: `finish_reason: "stop"` and `usage`. With
//! `"stream": true`, as SSE: a role delta (`{"role":"assistant"}`) at once, one content delta
//! per token interval, then at once a last choice chunk with an empty delta and
//! `finish_reason: "stop"`, a usage chunk (`choices: []`) when `stream_options.include_usage` is
//! true, and `data: [DONE]`. Clients that insist on a final `finish_reason` (OpenClaw's own
//! stream client, the official SDKs) read it as complete.

use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use serde::Deserialize;

use super::sse::{SseEvents, json_body, sse_response};
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
    #[serde(default)]
    stream_options: Option<StreamOptions>,
}

#[derive(Debug, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: bool,
}

/// The `id` of every completion.
const ID: &str = "chatcmpl-rehearse";

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
    let answer = Answer {
        created: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        model_json: serde_json::Value::from(model).to_string(),
        tokens,
        prompt_tokens: (body.len() / 4).max(1),
    };
    if chat.stream {
        let include_usage = chat.stream_options.is_some_and(|o| o.include_usage);
        let events = answer.stream(include_usage);
        return Ok(sse_response(
            events,
            up.token_interval(),
            proceed,
            ctl.clone(),
        ));
    }
    Ok(json_body(answer.json(), tokens, proceed, ctl.clone()))
}

/// One answer, the same text whether streamed or not: `t1 t2 … tN`.
struct Answer {
    created: u64,
    /// The request's model, as a JSON string.
    model_json: String,
    tokens: usize,
    prompt_tokens: usize,
}

impl Answer {
    /// The `i`-th (1-based) token as streamed: the word with the space before it, so the
    /// chunks concatenate to the non-streamed content.
    fn piece(i: usize) -> String {
        if i == 1 {
            "t1".to_string()
        } else {
            format!(" t{i}")
        }
    }

    fn usage(&self) -> String {
        format!(
            "{{\"prompt_tokens\":{},\"completion_tokens\":{},\"total_tokens\":{}}}",
            self.prompt_tokens,
            self.tokens,
            self.prompt_tokens + self.tokens
        )
    }

    /// The non-streamed completion: the whole text, `finish_reason: "stop"` and `usage`.
    fn json(&self) -> Bytes {
        let content: String = (1..=self.tokens).map(Self::piece).collect();
        Bytes::from(format!(
            "{{\"id\":\"{ID}\",\"object\":\"chat.completion\",\"created\":{},\
             \"model\":{},\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\
             \"content\":\"{content}\"}},\"finish_reason\":\"stop\"}}],\"usage\":{}}}",
            self.created,
            self.model_json,
            self.usage()
        ))
    }

    /// A `chat.completion.chunk` event with these `choices` (and extra top-level fields).
    fn chunk(&self, choices: &str, extra: &str) -> Bytes {
        Bytes::from(format!(
            "data: {{\"id\":\"{ID}\",\"object\":\"chat.completion.chunk\",\"created\":{},\
             \"model\":{},\"choices\":[{choices}]{extra}}}\n\n",
            self.created, self.model_json
        ))
    }

    /// The streamed completion in OpenAI's shape: a role delta, one content delta per token, a
    /// last choice chunk with an empty delta and `finish_reason: "stop"`, the usage chunk (empty
    /// `choices`) when asked for, then `data: [DONE]`.
    fn stream(&self, include_usage: bool) -> SseEvents {
        let choice = |delta: &str, finish: &str| {
            format!("{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}")
        };
        let head = vec![self.chunk(&choice("{\"role\":\"assistant\"}", "null"), "")];
        let tokens = (1..=self.tokens)
            .map(|i| {
                let delta = format!("{{\"content\":\"{}\"}}", Self::piece(i));
                self.chunk(&choice(&delta, "null"), "")
            })
            .collect();
        let mut tail = vec![self.chunk(&choice("{}", "\"stop\""), "")];
        if include_usage {
            tail.push(self.chunk("", &format!(",\"usage\":{}", self.usage())));
        }
        tail.push(Bytes::from_static(b"data: [DONE]\n\n"));
        SseEvents { head, tokens, tail }
    }
}
