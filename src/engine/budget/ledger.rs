//! The per-session token ledger: what an agent session spent across its requests.

use crate::util::sync::Locked;
use std::collections::HashMap;
use std::sync::Mutex;

/// Tokens spent per session (an agent session's budget spans its requests). Requests without a
/// session only count their own attempts.
#[derive(Debug, Default)]
pub struct Ledger(Mutex<HashMap<String, u64>>);

impl Ledger {
    /// Tokens the session spent in earlier requests (0 without a session).
    pub fn spent(&self, session: Option<&str>) -> u64 {
        let Some(s) = session else { return 0 };
        self.0.locked().get(s).copied().unwrap_or(0)
    }

    /// Adds a finished request's tokens to its session.
    pub fn add(&self, session: Option<&str>, tokens: u64) {
        let Some(s) = session else { return };
        if tokens == 0 {
            return;
        }
        let mut m = self.0.locked();
        let v = m.entry(s.to_string()).or_insert(0);
        *v = v.saturating_add(tokens);
    }
}
