//! `POST /v1/chat/completions`: an answer of `max_tokens` tokens in OpenAI's exact shape, the
//! same text either way. As one JSON body: `finish_reason: "stop"` and `usage`. With
//! `"stream": true`, as SSE: a role delta (`{"role":"assistant"}`) at once, one content delta
//! per token interval, then at once a last choice chunk with an empty delta and
//! `finish_reason: "stop"`, a usage chunk (`choices: []`) when `stream_options.include_usage` is
//! true, and `data: [DONE]`. Clients that insist on a final `finish_reason` (OpenClaw's own
//! stream client, the official SDKs) read it as complete. The request's record keeps `N`
//! (`tokens`) and the usage the answer carries, what a gateway's answer is compared with.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use serde::Deserialize;

use super::sse::{SseEvents, json_body, sse_response};
use super::{Body, BoxError, Meta, error_json, pre_response, read_body, set_headers};
use crate::upstream::Upstream;
use crate::upstream::conn::ConnCtl;
use crate::upstream::faults::RouteKind;
use crate::wire::usage::Usage;

/// Tokens when the request names no `max_tokens`.
const DEFAULT_TOKENS: u64 = 16;
/// Most tokens one answer streams.
const MAX_TOKENS: u64 = 4096;

#[derive(Debug, Deserialize)]
struct ChatRequest<'a> {
    #[serde(default, borrow)]
    model: Option<Model<'a>>,
    #[serde(default)]
    stream: bool,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    max_completion_tokens: Option<u64>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
}

/// The model name, borrowed from the body unless it has escapes (serde borrows a `Cow` only as a
/// field of its own, not inside an `Option`).
#[derive(Debug, Deserialize)]
struct Model<'a>(#[serde(borrow)] Cow<'a, str>);

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
    let mut meta = Meta::from_headers(req.headers());
    let body = match read_body(req).await {
        Ok(b) => b,
        Err(r) => return Ok(r),
    };
    let chat: ChatRequest<'_> = match serde_json::from_slice(&body) {
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
    // Our own transport marks the turn in a header; a gateway's request carries it in its last
    // user message, found without a parse when the body holds the marker at all.
    if meta.turn.is_none() {
        meta.turn = crate::upstream::turn::of_body(&body);
    }
    let requested = chat.model.as_ref().map(|m| m.0.as_ref());
    let model = requested.unwrap_or("unknown");
    let include_usage = chat.stream_options.as_ref().is_some_and(|o| o.include_usage);
    let prompt_tokens = (body.len() / 4).max(1);
    let mut incoming = meta.incoming(RouteKind::Llm, None, None, requested);
    incoming.stream = Some(chat.stream);
    incoming.body = Some(&body);
    // The record keeps the answer built for it: its tokens and the usage it carries.
    incoming.tokens = Some(tokens as u64);
    incoming.usage = (!chat.stream || include_usage).then(|| Usage {
        prompt_tokens: prompt_tokens as u64,
        completion_tokens: tokens as u64,
        total_tokens: (prompt_tokens + tokens) as u64,
    });
    let decision = ctl.admit(
        up,
        &incoming,
    );
    let (proceed, headers) = match pre_response(decision, ctl).await? {
        Ok(go) => go,
        Err(r) => return Ok(r),
    };
    let answer = Answer {
        created: SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        model_json: json_string(model),
        tokens,
        prompt_tokens,
    };
    let mut r = if chat.stream {
        let events = answer.stream(include_usage);
        sse_response(events, up.token_interval(), proceed, ctl.clone())
    } else {
        let proceed = proceed.settle_json().await;
        json_body(answer.json(), tokens, proceed, ctl.clone())
    };
    set_headers(&mut r, &headers);
    Ok(r)
}

