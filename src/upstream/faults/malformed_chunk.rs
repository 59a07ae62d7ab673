//! `kind = "malformed_chunk"`: after `after_chunks` content chunks of a stream, one `data:` line
//! that is not JSON (a chunk cut off inside its JSON, then the event's blank line); then the
//! stream goes on as if nothing happened (`then = "continue"`, the default: every content chunk,
//! the finish chunk and `[DONE]`), or ends at once with `data: [DONE]` and a clean end of the
//! body (`then = "end"`: no finish chunk — a stream whose terminator says it is complete).
//! Streaming chat completions only: a request that does not stream is not in its scope.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Action, ActionCtx, Fault, InjectThen, RouteKind};

/// The line: a chunk's JSON cut off inside its content delta.
const MALFORMED: &[u8] = b"data: {\"id\":\"chatcmpl-rehearse\",\"object\":\
\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\n\n";

/// What follows the malformed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MalformedThen {
    /// The rest of the stream, as if nothing happened.
    #[default]
    Continue,
    /// `data: [DONE]`, then a clean end.
    End,
}

impl MalformedThen {
    fn is_continue(&self) -> bool {
        *self == Self::Continue
    }
}

/// Attributes of a `malformed_chunk` fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MalformedChunkFault {
    /// Content chunks sent before the malformed line (more than the answer has: after the last).
    pub after_chunks: u64,
    /// `continue` (default) or `end`.
    #[serde(default, skip_serializing_if = "MalformedThen::is_continue")]
    pub then: MalformedThen,
}

impl Fault for MalformedChunkFault {
    fn name(&self) -> &'static str {
        "malformed_chunk"
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
            event: Bytes::from_static(MALFORMED),
            then: match self.then {
                MalformedThen::Continue => InjectThen::Continue,
                MalformedThen::End => InjectThen::Done,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::faults::{FaultKind, parse_fault_file};

    #[test]
    fn then_defaults_to_continue_and_the_line_is_not_json() {
        let specs = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='malformed_chunk'\nafter_chunks=3\n\
             [[fault]]\nroute='*'\nkind='malformed_chunk'\nafter_chunks=0\nthen='end'\n",
            "f",
        )
        .unwrap();
        assert_eq!(
            specs[0].kind,
            FaultKind::MalformedChunk(MalformedChunkFault { after_chunks: 3, then: MalformedThen::Continue })
        );
        assert_eq!(
            specs[1].kind,
            FaultKind::MalformedChunk(MalformedChunkFault { after_chunks: 0, then: MalformedThen::End })
        );
        let line = std::str::from_utf8(MALFORMED).unwrap();
        let data = line.strip_prefix("data: ").unwrap().trim_end();
        assert!(serde_json::from_str::<serde_json::Value>(data).is_err());
        assert!(line.ends_with("\n\n") && !data.contains('\n'));
    }

    #[test]
    fn bad_attributes_name_their_key_and_position() {
        let e = parse_fault_file(
            "[[fault]]\nroute='llm'\nkind='malformed_chunk'\nafter_chunks=1\nthen='stop'\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.message.contains("unknown variant `stop`, expected `continue` or `end`"), "{e}");
        let e = parse_fault_file("[[fault]]\nroute='llm'\nkind='malformed_chunk'\nafter_chunks=-1\n", "f.toml")
            .unwrap_err();
        assert_eq!(e.line, Some(1), "{e}");
        let e = parse_fault_file("[[fault]]\nroute='tool:a'\nkind='malformed_chunk'\nafter_chunks=1\n", "f.toml")
            .unwrap_err();
        assert!(e.message.contains("does not apply to route `tool:a`"), "{e}");
    }
}
