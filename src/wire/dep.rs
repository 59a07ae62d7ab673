//! Dependency names (breaker keys, the `dep` label) of docs/engine.md: a tool's name, a
//! WebSocket channel's name, or `PROVIDER/REGION/FP` for a model endpoint, where FP is the first
//! 6 hex digits of the SHA-256 of the profile's credential. Never the credential itself.
//!
//! The engine names deps from its profiles, the mock upstream from what a request carries
//! (its bearer's fingerprint, its model, its `X-Breaker-Probe`): both build them here, so a
//! dep in `upstream.jsonl` is the same string as in `events.jsonl`.

use crate::util::fingerprint;

/// The region used when a profile names none.
pub(crate) const DEFAULT_REGION: &str = "default";

/// The dependency name of a model endpoint: `PROVIDER/REGION/FP`.
pub fn model_dep(provider: &str, region: &str, credential: &str) -> String {
    model_dep_of_fingerprint(provider, region, &fingerprint(credential))
}

/// The dependency name of a model endpoint whose credential is known only by its fingerprint
/// (what the mock upstream sees of a bearer).
pub(crate) fn model_dep_of_fingerprint(provider: &str, region: &str, fp: &str) -> String {
    format!("{provider}/{region}/{fp}")
}

/// The provider of a model name: the text before the first `/` (the whole name if none).
pub(crate) fn provider_of(model: &str) -> &str {
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
        let fp = crate::util::fingerprint("abc");
        assert_eq!(
            model_dep_of_fingerprint("openai-codex", "default", &fp),
            dep
        );
    }

    #[test]
    fn provider_is_the_text_before_the_first_slash() {
        assert_eq!(provider_of("openai-codex/gpt-5"), "openai-codex");
        assert_eq!(provider_of("anthropic/claude/opus"), "anthropic");
        assert_eq!(provider_of("local"), "local");
    }
}
