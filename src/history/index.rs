//! The report dir's `index.md` and `index.html`: a table of every run linking to its report
//! (notes for what is not a readable run), and per scenario one small SVG plot per key figure
//! over its runs, the runs that did not pass marked. Same CSS and palette as report.html.

use std::fmt::Write;

use super::rows::{Row, columns};
use crate::report::html::CSS;
use crate::report::svg::esc;
use crate::verdict::drift::show;

/// The scenarios of `rows`, in order of first appearance.
fn scenarios(rows: &[Row]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for s in rows.iter().filter_map(|r| r.scenario.as_deref()) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

fn runs_of<'a>(rows: &'a [Row], scenario: &str) -> Vec<&'a Row> {
    rows.iter()
        .filter(|r| r.scenario.as_deref() == Some(scenario))
        .collect()
}

/// A check's witness as a cell (`not recorded` for a report written before witnesses).
fn witness(c: &super::rows::Check) -> String {
    if c.witness.is_empty() {
        "not recorded".into()
    } else {
        c.witness.line()
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// index.md.
pub fn markdown(rows: &[Row]) -> String {
    let runs = rows.iter().filter(|r| r.note.is_none()).count();
    let mut o = format!("# Rehearsal history\n\n{runs} run(s), oldest first.\n\n");
    o.push_str("| started | scenario | system under test | verdict | expectations | drift | report |\n|---|---|---|---|---|---|---|\n");
    for r in rows.iter().filter(|r| r.note.is_none()) {
        let verdict = match &r.reason {
            Some(w) => format!("{} ({})", r.verdict.as_deref().unwrap_or(""), md_cell(w)),
            None => r.verdict.clone().unwrap_or_default(),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | [{}]({}/report.md) |",
            r.started_at.as_deref().unwrap_or(""),
            md_cell(r.scenario.as_deref().unwrap_or("")),
            md_cell(r.system.as_deref().unwrap_or("")),
            if r.failed() { format!("**{verdict}**") } else { verdict },
            r.counts_text(),
            if r.drift.is_empty() { String::new() } else { format!("⚠ {}", md_cell(&r.drift_text().join(", "))) },
            r.dir,
            r.dir
        );
    }
    let checks: Vec<(&Row, &super::rows::Check)> = rows
        .iter()
        .flat_map(|r| r.checks.iter().filter(|c| c.shown()).map(move |c| (r, c)))
        .collect();
    if !checks.is_empty() {
        o.push_str("\n## Checks that did not pass, and drift checks\n\n| run | policy | kind | subject | status | observed | witness |\n|---|---|---|---|---|---|---|\n");
        for (r, c) in checks {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} | {} |",
                md_cell(&r.dir),
                md_cell(&c.policy),
                c.kind,
                md_cell(c.subject.as_deref().unwrap_or("")),
                c.status,
                md_cell(&c.observed),
                md_cell(&witness(c))
            );
        }
    }
    let notes: Vec<&Row> = rows.iter().filter(|r| r.note.is_some()).collect();
    if !notes.is_empty() {
        o.push_str("\n## Not listed as runs\n\n| entry | note |\n|---|---|\n");
        for r in notes {
            let _ = writeln!(o, "| {} | {} |", md_cell(&r.dir), md_cell(r.note.as_deref().unwrap_or("")));
        }
    }
    for s in scenarios(rows) {
        let runs = runs_of(rows, s);
        let cols = columns(&runs);
        if cols.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\n## Key figures: {}\n", md_cell(s));
        o.push_str("| figure |");
        for r in &runs {
            let _ = write!(o, " {} |", r.started_at.as_deref().unwrap_or("").get(..16).unwrap_or(""));
        }
        let _ = writeln!(o, "\n|---|{}", "---|".repeat(runs.len()));
        o.push_str("| verdict |");
        for r in &runs {
            let _ = write!(o, " {} |", r.verdict.as_deref().unwrap_or(""));
        }
        o.push_str("\n| scenario digest |");
        for r in &runs {
            let d = r.scenario_digest.as_deref().map_or("–", crate::scenario::digest::short);
            let _ = write!(o, " {d} |");
        }
        o.push('\n');
        for c in &cols {
            let _ = write!(o, "| {} |", md_cell(c));
            for r in &runs {
                let _ = write!(o, " {} |", r.value(c).map_or("–".into(), |v| show(c, v)));
            }
            o.push('\n');
        }
    }
    o
}

const PW: f64 = 260.0;
const PH: f64 = 90.0;
const PAD: f64 = 10.0;

