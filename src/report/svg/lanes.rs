//! One lane per dep: its breaker state over time (closed green, half-open amber, open red; a
//! spell never narrower than [`MIN_SPAN`]), the faults that can touch it, its Retry-After
//! deadlines, and its expected transitions — a tolerance band with ▽ at the expected time, the
//! observed one beside it (○ held, a red ✗ and a red label when it did not) — with one labelled
//! annotation row per packed line under the lane, so labels never overprint.

use std::fmt::Write;

use super::geom::{LABEL_W, LANE_H, MIN_SPAN, ROW_H, Scale, pack_rows, s1, text_w};
use super::{Ctx, esc, faults};
use crate::engine::events::BreakerState;
use crate::verdict::{ExpectKind, ExpectStatus, ExpectationResult};

/// The colour of a breaker state.
pub(super) fn color(s: BreakerState) -> &'static str {
    match s {
        BreakerState::Closed => "#2e9e44",
        BreakerState::HalfOpen => "#f0a800",
        BreakerState::Open => "#d9342b",
    }
}

const BAND: &str = "#2563eb";
const FAILED: &str = "#b91c1c";
const DEADLINE: &str = "#0e7490";
const NOT_REACHED: &str = "#9ca3af";
const NOTE_SIZE: f64 = 11.0;

/// A label under the lane: where it starts, its text, its colour, and its kind (CSS class).
pub(super) struct Note {
    pub x: f64,
    pub text: String,
    pub color: &'static str,
    pub class: &'static str,
}

fn arrow(e: &ExpectationResult) -> &str {
    e.expected.split_whitespace().next().unwrap_or_default()
}

/// Marks of one expectation on the lane at `y`; returns its label.
fn expectation(o: &mut String, e: &ExpectationResult, sc: &Scale, y: f64) -> Option<Note> {
    let mid = y + LANE_H / 2.0;
    let not_reached = e.status == ExpectStatus::NotReached;
    if e.kind == ExpectKind::NoTransition {
        return (e.status == ExpectStatus::Fail).then(|| Note {
            x: LABEL_W,
            text: format!("✗ expected no transition, observed {}", e.observed),
            color: FAILED,
            class: "expect-failed",
        });
    }
    if e.kind != ExpectKind::Transition {
        return None;
    }
    let tol = e.tolerance_ms.unwrap_or(0).max(0) as u64;
    let band = if not_reached { NOT_REACHED } else { BAND };
    if let Some(exp) = e.expected_ms.map(|t| t.max(0) as u64) {
        if exp.saturating_sub(tol) > sc.end {
            return None;
        }
        let (x, w) = sc.span(exp.saturating_sub(tol), exp.saturating_add(tol));
        let xe = sc.x(exp);
        let _ = write!(
            o,
            r#"<g class="expected" data-status="{}"><rect class="band" x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{band}" fill-opacity="0.16" stroke="{band}" stroke-dasharray="2 2"/><path d="M{:.1},{:.1} l5,0 l-5,7 l-5,-7 z" fill="{band}"/><title>expected {}</title></g>"#,
            e.status.as_str(),
            y - 4.0,
            LANE_H + 8.0,
            xe - 0.0,
            y - 11.0,
            esc(&e.expected)
        );
    }
    if not_reached {
        return e.expected_ms.map(|t| Note {
            x: sc.x(t.max(0) as u64) - 4.0,
            text: format!("{} not reached (run stopped)", arrow(e)),
            color: NOT_REACHED,
            class: "expect-not-reached",
        });
    }
    let at = e.observed_ms.or(e.expected_ms).map(|t| t.max(0) as u64);
    let xo = at.map(|t| sc.x(t));
    if let (Some(xo), true) = (xo, e.ok) {
        let _ = write!(
            o,
            r##"<circle class="observed" cx="{xo:.1}" cy="{mid:.1}" r="4.5" fill="#ffffff" stroke="#111827" stroke-width="1.6"><title>observed {}</title></circle>"##,
            esc(&e.observed)
        );
    } else if let Some(xo) = xo {
        let _ = write!(
            o,
            r##"<g class="failed"><circle cx="{xo:.1}" cy="{mid:.1}" r="8" fill="#ffffff" stroke="{FAILED}" stroke-width="2"/><path d="M{:.1},{:.1} l8,8 m0,-8 l-8,8" stroke="{FAILED}" stroke-width="2.4"/><title>{}</title></g>"##,
            xo - 4.0,
            mid - 4.0,
            esc(&e.detail)
        );
    }
    let x = xo.unwrap_or(LABEL_W);
    let exp = e.expected_ms.map(|t| s1(t.max(0) as u64));
    let text = match (e.ok, e.expected_ms, e.observed_ms) {
        (true, _, Some(obs)) => format!("✓ {} at {}", arrow(e), s1(obs.max(0) as u64)),
        (true, _, None) => format!("✓ {}", arrow(e)),
        (false, None, Some(obs)) => format!("✗ unexpected {}", observed_arrow(e, obs)),
        (false, Some(_), None) => format!(
            "✗ {} due {} ±{}: missing",
            arrow(e),
            exp.unwrap_or_default(),
            s1(tol)
        ),
        (false, _, obs) => format!(
            "✗ {} due {} ±{}, observed {}",
            arrow(e),
            exp.unwrap_or_default(),
            s1(tol),
            obs.map_or("?".into(), |o| s1(o.max(0) as u64))
        ),
    };
    Some(Note {
        x: x - 4.0,
        text,
        color: if e.ok { "#374151" } else { FAILED },
        class: if e.ok { "expect-ok" } else { "expect-failed" },
    })
}

