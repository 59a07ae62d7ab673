//! Traffic JSONL (`parse_traffic`, `parse_line`, `TrafficLine::to_json`): no panic on any text,
//! errors naming a line (and a column inside it) of the input, and write → parse giving back
//! exactly the lines written, JSON bodies with any numbers included.

use proptest::prelude::*;
use rehearse::engine::OpClass;
use rehearse::engine::RequestKind;
use rehearse::replay::traffic::{TrafficError, TrafficLine, parse_traffic};
use serde_json::Value;

use super::common::{apply, assert_inside, config, edits, fixture, noise};

const FIXTURES: &[&str] = &[
    "budget-idempotency",
    "llm-mixed",
    "smoke",
    "timeout-storm",
    "tools-steady",
    "ws-sessions",
];

/// Parses `text`; an error must name a line of it (and a column inside that line).
fn parse_located(text: &str) -> Option<Vec<TrafficLine>> {
    match parse_traffic(text, "t.jsonl") {
        Ok(lines) => Some(lines),
        Err(e @ TrafficError::Io { .. }) => panic!("I/O error from text: {e}"),
        Err(TrafficError::Json { line, column, .. }) => {
            assert_inside(text, line, column, "traffic JSON error");
            None
        }
        Err(TrafficError::Field { line, .. }) => {
            assert_inside(text, line, 1, "traffic field error");
            None
        }
    }
}

/// Any JSON value (the tool `body`), numbers of every kind included.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN/Inf", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn non_empty() -> impl Strategy<Value = String> {
    any::<String>().prop_filter("required strings are non-empty", |s| !s.is_empty())
}

fn kind() -> impl Strategy<Value = RequestKind> {
    prop_oneof![
        (non_empty(), any::<bool>(), 1u32..).prop_map(|(model, stream, max_tokens)| {
            RequestKind::Llm {
                model,
                stream,
                max_tokens: Some(max_tokens),
                messages: None,
            }
        }),
        (
            non_empty(),
            prop_oneof![Just(serde_json::json!({})), json_value()],
            any::<bool>(),
            proptest::option::of(any::<String>()),
        )
            .prop_map(
                |(name, body, idempotent, idempotency_key)| RequestKind::Tool {
                    name,
                    body,
                    idempotent,
                    idempotency_key,
                }
            ),
        (non_empty(), 1u32..).prop_map(|(channel, messages)| RequestKind::Ws { channel, messages }),
    ]
}

fn class() -> impl Strategy<Value = Option<OpClass>> {
    proptest::option::of(prop_oneof![
        Just(OpClass::ToolCall),
        Just(OpClass::LlmInference),
        Just(OpClass::Session),
    ])
}

/// A valid traffic line.
pub fn line() -> impl Strategy<Value = TrafficLine> {
    (
        any::<u64>(),
        kind(),
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<String>()),
        class(),
    )
        .prop_map(
            |(at_ms, kind, tenant, budget_tokens, session, class)| TrafficLine {
                at_ms,
                kind,
                tenant,
                budget_tokens,
                session,
                class,
            },
        )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn noise_never_panics_and_errors_are_located(text in noise()) {
        parse_located(&text);
    }

    #[test]
    fn mutated_fixtures_fail_located(
        which in prop::sample::select(FIXTURES),
        edits in edits(),
    ) {
        // The first 40 lines: enough structure, and the whole case stays fast.
        let text: String = fixture(&format!("fixtures/traffic/{which}.jsonl"))
            .split_inclusive('\n')
            .take(40)
            .collect();
        parse_located(&apply(&text, &edits));
    }

    #[test]
    fn written_lines_parse_back_identical(mut lines in prop::collection::vec(line(), 1..8)) {
        lines.sort_by_key(|l| l.at_ms);
        let text: String = lines.iter().map(|l| l.to_json() + "\n").collect();
        let back = parse_traffic(&text, "written.jsonl")
            .unwrap_or_else(|e| panic!("{e}\n--- written ---\n{text}"));
        prop_assert_eq!(back, lines);
    }
}
