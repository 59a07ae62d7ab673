//! `scorecard.md` and `scorecard.html` from the scorecard (pure): one row per case, one column
//! per target (its name, kind, gateway version and config digest), one cell each — its class
//! with K of K, whether it meets what the matrix expects, the range of the key figures, the
//! one-line reason and a link to each repeat's report.

use std::fmt::Write as _;

use super::class::Class;
use super::scorecard::{Cell, Column, Scorecard};
use crate::scenario::digest::short;

fn cell_of<'a>(s: &'a Scorecard, case: &str, target: &str) -> Option<&'a Cell> {
    s.cells.iter().find(|c| c.case == case && c.target == target)
}

fn header_text(c: &Column) -> String {
    let mut parts = vec![c.header.kind.clone().unwrap_or_else(|| "?".into())];
    if let Some(v) = &c.header.version {
        parts.push(v.clone());
    }
    if let Some(d) = &c.header.config_digest {
        parts.push(format!("config {}", short(d)));
    }
    if c.speed != 1.0 {
        parts.push(format!("×{}", c.speed));
    }
    parts.join(" · ")
}

fn figures_text(cell: &Cell) -> String {
    let short_name = |n: &str| match n {
        "requests_per_turn_max" => "req/turn≤",
        "answer_ms_max" => "answer ms≤",
        "upstream_requests" => "upstream req",
        "turns_answered" => "answered",
        _ => "?",
    };
    cell.figures
        .iter()
        .map(|(n, r)| format!("{} {}", short_name(n), r.text()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn expected_text(cell: &Cell) -> String {
    let e: Vec<&str> = cell.expected.iter().map(|c| c.as_str()).collect();
    format!(
        "{}{}",
        e.join(" or "),
        if cell.flaky_ok { ", flaky ok" } else { "" }
    )
}

fn summary(s: &Scorecard) -> String {
    let met = s.cells.iter().filter(|c| c.meets).count();
    let mut line = format!(
        "{} of {} cells meet what the matrix expects · {} case(s) × {} target(s) × {} repeat(s) · --jobs {}{} · {:.0} s",
        met,
        s.cells.len(),
        s.cases.len(),
        s.targets.len(),
        s.repeats,
        s.jobs,
        s.starts.map(|n| format!(" --starts {n}")).unwrap_or_default(),
        s.duration_ms as f64 / 1000.0
    );
    if let Some(why) = &s.stopped {
        let _ = write!(line, " · stopped ({why}): runs not started are not_run");
    }
    line
}

/// `scorecard.md`.
pub fn markdown(s: &Scorecard) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "# Scorecard `{}`: {}\n",
        s.matrix,
        if s.stopped.is_some() {
            "STOPPED"
        } else if s.ok {
            "OK"
        } else {
            "NOT AS EXPECTED"
        }
    );
    if let Some(d) = &s.description {
        let _ = writeln!(o, "{d}\n");
    }
    let _ = writeln!(o, "- {}\n- started {}\n", summary(s), s.started_at);
    let _ = write!(o, "| case |");
    for t in &s.targets {
        let _ = write!(o, " {} ({}) |", t.name, header_text(t).replace('|', "/"));
    }
    let _ = write!(o, "\n|---|");
    for _ in &s.targets {
        let _ = write!(o, "---|");
    }
    o.push('\n');
    for case in &s.cases {
        let _ = write!(o, "| {case} |");
        for t in &s.targets {
            match cell_of(s, case, &t.name) {
                None => {
                    let _ = write!(o, " — |");
                }
                Some(c) => {
                    let mark = if c.meets { "✓" } else { "✗" };
                    let links: Vec<String> = c
                        .runs
                        .iter()
                        .filter_map(|r| {
                            r.report_dir
                                .as_ref()
                                .map(|d| format!("[r{}]({d}/report.md)", r.repeat))
                        })
                        .collect();
                    let _ = write!(
                        o,
                        " {mark} **{}** {}{}{} {} |",
                        c.shown_class(),
                        c.counts_text(),
                        if c.meets {
                            String::new()
                        } else {
                            format!(" (expected {})", expected_text(c))
                        },
                        {
                            let f = figures_text(c);
                            if f.is_empty() { f } else { format!("<br>{f}") }
                        },
                        links.join(" ")
                    );
                }
            }
        }
        o.push('\n');
    }
    let reasons: Vec<&Cell> = s.cells.iter().filter(|c| c.reason.is_some()).collect();
    if !reasons.is_empty() {
        let _ = writeln!(o, "\n## Why\n");
        for c in reasons {
            let _ = writeln!(
                o,
                "- `{}` × `{}` ({}): {}",
                c.case,
                c.target,
                c.shown_class(),
                c.reason.as_deref().unwrap_or("")
            );
        }
    }
    o
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn colour(class: Option<Class>) -> &'static str {
    match class {
        Some(Class::Pass) => "#c8ecc8",
        Some(Class::Fail) => "#f5b8b8",
        Some(Class::CleanError) => "#f8e0a0",
        Some(Class::NotApplicable) => "#dddddd",
        Some(Class::Incomplete) => "#c9d8f0",
        Some(Class::Error) => "#e0b0e8",
        Some(Class::NotRun) => "#ffffff",
        None => "#f5d0b0",
    }
}

/// `scorecard.html`: self-contained (no script, no external file), a colour per class.
pub fn html(s: &Scorecard) -> String {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Scorecard {}</title><style>\
         body{{font-family:system-ui,sans-serif;margin:1.5em}}table{{border-collapse:collapse}}\
         th,td{{border:1px solid #999;padding:.4em .6em;vertical-align:top;font-size:14px}}\
         th small,td small{{color:#333;display:block;font-weight:normal}}\
         td.miss{{outline:3px solid #b00;outline-offset:-3px}}.legend span{{padding:.1em .5em;margin-right:.4em}}\
         </style></head><body>",
        esc(&s.matrix)
    );
    let _ = write!(
        o,
        "<h1>Scorecard <code>{}</code>: {}</h1>",
        esc(&s.matrix),
        if s.stopped.is_some() {
            "stopped"
        } else if s.ok {
            "every cell as expected"
        } else {
            "not as expected"
        }
    );
    if let Some(d) = &s.description {
        let _ = write!(o, "<p>{}</p>", esc(d));
    }
    let _ = write!(o, "<p>{} · started {}</p>", esc(&summary(s)), esc(&s.started_at));
    o.push_str("<p class=\"legend\">");
    for c in Class::ALL {
        let _ = write!(
            o,
            "<span style=\"background:{}\">{}</span>",
            colour(Some(c)),
            c.as_str()
        );
    }
    let _ = write!(
        o,
        "<span style=\"background:{}\">flaky</span> a red outline: not what the matrix expects</p>",
        colour(None)
    );
    o.push_str("<table><tr><th>case</th>");
    for t in &s.targets {
        let _ = write!(
            o,
            "<th>{}<small>{}</small>{}</th>",
            esc(&t.name),
            esc(&header_text(t)),
            t.file
                .as_deref()
                .map(|f| format!("<small>{}</small>", esc(f)))
                .unwrap_or_default()
        );
    }
    o.push_str("</tr>");
    for case in &s.cases {
        let _ = write!(o, "<tr><th>{}</th>", esc(case));
        for t in &s.targets {
            let Some(c) = cell_of(s, case, &t.name) else {
                o.push_str("<td>—</td>");
                continue;
            };
            let links: Vec<String> = c
                .runs
                .iter()
                .filter_map(|r| {
                    r.report_dir.as_ref().map(|d| {
                        format!(
                            "<a href=\"{}/report.html\">r{} {}</a>",
                            esc(d),
                            r.repeat,
                            r.class.as_str()
                        )
                    })
                })
                .collect();
            let _ = write!(
                o,
                "<td class=\"{}{}\" style=\"background:{}\" data-class=\"{}\"><b>{}</b> {}{}<small>{}</small><small>{}</small><small>{}</small></td>",
                c.shown_class(),
                if c.meets { "" } else { " miss" },
                colour(c.class),
                c.shown_class(),
                c.shown_class(),
                esc(&c.counts_text()),
                if c.meets {
                    String::new()
                } else {
                    format!("<small>expected {}</small>", esc(&expected_text(c)))
                },
                esc(&figures_text(c)),
                esc(c.reason.as_deref().unwrap_or("")),
                links.join(" ")
            );
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></body></html>\n");
    o
}
