//! report.html: one self-contained page (inline CSS, inline SVG, no scripts, no external
//! resources) with the verdict and time base, the timeline per policy, the profile table,
//! expected vs observed, the A/B table, fault windows, transitions, outcomes, latency, replay
//! lag, host facts and config.

use std::fmt::Write;

use super::counts::Counts;
use super::lead;
use super::markdown::{ab_rows, flatten};
use super::model::{ExpectStatus, PolicyStatus, Report, Verdict};
use super::svg::{esc, timeline};
use super::table;
use crate::util::speed::RecordedSpeed;
use crate::util::text::count;
use crate::verdict::signed_secs;

pub(crate) const CSS: &str = "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#111827;background:#fff}\
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb}h3{font-size:15px;margin:18px 0 6px}\
.badge{display:inline-block;padding:2px 10px;border-radius:12px;color:#fff;font-weight:600;text-transform:uppercase}\
.pass{background:#2e9e44}.fail{background:#d9342b}.incomplete{background:#f0a800}.error{background:#6b21a8}.not_run{background:#6b7280}\
p.stopped{border-left:4px solid #d9342b;padding:4px 10px;background:#fef2f2;font-weight:600}tr.not-reached td{color:#6b7280;background:#f3f4f6;font-style:italic}\
table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #e5e7eb;padding:3px 8px;text-align:left;vertical-align:top}\
th{background:#f9fafb}tr.bad td{background:#fef2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}\
pre{background:#f9fafb;padding:10px;overflow:auto;font-size:12px}.muted{color:#6b7280}svg.timeline{max-width:100%;height:auto}\
.timebase{background:#eff6ff;border-left:4px solid #2563eb;padding:4px 10px}";

fn badge(v: Verdict) -> String {
    badge_str(v.as_str())
}

