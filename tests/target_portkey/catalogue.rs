//! Catalogue cases (issue 39, point 3) through `--target fixtures/targets/portkey.toml` against
//! the real pinned Portkey (with what its own lock file pins of its HTTP stack:
//! `scripts/pins.env`), with no Portkey config of the user's: each run judged, every passed row
//! with its witness, the HTTP server it ran on in the report, no key in clear, nothing left
//! running — and what Portkey 1.15.2 does with the shipped target (`retries = 1`), read from the
//! upstream's record and the turns as its client saw them:
//!
//! - `429-retry-after`: it retries key-A about a second after the 429 that said
//!   `Retry-After: 10` (`x-portkey-retry-attempt-count: 1`) and every later turn goes to key-A
//!   again: the cooldown row fails, every turn is answered.
//! - `stream-cut-40-of-60`: the stream reset after 40 of 60 chunks is neither retried nor sent to
//!   the fallback; Portkey ends its 200 stream to the client after the 40 tokens, with no
//!   `finish_reason` and no `[DONE]` (`unfinished`): the answered rows fail, and a client that
//!   does not check for the end takes 40 tokens as the answer.

#[allow(dead_code, reason = "each binary uses part of the shared helper")]
#[path = "../support/catalogue_target.rs"]
mod catalogue_target;
use catalogue_target::{CaseRun, show};
use serde_json::Value;

/// `case` against Portkey: judged; its failed rows (kind, expected) and the turns as the client
/// saw them.
fn judged(case: &str) -> (Vec<(String, String)>, Vec<Value>) {
    let install = super::install();
    let tmp = tempfile::tempdir().unwrap();
    let entry = install.entry.display().to_string();
    let run = CaseRun::run(
        tmp.path(),
        case,
        "portkey",
        &[("REHEARSE_PORTKEY", entry.as_str())],
    );
    let verdict = run.judged(case, "portkey");
    let ctx = show(&run.out);
    let r = &run.report;
    let file = r["target_file"]["path"].as_str().unwrap_or_default();
    assert!(file.ends_with("fixtures/targets/portkey.toml"), "{file}");
    let rows = run.failed_rows();
    assert_eq!(verdict == "fail", !rows.is_empty(), "{case}: {rows:?}");
    // The report names the HTTP server Portkey ran on (the pinned one).
    let md = std::fs::read_to_string(run.dir.join("report.md")).unwrap();
    assert!(
        md.contains("its HTTP server: @hono/node-server 1.13.5"),
        "{case}: {md}"
    );
    let log = std::fs::read_to_string(run.dir.join("portkey.log")).unwrap();
    assert!(!log.contains("TypeError: immutable"), "{log}");
    run.no_key_in_clear(case);
    assert!(
        super::none_left_under(tmp.path()).is_empty(),
        "{case}: a Portkey process was left running: {ctx}"
    );
    let turns = run.turns();
    assert_eq!(turns.len(), 12, "{case}: {ctx}");
    (rows, turns)
}

fn outcomes(turns: &[Value]) -> Vec<&str> {
    turns
        .iter()
        .map(|t| t["outcome"].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn catalogue_429_retry_after_portkey_goes_back_to_the_throttled_key_and_answers_every_turn() {
    let (rows, turns) = judged("429-retry-after");
    assert_eq!(
        rows,
        [(
            "cooldown".to_string(),
            "cooldowns >= 1, each until its Retry-After".to_string()
        )]
    );
    let o = outcomes(&turns);
    assert!(o.iter().all(|o| *o == "answered"), "{o:?}");
    // One turn was retried (the 429'd one), by Portkey's own count.
    let retried: Vec<&Value> = turns
        .iter()
        .filter(|t| t["said"]["retries"].as_u64().unwrap_or(0) > 0)
        .collect();
    assert_eq!(retried.len(), 1, "{turns:?}");
}

#[test]
fn catalogue_stream_cut_portkey_ends_the_clients_stream_unfinished() {
    let (rows, turns) = judged("stream-cut-40-of-60");
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
    let o = outcomes(&turns);
    assert_eq!(o.iter().filter(|o| **o == "unfinished").count(), 1, "{o:?}");
    assert_eq!(o.iter().filter(|o| **o == "answered").count(), 11, "{o:?}");
}
