//! The request lanes of one arm (`policies[].requests`), under the engine's lanes: a header
//! saying how many requests there were and whether each is drawn or they were binned; the
//! warm-up before the run's clock in a greyed band of its own scale; a gateway's turns as spans
//! from due to answer; then one lane per profile and model (tools and channels per dep) with
//! every request as a tick coloured by what the upstream did (or, binned, a stacked bar per bin
//! whose height is its count), a gateway's decisions as marks above the lane they name (its
//! cooldowns as hatched spans), the rotations and fallbacks read from the sequence as arrows
//! between lanes, and a legend of what this block shows. The marks, turns, arrows, warm-up and
//! legend are drawn by [`super::request_marks`].

use std::collections::BTreeMap;
use std::fmt::Write;

use super::geom::{LABEL_W, LANE_H, Scale, s1};
use super::lanes::{Note, annotate};
use super::request_marks as marks;
use super::request_style::{STRIP_H, outcome_color, outcome_label};
use super::{Ctx, esc};
use crate::report::model::FaultWindow;
use crate::report::requests::{RequestLane, RequestLanes};


fn detail_of(fault: Option<usize>, faults: &[FaultWindow]) -> &str {
    fault
        .and_then(|i| faults.iter().find(|f| f.index == i))
        .map_or("", |f| f.detail.as_str())
}

/// The last scenario ms the block draws anything at (the axis must reach it).
pub(super) fn last_ms(q: &RequestLanes) -> u64 {
    let reqs = q.requests.iter().map(|r| r.t_ms);
    let bins = q
        .bins
        .iter()
        .flat_map(|b| b.counts.iter().map(move |c| (c.bin + 1).saturating_mul(b.width_ms)));
    let turns = q.turns.iter().flat_map(|t| t.spans.iter().map(|s| s.end_ms));
    let decisions = q.decisions.iter().map(|d| d.t_ms);
    reqs.chain(bins).chain(turns).chain(decisions).max().unwrap_or(0)
}

