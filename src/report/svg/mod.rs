//! The inline SVG timeline of one policy run, in scenario time, for a reviewer who looks before
//! reading: the fault strip ([`faults`]), one lane per dep with its breaker states, expected
//! transitions against observed ones and Retry-After deadlines ([`lanes`]), one lane per auth
//! profile with cooldowns, rotations and retries plus a fallback lane ([`profiles`]), the time
//! axis and the rate panel ([`rates`]), and the legend. An interrupted run gets a stop line and
//! nothing drawn after it. Geometry and label packing live in [`geom`].

mod alerts;
mod faults;
pub(crate) mod geom;
mod lanes;
mod profiles;
pub(crate) mod rates;
mod request_marks;
mod request_style;
mod requests;

use std::fmt::Write;

use geom::{LABEL_W, RIGHT, Scale, W, s1};

use super::model::{FaultWindow, PolicyReport, PolicyStatus, ProfileInfo, Report, Verdict};

/// Escapes text for XML/HTML.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What every part of one timeline needs.
pub(crate) struct Ctx<'a> {
    policy: &'a PolicyReport,
    profiles: &'a [ProfileInfo],
    faults: Vec<FaultWindow>,
    scale: Scale,
    /// Where an interrupted run stopped (scenario ms), if it did.
    stop_ms: Option<u64>,
}

impl Ctx<'_> {
    /// The last ms anything is drawn at: the stop of an interrupted run, else the axis end.
    fn limit(&self) -> u64 {
        self.stop_ms.unwrap_or(u64::MAX).min(self.scale.end)
    }

    /// An expectation whose window opens after the stop: the run never got there, so it is not
    /// drawn (the stop line counts it).
    fn due_after_stop(&self, e: &crate::verdict::ExpectationResult) -> bool {
        let (Some(stop), Some(exp)) = (self.stop_ms, e.expected_ms) else {
            return false;
        };
        exp.saturating_sub(e.tolerance_ms.unwrap_or(0)) > stop as i64
    }

    /// The profile id whose endpoint `dep` is.
    fn profile_of(&self, dep: &str) -> Option<&str> {
        self.profiles
            .iter()
            .find(|p| p.dep == dep)
            .map(|p| p.id.as_str())
    }
}

/// Where policy run `p` of `r` stopped early, in scenario ms: at 0 for a policy that never ran,
/// where the report's `stopped` says for the run that was cut, else (a report without that
/// information) where an incomplete run's policy run ended before the scenario's duration.
fn stop_of(r: &Report, p: &PolicyReport) -> Option<u64> {
    if p.status == PolicyStatus::NotRun {
        return Some(0);
    }
    if let Some(s) = r.stopped.as_ref().filter(|s| s.policy == p.policy) {
        return Some(s.at_ms);
    }
    if let Some(t) = p.stopped_at_ms {
        return Some(t);
    }
    (r.verdict == Verdict::Incomplete && r.duration_ms > 0 && p.elapsed_ms < r.duration_ms)
        .then_some(p.elapsed_ms)
}

/// The time the axis spans: the scenario's duration, or the last thing the run shows.
fn end_of(r: &Report, p: &PolicyReport) -> u64 {
    let states = p
        .breaker_states
        .values()
        .flat_map(|v| v.iter().map(|s| s.t_ms));
    let rates = p.rates.iter().map(|r| r.t_ms);
    let faults = p
        .fault_windows
        .iter()
        .map(|f| f.until_ms.unwrap_or(f.from_ms));
    let requests = p.requests.as_ref().map(requests::last_ms);
    states
        .chain(rates)
        .chain(faults)
        .chain(requests)
        .chain([p.elapsed_ms, r.duration_ms, 1])
        .max()
        .unwrap_or(1)
}

