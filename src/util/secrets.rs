//! The one secret scrubber: every path that writes a gateway's output (its log, console, auth
//! state, an error's tail) or a recording (`rehearse record`'s traffic lines) replaces the
//! secrets it knows with a mask before the text reaches a file or a message.
//!
//! - A gateway's output keeps a trace of which key was meant: each secret becomes
//!   `<secret FINGERPRINT>` ([`crate::util::fingerprint`], the name upstream records give a token).
//! - A recording's contract (docs/traffic.md) is `[redacted]`, fixed.
//!
//! Secrets are replaced longest first, so a whole header value goes before the credential inside
//! it; empty secrets are ignored (they would match everywhere). A string that starts with an HTTP
//! credential scheme (`Bearer `, `Basic `) is a secret as a whole whatever it holds:
//! [`is_credential`].

/// What a secret is replaced with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mask {
    /// `<secret FINGERPRINT>`: the key stays identifiable, never readable.
    Fingerprint,
    /// A fixed marker (a recording's `[redacted]`).
    Fixed(&'static str),
}

/// Known secrets and their mask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scrubber {
    /// Non-empty, longest first, no duplicates.
    secrets: Vec<String>,
    mask: Mask,
}

impl Scrubber {
    /// A scrubber for `secrets` (empty ones dropped) replacing each with `mask`.
    pub(crate) fn new<S: Into<String>>(secrets: impl IntoIterator<Item = S>, mask: Mask) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .map(Into::into)
            .filter(|s| !s.is_empty())
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Scrubber { secrets, mask }
    }

    /// [`Scrubber::new`] with [`Mask::Fingerprint`]: for a gateway's output.
    pub(crate) fn fingerprinting<S: Into<String>>(secrets: impl IntoIterator<Item = S>) -> Self {
        Scrubber::new(secrets, Mask::Fingerprint)
    }

    /// The secrets it replaces, longest first.
    #[allow(
        dead_code,
        reason = "no caller in the crate or its tests (found when the internals went pub(crate))"
    )]
    pub(crate) fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// `text` with every occurrence of every secret replaced by its mask.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), &self.mask_of(s));
            }
        }
        out
    }

    /// What `secret` becomes.
    fn mask_of(&self, secret: &str) -> String {
        match self.mask {
            Mask::Fingerprint => format!("<secret {}>", crate::util::fingerprint(secret)),
            Mask::Fixed(m) => m.to_string(),
        }
    }
}

/// Whether `s` is an HTTP credential as a whole (`Bearer …`, `Basic …`, any case, leading
/// blanks allowed).
pub(crate) fn is_credential(s: &str) -> bool {
    let lower = s.trim_start().to_ascii_lowercase();
    lower.starts_with("bearer ") || lower.starts_with("basic ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_becomes_its_fingerprint() {
        let s = Scrubber::fingerprinting(["key-A", "", "key-B"]);
        let out = s.scrub("auth key-A failed; retry with key-B then key-A");
        assert!(!out.contains("key-A") && !out.contains("key-B"), "{out}");
        let fp = crate::util::fingerprint("key-A");
        assert_eq!(out.matches(&format!("<secret {fp}>")).count(), 2, "{out}");
    }

    #[test]
    fn a_secret_holding_another_goes_whole() {
        let s = Scrubber::new(["abcd", "Bearer abcd"], Mask::Fixed("[redacted]"));
        assert_eq!(s.secrets(), ["Bearer abcd", "abcd"]);
        assert_eq!(
            s.scrub("h: Bearer abcd / abcd"),
            "h: [redacted] / [redacted]"
        );
    }

    #[test]
    fn no_secret_no_change() {
        assert_eq!(
            Scrubber::fingerprinting(Vec::<String>::new()).scrub("x"),
            "x"
        );
        assert_eq!(Scrubber::fingerprinting([""]).scrub("x"), "x");
    }

    #[test]
    fn credential_schemes_are_secrets_whole() {
        assert!(is_credential("  Bearer sk-1"));
        assert!(is_credential("basic dXNlcg=="));
        assert!(!is_credential("bearer"));
        assert!(!is_credential("a Bearer x"));
    }
}
