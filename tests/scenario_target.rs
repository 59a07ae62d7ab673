//! `[target]` and `[upstream]` in a scenario (docs/scenario.md): bad values are exit 2 from
//! `validate` and `run` naming file:line:col, expectations a target cannot show are refused
//! (breaker transitions of an external gateway, OpenClaw's log for the embedded engine), and a
//! `--speed` other than 1 with an external target is exit 2 saying why. No gateway is started.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::run::{mutated_copy, repo_root, show};

fn where_is(path: &Path, needle: &str) -> (usize, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in {}", path.display()));
    let before = &text[..at];
    (
        before.matches('\n').count() + 1,
        before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1,
    )
}

fn rehearse(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rehearse"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap()
}

/// `validate` and `run` both exit 2 naming `PATH:LINE:COL:` and every `wants` fragment.
pub(crate) fn assert_rejected(path: &Path, at: (usize, usize), wants: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let (p, r) = (path.to_str().unwrap(), reports.to_str().unwrap());
    for args in [
        vec!["validate", p],
        vec!["run", "--scenario", p, "--report-dir", r],
    ] {
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let loc = format!("{p}:{}:{}: ", at.0, at.1);
        assert!(
            stderr.contains(&loc),
            "{args:?}: stderr lacks `{loc}`: {stderr}"
        );
        for w in wants {
            assert!(stderr.contains(w), "{args:?}: stderr lacks `{w}`: {stderr}");
        }
        assert!(!reports.exists(), "{args:?}: created {}", reports.display());
    }
}

pub(crate) const OPENCLAW_TARGET: &str =
    "[target]\nkind = \"openclaw\"\nprovider_timeout = \"5s\"\n";

/// The 503-on-key-A OpenClaw fixture with its `[target]` table replaced by `target` and
/// `extra` appended.
pub(crate) fn variant(dir: &Path, tag: &str, target: &'static str, extra: &'static str) -> PathBuf {
    mutated_copy("openclaw-503-key-a", dir, tag, move |s| {
        assert!(
            s.contains(OPENCLAW_TARGET),
            "the fixture's [target] changed shape"
        );
        format!("{}\n{extra}", s.replace(OPENCLAW_TARGET, target))
    })
}

#[test]
fn an_unknown_kind_and_an_http_target_without_url_are_located() {
    let tmp = tempfile::tempdir().unwrap();
    let p = variant(tmp.path(), "nginx", "[target]\nkind = \"nginx\"\n", "");
    let (l, c) = where_is(&p, "\"nginx\"");
    assert_rejected(&p, (l, c), &["unknown variant `nginx`"]);
    let p = variant(tmp.path(), "no-url", "[target]\nkind = \"http\"\n", "");
    let (l, c) = where_is(&p, "\"http\"");
    assert_rejected(&p, (l, c), &["target.kind", "needs `url`"]);
    let p = variant(
        tmp.path(),
        "listen",
        "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\n[upstream]\nlisten = \"0.0.0.0:18081\"\n",
        "",
    );
    let (l, c) = where_is(&p, "\"0.0.0.0:18081\"");
    assert_rejected(&p, (l, c), &["upstream.listen", "not a loopback address"]);
}

#[test]
fn expectations_a_target_cannot_show_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // An external gateway's breakers are not visible.
    let p = variant(
        tmp.path(),
        "transition",
        OPENCLAW_TARGET,
        "[[expect.transition]]\ndep = \"mockai/default/x\"\nfrom = \"closed\"\nto = \"open\"\n",
    );
    let (l, _) = where_is(&p, "[[expect.transition]]");
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(":{l}:1: ")) && err.contains("`openclaw` target does not expose"),
        "{err}"
    );
    // OpenClaw's log and state are not the embedded engine's.
    let p = variant(tmp.path(), "embedded", "", "");
    let (l, _) = where_is(&p, "[[expect.openclaw_decision]]");
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(":{l}:1: ")) && err.contains("this target is `embedded`"),
        "{err}"
    );
    // A profile no [[profile]] has.
    let p = variant(
        tmp.path(),
        "ghost",
        OPENCLAW_TARGET,
        "[[expect.attempts]]\nprofile = \"mockai:c\"\nequals = 0\n",
    );
    let (l, c) = where_is(&p, "\"mockai:c\"");
    assert_rejected(&p, (l, c), &["`mockai:c` is not the id of a [[profile]]"]);
}