/// One small plot: the figure's value per run (x: the runs in order), a failed run's point red
/// and ringed, a missing value a grey tick on the axis.
pub fn plot(column: &str, runs: &[&Row]) -> String {
    let values: Vec<Option<f64>> = runs.iter().map(|r| r.value(column)).collect();
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let (lo, hi) = present
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
    let (lo, hi) = if present.is_empty() {
        (0.0, 1.0)
    } else if hi - lo < 1e-9 {
        (lo - 1.0, hi + 1.0)
    } else {
        (lo, hi)
    };
    let n = runs.len().max(1);
    let x = |i: usize| {
        if n == 1 {
            PW / 2.0
        } else {
            PAD + i as f64 * (PW - 2.0 * PAD) / (n - 1) as f64
        }
    };
    let y = |v: f64| PH - PAD - (v - lo) / (hi - lo) * (PH - 2.0 * PAD);
    let mut o = format!(
        r##"<figure class="plot"><svg class="timeline" viewBox="0 0 {PW} {PH}" width="{PW}" height="{PH}" role="img" aria-label="{}"><rect x="0" y="0" width="{PW}" height="{PH}" fill="#f9fafb" stroke="#e5e7eb"/>"##,
        esc(column)
    );
    let line: Vec<String> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", x(i), y(v))))
        .collect();
    if line.len() > 1 {
        let _ = write!(
            o,
            r##"<polyline points="{}" fill="none" stroke="#2563eb" stroke-width="1.5"/>"##,
            line.join(" ")
        );
    }
    for (i, (v, r)) in values.iter().zip(runs).enumerate() {
        let title = format!(
            "{} · {} · {}",
            r.started_at.as_deref().unwrap_or(""),
            r.verdict.as_deref().unwrap_or(""),
            v.map_or("not observed".into(), |v| show(column, v))
        );
        match v {
            Some(v) if r.failed() => {
                let _ = write!(
                    o,
                    r##"<circle class="failed" cx="{:.1}" cy="{:.1}" r="4.5" fill="#d9342b" stroke="#7f1d1d" stroke-width="1.5"><title>{}</title></circle>"##,
                    x(i),
                    y(*v),
                    esc(&title)
                );
            }
            Some(v) => {
                let _ = write!(
                    o,
                    r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="#2563eb"><title>{}</title></circle>"##,
                    x(i),
                    y(*v),
                    esc(&title)
                );
            }
            None => {
                let _ = write!(
                    o,
                    r##"<line x1="{0:.1}" x2="{0:.1}" y1="{1:.1}" y2="{2:.1}" stroke="{3}" stroke-width="2"><title>{4}</title></line>"##,
                    x(i),
                    PH - 6.0,
                    PH - 1.0,
                    if r.failed() { "#d9342b" } else { "#9ca3af" },
                    esc(&title)
                );
            }
        }
    }
    let _ = write!(
        o,
        r##"<text x="4" y="11" font-size="9" fill="#6b7280">{}</text><text x="4" y="{:.0}" font-size="9" fill="#6b7280">{}</text></svg><figcaption>{}</figcaption></figure>"##,
        esc(&show(column, hi)),
        PH - 3.0,
        esc(&show(column, lo)),
        esc(column)
    );
    o
}

