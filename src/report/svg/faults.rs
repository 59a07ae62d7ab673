//! Fault windows in the picture: a strip above the lanes with one bar per `[[fault]]` and its
//! label (route, kind, scope, hits), packed into rows so labels never overprint; and, on each
//! lane a fault can touch (and only those), its shading. A fault that is limited by `first = N`
//! or a probability is drawn where it actually applied (the upstream's hits), not across its
//! whole window.

use std::fmt::Write;

use super::esc;
use super::geom::{MIN_SPAN, ROW_H, Scale, pack_rows, s1, text_w};
use crate::report::model::FaultWindow;

const FAULT: &str = "#4b5563";
const LABEL_SIZE: f64 = 11.0;

/// True when the fault applies to some requests of its window only (`first`, `probability`):
/// then its hits, not its window, say where it was.
fn sparse(f: &FaultWindow) -> bool {
    f.first.is_some() || f.probability < 1.0
}

/// The span the fault is drawn over (scenario ms), clipped to `end`: its window, or from its
/// first to its last hit for a sparse fault (None when it never applied).
fn drawn_span(f: &FaultWindow, end: u64) -> Option<(u64, u64)> {
    if sparse(f) {
        let first = f.applied.first()?.t_ms;
        let last = f.applied.last().map_or(first, |h| h.t_ms);
        return (first <= end).then_some((first, last.min(end)));
    }
    let until = f.until_ms.unwrap_or(end).min(end);
    (f.from_ms <= end).then_some((f.from_ms, until))
}

fn label(f: &FaultWindow) -> String {
    let mut l = format!("#{} {} {}", f.index + 1, f.route, f.kind);
    if !f.detail.is_empty() {
        let _ = write!(l, " {}", f.detail.replace('"', ""));
    }
    let scope = f.scope();
    if !scope.is_empty() {
        let _ = write!(l, " · {scope}");
    }
    match (f.applied_count, f.applied.first()) {
        (0, _) => l.push_str(" · never applied"),
        (1, Some(h)) => {
            let _ = write!(l, " · 1 hit at {}", s1(h.t_ms));
        }
        (n, _) => {
            let _ = write!(l, " · {n} hits");
        }
    }
    l
}

/// Draws the fault strip at `top` for the faults that started by `limit` (the stop of an
/// interrupted run, else the axis end), clipped there; returns its height.
pub(super) fn strip(
    o: &mut String,
    faults: &[FaultWindow],
    sc: &Scale,
    limit: u64,
    top: f64,
) -> f64 {
    let faults: Vec<&FaultWindow> = faults.iter().filter(|f| f.from_ms <= limit).collect();
    if faults.is_empty() {
        return 0.0;
    }
    let labels: Vec<String> = faults.iter().map(|f| label(f)).collect();
    let extents: Vec<(f64, f64)> = faults
        .iter()
        .zip(&labels)
        .map(|(f, l)| {
            let (x0, x1) = match drawn_span(f, limit) {
                Some((a, b)) => (sc.x(a), sc.x(b)),
                None => (
                    sc.x(f.from_ms),
                    sc.x(f.until_ms.unwrap_or(limit).min(limit)),
                ),
            };
            let x0 = x0.min(super::geom::W - super::geom::RIGHT - text_w(l, LABEL_SIZE));
            (x0, x1.max(x0 + text_w(l, LABEL_SIZE)))
        })
        .collect();
    let rows = pack_rows(&extents, 8.0);
    let n_rows = rows.iter().max().map_or(0, |r| r + 1);
    let row_h = ROW_H + 6.0;
    let _ = write!(
        o,
        r##"<text x="{}" y="{:.1}" text-anchor="end" fill="#111827" font-weight="600">faults</text>"##,
        super::geom::LABEL_W - 8.0,
        top + 12.0
    );
    for (i, f) in faults.iter().enumerate() {
        let y = top + rows[i] as f64 * row_h;
        let _ = write!(
            o,
            r##"<g class="fault-label" data-fault="{}"><text x="{:.1}" y="{:.1}" fill="#111827" font-size="{LABEL_SIZE}">{}</text>"##,
            f.index,
            extents[i].0,
            y + 10.0,
            esc(&labels[i])
        );
        match drawn_span(f, limit) {
            Some((a, b)) if !sparse(f) => {
                let (x, w) = sc.span(a, b);
                let _ = write!(
                    o,
                    r#"<rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="5" fill="{FAULT}"/>"#,
                    y + 13.0
                );
            }
            Some(_) => {
                for h in f.applied.iter().filter(|h| h.t_ms <= limit) {
                    let _ = write!(
                        o,
                        r#"<rect class="hit" x="{:.1}" y="{:.1}" width="2" height="7" fill="{FAULT}"/>"#,
                        sc.x(h.t_ms) - 1.0,
                        y + 12.0
                    );
                }
            }
            None => {
                let (x, w) = sc.span(f.from_ms, f.until_ms.unwrap_or(limit).min(limit));
                let _ = write!(
                    o,
                    r#"<rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="5" fill="none" stroke="{FAULT}" stroke-dasharray="2 2"/>"#,
                    y + 13.0
                );
            }
        }
        o.push_str("</g>");
    }
    n_rows as f64 * row_h + 4.0
}

/// Shades, on the lane of `dep` (at `y`, `h` high), every fault that can touch it, up to `limit`.
pub(super) fn shade_lane(
    o: &mut String,
    faults: &[FaultWindow],
    dep: &str,
    (sc, limit): (&Scale, u64),
    y: f64,
    h: f64,
) {
    for f in faults.iter().filter(|f| f.lanes.iter().any(|l| l == dep)) {
        let title = format!("fault #{}: {}", f.index + 1, label(f));
        if sparse(f) {
            for hit in f.applied.iter().filter(|x| x.dep == dep && x.t_ms <= limit) {
                let _ = write!(
                    o,
                    r#"<rect class="fault-shade hit" data-fault="{}" x="{:.1}" y="{y:.1}" width="{MIN_SPAN}" height="{h}" fill="{FAULT}" fill-opacity="0.75"><title>{}</title></rect>"#,
                    f.index,
                    sc.x(hit.t_ms) - MIN_SPAN / 2.0,
                    esc(&title)
                );
            }
        } else if let Some((a, b)) = drawn_span(f, limit) {
            let (x, w) = sc.span(a, b);
            let _ = write!(
                o,
                r#"<rect class="fault-shade" data-fault="{}" x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h}" fill="url(#hatch)" stroke="{FAULT}" stroke-opacity="0.6" stroke-dasharray="3 2"><title>{}</title></rect>"#,
                f.index,
                esc(&title)
            );
        }
    }
}