#[test]
fn an_external_target_runs_at_speed_1_only() {
    let tmp = tempfile::tempdir().unwrap();
    let p = variant(
        tmp.path(),
        "http",
        "[target]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\n\
         [upstream]\nlisten = \"127.0.0.1:18081\"\n",
        "",
    );
    // The OpenClaw-only tables first: the file as an http target keeps the ground-truth ones.
    let text = std::fs::read_to_string(&p).unwrap();
    let kept: Vec<&str> = text
        .split("\n[[")
        .filter(|b| !b.starts_with("expect.openclaw_"))
        .collect();
    std::fs::write(&p, kept.join("\n[[")).unwrap();
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let reports = tmp.path().join("reports");
    let out = rehearse(&[
        "run",
        "--scenario",
        p.to_str().unwrap(),
        "--speed",
        "2",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("runs at speed 1 only")
            && err.contains("cannot compress a real gateway's own timers"),
        "{err}"
    );
    assert!(!reports.exists());
}

#[test]
fn ground_truth_expectations_judge_the_embedded_engine_too() {
    let tmp = tempfile::tempdir().unwrap();
    let p = mutated_copy("smoke", tmp.path(), "ground", |s| {
        format!(
            "{s}\n[[expect.attempts]]\nmodel = \"openai-codex/gpt-5.2\"\nat_least = 20\n\
             [[expect.first_request]]\nmodel = \"openai-codex/gpt-5.2\"\nat_least = \"800ms\"\nat_most = \"2s\"\n\
             [[expect.no_request]]\nmodel = \"openai-codex/gpt-5.2\"\nfrom = \"5s\"\nuntil = \"8s\"\n"
        )
    });
    let reports = tmp.path().join("reports");
    let out = rehearse(&[
        "run",
        "--no-progress",
        "--scenario",
        p.to_str().unwrap(),
        "--speed",
        "4",
        "--report-dir",
        reports.to_str().unwrap(),
    ]);
    // The model calls come every second: the quiet span cannot hold, the rest does.
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let r = crate::support::run::report_json(&out);
    let rows: Vec<&serde_json::Value> = r["policies"][0]["expectations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            ["attempts", "first_request", "no_request"].contains(&e["kind"].as_str().unwrap_or(""))
        })
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert_eq!(rows[0]["status"], "pass", "{}", rows[0]);
    assert_eq!(
        rows[1]["status"], "pass",
        "first call at 0.9 s of scenario time: {}",
        rows[1]
    );
    assert_eq!(rows[2]["status"], "fail", "{}", rows[2]);
    assert!(
        rows[2]["observed"]
            .as_str()
            .unwrap_or("")
            .contains("(first at "),
        "{}",
        rows[2]
    );
}

#[test]
fn a_warm_up_outside_its_bounds_or_for_the_embedded_engine_is_located() {
    let tmp = tempfile::tempdir().unwrap();
    let p = variant(
        tmp.path(),
        "warm-turns",
        "[target]\nkind = \"openclaw\"\n[target.warmup]\nturns = 0\n",
        "",
    );
    let (l, c) = where_is(&p, "turns = 0");
    assert_rejected(&p, (l, c + 8), &["target.warmup.turns", "must be 1..=100"]);
    let p = variant(
        tmp.path(),
        "warm-prompt",
        "[target]\nkind = \"openclaw\"\n[target.warmup]\nprompt = \"10ms\"\n",
        "",
    );
    let (l, c) = where_is(&p, "\"10ms\"");
    assert_rejected(&p, (l, c), &["target.warmup.prompt", "100ms..=600s"]);
    let p = variant(
        tmp.path(),
        "warm-embedded",
        "[target]\nkind = \"embedded\"\n[target.warmup]\nturns = 2\n",
        "",
    );
    let out = rehearse(&["validate", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("target.warmup") && stderr.contains("only for"),
        "{stderr}"
    );
}

/// A traffic row with its own `messages` (an assistant prefill) cannot go through OpenClaw,
/// which keeps only a turn's user message: `validate` and `run` refuse it before the run with
/// exit 2 and a message that starts `not applicable:`, naming the traffic file's line and the
/// kind — a case that does not apply, never a fail.
#[test]
fn traffic_with_its_own_messages_is_not_applicable_to_openclaw() {
    let tmp = tempfile::tempdir().unwrap();
    let traffic = tmp.path().join("prefill.jsonl");
    std::fs::write(
        &traffic,
        "{\"at_ms\":0,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":4}\n\n\
         {\"at_ms\":10,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"max_tokens\":4,\"messages\":\
         [{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"Sure,\"}]}\n",
    )
    .unwrap();
    let shown = traffic.display().to_string();
    let p = mutated_copy("openclaw-503-key-a", tmp.path(), "prefill", |s| {
        s.lines()
            .map(|l| {
                if l.starts_with("traffic = ") {
                    format!("traffic = {shown:?}\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    });
    let reports = tmp.path().join("reports");
    let (p, r) = (p.to_str().unwrap(), reports.to_str().unwrap());
    for args in [
        vec!["validate", p],
        vec!["run", "--scenario", p, "--report-dir", r],
    ] {
        let out = rehearse(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want = format!("not applicable: {shown}:3: ");
        assert!(
            stderr.lines().any(|l| l.contains(&want)),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("target kind `openclaw`"), "{stderr}");
        assert!(!reports.exists(), "{args:?}");
    }
}
