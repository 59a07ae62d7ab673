//! report.md's "Turns" section: per arm, what its turns cost at the upstream in a few lines
//! (turns, requests per turn, answered, retries on the same profile, time to answer, the
//! requests with no turn) and the turns that did something worth reading — more than one
//! request, or no answer — at most [`MAX_ROWS`] of them; every turn is in report.json
//! (`policies[].turns.rows`). A gateway that strips the turn marker is said so instead.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::report::model::PolicyReport;
use crate::util::units::secs;
use crate::verdict::turns::{TurnRequest, TurnRow, TurnsPart};

/// Most turns listed in report.md per arm.
pub(crate) const MAX_ROWS: usize = 25;

/// The section (empty when no arm has turns).
pub(crate) fn markdown(policies: &[PolicyReport]) -> String {
    let with: Vec<(&PolicyReport, &TurnsPart)> = policies
        .iter()
        .filter_map(|p| p.turns.as_ref().map(|t| (p, t)))
        .filter(|(_, t)| t.marked_requests + t.unmarked_requests > 0)
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut o = String::from("## Turns\n\n");
    o.push_str(
        "Each turn's requests at the upstream, read by the turn marker each carried (times are \
         scenario time; the time to answer runs from a turn's first request to when the \
         upstream finished serving the answer).\n",
    );
    for (p, t) in with {
        let _ = writeln!(o, "\n### Policy `{}`\n", p.policy);
        section(&mut o, t);
    }
    o
}

fn section(o: &mut String, t: &TurnsPart) {
    if let Some(why) = &t.unreadable {
        let _ = writeln!(o, "- **Turns unknown**: {why}.");
        return;
    }
    let n = t.rows.len();
    let _ = writeln!(
        o,
        "- {n} turns, {} requests with a turn; {} without one (the system's own calls: \
         compaction, titles), counted apart",
        t.marked_requests, t.unmarked_requests
    );
    if t.dropped_requests > 0 {
        let _ = writeln!(
            o,
            "- {} later requests were past the recorder's cap and are in no turn",
            t.dropped_requests
        );
    }
    if n == 0 {
        return;
    }
    let mut per: BTreeMap<usize, usize> = BTreeMap::new();
    for r in &t.rows {
        *per.entry(r.requests.len()).or_default() += 1;
    }
    let spread: Vec<String> = per.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    let _ = writeln!(o, "- requests per turn (requests: turns): {}", spread.join(" · "));
    let answered = t.rows.iter().filter(|r| r.answered_by.is_some()).count();
    let retries: u64 = t.rows.iter().map(|r| u64::from(r.same_profile_retries)).sum();
    let mut times: Vec<u64> = t.rows.iter().filter_map(|r| r.answer_ms).collect();
    times.sort_unstable();
    let at = |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied();
    let _ = write!(
        o,
        "- answered: {answered} of {n}; retries on the same profile: {retries}"
    );
    if let (Some(p50), Some(max)) = (at(0.5), times.last()) {
        let _ = write!(
            o,
            "; time to answer p50 {}, max {}",
            secs(p50 as i64),
            secs(*max as i64)
        );
    }
    o.push('\n');
    let eventful: Vec<&TurnRow> = t.rows.iter().filter(|r| r.eventful()).collect();
    if eventful.is_empty() {
        o.push_str("- every turn got its answer from its first request\n");
        return;
    }
    let shown = eventful.len().min(MAX_ROWS);
    let _ = writeln!(
        o,
        "- {} turns made more than one request or got no answer{}:\n",
        eventful.len(),
        if eventful.len() > shown {
            format!(" (the first {shown}; every turn is in report.json `policies[].turns.rows`)")
        } else {
            String::new()
        }
    );
    // A gateway that says what it did per turn (LiteLLM's headers) gets a column of its own.
    let said = eventful.iter().any(|r| r.said.is_some());
    o.push_str("| turn | at | requests | in order | answered by | same-profile retries | time to answer |");
    o.push_str(if said { " the gateway said |\n|---|---|---|---|---|---|---|---|\n" } else { "\n|---|---|---|---|---|---|---|\n" });
    for r in eventful.into_iter().take(shown) {
        let turn = match &r.host {
            Some(h) => format!("{h}/{}", r.turn),
            None => r.turn.to_string(),
        };
        let order: Vec<String> = r.requests.iter().map(step).collect();
        let _ = write!(
            o,
            "| {turn} | {} | {} | {} | {} | {} | {} |",
            secs(r.first_ms() as i64),
            r.requests.len(),
            order.join(" → ").replace('|', "\\|"),
            r.answer().map_or("none".to_string(), who),
            r.same_profile_retries,
            r.answer_ms.map_or("–".to_string(), |ms| secs(ms as i64)),
        );
        if said {
            let s = r.said.as_ref().map_or("–".to_string(), |s| s.short());
            let _ = write!(o, " {} |", s.replace('|', "\\|"));
        }
        o.push('\n');
    }
}

