//! The control API over a real socket: `PUT /_rehearse/faults` with arbitrary bytes (noise,
//! non-UTF-8, mutated fault files in TOML and JSON) answers 200 or a 400 naming a line:col inside
//! the body, the upstream keeps serving, and what `GET` lists `PUT` takes back. A bounded number
//! of cases (`CASES`, or `PROPTEST_CASES`): each is a few loopback round trips.

use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::support::upstream::{call, exchange, start};

/// Cases in `cargo test` (each is three or four loopback requests).
const CASES: u32 = 64;

const FAULTS: &str = "[[fault]]\nroute = \"tool:crm_search\"\nkind = \"status\"\nstatus = 503\nfrom = \"20s\"\nuntil = \"60s\"\n[[fault]]\nroute = \"llm\"\nprofile = \"openai-codex:default\"\nkind = \"rate_limit\"\nretry_after = \"120s\"\nretry_after_format = \"http-date\"\n[[fault]]\nroute = \"*\"\nkind = \"latency\"\ndelay = \"250ms\"\njitter = \"50ms\"\nprobability = 0.5\nfirst = 3\n";

fn put_raw(body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "PUT /_rehearse/faults HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// A body: arbitrary bytes, or a fault file (TOML or JSON) with a few bytes changed.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let json = serde_json::to_string(
        &rehearse::upstream::parse_fault_file(FAULTS, "t").expect("fixture faults"),
    )
    .expect("serialises");
    let edits = prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..5);
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..200),
        2 => (prop::bool::ANY, edits).prop_map(move |(as_json, edits)| {
            let mut b = if as_json { json.clone().into_bytes() } else { FAULTS.as_bytes().to_vec() };
            for (i, byte) in edits {
                let at = i.index(b.len());
                b[at] = byte;
            }
            b
        }),
    ]
}

#[test]
fn put_faults_survives_any_body_and_get_round_trips() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let up = rt.block_on(start("", 1));
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&body(), |body| {
        rt.block_on(async {
            let got = exchange(up.addr, &put_raw(&body), Duration::from_secs(10)).await;
            let status = got.status();
            prop_assert!(
                matches!(status, Some(200 | 400)),
                "PUT answered {:?}: {}",
                status,
                got.text()
            );
            if status == Some(400) {
                let v: serde_json::Value = serde_json::from_str(&got.body()).expect("a JSON error");
                let err = &v["error"];
                prop_assert!(err["message"].is_string(), "{}", got.body());
                if let (Some(line), Some(col), Ok(text)) = (
                    err["line"].as_u64(),
                    err["col"].as_u64(),
                    std::str::from_utf8(&body),
                ) {
                    let lines: Vec<&str> = text.split('\n').collect();
                    let line = line as usize;
                    prop_assert!(
                        line >= 1 && line <= lines.len(),
                        "line {} of {:?}",
                        line,
                        text
                    );
                    let chars = lines[line - 1].chars().count() as u64;
                    prop_assert!(
                        col >= 1 && col <= chars + 1,
                        "col {} of {:?}",
                        col,
                        lines[line - 1]
                    );
                }
            } else {
                // What GET lists, PUT takes back unchanged.
                let listed = call(up.addr, "GET", "/_rehearse/faults", &[], "").await;
                prop_assert_eq!(listed.status(), Some(200));
                let again = call(up.addr, "PUT", "/_rehearse/faults", &[], &listed.body()).await;
                prop_assert_eq!(again.status(), Some(200), "{}", again.text());
                let relisted = call(up.addr, "GET", "/_rehearse/faults", &[], "").await;
                prop_assert_eq!(relisted.body(), listed.body());
            }
            // Still serving.
            let stats = call(up.addr, "GET", "/_rehearse/stats", &[], "").await;
            prop_assert_eq!(stats.status(), Some(200));
            Ok(())
        })
    });
    rt.block_on(up.stop());
    if let Err(e) = result {
        panic!("{e}");
    }
}
