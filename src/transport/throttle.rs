//! The throttle headers besides `Retry-After` a failed response carried (`retry-after-ms`,
//! `x-ms-retry-after-ms`, `x-ratelimit-reset-requests`): what the HTTP and WebSocket transports
//! hand the engine in `AttemptResult::Http::throttle`, which reads its wait from them
//! ([`crate::engine::failover::throttle`]).

/// The throttle headers of `h` (name, value as text; a value that is not text is left out).
pub(crate) fn headers(h: &http::HeaderMap) -> Vec<(String, String)> {
    h.iter()
        .filter(|(name, _)| crate::engine::failover::throttle::is_throttle_header(name.as_str()))
        .filter_map(|(name, v)| Some((name.as_str().to_string(), v.to_str().ok()?.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_throttle_headers_are_kept_as_sent() {
        let mut h = http::HeaderMap::new();
        h.insert("retry-after", http::HeaderValue::from_static("5"));
        h.insert("retry-after-ms", http::HeaderValue::from_static("9000"));
        h.insert("x-ratelimit-reset-requests", http::HeaderValue::from_static("6m0s"));
        h.insert("x-ms-throttle-reason", http::HeaderValue::from_static("quota"));
        let mut got = headers(&h);
        got.sort();
        assert_eq!(
            got,
            [
                ("retry-after-ms".to_string(), "9000".to_string()),
                ("x-ratelimit-reset-requests".to_string(), "6m0s".to_string()),
            ]
        );
    }
}
