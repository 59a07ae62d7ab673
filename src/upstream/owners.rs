//! Who sent a request: the scenario profile behind its bearer token — its id and provider —
//! found by the token's fingerprint, so no credential is kept here. Fault scopes use it (a
//! fault's `profile` may name the profile id as well as the token; a fault's `model` is
//! qualified with the token's provider, [`crate::wire::model`]), and so do the ground-truth
//! subjects judged over the upstream's records, which carry the same fingerprint.

use std::collections::BTreeMap;

/// The profile behind one token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenOwner {
    /// The profile id (`openai:default`).
    pub id: String,
    /// Its provider (`openai`).
    pub provider: String,
}

/// Token fingerprint → the profile it belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenOwners(BTreeMap<String, TokenOwner>);

impl TokenOwners {
    /// From `(credential, id, provider)` of every profile; the credential is only fingerprinted.
    pub fn new<'a>(profiles: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>) -> Self {
        Self(
            profiles
                .into_iter()
                .map(|(token, id, provider)| {
                    (
                        crate::util::fingerprint(token),
                        TokenOwner {
                            id: id.to_string(),
                            provider: provider.to_string(),
                        },
                    )
                })
                .collect(),
        )
    }

    /// From `(fingerprint, id, provider)`: for tests whose records carry made-up fingerprints.
    #[cfg(test)]
    pub(crate) fn by_fingerprints<'a>(
        owners: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Self {
        Self(
            owners
                .into_iter()
                .map(|(fp, id, provider)| {
                    (
                        fp.to_string(),
                        TokenOwner {
                            id: id.to_string(),
                            provider: provider.to_string(),
                        },
                    )
                })
                .collect(),
        )
    }

    /// The owner of the token with fingerprint `fp`.
    pub fn by_fingerprint(&self, fp: &str) -> Option<&TokenOwner> {
        self.0.get(fp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_found_by_the_tokens_fingerprint_only() {
        let o = TokenOwners::new([("sk-secret", "openai:a", "openai"), ("b", "azure:b", "azure")]);
        let fp = crate::util::fingerprint("sk-secret");
        assert_eq!(o.by_fingerprint(&fp).map(|o| o.id.as_str()), Some("openai:a"));
        assert_eq!(o.by_fingerprint("sk-secret"), None, "keyed by fingerprint");
        assert!(!format!("{o:?}").contains("sk-secret"));
    }
}
