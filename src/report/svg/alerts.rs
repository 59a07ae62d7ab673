//! The alerts lane of a run with `[prometheus]`: one lane per alert Prometheus recorded, its
//! pending spells (amber) and firing spells (red), and each notification's arrival at the
//! harness's receiver (a triangle: dark for firing, green for resolved).

use std::collections::BTreeSet;
use std::fmt::Write;

use super::esc;
use super::geom::{LABEL_W, LANE_H, Scale, s1};
use crate::verdict::alert_eval::AlertsPart;

/// Draws the lanes at `top`, clipped at `limit`; returns their height.
pub(super) fn lanes(o: &mut String, part: &AlertsPart, sc: &Scale, limit: u64, top: f64) -> f64 {
    let names: BTreeSet<&str> = part
        .spells
        .iter()
        .map(|s| s.alert.as_str())
        .chain(part.arrivals.iter().map(|a| a.alert.as_str()))
        .collect();
    if names.is_empty() {
        let _ = write!(
            o,
            r##"<g class="alerts"><text x="8" y="{:.1}" fill="#374151">alerts</text><text x="{LABEL_W}" y="{:.1}" fill="#6b7280">no alert was pending or firing in Prometheus</text></g>"##,
            top + 15.0,
            top + 15.0
        );
        return LANE_H + 4.0;
    }
    let clip = |t: i64| u64::try_from(t.max(0)).unwrap_or(0).min(limit);
    o.push_str(r#"<g class="alerts">"#);
    let mut y = top;
    for name in names {
        let _ = write!(
            o,
            r##"<text x="8" y="{:.1}" fill="#374151"><title>{}</title>alert {}</text>"##,
            y + 15.0,
            esc(name),
            esc(&short(name))
        );
        for s in part.spells.iter().filter(|s| s.alert == name) {
            let (from, to) = (clip(s.from_ms), clip(s.to_ms));
            let (x0, width) = sc.span(from, to);
            let fill = if s.state == "firing" {
                "#d9342b"
            } else {
                "#f59e0b"
            };
            let _ = write!(
                o,
                r##"<rect class="{}" x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{fill}" fill-opacity="0.85"><title>{} {} {}–{}</title></rect>"##,
                esc(&s.state),
                y + 3.0,
                width,
                LANE_H - 6.0,
                esc(name),
                esc(&s.state),
                s1(from),
                s1(to)
            );
        }
        for a in part.arrivals.iter().filter(|a| a.alert == name) {
            let x = sc.x(clip(a.t_ms));
            let fill = if a.status == "resolved" {
                "#15803d"
            } else {
                "#111827"
            };
            let _ = write!(
                o,
                r##"<path class="notified" d="M{:.1},{:.1} l10,0 l-5,8 z" fill="{fill}"><title>notification ({}) at {}</title></path>"##,
                x - 5.0,
                y,
                esc(&a.status),
                s1(clip(a.t_ms))
            );
        }
        y += LANE_H;
    }
    o.push_str("</g>");
    y - top + 4.0
}

/// The alert's name with its labels cut to fit the label column.
fn short(name: &str) -> String {
    if name.chars().count() <= 30 {
        return name.to_string();
    }
    let cut: String = name.chars().take(29).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::alert_eval::AlertSpell;

    #[test]
    fn a_spell_is_as_wide_as_its_time_on_the_axis() {
        let part = AlertsPart {
            spells: vec![AlertSpell {
                alert: "BreakerOpen".into(),
                state: "firing".into(),
                from_ms: 90_000,
                to_ms: 169_000,
            }],
            ..AlertsPart::default()
        };
        let sc = Scale { end: 300_000 };
        let mut o = String::new();
        lanes(&mut o, &part, &sc, 300_000, 0.0);
        let width: f64 = o
            .split("width=\"")
            .nth(1)
            .and_then(|w| w.split('"').next())
            .and_then(|w| w.parse().ok())
            .expect("a rect");
        let (x0, x1) = (sc.x(90_000), sc.x(169_000));
        assert!((width - (x1 - x0)).abs() < 0.2, "{width} vs {}", x1 - x0);
    }
}
