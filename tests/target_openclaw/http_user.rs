//! `[target] kind = "http"` as users run it, against the stand-in gateway `fake_gateway.py`
//! (no OpenClaw needed): a gateway that needs a bearer token (`token_env`: sent, fingerprinted
//! in the report, never written; a wrong token is never green, a missing one is exit 2), a
//! gateway whose providers the user configures by hand (the run prints how to point any gateway
//! at the mock upstream — base URL, models, a key per profile — at the `[upstream] listen`
//! address, and keeps it in the report without keys; OpenClaw's provider block only for turns
//! asking for `openclaw/…`), and a health
//! path that is not OpenClaw's (`health_path`, waited for; one that never answers 2xx is a
//! harness failure naming it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use super::scenarios::{report_json, rows, show};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The stand-in gateway on `port` proxying to the upstream on `up`, with `envs`.
struct Fake(Child);

impl Fake {
    fn start(port: u16, up: u16, envs: &[(&str, &str)]) -> Self {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/target_openclaw/fake_gateway.py"
        );
        let mut cmd = Command::new("python3");
        cmd.arg(script)
            .arg(port.to_string())
            .arg(format!("http://127.0.0.1:{up}"))
            .arg("sk-user-key-A")
            .arg("proxy")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("python3 runs the stand-in gateway");
        let t = tokio::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed().as_secs() < 20,
                "the stand-in gateway never listened"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Fake(child)
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An `http` scenario at the fake on `gw`, its upstream on `up`, `extra` in `[target]`.
fn scenario(dir: &Path, gw: u16, up: u16, extra: &str) -> PathBuf {
    std::fs::write(
        dir.join("t.jsonl"),
        "{\"at_ms\":500,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s1\"}\n\
         {\"at_ms\":1500,\"kind\":\"llm\",\"model\":\"mockai/m1\",\"stream\":false,\"max_tokens\":16,\"session\":\"s2\"}\n",
    )
    .unwrap();
    let text = format!(
        "name = \"http-user\"\nduration = \"3s\"\ntraffic = \"t.jsonl\"\nseed = 1\n\n\
         [target]\nkind = \"http\"\nurl = \"http://127.0.0.1:{gw}\"\nturn_timeout = \"20s\"\n{extra}\n\
         [target.warmup]\nprompt = \"5s\"\nturns = 2\ntimeout = \"30s\"\n\n\
         [upstream]\nlisten = \"127.0.0.1:{up}\"\n\n\
         [[profile]]\nprovider = \"mockai\"\nid = \"mockai:a\"\ntoken = \"sk-user-key-A\"\n\n\
         [[expect.attempts]]\nprofile = \"mockai:a\"\nequals = 2\n\
         [[expect.turn]]\noutcome = \"answered\"\nequals = 2\n"
    );
    let path = dir.join("http-user.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn run(scenario: &Path, reports: &Path, envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rehearse"));
    cmd.args(["run", "--no-progress", "--scenario"])
        .arg(scenario)
        .arg("--report-dir")
        .arg(reports)
        .env_remove("REHEARSE_HTTP_TOKEN")
        .env_remove("REHEARSE_METRICS_TOKEN");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Every file of the run directory the last stdout line names, as text.
fn run_dir_text(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let md = stdout
        .lines()
        .last()
        .and_then(|l| l.strip_prefix("report: "))
        .unwrap();
    let dir = Path::new(md).parent().unwrap();
    let mut all = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_file() {
            all.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
        }
    }
    all
}

#[test]
fn a_gateway_that_needs_a_bearer_token_gets_it_and_a_wrong_or_missing_one_is_never_green() {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let token = "tok-right-5d1e0c";
    let _fake = Fake::start(gw, up, &[("FAKE_REQUIRE_TOKEN", token)]);
    let path = scenario(tmp.path(), gw, up, "token_env = \"REHEARSE_HTTP_TOKEN\"\n");
    let reports = tmp.path().join("reports");

    let out = run(&path, &reports, &[("REHEARSE_HTTP_TOKEN", token)]);
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    assert_eq!(r["target"]["token_fp"], rehearse::util::fingerprint(token));
    super::user_config::assert_schema(&r);
    let all = run_dir_text(&out);
    assert!(
        !all.contains(token),
        "the token is written in the run directory"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(token));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(token));

    // A wrong token: every turn is 401, nothing reaches the upstream — never a pass.
    let out = run(&path, &reports, &[("REHEARSE_HTTP_TOKEN", "tok-wrong")]);
    let r = report_json(&out);
    assert_ne!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    assert_ne!(r["verdict"], "pass", "{}", show(&out));
    assert_eq!(
        r["target"]["token_fp"],
        rehearse::util::fingerprint("tok-wrong")
    );

    // None: bad input before anything runs.
    let out = run(&path, &reports, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("REHEARSE_HTTP_TOKEN"),
        "{}",
        show(&out)
    );
    let out = run(&path, &reports, &[("REHEARSE_HTTP_TOKEN", "  ")]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
}

