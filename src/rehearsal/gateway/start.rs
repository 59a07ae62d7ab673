//! Starting an external run's system under test against the arm's upstream: an OpenClaw
//! gateway the harness starts from a fresh state (its install found, its config written from
//! the scenario and the user's overlay, started sandboxed, one more try from a fresh state when
//! it exits during its own start-up, its reported version checked against the one asked for),
//! or the user's gateway by URL (`http`: its token, the provider block to paste, its health
//! path). Either way the result is the client the turns go through.

use std::net::SocketAddr;
use std::path::Path;

use crate::rehearsal::gateway::finish::finish_gateway;
use crate::rehearsal::gateway::observe::ExternalRun;
use crate::rehearsal::plan::ScenarioPlan;
use crate::gateway::openclaw::{Gateway, GatewayError, GatewayOptions, Install, TurnClient};
use crate::scenario::gateway::{base_config, gateway_config_with};
use crate::scenario::target::TargetKind;

/// The gateway the turns go to.
pub(super) enum Driven {
    /// One the harness started and stops.
    Openclaw(Box<Gateway>),
    /// The user's, by URL.
    Http,
}

/// Starts the system under test of `plan` (OpenClaw `version` when given) against the upstream
/// at `up_addr`: what the turns go to, or why it could not start (the run's `error`).
pub(super) async fn start(
    plan: &ScenarioPlan,
    run: &mut ExternalRun<'_>,
    up_addr: SocketAddr,
    version: Option<&str>,
    dirs: (&Path, &Path),
) -> Result<(Driven, TurnClient), String> {
    match plan.checked.file.target.kind {
        TargetKind::Openclaw => start_openclaw(plan, run, up_addr, version, dirs).await,
        TargetKind::Http | TargetKind::Embedded => start_http(plan, run, up_addr).await,
    }
}

/// An OpenClaw gateway from a fresh state in `gateway_dir` (`dirs.1`; the run directory is
/// `dirs.0`).
async fn start_openclaw(
    plan: &ScenarioPlan,
    run: &mut ExternalRun<'_>,
    up_addr: SocketAddr,
    version: Option<&str>,
    (dir, gateway_dir): (&Path, &Path),
) -> Result<(Driven, TurnClient), String> {
    let file = &plan.checked.file;
    let arm = run.arm.clone();
    let found = match version {
        Some(v) => Install::find_version(v),
        None => Install::find(file.target.command.as_deref()),
    };
    let install = found.map_err(|e| e.to_string())?;
    run.target.version = Some(install.openclaw_version.clone());
    let user = plan.checked.user_config.as_ref();
    let config = gateway_config_with(
        file,
        &plan.checked.traffic,
        &format!("http://{up_addr}"),
        user,
    )
    .map_err(|e| e.to_string())?;
    let options = GatewayOptions {
        turn_timeout: file.target.turn_timeout(),
        ready_timeout: file.target.ready_timeout(),
        base: base_config(file, user),
        ..GatewayOptions::default()
    };
    if let Some(u) = user {
        crate::errln!(
            "{}/openclaw: your config {} is the base (channels, heartbeats, cron, plugins and discovery off)",
            file.name,
            u.path.display()
        );
    }
    crate::errln!(
        "{}/{arm}: starting OpenClaw {} (mock upstream http://{up_addr})",
        file.name,
        install.openclaw_version
    );
    // OpenClaw 2026.9.6 can exit during its own start-up on a starved machine ("state lease
    // heartbeat did not become ready", a 5 s deadline of its own): one more try from a fresh
    // state, said in the report. A gateway that never gets healthy, or fails twice, is the
    // harness failure.
    let mut tries = 0;
    let gw = loop {
        tries += 1;
        match Gateway::start(&install, &config, gateway_dir, options.clone()).await {
            Ok(g) => break g,
            Err(e) => {
                let _ = std::fs::remove_dir_all(gateway_dir);
                if tries == 1 && matches!(e, GatewayError::Exited { .. }) {
                    let why = e.last_lines().last().cloned().unwrap_or_default();
                    crate::errln!(
                        "{}/{arm}: the gateway exited while starting ({why}); trying once more",
                        file.name
                    );
                    run.notes.push(format!("the first start exited before it was healthy ({why}); started again from a fresh state"));
                    continue;
                }
                run.target.last_lines = e.last_lines().to_vec();
                return Err(e.to_string());
            }
        }
    };
    crate::rehearsal::gateway::user_config::record(&gw, dir, user, &mut run.target, &mut run.notes);
    run.target.url = Some(gw.base_url());
    // The version the started gateway's executable says it is (`openclaw --version`, run with
    // the node it runs on).
    run.target.reported_version = install.says();
    if let (Some(v), Some(said)) = (version, run.target.reported_version.as_deref())
        && said != v
    {
        let why = format!(
            "asked for OpenClaw {v}, but the gateway started from {} says it is {said}",
            install.openclaw.display()
        );
        finish_gateway(gw, dir, gateway_dir, plan, run).await;
        return Err(why);
    }
    run.target.isolation = Some(gw.isolation().as_str().to_string());
    let client = gw.client().map_err(|e| e.to_string())?;
    Ok((Driven::Openclaw(Box::new(gw)), client))
}

/// The user's gateway at `[target] url`, once its health path answers (when it has one).
async fn start_http(
    plan: &ScenarioPlan,
    run: &mut ExternalRun<'_>,
    up_addr: SocketAddr,
) -> Result<(Driven, TurnClient), String> {
    let file = &plan.checked.file;
    let url = file.target.url.clone().unwrap_or_default();
    let token = crate::rehearsal::gateway::http::token(file, &mut run.target);
    crate::rehearsal::gateway::http::provider_block(
        file,
        &plan.checked.traffic,
        &format!("http://{up_addr}"),
        file.upstream.listen.is_some(),
        &mut run.target,
        &mut run.notes,
    );
    run.target.url = Some(url.clone());
    let model = match &file.target.model {
        Some(m) => m.clone(),
        None => crate::scenario::gateway::primary_model(&plan.checked.traffic).unwrap_or_default(),
    };
    let client = TurnClient::new(&url, &token, file.target.turn_timeout())
        .map_err(|e| e.to_string())?
        .with_model(&model);
    if let Some(path) = &file.target.health_path {
        run.target.health_path = Some(path.clone());
        let within = file.target.ready_timeout();
        crate::rehearsal::gateway::http::wait_healthy(&client, path, within)
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok((Driven::Http, client))
}
