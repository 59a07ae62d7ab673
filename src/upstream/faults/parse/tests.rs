//! Tests of the fault-file parser: every kind, errors naming origin:line:col and the key.
use super::*;
use crate::upstream::faults::{RetryAfterFormat, StatusFault};

#[test]
fn toml_file_round_trips_every_kind() {
    let text = r#"
[[fault]]
route = "tool:crm_search"
kind = "status"
status = 503
from = "20s"
until = "60s"
[[fault]]
route = "llm"
profile = "openai-codex:default"
kind = "rate_limit"
retry_after = "120s"
retry_after_format = "http-date"
[[fault]]
route = "*"
kind = "latency"
delay = "250ms"
jitter = "50ms"
probability = 0.5
first = 3
[[fault]]
route = "llm"
kind = "stall"
[[fault]]
route = "llm"
kind = "reset"
[[fault]]
route = "llm"
kind = "reset_mid_stream"
after_fraction = 0.4
[[fault]]
route = "llm"
kind = "stall_stream"
after_fraction = 0.5
[[fault]]
route = "llm"
kind = "slow_stream"
token_interval = "200ms"
[[fault]]
route = "ws"
kind = "ws_ping_timeout"
[[fault]]
route = "ws"
kind = "ws_close"
code = 1011
"#;
    let specs = parse_fault_file(text, "f.toml").unwrap();
    assert_eq!(specs.len(), 10);
    assert_eq!(
        specs[0].kind,
        FaultKind::Status(StatusFault::code(503))
    );
    assert_eq!(specs[0].from, Some(Duration::from_secs(20)));
    match &specs[1].kind {
        FaultKind::RateLimit(r) => {
            assert_eq!(r.retry_after_format, RetryAfterFormat::HttpDate)
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(specs[2].probability, 0.5);
    assert_eq!(specs[2].first, Some(3));
    // JSON round trip through the serialized form (what GET /_rehearse/faults returns)
    let json = serde_json::to_string(&specs).unwrap();
    assert!(json.contains("\"kind\":\"ws_close\""), "{json}");
    assert!(json.contains("\"from\":\"20s\""), "{json}");
    assert_eq!(parse_fault_file(&json, "api").unwrap(), specs);
}

fn err(text: &str) -> FaultFileError {
    parse_fault_file(text, "bad.toml").unwrap_err()
}

#[test]
fn unknown_key_names_file_line_and_col() {
    let e = err("[[fault]]\nroute = \"llm\"\nkind = \"status\"\nstatus = 503\nstatsu = 1\n");
    assert_eq!(e.origin, "bad.toml");
    assert!(e.line.is_some() && e.col.is_some(), "{e}");
    assert!(e.message.contains("statsu"), "{e}");
    assert!(e.to_string().starts_with("bad.toml:"), "{e}");
}

#[test]
fn bad_values_are_named() {
    for (text, needle) in [
        (
            "[[fault]]\nroute='llm'\nkind='status'\nstatus=99\n",
            "status",
        ),
        ("[[fault]]\nroute='llm'\nkind='nope'\n", "nope"),
        ("[[fault]]\nroute='llm'\n", "kind"),
        ("[[fault]]\nkind='reset'\n", "route"),
        ("[[fault]]\nroute='tool:'\nkind='reset'\n", "route"),
        (
            "[[fault]]\nroute='llm'\nkind='reset'\nprobability=1.5\n",
            "probability",
        ),
        (
            "[[fault]]\nroute='llm'\nkind='reset'\nfrom='10s'\nuntil='5s'\n",
            "until",
        ),
        ("[[fault]]\nroute='llm'\nkind='reset'\nfrom='ten'\n", "ten"),
        (
            "[[fault]]\nroute='llm'\nkind='reset_mid_stream'\nafter_fraction=2.0\n",
            "after_fraction",
        ),
        (
            "[[fault]]\nroute='llm'\nkind='ws_close'\ncode=1000\n",
            "route",
        ),
        (
            "[[fault]]\nroute='ws'\nkind='ws_close'\ncode=1005\n",
            "code",
        ),
        ("[[fault]]\nroute='llm'\nkind='reset'\nbody='x'\n", "body"),
        ("[[faults]]\nroute='llm'\n", "faults"),
        ("[[fault]\n", ""),
    ] {
        let e = err(text);
        assert!(e.line.is_some(), "no line for {text:?}: {e}");
        assert!(e.message.contains(needle), "{text:?}: {e}");
    }
}

#[test]
fn error_points_at_the_offending_table() {
    let e = err(
        "[[fault]]\nroute='llm'\nkind='reset'\n\n[[fault]]\nroute='llm'\nkind='status'\nstatus=700\n",
    );
    assert_eq!((e.line, e.col), (Some(8), Some(1)), "{e}");
    let e = err("[[fault]]\nroute='llm'\nkind='status'\n  statsu = 1\nstatus=500\n");
    assert_eq!((e.line, e.col), (Some(4), Some(3)), "{e}");
}

#[test]
fn json_errors_name_line_col_and_field() {
    let e = parse_fault_file("[{\"route\":\"llm\",\"kind\":\"status\"}]", "api").unwrap_err();
    assert!(e.message.contains("status"), "{e}");
    let e = parse_fault_file("[{\"route\":\"llm\",\n \"kind\":}]", "api").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    let e = parse_fault_file(
        "{\"fault\":[{\"route\":\"ws\",\"kind\":\"ws_close\",\"code\":4000,\"x\":1}]}",
        "api",
    )
    .unwrap_err();
    assert!(e.message.contains("`x`"), "{e}");
}

#[test]
fn empty_file_is_no_faults() {
    assert!(parse_fault_file("", "e.toml").unwrap().is_empty());
    assert!(parse_fault_file("[]", "e.json").unwrap().is_empty());
}

#[test]
fn line_col_counts_from_one() {
    assert_eq!(line_col("ab\ncd", 0), (1, 1));
    assert_eq!(line_col("ab\ncd", 4), (2, 2));
}

/// Found by `tests/props/main.rs`: a fault duration long enough to overflow the upstream's clock
/// arithmetic (or an HTTP date past 9999) was accepted; now every duration key is capped at a year.
#[test]
fn durations_longer_than_a_year_are_refused_naming_the_key() {
    for (attr, key) in [
        (
            "kind = \"rate_limit\"\nretry_after = \"10000years\"",
            "retry_after",
        ),
        ("kind = \"latency\"\ndelay = \"366days\"", "delay"),
        (
            "kind = \"latency\"\ndelay = \"1s\"\njitter = \"400days\"",
            "jitter",
        ),
        (
            "kind = \"slow_stream\"\ntoken_interval = \"2years\"",
            "token_interval",
        ),
        ("kind = \"stall\"\nuntil = \"500000years\"", "until"),
    ] {
        let text = format!("[[fault]]\nroute = \"llm\"\n{attr}\n");
        let err = parse_fault_file(&text, "f.toml").unwrap_err();
        assert!(
            err.message
                .contains(&format!("`{key}` must be at most 365days")),
            "{key}: {err}"
        );
        let key_line = text.lines().position(|l| l.starts_with(key)).unwrap() + 1;
        assert_eq!(
            err.line,
            Some(key_line),
            "the error points at the key: {err}"
        );
    }
    let ok = "[[fault]]\nroute = \"llm\"\nkind = \"rate_limit\"\nretry_after = \"365days\"\n";
    assert!(parse_fault_file(ok, "f.toml").is_ok());
}
