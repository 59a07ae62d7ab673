//! report.junit.xml: the report's verdict for CI systems, in the JUnit XML dialect Jenkins,
//! GitLab and GitHub test reporters read. One `<testsuite>` per policy run, one `<testcase>` per
//! expectation check (and per unexpected transition); a failed check carries
//! `<failure message="the mismatch line">`, a check the run never reached is `<skipped/>`. A
//! policy the run never started is a suite whose one case is skipped; an incomplete or errored
//! run adds a `run` suite whose case is an `<error>` with the reason. Every suite carries the
//! attributes the Ant JUnit schema requires (name, tests, failures, errors, skipped, time,
//! timestamp, hostname, id, package). Written from the report model alone, so `rehearse report`
//! re-renders it.

use std::fmt::Write;

use super::counts::Counts;
use super::model::{ExpectStatus, PolicyReport, PolicyStatus, Report, Verdict};
use crate::verdict::{ExpectKind, ExpectationResult};

/// Escapes text for an XML attribute or element (`&<>"'`, and tab, newline and carriage return
/// as character references, so an attribute keeps them), dropping the characters XML 1.0
/// cannot hold (the other controls).
fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' => o.push_str("&#9;"),
            '\n' => o.push_str("&#10;"),
            '\r' => o.push_str("&#13;"),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => o.push(c),
        }
    }
    o
}

/// How one case ended.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Pass,
    /// The mismatch line.
    Failure(String),
    /// Why it was not checked.
    Skipped(String),
    /// A harness error (the run itself).
    Error(String),
}

/// One `<testcase>`.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    classname: String,
    /// `failure`'s `type`: the expectation kind.
    kind: &'static str,
    outcome: Outcome,
    /// What the check was judged on (`scrapes 118, series 1`), as the case's `<system-out>`
    /// (none in a report written before witnesses).
    witness: Option<String>,
}

/// One `<testsuite>`.
#[derive(Debug, Clone)]
struct Suite {
    name: String,
    /// Seconds.
    time_s: f64,
    cases: Vec<Case>,
    properties: Vec<(String, String)>,
}

impl Suite {
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.cases.iter().filter(|c| f(&c.outcome)).count()
    }
    fn failures(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failure(_)))
    }
    fn errors(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Error(_)))
    }
    fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skipped(_)))
    }
}

/// A testcase name that says what was expected (not what was observed, so a CI's history of
/// the case lines up across runs), except for an unexpected transition, which is its
/// observation.
fn case_name(e: &ExpectationResult) -> String {
    let dep = e.dep.as_deref().unwrap_or("");
    if e.is_unexpected() {
        return format!("{dep} unexpected {}", e.observed);
    }
    match e.kind {
        ExpectKind::Metric => {
            // Reports written before `series` existed name it only in the detail line.
            let from_detail = || e.detail.split_once(" expected ").map(|(s, _)| s);
            let series = e.series.as_deref().or_else(from_detail).unwrap_or("?");
            format!("{series} {}", e.expected)
        }
        ExpectKind::NoTransition => format!("{dep} no transition"),
        _ => format!("{dep} {}", e.expected),
    }
}

/// The case outcome of a checked expectation: its `status`.
fn outcome(e: &ExpectationResult) -> Outcome {
    match e.status {
        ExpectStatus::Pass => Outcome::Pass,
        ExpectStatus::Fail => Outcome::Failure(e.detail.clone()),
        ExpectStatus::NotReached => Outcome::Skipped(format!("not reached: {}", e.detail)),
        ExpectStatus::NoBaseline => Outcome::Skipped(e.detail.clone()),
    }
}

fn policy_suite(scenario: &str, p: &PolicyReport, why: &str) -> Suite {
    let mut cases: Vec<Case> = p
        .expectations
        .iter()
        .map(|e| Case {
            name: case_name(e),
            classname: format!("{scenario}.{}.{}", p.policy, e.kind.as_str()),
            kind: e.kind.as_str(),
            outcome: outcome(e),
            witness: (!e.witness.is_empty()).then(|| e.witness.line()),
        })
        .collect();
    if p.status == PolicyStatus::NotRun && cases.is_empty() {
        cases.push(not_run_case(scenario, &p.policy, why));
    }
    Suite {
        name: format!("{scenario}/{}", p.policy),
        time_s: p.elapsed_ms as f64 / 1000.0,
        cases,
        properties: vec![
            ("policy".into(), p.policy.clone()),
            ("status".into(), p.status.as_str().into()),
        ],
    }
}

/// The one skipped case of a policy run that never started.
fn not_run_case(scenario: &str, policy: &str, why: &str) -> Case {
    Case {
        name: format!("{policy} policy run"),
        classname: format!("{scenario}.{policy}"),
        kind: "policy",
        outcome: Outcome::Skipped(format!("not run: {why}")),
        witness: None,
    }
}

/// Policies the scenario planned (`config.policies`) that have no entry in the report (a
/// report.json from before `not_run` entries existed).
fn not_run(r: &Report) -> Vec<String> {
    let planned = r.config.get("policies").and_then(|v| v.as_array());
    planned
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str())
        .filter(|p| !r.policies.iter().any(|run| run.policy == *p))
        .map(String::from)
        .collect()
}

