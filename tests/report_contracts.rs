//! Report contracts for machines: `rehearse report DIR` exits with the report's verdict,
//! report.junit.xml read by an independent JUnit reader (Python's `xml.etree`), and report.json
//! checked against the committed JSON Schema (`docs/report.schema.json`).
//!
//! Longer than 400 lines on purpose: each contract (exit code, JUnit, schema, Markdown lead) is
//! checked against the same rendered sample report.

use std::path::Path;

use rehearse::report::model::{ExpectStatus, PolicyStatus, Report, Verdict};
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

/// An independent JUnit reader: Python's `xml.etree.ElementTree` checks the attributes the Ant
/// JUnit schema requires and that every count equals the cases below it, then prints what a
/// CI's reader would take from the file.
const JUNIT_READER: &str = r#"
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "testsuites", root.tag
def num(el, k, conv=int):
    assert k in el.attrib, f"{el.tag} {el.attrib.get('name')!r} lacks {k}"
    return conv(el.attrib[k])
out, tot = [], {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for s in root:
    assert s.tag == "testsuite", s.tag
    for k in ["name", "timestamp", "hostname", "id", "package"]:
        assert s.attrib.get(k, "") != "", f"testsuite lacks {k}: {s.attrib}"
    assert num(s, "time", float) >= 0
    cases = s.findall("testcase")
    for c in cases:
        for k in ["name", "classname"]:
            assert c.attrib.get(k, "") != "", f"testcase lacks {k}: {c.attrib}"
        assert num(c, "time", float) >= 0
        outcomes = [x for x in c if x.tag != "system-out"]
        assert len(outcomes) <= 1, f"one outcome per case: {c.attrib}"
        for child in outcomes:
            assert child.tag in ("failure", "error", "skipped"), child.tag
            assert child.attrib.get("message", "") != "", f"{child.tag} lacks message"
    counted = {
        "tests": len(cases),
        "failures": len(s.findall("testcase/failure")),
        "errors": len(s.findall("testcase/error")),
        "skipped": len(s.findall("testcase/skipped")),
    }
    for k, v in counted.items():
        assert num(s, k) == v, f"{s.attrib['name']}: {k}={s.attrib[k]} but {v} cases"
        tot[k] += v
    out.append({
        "name": s.attrib["name"],
        **counted,
        "props": {p.attrib["name"]: p.attrib["value"] for p in s.findall("properties/property")},
        "cases": [{"name": c.attrib["name"],
                   "outcome": next((x.tag for x in c if x.tag != "system-out"), "pass"),
                   "message": next((x.attrib["message"] for x in c if x.tag != "system-out"), None),
                   "out": (c.findtext("system-out") or None)}
                  for c in cases],
    })
for k, v in tot.items():
    assert num(root, k) == v, f"testsuites {k}={root.attrib[k]} but {v}"
print(json.dumps(out))
"#;

/// Reads `dir/report.junit.xml` with [`JUNIT_READER`]; panics with its complaint.
pub fn read_junit(dir: &Path) -> serde_json::Value {
    let file = dir.join("report.junit.xml");
    let out = std::process::Command::new("python3")
        .args(["-c", JUNIT_READER])
        .arg(&file)
        .output()
        .expect(
            "python3 is not installed: `apt-get install -y python3` (.ci/test does it) — this \
             test reads report.junit.xml with Python's xml.etree",
        );
    assert!(
        out.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// report.junit.xml in `dir` says what report.json says: one suite per policy run in order,
/// one case per expectation row, failed rows as failures carrying their mismatch line.
pub fn assert_junit_matches_report(dir: &Path) {
    let report: Report =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let suites = read_junit(dir);
    let suites = suites.as_array().unwrap();
    for (p, s) in report.policies.iter().zip(suites) {
        assert_eq!(s["name"], format!("{}/{}", report.scenario, p.policy));
        assert_eq!(s["tests"], p.expectations.len());
        // What XML 1.0 can hold of each mismatch line (the writer drops other controls).
        let xml_text = |s: &str| -> String {
            s.chars()
                .filter(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r'))
                .collect()
        };
        let failed: Vec<String> = p
            .expectations
            .iter()
            .filter(|e| e.status == ExpectStatus::Fail)
            .map(|e| xml_text(&e.detail))
            .collect();
        let not_reached = p
            .expectations
            .iter()
            // A drift row with no baseline yet is skipped too.
            .filter(|e| {
                matches!(
                    e.status,
                    ExpectStatus::NotReached | ExpectStatus::NoBaseline
                )
            })
            .count();
        if !p.expectations.is_empty() {
            assert_eq!(s["skipped"], not_reached, "{}", s["name"]);
        }
        let failures: Vec<&str> = s["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["outcome"] == "failure")
            .map(|c| c["message"].as_str().unwrap())
            .collect();
        assert_eq!(failures, failed, "{}", s["name"]);
        assert_eq!(s["props"]["verdict"], report.verdict.as_str());
        assert_eq!(s["props"]["status"], p.status.as_str());
    }
}

#[test]
fn junit_has_a_suite_per_policy_and_a_case_per_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = sample_report();
    // Text an XML writer must escape, in a mismatch line.
    r.policies[1].expectations[0].ok = false;
    r.policies[1].expectations[0].status = ExpectStatus::Fail;
    r.policies[1].expectations[0].detail =
        "ws <realtime> & \"quotes\" 'apos' \u{1}bell\ttab\nline".into();
    r.policies[1].ok = false;
    write_all(dir.path(), &r).unwrap();
    assert_junit_matches_report(dir.path());
    let suites = read_junit(dir.path());
    let names: Vec<&str> = suites
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "crm-search-503-storm/legacy",
            "crm-search-503-storm/retry-gate"
        ]
    );
    let gate = &suites[1];
    assert_eq!(
        (gate["tests"].as_u64(), gate["failures"].as_u64()),
        (Some(3), Some(2))
    );
    let cases = gate["cases"].as_array().unwrap();
    assert_eq!(
        cases[0]["message"],
        "ws <realtime> & \"quotes\" 'apos' bell\ttab\nline"
    );
    let metric = cases
        .iter()
        .find(|c| c["outcome"] == "failure" && c["name"].as_str().unwrap().starts_with("profile_"))
        .expect("the failed metric case");
    assert_eq!(
        metric["name"], "profile_cooldowns_total{reason=\"timeout\"} = 0",
        "a metric case is named by its series and bound, not by what was observed"
    );
    assert_eq!(
        metric["message"],
        "profile_cooldowns_total{reason=\"timeout\"} expected = 0, observed 3 (+3), outside the bound"
    );
}

#[test]
fn junit_marks_an_interrupted_run_an_error_and_an_unstarted_policy_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = sample_report();
    r.verdict = Verdict::Incomplete;
    r.reason = Some("stopped by SIGTERM".into());
    r.policies.truncate(1);
    r.config = serde_json::json!({"policies": ["legacy", "retry-gate"]});
    write_all(dir.path(), &r).unwrap();
    let suites = read_junit(dir.path());
    let s = suites.as_array().unwrap();
    assert_eq!(s.len(), 3, "{suites:#}");
    assert_eq!(s[1]["name"], "crm-search-503-storm/retry-gate");
    assert_eq!(
        (s[1]["tests"].as_u64(), s[1]["skipped"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(s[1]["cases"][0]["message"], "not run: stopped by SIGTERM");
    assert_eq!(s[2]["name"], "crm-search-503-storm/run");
    assert_eq!(s[2]["errors"], 1);
    assert_eq!(
        s[2]["cases"][0]["message"],
        "incomplete: stopped by SIGTERM"
    );
    // `rehearse report` re-renders it from report.json alone.
    std::fs::remove_file(dir.path().join("report.junit.xml")).unwrap();
    let out = rehearse(&["report", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(read_junit(dir.path()), suites);
}

/// The committed JSON Schema of report.json, compiled once.
fn schema() -> &'static jsonschema::Validator {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        let text = include_str!("../docs/report.schema.json");
        let schema: serde_json::Value = serde_json::from_str(text).expect("schema is JSON");
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("schema compiles: {e}"))
    })
}

/// Every schema violation of `v`, one line each (`/policies/0/...: message`).
fn violations(v: &serde_json::Value) -> Vec<String> {
    schema()
        .iter_errors(v)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Every float in `v` outside `config` (user settings) and `speed` (a user's flag), with the
/// path: measured floats are written with at most 3 decimals.
fn long_floats(path: &str, v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if path.is_empty() && (k == "config" || k == "speed") {
                    continue;
                }
                long_floats(&format!("{path}/{k}"), x, out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                long_floats(&format!("{path}/{i}"), x, out);
            }
        }
        serde_json::Value::Number(n) if n.is_f64() => {
            let text = n.to_string();
            let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
            if decimals > 3 || text.contains('e') {
                out.push(format!("{path} = {text}"));
            }
        }
        _ => {}
    }
}

/// report.json in `dir` validates against docs/report.schema.json and holds no float with more
/// than 3 decimals; report.junit.xml agrees with it. Run on real reports by the fixture tests.
pub fn assert_report_contracts(dir: &Path) {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let bad = violations(&v);
    assert!(
        bad.is_empty(),
        "{}/report.json breaks docs/report.schema.json:\n{}",
        dir.display(),
        bad.join("\n")
    );
    let mut long = Vec::new();
    long_floats("", &v, &mut long);
    assert!(long.is_empty(), "unrounded floats: {long:?}");
    assert_junit_matches_report(dir);
}

#[test]
fn report_json_matches_its_schema_with_rounded_floats_and_numeric_times() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = sample_report();
    r.replay.lag_ms.max = 40.79371500000002;
    r.policies[0]
        .summary
        .latency_by_dep
        .values_mut()
        .for_each(|l| l.p99_ms = 0.1 + 0.2);
    write_all(dir.path(), &r).unwrap();
    assert_report_contracts(dir.path());
    let text = std::fs::read_to_string(dir.path().join("report.json")).unwrap();
    assert!(text.contains("\"max\": 40.794"), "lag max rounded: {text}");
    assert!(!text.contains("0.30000000000000004"), "p99 rounded");
    // Times are numbers beside the strings: the sample's ws_realtime closed→open at 5 s ±300 ms.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let e = &v["policies"][0]["expectations"][0];
    assert_eq!(e["kind"], "transition", "{e:#}");
    assert_eq!(e["expected"], "closed→open at 5.000s ±0.300s");
    assert_eq!(e["expected_ms"], 5000);
    assert_eq!(e["tolerance_ms"], 300);
    let observed = e["observed_ms"].as_i64().expect("observed_ms is a number");
    assert_eq!(e["observed"], rehearse::verdict::secs(observed));
    assert_eq!(e["delta_ms"], observed - 5000);
    let metric = &v["policies"][0]["expectations"][1];
    assert_eq!(
        metric["series"],
        "profile_cooldowns_total{reason=\"timeout\"}"
    );
    assert!(metric["expected_ms"].is_null() && metric["observed_ms"].is_null());
}

#[test]
fn the_schema_rejects_what_report_json_must_not_be() {
    let v = serde_json::to_value(sample_report()).unwrap();
    assert_eq!(violations(&v), Vec::<String>::new());
    type Mutation = (&'static str, fn(&mut serde_json::Value));
    let mutations: [Mutation; 7] = [
        ("verdict missing", |v| {
            v.as_object_mut().unwrap().remove("verdict");
        }),
        ("unknown verdict", |v| v["verdict"] = "maybe".into()),
        ("unknown top-level key", |v| v["extra"] = 1.into()),
        ("string time", |v| {
            v["policies"][0]["expectations"][0]["expected_ms"] = "5s".into()
        }),
        ("unknown expectation key", |v| {
            v["policies"][0]["expectations"][0]["surprise"] = true.into()
        }),
        ("metric with a time", |v| {
            v["policies"][0]["expectations"][1]["observed_ms"] = 3.into()
        }),
        ("unrounded lag", |v| {
            v["replay"]["lag_ms"]["max"] = 40.79371500000002.into()
        }),
    ];
    for (what, mutate) in mutations {
        let mut m = v.clone();
        mutate(&mut m);
        assert!(
            !violations(&m).is_empty(),
            "the schema accepts a report with {what}"
        );
    }
}

/// The number of checks `rehearse validate` announces for a scenario (`…, N checks …`).
pub fn validate_checks(scenario: &Path) -> usize {
    let out = rehearse(&["validate", scenario.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let words: Vec<&str> = text.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.starts_with("check"))
        .unwrap_or_else(|| panic!("no check count in {text}"));
    words[at - 1].parse().unwrap()
}

/// A real run's report counts its checks as `validate` does (a report once counted 7 where `validate` said 8).
pub fn assert_counts_match_validate(dir: &Path, scenario: &Path) {
    let report: Report =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    let counts = rehearse::report::counts::Counts::of(&report);
    assert_eq!(
        counts.checks,
        validate_checks(scenario),
        "{}: report and validate count checks differently",
        scenario.display()
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(
        md.contains(&counts.sentence()),
        "report.md states the count"
    );
}

#[test]
fn report_md_and_html_count_checks_and_unexpected_transitions_apart() {
    let mut r = sample_report();
    let md = rehearse::report::markdown::render(&r);
    let sentence = "1 of 6 checks failed (a check is one expectation in one policy run)";
    assert!(
        md.contains(&format!("- verdict: **fail**: {sentence}")),
        "{md}"
    );
    assert!(rehearse::report::html::render(&r).contains(sentence));
    let mut extra = r.policies[0].expectations[0].clone();
    extra.expected = rehearse::verdict::UNEXPECTED.into();
    extra.ok = false;
    r.policies[0].expectations.push(extra);
    let md = rehearse::report::markdown::render(&r);
    assert!(
        md.contains("1 of 6 checks failed, plus 1 unexpected transition (a check"),
        "{md}"
    );
}

/// An interrupted run's checks that were never due are `not_reached`, skipped in
/// JUnit (neither passed nor failed), and a policy listed `not_run` is a suite of skipped cases.
#[test]
fn junit_skips_not_reached_checks_and_not_run_policies() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = sample_report();
    r.verdict = Verdict::Incomplete;
    r.reason = Some("stopped by SIGTERM".into());
    r.policies[0].status = PolicyStatus::Incomplete;
    r.policies[0].ok = false;
    for e in &mut r.policies[0].expectations[1..] {
        e.ok = false;
        e.status = ExpectStatus::NotReached;
    }
    r.policies[1].status = PolicyStatus::NotRun;
    r.policies[1].ok = false;
    for e in &mut r.policies[1].expectations {
        e.ok = false;
        e.status = ExpectStatus::NotReached;
    }
    write_all(dir.path(), &r).unwrap();
    assert_report_contracts(dir.path());
    let suites = read_junit(dir.path());
    let s = suites.as_array().unwrap();
    assert_eq!(
        (
            s[0]["tests"].as_u64(),
            s[0]["failures"].as_u64(),
            s[0]["skipped"].as_u64()
        ),
        (Some(3), Some(0), Some(2))
    );
    assert!(
        s[0]["cases"][1]["message"]
            .as_str()
            .unwrap()
            .starts_with("not reached: "),
        "{suites:#}"
    );
    assert_eq!(
        (s[1]["tests"].as_u64(), s[1]["skipped"].as_u64()),
        (Some(3), Some(3))
    );
    assert_eq!(s[1]["props"]["status"], "not_run");
    let md = rehearse::report::markdown::render(&r);
    assert!(
        md.contains("0 of 6 checks failed, 5 not reached (a check"),
        "not_reached counts as neither: {md}"
    );
}
