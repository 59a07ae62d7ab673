//! Starting an arm's gateway against the arm's upstream, through the gateway seam only
//! ([`crate::gateway::Supervisor`], the implementation the plan picked): its configuration is
//! the plan's with the upstream slot filled ([`GatewayPlan::config_for`]) — or, for a gateway
//! the user configures (`http`), the provider block to paste, printed; it is started in the
//! arm's gateway directory (one more try from a fresh state when it exits during its own
//! start-up); what the harness wrote as its configuration is kept; the version it says it is
//! checked against the one the arm pinned. The result is the started gateway and the client its
//! turns go through.

use std::net::SocketAddr;
use std::path::Path;

use crate::gateway::openclaw::GatewayConfig;
use crate::gateway::{Facts, Supervised, TurnClient};
use crate::rehearsal::gateway::finish::finish_gateway;
use crate::rehearsal::gateway::observe::ExternalRun;

/// Starts the arm's gateway (`run.gw`) against the upstream at `up_addr` in `gateway_dir`
/// (`dirs.1`; the run directory is `dirs.0`): the started gateway and its turns' client, or why
/// it could not start (the run's `error`).
pub(super) async fn start(
    run: &mut ExternalRun<'_>,
    up_addr: SocketAddr,
    (dir, gateway_dir): (&Path, &Path),
) -> Result<(Box<dyn Supervised>, TurnClient), String> {
    let gw = run.gw;
    let facts = gw.gateway.facts();
    let config = prepare(run, &facts, up_addr)?;
    let started = start_fresh(run, config.as_ref(), gateway_dir).await?;
    let checked = &run.plan.checked;
    let user = checked
        .user_config
        .as_ref()
        .map(|u| u.path.as_path())
        .or(checked.portkey_config.as_ref().map(|u| u.path.as_path()))
        .or(checked.litellm_config.as_ref().map(|u| u.path.as_path()));
    crate::rehearsal::gateway::user_config::record(
        started.as_ref(),
        dir,
        user,
        &mut run.target,
        &mut run.notes,
    );
    run.target.url = Some(started.url());
    // The version the started gateway's executable says it is (OpenClaw: `openclaw --version`,
    // run with the node it runs on).
    run.target.reported_version = gw.gateway.says();
    if let (Some(v), Some(said)) = (&gw.pinned, run.target.reported_version.as_deref())
        && said != v
    {
        let from = facts
            .found
            .as_ref()
            .map_or_else(String::new, |f| f.executable.display().to_string());
        let why = format!(
            "asked for {} {v}, but the gateway started from {from} says it is {said}",
            facts.name
        );
        finish_gateway(started, dir, gateway_dir, run).await;
        return Err(why);
    }
    run.target.isolation = started.isolation();
    run.target.routing = started.routing();
    run.target.exports = started.exports();
    let client = started.client().map_err(|e| e.to_string())?;
    Ok((started, client))
}

/// What the report and the lines say before the gateway starts, and the configuration it gets
/// (its providers at `up_addr`; `None` for a gateway the user configures when the scenario
/// cannot configure one, which gets a note instead of the provider block).
fn prepare(
    run: &mut ExternalRun<'_>,
    facts: &Facts,
    up_addr: SocketAddr,
) -> Result<Option<GatewayConfig>, String> {
    let (plan, gw) = (run.plan, run.gw);
    let file = &plan.checked.file;
    run.target.version = facts.found.as_ref().map(|f| f.version.clone());
    run.target.token_fp = gw.token_fp.clone();
    run.target.metrics_token_fp = gw.metrics_token.as_ref().map(|b| b.fingerprint());
    let config = gw.config_for(up_addr);
    if !facts.configured {
        crate::rehearsal::gateway::http::provider_block(
            &file.name,
            config.as_ref(),
            &format!("http://{up_addr}"),
            file.upstream.listen.is_some(),
            crate::rehearsal::gateway::http::is_openclaw_model(gw.model.as_deref()),
            &mut run.target,
            &mut run.notes,
        );
    }
    let config = match config {
        Ok(c) => Some(c),
        Err(e) if facts.configured => return Err(e.to_string()),
        Err(_) => None,
    };
    run.target.url = facts.url.clone();
    run.target.health_path = gw.health_path.clone();
    if let Some(u) = &plan.checked.litellm_config {
        crate::errln!(
            "{}/litellm: your config {} is the base (the harness owns model_list, keys and addresses; Redis, databases, callbacks other than prometheus and environment_variables off)",
            file.name,
            u.path.display()
        );
    }
    if let Some(u) = &plan.checked.user_config {
        crate::errln!(
            "{}/openclaw: your config {} is the base (channels, heartbeats, cron, plugins and discovery off)",
            file.name,
            u.path.display()
        );
    }
    if let Some(found) = &facts.found {
        crate::errln!(
            "{}/{}: starting {} {} (mock upstream http://{up_addr})",
            file.name,
            gw.arm,
            facts.name,
            found.version
        );
    }
    Ok(config)
}

/// The gateway started from a fresh state in `gateway_dir` with `config`. OpenClaw 2026.9.6 can
/// exit during its own start-up on a starved machine ("state lease heartbeat did not become
/// ready", a 5 s deadline of its own): one more try from a fresh state, said in the report. A
/// gateway that never gets ready, or fails twice, is the harness failure (its last lines in
/// the report).
async fn start_fresh(
    run: &mut ExternalRun<'_>,
    config: Option<&GatewayConfig>,
    gateway_dir: &Path,
) -> Result<Box<dyn Supervised>, String> {
    let gw = run.gw;
    let name = &run.plan.checked.file.name;
    let mut tries = 0;
    loop {
        tries += 1;
        match gw.gateway.start(config, gateway_dir).await {
            Ok(g) => return Ok(g),
            Err(e) => {
                let _ = std::fs::remove_dir_all(gateway_dir);
                if tries == 1 && e.is_exit() {
                    let why = e.last_lines().last().cloned().unwrap_or_default();
                    crate::errln!(
                        "{name}/{}: the gateway exited while starting ({why}); trying once more",
                        gw.arm
                    );
                    run.notes.push(format!("the first start exited before it was healthy ({why}); started again from a fresh state"));
                    continue;
                }
                run.target.last_lines = e.last_lines().to_vec();
                return Err(e.to_string());
            }
        }
    }
}
