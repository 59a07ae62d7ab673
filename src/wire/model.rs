//! The one rule that says whether a request is for a named model (a fault's `model` scope, a
//! ground-truth subject's `model`, docs/faults.md "Which model a request is for").
//!
//! A gateway names a model either as `PROVIDER/MODEL` (the embedded engine: `mockai/m1`) or by
//! its bare id (OpenClaw sends `m1` to the provider it chose). The provider of a request is the
//! provider of the profile behind its bearer token when that token is a scenario profile's,
//! else the text before the first `/` of the model it names. The request is then for
//! `PROVIDER/MODEL` — qualified — and a name matches it when it is:
//!
//! - exactly what the request sent, or
//! - the qualified name (`openai/gpt-4o` matches `gpt-4o` sent with an `openai` profile's token,
//!   not with an `azure` one), or
//! - a bare id (no provider) equal to the request's bare id: `gpt-4o` matches any provider's.

/// `sent` qualified with `provider` (the provider of the profile behind the request's token):
/// `PROVIDER/MODEL`. Unchanged when it already starts with `PROVIDER/`, or with no provider.
pub(crate) fn qualified(sent: &str, provider: Option<&str>) -> String {
    match provider {
        Some(p) if !p.is_empty() && !sent.starts_with(&format!("{p}/")) => format!("{p}/{sent}"),
        _ => sent.to_string(),
    }
}

/// The request's provider: the token's profile's, else the model's own `PROVIDER/` prefix.
fn provider_of<'a>(sent: &'a str, token_provider: Option<&'a str>) -> Option<&'a str> {
    token_provider
        .filter(|p| !p.is_empty())
        .or_else(|| sent.split_once('/').map(|(p, _)| p))
}

/// Whether `name` (a scope or subject as written in a scenario) names the model of a request
/// that sent `sent` with a token whose profile's provider is `token_provider` (see the module doc).
pub(crate) fn names_model(name: &str, sent: &str, token_provider: Option<&str>) -> bool {
    if name == sent {
        return true;
    }
    let provider = provider_of(sent, token_provider);
    let q = qualified(sent, provider);
    if name == q {
        return true;
    }
    let bare = match provider {
        Some(p) => q.strip_prefix(p).and_then(|r| r.strip_prefix('/')).unwrap_or(&q),
        None => &q,
    };
    !name.contains('/') && name == bare
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_id_sent_is_qualified_with_the_tokens_provider() {
        assert_eq!(qualified("m1", Some("mockai")), "mockai/m1");
        assert_eq!(qualified("mockai/m1", Some("mockai")), "mockai/m1");
        assert_eq!(qualified("m1", None), "m1");
        assert_eq!(qualified("meta/llama", Some("openrouter")), "openrouter/meta/llama");
    }

    #[test]
    fn provider_model_and_the_bare_id_match_alike() {
        // The engine sends PROVIDER/MODEL, OpenClaw the bare id: one scope matches both.
        assert!(names_model("mockai/m1", "mockai/m1", Some("mockai")));
        assert!(names_model("mockai/m1", "m1", Some("mockai")));
        assert!(names_model("m1", "mockai/m1", Some("mockai")));
        assert!(names_model("m1", "m1", Some("mockai")));
        // No profile behind the token: the model's own prefix is its provider.
        assert!(names_model("m1", "mockai/m1", None));
        assert!(names_model("mockai/m1", "mockai/m1", None));
        assert!(!names_model("mockai/m1", "m1", None), "provider unknown");
    }

    #[test]
    fn another_providers_model_of_the_same_id_does_not_match() {
        assert!(!names_model("openai/gpt-4o", "azure/gpt-4o", Some("azure")));
        assert!(!names_model("openai/gpt-4o", "gpt-4o", Some("azure")));
        assert!(names_model("azure/gpt-4o", "gpt-4o", Some("azure")));
        // A bare name is any provider's model of that id.
        assert!(names_model("gpt-4o", "gpt-4o", Some("azure")));
        assert!(names_model("gpt-4o", "openai/gpt-4o", Some("openai")));
        assert!(!names_model("gpt-4", "openai/gpt-4o", Some("openai")));
        // A bare id with a slash of its own is matched as sent or qualified.
        assert!(names_model("meta/llama", "meta/llama", Some("openrouter")));
        assert!(names_model("openrouter/meta/llama", "meta/llama", Some("openrouter")));
    }
}
