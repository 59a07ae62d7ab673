//! What a gateway says of a turn in its response headers — its own account, kept beside the
//! upstream's record of the turn, never judged in its place. Each gateway kind names the headers
//! its turns' client keeps and how they read:
//!
//! - LiteLLM: `x-litellm-model-id` (the deployment that answered; the harness's generated config
//!   names it `PROFILE/MODEL`), `x-litellm-attempted-retries`, `x-litellm-attempted-fallbacks`;
//! - Portkey: `x-portkey-last-used-option-index` (the target that answered, `config.targets[N]`)
//!   and `x-portkey-retry-attempt-count` (the retries of that target only).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// LiteLLM's headers.
const LITELLM_HEADERS: &[&str] = &[
    "x-litellm-model-id",
    "x-litellm-attempted-retries",
    "x-litellm-attempted-fallbacks",
];
/// Portkey's headers.
const PORTKEY_HEADERS: &[&str] = &[
    "x-portkey-last-used-option-index",
    "x-portkey-retry-attempt-count",
];

/// Which gateway's headers a turns' client reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaidBy {
    /// LiteLLM's [`LITELLM_HEADERS`].
    Litellm,
    /// Portkey's [`PORTKEY_HEADERS`].
    Portkey,
}

impl SaidBy {
    /// The headers a client keeps for it.
    pub fn headers(self) -> &'static [&'static str] {
        match self {
            Self::Litellm => LITELLM_HEADERS,
            Self::Portkey => PORTKEY_HEADERS,
        }
    }
}

/// A gateway's own account of one turn (absent fields: it did not say).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewaySaid {
    /// The deployment or target that answered, as the gateway names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// That deployment or target as the scenario names it (`mockai:c gpt-4o-mini`), when the
    /// harness wrote the config naming it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Retries it says it made (LiteLLM: of the model group; Portkey: on the target that
    /// answered only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u64>,
    /// Fallbacks it says it made (LiteLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<u64>,
}

impl GatewaySaid {
    /// From the kept response headers (by lower-case name) of a gateway of kind `by`, its
    /// targets named by `labels` (what the gateway calls a target → the scenario's name);
    /// `None` when it said nothing.
    pub fn read(
        by: SaidBy,
        headers: &BTreeMap<String, String>,
        labels: &BTreeMap<String, String>,
    ) -> Option<Self> {
        let text = |name: &str| {
            headers
                .get(name)
                .map(|v| v.trim())
                .filter(|v| !v.is_empty())
                .map(|v| v.chars().take(200).collect::<String>())
        };
        let num = |name: &str| text(name).and_then(|v| v.parse::<u64>().ok());
        let said = match by {
            SaidBy::Litellm => Self {
                answered_by: text("x-litellm-model-id"),
                target: None,
                retries: num("x-litellm-attempted-retries"),
                fallbacks: num("x-litellm-attempted-fallbacks"),
            },
            SaidBy::Portkey => Self {
                answered_by: text("x-portkey-last-used-option-index"),
                target: None,
                retries: num("x-portkey-retry-attempt-count"),
                fallbacks: None,
            },
        };
        let target = said.answered_by.as_ref().and_then(|a| labels.get(a).cloned());
        let said = Self { target, ..said };
        (said != Self::default()).then_some(said)
    }

    /// `answered by key-b gpt-4o (config.targets[1]) · retries 0 · fallbacks 1`, for report.md.
    pub fn short(&self) -> String {
        let mut parts = Vec::new();
        match (&self.target, &self.answered_by) {
            (Some(t), Some(a)) => parts.push(format!("answered by {t} ({a})")),
            (None, Some(a)) => parts.push(format!("answered by {a}")),
            _ => {}
        }
        if let Some(n) = self.retries {
            parts.push(format!("retries {n}"));
        }
        if let Some(n) = self.fallbacks {
            parts.push(format!("fallbacks {n}"));
        }
        parts.join(" · ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn litellms_headers_read_as_its_account() {
        let h = map(&[
            ("x-litellm-attempted-retries", "2"),
            ("x-litellm-attempted-fallbacks", "1"),
            ("x-litellm-model-id", " mockai:c/gpt-4o-mini "),
        ]);
        let s = GatewaySaid::read(SaidBy::Litellm, &h, &BTreeMap::new()).unwrap();
        assert_eq!(s.retries, Some(2));
        assert_eq!(s.fallbacks, Some(1));
        assert_eq!(s.answered_by.as_deref(), Some("mockai:c/gpt-4o-mini"));
        assert_eq!(s.short(), "answered by mockai:c/gpt-4o-mini · retries 2 · fallbacks 1");
        assert_eq!(GatewaySaid::read(SaidBy::Litellm, &map(&[]), &BTreeMap::new()), None);
        // Another gateway's headers say nothing to it.
        let pk = map(&[("x-portkey-retry-attempt-count", "1")]);
        assert_eq!(GatewaySaid::read(SaidBy::Litellm, &pk, &BTreeMap::new()), None);
    }

    #[test]
    fn portkeys_headers_name_the_target_the_scenario_knows() {
        let h = map(&[
            ("x-portkey-last-used-option-index", "config.targets[1]"),
            ("x-portkey-retry-attempt-count", "0"),
        ]);
        let labels = map(&[("config.targets[1]", "mockai:b gpt-4o")]);
        let s = GatewaySaid::read(SaidBy::Portkey, &h, &labels).unwrap();
        assert_eq!(s.target.as_deref(), Some("mockai:b gpt-4o"));
        assert_eq!(s.short(), "answered by mockai:b gpt-4o (config.targets[1]) · retries 0");
        let bad = map(&[("x-portkey-retry-attempt-count", "many")]);
        assert_eq!(GatewaySaid::read(SaidBy::Portkey, &bad, &labels), None);
    }
}
