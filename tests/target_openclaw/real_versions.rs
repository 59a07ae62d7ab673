//! Two real OpenClaw releases side by side (`openclaw-versions-503-key-a`: 2026.9.2 and the
//! pinned 2026.9.6, one gateway at a time), each found where `scripts/install-openclaw.sh
//! VERSION` puts it (or `$REHEARSE_OPENCLAW_<VERSION>`): the run passes its version-scoped
//! expectations, each arm reports the version its gateway says it is, and the behaviour-diff
//! table shows what changed — attempts on key-A, the first rotation's time, the cooldown written,
//! the decisions' reasons. A missing install fails saying which command installs it.

use serde_json::Value;

use super::scenarios::{fixture, report_json, run_overlapping, show};

#[test]
fn two_real_releases_side_by_side_differ_where_the_fixture_says() {
    let reports = tempfile::tempdir().unwrap();
    // Under the suite's permits, like every real gateway run (its two gateways run in turn).
    let (_, out) = run_overlapping(vec![(
        "versions".to_string(),
        fixture("openclaw-versions-503-key-a"),
        reports.path().to_path_buf(),
        Vec::new(),
    )])
    .remove(0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("is not installed"),
        "install both releases first: scripts/install-openclaw.sh 2026.9.2 && \
         scripts/install-openclaw.sh\n{err}"
    );
    let r = report_json(&out);
    let v = &r["versions"];
    eprintln!(
        "{}",
        serde_json::to_string_pretty(&v["diff"]).unwrap_or_default()
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(r["verdict"], "pass");
    for (i, version) in ["2026.9.2", "2026.9.6"].iter().enumerate() {
        assert_eq!(v["arms"][i]["version"], *version);
        assert_eq!(v["arms"][i]["reported"], *version, "{}", v["arms"][i]);
        assert_eq!(v["arms"][i]["target"]["version"], *version);
    }
    let row = |figure: &str, of: &str| -> Value {
        v["diff"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["figure"] == figure && d["of"] == of)
            .cloned()
            .unwrap_or_else(|| panic!("no `{figure}` `{of}` row: {}", v["diff"]))
    };
    // What changed between the releases, as the fixture's scoped expectations also judge.
    let a = row("attempts", "mockai:a");
    assert_eq!(a["changed"], true, "{a}");
    assert!(
        a["values"][0].as_f64().unwrap() < a["values"][1].as_f64().unwrap(),
        "{a}"
    );
    let cooled = row("cooldown written", "mockai:a");
    assert_eq!(cooled["shown"][1], "none", "{cooled}");
    assert!(
        cooled["shown"][0].as_str().unwrap().contains("timeout"),
        "{cooled}"
    );
    assert_eq!(row("decisions", "same_model_retry")["changed"], true);
    // And what did not: key-B answered the one turn in both.
    assert_eq!(
        row("turns", "answered")["values"],
        serde_json::json!([1.0, 1.0])
    );
    assert_eq!(row("turns", "answered")["changed"], false);
}
