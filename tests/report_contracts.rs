//! Report contracts for machines: `rehearse report DIR` exits with the report's verdict,
//! report.junit.xml read by an independent JUnit reader (Python's `xml.etree`), and report.json
//! checked against the committed JSON Schema (`docs/report.schema.json`).

use rehearse::report::model::Verdict;
use rehearse::report::write_all;

use crate::report::sample_report;
use crate::support::rehearse;

#[test]
fn report_command_exits_with_the_reports_verdict() {
    for (verdict, reason, code) in [
        (Verdict::Pass, None, 0),
        (Verdict::Fail, None, 1),
        (Verdict::Incomplete, Some("stopped by SIGTERM"), 3),
        (Verdict::Error, Some("upstream crashed"), 3),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut r = sample_report();
        r.verdict = verdict;
        r.reason = reason.map(String::from);
        write_all(dir.path(), &r).unwrap();
        let out = rehearse(&["report", dir.path().to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{verdict:?}\n{stdout}\n{stderr}"
        );
        assert!(
            stdout.contains(&format!("crm-search-503-storm: {}", verdict.as_str())),
            "{stdout}"
        );
        assert!(stdout.lines().last().unwrap().starts_with("report: "));
        if verdict == Verdict::Error {
            assert!(stderr.contains("upstream crashed"), "{stderr}");
        }
    }
}
