//! `kind = "status"`: answer with that HTTP status (and an optional body), or with a provider
//! error by name (`error = "context_length_exceeded"`, [`ProviderError`]): its JSON body, and
//! its provider's status unless `status` says another. `error` and `body` are exclusive.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, InvalidFault, ProviderError, RouteKind};

/// Attributes of a `status` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusFault {
    /// The HTTP status (100..=599, not 101); with `error`, defaults to that error's status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The response body (default: a JSON error naming the status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A provider error by name, in OpenAI's JSON error shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProviderError>,
}

impl StatusFault {
    /// A plain status with the default body.
    pub fn code(status: u16) -> Self {
        Self {
            status: Some(status),
            body: None,
            error: None,
        }
    }

    /// The status sent: `status`, else the named error's (validation makes one of them set).
    fn effective_status(&self) -> u16 {
        self.status
            .or(self.error.map(ProviderError::status))
            .unwrap_or(500)
    }
}

impl Fault for StatusFault {
    fn name(&self) -> &'static str {
        "status"
    }

    fn applies_to(&self, _route: RouteKind) -> bool {
        true
    }

    fn validate(&self) -> Result<(), InvalidFault> {
        if self.error.is_some() && self.body.is_some() {
            return Err(InvalidFault(
                "`error` and `body` are exclusive: `error` writes the body".into(),
            ));
        }
        let Some(status) = self.status else {
            if self.error.is_none() {
                return Err(InvalidFault("missing field `status` (or `error`)".into()));
            }
            return Ok(());
        };
        if !(100..=599).contains(&status) || status == 101 {
            return Err(InvalidFault(format!(
                "`status` must be an HTTP status 100..=599 other than 101, got {status}"
            )));
        }
        Ok(())
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        let status = self.effective_status();
        let body = match (&self.body, self.error) {
            (Some(b), _) => Bytes::from(b.clone()),
            (None, Some(e)) => Bytes::from(e.json()),
            (None, None) => Bytes::from(format!(
                "{{\"error\":{{\"message\":\"injected status {status}\",\"type\":\"rehearse_fault\"}}}}"
            )),
        };
        Action::Respond {
            status,
            headers: Vec::new(),
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::upstream::faults::parse_fault_file;
    use crate::util::speed::Speed;

    fn act(f: &StatusFault) -> (u16, String) {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut ctx = ActionCtx {
            speed: Speed::ONE,
            wall_now: std::time::UNIX_EPOCH,
            rng: &mut rng,
        };
        match f.action(&mut ctx) {
            Action::Respond { status, body, .. } => {
                (status, String::from_utf8(body.to_vec()).unwrap())
            }
            other => panic!("{other:?}"),
        }
    }

    fn one(text: &str) -> StatusFault {
        let specs = parse_fault_file(text, "f.toml").unwrap();
        match &specs[0].kind {
            crate::upstream::faults::FaultKind::Status(s) => s.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_named_error_takes_its_providers_status_unless_status_says_another() {
        let f = one("[[fault]]\nroute='llm'\nkind='status'\nerror='context_length_exceeded'\n");
        let (status, body) = act(&f);
        assert_eq!(status, 400);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["error"]["code"], "context_length_exceeded");
        assert_eq!(v["error"]["type"], "invalid_request_error");
        assert_eq!(v["error"]["param"], "messages");
        let f = one("[[fault]]\nroute='llm'\nkind='status'\nerror='insufficient_quota'\nstatus=403\n");
        assert_eq!(act(&f).0, 403);
        let f = one("[[fault]]\nroute='llm'\nkind='status'\nerror='model_not_found'\n");
        assert_eq!(act(&f).0, 404);
        // A plain status keeps its default body.
        let f = one("[[fault]]\nroute='llm'\nkind='status'\nstatus=503\n");
        assert_eq!(act(&f), (503, "{\"error\":{\"message\":\"injected status 503\",\"type\":\"rehearse_fault\"}}".into()));
    }

    #[test]
    fn error_and_body_are_exclusive_and_an_unknown_name_is_refused_at_its_key() {
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='status'\nerror='model_not_found'\nbody='x'\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("`error` and `body` are exclusive"), "{e}");
        assert_eq!((e.line, e.col), (Some(4), Some(1)), "{e}");
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='status'\n\nerror='no_such_error'\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("unknown variant `no_such_error`"), "{e}");
        assert!(e.message.contains("context_length_exceeded"), "names the choices: {e}");
        let e = parse_fault_file("[[fault]]\nroute='llm'\nkind='status'\n", "f.toml").unwrap_err();
        assert!(e.message.contains("`status`"), "{e}");
    }
}