fn suites(r: &Report) -> Vec<Suite> {
    let scenario = r.scenario.as_str();
    let why = r
        .reason
        .clone()
        .unwrap_or_else(|| r.verdict.as_str().into());
    let mut out: Vec<Suite> = r
        .policies
        .iter()
        .map(|p| policy_suite(scenario, p, &why))
        .collect();
    for p in not_run(r) {
        out.push(Suite {
            name: format!("{scenario}/{p}"),
            time_s: 0.0,
            cases: vec![not_run_case(scenario, &p, &why)],
            properties: vec![("policy".into(), p), ("status".into(), "not_run".into())],
        });
    }
    if matches!(r.verdict, Verdict::Incomplete | Verdict::Error) {
        out.push(Suite {
            name: format!("{scenario}/run"),
            time_s: 0.0,
            cases: vec![Case {
                name: "the run completed".into(),
                classname: format!("{scenario}.run"),
                kind: r.verdict.as_str(),
                outcome: Outcome::Error(format!("{}: {why}", r.verdict.as_str())),
                witness: None,
            }],
            properties: Vec::new(),
        });
    }
    out
}

/// `2026-11-29T18:55:00`: the Ant schema's timestamp has no zone or fraction (the report's
/// `started_at` is UTC).
fn timestamp(started_at: &str) -> String {
    started_at.get(..19).unwrap_or(started_at).to_string()
}

fn secs(t: f64) -> String {
    format!("{:.3}", if t.is_finite() { t.max(0.0) } else { 0.0 })
}

/// Renders report.junit.xml.
pub(crate) fn render(r: &Report) -> String {
    let suites = suites(r);
    let hostname = r
        .host
        .get("hostname")
        .and_then(|h| h.as_str())
        .unwrap_or("localhost");
    let sum = |f: &dyn Fn(&Suite) -> usize| suites.iter().map(f).sum::<usize>();
    let counts = Counts::of(r);
    let mut o = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        o,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
        xml_escape(&format!("rehearse {}: {}", r.scenario, r.verdict.as_str())),
        sum(&|s| s.cases.len()),
        sum(&Suite::failures),
        sum(&Suite::errors),
        sum(&Suite::skipped),
        secs(suites.iter().map(|s| s.time_s).sum()),
    );
    let _ = writeln!(
        o,
        "  <!-- {} -->",
        xml_escape(&counts.sentence()).replace("--", "- -")
    );
    for (id, s) in suites.iter().enumerate() {
        let _ = writeln!(
            o,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\" timestamp=\"{}\" hostname=\"{}\" id=\"{id}\" package=\"{}\">",
            xml_escape(&s.name),
            s.cases.len(),
            s.failures(),
            s.errors(),
            s.skipped(),
            secs(s.time_s),
            xml_escape(&timestamp(&r.started_at)),
            xml_escape(hostname),
            xml_escape(&r.scenario),
        );
        o.push_str("    <properties>\n");
        let common = [
            ("verdict".to_string(), r.verdict.as_str().to_string()),
            ("speed".to_string(), r.speed.to_string()),
            ("seed".to_string(), r.seed.to_string()),
        ];
        for (k, v) in common.iter().chain(&s.properties) {
            let _ = writeln!(
                o,
                "      <property name=\"{}\" value=\"{}\"/>",
                xml_escape(k),
                xml_escape(v)
            );
        }
        o.push_str("    </properties>\n");
        for c in &s.cases {
            let _ = write!(
                o,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"0.000\"",
                xml_escape(&c.name),
                xml_escape(&c.classname)
            );
            if c.outcome == Outcome::Pass && c.witness.is_none() {
                o.push_str("/>\n");
                continue;
            }
            o.push_str(">\n");
            match &c.outcome {
                Outcome::Pass => {}
                Outcome::Failure(m) => {
                    let m = xml_escape(m);
                    let _ = writeln!(
                        o,
                        "      <failure message=\"{m}\" type=\"{}\">{m}</failure>",
                        c.kind
                    );
                }
                Outcome::Skipped(m) => {
                    let _ = writeln!(o, "      <skipped message=\"{}\"/>", xml_escape(m));
                }
                Outcome::Error(m) => {
                    let m = xml_escape(m);
                    let _ = writeln!(
                        o,
                        "      <error message=\"{m}\" type=\"{}\">{m}</error>",
                        c.kind
                    );
                }
            }
            if let Some(w) = &c.witness {
                let _ = writeln!(o, "      <system-out>witness: {}</system-out>", xml_escape(w));
            }
            o.push_str("    </testcase>\n");
        }
        o.push_str("  </testsuite>\n");
    }
    o.push_str("</testsuites>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_drops_what_xml_cannot_hold() {
        assert_eq!(
            xml_escape("a<b>&\"c\" 'd'\u{1}\u{7}\te\n"),
            "a&lt;b&gt;&amp;&quot;c&quot; &apos;d&apos;&#9;e&#10;"
        );
        assert_eq!(xml_escape("closed→open ±1.000s"), "closed→open ±1.000s");
    }

    #[test]
    fn timestamps_lose_zone_and_fraction() {
        assert_eq!(timestamp("2026-11-29T18:55:00.123Z"), "2026-11-29T18:55:00");
        assert_eq!(timestamp("short"), "short");
        assert_eq!(secs(f64::NAN), "0.000");
        assert_eq!(secs(6.25), "6.250");
        assert_eq!(secs(-1.0), "0.000");
    }
}
