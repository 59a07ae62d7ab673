//! Auth profiles: the accounts/keys a provider's model calls can use, in rotation order. A
//! provider with no configured profile gets one implicit profile `PROVIDER:default`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::engine::errors::ConfigError;
use crate::util::fingerprint;
use crate::wire::dep::{DEFAULT_REGION, model_dep};

/// One auth profile (a `[[profile]]` table of a scenario).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The provider (`openai-codex`).
    pub provider: String,
    /// The profile id (`openai-codex:default`); not a secret, appears in events and the store.
    pub id: String,
    /// The credential sent as a bearer token; defaults to the id. A secret: never logged.
    #[serde(default)]
    pub token: Option<String>,
    /// The endpoint region (default `default`).
    #[serde(default)]
    pub region: Option<String>,
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile")
            .field("provider", &self.provider)
            .field("id", &self.id)
            .field("token_fp", &self.token.as_deref().map(fingerprint))
            .field("region", &self.region)
            .finish()
    }
}

impl Profile {
    /// A profile with the credential defaulting to its id.
    pub fn new(provider: &str, id: &str) -> Self {
        Self {
            provider: provider.to_string(),
            id: id.to_string(),
            token: None,
            region: None,
        }
    }

    /// The implicit profile of a provider without configured ones.
    pub fn implicit(provider: &str) -> Self {
        Self::new(provider, &format!("{provider}:default"))
    }

    /// The credential (token, else the id).
    pub fn credential(&self) -> &str {
        self.token.as_deref().unwrap_or(&self.id)
    }

    /// The region (default `default`).
    pub fn region(&self) -> &str {
        self.region.as_deref().unwrap_or(DEFAULT_REGION)
    }

    /// The model endpoint dependency `PROVIDER/REGION/FP`.
    pub fn dep(&self) -> String {
        model_dep(&self.provider, self.region(), self.credential())
    }
}

/// A profile with its dependency name computed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEntry {
    /// The profile.
    pub profile: Profile,
    /// Its model endpoint dependency.
    pub dep: String,
}

/// Every configured profile, grouped by provider in configuration order.
#[derive(Debug, Clone, Default)]
pub struct ProfileBook {
    by_provider: BTreeMap<String, Vec<ProfileEntry>>,
}

impl ProfileBook {
    /// Groups `profiles`; a duplicate id or an empty provider/id is an error naming it.
    pub fn new(profiles: Vec<Profile>) -> Result<Self, ConfigError> {
        let mut by_provider: BTreeMap<String, Vec<ProfileEntry>> = BTreeMap::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, p) in profiles.into_iter().enumerate() {
            if p.provider.trim().is_empty() || p.id.trim().is_empty() {
                return Err(ConfigError::Invalid {
                    key: format!("profile[{i}]"),
                    message: "provider and id must not be empty".into(),
                });
            }
            if !seen.insert(p.id.clone()) {
                return Err(ConfigError::Invalid {
                    key: format!("profile[{i}].id"),
                    message: format!("duplicate profile id `{}`", p.id),
                });
            }
            let dep = p.dep();
            by_provider
                .entry(p.provider.clone())
                .or_default()
                .push(ProfileEntry { profile: p, dep });
        }
        Ok(Self { by_provider })
    }

    /// The profiles of `provider` in rotation order (the implicit one when none is configured).
    pub fn for_provider(&self, provider: &str) -> Vec<ProfileEntry> {
        match self.by_provider.get(provider) {
            Some(list) if !list.is_empty() => list.clone(),
            _ => {
                let p = Profile::implicit(provider);
                let dep = p.dep();
                vec![ProfileEntry { profile: p, dep }]
            }
        }
    }

    /// Every configured profile.
    pub fn all(&self) -> impl Iterator<Item = &ProfileEntry> {
        self.by_provider.values().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_profile_and_order_are_kept() {
        let book = ProfileBook::new(vec![
            Profile::new("openai-codex", "b"),
            Profile::new("openai-codex", "a"),
        ])
        .unwrap();
        let ids: Vec<_> = book
            .for_provider("openai-codex")
            .into_iter()
            .map(|e| e.profile.id)
            .collect();
        assert_eq!(ids, ["b", "a"]);
        let imp = book.for_provider("anthropic");
        assert_eq!(imp[0].profile.id, "anthropic:default");
        assert!(imp[0].dep.starts_with("anthropic/default/"));
    }

    #[test]
    fn duplicate_ids_are_named_and_tokens_never_debug_printed() {
        let err =
            ProfileBook::new(vec![Profile::new("x", "p"), Profile::new("y", "p")]).unwrap_err();
        assert!(err.to_string().contains("profile[1].id"), "{err}");
        let mut p = Profile::new("x", "p");
        p.token = Some("sk-secret".into());
        assert!(!format!("{p:?}").contains("sk-secret"));
    }
}
