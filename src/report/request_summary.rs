//! report.md's words for the request lanes (`policies[].requests`): one line of what the
//! upstream saw on the run's clock — requests, rotations and fallbacks read per turn,
//! a gateway's turns, decisions and warm-up, what was binned or not kept — and a table of the
//! lanes (every profile and model, tool and channel, with its requests and how many were
//! faulted), so the Markdown report tells what the picture draws.

use super::requests::RequestLanes;
use super::table::Table;
use crate::verdict::secs;

/// The one-line summary of `q`.
pub(crate) fn line(q: &RequestLanes) -> String {
    let mut parts = vec![format!("{} requests at the upstream on the run's clock", q.total)];
    parts.push(if q.moves_unread {
        "rotations and fallbacks unknown (no request carried its turn)".to_string()
    } else {
        format!(
            "{} rotations and {} fallbacks read per turn",
            q.rotations_total, q.fallbacks_total
        )
    });
    if let Some(t) = &q.turns {
        let failed = t.spans.iter().filter(|s| !s.ok).count();
        let shown = if t.spans.is_empty() {
            format!("{} turns", t.total)
        } else {
            format!("{} turns ({failed} not answered)", t.total)
        };
        parts.push(shown);
    }
    if !q.decisions.is_empty() || q.decisions_dropped > 0 {
        parts.push(format!(
            "{} gateway decisions",
            q.decisions.len() as u64 + q.decisions_dropped
        ));
    }
    if let Some(w) = &q.warmup {
        parts.push(format!(
            "{} warm-up requests in the {} before the clock (drawn apart)",
            w.total,
            secs(i64::try_from(w.before_clock_ms).unwrap_or(i64::MAX))
        ));
    }
    if q.bins.is_some() {
        parts.push("too many to draw one by one: drawn binned".into());
    }
    if q.not_kept > 0 {
        parts.push(format!(
            "{} not kept by the recorder's cap{}",
            q.not_kept,
            q.not_kept_from_ms
                .map(|t| format!(" from {}", secs(i64::try_from(t).unwrap_or(i64::MAX))))
                .unwrap_or_default()
        ));
    }
    format!("{}.", parts.join("; "))
}

/// One row per lane: its name, route, model, requests and faulted.
pub(crate) fn lanes(q: &RequestLanes) -> Table {
    let mut t = Table::new(
        &["lane", "route", "model", "requests", "faulted"],
        &[false, false, false, true, true],
    );
    for l in &q.lanes {
        t.rows.push(vec![
            l.name.clone(),
            l.route.clone(),
            l.model.clone().unwrap_or_else(|| "-".into()),
            l.requests.to_string(),
            l.faulted.to_string(),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::requests::{RequestLane, TurnLane, TurnSpan};

    #[test]
    fn the_summary_says_what_the_lanes_draw() {
        let q = RequestLanes {
            lanes: vec![
                RequestLane {
                    name: "mockai:a".into(),
                    route: "llm".into(),
                    model: Some("m1".into()),
                    requests: 7,
                    faulted: 7,
                    ..RequestLane::default()
                },
                RequestLane {
                    name: "mockai:b".into(),
                    route: "llm".into(),
                    model: Some("m1".into()),
                    requests: 1,
                    ..RequestLane::default()
                },
            ],
            total: 8,
            rotations_total: 1,
            turns: Some(TurnLane {
                total: 1,
                spans: vec![TurnSpan {
                    line: 0,
                    due_ms: 0,
                    end_ms: 9_000,
                    outcome: "answered".into(),
                    ok: true,
                }],
                bins: None,
            }),
            not_kept: 3,
            not_kept_from_ms: Some(12_000),
            ..RequestLanes::default()
        };
        let l = line(&q);
        for want in [
            "8 requests",
            "1 rotations and 0 fallbacks",
            "1 turns (0 not answered)",
            "3 not kept",
        ] {
            assert!(l.contains(want), "{want} not in {l}");
        }
        let mut md = String::new();
        lanes(&q).markdown(&mut md);
        assert!(md.contains("| mockai:a | llm | m1 | 7 | 7 |"), "{md}");
        assert_eq!(md.lines().count(), 4, "{md}");
    }
}
