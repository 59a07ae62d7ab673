//! Tests of fault scoping: windows, `first`, profiles, probability, and the canary rules.

use super::*;
use crate::upstream::faults::parse_fault_file;

fn sp(v: f64) -> Speed {
    Speed::new(v).unwrap()
}

fn table(toml: &str, seed: u64) -> FaultTable {
    FaultTable::new(parse_fault_file(toml, "t.toml").unwrap(), seed)
}

fn llm<'a>(bearer: Option<&'a str>, model: Option<&'a str>) -> RequestScope<'a> {
    RequestScope {
        route: RouteKind::Llm,
        tool: None,
        bearer,
        profile_id: None,
        provider: None,
        model,
        stream: Some(false),
        body: None,
    }
}

fn tool(name: &str) -> RequestScope<'_> {
    RequestScope {
        route: RouteKind::Tool,
        tool: Some(name),
        bearer: None,
        profile_id: None,
        provider: None,
        model: None,
        stream: None,
        body: None,
    }
}

#[test]
fn window_opens_and_closes_relative_to_start_and_speed() {
    let mut t = table(
        "[[fault]]\nroute='tool:a'\nkind='status'\nstatus=503\nfrom='20s'\nuntil='60s'\n",
        1,
    );
    let start = Instant::now();
    let at = |s: u64| start + Duration::from_secs(s);
    assert_eq!(t.select(&tool("a"), start, at(19), sp(1.0)), None);
    assert_eq!(t.select(&tool("a"), start, at(20), sp(1.0)), Some(0));
    assert_eq!(t.select(&tool("a"), start, at(59), sp(1.0)), Some(0));
    assert_eq!(t.select(&tool("a"), start, at(60), sp(1.0)), None);
    assert_eq!(t.select(&tool("b"), start, at(30), sp(1.0)), None);
    // speed 10: the window is 2 s .. 6 s
    assert_eq!(t.select(&tool("a"), start, at(1), sp(10.0)), None);
    assert_eq!(t.select(&tool("a"), start, at(2), sp(10.0)), Some(0));
    assert_eq!(t.select(&tool("a"), start, at(6), sp(10.0)), None);
}

#[test]
fn first_n_then_next_fault_in_file_order() {
    let mut t = table(
        "[[fault]]\nroute='llm'\nkind='status'\nstatus=500\nfirst=2\n\
         [[fault]]\nroute='*'\nkind='status'\nstatus=502\n",
        1,
    );
    let s = Instant::now();
    let r = llm(None, None);
    let got: Vec<_> = (0..4).map(|_| t.select(&r, s, s, sp(1.0))).collect();
    assert_eq!(got, [Some(0), Some(0), Some(1), Some(1)]);
    t.replace(t.specs().to_vec());
    assert_eq!(t.select(&r, s, s, sp(1.0)), Some(0));
}

#[test]
fn profile_and_model_scope() {
    let mut t = table(
        "[[fault]]\nroute='llm'\nprofile='p1'\nmodel='openai/gpt'\nkind='reset'\n",
        1,
    );
    let s = Instant::now();
    assert_eq!(
        t.select(&llm(Some("p1"), Some("openai/gpt")), s, s, sp(1.0)),
        Some(0)
    );
    assert_eq!(
        t.select(&llm(Some("p2"), Some("openai/gpt")), s, s, sp(1.0)),
        None
    );
    assert_eq!(
        t.select(&llm(Some("p1"), Some("other")), s, s, sp(1.0)),
        None
    );
    assert_eq!(
        t.select(&llm(None, Some("openai/gpt")), s, s, sp(1.0)),
        None
    );
}

#[test]
fn probability_is_a_seeded_sequence() {
    let spec = "[[fault]]\nroute='*'\nkind='status'\nstatus=500\nprobability=0.5\n";
    let run = |seed| {
        let mut t = table(spec, seed);
        let s = Instant::now();
        (0..200)
            .map(|_| t.select(&tool("x"), s, s, sp(1.0)).is_some())
            .collect::<Vec<_>>()
    };
    let a = run(42);
    assert_eq!(a, run(42));
    assert_ne!(a, run(43));
    let hits = a.iter().filter(|h| **h).count();
    assert!((70..=130).contains(&hits), "hits {hits}");
}

