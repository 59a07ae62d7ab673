//! The `usage` block of a chat completion (OpenAI's shape): what the mock upstream sends with a
//! whole answer (its record keeps it, `UpstreamRecord::usage`) and what a gateway reports to its
//! client (`gateway::TurnOutcome::usage`), compared by `[[expect.turn]] usage = "served"`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Token counts of one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// `prompt_tokens`.
    pub prompt_tokens: u64,
    /// `completion_tokens`.
    pub completion_tokens: u64,
    /// `total_tokens`.
    pub total_tokens: u64,
}

impl Usage {
    /// The usage of a JSON `usage` object, when it has the three counts as numbers.
    pub fn of_json(v: &Value) -> Option<Self> {
        let n = |k: &str| v.get(k).and_then(Value::as_u64);
        Some(Self {
            prompt_tokens: n("prompt_tokens")?,
            completion_tokens: n("completion_tokens")?,
            total_tokens: n("total_tokens")?,
        })
    }
}

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}+{}={}",
            self.prompt_tokens, self.completion_tokens, self.total_tokens
        )
    }
}
