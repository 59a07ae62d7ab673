//! `[target] kind = "http"`: the same fixture scenarios against a gateway the test starts itself
//! — a real OpenClaw from the supervisor, its providers pointing at the fixed `[upstream] listen`
//! port the scenario names — driven by URL with its token in an environment variable. Two rows
//! of the table (401 on every profile, 503 on key-A), at once, each with its own gateway and port.
//! The OpenClaw-only expectations (its log, its auth state) are left out: an `http` target is any
//! gateway, judged at the upstream.

use std::path::{Path, PathBuf};

use rehearse::gateway::openclaw::{GatewayOptions, Install};
use rehearse::scenario::gateway::gateway_config;
use rehearse::scenario::validate::check;

use super::scenarios::{RunPermit, StartPermit, fixture, report_json, rows, show, spawn_run};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The fixture as an `http` target at `url` (token in `env`), its upstream on `port`, without
/// the OpenClaw-only tables; the traffic path made absolute.
fn as_http(name: &str, dir: &Path, url: &str, env: &str, port: u16) -> PathBuf {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let traffic = super::scenarios::repo().join("fixtures/traffic/openclaw-one-turn.jsonl");
    let text = text
        .replace(
            "../traffic/openclaw-one-turn.jsonl",
            &traffic.display().to_string(),
        )
        .replace(
            "[target]\nkind = \"openclaw\"\nprovider_timeout = \"5s\"\n",
            &format!(
                "[target]\nkind = \"http\"\nurl = \"{url}\"\ntoken_env = \"{env}\"\n\
                 model = \"openclaw/default\"\n\n[upstream]\nlisten = \"127.0.0.1:{port}\"\n"
            ),
        );
    assert!(
        text.contains("kind = \"http\""),
        "the fixture's [target] table changed shape"
    );
    let kept: Vec<&str> = text
        .split("\n[[")
        .filter(|block| !block.starts_with("expect.openclaw_"))
        .collect();
    let path = dir.join(format!("{name}-http.toml"));
    std::fs::write(&path, kept.join("\n[[")).unwrap();
    path
}

async fn one(
    name: &'static str,
    env: &'static str,
) -> (String, serde_json::Value, std::process::Output) {
    let tmp = tempfile::tempdir().unwrap();
    let port = free_port();
    // The gateway first (its providers at the port the scenario's upstream will listen on).
    let openclaw_scenario = check(&fixture(name)).unwrap();
    let config = gateway_config(
        &openclaw_scenario.file,
        &openclaw_scenario.traffic,
        &format!("http://127.0.0.1:{port}"),
    )
    .unwrap();
    let install = Install::find(None).unwrap_or_else(|e| panic!("{e}"));
    let gw_dir = tmp.path().join("gw");
    std::fs::create_dir_all(&gw_dir).unwrap();
    let running = tokio::task::spawn_blocking(RunPermit::take).await.unwrap();
    let permit = tokio::task::spawn_blocking(StartPermit::take)
        .await
        .unwrap();
    let options = GatewayOptions {
        ready_timeout: std::time::Duration::from_secs(300),
        ..GatewayOptions::default()
    };
    let gw = super::scenarios::start_gateway(&install, &config, &gw_dir, options).await;
    drop(permit);
    let scenario = as_http(name, tmp.path(), &gw.base_url(), env, port);
    let reports = tmp.path().join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let token = gw.token().to_string();
    let child = spawn_run(&scenario, &reports, &[(env, token.as_str())]);
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stopped = gw.stop().await;
    drop(running);
    assert!(stopped.survivors.is_empty(), "{:?}", stopped.survivors);
    let r = report_json(&out);
    (name.to_string(), r, out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_scenarios_judge_an_openclaw_the_test_runs_itself_by_url() {
    let (a, b) = tokio::join!(
        one("openclaw-401-every-profile", "REHEARSE_T15_GW_TOKEN_401"),
        one("openclaw-503-key-a", "REHEARSE_T15_GW_TOKEN_503")
    );
    for (name, r, out) in [a, b] {
        eprintln!("{name} (http): {}\n{}", r["verdict"], rows(&r));
        assert_eq!(r["target"]["kind"], "http", "{name}");
        let turns = r["target"]["turns"].as_array().map_or(0, Vec::len);
        assert_eq!(turns, 1, "{name}: {}", show(&out));
        assert!(
            r["policies"][0]["expectations"]
                .as_array()
                .is_some_and(|e| e.len() >= 3),
            "{name}: the ground-truth expectations are judged"
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}\n{}",
            rows(&r),
            show(&out)
        );
    }
}
