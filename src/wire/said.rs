//! What a gateway says of a turn in its response headers: LiteLLM's
//! `x-litellm-attempted-retries`, `x-litellm-attempted-fallbacks` and `x-litellm-model-id` (the
//! deployment that answered; the harness's generated config names it `PROFILE/MODEL`). Its own
//! account, kept beside the upstream's record of the turn, never judged in its place.

use serde::{Deserialize, Serialize};

/// `x-litellm-attempted-retries`: retries of the model group before the answer.
const ATTEMPTED_RETRIES: &str = "x-litellm-attempted-retries";
/// `x-litellm-attempted-fallbacks`: fallbacks to other model groups.
const ATTEMPTED_FALLBACKS: &str = "x-litellm-attempted-fallbacks";
/// `x-litellm-model-id`: the deployment that answered.
const MODEL_ID: &str = "x-litellm-model-id";

/// A gateway's own account of one turn (absent fields: it did not say).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewaySaid {
    /// Retries it says it made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_retries: Option<u32>,
    /// Fallbacks it says it made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempted_fallbacks: Option<u32>,
    /// The deployment it says answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
}

impl GatewaySaid {
    /// From response headers, `get` giving a header's value by name; `None` when it said
    /// nothing.
    pub(crate) fn from_headers<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<Self> {
        let num = |name: &str| get(name).and_then(|v| v.trim().parse::<u32>().ok());
        let said = Self {
            attempted_retries: num(ATTEMPTED_RETRIES),
            attempted_fallbacks: num(ATTEMPTED_FALLBACKS),
            model_id: get(MODEL_ID)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| v.chars().take(200).collect()),
        };
        (said != Self::default()).then_some(said)
    }

    /// `retries 2 · fallbacks 0 · mockai:b/gpt-4o`, for report.md.
    pub(crate) fn short(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.attempted_retries {
            parts.push(format!("retries {n}"));
        }
        if let Some(n) = self.attempted_fallbacks {
            parts.push(format!("fallbacks {n}"));
        }
        if let Some(m) = &self.model_id {
            parts.push(m.clone());
        }
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn litellm_s_headers_are_read_and_silence_is_none() {
        let h = |n: &str| match n {
            ATTEMPTED_RETRIES => Some("2"),
            ATTEMPTED_FALLBACKS => Some(" 1 "),
            MODEL_ID => Some("minai:c/gpt-4o-mini"),
            _ => None,
        };
        let s = GatewaySaid::from_headers(h).unwrap();
        assert_eq!(s.attempted_retries, Some(2));
        assert_eq!(s.attempted_fallbacks, Some(1));
        assert_eq!(s.short(), "retries 2 · fallbacks 1 · minai:c/gpt-4o-mini");
        assert_eq!(GatewaySaid::from_headers(|_| None), None);
        assert_eq!(GatewaySaid::from_headers(|_| Some("x")).unwrap().model_id.as_deref(), Some("x"));
    }
}
