//! The recording proxy's request handling (`redact::http_line`, `ws_line`, `decode`): no panic
//! on any method, path, headers or body; whatever it records, replay accepts as the same line;
//! and no secret a request carries in its headers reaches the recording, wherever the request
//! repeats it (body values and keys, tool name, idempotency key, tenant, session, channel).

use http::{HeaderMap, HeaderName, HeaderValue, Method};
use proptest::prelude::*;
use rehearse::replay::redact::{http_line, ws_channel, ws_line};
use rehearse::replay::traffic::{TrafficLine, parse_line};
use rehearse::wire::decode_lossy;
use serde_json::Value;

use super::common::config;

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        4 => Just(Method::POST),
        1 => Just(Method::GET),
        1 => Just(Method::PUT),
        1 => "[A-Z]{1,8}".prop_filter_map("a method token", |m| Method::from_bytes(m.as_bytes()).ok()),
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => Just("/v1/chat/completions".to_string()),
        3 => "[a-zA-Z0-9_%.~+-]{0,20}".prop_map(|n| format!("/tools/{n}")),
        1 => "/[ -~]{0,30}",
    ]
}

const HEADER_NAMES: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "api-key",
    "x-api-key",
    "cookie",
    "idempotency-key",
    "x-rehearse-tenant",
    "x-rehearse-session",
    "x-rehearse-budget",
    "x-rehearse-class",
    "x-rehearse-idempotent",
    "content-type",
];

fn headers() -> impl Strategy<Value = HeaderMap> {
    let name = prop_oneof![
        4 => prop::sample::select(HEADER_NAMES).prop_map(HeaderName::from_static),
        1 => "[a-z][a-z0-9-]{0,10}".prop_filter_map("a header name", |n| HeaderName::from_bytes(n.as_bytes()).ok()),
    ];
    let value = prop_oneof![
        "[ -~]{0,40}",
        "(Bearer|Basic) [A-Za-z0-9._-]{0,30}",
        "[a-z]{1,6}=[A-Za-z0-9]{0,12}(; [a-z]{1,6}=[A-Za-z0-9]{0,12}){0,3}",
        prop::collection::vec(any::<u8>(), 0..20)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
    .prop_filter_map("a header value", |v| HeaderValue::from_str(&v).ok());
    prop::collection::vec((name, value), 0..8).prop_map(|pairs| {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k, v);
        }
        h
    })
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "(model|max_tokens|stream|q|token|api_key|password|note)".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 20, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    any::<String>(),
                    "(model|max_tokens|stream|q|token|api_key|Password|x-api-key|note)"
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => json().prop_map(|v| v.to_string().into_bytes()),
        1 => (json(), "[a-z/.-]{1,20}", 0u64..5000, any::<bool>()).prop_map(|(extra, model, n, stream)| {
            serde_json::json!({"model": model, "max_tokens": n, "stream": stream, "extra": extra})
                .to_string()
                .into_bytes()
        }),
        1 => prop::collection::vec(any::<u8>(), 0..64),
    ]
}

/// The recorder's line must be one the replayer reads back as the same line.
fn replays_as_itself(line: &TrafficLine) {
    let text = line.to_json();
    let back = parse_line(&text, "recorded.jsonl", 1)
        .unwrap_or_else(|e| panic!("the recorder wrote a line replay refuses: {e}\n{text}"));
    assert_eq!(&back, line, "{text}");
}

/// A fake secret as a credential looks: a prefix and 16-32 key characters.
fn secret() -> impl Strategy<Value = String> {
    ("(sk-live-|sk-ant-|xk-|rk_|ghp_|tok)", "[A-Za-z0-9]{16,32}")
        .prop_map(|(p, k)| format!("{p}{k}"))
}

/// Puts `s` somewhere in `v`: a string value, a key, or inside a longer string.
fn plant(v: &mut Value, s: &str, where_: u8) {
    let sentence = format!("please use {s} for this");
    match (v, where_ % 4) {
        (Value::Object(m), 0) => {
            m.insert(s.to_string(), Value::from(1));
        }
        (Value::Object(m), 1) => {
            m.insert("note".into(), Value::String(sentence));
        }
        (Value::Object(m), _) => {
            m.insert(
                "nested".into(),
                serde_json::json!([{ "deep": s }, "Bearer ".to_string() + s]),
            );
        }
        (v, _) => *v = serde_json::json!({ "q": sentence, "k": s }),
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_request_records_a_line_replay_reads_back(
        method in method(), path in path(), headers in headers(), body in body(), at in any::<u64>(),
    ) {
        if let Ok(line) = http_line(at, &method, &path, &headers, &body) {
            replays_as_itself(&line);
        }
        let query = path.split_once('?').map(|(_, q)| q);
        if let Some(line) = ws_line(at, query.or(Some(path.as_str())), &headers) {
            replays_as_itself(&line);
        }
        let _ = ws_channel(Some(&path));
        let _ = decode_lossy(&path);
    }

    #[test]
    fn header_secrets_never_reach_the_recording(
        secrets in prop::collection::vec(secret(), 5),
        mut body in json(),
        places in prop::collection::vec(any::<u8>(), 5),
        in_name in any::<bool>(),
        echo in 0u8..4,
    ) {
        let [bearer, api_key, x_api_key, cookie, proxy] = &secrets[..] else { unreachable!() };
        let mut h = HeaderMap::new();
        let put = |h: &mut HeaderMap, k: &'static str, v: String| {
            h.append(k, HeaderValue::from_str(&v).expect("visible ASCII"));
        };
        put(&mut h, "authorization", format!("Bearer {bearer}"));
        put(&mut h, "api-key", api_key.clone());
        put(&mut h, "x-api-key", x_api_key.clone());
        put(&mut h, "cookie", format!("theme=dark; sid={cookie}"));
        put(&mut h, "proxy-authorization", format!("Basic {proxy}"));
        // The request repeats one of them in a recorded header too.
        let echoed = &secrets[usize::from(echo)];
        match echo {
            0 => put(&mut h, "idempotency-key", format!("k-{echoed}")),
            1 => put(&mut h, "x-rehearse-tenant", format!("team {echoed}")),
            2 => put(&mut h, "x-rehearse-session", echoed.clone()),
            _ => {}
        }
        for (s, p) in secrets.iter().zip(&places) {
            plant(&mut body, s, *p);
        }
        let tool = if in_name { format!("lookup-{}", secrets[0]) } else { "crm_search".into() };
        let mut recorded = Vec::new();
        if let Ok(line) = http_line(0, &Method::POST, &format!("/tools/{tool}"), &h, body.to_string().as_bytes()) {
            recorded.push(line.to_json());
        }
        let chat = serde_json::json!({"model": format!("m-{}", secrets[1]), "messages": [{"content": body}]});
        if let Ok(line) = http_line(0, &Method::POST, "/v1/chat/completions", &h, chat.to_string().as_bytes()) {
            recorded.push(line.to_json());
        }
        if let Some(line) = ws_line(0, Some(&format!("channel=rt-{}", secrets[2])), &h) {
            recorded.push(line.to_json());
        }
        prop_assert_eq!(recorded.len(), 3, "every request is recordable");
        for text in &recorded {
            for s in &secrets {
                prop_assert!(!text.contains(s.as_str()), "secret {} recorded: {}", s, text);
            }
        }
    }
}
