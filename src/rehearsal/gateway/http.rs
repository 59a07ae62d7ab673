//! What an `http` target (a gateway the user runs) needs before its warm-up: its bearer token
//! from `token_env` (fingerprinted in the report, never written), the OpenClaw provider block to
//! paste into its configuration (printed at the start and kept in the report: its providers at
//! the mock upstream's address, fixed by `[upstream] listen`), and its health path (`[target]
//! health_path`, waited for until it answers 2xx, up to `ready_timeout`).

use std::time::Duration;

use tokio::time::Instant;

use crate::gateway::openclaw::TurnClient;
use crate::report::model::TargetReport;
use crate::scenario::format::ScenarioFile;
use crate::replay::traffic::TrafficLine;

/// The bearer token from `token_env` (empty without one); its fingerprint into the report.
pub(super) fn token(file: &ScenarioFile, target: &mut TargetReport) -> String {
    let token = file
        .target
        .token_env
        .as_ref()
        .and_then(|e| std::env::var(e).ok())
        .unwrap_or_default();
    if file.target.token_env.is_some() {
        target.token_fp = Some(crate::util::fingerprint(&token));
    }
    token
}

/// The provider block for the user's gateway, printed on stdout and kept in the report; a
/// scenario that cannot configure an OpenClaw gateway gets a note instead.
pub(super) fn provider_block(
    file: &ScenarioFile,
    traffic: &[TrafficLine],
    upstream: &str,
    fixed: bool,
    target: &mut TargetReport,
    notes: &mut Vec<String>,
) {
    match crate::scenario::gateway::provider_block(file, traffic, upstream) {
        Ok(block) => {
            let pretty = serde_json::to_string_pretty(&block).unwrap_or_default();
            let port_note = if fixed {
                String::new()
            } else {
                " — its port changes every run: set `[upstream] listen` for a fixed address".into()
            };
            crate::outln!(
                "{}/http: providers for your gateway's openclaw.json (the mock upstream at {upstream}{port_note}; seed each profile's key with `openclaw models auth paste-api-key`):\n{pretty}",
                file.name
            );
            target.provider_block = Some(block);
        }
        Err(e) => notes.push(format!(
            "no provider block to paste: {}: {}",
            e.field, e.message
        )),
    }
}

/// The gateway's health path never answered 2xx in time.
#[derive(Debug, thiserror::Error)]
#[error("the gateway's health path {path} did not answer 2xx within {} (last: {last})", humantime::format_duration(*.within))]
pub(super) struct NotHealthy {
    /// The health path.
    path: String,
    /// How long it was given.
    within: Duration,
    /// Its last answer (`HTTP 503`) or why none came, with the cause.
    last: String,
}

/// Waits until `GET health_path` answers 2xx, up to `ready_timeout`; else why not.
pub(super) async fn wait_healthy(
    client: &TurnClient,
    path: &str,
    within: Duration,
) -> Result<(), NotHealthy> {
    let started = Instant::now();
    loop {
        let last = match client.status_of(path).await {
            Ok(s) if (200..300).contains(&s) => return Ok(()),
            Ok(s) => format!("HTTP {s}"),
            Err(e) => crate::util::text::chain(&e),
        };
        if started.elapsed() >= within {
            return Err(NotHealthy {
                path: path.to_string(),
                within,
                last,
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
