//! `kind = "status"`: answer with that HTTP status (and an optional body).

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, InvalidFault, RouteKind};

/// Attributes of a `status` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusFault {
    /// The HTTP status (100..=599, not 101).
    pub status: u16,
    /// The response body (default: a JSON error naming the status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

impl Fault for StatusFault {
    fn name(&self) -> &'static str {
        "status"
    }

    fn applies_to(&self, _route: RouteKind) -> bool {
        true
    }

    fn validate(&self) -> Result<(), InvalidFault> {
        if !(100..=599).contains(&self.status) || self.status == 101 {
            return Err(InvalidFault(format!(
                "`status` must be an HTTP status 100..=599 other than 101, got {}",
                self.status
            )));
        }
        Ok(())
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        let body = match &self.body {
            Some(b) => Bytes::from(b.clone()),
            None => Bytes::from(format!(
                "{{\"error\":{{\"message\":\"injected status {}\",\"type\":\"rehearse_fault\"}}}}",
                self.status
            )),
        };
        Action::Respond {
            status: self.status,
            headers: Vec::new(),
            body,
        }
    }
}
