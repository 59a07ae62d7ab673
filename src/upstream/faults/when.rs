//! `when = { stream = BOOL, tools = BOOL, prefill = BOOL }` in a fault's envelope: a
//! request-conditional scope on chat completions. Every key given must hold: `stream` — the
//! request streams; `tools` — it carries a non-empty `tools` array; `prefill` — its last message
//! is an assistant message (a prefill the model is to continue).
//!
//! Only requests a `when` fault could hit are parsed for `tools` and `prefill`, once each
//! ([`RequestShape::of`], called lazily by the fault table after every other scope key held);
//! `stream` comes with the request's routing, and a table without `when` never parses a body.

use serde::{Deserialize, Serialize};

/// The `when` key of a fault.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// The request streams (`"stream": true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    /// The request carries tools (a non-empty `tools` array).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    /// The request's last message is an assistant message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<bool>,
}

impl When {
    /// Whether reading it needs the request body parsed (`tools` or `prefill`).
    fn needs_body(&self) -> bool {
        self.tools.is_some() || self.prefill.is_some()
    }

    /// Whether it holds for a chat completion that streams (`stream`) and whose body's shape
    /// `shape` yields (called only when a key needs it).
    pub(crate) fn holds(&self, stream: bool, shape: impl FnOnce() -> RequestShape) -> bool {
        if self.stream.is_some_and(|s| s != stream) {
            return false;
        }
        if !self.needs_body() {
            return true;
        }
        let shape = shape();
        self.tools.is_none_or(|t| t == shape.tools) && self.prefill.is_none_or(|p| p == shape.prefill)
    }
}

/// What `when` reads in a chat completion's body.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestShape {
    /// A non-empty `tools` array.
    pub tools: bool,
    /// The last of `messages` has `role: "assistant"`.
    pub prefill: bool,
}

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(default)]
    tools: Option<Vec<serde::de::IgnoredAny>>,
    #[serde(default, borrow)]
    messages: Vec<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow)]
    role: Option<std::borrow::Cow<'a, str>>,
}

impl RequestShape {
    /// The shape of a chat completion body (a body that does not parse has neither).
    pub fn of(body: &[u8]) -> Self {
        match serde_json::from_slice::<Body<'_>>(body) {
            Ok(b) => Self {
                tools: b.tools.is_some_and(|t| !t.is_empty()),
                prefill: b
                    .messages
                    .last()
                    .and_then(|m| m.role.as_deref())
                    .is_some_and(|r| r == "assistant"),
            },
            Err(_) => Self::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_reads_tools_and_a_trailing_assistant_message() {
        let user = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
        assert_eq!(RequestShape::of(user), RequestShape::default());
        let prefill = br#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Sure,"}],"tools":[]}"#;
        assert_eq!(RequestShape::of(prefill), RequestShape { tools: false, prefill: true });
        let tools = br#"{"tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"assistant"},{"role":"tool","content":"x"}]}"#;
        assert_eq!(RequestShape::of(tools), RequestShape { tools: true, prefill: false });
        assert_eq!(RequestShape::of(b"not json"), RequestShape::default());
    }

    #[test]
    fn every_key_given_must_hold_and_the_body_is_read_only_when_needed() {
        let shape = RequestShape { tools: true, prefill: false };
        let never = || -> RequestShape { panic!("the body was parsed for `stream` alone") };
        let w = When { stream: Some(true), ..When::default() };
        assert!(w.holds(true, never));
        assert!(!w.holds(false, never));
        let w = When { stream: Some(true), tools: Some(true), prefill: Some(false) };
        assert!(w.holds(true, || shape));
        // A failed `stream` decides without the body.
        assert!(!w.holds(false, never));
        let w = When { prefill: Some(true), ..When::default() };
        assert!(!w.holds(true, || shape));
        assert!(When::default().holds(false, never));
    }
}
