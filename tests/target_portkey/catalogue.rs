//! A catalogue case (issue 39, point 3) through `--target fixtures/targets/portkey.toml` against
//! the real pinned Portkey, with no Portkey config of the user's. What Portkey 1.15.2 does with
//! the catalogue (every case's traffic is streamed): each streamed turn reaches the upstream,
//! which serves it, and Portkey then answers the client HTTP 500 — its console says
//! `tryTargetsRecursively error: immutable … TypeError: immutable` at `updateHeaders` (it
//! appends its `x-portkey-*` headers to a response whose headers are immutable). So no
//! warm-up turn is answered and the run is a harness failure (exit 3) that says why, never a
//! verdict on turns the gateway never answered; nothing of it left running, no key in clear.
//! This test pins that finding: when Portkey answers streamed turns, it fails, and the
//! catalogue's cases are then judged against it.

#[allow(dead_code, reason = "each binary uses part of the shared helper")]
#[path = "../support/catalogue_target.rs"]
mod catalogue_target;
use catalogue_target::{CaseRun, show};

#[test]
fn catalogue_429_retry_after_portkey_answers_every_streamed_turn_500() {
    let install = super::install();
    let tmp = tempfile::tempdir().unwrap();
    let entry = install.entry.display().to_string();
    let case = "429-retry-after";
    let run = CaseRun::run(
        tmp.path(),
        case,
        "portkey",
        &[("REHEARSE_PORTKEY", entry.as_str())],
    );
    let r = &run.report;
    let ctx = show(&run.out);
    assert_eq!(run.out.status.code(), Some(3), "{ctx}");
    assert_eq!(r["verdict"], "error", "{ctx}");
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("never reached its steady state") && reason.contains("http_500"),
        "{reason}"
    );
    assert_eq!(r["target"]["kind"], "portkey");
    let file = r["target_file"]["path"].as_str().unwrap_or_default();
    assert!(file.ends_with("fixtures/targets/portkey.toml"), "{file}");
    // The turns reached the upstream (warm-up requests, served whole): the 500s are Portkey's.
    let record = std::fs::read_to_string(run.dir.join("upstream.jsonl")).unwrap();
    let served: Vec<serde_json::Value> = record
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!served.is_empty(), "{ctx}");
    assert!(
        served
            .iter()
            .all(|q| q["warmup"] == true && q["fault"].is_null()),
        "{record}"
    );
    let log = std::fs::read_to_string(run.dir.join("portkey.log")).unwrap();
    assert!(log.contains("TypeError: immutable"), "{log}");
    run.no_key_in_clear(case);
    assert!(
        super::none_left_under(tmp.path()).is_empty(),
        "a Portkey process was left running"
    );
}
