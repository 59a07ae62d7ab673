//! `[models]` (docs/scenario.md, "Models"): the models a gateway of the scenario can send,
//! target-neutral — `primary` (what the traffic's model calls ask for) and `fallbacks`, in
//! order. The embedded engine's fallback chain and every generated gateway configuration
//! (OpenClaw's, `scenario::gateway`) read them, and an expectation may name any of them.
//!
//! Precedence: `[engine.modelFailover] fallbacks` (an embedded-engine table) overrides the
//! engine's chain only — it may reorder or leave out `[models] fallbacks`, never add a model
//! `[models]` does not list (a contradiction, refused at file:line:col); a generated gateway
//! configuration reads `[models] fallbacks`, else `[engine.modelFailover] fallbacks` (the
//! scenarios written before `[models]`), else the user's own configuration's. A written
//! `primary` must be the model every model call of the traffic names.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::field::FieldError;
use crate::engine::{EngineConfig, RequestKind};
use crate::replay::traffic::TrafficLine;

/// `[models]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsSpec {
    /// The model the turns ask for, `PROVIDER/MODEL` (default: the traffic's model calls').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<String>,
    /// The models to fall back to, in order, each `PROVIDER/MODEL`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<String>,
}

impl ModelsSpec {
    /// Nothing written.
    pub(crate) fn is_empty(&self) -> bool {
        self.primary.is_none() && self.fallbacks.is_empty()
    }

    /// Each name `PROVIDER/MODEL`, none twice, the primary not a fallback; the error names the
    /// key under `models`.
    pub(crate) fn validate(&self) -> Result<(), FieldError> {
        let named = self
            .primary
            .iter()
            .map(|m| ("primary".to_string(), m))
            .chain(
                self.fallbacks
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (format!("fallbacks[{i}]"), m)),
            );
        let mut seen = BTreeSet::new();
        for (key, m) in named {
            let qualified = m
                .split_once('/')
                .is_some_and(|(p, id)| !p.is_empty() && !id.is_empty());
            if !qualified || m.trim() != m {
                return Err(FieldError::new(
                    key,
                    format!("`{m}` must be PROVIDER/MODEL (a `[[profile]]` provider and its model)"),
                ));
            }
            if !seen.insert(m.as_str()) {
                return Err(FieldError::new(key, format!("`{m}` is named twice")));
            }
        }
        Ok(())
    }
}

/// What `[models]` contradicts elsewhere in the scenario (its own shape checked first): a
/// written `primary` other than the traffic's model calls' model, an `[engine.modelFailover]
/// fallbacks` (`over`) naming a model `[models] fallbacks` does not list. Field paths are the
/// file's.
pub(crate) fn check(
    m: &ModelsSpec,
    over: &[String],
    traffic: &[TrafficLine],
) -> Result<(), FieldError> {
    m.validate()
        .map_err(|e| FieldError::new(format!("models.{}", e.field), e.message))?;
    if let Some(primary) = &m.primary {
        let other = traffic.iter().find_map(|l| match &l.kind {
            RequestKind::Llm { model, .. } if model != primary => Some(model),
            _ => None,
        });
        if let Some(other) = other {
            return Err(FieldError::new(
                "models.primary",
                format!(
                    "`{primary}` is not what the traffic asks for: its model calls name \
                     `{other}` (the primary is the model every model call names)"
                ),
            ));
        }
    }
    if !m.fallbacks.is_empty()
        && let Some((i, x)) = over.iter().enumerate().find(|(_, x)| !m.fallbacks.contains(x))
    {
        return Err(FieldError::new(
            format!("engine.modelFailover.fallbacks[{i}]"),
            format!(
                "`{x}` is not among `[models] fallbacks` ({}): `[models]` lists every model a \
                 gateway of this scenario can send, and the engine's override may reorder or \
                 leave out those, not add one",
                m.fallbacks.join(", ")
            ),
        ));
    }
    Ok(())
}

impl ModelsSpec {
    /// The embedded engine's fallback chain: the override `over` (`[engine.modelFailover]
    /// fallbacks`) when written, else `[models] fallbacks`.
    pub(crate) fn engine_fallbacks<'a>(&'a self, over: &'a [String]) -> &'a [String] {
        if over.is_empty() { &self.fallbacks } else { over }
    }

