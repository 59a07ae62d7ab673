use super::*;

const GOOD: &str = r#"{"at_ms":0,"kind":"llm","model":"openai-codex/gpt-5.2","stream":true,"max_tokens":64,"tenant":"team-a"}
{"at_ms":100,"kind":"tool","tool":"crm_search","body":{"q":"acme"},"idempotent":true}

{"at_ms":230,"kind":"tool","tool":"ticket_create","body":{},"idempotent":false,"idempotency_key":"k-17"}
{"at_ms":250,"kind":"ws","channel":"realtime","messages":5,"session":"s1","budget_tokens":900,"class":"session"}
"#;

fn err_of(text: &str) -> TrafficError {
    parse_traffic(text, "t.jsonl").expect_err("should be rejected")
}

#[test]
fn design_example_parses() {
    let lines = parse_traffic(GOOD, "t.jsonl").unwrap();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0].kind,
        RequestKind::Llm {
            model: "openai-codex/gpt-5.2".into(),
            stream: true,
            max_tokens: Some(64),
            messages: None,
        }
    );
    assert_eq!(lines[0].tenant.as_deref(), Some("team-a"));
    assert_eq!(
        lines[2].kind,
        RequestKind::Tool {
            name: "ticket_create".into(),
            body: serde_json::json!({}),
            idempotent: false,
            idempotency_key: Some("k-17".into())
        }
    );
    assert_eq!(lines[3].class, Some(OpClass::Session));
    assert_eq!(lines[3].budget_tokens, Some(900));
    assert_eq!(lines[3].session.as_deref(), Some("s1"));
}

