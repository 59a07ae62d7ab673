//! The report's tables (profiles, fault windows; per policy: transitions, outcomes, latency and
//! health checks by dep) as plain rows, built once from the report model and rendered by both
//! the Markdown and the HTML writer, so the two reports cannot disagree about what a table
//! holds — and the one sentence that says which clock the report's times are in.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::model::{FaultWindow, PolicyReport, Report, TimeBase};
use crate::util::speed::RecordedSpeed;
use crate::verdict::secs;

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
    pub(crate) fn new(head: &[&str], numeric: &[bool]) -> Self {
        Self {
            head: head.iter().map(|s| s.to_string()).collect(),
            numeric: numeric.to_vec(),
            rows: Vec::new(),
        }
    }

    /// As Markdown (`|` and newlines in cells escaped), or `None.` when there are no rows.
    pub(crate) fn markdown(&self, o: &mut String) {
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
    pub(crate) fn html(&self, o: &mut String) {
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
pub(crate) fn agreement(p: &PolicyReport) -> Table {
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
pub(crate) fn timing_note(p: &PolicyReport) -> String {
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

/// Breaker transitions: time, dep, from→to, how the time was measured and, for a breaker that
/// opened, which rule tripped it (known from the event log only).
pub fn transitions(p: &PolicyReport) -> Table {
    let mut t = Table::new(
        &["t", "dep", "transition", "timed by", "reason"],
        &[true, false, false, false, false],
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
            tr.reason.map_or(String::new(), |r| r.as_str().to_string()),
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

fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2} ms")
    } else {
        format!("{v:.1} ms")
    }
}

/// Attempt latency per dep: p50, p99 and max from exact samples (scenario time; at a speed
/// other than 1 also on the wall clock the run measured), and the sample count.
pub fn latency(p: &PolicyReport, speed: RecordedSpeed) -> Table {
    let wall = speed.has_wall();
    let exact = p.summary.latency_by_dep.values().all(|l| l.exact);
    let samples = if exact {
        "samples"
    } else {
        "calls (bucket estimate)"
    };
    let mut head = vec!["dep", "p50", "p99", "max", samples];
    if wall {
        head.extend(["p50 (wall clock)", "p99 (wall clock)"]);
    }
    let numeric: Vec<bool> = head.iter().map(|h| *h != "dep").collect();
    let mut t = Table::new(&head, &numeric);
    for (dep, l) in &p.summary.latency_by_dep {
        let mut row = vec![
            dep.clone(),
            ms(l.p50_ms),
            ms(l.p99_ms),
            if l.exact { ms(l.max_ms) } else { "n/a".into() },
            l.count.to_string(),
        ];
        if wall {
            row.extend([ms(speed.to_wall(l.p50_ms)), ms(speed.to_wall(l.p99_ms))]);
        }
        t.rows.push(row);
    }
    t
}

/// The tool-call deadline per dep over the run (nominal: what production would enforce): at its
/// first call, at the end, lowest, highest, how often it changed and where the last came from.
pub fn deadlines(p: &PolicyReport) -> Table {
    let head = ["dep", "start", "end", "min", "max", "changes", "source"];
    let numeric = [false, true, true, true, true, true, false];
    let mut t = Table::new(&head, &numeric);
    let s = |v: u64| format!("{:.2} s", v as f64 / 1000.0);
    for (dep, d) in &p.summary.deadlines_by_dep {
        t.rows.push(vec![
            dep.clone(),
            s(d.start_ms),
            s(d.end_ms),
            s(d.min_ms),
            s(d.max_ms),
            d.changes.to_string(),
            d.source.as_str().to_string(),
        ]);
    }
    t
}

/// The scenario's auth profiles: id → dep (`PROVIDER/REGION/FP`, the lane and breaker name)
/// → provider and region.
pub(crate) fn profiles(r: &Report) -> Table {
    let mut t = Table::new(
        &["profile", "dep", "provider", "region"],
        &[false, false, false, false],
    );
    for p in &r.profiles {
        t.rows.push(vec![
            if p.implicit {
                format!("{} (implicit)", p.id)
            } else {
                p.id.clone()
            },
            p.dep.clone(),
            p.provider.clone(),
            p.region.clone(),
        ]);
    }
    t
}

fn applied(f: &FaultWindow) -> String {
    match (f.applied.first(), f.applied.last()) {
        _ if f.applied_count == 0 => "never".into(),
        (Some(a), Some(b)) if f.applied_count == 1 || a.t_ms == b.t_ms => {
            format!("{}× at {}", f.applied_count, secs(a.t_ms as i64))
        }
        (Some(a), Some(b)) => format!(
            "{}× from {} to {}",
            f.applied_count,
            secs(a.t_ms as i64),
            secs(b.t_ms as i64)
        ),
        _ => format!("{}×", f.applied_count),
    }
}

/// Every `[[fault]]` with its whole scope and, per policy run, which requests it applied to.
pub(crate) fn faults(r: &Report) -> Table {
    let mut head: Vec<String> = [
        "#", "route", "scope", "kind", "detail", "from", "until", "lanes",
    ]
    .map(String::from)
    .to_vec();
    head.extend(r.policies.iter().map(|p| format!("applied ({})", p.policy)));
    let mut t = Table {
        numeric: head.iter().map(|h| h == "#").collect(),
        head,
        rows: Vec::new(),
    };
    let Some(first) = r.policies.first() else {
        return t;
    };
    for f in &first.fault_windows {
        let mut row = vec![
            (f.index + 1).to_string(),
            f.route.clone(),
            f.scope(),
            f.kind.clone(),
            f.detail.clone(),
            secs(f.from_ms as i64),
            f.until_ms.map_or("end".into(), |u| secs(u as i64)),
            f.lanes.join(", "),
        ];
        for p in &r.policies {
            row.push(
                p.fault_windows
                    .iter()
                    .find(|g| g.index == f.index)
                    .map_or("n/a".into(), applied),
            );
        }
        t.rows.push(row);
    }
    t
}

/// The one sentence that says which clock the report's times are in, with the wall-clock
/// equivalent (`×4: 40 s of scenario time took 10.0 s of wall clock`).
pub(crate) fn time_base(r: &Report) -> String {
    if r.time_base == TimeBase::Wall {
        return format!(
            "Times are wall clock since each policy run started (a report from before times \
             were said in scenario time): at ×{} they are the scenario's times divided by {}.",
            r.speed, r.speed
        );
    }
    let mut s = String::from(
        "All times are scenario time, as the scenario file counts them (ms since the run start)",
    );
    if r.speed.get() != 1.0 {
        let runs: Vec<String> = r
            .policies
            .iter()
            .map(|p| {
                format!(
                    "{}: {:.1} s of scenario time took {:.1} s",
                    p.policy,
                    p.elapsed_ms as f64 / 1000.0,
                    p.wall_elapsed_ms as f64 / 1000.0
                )
            })
            .collect();
        s.push_str(&format!(
            "; the run went ×{} faster on the wall clock ({}). Only the replay lag and the wall-clock latency columns are wall clock.",
            r.speed,
            runs.join("; ")
        ));
    } else {
        s.push_str(", which at speed 1 is the wall clock.");
    }
    s
}

/// With `[prometheus]`: one row per `[[expect.alert]]` — the rule, what was expected, when
/// Prometheus had it fire and resolve, when its notification arrived, and the row's mark.
pub fn alerts(p: &PolicyReport) -> Option<Table> {
    let part = p.alerts.as_ref()?;
    let mut t = Table::new(
        &[
            "rule",
            "expected",
            "fired at",
            "resolved at",
            "notified at",
            "ok",
        ],
        &[false, false, true, true, true, false],
    );
    let at = |v: Option<i64>| v.map_or("—".to_string(), secs);
    for a in &part.table {
        t.rows.push(vec![
            a.rule.clone(),
            a.expected.clone(),
            at(a.fired_ms),
            at(a.resolved_ms),
            at(a.notified_ms),
            super::lead::mark(a.status).to_string(),
        ]);
    }
    Some(t)
}

/// Synthetic health checks per dep: canary calls, failures, and the longest canary/breaker
/// disagreement any scrape saw, in scenario seconds like every other time (the gauge counts
/// wall seconds; the report builder multiplied by the speed).
pub fn health(p: &PolicyReport) -> Table {
    let mut t = Table::new(
        &["dep", "canaries", "failed", "max disagreement"],
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
