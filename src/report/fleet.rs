//! The fleet section of report.md and report.html: the coordination runs side by side per dep
//! (probe spacing over all hosts, spells, closes and their distinct hosts, agreement), each
//! run's hosts, and a picture of every host's lane with the fleet-wide probe arrivals.
//!
//! Longer than 400 lines on purpose: the Markdown and HTML renderings share their rows and
//! lines (the coordinator line, the host cells) and are read together.

use std::fmt::Write as _;

use super::svg::esc;
use crate::engine::BreakerState;
use crate::report::fleet_model::FleetSection;
use crate::report::fleet_model::{DepFleet, FleetRunReport};
use crate::verdict::secs;

fn ms(v: Option<u64>) -> String {
    v.map_or("–".into(), |m| secs(m as i64))
}

/// The side-by-side rows of one dep: (label, one value per run).
fn dep_rows(f: &FleetSection, dep: &str) -> Vec<(String, Vec<String>)> {
    let per: Vec<Option<&DepFleet>> = f
        .runs
        .iter()
        .map(|r| r.deps.iter().find(|d| d.dep == dep))
        .collect();
    let row = |label: &str, g: &dyn Fn(&DepFleet) -> String| {
        (
            label.to_string(),
            per.iter().map(|d| d.map_or("–".into(), g)).collect(),
        )
    };
    let interval = secs(f.probe_interval_ms as i64);
    vec![
        row("probes at the upstream", &|d| d.spacing.probes.to_string()),
        row("min gap between probes", &|d| ms(d.spacing.min_gap_ms)),
        row(&format!("gaps under {interval}"), &|d| {
            d.spacing.gaps_under_interval.to_string()
        }),
        row(&format!("most probes within {interval}"), &|d| {
            d.spacing.max_in_interval.to_string()
        }),
        row(&format!("most from one host within {interval}"), &|d| {
            d.spacing.max_per_host_in_interval.to_string()
        }),
        row("half-open spells (most probes in one)", &|d| {
            format!(
                "{} ({})",
                d.spells.len(),
                d.spells.iter().map(|s| s.probes).max().unwrap_or(0)
            )
        }),
        row("closes (fewest distinct hosts before one)", &|d| {
            format!(
                "{} ({})",
                d.closes.len(),
                d.closes
                    .iter()
                    .map(|c| c.ok_hosts.len())
                    .min()
                    .map_or("–".into(), |m| m.to_string())
            )
        }),
        row("largest spread of hosts entering a state", &|d| {
            ms(d.max_spread_ms)
        }),
    ]
}