#[test]
fn ws_kinds_skip_http_routes_under_star() {
    let mut t = table("[[fault]]\nroute='*'\nkind='ws_close'\ncode=4000\n", 1);
    let s = Instant::now();
    assert_eq!(t.select(&tool("x"), s, s, sp(1.0)), None);
    let ws = RequestScope {
        route: RouteKind::Ws,
        tool: None,
        bearer: None,
        profile_id: None,
        provider: None,
        model: None,
        stream: None,
        body: None,
    };
    assert_eq!(t.select(&ws, s, s, sp(1.0)), Some(0));
}

#[test]
fn canaries_never_see_a_first_n_fault_nor_use_it_up() {
    // A `first = N` fault is aimed at N user requests: a canary arriving while it is
    // armed passes it by and falls through to the next fault in scope.
    let mut t = table(
        "[[fault]]\nroute='llm'\nkind='stall'\nfirst=1\n\
         [[fault]]\nroute='llm'\nkind='status'\nstatus=503\nfrom='5s'\n",
        1,
    );
    let (s, r) = (Instant::now(), llm(Some("p1"), None));
    let later = s + Duration::from_secs(6);
    for _ in 0..3 {
        assert_eq!(
            t.select_for(&r, s, s, sp(1.0), true),
            None,
            "armed: canary spared"
        );
        assert_eq!(
            t.select_for(&r, s, later, sp(1.0), true),
            Some(1),
            "the next fault in scope still applies to canaries"
        );
    }
    assert_eq!(
        t.select(&r, s, s, sp(1.0)),
        Some(0),
        "the user's first call still gets it"
    );
    assert_eq!(
        t.select(&r, s, s, sp(1.0)),
        None,
        "used up by that one call"
    );
    assert_eq!(t.select_for(&r, s, s, sp(1.0), true), None);
}

#[test]
fn canaries_draw_probabilities_from_their_own_stream() {
    let spec = "[[fault]]\nroute='*'\nkind='status'\nstatus=500\nprobability=0.5\n";
    let users = |canary_every: Option<usize>| {
        let mut t = table(spec, 7);
        let s = Instant::now();
        let mut got = Vec::new();
        for i in 0..200 {
            if canary_every.is_some_and(|n| i % n == 0) {
                t.select_for(&tool("x"), s, s, sp(1.0), true);
            }
            got.push(t.select(&tool("x"), s, s, sp(1.0)).is_some());
        }
        got
    };
    assert_eq!(
        users(None),
        users(Some(3)),
        "canaries leave user faults unchanged"
    );
    let mut t = table(spec, 7);
    let s = Instant::now();
    let canary_hits = (0..200)
        .filter(|_| t.select_for(&tool("x"), s, s, sp(1.0), true).is_some())
        .count();
    assert!(
        (70..=130).contains(&canary_hits),
        "canaries are hit too: {canary_hits}"
    );
}

#[test]
fn a_fault_profile_names_the_token_or_the_profile_id_behind_it() {
    let mut t = table(
        "[[fault]]\nroute='llm'\nkind='status'\nstatus=503\nprofile='openai:a'\n",
        1,
    );
    let s = Instant::now();
    let mut r = llm(Some("sk-secret-a"), Some("openai/gpt-4o"));
    assert_eq!(t.select(&r, s, s, sp(1.0)), None, "a token that is not the id");
    r.profile_id = Some("openai:a");
    assert_eq!(t.select(&r, s, s, sp(1.0)), Some(0), "the profile behind the token");
    r.profile_id = Some("openai:b");
    assert_eq!(t.select(&r, s, s, sp(1.0)), None);
    // The token itself still works.
    let mut t = table(
        "[[fault]]\nroute='llm'\nkind='status'\nstatus=503\nprofile='sk-secret-a'\n",
        1,
    );
    assert_eq!(t.select(&r, s, s, sp(1.0)), Some(0));
}

#[test]
fn a_fault_model_matches_provider_model_and_the_bare_id_alike() {
    let mut t = table(
        "[[fault]]\nroute='llm'\nkind='status'\nstatus=503\nmodel='mockai/m1'\n",
        1,
    );
    let s = Instant::now();
    // The engine sends PROVIDER/MODEL.
    let engine = llm(Some("k"), Some("mockai/m1"));
    assert_eq!(t.select(&engine, s, s, sp(1.0)), Some(0));
    // OpenClaw sends the bare id, with a mockai profile's token.
    let mut gateway = llm(Some("k"), Some("m1"));
    assert_eq!(t.select(&gateway, s, s, sp(1.0)), None, "provider unknown");
    gateway.provider = Some("mockai");
    assert_eq!(t.select(&gateway, s, s, sp(1.0)), Some(0));
    // Another provider's model of the same id is not this one.
    gateway.provider = Some("azure");
    assert_eq!(t.select(&gateway, s, s, sp(1.0)), None);
    // A bare scope matches both spellings.
    let mut t = table("[[fault]]\nroute='llm'\nkind='status'\nstatus=503\nmodel='m1'\n", 1);
    assert_eq!(t.select(&engine, s, s, sp(1.0)), Some(0));
    gateway.provider = Some("mockai");
    assert_eq!(t.select(&gateway, s, s, sp(1.0)), Some(0));
}