/// Renders the timeline SVG for policy run `p` of report `r`.
pub fn timeline(r: &Report, p: &PolicyReport) -> String {
    let scale = Scale { end: end_of(r, p) };
    let cx = Ctx {
        policy: p,
        profiles: &r.profiles,
        faults: p.fault_windows.clone(),
        scale,
        stop_ms: stop_of(r, p),
    };
    let mut body = String::new();
    let mut y = 8.0;
    y += faults::strip(&mut body, &cx.faults, &scale, cx.limit(), y);
    let lanes_top = y;
    y += lanes::dep_lanes(&mut body, &cx, y);
    let _ = write!(
        body,
        r##"<line class="separator" x1="8" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#d1d5db"/>"##,
        W - RIGHT
    );
    y += 8.0;
    // A gateway has no engine of ours: its profiles are drawn from the upstream's record below.
    if r.target.is_none() {
        y += profiles::profile_lanes(&mut body, &cx, y);
    }
    if let Some(q) = &p.requests {
        let warm_turns_ms = r
            .target
            .as_ref()
            .and_then(|t| t.warmup.as_ref())
            .map(|w| w.duration_ms);
        y += requests::block(&mut body, &cx, q, warm_turns_ms, y);
    }
    if let Some(part) = &p.alerts {
        let _ = write!(
            body,
            r##"<line class="separator" x1="8" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#d1d5db"/>"##,
            W - RIGHT
        );
        y += 6.0;
        y += alerts::lanes(&mut body, part, &scale, cx.limit(), y);
    }
    let lanes_bottom = y;
    axis(&mut body, &scale, y);
    y += 36.0;
    rates::panel(&mut body, &cx, y);
    y += rates::CHART_H;
    if let Some(stop) = cx.stop_ms {
        let later = p
            .expectations
            .iter()
            .filter(|e| cx.due_after_stop(e))
            .count();
        let later_faults = p.fault_windows.iter().filter(|f| f.from_ms > stop).count();
        let mut note = format!("stopped at {} — nothing after this was run", s1(stop));
        if later + later_faults > 0 {
            note.push_str(&format!(
                " ({later} expectations due and {later_faults} faults starting later: see the tables)"
            ));
        }
        stop_line(&mut body, &scale, stop, (lanes_top, lanes_bottom, y), &note);
    }
    y += 14.0;
    let shown = Shown {
        breakers: !p.breaker_states.is_empty(),
        faults: !cx.faults.is_empty(),
        expectations: !p.expectations.is_empty(),
        engine_profiles: r.target.is_none(),
        alerts: p.alerts.is_some(),
    };
    let h = legend(&mut body, y, shown) + 26.0;
    let mut o = String::new();
    let _ = write!(
        o,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {W} {h:.0}" width="{W}" height="{h:.0}" role="img" font-family="system-ui, sans-serif" font-size="12"><title>Breaker timeline, policy {}, scenario time</title><defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#6b7280" fill-opacity="0.10"/><line x1="0" y1="0" x2="0" y2="6" stroke="#374151" stroke-opacity="0.45" stroke-width="2"/></pattern><pattern id="cool" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="5" height="5" fill="#fed7aa"/><line x1="0" y1="0" x2="0" y2="5" stroke="#ea580c" stroke-width="1.5"/></pattern><pattern id="notrun" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="8" stroke="#d1d5db" stroke-width="3"/></pattern></defs>"##,
        esc(&p.policy)
    );
    o.push_str(&body);
    o.push_str("</svg>");
    o
}

fn axis(o: &mut String, sc: &Scale, y: f64) {
    let _ = write!(
        o,
        r##"<g class="axis"><line x1="{LABEL_W}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#6b7280"/><text x="{}" y="{:.1}" text-anchor="end" fill="#4b5563" font-size="11">scenario time</text>"##,
        LABEL_W + sc.plot_w(),
        LABEL_W - 18.0,
        y + 18.0
    );
    for (t, label) in sc.ticks() {
        let x = sc.x(t);
        let _ = write!(
            o,
            r##"<line x1="{x:.1}" y1="{y:.1}" x2="{x:.1}" y2="{:.1}" stroke="#6b7280"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#374151" font-size="11">{label}</text>"##,
            y + 5.0,
            y + 18.0,
        );
    }
    o.push_str("</g>");
}

fn stop_line(o: &mut String, sc: &Scale, stop: u64, ys: (f64, f64, f64), note: &str) {
    let (top, lanes_bottom, bottom) = ys;
    let x = sc.x(stop);
    let right = W - RIGHT;
    let note_w = geom::text_w(note, 12.0) + 12.0;
    let _ = write!(
        o,
        r##"<g class="stop"><rect x="{x:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="url(#notrun)" fill-opacity="0.9"/><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#111827" stroke-width="2.5"/><rect x="{:.1}" y="{:.1}" width="{note_w:.1}" height="18" fill="#ffffff" fill-opacity="0.9"/><text x="{:.1}" y="{:.1}" fill="#111827" font-weight="700">{}</text></g>"##,
        (right - x).max(0.0),
        lanes_bottom - top,
        top - 4.0,
        (x + 2.0).min(right - note_w),
        top - 2.0,
        (x + 8.0).min(right - note_w + 6.0),
        top + 12.0,
        esc(note)
    );
}

/// What a timeline draws, so its legend names only that: a gateway's timeline has no breaker
/// or engine profile lanes of ours, a run without alerts no alert lanes.
#[derive(Debug, Clone, Copy)]
struct Shown {
    breakers: bool,
    faults: bool,
    expectations: bool,
    engine_profiles: bool,
    alerts: bool,
}

