//! Which turn a request is for: the [`crate::wire::turn`] marker of its header (our own
//! transport) or of its body's last user message (a gateway), else none — never guessed.
//!
//! The body is read without a JSON parse: one search for the marker's prefix over the raw bytes
//! (most bodies end there), and only when one is found, a single pass over the body's structure
//! that skips through each string with `memchr` and keeps, per open object or array, its
//! `"role"` and the last marker inside it. The request's turn is the last marker of its last run
//! of user messages — the objects whose `"role"` is `"user"` after the last object of another
//! role that comes before them (`content` a string or an array of parts, `role` before or after
//! it); messages of other roles after that run (an assistant prefill) do not end it. So a
//! gateway that sends the session's history (OpenClaw) is read by its last user message, not by
//! an earlier turn's marker in the history; one that adds a user message of its own after the
//! user's (OpenClaw 2026.9 appends an internal-context message to every request) is still read
//! by the user's; and a call of the gateway's own whose last user messages have no marker
//! (compaction, a title, after an assistant's answer) is `None` however many markers its history
//! holds.

use std::sync::OnceLock;

use memchr::memmem::Finder;

use crate::wire::turn::{PREFIX, parse};

/// The turn a header value names: the whole value is one marker.
pub(crate) fn of_header(value: &str) -> Option<u64> {
    let v = value.trim();
    parse(v.as_bytes()).filter(|n| crate::wire::turn::marker(*n).len() == v.len())
}

fn finder() -> &'static Finder<'static> {
    static F: OnceLock<Finder<'static>> = OnceLock::new();
    F.get_or_init(|| Finder::new(PREFIX))
}

/// The turn of a chat completion body: the last marker of its last user message.
pub fn of_body(body: &[u8]) -> Option<u64> {
    finder().find(body)?;
    last_user_marker(body)
}

/// The last well-formed marker in one JSON string's raw bytes.
fn last_marker_in(s: &[u8]) -> Option<u64> {
    finder()
        .find_iter(s)
        .filter_map(|at| s.get(at..).and_then(parse))
        .last()
}

/// An object's `"role"`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// None read (not a message, or not yet).
    #[default]
    None,
    User,
    /// Any other role (`system`, `assistant`, `tool`, ...).
    Other,
}

/// One open object or array.
#[derive(Debug, Default)]
struct Frame {
    object: bool,
    /// The next string is a key.
    expect_key: bool,
    /// The last key read was `"role"` (its value not read yet).
    role_key: bool,
    /// Its `"role"`, once read.
    role: Role,
    /// The last marker inside it, nested values included.
    marker: Option<u64>,
}

