//! Wire names, written once: the headers and routes the harness's clients send and its servers
//! read (the engine's transport, `rehearse replay`, `rehearse record`, the mock upstream), the
//! percent-encoding of names in a path or query, dependency names ([`dep`]), what a gateway
//! says of a turn in its response headers ([`said`]), and the throttle headers a wait is
//! announced with, their forms and parsers ([`throttle`]).
//!
//! Plain constants and string functions only (no hyper), so the engine can use them too.

pub mod dep;
pub(crate) mod model;
pub mod said;
pub mod throttle;
pub mod turn;
pub mod usage;

use std::borrow::Cow;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Header names (lower case, as `http::HeaderName` stores them).
pub(crate) mod header {
    /// The dep a breaker probe (half-open trial or canary) is for.
    pub(crate) const PROBE: &str = "x-breaker-probe";
    /// Present (value `1`) on the engine's synthetic health checks, next to [`PROBE`], so the
    /// upstream can tell a canary from a half-open breaker probe.
    pub(crate) const CANARY: &str = "x-rehearse-canary";
    /// The key that makes retrying a non-idempotent tool call safe.
    pub(crate) const IDEMPOTENCY_KEY: &str = "idempotency-key";
    /// A replayed line's tenant (read back by the recording proxy).
    pub(crate) const TENANT: &str = "x-rehearse-tenant";
    /// A replayed line's session id.
    pub(crate) const SESSION: &str = "x-rehearse-session";
    /// A replayed line's token budget.
    pub(crate) const BUDGET: &str = "x-rehearse-budget-tokens";
    /// A replayed line's operation-class override.
    pub(crate) const CLASS: &str = "x-rehearse-class";
    /// A replayed tool line's `idempotent` flag (`true` / `false`).
    pub(crate) const IDEMPOTENT: &str = "x-rehearse-idempotent";
    /// Fleet mode: the gateway host that sent a request (the upstream records it as `host`).
    pub(crate) const HOST: &str = "x-rehearse-host";
    /// The turn (traffic line) an attempt is for: a [`super::turn`] marker (the upstream
    /// records it as `turn`).
    pub(crate) const TURN: &str = super::turn::HEADER;
}

/// Routes of the upstream (docs/faults.md) and of its control API.
pub(crate) mod route {
    /// Model calls (`POST`, OpenAI-shaped).
    pub(crate) const CHAT: &str = "/v1/chat/completions";
    /// Tool calls: `POST /tools/NAME` (NAME percent-encoded, see [`super::tool_path`]).
    pub(crate) const TOOLS_PREFIX: &str = "/tools/";
    /// WebSocket sessions: `GET /ws?channel=NAME`.
    pub(crate) const WS: &str = "/ws";
    /// The query parameter naming a WebSocket session's channel.
    pub const WS_CHANNEL: &str = "channel";
    /// Everything under it is the upstream's control API.
    pub(crate) const CONTROL_PREFIX: &str = "/_rehearse/";
    /// `GET` / `PUT` the live faults.
    pub(crate) const FAULTS: &str = "/_rehearse/faults";
    /// `GET` the per-route and per-dep counts.
    pub(crate) const STATS: &str = "/_rehearse/stats";
    /// `POST`: the upstream stops as if its process had died.
    pub(crate) const SHUTDOWN: &str = "/_rehearse/shutdown";
}

/// What a name keeps unescaped in a path segment or query value: RFC 3986's unreserved
/// characters (letters, digits, `-._~`); everything else, `/` and space included, is `%XX`.
const NAME: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes a name for a path segment or a query value (UTF-8, then `%XX`).
pub(crate) fn encode(name: &str) -> Cow<'_, str> {
    utf8_percent_encode(name, NAME).into()
}

/// Decodes a percent-encoded name; `None` when the bytes are not UTF-8.
pub(crate) fn decode(encoded: &str) -> Option<Cow<'_, str>> {
    percent_decode_str(encoded).decode_utf8().ok()
}

/// Decodes a percent-encoded name, bytes that are not UTF-8 replaced (what a recording keeps of
/// a name). Invalid escapes are kept as written.
pub fn decode_lossy(encoded: &str) -> String {
    percent_decode_str(encoded).decode_utf8_lossy().into_owned()
}

/// The path of a tool call: `/tools/NAME`, NAME encoded.
pub(crate) fn tool_path(name: &str) -> String {
    format!("{}{}", route::TOOLS_PREFIX, encode(name))
}

/// The path and query of a WebSocket session: `/ws?channel=NAME`, NAME encoded.
pub(crate) fn ws_path(channel: &str) -> String {
    format!("{}?{}={}", route::WS, route::WS_CHANNEL, encode(channel))
}

/// The decoded tool name of a request path, when it is a tool route with one non-empty
/// segment (`/tools/a%2Fb` is the tool `a/b`; `/tools/a/b` is no tool).
pub(crate) fn tool_of_path(path: &str) -> Option<String> {
    let raw = path.strip_prefix(route::TOOLS_PREFIX)?;
    if raw.is_empty() || raw.contains('/') {
        return None;
    }
    decode(raw).map(Cow::into_owned)
}

/// The decoded channel of a `/ws` request's query (`channel=NAME`), if any.
pub(crate) fn channel_of_query(query: Option<&str>) -> Option<String> {
    query?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == route::WS_CHANNEL)
        .map(|(_, v)| decode_lossy(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_unreserved_characters_only() {
        assert_eq!(encode("crm_search-v1.2~x"), "crm_search-v1.2~x");
        assert_eq!(encode("a b/c"), "a%20b%2Fc");
        assert_eq!(encode("é"), "%C3%A9");
        assert_eq!(decode_lossy("%zz%41%C3%A9"), "%zzAé");
        assert_eq!(decode("%FF"), None);
        assert_eq!(decode_lossy("%FF"), "\u{FFFD}");
    }

    #[test]
    fn a_tool_name_with_a_space_and_a_slash_round_trips_through_its_path() {
        let path = tool_path("crm search/v2");
        assert_eq!(path, "/tools/crm%20search%2Fv2");
        assert_eq!(tool_of_path(&path).as_deref(), Some("crm search/v2"));
        assert_eq!(tool_of_path("/tools/a/b"), None);
        assert_eq!(tool_of_path("/tools/"), None);
        assert_eq!(tool_of_path("/tool/x"), None);
    }

    #[test]
    fn a_channel_with_a_space_and_a_slash_round_trips_through_its_query() {
        let path = ws_path("room 1/a&b");
        assert_eq!(path, "/ws?channel=room%201%2Fa%26b");
        let query = path.split_once('?').map(|(_, q)| q);
        assert_eq!(channel_of_query(query).as_deref(), Some("room 1/a&b"));
        assert_eq!(
            channel_of_query(Some("x=1&channel=rt")).as_deref(),
            Some("rt")
        );
        assert_eq!(channel_of_query(None), None);
    }
}
