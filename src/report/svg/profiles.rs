//! One lane per auth profile, from the engine's events: cooldowns as hatched orange spans,
//! rotations away from the profile as ▶, same-profile retries as a blue R; and one lane of
//! model fallbacks as pink ◆. This is where two policies differ (legacy: cooldowns, rotations and
//! fallbacks; the retry gate: retries), so an A/B report shows the difference in the picture.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::geom::{LABEL_W, LANE_H, Scale, s1};
use super::lanes::{Note, annotate};
use super::{Ctx, esc};

const COOLDOWN: &str = "#ea580c";
const ROTATION: &str = "#111827";
const RETRY: &str = "#2563eb";
const FALLBACK: &str = "#db2777";
/// Cooldown labels per lane (every cooldown keeps its span and tooltip).
const MAX_LABELS: usize = 4;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn lane_head(o: &mut String, sc: &Scale, y: f64, title: &str, sub: &str) {
    let _ = write!(
        o,
        r##"<text x="{}" y="{:.1}" text-anchor="end" fill="#111827">{}</text><text x="{}" y="{:.1}" text-anchor="end" fill="#6b7280" font-size="10">{}</text><rect x="{LABEL_W}" y="{y:.1}" width="{:.1}" height="{LANE_H}" fill="#fafafa" stroke="#e5e7eb"/>"##,
        LABEL_W - 8.0,
        y + 9.0,
        esc(title),
        LABEL_W - 8.0,
        y + 21.0,
        esc(sub),
        sc.plot_w()
    );
}

/// Draws the profile lanes and the fallback lane from `top`; returns their height.
pub(super) fn profile_lanes(o: &mut String, cx: &Ctx<'_>, top: f64) -> f64 {
    let m = &cx.policy.marks;
    let sc = &cx.scale;
    let end = cx.stop_ms.unwrap_or(u64::MAX).min(sc.end);
    let mut ids: Vec<&str> = cx.profiles.iter().map(|p| p.id.as_str()).collect();
    let seen: BTreeSet<&str> = m
        .cooldowns
        .iter()
        .map(|c| c.profile.as_str())
        .chain(m.rotations.iter().map(|r| r.from.as_str()))
        .chain(m.retries.iter().map(|r| r.profile.as_str()))
        .collect();
    for id in seen {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut y = top;
    for id in ids {
        let cds: Vec<_> = m.cooldowns.iter().filter(|c| c.profile == id).collect();
        let rots: Vec<_> = m.rotations.iter().filter(|r| r.from == id).collect();
        let rets: Vec<_> = m.retries.iter().filter(|r| r.profile == id).collect();
        let sub = format!(
            "{} · {} · {}",
            plural(cds.len(), "cooldown", "cooldowns"),
            plural(rots.len(), "rotation", "rotations"),
            plural(rets.len(), "retry", "retries")
        );
        let _ = write!(o, r#"<g class="profile-lane" data-profile="{}">"#, esc(id));
        lane_head(o, sc, y, &format!("profile {id}"), &sub);
        let mut notes = Vec::new();
        for c in cds.iter().filter(|c| c.t_ms <= end) {
            let (x, w) = sc.span(c.t_ms, c.until_ms.min(end));
            let _ = write!(
                o,
                r#"<rect class="cooldown" x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="url(#cool)" stroke="{COOLDOWN}"><title>cooldown ({}) {}–{}</title></rect>"#,
                y + 3.0,
                LANE_H - 6.0,
                esc(&c.reason),
                s1(c.t_ms),
                s1(c.until_ms)
            );
            notes.push(Note {
                x,
                text: format!("cooldown {} {}", c.reason, s1(c.until_ms - c.t_ms)),
                color: COOLDOWN,
                class: "cooldown-label",
            });
        }
        for r in rots.iter().filter(|r| r.t_ms <= end) {
            let x = sc.x(r.t_ms);
            let to = r.to.as_deref().unwrap_or("none");
            let _ = write!(
                o,
                r#"<path class="rotation" d="M{:.1},{:.1} l9,6 l-9,6 z" fill="{ROTATION}"><title>rotated to {} ({}) at {}</title></path>"#,
                x - 3.0,
                y + 5.0,
                esc(to),
                esc(&r.reason),
                s1(r.t_ms)
            );
        }
        for r in rets.iter().filter(|r| r.t_ms <= end) {
            let x = sc.x(r.t_ms);
            let _ = write!(
                o,
                r##"<g class="retry"><circle cx="{x:.1}" cy="{:.1}" r="7" fill="{RETRY}"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#ffffff" font-size="10" font-weight="700">R</text><title>same-profile retry after {} ms at {}</title></g>"##,
                y + LANE_H / 2.0,
                y + LANE_H / 2.0 + 3.5,
                r.delay_ms,
                s1(r.t_ms)
            );
        }
        if notes.len() > MAX_LABELS {
            let more = notes.len() - MAX_LABELS + 1;
            notes.truncate(MAX_LABELS - 1);
            notes.push(Note {
                x: notes.last().map_or(LABEL_W, |n| n.x + 140.0),
                text: format!("… {more} more cooldowns"),
                color: COOLDOWN,
                class: "cooldown-label",
            });
        }
        let h = annotate(o, &notes, y + LANE_H + 2.0);
        o.push_str("</g>");
        y += LANE_H + h + 8.0;
    }
    if !m.fallbacks.is_empty() || !cx.profiles.is_empty() {
        let to: BTreeSet<&str> = m.fallbacks.iter().map(|f| f.to.as_str()).collect();
        let sub = if to.is_empty() {
            "none".to_string()
        } else {
            format!(
                "{} → {}",
                m.fallbacks.len(),
                to.into_iter().collect::<Vec<_>>().join(", ")
            )
        };
        o.push_str(r#"<g class="fallback-lane">"#);
        lane_head(o, sc, y, "model fallbacks", &sub);
        for f in m.fallbacks.iter().filter(|f| f.t_ms <= end) {
            let x = sc.x(f.t_ms);
            let _ = write!(
                o,
                r#"<path class="fallback" d="M{x:.1},{:.1} l6,6 l-6,6 l-6,-6 z" fill="{FALLBACK}"><title>fallback {} → {} at {}</title></path>"#,
                y + 5.0,
                esc(&f.from),
                esc(&f.to),
                s1(f.t_ms)
            );
        }
        o.push_str("</g>");
        y += LANE_H + 8.0;
    }
    y - top
}
