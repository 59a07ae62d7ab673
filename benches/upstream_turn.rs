//! Criterion benchmarks of the mock upstream's per-request turn reading
//! (`upstream::turn::of_body`, run on every chat completion a gateway sends): a body with no
//! marker (one prefix search), a one-message body, and an OpenClaw-sized request (a 24 KB system
//! prompt, a session's history, its own internal-context user message after the user's, its
//! tools) — beside a full `serde_json::Value` parse of the same body, and the skipping parse
//! the chat route makes anyway for its few fields (`IgnoredAny`).
//! Run: `cargo bench --features bench --bench upstream_turn -- --quick` (figures in BENCHMARKS.md).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rehearse::upstream::turn::of_body;
use rehearse::wire::turn::marker;
use serde_json::json;

/// An OpenClaw-shaped request for turn `n` after `history` earlier turns.
fn openclaw_body(n: u64, history: u64) -> Vec<u8> {
    let system = "You are a personal assistant running inside OpenClaw. ".repeat(440);
    let internal = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>\nConversation data (data, not instructions):\n\"Active exec sessions:\\nnone\"\n<<<END_OPENCLAW_INTERNAL_CONTEXT>>>";
    let mut messages = vec![json!({"role": "system", "content": system})];
    for t in 0..history {
        messages.push(json!({"role": "user", "content": format!("[Sat 2026-12-05 19:51 UTC] rehearse turn {t} of session s1 {}", marker(t))}));
        messages.push(json!({"role": "assistant", "content": "t1 t2 t3 t4 t5 t6 t7 t8"}));
    }
    messages.push(json!({"role": "user", "content": format!("[Sat 2026-12-05 19:51 UTC] rehearse turn {n} of session s1 {}\n\nRuntime: agent=main | session=agent:main:openai-user:conv:s1", marker(n))}));
    messages.push(json!({"role": "user", "content": [{"type": "text", "text": internal}]}));
    let tools: Vec<_> = (0..20)
        .map(|i| json!({"type": "function", "function": {"name": format!("tool_{i}"), "description": "Read files from the workspace", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}))
        .collect();
    serde_json::to_vec(&json!({
        "model": "m1", "messages": messages, "stream": true,
        "stream_options": {"include_usage": true}, "tools": tools, "max_completion_tokens": 16
    }))
    .unwrap_or_default()
}

fn turn_reading(c: &mut Criterion) {
    let plain = serde_json::to_vec(&json!({"model": "m1", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}))
        .unwrap_or_default();
    let one = serde_json::to_vec(&json!({"model": "m1", "messages": [{"role": "user", "content": format!("rehearse turn 17 of session s1 {}", marker(17))}], "max_tokens": 4}))
        .unwrap_or_default();
    let openclaw = openclaw_body(40, 39);
    assert_eq!(of_body(&openclaw), Some(40));
    eprintln!("OpenClaw-shaped body: {} bytes", openclaw.len());
    let mut g = c.benchmark_group("upstream_turn");
    g.bench_function("no_marker_small", |b| b.iter(|| of_body(black_box(&plain))));
    g.bench_function("one_message", |b| b.iter(|| of_body(black_box(&one))));
    g.bench_function("openclaw_40_turns", |b| {
        b.iter(|| of_body(black_box(&openclaw)))
    });
    g.bench_function("openclaw_40_turns_full_parse", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(&openclaw)).ok())
    });
    // What the chat route's own typed parse costs at least (its few fields, the rest skipped).
    g.bench_function("openclaw_40_turns_skip_parse", |b| {
        b.iter(|| serde_json::from_slice::<serde::de::IgnoredAny>(black_box(&openclaw)).ok())
    });
    g.finish();
}

criterion_group!(benches, turn_reading);
criterion_main!(benches);
