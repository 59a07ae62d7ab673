//! What the scorecard reads of one run's report.json: its verdict and one-line reason, the
//! client's turns (for [`super::class::classify`]), the key figures of a cell and the target's
//! header. Read as JSON values, every field optional: a report written by a newer or older
//! `rehearse` (new fields, per-turn outcomes of the embedded engine) is read for what it has.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::class::ClientTurn;
use crate::gateway::TurnEnd;

/// The key figures of one run (every one `None` when the report does not have it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Figures {
    /// The most upstream requests any one turn took (`policies[].turns.rows[].requests`).
    #[serde(default)]
    pub requests_per_turn_max: Option<u64>,
    /// The longest answer time of a turn, from its first request to the request the upstream
    /// answered, scenario ms (`policies[].turns.rows[].answer_ms`).
    #[serde(default)]
    pub answer_ms_max: Option<u64>,
    /// Every request that reached the upstream in the run (`policies[].turns`: marked and
    /// unmarked).
    #[serde(default)]
    pub upstream_requests: Option<u64>,
    /// Turns the upstream answered of the turns it saw.
    #[serde(default)]
    pub turns_answered: Option<u64>,
}

impl Figures {
    /// Every figure with its name, in the order the scorecard shows them.
    pub fn named(&self) -> [(&'static str, Option<u64>); 4] {
        [
            ("requests_per_turn_max", self.requests_per_turn_max),
            ("answer_ms_max", self.answer_ms_max),
            ("upstream_requests", self.upstream_requests),
            ("turns_answered", self.turns_answered),
        ]
    }
}

/// The target as its report names it (a column's header).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// `embedded`, `http`, `openclaw`, `litellm`, `portkey`.
    #[serde(default)]
    pub kind: Option<String>,
    /// The gateway's version (what it reported, else what was run).
    #[serde(default)]
    pub version: Option<String>,
    /// `sha256:` over the target configuration the run recorded (report.json `config.target`,
    /// and the target file's digest when there was one): two columns with the same digest ran
    /// the same configuration.
    #[serde(default)]
    pub config_digest: Option<String>,
}

/// One report read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportFacts {
    /// Its verdict.
    pub verdict: Option<String>,
    /// One line: the first failed row's detail (its kind first), else the report's reason.
    pub reason: Option<String>,
    /// The client's turns (`target.turns`, else `policies[].client_turns`), if the report has them.
    pub turns: Option<Vec<ClientTurn>>,
    /// Every failed row only asks that turns be answered ([`only_answered_rows_failed`]).
    pub only_answered_failed: bool,
    /// Its key figures.
    pub figures: Figures,
    /// Its target's header.
    pub header: Header,
}

/// The turns as the client got them: an external gateway's (`target.turns`), else the embedded
/// engine's (`policies[].client_turns`, kept when the scenario judges turns); `None` when the
/// report has neither.
fn client_turns(report: &Value, policies: &[Value]) -> Option<Vec<ClientTurn>> {
    let rows: Vec<&Value> = match report["target"]["turns"].as_array() {
        Some(ts) => ts.iter().collect(),
        None => policies
            .iter()
            .flat_map(|p| p["client_turns"].as_array().into_iter().flatten())
            .collect(),
    };
    if rows.is_empty() {
        return None;
    }
    Some(
        rows.into_iter()
            .map(|t| ClientTurn {
                end: t["outcome"].as_str().and_then(TurnEnd::parse),
                elapsed_ms: t["elapsed_ms"].as_u64().unwrap_or(u64::MAX),
            })
            .collect(),
    )
}

