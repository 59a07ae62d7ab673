//! `kind = "error_event"`: a stream that already answered 200 sends, after `after_chunks` content
//! chunks, one `data: {"error": {...}}` event — a provider error by name (`error`, default
//! `server_error`, [`ProviderError`]) in OpenAI's shape, as OpenAI sends a failure mid-stream —
//! and then ends: a clean end of the body, no finish chunk, no `[DONE]`.
//! Streaming chat completions only: a request that does not stream is not in its scope.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, InjectThen, ProviderError, RouteKind};

/// Attributes of an `error_event` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorEventFault {
    /// Content chunks sent before the error event (more than the answer has: after the last).
    pub after_chunks: u64,
    /// The error sent (default `server_error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ProviderError>,
}

impl ErrorEventFault {
    /// The `data:` event sent.
    pub(crate) fn event(&self) -> Bytes {
        let error = self.error.unwrap_or(ProviderError::ServerError);
        Bytes::from(format!("data: {}\n\n", error.json()))
    }
}

impl Fault for ErrorEventFault {
    fn name(&self) -> &'static str {
        "error_event"
    }

    fn applies_to(&self, route: RouteKind) -> bool {
        route == RouteKind::Llm
    }

    fn streams_only(&self) -> bool {
        true
    }

    fn action(&self, _ctx: &mut ActionCtx<'_>) -> Action {
        Action::Inject {
            after_chunks: self.after_chunks,
            event: self.event(),
            then: InjectThen::Close,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::faults::{FaultKind, parse_fault_file};

    #[test]
    fn the_event_is_a_named_provider_error_defaulting_to_server_error() {
        let specs = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='error_event'\nafter_chunks=2\n\
             [[fault]]\nroute='llm'\nkind='error_event'\nafter_chunks=0\nerror='rate_limit_exceeded'\n",
            "f",
        )
        .unwrap();
        let FaultKind::ErrorEvent(plain) = &specs[0].kind else { panic!() };
        let FaultKind::ErrorEvent(named) = &specs[1].kind else { panic!() };
        let json = |f: &ErrorEventFault| -> serde_json::Value {
            let e = f.event();
            let t = std::str::from_utf8(&e).unwrap();
            assert!(t.starts_with("data: {\"error\":") && t.ends_with("}\n\n"), "{t}");
            serde_json::from_str(t.trim_start_matches("data: ").trim_end()).unwrap()
        };
        assert_eq!(json(plain)["error"]["type"], "server_error");
        assert_eq!(json(named)["error"]["code"], "rate_limit_exceeded");
    }

    #[test]
    fn an_unknown_error_or_key_is_refused() {
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='error_event'\nafter_chunks=1\nerror='boom'\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("unknown variant `boom`"), "{e}");
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='error_event'\nafter_chunks=1\n\nstatus=500\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("unknown field `status`"), "{e}");
        assert_eq!((e.line, e.col), (Some(6), Some(1)), "{e}");
    }
}
