//! Dependency names (breaker keys, the `dep` label) of docs/engine.md: a tool's name, a
//! WebSocket channel's name, or `PROVIDER/REGION/FP` for a model endpoint, where FP is the first
//! 6 hex digits of the SHA-256 of the profile's credential. Never the credential itself.

use crate::util::fingerprint;

/// The region used when a profile names none.
pub const DEFAULT_REGION: &str = "default";

/// The dependency name of a model endpoint: `PROVIDER/REGION/FP`.
pub fn model_dep(provider: &str, region: &str, credential: &str) -> String {
    format!("{provider}/{region}/{}", fingerprint(credential))
}

/// The provider of a model name: the text before the first `/` (the whole name if none).
pub fn provider_of(model: &str) -> &str {
    model.split_once('/').map_or(model, |(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_dep_is_provider_region_and_six_hex_of_the_credential() {
        let dep = model_dep("openai-codex", "default", "abc");
        assert_eq!(dep, "openai-codex/default/ba7816");
        assert!(!dep.contains("abc"));
    }

    #[test]
    fn provider_is_the_text_before_the_first_slash() {
        assert_eq!(provider_of("openai-codex/gpt-5"), "openai-codex");
        assert_eq!(provider_of("anthropic/claude/opus"), "anthropic");
        assert_eq!(provider_of("local"), "local");
    }
}