/// Whether every failed row of `policies` asks only that turns be answered, and one did: the
/// client's count of `answered` turns (`[[expect.turn]] outcome = "answered"` with a count, kind
/// `turn`, dep `turns answered`), or the upstream's "the turn is answered" over the run
/// (`[[expect.per_turn]] answer_within` not anchored at a fault: kind `per_turn`, expected
/// "… answered within …"). A latency bound, a request bound, a cooldown, a truncated or timed-out
/// count, or the answer after a fault's end (serving again after) is a required check.
pub fn only_answered_rows_failed(policies: &[Value]) -> bool {
    let answered_row = |e: &Value| {
        let (kind, dep) = (e["kind"].as_str(), e["dep"].as_str());
        let expected = e["expected"].as_str().unwrap_or("");
        match kind {
            Some("turn") => dep == Some("turns answered") && !expected.starts_with("latency"),
            Some("per_turn") => {
                expected.contains("answered within") && !expected.contains("since fault")
            }
            _ => false,
        }
    };
    let failed: Vec<&Value> = policies
        .iter()
        .flat_map(|p| p["expectations"].as_array().into_iter().flatten())
        .filter(|e| e["status"] == "fail")
        .collect();
    !failed.is_empty() && failed.into_iter().all(answered_row)
}

/// Reads what the scorecard needs of `report`.
pub fn read(report: &Value) -> ReportFacts {
    let policies = report["policies"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let first_failed = policies
        .iter()
        .flat_map(|p| p["expectations"].as_array().into_iter().flatten())
        .find(|e| e["status"] == "fail")
        .map(|e| {
            let kind = e["kind"].as_str().unwrap_or("row");
            let detail = e["detail"].as_str().unwrap_or("");
            format!("{kind}: {detail}")
        });
    let reason = first_failed
        .or_else(|| report["reason"].as_str().map(String::from))
        .map(|s| one_line(&s));
    let turns = client_turns(report, policies);
    ReportFacts {
        verdict: report["verdict"].as_str().map(String::from),
        reason,
        turns,
        only_answered_failed: only_answered_rows_failed(policies),
        figures: figures(policies),
        header: header(report),
    }
}

fn figures(policies: &[Value]) -> Figures {
    let parts: Vec<&Value> = policies
        .iter()
        .map(|p| &p["turns"])
        .filter(|t| t.is_object())
        .collect();
    if parts.is_empty() {
        return Figures::default();
    }
    let rows: Vec<&Value> = parts
        .iter()
        .flat_map(|t| t["rows"].as_array().into_iter().flatten())
        .collect();
    let upstream = parts.iter().try_fold(0u64, |n, t| {
        let m = t["marked_requests"].as_u64()?;
        let u = t["unmarked_requests"].as_u64().unwrap_or(0);
        Some(n.saturating_add(m).saturating_add(u))
    });
    Figures {
        requests_per_turn_max: rows
            .iter()
            .filter_map(|r| r["requests"].as_array().map(|a| a.len() as u64))
            .max(),
        answer_ms_max: rows.iter().filter_map(|r| r["answer_ms"].as_u64()).max(),
        upstream_requests: upstream,
        turns_answered: Some(
            rows.iter()
                .filter(|r| r["answered_by"].as_u64().is_some())
                .count() as u64,
        ),
    }
}

fn header(report: &Value) -> Header {
    let t = &report["target"];
    let kind = t["kind"]
        .as_str()
        .or_else(|| report["config"]["target"]["kind"].as_str())
        .map(String::from)
        .or_else(|| report["config"].is_object().then(|| "embedded".to_string()));
    let version = t["reported_version"]
        .as_str()
        .or_else(|| t["version"].as_str())
        .map(String::from)
        .or_else(|| {
            report["versions"]["arms"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v["version"].as_str())
                        .collect::<Vec<_>>()
                        .join(" + ")
                })
                .filter(|s| !s.is_empty())
        });
    let config = &report["config"]["target"];
    let file = report["target_file"]["digest"].as_str().unwrap_or("");
    let config_digest = (!config.is_null() || !file.is_empty()).then(|| {
        let text = serde_json::to_string(config).unwrap_or_default();
        crate::scenario::digest::of_bytes(format!("{text}\n{file}").as_bytes())
    });
    Header {
        kind,
        version,
        config_digest,
    }
}