/// A chat completion that streams or not, with this body.
fn chat<'a>(stream: bool, body: &'a [u8]) -> RequestScope<'a> {
    RequestScope {
        stream: Some(stream),
        body: Some(body),
        ..llm(None, None)
    }
}

#[test]
fn when_selects_by_stream_tools_and_prefill_and_counts_first_only_on_hits() {
    let mut t = table(
        "[[fault]]\nroute='llm'\nkind='status'\nstatus=400\nfirst=1\nwhen={prefill=true}\n\
         [[fault]]\nroute='*'\nkind='status'\nstatus=501\nwhen={stream=true,tools=true}\n\
         [[fault]]\nroute='llm'\nkind='status'\nstatus=502\nwhen={stream=false}\n",
        1,
    );
    let s = Instant::now();
    let plain = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
    let prefill = br#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Sure"}]}"#;
    let tools = br#"{"tools":[{"type":"function"}],"messages":[{"role":"user"}]}"#;
    let mut hit = |r: &RequestScope<'_>| t.select(r, s, s, sp(1.0));
    assert_eq!(hit(&chat(true, plain)), None, "streams, no tools, no prefill");
    assert_eq!(hit(&chat(true, tools)), Some(1));
    assert_eq!(hit(&chat(false, tools)), Some(2), "tools but not streaming");
    // `first = 1` counts only requests its `when` held for.
    assert_eq!(hit(&chat(true, prefill)), Some(0));
    assert_eq!(hit(&chat(true, prefill)), None, "first = 1 used up");
    // Not a chat completion: no `when` holds.
    assert_eq!(hit(&tool("x")), None);
}

#[test]
fn stream_only_kinds_skip_requests_that_do_not_stream() {
    let mut t = table(
        "[[fault]]\nroute='llm'\nkind='error_event'\nafter_chunks=1\n\
         [[fault]]\nroute='llm'\nkind='malformed_chunk'\nafter_chunks=1\n",
        1,
    );
    let s = Instant::now();
    let body = br#"{"messages":[]}"#;
    assert_eq!(t.select(&chat(false, body), s, s, sp(1.0)), None);
    assert_eq!(t.select(&chat(true, body), s, s, sp(1.0)), Some(0));
}

#[test]
fn when_and_headers_are_refused_where_they_cannot_apply_at_their_key() {
    let cases = [
        ("[[fault]]\nroute='tool:a'\nkind='status'\nstatus=500\nwhen={stream=true}\n", 5, "`when` reads chat completions"),
        ("[[fault]]\nroute='llm'\nkind='reset'\nheaders={x-a='1'}\n", 4, "fault kind `reset` sends none"),
        ("[[fault]]\nroute='llm'\nkind='stall'\nheaders={x-a='1'}\n", 4, "fault kind `stall` sends none"),
        ("[[fault]]\nroute='ws'\nkind='ws_close'\ncode=4000\nheaders={x-a='1'}\n", 5, "sends none"),
        ("[[fault]]\nroute='ws'\nkind='latency'\ndelay='1s'\nheaders={x-a='1'}\n", 5, "replaces the upgrade"),
        ("[[fault]]\nroute='llm'\nkind='status'\nstatus=429\nheaders={retry-after='soon'}\n", 5, "whole seconds"),
        ("[[fault]]\nroute='llm'\nkind='status'\nstatus=429\nwhen={streams=true}\n", 1, "unknown field `streams`"),
    ];
    for (text, line, want) in cases {
        let e = parse_fault_file(text, "f.toml").unwrap_err();
        assert!(e.message.contains(want), "{text}: {e}");
        assert_eq!(e.line, Some(line), "{text}: {e}");
    }
    // Where they apply, they parse.
    let ok = "[[fault]]\nroute='llm'\nkind='first_token_delay'\ndelay='1s'\nwhen={stream=true}\n\
              headers={x-ms-throttle-reason='quota', retry-after-ms='9000'}\n";
    let specs = parse_fault_file(ok, "f.toml").unwrap();
    assert_eq!(specs[0].headers.as_ref().map(|h| h.len()), Some(2));
}