impl Shown {
    /// Whether the legend item `label` names something drawn.
    fn has(self, label: &str) -> bool {
        match label {
            "closed" | "half_open" | "open" => self.breakers,
            "fault" => self.faults,
            "expected ± tolerance" | "observed" | "failed" => self.expectations,
            "Retry-After" | "cooldown" | "rotation" | "retry" | "fallback" => self.engine_profiles,
            "alert pending" | "alert firing" | "notified" => self.alerts,
            _ => true,
        }
    }
}

/// Draws the legend of what `shown` says is drawn from `y`, wrapping onto more rows when it is
/// too wide; returns the last row's `y`.
fn legend(o: &mut String, mut y: f64, shown: Shown) -> f64 {
    let items: [(&str, &str); 15] = [
        (
            r##"<rect width="12" height="12" fill="#2e9e44"/>"##,
            "closed",
        ),
        (
            r##"<rect width="12" height="12" fill="#f0a800"/>"##,
            "half_open",
        ),
        (r##"<rect width="12" height="12" fill="#d9342b"/>"##, "open"),
        (
            r##"<rect width="12" height="12" fill="url(#hatch)" stroke="#4b5563"/>"##,
            "fault",
        ),
        (
            r##"<rect width="12" height="12" fill="#2563eb" fill-opacity="0.16" stroke="#2563eb" stroke-dasharray="2 2"/><path d="M1,0 l10,0 l-5,7 z" fill="#2563eb"/>"##,
            "expected ± tolerance",
        ),
        (
            r##"<circle cx="6" cy="6" r="4.5" fill="#fff" stroke="#111827" stroke-width="1.6"/>"##,
            "observed",
        ),
        (
            r##"<path d="M2,2 l8,8 m0,-8 l-8,8" stroke="#b91c1c" stroke-width="2.4"/>"##,
            "failed",
        ),
        (
            r##"<line x1="6" y1="0" x2="6" y2="12" stroke="#0e7490" stroke-width="2" stroke-dasharray="4 2"/>"##,
            "Retry-After",
        ),
        (
            r##"<rect width="12" height="12" fill="url(#cool)" stroke="#ea580c"/>"##,
            "cooldown",
        ),
        (
            r##"<path d="M1,0 l9,6 l-9,6 z" fill="#111827"/>"##,
            "rotation",
        ),
        (r##"<circle cx="6" cy="6" r="6" fill="#2563eb"/>"##, "retry"),
        (
            r##"<path d="M6,0 l6,6 l-6,6 l-6,-6 z" fill="#db2777"/>"##,
            "fallback",
        ),
        (
            r##"<rect width="12" height="12" fill="#f59e0b"/>"##,
            "alert pending",
        ),
        (
            r##"<rect width="12" height="12" fill="#d9342b" fill-opacity="0.85"/>"##,
            "alert firing",
        ),
        (
            r##"<path d="M1,2 l10,0 l-5,8 z" fill="#111827"/>"##,
            "notified",
        ),
    ];
    let mut lx = LABEL_W;
    o.push_str(r#"<g class="legend">"#);
    for (shape, label) in items.into_iter().filter(|(_, l)| shown.has(l)) {
        if lx + 16.0 + geom::text_w(label, 11.0) > W - RIGHT {
            lx = LABEL_W;
            y += 18.0;
        }
        let _ = write!(
            o,
            r##"<g transform="translate({lx:.1},{:.1})">{shape}</g><text x="{:.1}" y="{y:.1}" fill="#374151" font-size="11">{label}</text>"##,
            y - 10.0,
            lx + 16.0
        );
        lx += 26.0 + geom::text_w(label, 11.0);
    }
    o.push_str("</g>");
    y
}

#[cfg(test)]
mod tests {
    use super::{Shown, legend};

    fn labels(shown: Shown) -> String {
        let mut o = String::new();
        legend(&mut o, 0.0, shown);
        o
    }

    #[test]
    fn the_legend_names_only_what_the_timeline_draws() {
        let gateway = labels(Shown {
            breakers: false,
            faults: true,
            expectations: true,
            engine_profiles: false,
            alerts: false,
        });
        for absent in [">half_open<", ">rotation<", ">cooldown<", ">alert firing<"] {
            assert!(!gateway.contains(absent), "{absent} in {gateway}");
        }
        for present in [">fault<", ">observed<"] {
            assert!(gateway.contains(present), "{present} not in {gateway}");
        }
        let all = labels(Shown {
            breakers: true,
            faults: true,
            expectations: true,
            engine_profiles: true,
            alerts: true,
        });
        assert_eq!(all.matches("<text ").count(), 15, "{all}");
    }
}