/// `s` on one line, at most 300 characters.
fn one_line(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 300 {
        let cut: String = s.chars().take(297).collect();
        format!("{cut}...")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_gateway_report_gives_reason_turns_figures_and_header() {
        let r = json!({
            "verdict": "fail",
            "reason": "1 of 3 checks failed",
            "config": {"target": {"kind": "http", "url": "http://127.0.0.1:1"}},
            "target_file": {"path": "t.toml", "digest": "sha256:ab"},
            "target": {"kind": "http", "version": null, "reported_version": "1.2",
                "turns": [{"outcome": "answered", "elapsed_ms": 20},
                          {"outcome": "http_error", "elapsed_ms": 30}]},
            "policies": [{"expectations": [
                {"kind": "per_turn", "status": "pass", "detail": "ok"},
                {"kind": "per_turn", "status": "fail", "detail": "turn 3:\n  no answer"}],
                "turns": {"marked_requests": 5, "unmarked_requests": 1, "rows": [
                    {"requests": [{}, {}], "answered_by": 1, "answer_ms": 700},
                    {"requests": [{}, {}, {}], "answered_by": null},
                ]}}]
        });
        let f = read(&r);
        assert_eq!(f.verdict.as_deref(), Some("fail"));
        assert_eq!(f.reason.as_deref(), Some("per_turn: turn 3: no answer"));
        let turns = f.turns.unwrap();
        assert_eq!(turns[1].end, Some(TurnEnd::HttpError));
        assert_eq!(turns[1].elapsed_ms, 30);
        assert_eq!(
            f.figures,
            Figures {
                requests_per_turn_max: Some(3),
                answer_ms_max: Some(700),
                upstream_requests: Some(6),
                turns_answered: Some(1),
            }
        );
        assert_eq!(f.header.kind.as_deref(), Some("http"));
        assert_eq!(f.header.version.as_deref(), Some("1.2"));
        let d = f.header.config_digest.unwrap();
        assert!(d.starts_with("sha256:"), "{d}");
    }

    #[test]
    fn a_report_without_client_turns_has_none_and_without_turns_no_figures() {
        let r = json!({"verdict": "pass", "reason": null, "config": {"engine": {}},
            "policies": [{"expectations": []}]});
        let f = read(&r);
        assert_eq!(f.turns, None);
        assert_eq!(f.figures, Figures::default());
        assert_eq!(f.header.kind.as_deref(), Some("embedded"));
        assert_eq!(f.reason, None);
    }

    #[test]
    fn only_rows_asking_for_answers_may_fail_for_a_clean_error() {
        let row = |kind: &str, dep: &str, expected: &str, status: &str| {
            json!({"kind": kind, "dep": dep, "expected": expected, "status": status})
        };
        let answered = row("turn", "turns answered", ">= 12", "fail");
        let upstream = row("per_turn", "turns", "turns >= 12: answered within 5.000s", "fail");
        let pass = row("per_turn", "turns", "every turn: <= 4 requests", "pass");
        let of = |rows: Vec<Value>| only_answered_rows_failed(&[json!({"expectations": rows})]);
        assert!(of(vec![answered.clone(), upstream.clone(), pass.clone()]));
        assert!(!of(vec![pass.clone()]), "nothing failed");
        for required in [
            row("per_turn", "turns", "every turn: <= 4 requests", "fail"),
            row("turn", "turns truncated", "= 0", "fail"),
            row("turn", "turns answered", "latency <= 2.000s", "fail"),
            row("cooldown", "mockai:a", "cooldowns >= 1", "fail"),
            row(
                "per_turn",
                "turns",
                "turns >= 1 in [16.000s, end) since fault `outage` end: answered within 5.000s",
                "fail",
            ),
        ] {
            assert!(!of(vec![answered.clone(), required.clone()]), "{required}");
        }
    }

    #[test]
    fn the_embedded_engines_client_turns_are_the_clients_turns() {
        let r = json!({"verdict": "fail", "config": {"engine": {}},
            "policies": [{"expectations": [], "client_turns": [
                {"outcome": "answered", "elapsed_ms": 40},
                {"outcome": "truncated", "elapsed_ms": 50}]}]});
        let turns = read(&r).turns.unwrap();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[1].end, Some(TurnEnd::Truncated));
        // A gateway's own turns win where the report has them.
        let mut g = r.clone();
        g["target"] = json!({"turns": [{"outcome": "http_error", "elapsed_ms": 7}]});
        assert_eq!(read(&g).turns.unwrap()[0].end, Some(TurnEnd::HttpError));
    }
}
