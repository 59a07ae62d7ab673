//! The one judge end to end: a run whose upstream recorder reaches its cap says so in the
//! report, leaves the expectations judged at the upstream past the cut `not_reached` (never
//! pass), and ends `incomplete` (exit 3) with the reason on its first lines.

use rehearse::rehearsal::arm::RunFiles;
use rehearse::report::model::{ExpectStatus, Verdict};
use rehearse::util::shutdown::Shutdown;
use rehearse::verdict::ExpectKind;

use crate::support::run::mutated_copy;

#[test]
fn a_run_past_the_upstream_cap_says_so_and_ends_incomplete_never_pass() {
    let tmp = tempfile::tempdir().unwrap();
    // Smoke's model calls come every second: at least 20 over the run holds on the whole
    // record (the same expectation passes uncapped in the ground-truth test of the embedded
    // engine), but not on its first 10 requests.
    let path = mutated_copy("smoke", tmp.path(), "cap", |s| {
        format!("{s}\n[[expect.attempts]]\nmodel = \"openai-codex/gpt-5.2\"\nat_least = 20\n")
    });
    let args = rehearse::cli::RunArgs {
        scenarios: vec![path.display().to_string()],
        speed: Some(crate::support::speed(4.0)),
        ..Default::default()
    };
    let mut plan = rehearse::rehearsal::plan::build(&args).unwrap();
    let mut sp = plan.scenarios.remove(0);
    sp.record_cap = 10;
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    let files = RunFiles::open(&dir).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = rt.block_on(
        rehearse::rehearsal::sut::SystemUnderTest::Embedded.rehearse(
            &sp,
            &dir,
            &files,
            &Shutdown::new(),
            true,
        ),
    );
    rt.shutdown_timeout(std::time::Duration::from_millis(500));

    assert_eq!(report.verdict, Verdict::Incomplete, "{:?}", report.reason);
    assert!(report.stopped.is_none(), "the run finished");
    let reason = report.reason.clone().unwrap_or_default();
    assert!(reason.contains("could not be judged"), "{reason}");
    assert!(reason.contains("(its cap)"), "{reason}");
    assert!(!report.policies.is_empty());
    for p in &report.policies {
        let cap = p
            .upstream_cap
            .unwrap_or_else(|| panic!("[{}] no upstream_cap", p.policy));
        assert_eq!(cap.kept, 10, "[{}] {cap:?}", p.policy);
        assert!(cap.dropped > 0, "[{}] {cap:?}", p.policy);
        let row = p
            .expectations
            .iter()
            .find(|e| e.kind == ExpectKind::Attempts)
            .unwrap_or_else(|| panic!("[{}] no attempts row", p.policy));
        assert_eq!(row.status, ExpectStatus::NotReached, "{}", row.detail);
        assert!(!row.ok);
        assert!(
            !p.expectations
                .iter()
                .any(|e| e.status == ExpectStatus::Fail),
            "[{}] only the capped row is unsettled",
            p.policy
        );
    }
    assert!(matches!(
        report.verdict.into_result(report.reason.as_deref()),
        Ok(rehearse::exit::Status::Incomplete)
    ));
    // The report says so on its first lines.
    rehearse::report::write_all(&dir, &report).unwrap();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let head: String = md.lines().take(12).collect::<Vec<_>>().join("\n");
    assert!(head.contains("INCOMPLETE"), "{head}");
    assert!(head.contains("**Upstream record cut:**"), "{head}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["policies"][0]["upstream_cap"]["kept"], 10, "{json:#}");
}

/// A fault that never applied tested nothing. Smoke plus a fault scoped to a
/// token no request carries: a failed `fault_applied` row naming it, so the verdict is fail
/// (exit 1) whatever the other rows did; the same fault with `optional = true` has no row.
#[test]
fn a_fault_that_never_applied_is_a_failed_row_unless_optional() {
    use crate::support::run::{report_json, run_scenario};
    let tmp = tempfile::tempdir().unwrap();
    let ghost =
        "[[fault]]\nroute = \"llm\"\nprofile = \"nobody:ghost\"\nkind = \"status\"\nstatus = 500\n";
    let path = mutated_copy("smoke", tmp.path(), "ghost", |s| format!("{s}\n{ghost}"));
    let out = run_scenario(&path, "8", &tmp.path().join("r1"));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        crate::support::run::show(&out)
    );
    let r = report_json(&out);
    let rows: Vec<&serde_json::Value> = r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "fault_applied")
        .collect();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["status"], "fail");
    assert_eq!(rows[0]["dep"], "fault[1] status");
    let detail = rows[0]["detail"].as_str().unwrap();
    assert!(detail.contains("never applied in any run"), "{detail}");
    assert!(
        !detail.contains("nobody:ghost"),
        "a token is never written: {detail}"
    );
    // The smoke fixture's own fault applied: no row for it.
    let optional = mutated_copy("smoke", tmp.path(), "optional", |s| {
        format!("{s}\n{ghost}optional = true\n")
    });
    let out = run_scenario(&optional, "8", &tmp.path().join("r2"));
    let r = report_json(&out);
    let n = r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "fault_applied")
        .count();
    assert_eq!(n, 0, "an optional fault may never apply");
}
