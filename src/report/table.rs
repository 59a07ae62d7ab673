//! The per-policy tables (transitions, outcomes by dep, latency by dep, health checks by dep) as plain rows, built once
//! from the report model and rendered by both the Markdown and the HTML writer, so the two
//! reports cannot disagree about what a table holds.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::PolicyReport;

/// A table: a header row and rows of cells; `numeric[i]` says column `i` is right-aligned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// Column names.
    pub head: Vec<String>,
    /// Right-align these columns (numbers).
    pub numeric: Vec<bool>,
    /// The rows, each as long as `head`.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    fn new(head: &[&str], numeric: &[bool]) -> Self {
        Self {
            head: head.iter().map(|s| s.to_string()).collect(),
            numeric: numeric.to_vec(),
            rows: Vec::new(),
        }
    }

    /// As Markdown (`|` and newlines in cells escaped), or `None.` when there are no rows.
    pub fn markdown(&self, o: &mut String) {
        if self.rows.is_empty() {
            o.push_str("None.\n");
            return;
        }
        let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let _ = writeln!(o, "| {} |", self.head.join(" | "));
        let _ = writeln!(o, "|{}", "---|".repeat(self.head.len()));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            let _ = writeln!(o, "| {} |", cells.join(" | "));
        }
    }

    /// As an HTML `<table>` (cells escaped), or `<p>None.</p>` when there are no rows.
    pub fn html(&self, o: &mut String) {
        if self.rows.is_empty() {
            o.push_str("<p>None.</p>\n");
            return;
        }
        let esc = super::svg::esc;
        o.push_str("<table><tr>");
        for h in &self.head {
            let _ = write!(o, "<th>{}</th>", esc(h));
        }
        o.push_str("</tr>\n");
        for row in &self.rows {
            o.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                if self.numeric.get(i).copied().unwrap_or(false) {
                    let _ = write!(o, "<td class=\"num\">{}</td>", esc(c));
                } else {
                    let _ = write!(o, "<td>{}</td>", esc(c));
                }
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
    }
}

/// Where events.jsonl and the scrapes disagree: time, dep, kind, what each side shows.
pub fn agreement(p: &PolicyReport) -> Table {
    let mut t = Table::new(
        &["t", "dep", "kind", "detail"],
        &[true, false, false, false],
    );
    for d in &p.disagreements {
        let kind = serde_json::to_value(d.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        t.rows.push(vec![
            crate::verdict::secs(d.t_ms as i64),
            d.dep.clone(),
            kind,
            d.detail.clone(),
        ]);
    }
    t
}

/// One sentence naming the source of the transition times and whether the scrapes agree.
pub fn timing_note(p: &PolicyReport) -> String {
    use super::model::TransitionTimes;
    match p.transition_times {
        TransitionTimes::EventLog if p.disagreements.is_empty() => {
            "Transitions timed by events.jsonl (the engine's exact instants); every scrape agrees with it."
                .to_string()
        }
        TransitionTimes::EventLog => format!(
            "Transitions timed by events.jsonl (the engine's exact instants); the scrapes disagree with it in {} place(s), listed under \"Event log vs scrapes\".",
            p.disagreements.len()
        ),
        TransitionTimes::Scrape => {
            "Transitions timed by scrape (no event log: counter deltas, stamped by breaker_last_transition_timestamp_seconds where it fits the interval).".to_string()
        }
    }
}

/// Breaker transitions: time, dep, from→to and how the time was measured.
pub fn transitions(p: &PolicyReport) -> Table {
    let mut t = Table::new(
        &["t", "dep", "transition", "timed by"],
        &[true, false, false, false],
    );
    for tr in &p.transitions {
        let timing = match tr.timing {
            crate::scrape::Timing::Event => "events.jsonl".to_string(),
            other => serde_json::to_value(other)
                .ok()
                .and_then(|v| v.as_str().map(|s| format!("scrape ({s})")))
                .unwrap_or_default(),
        };
        t.rows.push(vec![
            crate::verdict::secs(tr.t_ms as i64),
            tr.dep.clone(),
            format!("{}→{}", tr.from.as_str(), tr.to.as_str()),
            timing,
        ]);
    }
    t
}

/// Outcome counts per dep, one column per outcome seen anywhere in this policy.
pub fn outcomes(p: &PolicyReport) -> Table {
    let kinds: BTreeSet<&String> = p
        .summary
        .outcomes_by_dep
        .values()
        .flat_map(|m| m.keys())
        .collect();
    let mut head = vec!["dep"];
    head.extend(kinds.iter().map(|k| k.as_str()));
    let mut numeric = vec![false];
    numeric.extend(kinds.iter().map(|_| true));
    let mut t = Table::new(&head, &numeric);
    for (dep, m) in &p.summary.outcomes_by_dep {
        let mut row = vec![dep.clone()];
        row.extend(
            kinds
                .iter()
                .map(|k| m.get(*k).copied().unwrap_or(0).to_string()),
        );
        t.rows.push(row);
    }
    t
}

/// Latency p50/p99 and call count per dep.
pub fn latency(p: &PolicyReport) -> Table {
    let mut t = Table::new(&["dep", "p50", "p99", "calls"], &[false, true, true, true]);
    for (dep, l) in &p.summary.latency_by_dep {
        t.rows.push(vec![
            dep.clone(),
            format!("{:.1} ms", l.p50_ms),
            format!("{:.1} ms", l.p99_ms),
            l.count.to_string(),
        ]);
    }
    t
}

/// Synthetic health checks per dep: canary calls, failures, and the longest canary/breaker
/// disagreement any scrape saw, in wall-clock seconds (the gauge's unit; at `--speed N` the
/// same disagreement lasts N times as long in scenario time).
pub fn health(p: &PolicyReport) -> Table {
    let mut t = Table::new(
        &["dep", "canaries", "failed", "max disagreement (wall clock)"],
        &[false, true, true, true],
    );
    for (dep, h) in &p.health {
        t.rows.push(vec![
            dep.clone(),
            h.canary_calls.to_string(),
            h.canary_failures.to_string(),
            format!("{:.1} s", h.max_disagreement_s),
        ]);
    }
    t
}