fn observed_arrow(e: &ExpectationResult, obs: i64) -> String {
    let arrow = e.observed.split_whitespace().next().unwrap_or_default();
    format!("{arrow} at {}", s1(obs.max(0) as u64))
}

/// Draws the dep lanes from `top`; returns their height.
pub(super) fn dep_lanes(o: &mut String, cx: &Ctx<'_>, top: f64) -> f64 {
    let p = cx.policy;
    let sc = &cx.scale;
    let mut y = top;
    if p.breaker_states.is_empty() {
        let _ = write!(
            o,
            r##"<text x="{LABEL_W}" y="{:.1}" fill="#6b7280">no breaker activity scraped</text>"##,
            y + 16.0
        );
        return LANE_H + 8.0;
    }
    for (dep, pts) in &p.breaker_states {
        y += 12.0; // room for ▽ markers above the lane
        let profile = cx.profile_of(dep);
        let _ = write!(
            o,
            r##"<g class="lane" data-dep="{0}"><text x="{1}" y="{2:.1}" text-anchor="end" fill="#111827">{0}</text>"##,
            esc(dep),
            LABEL_W - 8.0,
            y + if profile.is_some() { 9.0 } else { 15.0 },
        );
        if let Some(id) = profile {
            let _ = write!(
                o,
                r##"<text x="{}" y="{:.1}" text-anchor="end" fill="#6b7280" font-size="10">profile {}</text>"##,
                LABEL_W - 8.0,
                y + 21.0,
                esc(id)
            );
        }
        let _ = write!(
            o,
            r##"<rect x="{LABEL_W}" y="{y:.1}" width="{:.1}" height="{LANE_H}" fill="#f3f4f6"/>"##,
            sc.plot_w()
        );
        let stop = cx.stop_ms.unwrap_or(u64::MAX).min(sc.end);
        for (j, s) in pts.iter().enumerate().filter(|(_, s)| s.t_ms <= stop) {
            let until = pts.get(j + 1).map_or(stop, |n| n.t_ms.min(stop));
            let (x0, w) = sc.span(s.t_ms, until);
            let _ = write!(
                o,
                r#"<rect class="state state-{st}" x="{x0:.1}" y="{y:.1}" width="{w:.1}" height="{LANE_H}" fill="{}"><title>{} {st} {}–{}</title></rect>"#,
                color(s.state),
                esc(dep),
                s1(s.t_ms),
                s1(until),
                st = s.state.as_str(),
            );
            if s.state == BreakerState::HalfOpen && w <= MIN_SPAN + 0.5 {
                // A short half-open spell: a tick above and below so it cannot be missed.
                let _ = write!(
                    o,
                    r#"<rect class="short-spell" x="{x0:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{}"/>"#,
                    y - 3.0,
                    LANE_H + 6.0,
                    color(s.state)
                );
            }
        }
        faults::shade_lane(o, &cx.faults, dep, (sc, stop), y, LANE_H);
        let mut notes: Vec<Note> = Vec::new();
        for d in p.marks.retry_after.iter().filter(|d| &d.dep == dep) {
            let x = sc.x(d.until_ms);
            if d.until_ms > stop {
                continue;
            }
            let _ = write!(
                o,
                r#"<g class="retry-after"><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{DEADLINE}" stroke-width="2" stroke-dasharray="4 2"/><path d="M{x:.1},{:.1} l7,3 l-7,3 z" fill="{DEADLINE}"/><title>Retry-After deadline {} (first held at {})</title></g>"#,
                y - 4.0,
                y + LANE_H + 4.0,
                y - 4.0,
                s1(d.until_ms),
                s1(d.t_ms)
            );
            notes.push(Note {
                x,
                text: format!("Retry-After until {}", s1(d.until_ms)),
                color: DEADLINE,
                class: "retry-after-label",
            });
        }
        for e in p
            .expectations
            .iter()
            .filter(|e| e.dep.as_deref() == Some(dep.as_str()) && !cx.due_after_stop(e))
        {
            notes.extend(expectation(o, e, sc, y));
        }
        let h = annotate(o, &notes, y + LANE_H + 3.0);
        o.push_str("</g>");
        y += LANE_H + h + 6.0;
    }
    y - top
}

/// Writes `notes` in packed rows from `top`; returns the height used.
pub(super) fn annotate(o: &mut String, notes: &[Note], top: f64) -> f64 {
    let max_x = super::geom::W - super::geom::RIGHT;
    let ext: Vec<(f64, f64)> = notes
        .iter()
        .map(|n| {
            let w = text_w(&n.text, NOTE_SIZE);
            let x = n.x.min(max_x - w).max(LABEL_W);
            (x, x + w)
        })
        .collect();
    let rows = pack_rows(&ext, 10.0);
    for (i, n) in notes.iter().enumerate() {
        let weight = if n.color == FAILED { "700" } else { "400" };
        let _ = write!(
            o,
            r#"<text class="{}" x="{:.1}" y="{:.1}" fill="{}" font-size="{NOTE_SIZE}" font-weight="{weight}">{}</text>"#,
            n.class,
            ext[i].0,
            top + 11.0 + rows[i] as f64 * ROW_H,
            n.color,
            esc(&n.text)
        );
    }
    rows.iter().max().map_or(0.0, |r| (r + 1) as f64 * ROW_H)
}
