//! A fault window as the report holds it: one `[[fault]]` table with its whole scope (route,
//! profile, model, first, probability), its window in scenario time, the timeline lanes it can
//! touch and the requests it applied to.

use serde::{Deserialize, Serialize};

/// One request a fault applied to (from the upstream's records).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultHit {
    /// Arrival, ms since the run start.
    pub t_ms: u64,
    /// The dep of the request.
    pub dep: String,
}

fn one() -> f64 {
    1.0
}

/// A fault window with its whole scope (ms since the run start).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultWindow {
    /// Position of its `[[fault]]` table in the scenario, 0-based.
    #[serde(default)]
    pub index: usize,
    /// The fault's route (`tool:crm_search`, `llm`, `ws`, `*`).
    pub route: String,
    /// The fault kind (`status`, `stall`, ...).
    pub kind: String,
    /// Start, ms since run start.
    pub from_ms: u64,
    /// End, ms since run start (null = until the end of the run).
    pub until_ms: Option<u64>,
    /// A short description (`status=503`, `retry_after="120s"`).
    #[serde(default)]
    pub detail: String,
    /// Only requests with this profile's token.
    #[serde(default)]
    pub profile: Option<String>,
    /// Only model calls for this model.
    #[serde(default)]
    pub model: Option<String>,
    /// Only the first N matching user requests.
    #[serde(default)]
    pub first: Option<u64>,
    /// Chance a matching request is hit.
    #[serde(default = "one")]
    pub probability: f64,
    /// The deps (timeline lanes) the fault can touch.
    #[serde(default)]
    pub lanes: Vec<String>,
    /// User requests it applied to, in arrival order (capped; `applied_count` is exact).
    #[serde(default)]
    pub applied: Vec<FaultHit>,
    /// How many user requests it applied to.
    #[serde(default)]
    pub applied_count: u64,
}

impl FaultWindow {
    /// The scope beyond route and window, as `profile=… model=… first=N p=0.5` (empty when none).
    pub(crate) fn scope(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = &self.profile {
            parts.push(format!("profile={p}"));
        }
        if let Some(m) = &self.model {
            parts.push(format!("model={m}"));
        }
        if let Some(n) = self.first {
            parts.push(format!("first={n}"));
        }
        if self.probability < 1.0 {
            parts.push(format!("p={}", self.probability));
        }
        parts.join(" ")
    }
}