/// `s` as a JSON string (quoted and escaped).
fn json_string(s: &str) -> String {
    // ok: serialising a `str` cannot fail.
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
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

    /// The non-streamed completion: the whole text, `finish_reason: "stop"` and `usage`,
    /// written into one buffer sized for it up front (the upstream's hot path: no `format!`,
    /// no intermediate strings).
    fn json(&self) -> Bytes {
        const OBJECT: &str = "\",\"object\":\"chat.completion\",\"created\":";
        const MESSAGE: &str =
            ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"";
        const USAGE: &str = "\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":";
        let mut n = itoa::Buffer::new();
        // Each token is at most " t" and 20 digits; the numbers at most 20 digits each.
        let cap = 8
            + ID.len()
            + OBJECT.len()
            + MESSAGE.len()
            + USAGE.len()
            + self.model_json.len()
            + 9 // ,"model":
            + self.tokens * 4
            + 4 * 20
            + 64;
        let mut out = Vec::with_capacity(cap);
        out.extend_from_slice(b"{\"id\":\"");
        out.extend_from_slice(ID.as_bytes());
        out.extend_from_slice(OBJECT.as_bytes());
        out.extend_from_slice(n.format(self.created).as_bytes());
        out.extend_from_slice(b",\"model\":");
        out.extend_from_slice(self.model_json.as_bytes());
        out.extend_from_slice(MESSAGE.as_bytes());
        for i in 1..=self.tokens {
            out.extend_from_slice(if i == 1 { b"t" } else { b" t" });
            out.extend_from_slice(n.format(i).as_bytes());
        }
        out.extend_from_slice(USAGE.as_bytes());
        out.extend_from_slice(n.format(self.prompt_tokens).as_bytes());
        out.extend_from_slice(b",\"completion_tokens\":");
        out.extend_from_slice(n.format(self.tokens).as_bytes());
        out.extend_from_slice(b",\"total_tokens\":");
        out.extend_from_slice(n.format(self.prompt_tokens + self.tokens).as_bytes());
        out.extend_from_slice(b"}}");
        Bytes::from(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer as the route built it before it wrote into one buffer (`format!` of each
    /// piece): the bytes on the wire must not change.
    fn reference_json(a: &Answer) -> Vec<u8> {
        let content: String = (1..=a.tokens).map(Answer::piece).collect();
        let usage = format!(
            "{{\"prompt_tokens\":{},\"completion_tokens\":{},\"total_tokens\":{}}}",
            a.prompt_tokens,
            a.tokens,
            a.prompt_tokens + a.tokens
        );
        format!(
            "{{\"id\":\"{ID}\",\"object\":\"chat.completion\",\"created\":{},\
             \"model\":{},\"choices\":[{{\"index\":0,\"message\":{{\"role\":\"assistant\",\
             \"content\":\"{content}\"}},\"finish_reason\":\"stop\"}}],\"usage\":{}}}",
            a.created, a.model_json, usage
        )
        .into_bytes()
    }

    fn answer(created: u64, model: &str, tokens: usize, prompt_tokens: usize) -> Answer {
        Answer {
            created,
            model_json: json_string(model),
            tokens,
            prompt_tokens,
        }
    }

    #[test]
    fn json_answer_bytes_are_exactly_the_documented_shape() {
        let a = answer(1_764_547_200, "openai-codex/gpt-5.2", 3, 25);
        assert_eq!(
            std::str::from_utf8(&a.json()).unwrap(),
            "{\"id\":\"chatcmpl-rehearse\",\"object\":\"chat.completion\",\"created\":1764547200,\
             \"model\":\"openai-codex/gpt-5.2\",\"choices\":[{\"index\":0,\"message\":\
             {\"role\":\"assistant\",\"content\":\"t1 t2 t3\"},\"finish_reason\":\"stop\"}],\
             \"usage\":{\"prompt_tokens\":25,\"completion_tokens\":3,\"total_tokens\":28}}"
        );
    }

    #[test]
    fn json_answer_is_byte_for_byte_the_formatted_one() {
        let models = [
            "openai-codex/gpt-5.2",
            "unknown",
            "",
            "a \"quoted\" \\ model",
            "tab\tnew\nline\u{1}",
            "ünïcödé/模型",
        ];
        for model in models {
            for tokens in [1, 2, 9, 10, 16, 99, 100, 1000, 4096] {
                for (created, prompt) in [(0, 1), (1_764_547_200, 25), (u64::MAX, usize::MAX / 2)] {
                    let a = answer(created, model, tokens, prompt);
                    let got = a.json();
                    assert_eq!(
                        got.as_ref(),
                        reference_json(&a).as_slice(),
                        "{model:?} {tokens} {created}"
                    );
                    // It parses, and says what it says.
                    let v: serde_json::Value = serde_json::from_slice(&got).unwrap();
                    assert_eq!(v["model"], model);
                    assert_eq!(v["usage"]["completion_tokens"], tokens as u64);
                }
            }
        }
    }

    #[test]
    fn the_model_is_borrowed_from_the_body_unless_escaped() {
        let plain: ChatRequest<'_> = serde_json::from_slice(br#"{"model":"m/x"}"#).unwrap();
        assert!(matches!(plain.model, Some(Model(Cow::Borrowed("m/x")))));
        let escaped: ChatRequest<'_> = serde_json::from_slice(br#"{"model":"m\"x"}"#).unwrap();
        assert!(matches!(escaped.model, Some(Model(Cow::Owned(m))) if m == "m\"x"));
        let none: ChatRequest<'_> = serde_json::from_slice(br#"{"model":null}"#).unwrap();
        assert!(none.model.is_none());
    }
}
