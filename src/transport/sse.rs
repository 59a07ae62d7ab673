//! Reading a response body: SSE token events (`data:` lines, `[DONE]`), the
//! `usage.completion_tokens` of a JSON completion, and a provider's error code.

/// Consumes complete SSE lines from `buf`: returns the token events seen and whether
/// `data: [DONE]` was among them.
pub(crate) fn drain_events(buf: &mut Vec<u8>) -> (u32, bool) {
    let mut tokens = 0;
    let mut done = false;
    while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
        let line: Vec<u8> = buf.drain(..=pos).collect();
        let line = String::from_utf8_lossy(&line);
        let Some(data) = line.trim_end().strip_prefix("data:") else {
            continue;
        };
        if data.trim() == "[DONE]" {
            done = true;
        } else if carries_content(data) {
            tokens += 1;
        }
    }
    (tokens, done)
}

/// Whether an SSE event's data is a token: any event but an OpenAI chunk whose choices carry no
/// content (the role delta, the `finish_reason` chunk, the usage chunk with empty `choices`).
fn carries_content(data: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
        return true;
    };
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
        assert_eq!(drain_events(&mut buf), (1, false));
        buf.extend_from_slice(b":2}\n\ndata: [DONE]\n\n");
        assert_eq!(drain_events(&mut buf), (1, true));
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
        assert_eq!(drain_events(&mut buf), (2, true));
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