fn deps(f: &FleetSection) -> Vec<String> {
    let mut v: Vec<String> = f
        .runs
        .iter()
        .flat_map(|r| {
            r.deps
                .iter()
                .filter(|d| d.spacing.probes > 0)
                .map(|d| d.dep.clone())
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

fn lead(f: &FleetSection) -> String {
    format!(
        "{} hosts (separate processes), probe interval {}{}; times are scenario time, probe \
         arrivals as the upstream saw them.",
        f.hosts,
        secs(f.probe_interval_ms as i64),
        f.clock_skew_ms.map_or(String::new(), |s| format!(
            ", host clocks skewed within ±{}",
            secs(s as i64)
        ))
    )
}

fn outage_line(o: &crate::report::fleet_model::Outage) -> String {
    format!(
        "coordinator down at {}{}: {} hosts fell back to local breakers, {} rejoined{}; {} probes \
         meanwhile, at most {} per host per probe interval",
        secs(o.down_ms as i64),
        o.up_ms
            .map_or(" (not back before the end)".into(), |u| format!(
                ", back at {}",
                secs(u as i64)
            )),
        o.hosts_fell_back,
        o.hosts_rejoined,
        o.rejoin_ms.map_or(String::new(), |r| format!(
            ", the last {} after it was back",
            secs(r as i64)
        )),
        o.probes,
        o.max_per_host_in_interval
    )
}

/// Which coordinator the run's hosts actually used: none, the Redis (where) for the whole run,
/// or the Redis with hosts fallen back to their local breakers (how many, from when, how many
/// still local at the end).
fn coordinator_line(r: &FleetRunReport) -> String {
    let u = &r.coordinator_used;
    if u.kind != "redis" {
        return "coordinator used: none (every host decided alone)".into();
    }
    let at = r
        .coordinator
        .as_deref()
        .map_or(String::new(), |c| format!(" ({c})"));
    if u.hosts_fell_back == 0 {
        return format!(
            "coordinator used: redis{at} on all {} hosts for the whole run",
            r.hosts.len()
        );
    }
    format!(
        "coordinator used: redis{at} with local fallback: {} of {} hosts fell back to their local \
         breakers during the run (the first at {}), {} still local at the end",
        u.hosts_fell_back,
        r.hosts.len(),
        ms(u.first_fallback_ms),
        u.hosts_local_at_end
    )
}

fn host_cells(r: &FleetRunReport) -> Vec<[String; 11]> {
    r.hosts
        .iter()
        .map(|h| {
            [
                h.id.clone(),
                format!("{:+}", h.skew_ms),
                h.sent.to_string(),
                h.failed.to_string(),
                h.coordinator_errors.to_string(),
                h.fell_back.to_string(),
                h.mode.clone(),
                h.transitions.to_string(),
                format!("{:.1}", h.lag_p99_ms),
                format!("{}/{}", h.scrapes_ok, h.scrapes_ok + h.scrape_failures),
                h.exit.clone().unwrap_or_else(|| "ok".into()),
            ]
        })
        .collect()
}

const HOST_HEAD: [&str; 11] = [
    "host",
    "skew ms",
    "sent",
    "failed",
    "coordinator errors",
    "fell back",
    "mode at end",
    "transitions",
    "replay lag p99 ms",
    "scrapes",
    "exit",
];

/// Appends the markdown fleet section.
pub(crate) fn markdown(o: &mut String, f: &FleetSection) {
    o.push_str("\n## Fleet\n\n");
    let _ = writeln!(o, "{}\n", lead(f));
    let names: Vec<String> = f
        .runs
        .iter()
        .map(|r| format!("`{}`", r.coordination))
        .collect();
    for dep in deps(f) {
        let _ = writeln!(o, "### `{dep}` side by side\n");
        let _ = writeln!(
            o,
            "| | {} |\n|---|{}",
            names.join(" | "),
            "---|".repeat(names.len())
        );
        for (label, vals) in dep_rows(f, &dep) {
            let _ = writeln!(o, "| {label} | {} |", vals.join(" | "));
        }
        o.push('\n');
    }
    for r in &f.runs {
        let _ = writeln!(o, "### Coordination `{}`\n", r.coordination);
        let _ = writeln!(o, "- {}", coordinator_line(r));
        for (t, what) in &r.coordinator_faults {
            let _ = writeln!(o, "- at {}: {what}", secs(*t as i64));
        }
        for out in &r.outages {
            let _ = writeln!(o, "- {}", outage_line(out));
        }
        let _ = writeln!(
            o,
            "\n| {} |\n|{}",
            HOST_HEAD.join(" | "),
            "---|".repeat(HOST_HEAD.len())
        );
        for c in host_cells(r) {
            let _ = writeln!(o, "| {} |", c.join(" | "));
        }
        let shown: Vec<String> = r
            .probes
            .iter()
            .take(60)
            .map(|p| {
                format!(
                    "{} {} {}{}",
                    secs(p.t_ms as i64),
                    p.dep,
                    p.host,
                    if p.ok { "" } else { " ✗" }
                )
            })
            .collect();
        let more = r.probes.len().saturating_sub(60) as u64 + r.probes_dropped;
        let _ = writeln!(
            o,
            "\nProbe arrivals (✗: the upstream faulted it){}:\n\n{}\n",
            if more > 0 {
                format!(", the first 60 ({more} more in upstream.jsonl)")
            } else {
                String::new()
            },
            if shown.is_empty() {
                "none".to_string()
            } else {
                shown.join(" · ")
            }
        );
    }
}

fn color(s: BreakerState) -> &'static str {
    match s {
        BreakerState::Closed => "#cfe8cf",
        BreakerState::Open => "#f2b8b5",
        BreakerState::HalfOpen => "#fde59a",
    }
}

/// One run's picture: a lane per host for `dep` (state colours), its probes as ticks, and a
/// top row with every probe the upstream saw.
fn picture(r: &FleetRunReport, dep: &str, end_ms: u64) -> String {
    let (w, left, row, top) = (900.0_f64, 60.0_f64, 16.0_f64, 22.0_f64);
    let x = |t: u64| left + (w - left - 10.0) * (t as f64 / end_ms.max(1) as f64);
    let h = top + row * (r.hosts.len() as f64 + 1.0) + 20.0;
    let mut s = format!(
        "<svg class=\"fleet\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{} lanes per host\">",
        esc(dep)
    );
    let _ = write!(
        s,
        "<text x=\"4\" y=\"{}\" font-size=\"11\">upstream</text>",
        top - 6.0
    );
    for p in r.probes.iter().filter(|p| p.dep == dep) {
        let _ = write!(
            s,
            "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\" stroke=\"{3}\" stroke-width=\"1\"><title>{4} {5}</title></line>",
            x(p.t_ms),
            top - 16.0,
            top - 2.0,
            if p.ok { "#2e7d32" } else { "#c62828" },
            secs(p.t_ms as i64),
            esc(&p.host)
        );
    }
    for (i, host) in r.hosts.iter().enumerate() {
        let y = top + row * i as f64;
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{:.1}\" font-size=\"11\">{}</text>",
            y + row - 4.0,
            esc(&host.id)
        );
        let lane = host.lanes.get(dep).cloned().unwrap_or_default();
        let mut points = lane.clone();
        if points.is_empty() {
            points.push(crate::scrape::StatePoint {
                t_ms: 0,
                state: BreakerState::Closed,
            });
        }
        for (k, p) in points.iter().enumerate() {
            let until = points.get(k + 1).map_or(end_ms, |n| n.t_ms);
            let _ = write!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"/>",
                x(p.t_ms),
                y + 2.0,
                (x(until) - x(p.t_ms)).max(0.5),
                row - 4.0,
                color(p.state)
            );
        }
        for p in r
            .probes
            .iter()
            .filter(|p| p.dep == dep && p.host == host.id)
        {
            let _ = write!(
                s,
                "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\" stroke=\"{3}\" stroke-width=\"1.5\"/>",
                x(p.t_ms),
                y + 1.0,
                y + row - 1.0,
                if p.ok { "#2e7d32" } else { "#c62828" }
            );
        }
    }
    let _ = write!(
        s,
        "<text x=\"{left}\" y=\"{:.1}\" font-size=\"10\">0 s</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text></svg>",
        h - 4.0,
        w - 10.0,
        h - 4.0,
        secs(end_ms as i64)
    );
    s
}