/// index.html.
pub fn html(rows: &[Row]) -> String {
    let mut o = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Rehearsal history</title><style>{CSS}\
         figure.plot{{display:inline-block;margin:6px 12px 6px 0}}figure.plot figcaption{{font-size:12px;color:#374151}}\
         tr.failed td{{background:#fef2f2}}</style></head><body>\n<h1>Rehearsal history</h1>\n"
    );
    let runs = rows.iter().filter(|r| r.note.is_none()).count();
    let failed = rows.iter().filter(|r| r.failed()).count();
    let _ = writeln!(
        o,
        "<p>{runs} run(s), oldest first; {failed} did not pass (marked red in the table and the plots).</p>"
    );
    o.push_str("<table><tr><th>started</th><th>scenario</th><th>system under test</th><th>verdict</th><th>expectations</th><th>drift</th><th>report</th></tr>\n");
    for r in rows.iter().filter(|r| r.note.is_none()) {
        let v = r.verdict.as_deref().unwrap_or("");
        let _ = writeln!(
            o,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td><span class=\"badge {}\">{}</span>{}</td><td>{}</td><td>{}</td><td><a href=\"{}/report.html\">{}</a></td></tr>",
            if r.failed() { " class=\"failed\"" } else { "" },
            esc(r.started_at.as_deref().unwrap_or("")),
            esc(r.scenario.as_deref().unwrap_or("")),
            esc(r.system.as_deref().unwrap_or("")),
            esc(v),
            esc(v),
            r.reason.as_deref().map(|w| format!(" <span class=\"muted\">{}</span>", esc(w))).unwrap_or_default(),
            esc(&r.counts_text()),
            if r.drift.is_empty() { String::new() } else { format!("⚠ {}", esc(&r.drift_text().join(", "))) },
            esc(&r.dir),
            esc(&r.dir)
        );
    }
    o.push_str("</table>\n");
    let checks: Vec<(&Row, &super::rows::Check)> = rows
        .iter()
        .flat_map(|r| r.checks.iter().filter(|c| c.shown()).map(move |c| (r, c)))
        .collect();
    if !checks.is_empty() {
        o.push_str("<h2>Checks that did not pass, and drift checks</h2>\n<table><tr><th>run</th><th>policy</th><th>kind</th><th>subject</th><th>status</th><th>observed</th><th>witness</th><th>detail</th></tr>\n");
        for (r, c) in checks {
            let _ = writeln!(
                o,
                "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                if c.status == "fail" { " class=\"failed\"" } else { "" },
                esc(&r.dir),
                esc(&c.policy),
                esc(&c.kind),
                esc(c.subject.as_deref().unwrap_or("")),
                esc(&c.status),
                esc(&c.observed),
                esc(&witness(c)),
                esc(&c.detail)
            );
        }
        o.push_str("</table>\n");
    }
    let notes: Vec<&Row> = rows.iter().filter(|r| r.note.is_some()).collect();
    if !notes.is_empty() {
        o.push_str("<h2>Not listed as runs</h2>\n<table><tr><th>entry</th><th>note</th></tr>\n");
        for r in notes {
            let _ = writeln!(
                o,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(&r.dir),
                esc(r.note.as_deref().unwrap_or(""))
            );
        }
        o.push_str("</table>\n");
    }
    for s in scenarios(rows) {
        let runs = runs_of(rows, s);
        let cols = columns(&runs);
        if cols.is_empty() {
            continue;
        }
        let _ = writeln!(o, "<h2>Key figures: {}</h2>", esc(s));
        for c in &cols {
            o.push_str(&plot(c, &runs));
            o.push('\n');
        }
    }
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row(dir: &str, verdict: &str, open: Option<f64>) -> Row {
        let mut f = BTreeMap::new();
        if let Some(v) = open {
            f.insert("open_ms{openai/default/06bfb5}".to_string(), v);
        }
        Row {
            dir: dir.into(),
            started_at: Some(format!("2026-11-0{}T06:00:00Z", dir.len() % 9)),
            scenario: Some("smoke".into()),
            system: Some("rehearse engine 0.1.0".into()),
            system_kind: Some("engine".into()),
            verdict: Some(verdict.into()),
            reason: None,
            expectations: None,
            figures: [("retry-gate".to_string(), f)].into(),
            drifted: Vec::new(),
            drift: Vec::new(),
            scenario_digest: None,
            checks: Vec::new(),
            note: None,
        }
    }

    #[test]
    fn one_plot_per_figure_failed_runs_marked_notes_listed() {
        let mut rows = vec![
            row("a", "pass", Some(5_000.0)),
            row("bb", "fail", Some(9_000.0)),
            row("ccc", "pass", None),
        ];
        rows.push(Row {
            note: Some("not a run directory of rehearse (left alone)".into()),
            ..row("notes.txt", "pass", None)
        });
        rows[3].verdict = None;
        rows[3].scenario = None;
        // A dep with `/` in its name is still found under a one-arm column.
        assert_eq!(rows[0].value("open_ms{openai/default/06bfb5}"), Some(5_000.0));
        let html = html(&rows);
        assert_eq!(html.matches("<svg").count(), 1, "one figure, one plot");
        assert_eq!(html.matches("class=\"failed\"").count(), 2, "the row and the point");
        assert!(html.contains("notes.txt"));
        assert!(html.contains("not observed"), "the run without the figure has a tick");
        let md = markdown(&rows);
        assert!(md.contains("| **fail** |"), "{md}");
        assert!(md.contains("| open_ms{openai/default/06bfb5} | 5.000s | 9.000s | – |"), "{md}");
        assert!(md.contains("## Not listed as runs"), "{md}");
    }
}
