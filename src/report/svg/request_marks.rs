//! The marks of the request lanes besides the requests themselves ([`super::requests`]): the
//! warm-up band (its own scale: the warm-up ran before the run's clock), the turns lane (each
//! turn a span from due to answer, or binned), a gateway's decisions above the lane they name
//! (its cooldowns as hatched spans on the lane), the rotation and fallback arrows read from the
//! sequence, and the block's legend (only what it shows).

use std::collections::BTreeSet;
use std::fmt::Write;

use super::esc;
use super::geom::{LABEL_W, LANE_H, RIGHT, Scale, W, pack_rows, s1};
use super::lanes::Note;
use super::request_style::{STRIP_H, legend_w, outcome_color, outcome_label};
use crate::report::model::FaultWindow;
use crate::report::requests::{DecisionMark, RequestLanes, TurnLane, WarmupBand};

const ROTATION: &str = "#111827";
const FALLBACK: &str = "#db2777";
const COOLDOWN: &str = "#ea580c";
const RETRY: &str = "#2563eb";
const TURN_OK: &str = "#15803d";
const TURN_BAD: &str = "#b91c1c";
/// Decision labels per lane (every decision keeps its mark and tooltip).
const MAX_LABELS: usize = 5;

/// The arrowheads the block's arrows use.
pub(super) const DEFS: &str = r##"<defs><marker id="arrow-rot" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#111827"/></marker><marker id="arrow-fb" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#db2777"/></marker></defs>"##;

/// The warm-up band: greyed, on its own scale from the warm-up's start (the upstream ready,
/// before a gateway starts) to the run clock's start, a gateway's start-up (before its warm-up
/// turns, `turns_ms` long) hatched; returns its height.
pub(super) fn warmup(
    o: &mut String,
    w: &WarmupBand,
    turns_ms: Option<u64>,
    sc: &Scale,
    y: f64,
) -> f64 {
    let span = w.before_clock_ms.max(1) as f64;
    let x = |t: u64| LABEL_W + (t.min(w.before_clock_ms) as f64 / span) * sc.plot_w();
    let mut names: Vec<(String, u64)> = Vec::new();
    for r in &w.requests {
        match names.iter_mut().find(|(n, _)| *n == r.lane) {
            Some(n) => n.1 += 1,
            None => names.push((r.lane.clone(), 1)),
        }
    }
    let to = names
        .iter()
        .map(|(n, c)| format!("{n} ×{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let shown = if (w.requests.len() as u64) < w.total {
        format!(" (first {} drawn)", w.requests.len())
    } else {
        String::new()
    };
    let _ = write!(
        o,
        r##"<g class="warmup"><text x="{}" y="{:.1}" text-anchor="end" fill="#6b7280">warm-up</text><text x="{}" y="{:.1}" text-anchor="end" fill="#9ca3af" font-size="10">before the clock · {}</text><rect x="{LABEL_W}" y="{y:.1}" width="{:.1}" height="{LANE_H}" fill="#f3f4f6" stroke="#d1d5db" stroke-dasharray="4 3"/>"##,
        LABEL_W - 8.0,
        y + 9.0,
        LABEL_W - 8.0,
        y + 21.0,
        s1(w.before_clock_ms),
        sc.plot_w()
    );
    let startup = turns_ms.map(|d| w.before_clock_ms.saturating_sub(d)).filter(|s| *s > 0);
    if let Some(s) = startup {
        let _ = write!(
            o,
            r##"<rect class="startup" x="{LABEL_W}" y="{:.1}" width="{:.1}" height="{:.1}" fill="url(#notrun)"><title>the gateway starting, before its first warm-up turn: {}</title></rect><text x="{:.1}" y="{:.1}" fill="#6b7280" font-size="10">gateway start-up {}</text><text x="{:.1}" y="{:.1}" fill="#6b7280" font-size="10">warm-up turns {}</text>"##,
            y + 1.0,
            (x(s) - LABEL_W).max(0.0),
            LANE_H - 2.0,
            s1(s),
            LABEL_W + 6.0,
            y + 14.0,
            s1(s),
            (x(s) + 6.0).min(W - RIGHT - 120.0),
            y + 14.0,
            s1(w.before_clock_ms - s)
        );
    }
    for r in &w.requests {
        let _ = write!(
            o,
            r#"<rect class="warmup-request" x="{:.1}" y="{:.1}" width="2.5" height="{:.1}" fill="{}" fill-opacity="0.45"><title>warm-up request {:.3} s after the warm-up began · {} · {}</title></rect>"#,
            x(r.t_ms) - 1.25,
            y + 3.0,
            LANE_H - 6.0,
            outcome_color(&r.outcome, ""),
            r.t_ms as f64 / 1000.0,
            esc(&r.lane),
            esc(&r.outcome)
        );
    }
    let note = format!(
        "{}{shown} before the run's clock ({to}): never faulted, never judged · its own scale: {} here, the run's clock starts at its right end",
        crate::util::text::count(w.total as usize, "request"),
        s1(w.before_clock_ms)
    );
    let _ = write!(
        o,
        r##"<text x="{LABEL_W}" y="{:.1}" fill="#6b7280" font-size="10">{}</text></g>"##,
        y + LANE_H + 11.0,
        esc(&note)
    );
    LANE_H + 18.0
}

fn turn_color(ok: bool) -> &'static str {
    if ok { TURN_OK } else { TURN_BAD }
}