fn last_user_marker(body: &[u8]) -> Option<u64> {
    let mut stack: Vec<Frame> = Vec::with_capacity(8);
    // The last marker of the current run of user messages, and whether the last message closed
    // was a user's (a message of another role after it starts a new run at the next user's).
    let mut run_marker: Option<u64> = None;
    let mut last_was_user = false;
    let mut i = 0;
    while let Some(&b) = body.get(i) {
        match b {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                // The closing quote: the first `"` not escaped (a `\` skips the byte after it).
                loop {
                    let k = memchr::memchr2(b'"', b'\\', body.get(j..)?)?;
                    j += k;
                    if body[j] == b'\\' {
                        j += 2;
                        continue;
                    }
                    break;
                }
                let s = &body[start..j];
                i = j + 1;
                let Some(top) = stack.last_mut() else {
                    continue;
                };
                if top.object && top.expect_key {
                    top.expect_key = false;
                    top.role_key = s == b"role";
                    continue;
                }
                if top.object && top.role_key {
                    top.role = if s == b"user" { Role::User } else { Role::Other };
                    top.role_key = false;
                }
                if let Some(n) = last_marker_in(s) {
                    top.marker = Some(n);
                }
                continue;
            }
            b'{' | b'[' => stack.push(Frame {
                object: b == b'{',
                expect_key: b == b'{',
                ..Frame::default()
            }),
            b'}' | b']' => {
                let f = stack.pop()?;
                match (f.object, f.role) {
                    (true, Role::User) => {
                        if !last_was_user {
                            run_marker = None;
                        }
                        run_marker = f.marker.or(run_marker);
                        last_was_user = true;
                    }
                    (true, Role::Other) => last_was_user = false,
                    _ => {}
                }
                if let (Some(parent), Some(n)) = (stack.last_mut(), f.marker) {
                    parent.marker = Some(n);
                }
            }
            b',' => {
                if let Some(top) = stack.last_mut().filter(|t| t.object) {
                    top.expect_key = true;
                    top.role_key = false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    run_marker
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::turn::marker;
    use serde_json::json;

    fn body(v: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&v).unwrap()
    }

    #[test]
    fn a_single_user_message_is_read_by_its_marker() {
        let b = body(json!({"model": "m1", "messages": [
            {"role": "user", "content": format!("rehearse turn 17 of session s1 {}", marker(17))}
        ]}));
        assert_eq!(of_body(&b), Some(17));
        // No marker anywhere: none, from the prefix search alone.
        let b = body(json!({"messages": [{"role": "user", "content": "hello"}]}));
        assert_eq!(of_body(&b), None);
    }

    #[test]
    fn an_openclaw_history_is_read_by_its_last_user_message() {
        // What OpenClaw sends for the third turn of a session: the system prompt, the earlier
        // turns (their markers included, content as an array of parts), the assistant's
        // answers, a tool round, then this turn's user message.
        let b = body(json!({
            "model": "m1",
            "stream": true,
            "messages": [
                {"role": "system", "content": "You are a personal assistant. rehearse-turn-99-0000"},
                {"role": "user", "content": [{"type": "text", "text": format!("[Mon] rehearse turn 3 {}", marker(3))}]},
                {"role": "assistant", "content": format!("t1 t2 {}", marker(4))},
                {"role": "user", "content": [{"type": "text", "text": format!("rehearse turn 8 {}", marker(8))}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "read", "arguments": format!("{{\"q\":\"{}\"}}", marker(5))}}]},
                {"role": "tool", "tool_call_id": "c1", "content": format!("found {}", marker(6))},
                {"content": [{"type": "text", "text": format!("rehearse turn 12 \"quoted\" \\ {}", marker(12))}], "role": "user"},
                {"role": "assistant", "content": format!("echo {}", marker(13))}
            ],
            "tools": [{"type": "function", "function": {"name": "read", "description": marker(20)}}]
        }));
        // The last user message says 12, though an assistant's and a tool's text come later.
        assert_eq!(of_body(&b), Some(12));
        // Python's json.dumps (spaces after `:` and `,`, non-ASCII escaped) reads the same.
        let py = br#"{"messages": [{"role": "user", "content": "caf\u00e9 rehearse-turn-3-MARK"}, {"role": "assistant", "content": "x"}, {"role": "user", "content": "\u00e9 rehearse-turn-8-MARK"}]}"#;
        let py = String::from_utf8_lossy(py)
            .replace("rehearse-turn-3-MARK", &marker(3))
            .replace("rehearse-turn-8-MARK", &marker(8));
        assert_eq!(of_body(py.as_bytes()), Some(8));
    }

    #[test]
    fn openclaws_own_user_message_after_the_users_does_not_hide_the_turn() {
        // What OpenClaw 2026.9.6 sent the mock upstream (captured, cut short): the user's
        // message (time-stamped, with its runtime line), then a user message of its own with
        // its internal context, then its tools.
        let user = format!(
            "[Sat 2026-12-05 19:51 UTC] rehearse turn 0 of session s1 {}\n\nRuntime: agent=main | session=agent:main:openai-user:conv:s1",
            marker(0)
        );
        let internal = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nConversation data (data, not instructions):\n\"Active exec sessions:\\nnone\"\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>";
        let b = body(json!({
            "model": "m1",
            "messages": [
                {"role": "system", "content": "<!-- openclaw:attempt:STABLE -->\nYou are a personal assistant running inside OpenClaw."},
                {"role": "user", "content": user},
                {"role": "user", "content": [{"type": "text", "text": internal}]}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {"name": "read", "parameters": {"type": "object", "properties": {"role": {"type": "string", "enum": ["user"]}}}}}],
            "tool_choice": "auto",
            "max_completion_tokens": 16
        }));
        assert_eq!(of_body(&b), Some(0));
        // A later turn of the session: its history, the new user message (rewritten as OpenClaw
        // does on a retry), its internal context again.
        let b = body(json!({"messages": [
            {"role": "user", "content": format!("rehearse turn 0 {}", marker(0))},
            {"role": "user", "content": internal},
            {"role": "assistant", "content": "t1 t2"},
            {"role": "user", "content": format!("[Queued user message from a previous active turn; preserved as context only.]\nrehearse turn 5 {}", marker(5))},
            {"role": "user", "content": [{"type": "text", "text": internal}]}
        ]}));
        assert_eq!(of_body(&b), Some(5));
        // Two markers in one run of user messages: the last.
        let b = body(json!({"messages": [
            {"role": "user", "content": marker(3)},
            {"role": "user", "content": marker(4)}
        ]}));
        assert_eq!(of_body(&b), Some(4));
    }

    #[test]
    fn an_assistant_prefill_after_the_users_message_keeps_its_turn() {
        let b = body(json!({"messages": [
            {"role": "user", "content": format!("rehearse turn 9 {}", marker(9))},
            {"role": "assistant", "content": "Sure, here is"}
        ]}));
        assert_eq!(of_body(&b), Some(9));
    }

    #[test]
    fn a_gateways_own_call_with_history_but_no_marker_in_its_last_user_message_is_none() {
        // Compaction: the history's markers, then the gateway's own instruction as the last
        // user message.
        let b = body(json!({"messages": [
            {"role": "user", "content": format!("rehearse turn 3 {}", marker(3))},
            {"role": "assistant", "content": "t1 t2"},
            {"role": "user", "content": "Summarize the conversation above."}
        ]}));
        assert_eq!(of_body(&b), None);
        // A marker only outside any user message: none.
        let b = body(json!({"messages": [
            {"role": "system", "content": marker(3)},
            {"role": "user", "content": "title this"}
        ]}));
        assert_eq!(of_body(&b), None);
        // A key that looks like a marker or a role is not one.
        let b = body(json!({"messages": [{"role": "user", "content": "x", marker(3): 1}]}));
        assert_eq!(of_body(&b), None);
        let b = body(json!({"messages": [{"role": "assistant", "user": "role", "content": marker(3)}]}));
        assert_eq!(of_body(&b), None);
    }

    #[test]
    fn a_broken_or_mangled_body_is_none_never_a_panic() {
        let m = marker(7);
        for b in [
            format!("{{\"messages\":[{{\"role\":\"user\",\"content\":\"{m}"),
            format!("{{\"messages\":[{{\"role\":\"user\",\"content\":\"{m}\\"),
            format!("]]}}}}\"{m}\""),
            format!("{{\"role\":\"user\",\"content\":\"{}\"}}", &m[..m.len() - 2]),
        ] {
            assert_eq!(of_body(b.as_bytes()), None, "{b}");
        }
        // A user message at the top level is still one.
        let top = format!("{{\"role\":\"user\",\"content\":\"{m}\"}}");
        assert_eq!(of_body(top.as_bytes()), Some(7));
    }

    #[test]
    fn a_header_is_one_whole_marker() {
        assert_eq!(of_header(&marker(42)), Some(42));
        assert_eq!(of_header(&format!(" {} ", marker(42))), Some(42));
        assert_eq!(of_header("rehearse-turn-42"), None);
        assert_eq!(of_header("42"), None);
        assert_eq!(of_header(&format!("{} x", marker(42))), None);
    }
}
