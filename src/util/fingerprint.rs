//! Secrets (bearer tokens, API keys) never appear in reports, recordings or logs: they are
//! replaced by a fingerprint, the first 6 hex digits of their SHA-256 (docs/engine.md).

use sha2::{Digest, Sha256};

/// The first 6 lowercase hex digits of the SHA-256 of `secret`.
pub fn fingerprint(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    hex::encode(&digest[..3])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_hex_digits_of_sha256() {
        // sha256("abc") = ba7816bf...
        assert_eq!(fingerprint("abc"), "ba7816");
        assert_ne!(
            fingerprint("openai-codex:default"),
            fingerprint("openai-codex:backup")
        );
    }
}