/// The turns lane: each turn a span from due to its answer (rows packed so none overlap), its
/// outcome at its end; or, binned, a bar per bin of turns due, stacked by outcome. Returns its
/// height.
pub(super) fn turns(o: &mut String, t: &TurnLane, sc: &Scale, limit: u64, y: f64) -> f64 {
    let answered = t.spans.iter().filter(|s| s.ok).count();
    let sub = if t.bins.is_some() {
        format!("{} sent · binned by when due", t.total)
    } else {
        format!("{} sent · {answered} answered", t.total)
    };
    let ext: Vec<(f64, f64)> = t
        .spans
        .iter()
        .map(|s| (sc.x(s.due_ms), sc.x(s.end_ms.min(limit)).max(sc.x(s.due_ms) + 3.0)))
        .collect();
    let rows = pack_rows(&ext, 2.0);
    let n_rows = rows.iter().max().map_or(1, |r| r + 1);
    let row_h = ((LANE_H - 4.0) / n_rows as f64).clamp(2.0, 9.0);
    let h = (n_rows as f64 * row_h + 4.0).max(LANE_H);
    let _ = write!(
        o,
        r##"<g class="turns"><text x="{}" y="{:.1}" text-anchor="end" fill="#111827">turns</text><text x="{}" y="{:.1}" text-anchor="end" fill="#6b7280" font-size="10">{}</text><rect x="{LABEL_W}" y="{y:.1}" width="{:.1}" height="{h:.1}" fill="#fafafa" stroke="#e5e7eb"/>"##,
        LABEL_W - 8.0,
        y + 9.0,
        LABEL_W - 8.0,
        y + 21.0,
        esc(&sub),
        sc.plot_w()
    );
    let mut notes = Vec::new();
    for (i, s) in t.spans.iter().enumerate().filter(|(_, s)| s.due_ms <= limit) {
        let (x0, x1) = ext[i];
        let ty = y + 2.0 + rows[i] as f64 * row_h;
        let c = turn_color(s.ok);
        let _ = write!(
            o,
            r#"<g class="turn" data-outcome="{}"><rect x="{x0:.1}" y="{ty:.1}" width="{:.1}" height="{:.1}" fill="{c}" fill-opacity="0.25" stroke="{c}"/><rect x="{x0:.1}" y="{ty:.1}" width="2" height="{:.1}" fill="{c}"/><title>turn (line {}) due {} · {} at {} ({} after due)</title></g>"#,
            esc(&s.outcome),
            (x1 - x0).max(3.0),
            (row_h - 1.0).max(1.5),
            (row_h - 1.0).max(1.5),
            s.line + 1,
            s1(s.due_ms),
            esc(&s.outcome),
            s1(s.end_ms),
            s1(s.end_ms.saturating_sub(s.due_ms))
        );
        if t.spans.len() <= 8 {
            notes.push(Note {
                x: x1 - 4.0,
                text: format!(
                    "{} {} after {}",
                    if s.ok { "✓" } else { "✗" },
                    s.outcome.replace('_', " "),
                    s1(s.end_ms.saturating_sub(s.due_ms))
                ),
                color: c,
                class: "turn-label",
            });
        }
    }
    if let Some(b) = &t.bins {
        let mut per: std::collections::BTreeMap<u64, Vec<(&str, u64)>> = Default::default();
        for c in &b.counts {
            per.entry(c.bin).or_default().push((c.outcome.as_str(), c.n));
        }
        let max = per
            .values()
            .map(|v| v.iter().map(|c| c.1).sum::<u64>())
            .max()
            .unwrap_or(1);
        for (bin, cs) in per {
            let from = bin.saturating_mul(b.width_ms);
            if from > limit {
                continue;
            }
            let x0 = sc.x(from);
            let w = (sc.x(from.saturating_add(b.width_ms)) - x0 - 0.6).max(1.0);
            let mut bottom = y + h - 2.0;
            let title: Vec<String> = cs.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let _ = write!(
                o,
                r#"<g class="turn-bin"><title>turns due {}–{}: {}</title>"#,
                s1(from),
                s1(from.saturating_add(b.width_ms)),
                esc(&title.join(", "))
            );
            for (k, n) in cs {
                let bh = (n as f64 / max.max(1) as f64 * (h - 4.0)).max(1.0);
                bottom -= bh;
                let _ = write!(
                    o,
                    r#"<rect x="{x0:.1}" y="{bottom:.1}" width="{w:.1}" height="{bh:.1}" fill="{}" fill-opacity="0.6"/>"#,
                    turn_color(k == "answered")
                );
            }
            o.push_str("</g>");
        }
    }
    let lh = super::lanes::annotate(o, &notes, y + h + 2.0);
    o.push_str("</g>");
    h + lh + 6.0
}

