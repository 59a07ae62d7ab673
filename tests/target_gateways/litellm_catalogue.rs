//! Catalogue cases (issue 39, point 3) through `--target fixtures/targets/litellm.toml` against
//! the real pinned LiteLLM, with no LiteLLM config of the user's: each run judged, every passed
//! row with its witness, no key in clear in anything kept (the profile tokens, the per-arm
//! master key) — and what LiteLLM 1.108.7 does with the shipped router (`retries = 1`,
//! `allowed_fails = 1`, `cooldown = "5s"`), read from the upstream's record:
//!
//! - `429-retry-after`: it retries key-A 25 ms after the 429 that said `Retry-After: 10`, and
//!   every later turn goes to key-A again: the cooldown row fails, the turns are answered.
//! - `stream-cut-40-of-60`: the stream reset after 40 of 60 chunks is not retried and not sent to
//!   the fallback; LiteLLM ends the client's 200 stream with an error event
//!   (`APIConnectionError`) — an honest error, not a truncated success: the answered-turns rows
//!   (at the upstream and as the client saw it) fail, the truncated row holds.

use super::support::{litellm, one_at_a_time};

#[allow(dead_code, reason = "each binary uses part of the shared helper")]
#[path = "../support/catalogue_target.rs"]
mod catalogue_target;
use catalogue_target::CaseRun;

/// `case` against LiteLLM: judged; the kinds of its failed rows.
fn failed_rows(case: &str) -> Vec<(String, String)> {
    failed_rows_and_turns(case).0
}

/// `case` against LiteLLM: judged; the kinds of its failed rows and the turns as the client saw
/// them (the report's `target.turns`).
fn failed_rows_and_turns(case: &str) -> (Vec<(String, String)>, Vec<serde_json::Value>) {
    let _one = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let exe = litellm();
    let run = CaseRun::run(
        tmp.path(),
        case,
        "litellm",
        &[("REHEARSE_LITELLM", exe.as_str())],
    );
    let verdict = run.judged(case, "litellm");
    let rows = run.failed_rows();
    assert_eq!(verdict == "fail", !rows.is_empty(), "{case}: {rows:?}");
    assert!(
        run.report["target"]["files"]
            .as_array()
            .is_some_and(|f| f.iter().any(|x| x == "litellm.log")),
        "{case}: its log is kept: {}",
        run.report["target"]
    );
    let turns = run.turns();
    (rows, turns)
}

#[test]
fn catalogue_429_retry_after_litellm_goes_back_to_the_throttled_key_at_once() {
    let rows = failed_rows("429-retry-after");
    assert_eq!(
        rows,
        [(
            "cooldown".to_string(),
            "cooldowns >= 1, each until its Retry-After".to_string()
        )]
    );
}

#[test]
fn catalogue_stream_cut_litellm_ends_the_clients_stream_with_an_error_event() {
    let (rows, turns) = failed_rows_and_turns("stream-cut-40-of-60");
    assert_eq!(
        rows,
        [
            (
                "per_turn".to_string(),
                "turns >= 12: answered within 5.000s".to_string()
            ),
            ("turn".to_string(), ">= 12".to_string()),
        ]
    );
    let outcomes: Vec<&str> = turns
        .iter()
        .map(|t| t["outcome"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "error_event").count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(
        outcomes.iter().filter(|o| **o == "answered").count(),
        11,
        "{outcomes:?}"
    );
}