/// A request's profile and model (or route).
fn who(q: &TurnRequest) -> String {
    let target = match (&q.model, &q.route) {
        (Some(m), _) => m.clone(),
        (None, r) => r.to_string(),
    };
    match &q.profile {
        Some(p) => format!("{p} {target}"),
        None => target,
    }
}

/// One request in a turn's order: who, then its fault (✗) or ✓.
fn step(q: &TurnRequest) -> String {
    let mark = match &q.fault {
        Some(f) if !q.answered() => format!(" ✗{f}"),
        Some(f) => format!(" ✓({f})"),
        None => " ✓".to_string(),
    };
    format!("{}{mark}", who(q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::turns::row;

    fn req(t_ms: u64, profile: &str, fault: Option<&str>) -> TurnRequest {
        TurnRequest {
            t_ms,
            route: crate::upstream::RequestRoute::Llm,
            profile: Some(profile.into()),
            provider: Some("mockai".into()),
            model: Some("m1".into()),
            fault: fault.map(str::to_string),
            probe: false,
            tokens: None,
            usage: None,
            // Served at once: a test of when the upstream finished sets it apart.
            done_ms: Some(t_ms),
            whole: None,
            retry_after_ms: None,
        }
    }

    fn section_of(t: TurnsPart) -> String {
        let mut p = PolicyReport::empty("gateway", Vec::new());
        p.turns = Some(t);
        markdown(&[p])
    }

    #[test]
    fn the_section_sums_up_and_lists_only_the_turns_that_did_something() {
        let mut rows = vec![row(
            3,
            None,
            vec![
                req(1_000, "mockai:a", Some("status")),
                req(1_010, "mockai:a", Some("status")),
                req(1_035, "mockai:b", None),
            ],
        )];
        for i in 0..40 {
            rows.push(row(10 + i, None, vec![req(2_000 + i * 100, "mockai:b", None)]));
        }
        for i in 0..30 {
            rows.push(row(100 + i, None, vec![req(9_000 + i, "mockai:a", Some("reset"))]));
        }
        let md = section_of(TurnsPart {
            marked_requests: 73,
            unmarked_requests: 2,
            rows,
            ..TurnsPart::default()
        });
        assert!(md.contains("- 71 turns, 73 requests with a turn; 2 without one"), "{md}");
        assert!(md.contains("requests per turn (requests: turns): 1: 70 · 3: 1"), "{md}");
        assert!(md.contains("answered: 41 of 71; retries on the same profile: 1"), "{md}");
        assert!(
            md.contains("| 3 | 1.000s | 3 | mockai:a m1 ✗status → mockai:a m1 ✗status → mockai:b m1 ✓ | mockai:b m1 | 1 | 0.035s |"),
            "{md}"
        );
        // 31 eventful turns, 25 listed; the quiet ones never.
        assert!(md.contains("31 turns made more than one request or got no answer (the first 25"), "{md}");
        let listed = md
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| turn"))
            .count();
        assert_eq!(listed, 25, "{md}");
        assert!(!md.contains("| 10 |"), "{md}");
        assert!(!md.contains("the gateway said"), "no column when no gateway said: {md}");
    }

    #[test]
    fn what_a_gateway_said_of_a_turn_is_a_column_beside_the_record() {
        let mut r = row(
            3,
            None,
            vec![req(1_000, "mockai:a", Some("status")), req(1_035, "mockai:b", None)],
        );
        r.said = Some(crate::wire::said::GatewaySaid {
            answered_by: Some("mockai:b/m1".into()),
            target: None,
            retries: Some(1),
            fallbacks: Some(0),
        });
        let md = section_of(TurnsPart {
            marked_requests: 2,
            rows: vec![r],
            ..TurnsPart::default()
        });
        assert!(md.contains("| time to answer | the gateway said |"), "{md}");
        assert!(md.contains("| 0.035s | answered by mockai:b/m1 · retries 1 · fallbacks 0 |"), "{md}");
    }

    #[test]
    fn a_gateway_that_strips_the_marker_is_said_so_and_nothing_else() {
        let md = section_of(TurnsPart {
            unmarked_requests: 4,
            unreadable: Some("none of the 4 requests carried a turn marker".into()),
            ..TurnsPart::default()
        });
        assert!(md.contains("**Turns unknown**: none of the 4 requests carried a turn marker."), "{md}");
        assert!(!md.contains("| turn |"), "{md}");
        // An arm that sent nothing has no section.
        assert_eq!(section_of(TurnsPart::default()), "");
    }
}
