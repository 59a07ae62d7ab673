//! Provider errors by name (`status`'s and `error_event`'s `error = "NAME"`): the errors real
//! providers send, each in OpenAI's JSON error shape `{"error": {"message", "type", "param",
//! "code"}}` with the provider's own message, type, param and code, and the HTTP status the
//! provider answers it with (what a `status` fault without `status` sends).

use serde::{Deserialize, Serialize};

/// A provider error a fault can send by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderError {
    /// 400: the prompt is longer than the model's context window.
    ContextLengthExceeded,
    /// 400: OpenAI's safety system rejected the request.
    ContentPolicyViolation,
    /// 400: Azure OpenAI's content management policy filtered the prompt.
    ContentFilter,
    /// 429: the account's quota (billing) is used up — not a rate limit: waiting does not help.
    InsufficientQuota,
    /// 429: a requests-per-minute rate limit.
    RateLimitExceeded,
    /// 404: the model does not exist or the key has no access to it.
    ModelNotFound,
    /// 401: the API key is wrong.
    InvalidApiKey,
    /// 500: the provider failed while processing the request.
    ServerError,
    /// 400: the model does not continue an assistant prefill (a conversation ending with an
    /// assistant message), as Anthropic's newer models answer one: `invalid_request_error`
    /// with no code.
    PrefillUnsupported,
}

impl ProviderError {
    /// Every name, in the order docs/faults.md lists them.
    pub const ALL: [ProviderError; 9] = [
        Self::ContextLengthExceeded,
        Self::ContentPolicyViolation,
        Self::ContentFilter,
        Self::InsufficientQuota,
        Self::RateLimitExceeded,
        Self::ModelNotFound,
        Self::InvalidApiKey,
        Self::ServerError,
        Self::PrefillUnsupported,
    ];

    /// The HTTP status the provider answers this error with.
    pub fn status(self) -> u16 {
        match self {
            Self::ContextLengthExceeded
            | Self::ContentPolicyViolation
            | Self::ContentFilter
            | Self::PrefillUnsupported => 400,
            Self::InsufficientQuota | Self::RateLimitExceeded => 429,
            Self::ModelNotFound => 404,
            Self::InvalidApiKey => 401,
            Self::ServerError => 500,
        }
    }

    /// `(message, type, param, code)` as the provider writes them (`None`: JSON `null`).
    fn parts(self) -> (&'static str, Option<&'static str>, Option<&'static str>, Option<&'static str>) {
        match self {
            Self::ContextLengthExceeded => (
                "This model's maximum context length is 128000 tokens. However, your messages \
                 resulted in 131072 tokens. Please reduce the length of the messages.",
                Some("invalid_request_error"),
                Some("messages"),
                Some("context_length_exceeded"),
            ),
            Self::ContentPolicyViolation => (
                "Your request was rejected as a result of our safety system. Your prompt may \
                 contain text that is not allowed by our safety system.",
                Some("invalid_request_error"),
                None,
                Some("content_policy_violation"),
            ),
            Self::ContentFilter => (
                "The response was filtered due to the prompt triggering Azure OpenAI's content \
                 management policy. Please modify your prompt and retry. To learn more about our \
                 content filtering policies please read our documentation: \
                 https://go.microsoft.com/fwlink/?linkid=2198766",
                None,
                Some("prompt"),
                Some("content_filter"),
            ),
            Self::InsufficientQuota => (
                "You exceeded your current quota, please check your plan and billing details. \
                 For more information on this error, read the docs: \
                 https://platform.openai.com/docs/guides/error-codes/api-errors.",
                Some("insufficient_quota"),
                None,
                Some("insufficient_quota"),
            ),
            Self::RateLimitExceeded => (
                "Rate limit reached for requests per min (RPM): Limit 500, Used 500, Requested \
                 1. Please try again in 120ms. Visit https://platform.openai.com/account/rate-limits \
                 to learn more.",
                Some("requests"),
                None,
                Some("rate_limit_exceeded"),
            ),
            Self::ModelNotFound => (
                "The model does not exist or you do not have access to it.",
                Some("invalid_request_error"),
                None,
                Some("model_not_found"),
            ),
            Self::InvalidApiKey => (
                "Incorrect API key provided. You can find your API key at \
                 https://platform.openai.com/account/api-keys.",
                Some("invalid_request_error"),
                None,
                Some("invalid_api_key"),
            ),
            Self::ServerError => (
                "The server had an error while processing your request. Sorry about that!",
                Some("server_error"),
                None,
                None,
            ),
            Self::PrefillUnsupported => (
                "This model does not support assistant message prefill. The conversation must \
                 end with a user message.",
                Some("invalid_request_error"),
                Some("messages"),
                None,
            ),
        }
    }

    /// The error object's JSON: `{"error":{"message","type","param","code"}}`.
    pub fn json(self) -> String {
        let (message, kind, param, code) = self.parts();
        serde_json::json!({
            "error": { "message": message, "type": kind, "param": param, "code": code }
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_openais_four_fields_and_its_providers_status() {
        for e in ProviderError::ALL {
            let v: serde_json::Value = serde_json::from_str(&e.json()).unwrap();
            let err = v["error"].as_object().unwrap();
            let keys: Vec<&str> = err.keys().map(String::as_str).collect();
            assert_eq!(keys, ["code", "message", "param", "type"], "{e:?}");
            assert!(err["message"].as_str().is_some_and(|m| m.len() > 20), "{e:?}");
            // The name is the code a client switches on (a 500 carries none, as OpenAI's; nor
            // does a refused prefill, as Anthropic's: its type says it).
            let name = serde_json::to_value(e).unwrap();
            if e == ProviderError::PrefillUnsupported {
                assert_eq!((&err["code"], &err["type"]), (&serde_json::Value::Null, &serde_json::json!("invalid_request_error")));
            } else if e != ProviderError::ServerError {
                assert_eq!(err["code"], name, "{e:?}");
            }
            assert!((400..=599).contains(&e.status()));
        }
        assert_eq!(ProviderError::ContextLengthExceeded.status(), 400);
        assert_eq!(ProviderError::InsufficientQuota.status(), 429);
        assert_eq!(ProviderError::ModelNotFound.status(), 404);
    }
}