#[test]
fn providers_configured_by_hand_get_a_gateway_neutral_setup_and_openclaws_block_only_for_openclaw()
{
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let _fake = Fake::start(gw, up, &[]);
    let path = scenario(tmp.path(), gw, up, "");
    let out = run(&path, &tmp.path().join("reports"), &[]);
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let base = format!("http://127.0.0.1:{up}/v1");
    // Printed at the start (before the report line), gateway-neutral, at the fixed address;
    // stdout is a pipe here, so the key is named, not printed.
    let at = stdout
        .find("point your gateway at the mock upstream")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(at < stdout.find("report: ").unwrap());
    assert!(stdout.contains(&format!("base URL   {base}")), "{stdout}");
    assert!(
        stdout.contains("primary mockai/m1 · fallbacks none"),
        "{stdout}"
    );
    let fp = rehearse::util::fingerprint("sk-user-key-A");
    assert!(
        stdout.contains(&format!(
            "mockai:a  mockai/m1  api_key the `token` of [[profile]] mockai:a (fingerprint {fp}"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("restart it for a clean run"), "{stdout}");
    for openclaw in ["openclaw.json", "paste-api-key", "baseUrl"] {
        assert!(!stdout.contains(openclaw), "{openclaw}: {stdout}");
    }
    super::user_config::assert_schema(&r);
    let s = &r["target"]["gateway_setup"];
    assert_eq!(s["base_url"], base.as_str());
    assert_eq!(s["profiles"][0]["id"], "mockai:a");
    assert_eq!(s["profiles"][0]["key_fp"], fp.as_str());
    assert!(
        r["target"].get("provider_block").is_none(),
        "{}",
        r["target"]
    );
    let all = run_dir_text(&out);
    assert!(all.contains("### Point your gateway at the mock upstream"));
    assert!(!all.contains("sk-user-key-A"), "a key in the run directory");
    assert!(!all.contains("OpenClaw providers to paste"));

    // Turns for OpenClaw's agent: OpenClaw's provider block as well.
    let path = scenario(tmp.path(), gw, up, "model = \"openclaw/default\"\n");
    let out = run(&path, &tmp.path().join("reports"), &[]);
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("providers for your gateway's openclaw.json"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("\"baseUrl\": \"{base}\"")),
        "{stdout}"
    );
    assert!(!stdout.contains("sk-user-key-A"), "{stdout}");
    super::user_config::assert_schema(&r);
    let b = &r["target"]["provider_block"];
    let p = &b["models"]["providers"]["mockai"];
    assert_eq!(p["baseUrl"], base.as_str());
    assert_eq!(p["api"], "openai-completions");
    assert_eq!(p["models"][0]["id"], "m1");
    assert_eq!(b["auth"]["order"]["mockai"][0], "mockai:a");
    assert_eq!(b["agents"]["defaults"]["model"]["primary"], "mockai/m1");
    assert!(
        !b.to_string().contains("sk-user-key-A"),
        "no key in the block: {b}"
    );
    let md = run_dir_text(&out);
    assert!(md.contains("### OpenClaw providers to paste into your gateway's config"));
    assert!(md.contains("### Point your gateway at the mock upstream"));
}

#[test]
fn a_health_path_of_its_own_is_waited_for_and_one_that_never_answers_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let _fake = Fake::start(gw, up, &[("FAKE_HEALTH_PATH", "/healthz")]);
    let good = scenario(tmp.path(), gw, up, "health_path = \"/healthz\"\n");
    let out = run(&good, &tmp.path().join("reports"), &[]);
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    assert_eq!(r["target"]["health_path"], "/healthz");
    super::user_config::assert_schema(&r);

    // OpenClaw's `/health` is not this gateway's: 404 until ready_timeout → harness failure.
    let bad = scenario(
        tmp.path(),
        gw,
        up,
        "health_path = \"/health\"\nready_timeout = \"2s\"\n",
    );
    let out = run(&bad, &tmp.path().join("reports"), &[]);
    let r = report_json(&out);
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    let reason = r["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("health path /health did not answer 2xx"),
        "{reason}"
    );
    assert!(reason.contains("HTTP 404"), "{reason}");
    assert_eq!(r["target"]["turns"].as_array().map_or(0, Vec::len), 0);

    // Not a path: bad input.
    let nonsense = scenario(tmp.path(), gw, up, "health_path = \"healthz\"\n");
    let out = run(&nonsense, &tmp.path().join("reports"), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("target.health_path"),
        "{}",
        show(&out)
    );
}

#[test]
fn a_metrics_url_that_redirects_on_its_origin_is_scraped_with_its_own_token() {
    let tmp = tempfile::tempdir().unwrap();
    let (gw, up) = (free_port(), free_port());
    let token = "tok-metrics-91ab";
    let _fake = Fake::start(
        gw,
        up,
        &[("FAKE_METRICS", "1"), ("FAKE_METRICS_TOKEN", token)],
    );
    let extra = format!(
        "metrics_url = \"http://127.0.0.1:{gw}/metrics\"\nmetrics_token_env = \"REHEARSE_METRICS_TOKEN\"\n\n\
         [[expect.metric]]\nseries = \"fake_turns_total\"\nat_least = 2\n"
    );
    let path = scenario(tmp.path(), gw, up, &extra);
    let reports = tmp.path().join("reports");
    let out = run(&path, &reports, &[("REHEARSE_METRICS_TOKEN", token)]);
    let r = report_json(&out);
    // The 307 to /metrics/ followed, the token sent: the turns counted on the gateway's metrics.
    assert_eq!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    assert_eq!(
        r["target"]["metrics_token_fp"],
        rehearse::util::fingerprint(token)
    );
    super::user_config::assert_schema(&r);
    let all = run_dir_text(&out);
    assert!(
        !all.contains(token),
        "the metrics token is written in the run directory"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(token));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(token));

    // A wrong token: the metrics answer 401, the metric row is never a pass.
    let out = run(&path, &reports, &[("REHEARSE_METRICS_TOKEN", "tok-wrong")]);
    let r = report_json(&out);
    assert_ne!(out.status.code(), Some(0), "{}\n{}", rows(&r), show(&out));
    assert_ne!(r["verdict"], "pass");

    // Unset: bad input naming the key, before anything runs.
    let out = run(&path, &reports, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("metrics_token_env names `REHEARSE_METRICS_TOKEN`"),
        "{err}"
    );
}
