//! The report's "Point your gateway at the mock upstream" part of an `http` target's section
//! (report.json `target.gateway_setup`, written by `scenario::gateway_setup::block`): the base
//! URL and models as a line, one row per profile with its key's fingerprint (never a key), as a
//! [`Table`] both renderers share.

use super::table::Table;

/// The line (base URL, API, models) and the profile table of `setup`; `None` when it holds no
/// base URL (not a setup).
pub(crate) fn render(setup: &serde_json::Value) -> Option<(String, Table)> {
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    let base = setup["base_url"].as_str().filter(|b| !b.is_empty())?;
    let list = |v: &serde_json::Value| {
        v.as_array()
            .map(|a| a.iter().map(s).collect::<Vec<_>>().join(", "))
            .unwrap_or_default()
    };
    let fallbacks = match list(&setup["fallbacks"]) {
        f if f.is_empty() => "none".to_string(),
        f => f,
    };
    let line = format!(
        "Base URL `{base}` (OpenAI chat completions), primary model `{}`, fallbacks {fallbacks}; \
         one deployment per profile, each with that profile's `token` as its API key \
         (docs/gateways.md). {}",
        s(&setup["primary"]),
        crate::scenario::gateway_setup::KEEPS_STATE
    );
    let mut tab = Table::new(
        &["profile", "provider", "models", "API key"],
        &[false, false, false, false],
    );
    for p in setup["profiles"].as_array().into_iter().flatten() {
        tab.rows.push(vec![
            s(&p["id"]),
            s(&p["provider"]),
            list(&p["models"]),
            format!("its `token` (fingerprint {})", s(&p["key_fp"])),
        ]);
    }
    Some((line, tab))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_renders_its_line_and_a_row_per_profile() {
        let setup = serde_json::json!({
            "base_url": "http://127.0.0.1:18081/v1", "api": "openai-chat-completions",
            "primary": "mockai/m1", "fallbacks": ["fallback/m2"],
            "profiles": [{"id": "mockai:a", "provider": "mockai", "models": ["mockai/m1"], "key_fp": "a1b2c3"}],
        });
        let (line, tab) = render(&setup).unwrap();
        assert!(line.contains("`http://127.0.0.1:18081/v1`"), "{line}");
        assert!(line.contains("fallbacks fallback/m2"), "{line}");
        assert!(line.contains("restart it for a clean run"), "{line}");
        let mut md = String::new();
        tab.markdown(&mut md);
        assert!(
            md.contains("| mockai:a | mockai | mockai/m1 | its `token` (fingerprint a1b2c3) |"),
            "{md}"
        );
        assert!(render(&serde_json::json!({})).is_none());
    }
}