/// A verdict or policy status badge (`pass`, `fail`, `incomplete`, `error`, `not_run`).
fn badge_str(s: &str) -> String {
    format!(r#"<span class="badge {0}">{0}</span>"#, esc(s))
}

/// Renders report.html.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let title = format!("Rehearsal {}: {}", r.scenario, r.verdict.as_str());
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(
        o,
        "<h1>Rehearsal <code>{}</code> {}</h1>",
        esc(&r.scenario),
        badge(r.verdict)
    );
    if let Some((stop, rest)) = lead::stop_line(r) {
        let _ = writeln!(
            o,
            "<p class=\"stopped\">{} <span class=\"muted\">({})</span></p>",
            esc(&stop),
            esc(&rest)
        );
    }
    if let Some(reason) = &r.reason {
        let _ = writeln!(o, "<p><strong>Reason:</strong> {}</p>", esc(reason));
    }
    for p in &r.policies {
        if let Some(cap) = &p.upstream_cap {
            let _ = writeln!(
                o,
                "<p><strong>Upstream record cut:</strong> [{}] {}</p>",
                esc(&p.policy),
                esc(&cap.line())
            );
        }
    }
    let _ = writeln!(
        o,
        "<p class=\"tally\">verdict: <strong>{}</strong>: {}</p>",
        r.verdict.as_str(),
        esc(&Counts::of(r).sentence())
    );
    if let Some(t) = lead::traffic_line(r) {
        let _ = writeln!(o, "<p class=\"muted\">traffic: {}</p>", esc(&t));
    }
    if let Some(d) = &r.description {
        let _ = writeln!(o, "<p>{}</p>", esc(d));
    }
    let _ = writeln!(
        o,
        "<p class=\"muted\">started {} · speed ×{} · seed {}{} · schema v{}</p>",
        esc(&r.started_at),
        r.speed,
        r.seed,
        esc(&lead::digest_part(r)),
        r.schema_version
    );
    let _ = writeln!(o, "<p class=\"timebase\">{}</p>", esc(&table::time_base(r)));
    let bad: Vec<String> = r
        .policies
        .iter()
        .flat_map(|p| {
            p.expectations
                .iter()
                .filter(|e| e.status == ExpectStatus::Fail)
                .map(move |e| format!("[{}] {}", p.policy, e.detail))
        })
        .collect();
    if !bad.is_empty() {
        o.push_str("<ul class=\"mismatches\">");
        for b in bad {
            let _ = write!(o, "<li>✗ {}</li>", esc(&b));
        }
        o.push_str("</ul>\n");
    }
    o.push_str("<h2>Timeline</h2>\n");
    for p in &r.policies {
        let body = if p.status == PolicyStatus::NotRun {
            "<p class=\"muted\">Not run.</p>".to_string()
        } else {
            timeline(r, p)
        };
        let _ = writeln!(o, "<h3>Policy <code>{}</code></h3>\n{body}", esc(&p.policy));
    }
    // Several targets, versions side by side, or the one target (none for the embedded engine).
    if let Some(t) = &r.targets {
        super::targets::html(t, &mut o);
    } else if let Some(v) = &r.versions {
        super::versions::html(v, &mut o);
    } else if let Some(t) = &r.target {
        super::target_section::html_block(t, "Target", &mut o);
    }
    super::target_section::client_turns_html(r, &mut o);
    o.push_str("<h2>Profiles</h2>\n");
    table::profiles(r).html(&mut o);
    o.push_str("<h2>Expected vs observed</h2>\n");
    for p in &r.policies {
        let _ = writeln!(
            o,
            "<h3>Policy <code>{}</code> {}</h3>",
            esc(&p.policy),
            badge_str(p.status.as_str())
        );
        o.push_str("<table><tr><th>ok</th><th>kind</th><th>dep</th><th>expected</th><th>observed</th><th>delta</th><th>witness</th><th>detail</th></tr>\n");
        for e in &p.expectations {
            let _ = writeln!(
                o,
                "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
                match e.status {
                    ExpectStatus::Pass => "",
                    ExpectStatus::Fail => " class=\"bad\"",
                    ExpectStatus::NotReached | ExpectStatus::NoBaseline => " class=\"not-reached\"",
                },
                lead::mark(e.status),
                e.kind.as_str(),
                esc(e.dep.as_deref().unwrap_or("")),
                esc(&e.expected),
                esc(&e.observed),
                e.delta_ms.map_or(String::new(), signed_secs),
                esc(&lead::witness(e)),
                esc(&e.detail)
            );
        }
        o.push_str("</table>\n");
    }
    if r.policies.iter().any(|p| p.alerts.is_some()) {
        o.push_str("<h2>Alerts</h2>\n");
        for p in &r.policies {
            if let Some(t) = table::alerts(p) {
                let _ = writeln!(o, "<h3>Policy <code>{}</code></h3>", esc(&p.policy));
                t.html(&mut o);
            }
        }
    }
    let engine = r.target.is_none();
    if engine {
        o.push_str("<h2>Policies side by side</h2>\n<table><tr><th></th>");
        for p in &r.policies {
            let _ = write!(o, "<th><code>{}</code></th>", esc(&p.policy));
        }
        o.push_str("</tr>\n");
        for (label, vals) in ab_rows(&r.policies) {
            let _ = write!(o, "<tr><td>{}</td>", esc(&label));
            for v in vals {
                let _ = write!(o, "<td class=\"num\">{}</td>", esc(&v));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
    }
    if let Some(f) = &r.fleet {
        super::fleet::html(&mut o, f, r.duration_ms);
    }
    o.push_str(&super::drift_render::html(r.drift.as_ref()));
    o.push_str("<h2>Fault windows</h2>\n");
    table::faults(r).html(&mut o);
    for p in r.policies.iter().filter(|p| lead::engine_arm(r, p)) {
        policy_tables(&mut o, p, r.speed);
    }
    let _ = writeln!(
        o,
        "<h2>Replay schedule lag (wall clock)</h2><p>{} sent; lag p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms.</p>",
        count(r.replay.sent as usize, "request"),
        r.replay.lag_ms.p50,
        r.replay.lag_ms.p99,
        r.replay.lag_ms.max
    );
    o.push_str("<h2>Host and TCP stack</h2>\n<table>");
    let mut host = Vec::new();
    flatten("", &r.host, &mut host);
    for (k, v) in host {
        let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", esc(&k), esc(&v));
    }
    o.push_str("</table>\n");
    if !r.contradictions.is_empty() {
        o.push_str("<h3>Contradictions</h3><ul>");
        for c in &r.contradictions {
            let text = c
                .get("message")
                .and_then(|m| m.as_str())
                .map_or_else(|| c.to_string(), str::to_string);
            let _ = write!(o, "<li>{}</li>", esc(&text));
        }
        o.push_str("</ul>\n");
    }
    if !r.notes.is_empty() {
        o.push_str("<h2>Notes</h2>\n<ul class=\"notes\">");
        for n in &r.notes {
            let _ = write!(o, "<li>{}</li>", esc(n));
        }
        o.push_str("</ul>\n");
    }
    super::housekeeping::html(r.housekeeping.as_ref(), &mut o, &|s| esc(s).to_string());
    let _ = writeln!(
        o,
        "<h2>Config</h2><pre>{}</pre>",
        esc(&serde_json::to_string_pretty(&r.config).unwrap_or_default())
    );
    o.push_str("</body></html>\n");
    o
}

fn policy_tables(o: &mut String, p: &super::model::PolicyReport, speed: RecordedSpeed) {
    if p.status == PolicyStatus::NotRun {
        return;
    }
    let _ = writeln!(
        o,
        "<h2>Policy <code>{}</code>: transitions, outcomes, latency</h2>",
        esc(&p.policy)
    );
    let _ = writeln!(o, "<p>{}</p>", esc(&table::timing_note(p)));
    for (title, t) in [
        ("Transitions", table::transitions(p)),
        ("Event log vs scrapes", table::agreement(p)),
        ("Outcomes by dep", table::outcomes(p)),
        ("Latency", table::latency(p, speed)),
        ("Deadlines", table::deadlines(p)),
        ("Health checks", table::health(p)),
    ] {
        if title == "Deadlines" && p.summary.deadlines_by_dep.is_empty() {
            continue;
        }
        let _ = writeln!(o, "<h3>{title}</h3>");
        t.html(o);
    }
}
