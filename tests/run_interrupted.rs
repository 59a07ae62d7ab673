//! An interrupted run tells the truth: SIGTERM ~5 s into the weekly scenario
//! (at speed 1, as launchd runs it) is exit 3 with an `incomplete` verdict, a first line saying
//! where it stopped, every transition due later and every end-of-run check `not_reached` (none
//! failed), a timeline that ends at the stop — and in an A/B run the policy that never started
//! is listed as `not_run` instead of vanishing. The renderers are also checked on a stopped copy
//! of the report fixture (no state, fault window or rate drawn after the stop).

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::Duration;

use tokio::time::Instant;

use crate::support::run::{
    mutated_copy, repo_root, report_json, reported_path, show, strip_prometheus, without_prometheus,
};

/// How long after the spawn the SIGTERM goes out.
const STOP_AFTER: Duration = Duration::from_secs(5);
/// How long the stopped process may take to write its report and exit.
const EXIT_WITHIN: Duration = Duration::from_secs(15);

fn spawn(scenario: &Path, reports: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(["run", "--scenario"])
        .arg(scenario)
        .args(["--speed", "1", "--no-progress", "--report-dir"])
        .arg(reports)
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rehearse")
}

/// Sends SIGTERM `STOP_AFTER` after `spawned`, then waits for the exit (killing the child and
/// failing if it takes longer than `EXIT_WITHIN`).
fn terminate(mut child: Child, spawned: Instant) -> Output {
    if let Some(left) = STOP_AFTER.checked_sub(spawned.elapsed()) {
        thread::sleep(left);
    }
    // SAFETY: plain kill(2) on our own child's pid.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0, "kill(SIGTERM)");
    let sent = Instant::now();
    while child.try_wait().expect("try_wait").is_none() {
        if sent.elapsed() > EXIT_WITHIN {
            let _ = child.kill();
            panic!("still running {EXIT_WITHIN:?} after SIGTERM");
        }
        thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("wait")
}

/// The checks every SIGTERM'd weekly report must pass; returns report.json.
fn assert_stopped_weekly(out: &Output) -> serde_json::Value {
    assert_eq!(out.status.code(), Some(3), "{}", show(out));
    let r = report_json(out);
    assert_eq!(r["verdict"], "incomplete", "{}", show(out));
    let stopped = &r["stopped"];
    assert_eq!(stopped["reason"], "SIGTERM", "{stopped}");
    assert_eq!(stopped["of_ms"], 300_000, "{stopped}");
    assert_eq!(stopped["policy"], "retry-gate", "{stopped}");
    let at = stopped["at_ms"].as_u64().expect("stopped.at_ms");
    // Stopped within the first seconds: long before the first transition is due (74 s ± 3 s).
    assert!(at > 0 && at <= 10_000, "stopped at {at} ms");

    // The first lines of report.md say where the run stopped.
    let md = std::fs::read_to_string(reported_path(out)).unwrap();
    let third = md.lines().nth(2).unwrap_or_default();
    let want = format!(
        "**stopped by SIGTERM at {:.1} s of 300 s**",
        at as f64 / 1000.0
    );
    assert!(third.starts_with(&want), "line 3 is not `{want}…`:\n{md}");
    assert!(!md.contains("| ✗ |"), "a row failed:\n{md}");
    assert!(md.contains("| ○ | transition | crm_search |"), "{md}");

    // Late transitions and every end-of-run check are not reached; nothing failed.
    let p = &r["policies"][0];
    assert_eq!(p["policy"], "retry-gate");
    assert_eq!(p["status"], "incomplete");
    assert_eq!(p["stopped_at_ms"], p["elapsed_ms"]);
    let exps = p["expectations"].as_array().unwrap();
    assert_eq!(exps.len(), 11, "{exps:#?}");
    for e in exps {
        assert_eq!(e["status"], "not_reached", "{e}");
        assert_eq!(e["ok"], false, "{e}");
    }
    assert_eq!(
        exps.iter().filter(|e| e["kind"] == "metric").count(),
        2,
        "weekly has two metric checks"
    );
    // Across policies (an A/B run's second policy adds its 11, none reached).
    let n: usize = r["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["expectations"].as_array().unwrap().len())
        .sum();
    let tally = format!("0 of {n} checks failed, {n} not reached");
    assert!(md.contains(&tally), "{md}");

    // The timeline ends at the stop: a stop line, no state drawn past it, no fault window
    // (weekly's first starts at 30 s).
    let html = std::fs::read_to_string(reported_path(out).with_file_name("report.html")).unwrap();
    assert!(
        html.contains("<g class=\"stop\">"),
        "no stop line in the SVG"
    );
    assert!(
        html.contains("<p class=\"stopped\">stopped by SIGTERM at "),
        "no stop line on top"
    );
    assert!(
        !html.contains("class=\"fault-label\"") && !html.contains("class=\"fault-shade"),
        "a fault window after the stop was drawn"
    );
    let stop_s = p["stopped_at_ms"].as_f64().unwrap() / 1000.0;
    let mut states = 0;
    for bar in html.split("class=\"state state-").skip(1) {
        let title = &bar[bar.find("<title>").unwrap() + 7..bar.find("</title>").unwrap()];
        // `DEP STATE A.A s–B.B s` (one decimal: allow its rounding)
        if let Some((_, until)) = title.rsplit_once('–') {
            let until: f64 = until.trim_end_matches(" s").parse().unwrap();
            let until = until - 0.05;
            assert!(
                until <= stop_s + 1e-9,
                "`{title}` is drawn past the stop at {stop_s}s"
            );
            states += 1;
        }
    }
    assert!(states >= 3, "no breaker lanes in the timeline");
    r
}

#[test]
fn sigterm_early_in_weekly_leaves_late_checks_not_reached_and_an_ab_policy_not_run() {
    let tmp = tempfile::tempdir().unwrap();
    let ab = mutated_copy("weekly", tmp.path(), "ab", |s| {
        let s = strip_prometheus(&s);
        let t = s.replace(
            "policies = [\"retry-gate\"]",
            "policies = [\"retry-gate\", \"legacy\"]",
        );
        assert_ne!(t, s, "weekly's policies line moved");
        t
    });
    let (r1, r2) = (tmp.path().join("weekly"), tmp.path().join("ab"));
    let started = Instant::now();
    // SIGTERM semantics, not the detection path (tests/detection): no Prometheus.
    let plain = without_prometheus("weekly", tmp.path());
    let weekly = spawn(&plain, &r1);
    let ab_child = spawn(&ab, &r2);
    let other = thread::spawn(move || terminate(ab_child, started));
    let weekly_out = terminate(weekly, started);
    let ab_out = other.join().unwrap();

    assert_stopped_weekly(&weekly_out);
    let stdout = String::from_utf8_lossy(&weekly_out.stdout);
    assert!(stdout.contains("  stopped by SIGTERM at "), "{stdout}");
    assert!(!stdout.contains("FAIL"), "{stdout}");

    // A/B: the first policy was cut, the second never started and says so.
    let r = assert_stopped_weekly(&ab_out);
    let policies = r["policies"].as_array().unwrap();
    assert_eq!(
        policies.len(),
        2,
        "the second policy vanished: {}",
        show(&ab_out)
    );
    let legacy = &policies[1];
    assert_eq!(legacy["policy"], "legacy");
    assert_eq!(legacy["status"], "not_run");
    assert_eq!(legacy["ok"], false);
    let exps = legacy["expectations"].as_array().unwrap();
    assert_eq!(exps.len(), 11);
    for e in exps {
        assert_eq!(e["status"], "not_reached", "{e}");
        assert!(
            e["detail"]
                .as_str()
                .unwrap()
                .contains("policy `legacy` never ran"),
            "{e}"
        );
    }
    let md = std::fs::read_to_string(reported_path(&ab_out)).unwrap();
    assert!(
        md.contains("(in policy `retry-gate`; not run: `legacy`."),
        "{md}"
    );
    assert!(md.contains("### Policy `legacy`: not_run"), "{md}");
    let html =
        std::fs::read_to_string(reported_path(&ab_out).with_file_name("report.html")).unwrap();
    assert!(
        html.contains("<span class=\"badge not_run\">not_run</span>"),
        "no not_run badge"
    );
    assert_eq!(
        html.matches("<svg").count(),
        1,
        "a timeline was drawn for the policy not run"
    );
}

/// A stopped run's report opens with the stop line, shows `not_reached` rows as neither ✓ nor ✗,
/// and its timeline ends at the stop: no state, fault window or rate drawn after it.
#[test]
fn a_stopped_report_opens_with_the_stop_and_its_timeline_ends_there() {
    use rehearse::report::model::{ExpectStatus, Stopped, Verdict};
    let mut r = crate::report::sample_report();
    r.verdict = Verdict::Incomplete;
    r.stopped = Some(Stopped {
        reason: "SIGTERM".into(),
        at_ms: 2_000,
        of_ms: 6_000,
        policy: "legacy".into(),
    });
    for p in &mut r.policies {
        p.stopped_at_ms = Some(2_000);
    }
    let e = &mut r.policies[0].expectations[0];
    e.status = ExpectStatus::NotReached;
    e.ok = false;
    e.observed = "not reached".into();
    let md = rehearse::report::markdown::render(&r);
    let third = md.lines().nth(2).unwrap();
    assert!(
        third.starts_with("**stopped by SIGTERM at 2.0 s of 6 s** (in policy `legacy`. Nothing"),
        "{md}"
    );
    assert!(md.contains("| ○ | transition | ws_realtime |"), "{md}");
    assert!(md.contains("1 of 6 checks failed, 1 not reached"), "{md}");
    let html = rehearse::report::html::render(&r);
    assert!(
        html.contains("<tr class=\"not-reached\"><td>○</td>"),
        "{html}"
    );
    assert!(html.contains("<p class=\"stopped\">stopped by SIGTERM at 2.0 s of 6 s"));

    let svg = rehearse::report::svg::timeline(&r, &r.policies[0]);
    assert!(svg.contains("<g class=\"stop\">") && svg.contains("stopped at 2.0 s"));
    let sample = crate::report::sample_report();
    let full = rehearse::report::svg::timeline(&sample, &sample.policies[0]);
    let drawn = |s: &str| s.matches("class=\"state state-").count();
    assert!(
        drawn(&svg) < drawn(&full),
        "states after the stop were drawn"
    );
    // Nothing is drawn past the stop line: no state spell, fault shading or rate point.
    let num = |s: &str, key: &str| -> f64 {
        let v = &s[s.find(key).unwrap() + key.len()..];
        v[..v.find('"').unwrap()].parse().unwrap()
    };
    let stop = &svg[svg.find("<g class=\"stop\">").unwrap()..];
    let stop_x = num(&stop[stop.find("<line").unwrap()..], "x1=\"");
    for class in ["class=\"state state-", "class=\"fault-shade"] {
        for el in svg.split(class).skip(1) {
            let (x, w) = (num(el, "x=\""), num(el, "width=\""));
            assert!(
                x + w <= stop_x + 3.1,
                "{class} drawn past the stop: {x}+{w} > {stop_x}"
            );
        }
    }
    for title in svg.split("class=\"state state-").skip(1) {
        let title = &title[title.find("<title>").unwrap() + 7..title.find("</title>").unwrap()];
        let until = title.rsplit_once('–').unwrap().1.trim_end_matches(" s");
        assert!(
            until.parse::<f64>().unwrap() <= 2.0,
            "`{title}` runs past the stop"
        );
    }
    for line in svg.split("points=\"").skip(1) {
        let points = &line[..line.find('"').unwrap()];
        for p in points.split(' ') {
            let x: f64 = p.split(',').next().unwrap().parse().unwrap();
            assert!(x <= stop_x + 0.1, "a rate point past the stop: {points}");
        }
    }
}