/// The cooldowns a gateway wrote for the lane at `y` (its `profile_failure_state` decisions
/// with an end), hatched along the lane's bottom.
pub(super) fn cooldowns(o: &mut String, ds: &[&DecisionMark], sc: &Scale, limit: u64, y: f64) {
    for d in ds.iter().filter(|d| d.t_ms <= limit) {
        let Some(until) = d.until_ms.filter(|u| *u > d.t_ms) else {
            continue;
        };
        let (x, w) = sc.span(d.t_ms, until.min(sc.end));
        let _ = write!(
            o,
            r#"<rect class="gateway-cooldown" x="{x:.1}" y="{:.1}" width="{w:.1}" height="6" fill="url(#cool)" stroke="{COOLDOWN}" stroke-width="0.8"><title>cooldown written by the gateway at {} until {} ({})</title></rect>"#,
            y + LANE_H - 6.5,
            s1(d.t_ms),
            s1(until),
            esc(&d.detail)
        );
    }
}

/// The symbol of a decision event.
fn symbol(event: &str) -> (&'static str, &'static str) {
    match event {
        "rotate_profile" => ("M-4,-4 l8,4 l-8,4 z", ROTATION),
        "fallback_model" => ("M0,-4.5 l4.5,4.5 l-4.5,4.5 l-4.5,-4.5 z", FALLBACK),
        "candidate_failed" | "candidate_succeeded" => {
            ("M-3.5,-3.5 l7,7 m0,-7 l-7,7", FALLBACK)
        }
        "same_model_retry" => ("M-3,0 a3,3 0 1,0 6,0 a3,3 0 1,0 -6,0", RETRY),
        "profile_failure_state" => ("M-4,-3.5 l8,0 l-4,7 z", COOLDOWN),
        _ => ("M-3.5,-3.5 h7 v7 h-7 z", "#6b7280"),
    }
}

fn stroked(event: &str) -> bool {
    matches!(event, "candidate_failed" | "candidate_succeeded")
}