fn head(o: &mut String, sc: &Scale, y: f64, title: &str, sub: &str) {
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

fn sub_of(l: &RequestLane) -> String {
    let mut parts = Vec::new();
    if l.route != "llm" && l.route != "*" {
        parts.push(l.route.clone());
    }
    if let Some(m) = &l.model {
        parts.push(format!("model {m}"));
    }
    parts.push(match l.requests {
        0 => "no request".to_string(),
        1 => "1 request".to_string(),
        n => format!("{n} requests"),
    });
    if l.faulted > 0 {
        parts.push(format!("{} faulted", l.faulted));
    }
    parts.join(" · ")
}

/// The block's one-line summary: how many requests and how they are drawn.
fn summary(q: &RequestLanes) -> String {
    let mut s = format!(
        "{} at the upstream in {}",
        crate::util::text::count(q.total as usize, "request"),
        crate::util::text::count(q.lanes.len(), "lane")
    );
    match &q.bins {
        Some(b) => {
            let _ = write!(
                s,
                " · binned: too many to draw one by one, each bar counts the requests of {} (its height: the count)",
                s1(b.width_ms)
            );
        }
        None => s.push_str(" · every request drawn"),
    }
    if q.not_kept > 0 {
        let _ = write!(
            s,
            " · {} more from {} not kept (the recorder's cap; upstream.jsonl has them)",
            q.not_kept,
            s1(q.not_kept_from_ms.unwrap_or(0))
        );
    }
    s
}

/// Draws the block from `top` (`warm_turns_ms`: how long a gateway's warm-up turns took, the
/// rest of the time before the clock being its start-up); returns its height.
pub(super) fn block(
    o: &mut String,
    cx: &Ctx<'_>,
    q: &RequestLanes,
    warm_turns_ms: Option<u64>,
    top: f64,
) -> f64 {
    let sc = &cx.scale;
    let limit = cx.limit();
    let faults = &cx.policy.fault_windows;
    let mut y = top;
    let _ = write!(
        o,
        r##"<g class="upstream-requests">{}<text x="{}" y="{:.1}" text-anchor="end" fill="#111827" font-weight="600">upstream requests</text><text class="requests-summary" x="{LABEL_W}" y="{:.1}" fill="#374151" font-size="11">{}</text>"##,
        marks::DEFS,
        LABEL_W - 8.0,
        y + 12.0,
        y + 12.0,
        esc(&summary(q))
    );
    y += 20.0;
    if let Some(w) = &q.warmup {
        y += marks::warmup(o, w, warm_turns_ms, sc, y);
    }
    if let Some(t) = &q.turns {
        y += marks::turns(o, t, sc, limit, y);
    }
    let mut mids: Vec<f64> = Vec::with_capacity(q.lanes.len());
    let max_bin = q.bins.as_ref().map_or(1, |b| {
        let mut per: BTreeMap<(usize, u64), u64> = BTreeMap::new();
        for c in &b.counts {
            *per.entry((c.lane, c.bin)).or_default() += c.n;
        }
        per.values().copied().max().unwrap_or(1)
    });
    for (i, l) in q.lanes.iter().enumerate() {
        let ds: Vec<_> = q.decisions.iter().filter(|d| d.lane == Some(i)).collect();
        if !ds.is_empty() {
            y += STRIP_H;
        }
        let _ = write!(
            o,
            r#"<g class="request-lane" data-lane="{i}" data-name="{}">"#,
            esc(&l.name)
        );
        head(o, sc, y, &l.name, &sub_of(l));
        marks::cooldowns(o, &ds, sc, limit, y);
        for r in q.requests.iter().filter(|r| r.lane == i && r.t_ms <= limit) {
            tick(o, r, l, faults, sc, y);
        }
        if let Some(b) = &q.bins {
            bins(o, b, i, max_bin, faults, sc, limit, y);
        }
        let notes: Vec<Note> = marks::decisions(o, &ds, sc, limit, y);
        let h = annotate(o, &notes, y + LANE_H + 2.0);
        o.push_str("</g>");
        mids.push(y + LANE_H / 2.0);
        y += LANE_H + h + 6.0;
    }
    let loose: Vec<_> = q.decisions.iter().filter(|d| d.lane.is_none()).collect();
    if !loose.is_empty() {
        y += STRIP_H;
        o.push_str(r#"<g class="request-lane gateway-log">"#);
        let sub = crate::util::text::count(loose.len(), "decision");
        head(o, sc, y, "gateway log", &format!("{sub} on no lane"));
        let notes = marks::decisions(o, &loose, sc, limit, y);
        let h = annotate(o, &notes, y + LANE_H + 2.0);
        o.push_str("</g>");
        y += LANE_H + h + 6.0;
    }
    marks::arrows(o, q, &mids, sc, limit);
    y += marks::legend(o, q, faults, y + 4.0);
    o.push_str("</g>");
    y - top
}

/// One request: a tick coloured by its outcome (a probe gets a ring on top, a canary is a short
/// grey tick at the bottom).
fn tick(
    o: &mut String,
    r: &crate::report::requests::RequestMark,
    l: &RequestLane,
    faults: &[FaultWindow],
    sc: &Scale,
    y: f64,
) {
    let x = sc.x(r.t_ms);
    let label = outcome_label(&r.outcome, r.fault, faults);
    let color = outcome_color(&r.outcome, detail_of(r.fault, faults));
    let what = if r.probe {
        "probe "
    } else if r.canary {
        "canary "
    } else {
        ""
    };
    let title = format!(
        "{what}request at {:.3} s · {}{} · {label}",
        r.t_ms as f64 / 1000.0,
        l.name,
        l.model.as_deref().map_or(String::new(), |m| format!(" · {m}"))
    );
    if r.canary {
        let _ = write!(
            o,
            r##"<rect class="request canary" x="{:.1}" y="{:.1}" width="2" height="7" fill="#9ca3af"><title>{}</title></rect>"##,
            x - 1.0,
            y + LANE_H - 9.0,
            esc(&title)
        );
        return;
    }
    let _ = write!(
        o,
        r#"<rect class="request" data-outcome="{}" x="{:.1}" y="{:.1}" width="2.5" height="{:.1}" fill="{color}"><title>{}</title></rect>"#,
        esc(&r.outcome),
        x - 1.25,
        y + 3.0,
        LANE_H - 6.0,
        esc(&title)
    );
    if r.probe {
        let _ = write!(
            o,
            r##"<circle class="probe" cx="{x:.1}" cy="{:.1}" r="2.6" fill="#ffffff" stroke="{color}" stroke-width="1.4"/>"##,
            y + 3.0
        );
    }
}

/// The binned requests of lane `lane`: per bin one bar, its height the bin's count against the
/// fullest bin of any lane, stacked by outcome.
#[allow(clippy::too_many_arguments)]
fn bins(
    o: &mut String,
    b: &crate::report::requests::RequestBins,
    lane: usize,
    max: u64,
    faults: &[FaultWindow],
    sc: &Scale,
    limit: u64,
    y: f64,
) {
    let mut per: BTreeMap<u64, Vec<&crate::report::requests::BinCount>> = BTreeMap::new();
    for c in b.counts.iter().filter(|c| c.lane == lane) {
        per.entry(c.bin).or_default().push(c);
    }
    let full = LANE_H - 4.0;
    for (bin, cs) in per {
        let from = bin.saturating_mul(b.width_ms);
        if from > limit {
            continue;
        }
        let x0 = sc.x(from);
        let w = (sc.x(from.saturating_add(b.width_ms)) - x0 - 0.6).max(1.0);
        let total: u64 = cs.iter().map(|c| c.n).sum();
        let mut bottom = y + LANE_H - 2.0;
        let parts: Vec<String> = cs
            .iter()
            .map(|c| format!("{} {}", c.n, outcome_label(&c.outcome, c.fault, faults)))
            .collect();
        let title = format!(
            "{} {}–{}: {}",
            crate::util::text::count(total as usize, "request"),
            s1(from),
            s1(from.saturating_add(b.width_ms)),
            parts.join(", ")
        );
        let _ = write!(o, r#"<g class="bin"><title>{}</title>"#, esc(&title));
        for c in cs {
            let h = (c.n as f64 / max.max(1) as f64 * full).max(1.0);
            bottom -= h;
            let _ = write!(
                o,
                r#"<rect x="{x0:.1}" y="{bottom:.1}" width="{w:.1}" height="{h:.1}" fill="{}"/>"#,
                outcome_color(&c.outcome, detail_of(c.fault, faults))
            );
        }
        o.push_str("</g>");
    }
}