/// Appends the HTML fleet section; `end_ms` is the run's duration (scenario ms).
pub(crate) fn html(o: &mut String, f: &FleetSection, end_ms: u64) {
    o.push_str("<h2>Fleet</h2>\n");
    let _ = writeln!(o, "<p>{}</p>", esc(&lead(f)));
    for dep in deps(f) {
        let _ = write!(
            o,
            "<h3><code>{}</code> side by side</h3><table><tr><th></th>",
            esc(&dep)
        );
        for r in &f.runs {
            let _ = write!(o, "<th><code>{}</code></th>", esc(&r.coordination));
        }
        o.push_str("</tr>\n");
        for (label, vals) in dep_rows(f, &dep) {
            let _ = write!(o, "<tr><td>{}</td>", esc(&label));
            for v in vals {
                let _ = write!(o, "<td class=\"num\">{}</td>", esc(&v));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
        for r in &f.runs {
            let _ = writeln!(
                o,
                "<h4>Coordination <code>{}</code>: <code>{}</code> per host (green: closed, \
                 yellow: half-open, red: open; ticks: probes, red when faulted)</h4>\n{}",
                esc(&r.coordination),
                esc(&dep),
                picture(r, &dep, end_ms)
            );
        }
    }
    for r in &f.runs {
        let _ = writeln!(
            o,
            "<h3>Coordination <code>{}</code></h3>",
            esc(&r.coordination)
        );
        let _ = writeln!(o, "<p>{}</p>", esc(&coordinator_line(r)));
        if !r.coordinator_faults.is_empty() {
            o.push_str("<ul>");
            for (t, what) in &r.coordinator_faults {
                let _ = write!(o, "<li>at {}: {}</li>", secs(*t as i64), esc(what));
            }
            for out in &r.outages {
                let _ = write!(o, "<li>{}</li>", esc(&outage_line(out)));
            }
            o.push_str("</ul>\n");
        }
        o.push_str("<table><tr>");
        for h in HOST_HEAD {
            let _ = write!(o, "<th>{h}</th>");
        }
        o.push_str("</tr>\n");
        for c in host_cells(r) {
            o.push_str("<tr>");
            for v in c {
                let _ = write!(o, "<td>{}</td>", esc(&v));
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fleet_model::{CoordinatorUse, HostRow};

    fn host(id: &str, mode: &str, fell_back: u64) -> HostRow {
        HostRow {
            id: id.into(),
            skew_ms: 0,
            sent: 1,
            failed: 0,
            coordinator_errors: fell_back,
            fell_back,
            mode: mode.into(),
            transitions: 0,
            lag_p99_ms: 0.0,
            scrapes_ok: 1,
            scrape_failures: 0,
            exit: None,
            lanes: Default::default(),
        }
    }

    fn run(kind: &str, hosts: Vec<HostRow>, used: CoordinatorUse) -> FleetRunReport {
        FleetRunReport {
            coordination: kind.into(),
            coordinator: (kind == "redis").then(|| "redis://127.0.0.1:6390".into()),
            coordinator_used: used,
            coordinator_faults: Vec::new(),
            hosts,
            probes: Vec::new(),
            probes_dropped: 0,
            deps: Vec::new(),
            outages: Vec::new(),
        }
    }

    #[test]
    fn the_coordinator_line_says_which_coordinator_the_hosts_used_and_any_fallback() {
        let use_of = |kind: &str, fell: u64, local: u64, first: Option<u64>| CoordinatorUse {
            kind: kind.into(),
            hosts_fell_back: fell,
            hosts_local_at_end: local,
            first_fallback_ms: first,
        };
        let none = run("none", vec![host("h0", "alone", 0)], use_of("none", 0, 0, None));
        assert_eq!(
            coordinator_line(&none),
            "coordinator used: none (every host decided alone)"
        );
        let two = vec![host("h0", "redis", 0), host("h1", "redis", 0)];
        let fine = run("redis", two.clone(), use_of("redis", 0, 0, None));
        assert_eq!(
            coordinator_line(&fine),
            "coordinator used: redis (redis://127.0.0.1:6390) on all 2 hosts for the whole run"
        );
        let fell = run(
            "redis",
            vec![host("h0", "local", 1), host("h1", "redis", 0)],
            use_of("redis", 1, 1, Some(400)),
        );
        let line = coordinator_line(&fell);
        assert!(
            line.contains("with local fallback: 1 of 2 hosts fell back")
                && line.contains("the first at 0.400s")
                && line.contains("1 still local at the end"),
            "{line}"
        );
        let mut md = String::new();
        markdown(
            &mut md,
            &FleetSection {
                hosts: 2,
                clock_skew_ms: None,
                probe_interval_ms: 250,
                runs: vec![fine, fell],
            },
        );
        assert!(md.contains("- coordinator used: redis (redis://127.0.0.1:6390) on all 2"), "{md}");
        assert!(md.contains("- coordinator used: redis (redis://127.0.0.1:6390) with local fallback"), "{md}");
    }
}