#[test]
fn to_json_round_trips() {
    let lines = parse_traffic(GOOD, "t.jsonl").unwrap();
    let text: String = lines.iter().map(|l| l.to_json() + "\n").collect();
    assert!(text.starts_with(r#"{"at_ms":0,"kind":"llm","model":"#));
    assert_eq!(parse_traffic(&text, "again").unwrap(), lines);
}

#[test]
fn bad_json_names_line_and_column() {
    let e = err_of("{\"at_ms\":0,\"kind\":\"ws\",\"channel\":\"c\",\"messages\":1}\n{\"at_ms\":1,");
    let msg = e.to_string();
    assert_eq!(e.line(), Some(2));
    assert!(msg.starts_with("t.jsonl:2:"), "{msg}");
    assert!(msg.contains("invalid JSON"), "{msg}");
}

#[test]
fn unsorted_names_the_line_and_at_ms() {
    let e = err_of(
        "{\"at_ms\":5,\"kind\":\"ws\",\"channel\":\"c\",\"messages\":1}\n\
         {\"at_ms\":5,\"kind\":\"ws\",\"channel\":\"c\",\"messages\":1}\n\
         {\"at_ms\":4,\"kind\":\"ws\",\"channel\":\"c\",\"messages\":1}\n",
    );
    let msg = e.to_string();
    assert!(msg.starts_with("t.jsonl:3: field `at_ms`"), "{msg}");
    assert!(msg.contains("sorted"), "{msg}");
}

#[test]
fn unknown_kind_is_rejected() {
    let msg = err_of(r#"{"at_ms":0,"kind":"grpc"}"#).to_string();
    assert!(msg.starts_with("t.jsonl:1: field `kind`"), "{msg}");
    assert!(msg.contains("grpc"), "{msg}");
}

#[test]
fn missing_fields_are_named() {
    for (text, field) in [
        (r#"{"kind":"ws","channel":"c","messages":1}"#, "at_ms"),
        (r#"{"at_ms":0,"channel":"c","messages":1}"#, "kind"),
        (r#"{"at_ms":0,"kind":"llm","max_tokens":5}"#, "model"),
        (r#"{"at_ms":0,"kind":"llm","model":"a/b"}"#, "max_tokens"),
        (
            r#"{"at_ms":0,"kind":"tool","tool":"x","body":{}}"#,
            "idempotent",
        ),
        (r#"{"at_ms":0,"kind":"tool","idempotent":true}"#, "tool"),
        (r#"{"at_ms":0,"kind":"ws","messages":1}"#, "channel"),
        (r#"{"at_ms":0,"kind":"ws","channel":"c"}"#, "messages"),
    ] {
        let msg = err_of(text).to_string();
        assert!(
            msg.starts_with(&format!("t.jsonl:1: field `{field}`")),
            "{text} → {msg}"
        );
        assert!(msg.contains("missing"), "{msg}");
    }
}

#[test]
fn unknown_and_foreign_keys_are_rejected() {
    let msg =
        err_of(r#"{"at_ms":0,"kind":"tool","tool":"x","idempotent":false,"idempotency-key":"k"}"#)
            .to_string();
    assert!(
        msg.starts_with("t.jsonl:1: field `idempotency-key`: unknown field"),
        "{msg}"
    );
    let msg =
        err_of(r#"{"at_ms":0,"kind":"ws","channel":"c","messages":1,"model":"m"}"#).to_string();
    assert!(
        msg.contains("field `model`: not a field of kind `ws`"),
        "{msg}"
    );
}

#[test]
fn bad_values_are_named() {
    for (text, field) in [
        (
            r#"{"at_ms":-1,"kind":"ws","channel":"c","messages":1}"#,
            "at_ms",
        ),
        (
            r#"{"at_ms":"0","kind":"ws","channel":"c","messages":1}"#,
            "at_ms",
        ),
        (
            r#"{"at_ms":0,"kind":"ws","channel":"c","messages":0}"#,
            "messages",
        ),
        (
            r#"{"at_ms":0,"kind":"ws","channel":"","messages":1}"#,
            "channel",
        ),
        (
            r#"{"at_ms":0,"kind":"llm","model":"m","max_tokens":1,"stream":"yes"}"#,
            "stream",
        ),
        (
            r#"{"at_ms":0,"kind":"ws","channel":"c","messages":1,"class":"batch"}"#,
            "class",
        ),
        (
            r#"{"at_ms":0,"kind":"ws","channel":"c","messages":1,"tenant":3}"#,
            "tenant",
        ),
        (r#"[1,2]"#, "<line>"),
    ] {
        let msg = err_of(text).to_string();
        assert!(
            msg.starts_with(&format!("t.jsonl:1: field `{field}`")),
            "{text} → {msg}"
        );
    }
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let e = load_traffic(Path::new("/nonexistent/x.jsonl")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/x.jsonl: cannot read")
    );
    assert_eq!(e.line(), None);
}

/// Found by `tests/props/main.rs` (traffic round trip): without serde_json's `float_roundtrip`,
/// `6.690651195367989e-115` in a tool body came back one ULP off after write → parse.
#[test]
fn tool_body_floats_round_trip_bit_for_bit() {
    for x in [
        6.690651195367989e-115_f64,
        0.1,
        1e308,
        5e-324,
        -2.2250738585072014e-308,
    ] {
        let line = TrafficLine {
            at_ms: 0,
            kind: RequestKind::Tool {
                name: "t".into(),
                body: serde_json::json!({ "x": x }),
                idempotent: true,
                idempotency_key: None,
            },
            tenant: None,
            budget_tokens: None,
            session: None,
            class: None,
        };
        let back = parse_line(&line.to_json(), "t.jsonl", 1).unwrap();
        assert_eq!(back, line, "{x:e}");
    }
}

/// Found by `tests/props/main.rs` (errors located inside the input): serde_json's byte column put a
/// JSON error on a line of non-ASCII text past the line's end.
#[test]
fn json_error_column_counts_characters() {
    let e = err_of("\"ñ?𞗿Á\" x\n");
    match &e {
        TrafficError::Json { line, column, .. } => assert_eq!((*line, *column), (1, 8)),
        other => panic!("{other}"),
    }
    let msg = e.to_string();
    assert!(msg.starts_with("t.jsonl:1:8: invalid JSON: "), "{msg}");
    assert!(!msg.contains("at line"), "the position is said once: {msg}");
}

#[test]
fn an_llm_line_may_carry_its_conversation_and_bad_messages_name_the_field() {
    let text = r#"{"at_ms":0,"kind":"llm","model":"m/x","max_tokens":4,"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"Sure,"}]}"#;
    let lines = parse_traffic(text, "t.jsonl").unwrap();
    let RequestKind::Llm { messages: Some(m), .. } = &lines[0].kind else {
        panic!("{:?}", lines[0].kind)
    };
    let roles: Vec<&str> = m.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
    assert_eq!(m[2].content, "Sure,");
    // It writes back as it was read.
    let again = parse_traffic(&lines[0].to_json(), "t.jsonl").unwrap();
    assert_eq!(again, lines);
    let line = |messages: &str| {
        format!(r#"{{"at_ms":0,"kind":"llm","model":"m/x","max_tokens":4,"messages":{messages}}}"#)
    };
    for (messages, want) in [
        ("[]", "non-empty array"),
        ("3", "non-empty array"),
        (r#"[{"role":"user"}]"#, "[0]: expected"),
        (r#"[{"role":"user","content":"a","name":"x"}]"#, "[0]: expected"),
        (r#"[{"role":"user","content":"a"},{"role":"robot","content":"b"}]"#, "[1]: unknown role \"robot\""),
        (r#"[{"role":"assistant","content":"b"}]"#, "no user message"),
    ] {
        let e = err_of(&line(messages));
        let t = e.to_string();
        assert!(t.starts_with("t.jsonl:1: field `messages`: "), "{messages}: {t}");
        assert!(t.contains(want), "{messages}: {t}");
    }
    // A ws line's `messages` is still its count.
    let ws = parse_traffic(r#"{"at_ms":0,"kind":"ws","channel":"c","messages":2}"#, "t").unwrap();
    assert!(matches!(ws[0].kind, RequestKind::Ws { messages: 2, .. }));
}