/// The decisions of the lane at `y` as symbols in the strip above it; returns the labels of
/// the decisions that change the picture (rotations, fallbacks, cooldowns, stops), at most a
/// few.
pub(super) fn decisions(
    o: &mut String,
    ds: &[&DecisionMark],
    sc: &Scale,
    limit: u64,
    y: f64,
) -> Vec<Note> {
    let cy = y - STRIP_H / 2.0;
    let mut notes = Vec::new();
    let mut more = 0;
    for d in ds.iter().filter(|d| d.t_ms <= limit) {
        let x = sc.x(d.t_ms);
        let (path, color) = symbol(&d.event);
        let paint = if stroked(&d.event) {
            format!(r#"fill="none" stroke="{color}" stroke-width="1.8""#)
        } else {
            format!(r#"fill="{color}""#)
        };
        let _ = write!(
            o,
            r#"<g class="decision" data-event="{}" transform="translate({x:.1},{cy:.1})"><path d="{path}" {paint}/><title>gateway log at {}: {} {}</title></g>"#,
            esc(&d.event),
            s1(d.t_ms),
            esc(&d.event),
            esc(&d.detail)
        );
        let labelled = matches!(
            d.event.as_str(),
            "rotate_profile" | "fallback_model" | "profile_failure_state" | "chain_stopped"
        );
        if labelled {
            if notes.len() < MAX_LABELS {
                let what = match d.event.as_str() {
                    "profile_failure_state" => "cooldown".to_string(),
                    e => e.replace('_', " "),
                };
                let mut text = format!("{what} {}", d.detail);
                if let Some(u) = d.until_ms {
                    let _ = write!(text, " until {}", s1(u));
                }
                notes.push(Note {
                    x: x - 4.0,
                    text: text.trim().to_string(),
                    color,
                    class: "decision-label",
                });
            } else {
                more += 1;
            }
        }
    }
    if more > 0 {
        notes.push(Note {
            x: notes.last().map_or(LABEL_W, |n| n.x + 160.0),
            text: format!("… {more} more (see the tooltips)"),
            color: "#6b7280",
            class: "decision-label",
        });
    }
    notes
}

/// The rotation and fallback arrows, from the faulted request to the next one on its new lane
/// (`mids`: each lane's middle).
pub(super) fn arrows(o: &mut String, q: &RequestLanes, mids: &[f64], sc: &Scale, limit: u64) {
    let sets = [
        (&q.rotations, ROTATION, "arrow-rot", "", "rotation"),
        (&q.fallbacks, FALLBACK, "arrow-fb", r#" stroke-dasharray="5 3""#, "fallback"),
    ];
    for (list, color, marker, dash, class) in sets {
        for m in list.iter().filter(|m| m.to_ms <= limit) {
            let (Some(y0), Some(y1)) = (mids.get(m.from_lane), mids.get(m.to_lane)) else {
                continue;
            };
            let (x0, x1) = (sc.x(m.from_ms), sc.x(m.to_ms));
            let bend = if (y1 - y0).abs() < 1.0 { -14.0 } else { 0.0 };
            let cx = (x0 + x1) / 2.0 + 6.0;
            let _ = write!(
                o,
                r#"<path class="seq-{class}" d="M{x0:.1},{y0:.1} Q{cx:.1},{:.1} {x1:.1},{y1:.1}" fill="none" stroke="{color}" stroke-width="1.6"{dash} marker-end="url(#{marker})"><title>{class} read from the sequence: the request at {} was faulted, the next went at {}</title></path>"#,
                (y0 + y1) / 2.0 + bend,
                s1(m.from_ms),
                s1(m.to_ms)
            );
        }
    }
}

/// The block's legend: the outcomes it shows (with their fault), then the other marks it has;
/// returns its height.
pub(super) fn legend(o: &mut String, q: &RequestLanes, faults: &[FaultWindow], y: f64) -> f64 {
    let mut outcomes: BTreeSet<(String, Option<usize>)> = q
        .requests
        .iter()
        .filter(|r| !r.canary)
        .map(|r| (r.outcome.clone(), r.fault))
        .collect();
    if let Some(b) = &q.bins {
        outcomes.extend(b.counts.iter().map(|c| (c.outcome.clone(), c.fault)));
    }
    let mut items: Vec<(String, String)> = outcomes
        .iter()
        .map(|(k, f)| {
            let detail = f
                .and_then(|i| faults.iter().find(|w| w.index == i))
                .map_or("", |w| w.detail.as_str());
            (
                format!(
                    r#"<rect x="4" width="3" height="12" fill="{}"/>"#,
                    outcome_color(k, detail)
                ),
                format!("request: {}", outcome_label(k, *f, faults)),
            )
        })
        .collect();
    let mut add = |on: bool, shape: &str, label: &str| {
        if on {
            items.push((shape.to_string(), label.to_string()));
        }
    };
    add(
        q.requests.iter().any(|r| r.probe),
        r##"<circle cx="6" cy="4" r="3" fill="#fff" stroke="#111827" stroke-width="1.4"/>"##,
        "breaker probe",
    );
    add(
        q.requests.iter().any(|r| r.canary),
        r##"<rect x="5" y="5" width="2" height="7" fill="#9ca3af"/>"##,
        "canary",
    );
    add(
        q.bins.is_some(),
        r##"<rect x="0" y="6" width="4" height="6" fill="#16a34a"/><rect x="5" y="2" width="4" height="10" fill="#16a34a"/><rect x="5" y="0" width="4" height="2" fill="#dc2626"/>"##,
        "binned: bar height = requests in the bin",
    );
    add(
        q.warmup.is_some(),
        r##"<rect width="12" height="12" fill="#f3f4f6" stroke="#9ca3af" stroke-dasharray="3 2"/>"##,
        "warm-up, before the clock",
    );
    let turns = q.turns.as_ref();
    add(
        turns.is_some_and(|t| t.spans.iter().any(|s| s.ok) || t.bins.is_some()),
        r##"<rect y="3" width="12" height="6" fill="#15803d" fill-opacity="0.25" stroke="#15803d"/>"##,
        "turn due → answered",
    );
    add(
        turns.is_some_and(|t| t.spans.iter().any(|s| !s.ok) || t.bins.is_some()),
        r##"<rect y="3" width="12" height="6" fill="#b91c1c" fill-opacity="0.25" stroke="#b91c1c"/>"##,
        "turn due → failed",
    );
    add(
        !q.rotations.is_empty(),
        r##"<path d="M0,10 Q6,2 12,2" fill="none" stroke="#111827" stroke-width="1.6"/>"##,
        "rotation (in a turn)",
    );
    add(
        !q.fallbacks.is_empty(),
        r##"<path d="M0,10 Q6,2 12,2" fill="none" stroke="#db2777" stroke-width="1.6" stroke-dasharray="4 2"/>"##,
        "fallback (in a turn)",
    );
    add(
        q.moves_unread,
        r##"<text x="6" y="10" text-anchor="middle" fill="#6b7280" font-size="10">?</text>"##,
        "rotations and fallbacks unknown: no request carried its turn",
    );
    add(
        q.decisions.iter().any(|d| d.until_ms.is_some()),
        r##"<rect y="3" width="12" height="6" fill="url(#cool)" stroke="#ea580c"/>"##,
        "cooldown the gateway wrote",
    );
    let events: BTreeSet<&str> = q.decisions.iter().map(|d| d.event.as_str()).collect();
    for e in events {
        let (path, color) = symbol(e);
        let paint = if stroked(e) {
            format!(r#"fill="none" stroke="{color}" stroke-width="1.8""#)
        } else {
            format!(r#"fill="{color}""#)
        };
        items.push((
            format!(r#"<path transform="translate(6,6)" d="{path}" {paint}/>"#),
            format!("gateway: {}", e.replace('_', " ")),
        ));
    }
    let mut lx = LABEL_W;
    let mut ly = y + 10.0;
    o.push_str(r#"<g class="requests-legend">"#);
    for (shape, label) in items {
        let w = 16.0 + legend_w(&label);
        if lx + w > W - RIGHT {
            lx = LABEL_W;
            ly += 18.0;
        }
        let _ = write!(
            o,
            r##"<g transform="translate({lx:.1},{:.1})">{shape}</g><text x="{:.1}" y="{ly:.1}" fill="#374151" font-size="11">{}</text>"##,
            ly - 10.0,
            lx + 16.0,
            esc(&label)
        );
        lx += w + 12.0;
    }
    o.push_str("</g>");
    ly - y + 10.0
}