    /// The embedded engine's configuration `engine`, its fallback chain
    /// [`Self::engine_fallbacks`].
    pub(crate) fn engine_config(&self, engine: &EngineConfig) -> EngineConfig {
        let mut c = engine.clone();
        c.model_failover.fallbacks = self
            .engine_fallbacks(&engine.model_failover.fallbacks)
            .to_vec();
        c
    }

    /// A generated gateway configuration's fallbacks and the field they are written at:
    /// `[models] fallbacks`, else `over`; `None` when neither is written (the user's own
    /// configuration may give them).
    pub(crate) fn gateway_fallbacks<'a>(
        &'a self,
        over: &'a [String],
    ) -> Option<(&'a [String], &'static str)> {
        if !self.fallbacks.is_empty() {
            Some((&self.fallbacks, "models.fallbacks"))
        } else if !over.is_empty() {
            Some((over, "engine.modelFailover.fallbacks"))
        } else {
            None
        }
    }

    /// Every fallback model any system under test can send: `[models] fallbacks` and `over`.
    pub(crate) fn all_fallbacks<'a>(
        &'a self,
        over: &'a [String],
    ) -> impl Iterator<Item = &'a String> {
        self.fallbacks
            .iter()
            .chain(over.iter().filter(|m| !self.fallbacks.contains(m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::traffic::parse_traffic;

    fn models(text: &str) -> ModelsSpec {
        toml::from_str(text).unwrap()
    }

    fn v(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn traffic() -> Vec<TrafficLine> {
        parse_traffic(
            "{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":16}\n",
            "t.jsonl",
        )
        .unwrap()
    }

    #[test]
    fn models_feed_the_engine_and_the_gateways_and_the_override_wins_for_the_engine_only() {
        let m = models("primary = \"mockai/m1\"\nfallbacks = [\"fb/m2\", \"fb/m3\"]\n");
        let none: Vec<String> = Vec::new();
        assert!(check(&m, &none, &traffic()).is_ok());
        assert_eq!(m.engine_fallbacks(&none), ["fb/m2", "fb/m3"]);
        let engine = EngineConfig::default();
        assert_eq!(
            m.engine_config(&engine).model_failover.fallbacks,
            ["fb/m2", "fb/m3"]
        );
        assert_eq!(
            m.gateway_fallbacks(&none),
            Some((&v(&["fb/m2", "fb/m3"])[..], "models.fallbacks"))
        );
        // The engine's override: its chain only, within `[models]`.
        let over = v(&["fb/m3"]);
        assert!(check(&m, &over, &traffic()).is_ok());
        assert_eq!(m.engine_fallbacks(&over), ["fb/m3"]);
        assert_eq!(m.gateway_fallbacks(&over).unwrap().0, ["fb/m2", "fb/m3"]);
        assert_eq!(m.all_fallbacks(&over).count(), 2);
        // Written before `[models]`: the engine table is everyone's.
        let empty = ModelsSpec::default();
        let old = v(&["fb/m2"]);
        assert!(empty.is_empty());
        assert_eq!(empty.engine_fallbacks(&old), ["fb/m2"]);
        assert_eq!(
            empty.gateway_fallbacks(&old).unwrap(),
            (&old[..], "engine.modelFailover.fallbacks")
        );
        assert!(empty.gateway_fallbacks(&none).is_none());
    }

    #[test]
    fn a_contradiction_or_a_bad_name_is_refused_at_its_field() {
        for (m, over, field, why) in [
            (
                "fallbacks = [\"fb/m2\"]",
                v(&["fb/m2", "fb/m9"]),
                "engine.modelFailover.fallbacks[1]",
                "not among `[models] fallbacks` (fb/m2)",
            ),
            (
                "primary = \"mockai/m7\"",
                vec![],
                "models.primary",
                "its model calls name `mockai/m1`",
            ),
            ("fallbacks = [\"m2\"]", vec![], "models.fallbacks[0]", "PROVIDER/MODEL"),
            (
                "primary = \"mockai/m1\"\nfallbacks = [\"fb/m2\", \"mockai/m1\"]",
                vec![],
                "models.fallbacks[1]",
                "named twice",
            ),
        ] {
            let e = check(&models(m), &over, &traffic()).unwrap_err();
            assert_eq!(e.field, field, "{m}");
            assert!(e.message.contains(why), "{m}: {e:?}");
        }
        assert!(toml::from_str::<ModelsSpec>("primry = \"a/b\"").is_err());
    }
}
