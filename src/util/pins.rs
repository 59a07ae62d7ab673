//! The pinned versions, from `scripts/pins.env` (embedded at build; the install scripts source
//! the same file): plain `KEY=VALUE` lines, `#` comments.

/// Portkey's HTTP server package (`PORTKEY_HONO_NODE_SERVER_VERSION` pins it), named here so
/// the pins need not reach into the gateway that installs it (`gateway::portkey::install`).
pub(crate) const PORTKEY_HONO_SERVER: &str = "@hono/node-server";

/// The file as built in.
const PINS_ENV: &str = include_str!("../../scripts/pins.env");

/// The versions rehearse installs by default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pins {
    /// `OPENCLAW_VERSION`.
    pub openclaw: String,
    /// `NODE_VERSION`: the Node OpenClaw runs on, installed beside it.
    pub node: String,
    /// `OPENCLAW_SECOND_VERSION`: the second release of the two-version test.
    pub openclaw_second: String,
    /// `OPENAI_VERSION`: the OpenAI Python SDK.
    pub openai: String,
    /// `PORTKEY_VERSION`: Portkey's open-source gateway (npm `@portkey-ai/gateway`).
    pub portkey: String,
    /// What the pinned Portkey's own lock file pins of its HTTP stack, as npm specs
    /// (`PORTKEY_HONO_VERSION`, `PORTKEY_HONO_NODE_SERVER_VERSION`,
    /// `PORTKEY_HONO_NODE_WS_VERSION`): installed beside the pinned release only.
    pub portkey_locked: Vec<(String, String)>,
    /// `LITELLM_VERSION`: the LiteLLM proxy (`litellm[proxy]`).
    pub litellm: String,
    /// `LITELLM_PROMETHEUS_CLIENT_VERSION`: the prometheus_client its `/metrics` needs.
    pub litellm_prometheus_client: String,
}

/// A pins file without one of its keys, or with a line that is not `KEY=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("scripts/pins.env: {0}")]
pub(crate) struct PinsError(String);

/// Parses a pins file.
pub(crate) fn parse(text: &str) -> Result<Pins, PinsError> {
    let mut kv = std::collections::BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(PinsError(format!("line {}: not KEY=VALUE: {line}", i + 1)));
        };
        let ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
        };
        if !ok(k) || !ok(v) {
            return Err(PinsError(format!(
                "line {}: a key or value the shell would read differently: {line}",
                i + 1
            )));
        }
        kv.insert(k.to_string(), v.to_string());
    }
    let mut get = |k: &str| kv.remove(k).ok_or_else(|| PinsError(format!("no {k}")));
    Ok(Pins {
        openclaw: get("OPENCLAW_VERSION")?,
        node: get("NODE_VERSION")?,
        openclaw_second: get("OPENCLAW_SECOND_VERSION")?,
        openai: get("OPENAI_VERSION")?,
        portkey: get("PORTKEY_VERSION")?,
        portkey_locked: vec![
            ("hono".into(), get("PORTKEY_HONO_VERSION")?),
            (
                PORTKEY_HONO_SERVER.into(),
                get("PORTKEY_HONO_NODE_SERVER_VERSION")?,
            ),
            ("@hono/node-ws".into(), get("PORTKEY_HONO_NODE_WS_VERSION")?),
        ],
        litellm: get("LITELLM_VERSION")?,
        litellm_prometheus_client: get("LITELLM_PROMETHEUS_CLIENT_VERSION")?,
    })
}

/// The built-in pins.
pub(crate) fn pins() -> Result<Pins, PinsError> {
    parse(PINS_ENV)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_file_parses_and_bad_lines_are_refused() {
        let p = pins().unwrap();
        assert!(crate::scenario::target::version_problem(&p.openclaw).is_none());
        assert!(crate::gateway::openclaw::install::parse_version(&p.node).is_some());
        assert!(crate::gateway::openclaw::install::node_supported(&p.node));
        assert!(crate::scenario::target::version_problem(&p.litellm).is_none());
        assert!(parse("OPENCLAW_VERSION=1\n").is_err(), "keys missing");
        assert!(parse("OPENCLAW_VERSION=\"1\"\n").is_err(), "quotes");
        assert!(parse("just words\n").is_err());
    }

    /// The two-version fixture rehearses the two pinned releases.
    #[test]
    fn the_versions_fixture_names_the_pinned_releases() {
        let p = pins().unwrap();
        let text = crate::builtin::scenario_text("openclaw-versions-503-key-a").unwrap();
        let f = crate::scenario::ScenarioFile::parse(text, "fixture").unwrap();
        assert_eq!(f.target_versions(), [p.openclaw_second, p.openclaw]);
    }
}
