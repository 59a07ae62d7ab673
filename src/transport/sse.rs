//! Reading a response body: SSE token events (`data:` lines, `[DONE]`), the
//! `usage.completion_tokens` of a JSON completion, and a provider's error code. A `data:` line
//! that is not JSON, or an error event (`data: {"error": …}`) inside a 200 stream, breaks the
//! stream: the official SDKs raise on either, and so does the engine (the attempt failed).

/// What [`drain_events`] found in the complete lines it consumed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Drained {
    /// Token events.
    pub tokens: u32,
    /// `data: [DONE]` was among them.
    pub done: bool,
    /// A `data:` line that is not JSON, or an error event: the stream is broken (`Some`, with
    /// the error's provider code where it has one).
    pub broken: Option<Option<String>>,
}

/// Consumes complete SSE lines from `buf` up to a line that breaks the stream: the token
/// events seen, whether `data: [DONE]` was among them, and what broke it.
pub(crate) fn drain_events(buf: &mut Vec<u8>) -> Drained {
    let mut out = Drained::default();
    while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
        let line: Vec<u8> = buf.drain(..=pos).collect();
        let line = String::from_utf8_lossy(&line);
        let Some(data) = line.trim_end().strip_prefix("data:") else {
            continue;
        };
        if data.trim() == "[DONE]" {
            out.done = true;
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
            out.broken = Some(None);
            return out;
        };
        if let Some(err) = v.get("error") {
            let code = err
                .get("code")
                .and_then(|c| c.as_str())
                .or_else(|| err.get("type").and_then(|c| c.as_str()));
            out.broken = Some(code.map(str::to_string));
            return out;
        }
        if carries_content(&v) {
            out.tokens += 1;
        }
    }
    out
}

/// Whether an SSE event's data is a token: any event but an OpenAI chunk whose choices carry no
/// content (the role delta, the `finish_reason` chunk, the usage chunk with empty `choices`).
fn carries_content(v: &serde_json::Value) -> bool {
    match v.get("choices").and_then(|c| c.as_array()) {
        None => true,
        Some(choices) => choices.iter().any(|c| {
            c.pointer("/delta/content")
                .and_then(|t| t.as_str())
                .is_some_and(|t| !t.is_empty())
        }),
    }
}

/// The provider error code of an OpenAI-shaped error body (`error.code`, else `error.type`).
pub(crate) fn provider_code(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let err = v.get("error")?;
    err.get("code")
        .and_then(|c| c.as_str())
        .or_else(|| err.get("type").and_then(|c| c.as_str()))
        .map(str::to_string)
}

/// `usage.completion_tokens` of a non-streaming completion, 0 when absent (tools).
pub(crate) fn usage_tokens(body: &[u8]) -> u32 {
    serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/usage/completion_tokens")
                .and_then(|t| t.as_u64())
        })
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_lines_count_tokens_and_done_across_chunk_boundaries() {
        let mut buf = b"data: {\"a\":1}\n\ndata: {\"a\"".to_vec();
        let d = |tokens, done| Drained { tokens, done, broken: None };
        assert_eq!(drain_events(&mut buf), d(1, false));
        buf.extend_from_slice(b":2}\n\ndata: [DONE]\n\n");
        assert_eq!(drain_events(&mut buf), d(1, true));
        assert!(buf.is_empty());
    }

    #[test]
    fn openai_chunks_without_content_are_not_tokens() {
        let mut buf = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t1\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" t2\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"completion_tokens\":2}}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes()
        .to_vec();
        let got = drain_events(&mut buf);
        assert_eq!((got.tokens, got.done, got.broken), (2, true, None));
    }

    /// What the upstream's `malformed_chunk` and `error_event` send: the stream is broken at
    /// that line, whatever follows (a `[DONE]` after a malformed line does not make it whole).
    #[test]
    fn a_line_that_is_not_json_or_an_error_event_breaks_the_stream() {
        let t1 = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t1\"}}]}\n\n";
        let mut buf = format!(
            "{t1}data: {{\"choices\":[{{\"delta\":{{\"content\":\n\n{t1}data: [DONE]\n\n"
        )
        .into_bytes();
        let got = drain_events(&mut buf);
        assert_eq!((got.tokens, got.done, got.broken), (1, false, Some(None)));
        let mut buf = format!(
            "{t1}data: {{\"error\":{{\"message\":\"x\",\"type\":\"server_error\",\"param\":null,\"code\":null}}}}\n\n"
        )
        .into_bytes();
        let got = drain_events(&mut buf);
        assert_eq!(got.tokens, 1);
        assert_eq!(got.broken, Some(Some("server_error".to_string())));
        let mut buf = b"data: {\"error\":{\"code\":\"rate_limit_exceeded\"}}\n\n".to_vec();
        assert_eq!(drain_events(&mut buf).broken, Some(Some("rate_limit_exceeded".into())));
    }

    #[test]
    fn provider_codes_and_usage_come_from_json_bodies() {
        let b = br#"{"error":{"code":"context_length_exceeded","type":"invalid_request_error"}}"#;
        assert_eq!(provider_code(b).as_deref(), Some("context_length_exceeded"));
        let b = br#"{"error":{"type":"rate_limit_exceeded"}}"#;
        assert_eq!(provider_code(b).as_deref(), Some("rate_limit_exceeded"));
        assert_eq!(provider_code(b"not json"), None);
        assert_eq!(usage_tokens(br#"{"usage":{"completion_tokens":64}}"#), 64);
        assert_eq!(usage_tokens(b"{}"), 0);
    }
}
