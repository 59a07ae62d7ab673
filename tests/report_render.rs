//! The report's picture, checked the way a reviewer meets it: report.html rendered in headless
//! Chromium. The screenshot is decoded (png crate) and must show, in the timeline's part of the
//! page, the colours of every kind of mark the report model holds (breaker states, the
//! tolerance band, a failed expectation, the cooldown, the retry, the fallback); the DOM Chromium
//! parsed must hold the SVG's marks. A missing Chromium fails the test with how to install it.

use std::path::Path;
use std::process::Command;

use rehearse::report::model::{PolicyStatus, Report, Stopped, Verdict};
use rehearse::report::write_all;
use rehearse::verdict::{ExpectTransition, Expectations, diff};

use crate::report::sample_report;

fn chromium() -> &'static str {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect(
            "chromium is not installed: `apt-get install -y chromium` (Debian; .ci/test does it) — \
             this test renders report.html headless",
        )
}

fn chromium_cmd(profile: &Path) -> Command {
    let mut c = Command::new(chromium());
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        &format!("--user-data-dir={}", profile.display()),
    ]);
    c
}

/// Screenshots `html` at 1400×1800 into `png`.
pub fn screenshot(html: &Path, png: &Path) {
    let profile = tempfile::tempdir().unwrap();
    let out = chromium_cmd(profile.path())
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1400,1800")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The DOM Chromium built from `html`.
fn dump_dom(html: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = chromium_cmd(profile.path())
        .arg("--dump-dom")
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An RGB image.
struct Image {
    w: usize,
    h: usize,
    rgb: Vec<[u8; 3]>,
}

fn decode(png_path: &Path) -> Image {
    let file = std::fs::File::open(png_path).expect("screenshot written");
    let mut dec = png::Decoder::new(std::io::BufReader::new(file));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    Image {
        w: info.width as usize,
        h: info.height as usize,
        rgb,
    }
}

impl Image {
    /// Pixels in rows `y0..y1` within `tol` of `hex` (`#rrggbb`) on every channel.
    fn count(&self, y0: usize, y1: usize, hex: &str, tol: i32) -> usize {
        let c = u32::from_str_radix(&hex[1..], 16).unwrap();
        let want = [
            (c >> 16) as i32,
            ((c >> 8) & 0xff) as i32,
            (c & 0xff) as i32,
        ];
        self.rgb[y0 * self.w..y1.min(self.h) * self.w]
            .iter()
            .filter(|p| (0..3).all(|i| (p[i] as i32 - want[i]).abs() <= tol))
            .count()
    }

    /// Share of non-white pixels in rows `y0..y1`.
    fn ink(&self, y0: usize, y1: usize) -> f64 {
        let px = &self.rgb[y0 * self.w..y1.min(self.h) * self.w];
        px.iter().filter(|p| p.iter().any(|c| *c < 235)).count() as f64 / px.len() as f64
    }
}

/// The sample A/B report plus a failed transition expectation on crm_search (from the real diff).
fn ab_report() -> Report {
    let mut r = sample_report();
    let miss = Expectations {
        transition: vec![ExpectTransition {
            since: None,
            dep: "crm_search".into(),
            from: rehearse::engine::BreakerState::Closed,
            to: rehearse::engine::BreakerState::Open,
            at: Some(std::time::Duration::from_millis(200)),
            after: None,
            tolerance: Some(std::time::Duration::from_millis(100)),
            policy: None,
        }],
        ..Default::default()
    };
    let gate = &mut r.policies[1];
    let failed = diff(
        &miss,
        &gate.transitions,
        None,
        &[],
        rehearse::util::speed::Speed::ONE,
    );
    assert!(failed.iter().any(|e| !e.ok), "{failed:#?}");
    gate.expectations.extend(failed);
    r
}

#[test]
fn report_html_renders_in_headless_chromium_with_every_mark() {
    let dir = tempfile::tempdir().unwrap();
    write_all(dir.path(), &ab_report()).unwrap();
    let html = dir.path().join("report.html");
    let png = dir.path().join("report.png");
    screenshot(&html, &png);
    let img = decode(&png);
    assert_eq!((img.w, img.h), (1400, 1800));
    if let Ok(keep) = std::env::var("REHEARSE_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
    // The page is drawn, not blank: the top 1800 px hold both timelines.
    let ink = img.ink(0, 1800);
    assert!(
        ink > 0.04,
        "screenshot looks blank: {:.1}% ink",
        ink * 100.0
    );
    // Every kind of mark was painted somewhere on screen (colour within ±24 per channel; the
    // colours are that far apart, so no mark's count includes another's).
    for (what, hex, at_least) in [
        ("closed bars", "#2e9e44", 2_000),
        ("open bars", "#d9342b", 500),
        ("half-open spells", "#f0a800", 40),
        ("failed expectation ✗ and label", "#b91c1c", 30),
        ("cooldown span", "#ea580c", 30),
        ("retry R", "#2563eb", 30),
        ("fallback ◆", "#db2777", 40),
        ("Retry-After deadline", "#0e7490", 20),
        ("errors/s line", "#9333ea", 30),
    ] {
        let n = img.count(0, 1800, hex, 24);
        assert!(
            n >= at_least,
            "{what} ({hex}): {n} pixels, want ≥ {at_least}"
        );
    }
    // The DOM Chromium parsed holds the SVG's marks (one timeline per policy).
    let dom = dump_dom(&html);
    assert_eq!(dom.matches("<svg").count(), 2, "one timeline per policy");
    for (mark, n) in [
        ("class=\"band\"", 3),
        ("class=\"observed\"", 2),
        ("class=\"failed\"", 1),
        ("class=\"expect-failed\"", 2),
        ("class=\"cooldown\"", 1),
        ("class=\"retry\"", 1),
        ("class=\"fallback\"", 1),
        ("class=\"retry-after\"", 1),
        ("class=\"fault-label\"", 4),
    ] {
        assert!(
            dom.matches(mark).count() >= n,
            "{mark}: {} in the DOM, want ≥ {n}",
            dom.matches(mark).count()
        );
    }
}

#[test]
fn an_interrupted_run_draws_a_stop_line_and_nothing_after_it() {
    let mut r = sample_report();
    r.verdict = Verdict::Incomplete;
    r.stopped = Some(Stopped {
        reason: "SIGTERM".into(),
        at_ms: 2_000,
        of_ms: 6_000,
        policy: "legacy".into(),
    });
    r.policies[1].status = PolicyStatus::NotRun;
    let html = rehearse::report::html::render(&r);
    let (legacy, gate) = html.split_at(html.find("Policy <code>retry-gate</code>").unwrap());
    assert!(legacy.contains("stopped at 2.0 s"), "stop line labelled");
    assert!(
        gate[..gate.find("</h3>").unwrap() + 60].contains("Not run."),
        "a policy that never ran draws no timeline"
    );
    // No state bar starts after the stop; the one spanning it ends there.
    let legacy_svg = &legacy[legacy.find("<svg").unwrap()..];
    let stop_x = {
        let g = &legacy_svg[legacy_svg.find("class=\"stop\"").unwrap()..];
        let x = &g[g.find("<line x1=\"").unwrap() + 10..];
        x[..x.find('"').unwrap()].parse::<f64>().unwrap()
    };
    for bar in legacy_svg.split("class=\"state state-").skip(1) {
        let x = &bar[bar.find("x=\"").unwrap() + 3..];
        let x0: f64 = x[..x.find('"').unwrap()].parse().unwrap();
        let w = &bar[bar.find("width=\"").unwrap() + 7..];
        let w: f64 = w[..w.find('"').unwrap()].parse().unwrap();
        assert!(
            x0 <= stop_x + 0.1,
            "a state bar starts after the stop at {x0}"
        );
        assert!(
            x0 + w <= stop_x + 3.1,
            "a state bar runs past the stop: {x0}+{w}"
        );
    }
}

#[test]
fn request_lanes_render_in_headless_chromium_one_mark_per_request() {
    let mut r = sample_report();
    r.policies.truncate(1);
    // No breaker bars: the greens and reds on screen are the requests'.
    r.policies[0].breaker_states.clear();
    r.policies[0].requests = Some(crate::report_lanes::gateway_lanes());
    let dir = tempfile::tempdir().unwrap();
    write_all(dir.path(), &r).unwrap();
    let html = dir.path().join("report.html");
    let png = dir.path().join("lanes.png");
    screenshot(&html, &png);
    if let Ok(keep) = std::env::var("REHEARSE_KEEP_LANES_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
    let img = decode(&png);
    for (what, hex, tol, at_least) in [
        ("seven 503 ticks", "#dc2626", 16, 150),
        ("the ok tick", "#16a34a", 12, 20),
        // The span's green at 25 % over the lane's #fafafa (its 1 px outline is antialiased).
        ("the turn span", "#c1dbcb", 10, 2_000),
        ("the cooldown the gateway wrote", "#ea580c", 24, 10),
    ] {
        let n = img.count(0, 1800, hex, tol);
        assert!(
            n >= at_least,
            "{what} ({hex}): {n} pixels, want ≥ {at_least}"
        );
    }
    let dom = dump_dom(&html);
    for (mark, n) in [
        ("<rect class=\"request\"", 8),
        ("class=\"seq-rotation\"", 1),
        ("class=\"turn\"", 1),
        ("class=\"decision\"", 8),
        ("class=\"warmup-request\"", 3),
    ] {
        assert_eq!(dom.matches(mark).count(), n, "{mark} in the DOM");
    }
}
